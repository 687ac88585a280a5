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


def Attn_TileReduceKind : I32EnumAttr<"TileReduceKind", "row reduction of a tile", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Add", 1, "add">]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}

def Attn_TileReduceKindAttr
    : EnumAttr<Attn_Dialect, Attn_TileReduceKind, "tile_reduce"> {
  let assemblyFormat = "`<` $value `>`";
}

def Attn_ScheduleAttr : AttrDef<Attn_Dialect, "Schedule"> {
  let mnemonic = "schedule";
  let summary = "how one tiled attn loop nest maps onto a GPU";
  let description = [{
    Chosen once per op by attn-tile's cost model and carried on the loop
    nest it writes, so that every lowering and the kernel manifest read the
    same numbers: `block_q` rows per query tile (one CTA), `block_kv` keys
    per key/value tile, `stages` key/value tiles in flight (the ring of
    memory tiles), `warps` per CTA, `key_slices`, the parts each key/value
    tile is split into, each with its own softmax state merged after the
    loop (split-KV decode: one per warp), and the bytes of shared memory
    the tiles take on the GPU (`shared_bytes`, rows padded by 16 bytes).

    `#attn.schedule<block_q = 128, block_kv = 32, stages = 3, warps = 4, key_slices = 1, shared_bytes = 87040>`
  }];
  let parameters = (ins "int64_t":$blockQ, "int64_t":$blockKV,
                        "int64_t":$stages, "int64_t":$warps,
                        "int64_t":$keySlices, "int64_t":$sharedBytes);
  let assemblyFormat = [{
    `<` `block_q` `=` $blockQ `,` `block_kv` `=` $blockKV `,` `stages` `=`
    $stages `,` `warps` `=` $warps `,` `key_slices` `=` $keySlices `,`
    `shared_bytes` `=` $sharedBytes `>`
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
