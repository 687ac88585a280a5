//===- AttnDialect.td - attn dialect definition ------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Fused scaled-dot-product attention.";
  let description = [{
    The `attn` dialect represents attention as single operations:
    `O = softmax(scale * Q K^T + mask) V`, its gradient by recomputation, and
    the split-KV (Flash-Decoding) pair of a partial attention and a combine.
    Operands are ranked tensors in one of two memory layouts (BHSD as PyTorch,
    BSHD as FlashAttention), selected by an attribute rather than a transpose.
    Accumulation and softmax statistics are in f32 whatever the element type.
  }];
  let useDefaultAttributePrinterParser = 1;
  // Score and mask modifications are written in arith, math and
  // tensor.extract.
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "tensor::TensorDialect"];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_TD
