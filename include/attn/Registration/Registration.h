//===- Registration.h - register attn with a context or tool ----*- C++ -*-===//

#ifndef ATTN_REGISTRATION_REGISTRATION_H
#define ATTN_REGISTRATION_REGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace attn {

/// Adds the attn dialect and the upstream dialects its passes create.
void registerAttnDialects(DialectRegistry &registry);

/// Registers attn's passes and pipelines with the global registry.
void registerAttnPasses();

} // namespace attn
} // namespace mlir

#endif // ATTN_REGISTRATION_REGISTRATION_H
