// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64" --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64" | FileCheck %s --check-prefix=NOSQSK
// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64 deterministic=false" --canonicalize --cse | FileCheck %s --check-prefix=ATOMIC
// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64 memory-space=3" | FileCheck %s --check-prefix=SPACE3
// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64 memory-space=default" | FileCheck %s --check-prefix=NOSPACE

// Every case has Sq = 77 and Sk = 129 (or Sk = 129 with a short Sq): no
// buffer of Sq x Sk elements, nor a tensor, may appear.
// NOSQSK-NOT: {{alloca?\(.*}}77x129
// NOSQSK-NOT: {{alloca?\(.*}}129x77
// NOSQSK-NOT: tensor.empty

// Forward, GQA (4 query heads per key/value head), Dv != D: a forall over
// (batch, head, query tile) around a sequential loop over all key/value
// tiles; Q, K, V tiles in workgroup memory; the online softmax updates
// m, l and the accumulator once per key/value tile.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x77x64xf16>, %[[K:[^:]+]]: tensor<2x2x129x64xf16>, %[[V:[^:]+]]: tensor<2x2x129x32xf16>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C129:.+]] = arith.constant 129 : index
// CHECK-DAG:     %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[QB:.+]] = bufferization.to_buffer %[[Q]] read_only
// CHECK-DAG:     %[[KB:.+]] = bufferization.to_buffer %[[K]] read_only
// CHECK-DAG:     %[[VB:.+]] = bufferization.to_buffer %[[V]] read_only
// CHECK:         %[[O:.+]] = memref.alloc() : memref<2x8x77x32xf16>
// CHECK:         %[[LSE:.+]] = memref.alloc() : memref<2x8x77xf32>
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (2, 8, 3) {
// CHECK:           %[[Q0:.+]] = arith.muli %[[QT]], %[[C32]]
// CHECK:           %[[ROWS:.+]] = arith.minsi %{{.+}}, %[[C32]]
// CHECK:           %[[QTILE:.+]] = memref.alloc() : memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[KTILE:.+]] = memref.alloc() : memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[VTILE:.+]] = memref.alloc() : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[S:.+]] = memref.alloc() : memref<32x64xf32>
// CHECK:           %[[M:.+]] = memref.alloc() : memref<32xf32>
// CHECK:           %[[L:.+]] = memref.alloc() : memref<32xf32>
// CHECK:           %[[ACC:.+]] = memref.alloc() : memref<32x32xf32>
// CHECK:           linalg.fill ins(%[[NEGINF]] : f32) outs(%[[M]] :
// CHECK:           %[[QSRC:.+]] = memref.subview %[[QB]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[ROWS]], 64]
// CHECK:           linalg.copy ins(%[[QSRC]] :
// CHECK:           %[[KVH:.+]] = arith.divui %[[H]], %[[C4]]
// CHECK:           scf.for %[[J:.+]] = %[[C0]] to %[[C129]] step %[[C64]] {
// CHECK:             %[[COLS:.+]] = arith.minsi %{{.+}}, %[[C64]]
// CHECK:             %[[KSRC:.+]] = memref.subview %[[KB]][%[[B]], %[[KVH]], %[[J]], 0] [1, 1, %[[COLS]], 64]
// CHECK:             linalg.copy ins(%[[KSRC]] :
// CHECK:             %[[VSRC:.+]] = memref.subview %[[VB]][%[[B]], %[[KVH]], %[[J]], 0] [1, 1, %[[COLS]], 32]
// CHECK:             linalg.copy ins(%[[VSRC]] :
// CHECK:             linalg.generic {{.*}} ins(%[[QTILE]], %[[KTILE]] : {{.*}}) outs(%[[S]] :
// CHECK:             scf.if
// CHECK:               linalg.generic {{.*}} outs(%[[S]] :
// CHECK-NOT:             arith.select
// CHECK:             } else {
// CHECK:               linalg.generic {{.*}} outs(%[[S]] :
// CHECK:                 arith.select %{{.+}}, %{{.+}}, %[[NEGINF]]
// CHECK:             linalg.copy ins(%[[M]] : {{.*}}) outs(%[[MNEW:[^ ]+]] :
// CHECK:             linalg.generic {{.*}} ins(%[[S]] : {{.*}}) outs(%[[MNEW]] :
// CHECK:               arith.maximumf
// CHECK:             linalg.generic {{.*}} ins(%[[MNEW]] : {{.*}}) outs(%[[M]], %[[ALPHA:[^ ]+]] :
// CHECK:               math.exp
// CHECK:             linalg.generic {{.*}} ins(%[[M]] : {{.*}}) outs(%[[S]] :
// CHECK:               math.exp
// CHECK:             linalg.generic {{.*}} ins(%[[ALPHA]] : {{.*}}) outs(%[[L]] :
// CHECK:             linalg.generic {{.*}} ins(%[[S]] : {{.*}}) outs(%[[L]] :
// CHECK:             linalg.generic {{.*}} ins(%[[ALPHA]] : {{.*}}) outs(%[[ACC]] :
// CHECK:             linalg.generic {{.*}} ins(%[[S]], %[[VTILE]] : {{.*}}) outs(%[[ACC]] :
// CHECK:           %[[OROWS:.+]] = memref.subview %[[O]][%[[B]], %[[H]], %[[Q0]], 0] [1, 1, %[[ROWS]], 32]
// CHECK:           linalg.generic {{.*}} outs(%[[OROWS]] :
// CHECK:             arith.divf
// CHECK:             arith.truncf %{{.+}} : f32 to f16
// CHECK:           %[[LROWS:.+]] = memref.subview %[[LSE]][%[[B]], %[[H]], %[[Q0]]] [1, 1, %[[ROWS]]]
// CHECK:           linalg.generic {{.*}} outs(%[[LROWS]] :
// CHECK:             math.log
// CHECK:         %[[OT:.+]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK:         %[[LT:.+]] = bufferization.to_tensor %[[LSE]] restrict writable
// CHECK:         return %[[OT]], %[[LT]]

// SPACE3-LABEL: func.func @forward(
// SPACE3:         memref.alloc() : memref<32x64xf16, 3>
// SPACE3:         memref.alloc() : memref<64x64xf16, 3>
// SPACE3:         memref.alloc() : memref<64x32xf16, 3>
// SPACE3:         memref.alloc() : memref<32x64xf32>

// NOSPACE-LABEL: func.func @forward(
// NOSPACE:         memref.alloc() : memref<32x64xf16>
// NOSPACE:         memref.alloc() : memref<64x64xf16>
// NOSPACE:         memref.alloc() : memref<64x32xf16>
func.func @forward(%q: tensor<2x8x77x64xf16>, %k: tensor<2x2x129x64xf16>, %v: tensor<2x2x129x32xf16>) -> (tensor<2x8x77x32xf16>, tensor<2x8x77xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<2x8x77x64xf16>, tensor<2x2x129x64xf16>, tensor<2x2x129x32xf16> -> tensor<2x8x77x32xf16>, tensor<2x8x77xf32>
  return %o, %lse : tensor<2x8x77x32xf16>, tensor<2x8x77xf32>
}

// -----

// Causal, bottom-right (Sk - Sq = 52), BSHD: query tile [q0, q0 + rows)
// sees keys [0, min(129, q0 + rows - 1 + 53)); the loop stops there, so the
// tiles above the diagonal are never visited. A tile needs the causal mask
// unless its last key lies at or below the diagonal of its first query.

// CHECK-LABEL: func.func @causal_bottom_right(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[C52:.+]] = arith.constant 52 : index
// CHECK-DAG:     %[[C53:.+]] = arith.constant 53 : index
// CHECK-DAG:     %[[C63:.+]] = arith.constant 63 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C129:.+]] = arith.constant 129 : index
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (2, 4, 3) {
// CHECK:           %[[Q0:.+]] = arith.muli %[[QT]], %[[C32]]
// CHECK:           %[[ROWS:.+]] = arith.minsi %{{.+}}, %[[C32]]
// CHECK:           memref.subview %{{.+}}[%[[B]], %[[Q0]], %[[H]], 0] [1, %[[ROWS]], 1, 64]
// CHECK:           %[[LASTROW:.+]] = arith.subi %[[ROWS]], %[[C1]]
// CHECK:           %[[ILAST:.+]] = arith.addi %[[Q0]], %[[LASTROW]]
// CHECK:           %[[DIAG:.+]] = arith.addi %[[ILAST]], %[[C53]]
// CHECK:           %[[MIN:.+]] = arith.minsi %[[DIAG]], %[[C129]]
// CHECK:           %[[END:.+]] = arith.maxsi %[[MIN]], %[[C0]]
// CHECK:           scf.for %[[J:.+]] = %[[C0]] to %[[END]] step %[[C64]] {
// CHECK:             memref.subview %{{.+}}[%[[B]], %[[J]], %[[H]], 0]
// CHECK:             %[[JLAST:.+]] = arith.addi %[[J]], %[[C63]]
// CHECK:             %[[BEFOREEND:.+]] = arith.cmpi slt, %[[JLAST]], %[[END]]
// CHECK:             %[[FIRSTDIAG:.+]] = arith.addi %[[Q0]], %[[C52]]
// CHECK:             %[[BELOW:.+]] = arith.cmpi sle, %[[JLAST]], %[[FIRSTDIAG]]
// CHECK:             %[[INSIDE:.+]] = arith.andi %[[BEFOREEND]], %[[BELOW]]
// CHECK:             scf.if %[[INSIDE]] {
// CHECK-NOT:           arith.cmpi
// CHECK:             } else {
// CHECK:               arith.cmpi sle
// CHECK:               arith.select
// CHECK:           memref.subview %{{.+}}[%[[B]], %[[Q0]], %[[H]], 0] [1, %[[ROWS]], 1, 64] {{.*}} to memref<?x64xbf16, strided<[256, 1], offset: ?>>
func.func @causal_bottom_right(%q: tensor<2x77x4x64xbf16>, %k: tensor<2x129x4x64xbf16>, %v: tensor<2x129x4x64xbf16>) -> tensor<2x77x4x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>} : tensor<2x77x4x64xbf16>, tensor<2x129x4x64xbf16>, tensor<2x129x4x64xbf16> -> tensor<2x77x4x64xbf16>
  return %o : tensor<2x77x4x64xbf16>
}

// -----

// Sliding window of 16 (top-left): the loop also starts late, at
// max(0, q0 - 16). The boolean mask operand is read in every tile, in both
// branches; the causal/window masks only where the tile crosses them.

// CHECK-LABEL: func.func @window_mask(
// CHECK-SAME:    %[[MASK:[^:]+]]: tensor<1x4x1x129xi1>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (2, 4, 3) {
// CHECK:           %[[Q0:.+]] = arith.muli %[[QT]]
// CHECK:           %[[END:.+]] = arith.maxsi %{{.+}}, %[[C0]]
// CHECK:           %[[FIRST:.+]] = arith.subi %[[Q0]], %[[C16]]
// CHECK:           %[[BEGIN:.+]] = arith.maxsi %[[FIRST]], %[[C0]]
// CHECK:           scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %[[C64]] {
// CHECK:             arith.cmpi sge
// CHECK:             scf.if
// CHECK:               tensor.extract %[[MASK]][%[[C0]], %[[H]], %[[C0]], %{{.+}}]
// CHECK:               arith.select
// CHECK-NOT:           arith.cmpi
// CHECK:             } else {
// CHECK:               tensor.extract %[[MASK]]
// CHECK:               arith.cmpi sge
func.func @window_mask(%q: tensor<2x4x77x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x4x129x64xf32>, %m: tensor<1x4x1x129xi1>) -> tensor<2x4x77x64xf32> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<1x4x1x129xi1>) {causal = #attn.causal<top_left>, window = 16 : i64} : tensor<2x4x77x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32> -> tensor<2x4x77x64xf32>
  return %o : tensor<2x4x77x64xf32>
}

// -----

// Dynamic batch and sequence lengths: the loop bounds come from the operands.

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<?x4x?x64xf32>, %[[K:[^:]+]]: tensor<?x4x?x64xf32>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[BATCH:.+]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG:     %[[SQ:.+]] = tensor.dim %[[Q]], %[[C2]]
// CHECK-DAG:     %[[SK:.+]] = tensor.dim %[[K]], %[[C2]]
// CHECK:         %[[O:.+]] = memref.alloc(%[[BATCH]], %[[SQ]]) : memref<?x4x?x64xf32>
// CHECK:         %[[QTILES:.+]] = arith.divui %{{.+}}, %[[C32]]
// CHECK:         scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (%[[BATCH]], 4, %[[QTILES]]) {
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[SK]] step %[[C64]] {
func.func @dynamic(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// -----

// Split-KV: a forall over (split, batch, key/value head, row tile); the 4
// query heads of a key/value head times Sq = 3 make 12 packed rows of one
// tile, copied row by row. Split s sees keys [43 s, min(43 (s + 1), 129)).

// CHECK-LABEL: func.func @split_kv(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C12:.+]] = arith.constant 12 : index
// CHECK-DAG:     %[[C43:.+]] = arith.constant 43 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C129:.+]] = arith.constant 129 : index
// CHECK:         %[[PO:.+]] = memref.alloc() : memref<3x2x8x3x64xf32>
// CHECK:         %[[PL:.+]] = memref.alloc() : memref<3x2x8x3xf32>
// CHECK:         scf.forall (%[[N:.+]], %[[B:.+]], %[[KVH:.+]]) in (3, 2, 2) {
// CHECK:           %[[H0:.+]] = arith.muli %[[KVH]], %[[C4]]
// CHECK:           %[[QTILE:.+]] = memref.alloc() : memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK:           scf.for %[[R:.+]] = %[[C0]] to %[[C12]] step %[[C1]] {
// CHECK:             %[[G:.+]] = arith.divui %{{.+}}, %[[C3]]
// CHECK:             %[[H:.+]] = arith.addi %[[H0]], %[[G]]
// CHECK:             %[[I:.+]] = arith.remui %{{.+}}, %[[C3]]
// CHECK:             %[[ROW:.+]] = memref.subview %[[QTILE]][%[[R]], 0] [1, 64]
// CHECK:             %[[SRC:.+]] = memref.subview %{{.+}}[%[[B]], %[[H]], %[[I]], 0] [1, 1, 1, 64]
// CHECK:             linalg.copy ins(%[[SRC]] : {{.*}}) outs(%[[ROW]] :
// CHECK:           %[[SPLITBEGIN:.+]] = arith.muli %[[N]], %[[C43]]
// CHECK:           %[[SPLITNEXT:.+]] = arith.addi %[[SPLITBEGIN]], %[[C43]]
// CHECK:           %[[SPLITEND:.+]] = arith.minsi %[[SPLITNEXT]], %[[C129]]
// CHECK:           %[[END:.+]] = arith.minsi %[[SPLITEND]], %[[C129]]
// CHECK:           %[[BEGIN:.+]] = arith.maxsi %[[SPLITBEGIN]], %[[C0]]
// CHECK:           scf.for %[[J:.+]] = %[[BEGIN]] to %[[END]] step %[[C64]] {
// CHECK:             memref.subview %{{.+}}[%[[B]], %[[KVH]], %[[J]], 0]
// CHECK:             math.exp
// CHECK:           scf.for %[[R:.+]] = %[[C0]] to %[[C12]] step %[[C1]] {
// CHECK:             %[[H:.+]] = arith.addi %[[H0]], %{{.+}}
// CHECK:             %[[I:.+]] = arith.remui %{{.+}}, %[[C3]]
// CHECK:             memref.subview %[[PO]][%[[N]], %[[B]], %[[H]], %[[I]], 0] [1, 1, 1, 1, 64]
// CHECK:             memref.store %{{.+}}, %[[PL]][%[[N]], %[[B]], %[[H]], %[[I]]]
func.func @split_kv(%q: tensor<2x8x3x64xf16>, %k: tensor<2x2x129x64xf16>, %v: tensor<2x2x129x64xf16>) -> (tensor<3x2x8x3x64xf32>, tensor<3x2x8x3xf32>) {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 3 : i64, causal = #attn.causal<bottom_right>} : tensor<2x8x3x64xf16>, tensor<2x2x129x64xf16>, tensor<2x2x129x64xf16> -> tensor<3x2x8x3x64xf32>, tensor<3x2x8x3xf32>
  return %po, %pl : tensor<3x2x8x3x64xf32>, tensor<3x2x8x3xf32>
}

// -----

// Combine: one query row per forall iteration; the splits' max and sum
// travel through the loops as iter_args.

// CHECK-LABEL: func.func @combine(
// CHECK-SAME:    %[[PO:[^:]+]]: tensor<3x2x8x3x64xf32>, %[[PL:[^:]+]]: tensor<3x2x8x3xf32>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[O:.+]] = memref.alloc() : memref<2x3x8x64xf16>
// CHECK:         %[[LSE:.+]] = memref.alloc() : memref<2x8x3xf32>
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) in (2, 8, 3) {
// CHECK:           %[[MAX:.+]] = scf.for %[[S:.+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%{{.+}} = %[[NEGINF]]) -> (f32) {
// CHECK:             arith.maximumf
// CHECK:           %[[SUM:.+]] = scf.for %{{.+}} = %[[C0]] to %[[C3]] step %[[C1]] iter_args
// CHECK:             math.exp
// CHECK:           %[[ACC:.+]] = memref.alloc() : memref<64xf32>
// CHECK:           scf.for %[[S:.+]] = %[[C0]] to %[[C3]] step %[[C1]] {
// CHECK:             arith.divf %{{.+}}, %[[SUM]]
// CHECK:             linalg.generic {{.*}} outs(%[[ACC]] :
// CHECK:           %[[OROW:.+]] = memref.subview %[[O]][%[[B]], %[[I]], %[[H]], 0] [1, 1, 1, 64]
// CHECK:           linalg.generic {{.*}} ins(%[[ACC]] : {{.*}}) outs(%[[OROW]] :
// CHECK:             arith.truncf
// CHECK:           math.log %[[SUM]]
// CHECK:           memref.store %{{.+}}, %[[LSE]][%[[B]], %[[H]], %[[I]]]
func.func @combine(%po: tensor<3x2x8x3x64xf32>, %pl: tensor<3x2x8x3xf32>) -> (tensor<2x3x8x64xf16>, tensor<2x8x3xf32>) {
  %o, %lse = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<3x2x8x3x64xf32>, tensor<3x2x8x3xf32> -> tensor<2x3x8x64xf16>, tensor<2x8x3xf32>
  return %o, %lse : tensor<2x3x8x64xf16>, tensor<2x8x3xf32>
}

// -----

// Gradients: D = rowsum(dO * O) over query tiles; then per key/value tile
// (forall over batch, key/value head, key tile), a loop over the 2 query
// heads of the group and over the query tiles that see the tile (from
// max(0, j0 - 52) under bottom-right causal) accumulating dK and dV on
// chip; then per query tile a loop over the key/value tiles it sees for dQ.

// CHECK-LABEL: func.func @grad(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[C52:.+]] = arith.constant 52 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C77:.+]] = arith.constant 77 : index
// CHECK:         %[[DQ:.+]] = memref.alloc() : memref<2x4x77x32xf32>
// CHECK:         %[[DK:.+]] = memref.alloc() : memref<2x2x129x32xf32>
// CHECK:         %[[DV:.+]] = memref.alloc() : memref<2x2x129x16xf32>
// CHECK:         %[[D:.+]] = memref.alloc() : memref<2x4x77xf32>
// CHECK:         scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (2, 4, 3) {
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK:         scf.forall (%[[B:.+]], %[[KVH:.+]], %[[KT:.+]]) in (2, 2, 3) {
// CHECK:           %[[J0:.+]] = arith.muli %[[KT]], %[[C64]]
// CHECK:           memref.alloc() : memref<32x32xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<32x16xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<64x16xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[DKACC:.+]] = memref.alloc() : memref<64x32xf32>
// CHECK:           %[[DVACC:.+]] = memref.alloc() : memref<64x16xf32>
// CHECK:           %[[FIRSTQ:.+]] = arith.subi %[[J0]], %[[C52]]
// CHECK:           %[[CLAMP:.+]] = arith.maxsi %[[FIRSTQ]], %[[C0]]
// CHECK:           %[[QBEGIN:.+]] = arith.minsi %[[CLAMP]], %[[C77]]
// CHECK:           scf.for %[[G:.+]] = %[[C0]] to %[[C2]] step %[[C1]] {
// CHECK:             %[[H:.+]] = arith.addi %{{.+}}, %[[G]]
// CHECK:             scf.for %[[Q0:.+]] = %[[QBEGIN]] to %[[C77]] step %[[C32]] {
// CHECK:               memref.subview %{{.+}}[%[[B]], %[[H]], %[[Q0]], 0]
// CHECK:               scf.if
// CHECK:               math.exp
// CHECK:               outs(%[[DVACC]] :
// CHECK:               outs(%[[DKACC]] :
// CHECK:           memref.subview %[[DK]][%[[B]], %[[KVH]], %[[J0]], 0]
// CHECK:           memref.subview %[[DV]][%[[B]], %[[KVH]], %[[J0]], 0]
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (2, 4, 3) {
// CHECK:           %[[DQACC:.+]] = memref.alloc() : memref<32x32xf32>
// CHECK:           scf.for %{{.+}} = %[[C0]] to %{{.+}} step %[[C64]] {
// CHECK:             math.exp
// CHECK:             outs(%[[DQACC]] :
// CHECK:           memref.subview %[[DQ]][%[[B]], %[[H]], %{{.+}}, 0]
// CHECK-NOT:     memref.atomic_rmw

// ATOMIC-LABEL: func.func @grad(
// ATOMIC:         memref.alloc() : memref<2x4x77xf32>
// ATOMIC:         scf.forall
// ATOMIC:         %[[DQACC:.+]] = memref.alloc() : memref<2x4x77x32xf32>
// ATOMIC:         linalg.fill ins(%{{.+}} : f32) outs(%[[DQACC]] :
// ATOMIC:         scf.forall
// ATOMIC:           scf.for
// ATOMIC:             scf.for
// ATOMIC:               memref.atomic_rmw addf %{{.+}}, %[[DQACC]]
// ATOMIC:         scf.forall
// ATOMIC:           memref.subview %[[DQACC]]
// ATOMIC-NOT:     scf.forall
func.func @grad(%q: tensor<2x4x77x32xf32>, %k: tensor<2x2x129x32xf32>, %v: tensor<2x2x129x16xf32>, %o: tensor<2x4x77x16xf32>, %do: tensor<2x4x77x16xf32>, %lse: tensor<2x4x77xf32>) -> (tensor<2x4x77x32xf32>, tensor<2x2x129x32xf32>, tensor<2x2x129x16xf32>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse {causal = #attn.causal<bottom_right>}
      : tensor<2x4x77x32xf32>, tensor<2x2x129x32xf32>, tensor<2x2x129x16xf32>, tensor<2x4x77x16xf32>, tensor<2x4x77x16xf32>, tensor<2x4x77xf32>
      -> tensor<2x4x77x32xf32>, tensor<2x2x129x32xf32>, tensor<2x2x129x16xf32>
  return %dq, %dk, %dv : tensor<2x4x77x32xf32>, tensor<2x2x129x32xf32>, tensor<2x2x129x16xf32>
}

// -----

// Not an attn op: left alone.

// CHECK-LABEL: func.func @no_attn(
// CHECK:         arith.addf %{{.+}}, %{{.+}} : tensor<4x4xf32>
// CHECK-NOT:     scf.forall
func.func @no_attn(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = arith.addf %a, %a : tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
