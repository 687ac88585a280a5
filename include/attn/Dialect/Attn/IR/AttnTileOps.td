//===- AttnTileOps.td - the tile form of attn-tile ---------*- tablegen -*-===//
//
// The ops in which attn-tile writes the FlashAttention algorithm once for
// every target. Register tiles are static-shaped tensors (f32 scores and
// softmax statistics, or the element type for P); shared-memory tiles are
// static-shaped memrefs. A lowering maps each op onto a target (the CPU:
// linalg on tensors and loops; a GPU: warps and MMA fragments); none of
// them decides anything about the algorithm.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD

include "attn/Dialect/Attn/IR/AttnDialect.td"
include "attn/Dialect/Attn/IR/AttnAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

def Attn_RegisterTile : StaticShapeTensorOf<[AnyFloat]>;
def Attn_MemoryTile : ConfinedType<MemRefRankOf<[AnyFloat], [2, 3]>,
    [HasStaticShapePred], "static-shaped 2D or 3D memref of floats">;

def Attn_TileYieldOp : Attn_Op<"tile.yield", [Pure, Terminator,
    ParentOneOf<["TileLoadOp", "TileMapOp", "TileStoreOp",
                "TileWorkItemOp"]>]> {
  let summary = "ends the region of a tile op";
  let description = [{
    Yields the values of a `tile.map` element, the indices that a
    `tile.load` / `tile.store` row addresses, or a `tile.work_item`
    sequence's key count.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ValueRange()); }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def Attn_TileLoadOp : Attn_Op<"tile.load", [
    SingleBlockImplicitTerminator<"TileYieldOp">]> {
  let summary = "copies rows of a global buffer into a memory tile";
  let description = [{
    Copies `rows` rows into the leading rows of the rank-2 `tile` and fills
    the rest of the tile with zeros. The region maps a tile row `r`
    (`0 <= r < rows`) to the indices of the source row: it yields one index
    for every dimension of `source` but the last, and the row is
    `source[i0, ..., iN-2, 0 : X]`, X being the source's last dimension
    (static). A tile row may be longer: its columns past X are zeros (a
    head dim padded to whole tensor-core steps, AttnTileSizes::headCols).
    The region addresses any row, so one op covers
    consecutive queries of one head, the packed query heads of a split-KV
    group and, later, rows reached through a page table.

    A target may copy asynchronously (cp.async, TMA); the tile form reads a
    tile only after the copy that wrote it, and only one copy writes a
    pipeline stage at a time.

    ```mlir
    attn.tile.load %q into %qs rows %n : memref<?x?x?x64xf16, strided<[?, ?, ?, ?], offset: ?>>
        into memref<64x64xf16, #gpu.address_space<workgroup>> {
    ^bb0(%r: index):
      %i = arith.addi %q0, %r : index
      attn.tile.yield %b, %h, %i : index, index, index
    }
    ```
  }];
  let arguments = (ins Arg<AnyStridedMemRef, "", [MemRead]>:$source,
                   Arg<Attn_MemoryTile, "", [MemWrite]>:$tile, Index:$rows);
  let regions = (region SizedRegion<1>:$indices);
  let assemblyFormat = [{
    $source `into` $tile `rows` $rows `:` type($source) `into` type($tile)
    $indices attr-dict
  }];
  let hasVerifier = 1;
}

def Attn_TileMatmulOp : Attn_Op<"tile.matmul", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "accumulates the product of two tiles in an f32 register tile";
  let description = [{
    `result = acc + lhs * rhs` (or `lhs * rhs^T` with `transpose_rhs`) on
    `[M, K] x [K, N]` (`[N, K]` transposed), products and sums in f32.
    `lhs` is a memory tile or a register tile (P, as the A operand of the
    second product); `transpose_lhs` reads a rank-2 memory lhs as `[K, M]`
    (the backward's dS^T staged in memory, for dQ); `rhs` is a memory tile;
    `acc` and the result are f32
    register tiles `[M, N]`. Batched over key slices: with a rank-3 `acc`
    `[S, M, N]` the rhs is `[S, K, N]` (`[S, N, K]`) and the lhs `[S, M, K]`
    or, shared by every slice, `[M, K]`.

    ```mlir
    %s = attn.tile.matmul %qs, %ks, %zero {transpose_rhs}
        : memref<64x64xf16, 3>, memref<32x64xf16, 3>, tensor<64x32xf32>
    ```
  }];
  let arguments = (ins AnyTypeOf<[Attn_RegisterTile, Attn_MemoryTile]>:$lhs,
                   Attn_MemoryTile:$rhs,
                   Attn_RegisterTile:$acc, UnitAttr:$transpose_rhs,
                   UnitAttr:$transpose_lhs);
  let results = (outs Attn_RegisterTile:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `,` $acc attr-dict `:` type($lhs) `,` type($rhs) `,` type($acc)
  }];
  let hasVerifier = 1;
}

def Attn_TileMapOp : Attn_Op<"tile.map", [
    SingleBlockImplicitTerminator<"TileYieldOp">, RecursiveMemoryEffects]> {
  let summary = "applies a scalar function to every element of register tiles";
  let description = [{
    The result is a register tile of rank 1 to 3 (`[R]`, `[R, C]`, or
    `[S, R, C]` with a leading key-slice dimension). Each input has the
    result's shape or, broadcast along the trailing dimensions, its leading
    ones (a row tile `[R]` into `[R, C]`); `indexing_maps`, one projected
    permutation per input from the result's dimensions, says otherwise
    where needed (`(d0, d1) -> (d1)`: a `[R]` tile into `[S, R]`). The
    region's arguments are the element's indices and one element of each
    input; it yields the result element. A region may read memory (a mask
    operand) but not write it.

    ```mlir
    %p = attn.tile.map ins(%s, %m : tensor<64x32xf32>, tensor<64xf32>)
        -> tensor<64x32xf32> {
    ^bb0(%r: index, %c: index, %x: f32, %mx: f32):
      %d = arith.subf %x, %mx : f32
      %e = math.exp2 %d : f32
      attn.tile.yield %e : f32
    }
    ```
  }];
  let arguments = (ins Variadic<Attn_RegisterTile>:$inputs,
                   OptionalAttr<AffineMapArrayAttr>:$indexing_maps);
  let results = (outs Attn_RegisterTile:$result);
  let regions = (region SizedRegion<1>:$body);
  let extraClassDeclaration = [{
    /// The map of input `i`: `indexing_maps`' or the default (identity, or
    /// the result's leading dimensions).
    AffineMap getInputMap(unsigned i);
  }];
  let assemblyFormat = [{
    (`ins` `(` $inputs^ `:` type($inputs) `)`)? `->` type($result) $body
    attr-dict
  }];
  let hasVerifier = 1;
}

def Attn_TileReduceOp : Attn_Op<"tile.reduce", [Pure,
    AllTypesMatch<["init", "result"]>]> {
  let summary = "reduces each row of a register tile";
  let description = [{
    `result[r] = init[r] <kind> input[r, 0] <kind> ... <kind> input[r, C-1]`
    with `kind` `max` (arith.maximumf: NaN propagates, -inf is neutral) or
    `add`. `dim` (default: the last) is the dimension reduced; the result
    and `init` have the input's shape without it (`[S, R] -> [R]` merges
    key slices).

    ```mlir
    %mx = attn.tile.reduce <max> %s, %init : tensor<64x32xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Attn_TileReduceKindAttr:$kind, Attn_RegisterTile:$input,
                   Attn_RegisterTile:$init, OptionalAttr<I64Attr>:$dim);
  let extraClassDeclaration = [{
    /// The dimension reduced.
    int64_t getReducedDim() {
      return getDim() ? *getDim() : getInput().getType().getRank() - 1;
    }
  }];
  let results = (outs Attn_RegisterTile:$result);
  let assemblyFormat = [{
    $kind $input `,` $init attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Attn_TileStoreOp : Attn_Op<"tile.store", [
    SingleBlockImplicitTerminator<"TileYieldOp">]> {
  let summary = "writes the leading rows of a register tile to a buffer";
  let description = [{
    Writes rows `0 <= r < rows` of `tile` to `dest`; the region maps row `r`
    to the indices of its destination, as in `tile.load`: for a `[R, X]`
    tile it yields one index for every dimension of `dest` but the last and
    the first X columns of the row land in `dest[i0, ..., iN-2, 0 : X]`, X
    being `dest`'s last dimension (static, at most the tile's; the columns
    past it are padding and are dropped); for a row tile `[R]` it
    yields every index of the element `r` lands in. The tile and `dest` have
    one element type. With `accumulate` the tile is added to `dest`
    (atomically: other CTAs may add to the same elements) rather than
    written; f32 only. With `transpose` a `[X, R]` tile is written by its
    columns: column `r` of the tile is row `r` of the destination (`rows`
    counts columns, X bounds the destination's last dimension); the
    backward's dQ^T product, added to dQ.

    ```mlir
    attn.tile.store %o into %out rows %n : tensor<64x64xf16>
        into memref<?x?x?x64xf16> {
    ^bb0(%r: index):
      %i = arith.addi %q0, %r : index
      attn.tile.yield %b, %h, %i : index, index, index
    }
    ```
  }];
  let arguments = (ins Attn_RegisterTile:$tile,
                   Arg<AnyStridedMemRef, "", [MemRead, MemWrite]>:$dest,
                   Index:$rows, UnitAttr:$accumulate,
                   UnitAttr:$transpose);
  let regions = (region SizedRegion<1>:$indices);
  let assemblyFormat = [{
    $tile `into` $dest `rows` $rows `:` type($tile) `into` type($dest)
    $indices attr-dict
  }];
  let hasVerifier = 1;
}

def Attn_TileAwaitTurnOp : Attn_Op<"tile.await_turn"> {
  let summary = "waits until a turn counter holds a value";
  let description = [{
    With `tile.pass_turn`, orders the accumulating `tile.store`s of
    concurrent workgroups into the same rows, so that their f32 sums are
    bitwise reproducible (the backward's ordered dQ): returns once
    `turns[indices]` holds `expected`, which another workgroup's
    `tile.pass_turn` wrote; this workgroup's accumulating stores after it
    then follow every accumulating store that workgroup issued before that
    `tile.pass_turn`. Whoever fixes the order makes sure the workgroup it
    waits for has started or finished (a GPU launches CTAs in index order:
    a CTA waits only for CTAs of lower index). A target that runs the
    workgroups one after another in that order (the CPU's loops) need not
    wait.

    ```mlir
    attn.tile.await_turn %turns[%b, %h, %q0] for %prev : memref<?x?x?xi32>
    ```
  }];
  // A write too: a synchronization, which no pass may drop or move.
  let arguments = (ins Arg<MemRefOf<[I32]>, "", [MemRead, MemWrite]>:$turns,
                   Variadic<Index>:$indices, Index:$expected);
  let assemblyFormat = [{
    $turns `[` $indices `]` `for` $expected attr-dict `:` type($turns)
  }];
  let hasVerifier = 1;
}

def Attn_TilePassTurnOp : Attn_Op<"tile.pass_turn"> {
  let summary = "hands a turn counter on once earlier stores are complete";
  let description = [{
    Writes `value` into `turns[indices]` once every accumulating
    `tile.store` this workgroup issued before it is complete and visible to
    other workgroups (see `tile.await_turn`).

    ```mlir
    attn.tile.pass_turn %turns[%b, %h, %q0] = %mine : memref<?x?x?xi32>
    ```
  }];
  let arguments = (ins Arg<MemRefOf<[I32]>, "", [MemWrite]>:$turns,
                   Variadic<Index>:$indices, Index:$value);
  let assemblyFormat = [{
    $turns `[` $indices `]` `=` $value attr-dict `:` type($turns)
  }];
  let hasVerifier = 1;
}

def Attn_TileParamOp : Attn_Op<"tile.param", [Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "a scalar that a kernel takes at launch";
  let description = [{
    A scalar of the tile form that a GPU kernel receives as a launch
    parameter of the same `name` (include/attn-runtime/attn_kernel_abi.def:
    `scale_log2`, `window`), so that one kernel serves every value; `value`
    is the op's own, which the CPU lowering uses. It has no folder: only a
    lowering decides what it becomes.

    ```mlir
    %w = attn.tile.param "window" = 16 : index
    ```
  }];
  let arguments = (ins StrAttr:$name, TypedAttrInterface:$value);
  let results = (outs AnyTypeOf<[Index, F32]>:$result);
  let assemblyFormat = "$name `=` $value attr-dict";
  let hasVerifier = 1;
}

def Attn_TileWorkItemOp : Attn_Op<"tile.work_item", [
    SingleBlockImplicitTerminator<"TileYieldOp">, RecursiveMemoryEffects]> {
  let summary = "one work item of balanced split-KV attention";
  let description = [{
    Work item `item` of the `items` items into which balanced split-KV
    attention (`attention_partial` `balanced`) cuts a batch of `batch`
    sequences of at most `capacity` keys each: the sequence it belongs to
    and its keys `[begin, end)`. The region maps a sequence `s`
    (`0 <= s < batch`) to its key count, in `[0, capacity]`; it may read
    memory (the lengths are device data) but not write it, and a target
    evaluates it as often and in whatever order it likes.

    The work list is SplitWork.h's (FlashInfer's plan): one chunk size c
    for the whole batch, from the sum of the key counts, and sequence s
    takes ceil(L_s / c) consecutive items. An item past the last one gets
    sequence 0 and an empty range. The CPU lowering runs SplitWork's
    scalar loops over the sequences; a GPU kernel, where every CTA finds
    its own item, has the lanes of a warp take one sequence each (a sum
    and a prefix sum across the warp), so that its prologue waits for
    one round of loads per 32 sequences rather than for B of them.

    ```mlir
    %s, %begin, %end = attn.tile.work_item %item of %items over %b
        capacity %sk {
    ^bb0(%seq: index):
      %n = memref.load %kv_lens[%seq] : memref<?xi32>
      %l = arith.index_cast %n : i32 to index
      attn.tile.yield %l : index
    }
    ```
  }];
  let arguments = (ins Index:$item, Index:$items, Index:$batch,
                   Index:$capacity);
  let results = (outs Index:$sequence, Index:$begin, Index:$end);
  let regions = (region SizedRegion<1>:$length);
  let assemblyFormat = [{
    $item `of` $items `over` $batch `capacity` $capacity $length attr-dict
  }];
  let hasVerifier = 1;
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNTILEOPS_TD
