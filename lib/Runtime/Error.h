//===- Error.h - the runtime's thread-local last error ----------*- C++ -*-===//
//
// Every failing entry point of attn_runtime.h returns a status and leaves a
// message here; attn_last_error() reads it back on the same thread.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LIB_RUNTIME_ERROR_H
#define ATTN_LIB_RUNTIME_ERROR_H

#include "attn-runtime/attn_runtime.h"

#include <cstddef>
#include <string>

namespace attn::runtime {

/// Records `message` as this thread's last error and returns `status`.
attn_status fail(attn_status status, std::string message);

/// printf-style form of fail().
attn_status failf(attn_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/// The message of the last failure on this thread ("" when none).
const char *lastError();

/// "ATTN_ERROR_SHAPE" and so on.
ATTN_RUNTIME_API const char *statusName(attn_status status);

/// "f32", "f16", "bf16", "bool", "i32", "i64"; "?" for a value outside the
/// enum.
ATTN_RUNTIME_API const char *dtypeName(attn_dtype dtype);

/// Bytes per element; 0 for a value outside the enum.
ATTN_RUNTIME_API size_t dtypeSize(attn_dtype dtype);

/// "none", "top_left", "bottom_right"; "?" for a value outside the enum.
ATTN_RUNTIME_API const char *causalName(attn_causal causal);

} // namespace attn::runtime

#endif // ATTN_LIB_RUNTIME_ERROR_H
