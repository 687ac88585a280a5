//===- AttnAttrs.td - attn enums and attributes ------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_CausalKind : I32EnumAttr<"CausalKind", "causal mask alignment", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"TopLeft", 1, "top_left">,
    I32EnumAttrCase<"BottomRight", 2, "bottom_right">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
  let description = [{
    `top_left` lets query i see keys j <= i (PyTorch's `is_causal`);
    `bottom_right` lets it see keys j <= i + Sk - Sq (FlashAttention's
    alignment when Sq != Sk). Both are the same when Sq == Sk.
  }];
}

def Attn_CausalKindAttr : EnumAttr<Attn_Dialect, Attn_CausalKind, "causal"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_Layout : I32EnumAttr<"Layout", "memory layout of Q, K, V and O", [
    I32EnumAttrCase<"BHSD", 0, "bhsd">,
    I32EnumAttrCase<"BSHD", 1, "bshd">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
  let description = [{
    `bhsd`: [batch, heads, sequence, head dim] (PyTorch). `bshd`: [batch,
    sequence, heads, head dim] (FlashAttention). Only the order of the two
    middle dimensions differs; no transpose is ever materialised for it.
  }];
}

def Attn_LayoutAttr : EnumAttr<Attn_Dialect, Attn_Layout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
