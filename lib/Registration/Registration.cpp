//===- Registration.cpp - register attn with a context or tool ------------===//

#include "attn/Registration/Registration.h"
#include "attn/Conversion/Passes.h"
#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Dialect/Attn/Transforms/Passes.h"
#include "attn/Pipelines/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

void attn::registerAttnDialects(DialectRegistry &registry) {
  registry.insert<attn::AttnDialect, arith::ArithDialect, linalg::LinalgDialect,
                  math::MathDialect, tensor::TensorDialect>();
}

void attn::registerAttnPasses() {
  registerAttnTransformsPasses();
  registerAttnConversionPasses();
  registerAttnPipelines();
}
