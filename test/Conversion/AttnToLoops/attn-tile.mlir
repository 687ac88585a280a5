// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64" --canonicalize --cse | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64" | FileCheck %s --check-prefix=NOSQSK
// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64 deterministic=false" --canonicalize --cse | FileCheck %s --check-prefix=ATOMIC
// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64 memory-space=3" | FileCheck %s --check-prefix=SPACE3
// RUN: attn-opt %s -split-input-file --attn-tile="block-q=32 block-kv=64 memory-space=default" | FileCheck %s --check-prefix=NOSPACE

// Every case has Sq = 77 and Sk = 129 (or Sk = 129 with a short Sq): no
// buffer of Sq x Sk elements, nor a tensor, may appear. The register tiles
// are tensors of at most block-q x block-kv (tensor<32x64xf32>).
// NOSQSK-NOT: {{(memref|tensor)<([0-9?]+x)*}}77x129
// NOSQSK-NOT: {{(memref|tensor)<([0-9?]+x)*}}129x77

// Forward, GQA (4 query heads per key/value head), Dv != D: a forall over
// (batch, head, query tile) carrying its schedule. Inside, the Q tile and
// rings of 3 K and V tiles in workgroup memory; tiles 0 and 1 are loaded
// before the loop, tile n + 2 while tile n is worked on. The loop carries
// m, l and the accumulator as register tiles; S = Q K^T is masked only on
// the last tile (keys past 129), and the softmax runs in log2 units:
// exp2(fma(s, scale log2(e), -m)) with scale log2(e) = log2(e) / 8.
// Shared memory: rows padded by 16 bytes,
// 32 (64 + 8) 2 + 3 64 ((64 + 8) + (32 + 8)) 2 = 47616 bytes.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x8x77x64xf16>, %[[K:[^:]+]]: tensor<2x2x129x64xf16>, %[[V:[^:]+]]: tensor<2x2x129x32xf16>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[C63:.+]] = arith.constant 63 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C129:.+]] = arith.constant 129 : index
// CHECK-DAG:     %[[FALSE:.+]] = arith.constant false
// CHECK-DAG:     %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[SCALE:.+]] = attn.tile.param "scale_log2" = 0.180336878 : f32
// CHECK-DAG:     %[[LN2:.+]] = arith.constant 0.693147182 : f32
// CHECK-DAG:     %[[SZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<32x64xf32>
// CHECK-DAG:     %[[ACCZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
// CHECK-DAG:     %[[ROWZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<32xf32>
// CHECK-DAG:     %[[ROWNEGINF:.+]] = arith.constant dense<0xFF800000> : tensor<32xf32>
// CHECK-DAG:     %[[QB:.+]] = bufferization.to_buffer %[[Q]] read_only
// CHECK-DAG:     %[[KB:.+]] = bufferization.to_buffer %[[K]] read_only
// CHECK-DAG:     %[[VB:.+]] = bufferization.to_buffer %[[V]] read_only
// CHECK:         %[[O:.+]] = memref.alloc() : memref<2x8x77x32xf16>
// CHECK:         %[[LSE:.+]] = memref.alloc() : memref<2x8x77xf32>
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (2, 8, 3) {
// CHECK:           %[[Q0:.+]] = arith.muli %[[QT]], %[[C32]]
// CHECK:           %[[ROWS:.+]] = arith.minsi %{{.+}}, %[[C32]]
// CHECK:           %[[KVH:.+]] = arith.divui %[[H]], %[[C4]]
// CHECK:           %[[QTILE:.+]] = memref.alloc() : memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[KRING:.+]] = memref.alloc() : memref<3x64x64xf16, #gpu.address_space<workgroup>>
// CHECK:           %[[VRING:.+]] = memref.alloc() : memref<3x64x32xf16, #gpu.address_space<workgroup>>
// CHECK:           attn.tile.load %[[QB]] into %[[QTILE]] rows %[[ROWS]] :
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK:             %[[RC:.+]] = arith.minsi %[[R]], %{{.+}}
// CHECK-NEXT:        %[[I:.+]] = arith.addi %[[Q0]], %[[RC]]
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[H]], %[[I]] : index, index, index
// CHECK:           %[[K0:.+]] = memref.subview %[[KRING]][0, 0, 0] [1, 64, 64]
// CHECK:           %[[K0C:.+]] = memref.cast %[[K0]]
// CHECK:           attn.tile.load %[[KB]] into %[[K0C]] rows %[[C64]] :
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[KVH]], %[[R]] : index, index, index
// CHECK:           %[[V0:.+]] = memref.subview %[[VRING]][0, 0, 0] [1, 64, 32]
// CHECK:           %[[V0C:.+]] = memref.cast %[[V0]]
// CHECK:           attn.tile.load %[[VB]] into %[[V0C]] rows %[[C64]] :
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[KVH]], %[[R]] : index, index, index
// CHECK:           %[[K1:.+]] = memref.subview %[[KRING]][1, 0, 0] [1, 64, 64]
// CHECK:           %[[K1C:.+]] = memref.cast %[[K1]]
// CHECK:           attn.tile.load %[[KB]] into %[[K1C]] rows %[[C64]] :
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        %[[J:.+]] = arith.addi %[[R]], %[[C64]]
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[KVH]], %[[J]] : index, index, index
// CHECK:           %[[V1:.+]] = memref.subview %[[VRING]][1, 0, 0] [1, 64, 32]
// CHECK:           %[[V1C:.+]] = memref.cast %[[V1]]
// CHECK:           attn.tile.load %[[VB]] into %[[V1C]] rows %[[C64]] :
// CHECK:           %[[RES:.+]]:3 = scf.for %[[N:.+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[M:[^ ]+]] = %[[ROWNEGINF]], %[[L:[^ ]+]] = %[[ROWZERO]], %[[ACC:[^ ]+]] = %[[ACCZERO]]) -> (tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>) {
// CHECK-NEXT:        %[[NEXT:.+]] = arith.addi %[[N]], %[[C2]]
// CHECK-NEXT:        %[[INRANGE:.+]] = arith.cmpi slt, %[[NEXT]], %[[C3]]
// CHECK-NEXT:        scf.if %[[INRANGE]] {
// CHECK-NEXT:          %[[NEXTJ0:.+]] = arith.muli %[[NEXT]], %[[C64]]
// CHECK-NEXT:          %[[NEXTSPAN:.+]] = arith.subi %[[C129]], %[[NEXTJ0]]
// CHECK-NEXT:          %[[NEXTCOLS:.+]] = arith.minsi %[[NEXTSPAN]], %[[C64]]
// CHECK-NEXT:          %[[NEXTSTAGE:.+]] = arith.remui %[[NEXT]], %[[C3]]
// CHECK-NEXT:          %[[KNEXT:.+]] = memref.subview %[[KRING]][%[[NEXTSTAGE]], 0, 0] [1, 64, 64]
// CHECK-NEXT:          attn.tile.load %[[KB]] into %[[KNEXT]] rows %[[NEXTCOLS]] :
// CHECK-NEXT:          ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:            %[[J:.+]] = arith.addi %[[NEXTJ0]], %[[R]]
// CHECK-NEXT:            attn.tile.yield %[[B]], %[[KVH]], %[[J]] : index, index, index
// CHECK-NEXT:          }
// CHECK-NEXT:          %[[VNEXT:.+]] = memref.subview %[[VRING]][%[[NEXTSTAGE]], 0, 0] [1, 64, 32]
// CHECK-NEXT:          attn.tile.load %[[VB]] into %[[VNEXT]] rows %[[NEXTCOLS]] :
// CHECK-NEXT:          ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:            %[[J:.+]] = arith.addi %[[NEXTJ0]], %[[R]]
// CHECK-NEXT:            attn.tile.yield %[[B]], %[[KVH]], %[[J]] : index, index, index
// CHECK-NEXT:          }
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[STAGE:.+]] = arith.remui %[[N]], %[[C3]]
// CHECK-NEXT:        %[[KCUR:.+]] = memref.subview %[[KRING]][%[[STAGE]], 0, 0] [1, 64, 64]
// CHECK-NEXT:        %[[J0:.+]] = arith.muli %[[N]], %[[C64]]
// CHECK-NEXT:        %[[S:.+]] = attn.tile.matmul %[[QTILE]], %[[KCUR]], %[[SZERO]] {transpose_rhs} : {{.*}}, tensor<32x64xf32>
// CHECK-NEXT:        %[[JLAST:.+]] = arith.addi %[[J0]], %[[C63]]
// CHECK-NEXT:        %[[INSIDE:.+]] = arith.cmpi slt, %[[JLAST]], %[[C129]]
// CHECK-NEXT:        %[[EDGE:.+]] = arith.cmpi eq, %[[INSIDE]], %[[FALSE]]
// CHECK-NEXT:        %[[SM:.+]] = scf.if %[[EDGE]] -> (tensor<32x64xf32>) {
// CHECK-NEXT:          %[[MASKED:.+]] = attn.tile.map ins(%[[S]] : tensor<32x64xf32>) -> tensor<32x64xf32> {
// CHECK-NEXT:          ^bb0(%{{.+}}: index, %[[COL:.+]]: index, %[[X:.+]]: f32):
// CHECK-NEXT:            %[[KEY:.+]] = arith.addi %[[J0]], %[[COL]]
// CHECK-NEXT:            %[[VALID:.+]] = arith.cmpi slt, %[[KEY]], %[[C129]]
// CHECK-NEXT:            %[[XM:.+]] = arith.select %[[VALID]], %[[X]], %[[NEGINF]] : f32
// CHECK-NEXT:            attn.tile.yield %[[XM]] : f32
// CHECK-NEXT:          }
// CHECK-NEXT:          scf.yield %[[MASKED]] : tensor<32x64xf32>
// CHECK-NEXT:        } else {
// CHECK-NEXT:          scf.yield %[[S]] : tensor<32x64xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[ROWMAX:.+]] = attn.tile.reduce <max> %[[SM]], %[[ROWNEGINF]] : tensor<32x64xf32> -> tensor<32xf32>
// CHECK-NEXT:        %[[MNEW:.+]] = attn.tile.map ins(%[[M]], %[[ROWMAX]] : tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32> {
// CHECK:               %[[SCALED:.+]] = arith.mulf %{{.+}}, %[[SCALE]] : f32
// CHECK-NEXT:          arith.maximumf %{{.+}}, %[[SCALED]] : f32
// CHECK:             %[[P:.+]] = attn.tile.map ins(%[[SM]], %[[MNEW]] : tensor<32x64xf32>, tensor<32xf32>) -> tensor<32x64xf32> {
// CHECK-NEXT:        ^bb0(%{{.+}}: index, %{{.+}}: index, %[[X:.+]]: f32, %{{.+}}: f32):
// CHECK:               %[[NEGM:.+]] = arith.negf
// CHECK-NEXT:          %[[ARG:.+]] = math.fma %[[X]], %[[SCALE]], %[[NEGM]] : f32
// CHECK-NEXT:          %[[E:.+]] = math.exp2 %[[ARG]] : f32
// CHECK-NEXT:          attn.tile.yield %[[E]] : f32
// CHECK:             %[[ALPHA:.+]] = attn.tile.map ins(%[[M]], %[[MNEW]] : tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32> {
// CHECK:               arith.subf
// CHECK-NEXT:          math.exp2
// CHECK:             %[[ROWSUM:.+]] = attn.tile.reduce <add> %[[P]], %[[ROWZERO]] : tensor<32x64xf32> -> tensor<32xf32>
// CHECK-NEXT:        %[[LNEW:.+]] = attn.tile.map ins(%[[L]], %[[ALPHA]], %[[ROWSUM]] :
// CHECK:             %[[ACCSCALED:.+]] = attn.tile.map ins(%[[ACC]], %[[ALPHA]] : tensor<32x32xf32>, tensor<32xf32>) -> tensor<32x32xf32> {
// CHECK:             %[[PH:.+]] = attn.tile.map ins(%[[P]] : tensor<32x64xf32>) -> tensor<32x64xf16> {
// CHECK-NEXT:        ^bb0(%{{.+}}: index, %{{.+}}: index, %[[X:.+]]: f32):
// CHECK-NEXT:          %[[XH:.+]] = arith.truncf %[[X]] : f32 to f16
// CHECK-NEXT:          attn.tile.yield %[[XH]] : f16
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[VCUR:.+]] = memref.subview %[[VRING]][%[[STAGE]], 0, 0] [1, 64, 32]
// CHECK-NEXT:        %[[ACCNEW:.+]] = attn.tile.matmul %[[PH]], %[[VCUR]], %[[ACCSCALED]] : tensor<32x64xf16>, {{.*}}, tensor<32x32xf32>
// CHECK-NEXT:        scf.yield %[[MNEW]], %[[LNEW]], %[[ACCNEW]] : tensor<32xf32>, tensor<32xf32>, tensor<32x32xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[INV:.+]] = attn.tile.map ins(%[[RES]]#1 : tensor<32xf32>) -> tensor<32xf32> {
// CHECK:             arith.divf
// CHECK:           %[[OT:.+]] = attn.tile.map ins(%[[RES]]#2, %[[INV]] : tensor<32x32xf32>, tensor<32xf32>) -> tensor<32x32xf16> {
// CHECK-NEXT:      ^bb0(%{{.+}}: index, %{{.+}}: index, %[[A:.+]]: f32, %[[IL:.+]]: f32):
// CHECK-NEXT:        %[[X:.+]] = arith.mulf %[[A]], %[[IL]] : f32
// CHECK-NEXT:        arith.truncf %[[X]] : f32 to f16
// CHECK:           attn.tile.store %[[OT]] into %[[O]] rows %[[ROWS]] : tensor<32x32xf16> into memref<2x8x77x32xf16> {
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        %[[I:.+]] = arith.addi %[[Q0]], %[[R]]
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[H]], %[[I]] : index, index, index
// CHECK:           %[[LT:.+]] = attn.tile.map ins(%[[RES]]#0, %[[RES]]#1 : tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32> {
// CHECK:             math.log2
// CHECK:             arith.mulf %{{.+}}, %[[LN2]] : f32
// CHECK:           attn.tile.store %[[LT]] into %[[LSE]] rows %[[ROWS]] : tensor<32xf32> into memref<2x8x77xf32> {
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        %[[I:.+]] = arith.addi %[[Q0]], %[[R]]
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[H]], %[[I]] : index, index, index
// CHECK:         } {attn.schedule = #attn.schedule<block_q = 32, block_kv = 64, stages = 3, warps = 4, key_slices = 1, shared_bytes = 47616>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
// CHECK:         %[[OTENSOR:.+]] = bufferization.to_tensor %[[O]] restrict writable
// CHECK:         %[[LTENSOR:.+]] = bufferization.to_tensor %[[LSE]] restrict writable
// CHECK:         return %[[OTENSOR]], %[[LTENSOR]]

// The register tiles are tensors: the only buffers allocated inside the
// forall are the memory tiles, all in the requested memory space.

// SPACE3-LABEL: func.func @forward(
// SPACE3:         scf.forall
// SPACE3:           memref.alloc() : memref<32x64xf16, 3>
// SPACE3:           memref.alloc() : memref<3x64x64xf16, 3>
// SPACE3:           memref.alloc() : memref<3x64x32xf16, 3>
// SPACE3-NOT:       memref.alloc
// SPACE3:         } {attn.schedule = #attn.schedule<block_q = 32, block_kv = 64, stages = 3

// NOSPACE-LABEL: func.func @forward(
// NOSPACE:         scf.forall
// NOSPACE:           memref.alloc() : memref<32x64xf16>
// NOSPACE:           memref.alloc() : memref<3x64x64xf16>
// NOSPACE:           memref.alloc() : memref<3x64x32xf16>
// NOSPACE-NOT:       memref.alloc
// NOSPACE:         } {attn.schedule = #attn.schedule<block_q = 32, block_kv = 64, stages = 3
func.func @forward(%q: tensor<2x8x77x64xf16>, %k: tensor<2x2x129x64xf16>, %v: tensor<2x2x129x32xf16>) -> (tensor<2x8x77x32xf16>, tensor<2x8x77xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<2x8x77x64xf16>, tensor<2x2x129x64xf16>, tensor<2x2x129x32xf16> -> tensor<2x8x77x32xf16>, tensor<2x8x77xf32>
  return %o, %lse : tensor<2x8x77x32xf16>, tensor<2x8x77xf32>
}

// -----

// Causal, bottom-right (Sk - Sq = 52), BSHD: query tile [q0, q0 + rows)
// sees keys [jBegin, jEnd), jEnd = min(129, q0 + rows - 1 + 53); the loop
// runs over its ceil((jEnd - jBegin) / 64) tiles, so the tiles above the
// diagonal are never visited, and the prologue loads tiles 0 and 1 only if
// they exist. The window is a launch parameter (`attn.tile.param`, -1 here:
// none; clamped to Sq + Sk = 206), so jBegin = 0 is a select on it that only
// the CPU lowering folds.
// Tile n (keys [jBegin + 64 n, +64)) needs the index masks unless its last
// key lies before jEnd, at or below the diagonal of the tile's first query
// and, with a window, inside the window of its last query.

// CHECK-LABEL: func.func @causal_bottom_right(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<2x77x4x64xbf16>, %[[K:[^:]+]]: tensor<2x129x4x64xbf16>, %[[V:[^:]+]]: tensor<2x129x4x64xbf16>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[C52:.+]] = arith.constant 52 : index
// CHECK-DAG:     %[[C53:.+]] = arith.constant 53 : index
// CHECK-DAG:     %[[C63:.+]] = arith.constant 63 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C129:.+]] = arith.constant 129 : index
// CHECK-DAG:     %[[FALSE:.+]] = arith.constant false
// CHECK-DAG:     %[[TRUE:.+]] = arith.constant true
// CHECK-DAG:     %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG:     %[[C206:.+]] = arith.constant 206 : index
// CHECK-DAG:     %[[KB:.+]] = bufferization.to_buffer %[[K]] read_only
// CHECK:         %[[PARAM:.+]] = attn.tile.param "window" = -1 : index
// CHECK-NEXT:    %[[HASWINDOW:.+]] = arith.cmpi sge, %[[PARAM]], %[[C0]]
// CHECK-NEXT:    %[[WINDOW:.+]] = arith.minsi %[[PARAM]], %[[C206]]
// CHECK-NEXT:    attn.tile.param "scale_log2" = 0.180336878 : f32
// CHECK:         %[[O:.+]] = memref.alloc() : memref<2x77x4x64xbf16>
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (2, 4, 3) {
// CHECK:           %[[T:.+]] = arith.subi %{{.+}}, %[[QT]] : index
// CHECK-NEXT:      %[[Q0:.+]] = arith.muli %[[T]], %[[C32]]
// CHECK:           %[[ROWS:.+]] = arith.minsi %{{.+}}, %[[C32]]
// CHECK:           %[[LASTROW:.+]] = arith.subi %[[ROWS]], %[[C1]]
// CHECK:           %[[ILAST:.+]] = arith.addi %[[Q0]], %[[LASTROW]]
// CHECK:           %[[DIAG:.+]] = arith.addi %[[ILAST]], %[[C53]]
// CHECK:           %[[MIN:.+]] = arith.minsi %[[DIAG]], %[[C129]]
// CHECK:           %[[END:.+]] = arith.maxsi %[[MIN]], %[[C0]]
// CHECK-NEXT:      %[[FIRSTDIAG:.+]] = arith.addi %[[Q0]], %[[C52]]
// CHECK-NEXT:      %[[WFIRST:.+]] = arith.subi %[[FIRSTDIAG]], %[[WINDOW]]
// CHECK-NEXT:      %[[WFIRST0:.+]] = arith.maxsi %[[WFIRST]], %[[C0]]
// CHECK-NEXT:      %[[BEGIN:.+]] = arith.select %[[HASWINDOW]], %[[WFIRST0]], %[[C0]]
// CHECK:           %[[QTILE:.+]] = memref.alloc() : memref<32x64xbf16, #gpu.address_space<workgroup>>
// CHECK:           %[[KRING:.+]] = memref.alloc() : memref<3x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK:           %[[VRING:.+]] = memref.alloc() : memref<3x64x64xbf16, #gpu.address_space<workgroup>>
// CHECK:           attn.tile.load %{{.+}} into %[[QTILE]] rows %[[ROWS]] :
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        %[[RC:.+]] = arith.minsi %[[R]], %[[LASTROW]]
// CHECK-NEXT:        %[[I:.+]] = arith.addi %[[Q0]], %[[RC]]
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[I]], %[[H]] : index, index, index
// CHECK:           %[[SPAN0:.+]] = arith.subi %[[END]], %[[BEGIN]]
// CHECK-NEXT:      %[[SPAN:.+]] = arith.maxsi %[[SPAN0]], %[[C0]]
// CHECK-NEXT:      %[[SPANUP:.+]] = arith.addi %[[SPAN]], %[[C63]]
// CHECK-NEXT:      %[[NTILES:.+]] = arith.divui %[[SPANUP]], %[[C64]]
// CHECK-NEXT:      %[[HAS0:.+]] = arith.cmpi sgt, %[[NTILES]], %[[C0]]
// CHECK-NEXT:      scf.if %[[HAS0]] {
// CHECK-NEXT:        %[[COLS0:.+]] = arith.minsi %[[SPAN0]], %[[C64]]
// CHECK:             attn.tile.load %[[KB]] into %{{.+}} rows %[[COLS0]] :
// CHECK-NEXT:        ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:          %[[J:.+]] = arith.addi %[[BEGIN]], %[[R]]
// CHECK-NEXT:          attn.tile.yield %[[B]], %[[J]], %[[H]] : index, index, index
// CHECK:           %[[HAS1:.+]] = arith.cmpi sgt, %[[NTILES]], %[[C1]]
// CHECK-NEXT:      scf.if %[[HAS1]] {
// CHECK:           scf.for %[[N:.+]] = %[[C0]] to %[[NTILES]] step %[[C1]] iter_args(
// CHECK:             %[[JOFF:.+]] = arith.muli %[[N]], %[[C64]]
// CHECK-NEXT:        %[[J0:.+]] = arith.addi %[[BEGIN]], %[[JOFF]]
// CHECK:             attn.tile.matmul %[[QTILE]], %{{.+}} {transpose_rhs}
// CHECK-NEXT:        %[[JLAST:.+]] = arith.addi %[[J0]], %[[C63]]
// CHECK-NEXT:        %[[BEFOREEND:.+]] = arith.cmpi slt, %[[JLAST]], %[[END]]
// CHECK-NEXT:        %[[BELOW:.+]] = arith.cmpi sle, %[[JLAST]], %[[FIRSTDIAG]]
// CHECK-NEXT:        %[[INSIDE:.+]] = arith.andi %[[BEFOREEND]], %[[BELOW]]
// CHECK-NEXT:        %[[LASTDIAG:.+]] = arith.addi %{{.+}}, %[[C52]]
// CHECK-NEXT:        %[[WEDGE:.+]] = arith.subi %[[LASTDIAG]], %[[WINDOW]]
// CHECK-NEXT:        %[[INWINDOW:.+]] = arith.cmpi sge, %[[J0]], %[[WEDGE]]
// CHECK-NEXT:        %[[WINDOWOK:.+]] = arith.select %[[HASWINDOW]], %[[INWINDOW]], %[[TRUE]]
// CHECK-NEXT:        %[[ALLIN:.+]] = arith.andi %[[INSIDE]], %[[WINDOWOK]]
// CHECK-NEXT:        %[[EDGE:.+]] = arith.cmpi eq, %[[ALLIN]], %[[FALSE]]
// CHECK-NEXT:        %{{.+}} = scf.if %[[EDGE]] -> (tensor<32x64xf32>) {
// CHECK-NEXT:          attn.tile.map
// CHECK:                 arith.cmpi slt, %{{.+}}, %[[END]]
// CHECK:                 arith.cmpi sle
// CHECK:                 arith.select %{{.+}}, %{{.+}}, %[[NEGINF]] : f32
// CHECK:             } else {
// CHECK-NEXT:          scf.yield %{{.+}} : tensor<32x64xf32>
// CHECK-NEXT:        }
// CHECK:             attn.tile.map ins(%{{.+}} : tensor<32x64xf32>) -> tensor<32x64xbf16> {
// CHECK:               arith.truncf %{{.+}} : f32 to bf16
// CHECK:           attn.tile.map {{.*}} -> tensor<32x64xbf16> {
// CHECK:           attn.tile.store %{{.+}} into %[[O]] rows %[[ROWS]] : tensor<32x64xbf16> into memref<2x77x4x64xbf16> {
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        %[[I:.+]] = arith.addi %[[Q0]], %[[R]]
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[I]], %[[H]] : index, index, index
// CHECK:         } {attn.schedule = #attn.schedule<block_q = 32, block_kv = 64, stages = 3, warps = 4, key_slices = 1, shared_bytes = 59904>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @causal_bottom_right(%q: tensor<2x77x4x64xbf16>, %k: tensor<2x129x4x64xbf16>, %v: tensor<2x129x4x64xbf16>) -> tensor<2x77x4x64xbf16> {
  %o = attn.attention %q, %k, %v {causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>} : tensor<2x77x4x64xbf16>, tensor<2x129x4x64xbf16>, tensor<2x129x4x64xbf16> -> tensor<2x77x4x64xbf16>
  return %o : tensor<2x77x4x64xbf16>
}

// -----

// Sliding window of 16 (top-left): the keys also start late, at
// jBegin = max(0, q0 - 16), the window read from its launch parameter
// (16 here) and clamped to Sq + Sk = 206 (a wider window hides nothing
// more, and the clamp keeps q0 - window from overflowing for windows near
// INT64_MAX); tile n starts at jBegin + 64 n. The boolean mask
// operand is read in every tile, and every tile that reads it evaluates
// the causal/window masks too (one copy of the per-element code).

// CHECK-LABEL: func.func @window_mask(
// CHECK-SAME:    %[[MASK:[^:]+]]: tensor<1x4x1x129xi1>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C63:.+]] = arith.constant 63 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C206:.+]] = arith.constant 206 : index
// CHECK:         %[[PARAM:.+]] = attn.tile.param "window" = 16 : index
// CHECK-NEXT:    %[[HASWINDOW:.+]] = arith.cmpi sge, %[[PARAM]], %[[C0]]
// CHECK-NEXT:    %[[WINDOW:.+]] = arith.minsi %[[PARAM]], %[[C206]]
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (2, 4, 3) {
// CHECK:           %[[T:.+]] = arith.subi %{{.+}}, %[[QT]] : index
// CHECK-NEXT:      %[[Q0:.+]] = arith.muli %[[T]]
// CHECK:           %[[END:.+]] = arith.maxsi %{{.+}}, %[[C0]]
// CHECK-NEXT:      %[[FIRST:.+]] = arith.subi %[[Q0]], %[[WINDOW]]
// CHECK-NEXT:      %[[FIRST0:.+]] = arith.maxsi %[[FIRST]], %[[C0]]
// CHECK-NEXT:      %[[BEGIN:.+]] = arith.select %[[HASWINDOW]], %[[FIRST0]], %[[C0]]
// CHECK:           %[[SPAN:.+]] = arith.subi %[[END]], %[[BEGIN]]
// CHECK-NEXT:      %[[SPAN0:.+]] = arith.maxsi %[[SPAN]], %[[C0]]
// CHECK-NEXT:      %[[SPANUP:.+]] = arith.addi %[[SPAN0]], %[[C63]]
// CHECK-NEXT:      %[[NTILES:.+]] = arith.divui %[[SPANUP]], %[[C64]]
// CHECK:           scf.if
// CHECK:             attn.tile.load
// CHECK-NEXT:        ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:          %[[J:.+]] = arith.addi %[[BEGIN]], %[[R]]
// CHECK-NEXT:          attn.tile.yield %[[B]], %[[H]], %[[J]] : index, index, index
// CHECK:           scf.for %[[N:.+]] = %[[C0]] to %[[NTILES]] step %[[C1]] iter_args(
// CHECK:             %[[JOFF:.+]] = arith.muli %[[N]], %[[C64]]
// CHECK-NEXT:        %[[J0:.+]] = arith.addi %[[BEGIN]], %[[JOFF]]
// CHECK-NOT:         scf.if
// CHECK:             attn.tile.map
// CHECK:               tensor.extract %[[MASK]][%[[C0]], %[[H]], %[[C0]], %{{.+}}]
// CHECK-NEXT:          arith.select
// CHECK:               arith.cmpi sge
// CHECK:               arith.select
// CHECK:               attn.tile.yield
func.func @window_mask(%q: tensor<2x4x77x64xf32>, %k: tensor<2x4x129x64xf32>, %v: tensor<2x4x129x64xf32>, %m: tensor<1x4x1x129xi1>) -> tensor<2x4x77x64xf32> {
  %o = attn.attention %q, %k, %v mask(%m : tensor<1x4x1x129xi1>) {causal = #attn.causal<top_left>, window = 16 : i64} : tensor<2x4x77x64xf32>, tensor<2x4x129x64xf32>, tensor<2x4x129x64xf32> -> tensor<2x4x77x64xf32>
  return %o : tensor<2x4x77x64xf32>
}

// -----

// Dynamic batch and sequence lengths: the forall and the key loop bounds
// come from the operands; f32 tiles: 32 (64 + 4) 4 + 3 64 (68 + 68) 4 =
// 113152 bytes.

// CHECK-LABEL: func.func @dynamic(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<?x4x?x64xf32>, %[[K:[^:]+]]: tensor<?x4x?x64xf32>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[C31:.+]] = arith.constant 31 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG:     %[[C63:.+]] = arith.constant 63 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[BATCH:.+]] = tensor.dim %[[Q]], %[[C0]]
// CHECK-DAG:     %[[SQ:.+]] = tensor.dim %[[Q]], %[[C2]]
// CHECK-DAG:     %[[SK:.+]] = tensor.dim %[[K]], %[[C2]]
// CHECK:         %[[O:.+]] = memref.alloc(%[[BATCH]], %[[SQ]]) : memref<?x4x?x64xf32>
// CHECK:         %[[SQUP:.+]] = arith.addi %[[SQ]], %[[C31]]
// CHECK-NEXT:    %[[QTILES:.+]] = arith.divui %[[SQUP]], %[[C32]]
// CHECK-NEXT:    scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (%[[BATCH]], 4, %[[QTILES]]) {
// CHECK:           %[[SPAN:.+]] = arith.maxsi %[[SK]], %[[C0]]
// CHECK-NEXT:      %[[SPANUP:.+]] = arith.addi %[[SPAN]], %[[C63]]
// CHECK-NEXT:      %[[NTILES:.+]] = arith.divui %[[SPANUP]], %[[C64]]
// CHECK:           scf.for %{{.+}} = %[[C0]] to %[[NTILES]] step %[[C1]] iter_args(
// CHECK:         } {attn.schedule = #attn.schedule<block_q = 32, block_kv = 64, stages = 3, warps = 4, key_slices = 1, shared_bytes = 113152>, mapping = [#gpu.block<z>, #gpu.block<y>, #gpu.block<x>]}
func.func @dynamic(%q: tensor<?x4x?x64xf32>, %k: tensor<?x4x?x64xf32>, %v: tensor<?x4x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32>, tensor<?x4x?x64xf32> -> tensor<?x4x?x64xf32>
  return %o : tensor<?x4x?x64xf32>
}

// -----

// Split-KV: a forall over (split, batch, key/value head x row tile), one
// row tile per head here (grid x, z, y on a GPU); the 4 query heads of a key/value
// head times Sq = 3 make 12 packed rows of one tile, row r being query
// r mod 3 of head 4 kvh + r / 3 (rows past 12 clamp to row 11). Split s
// sees keys [43 s, min(43 (s + 1), 129)), and the key loop runs over the
// tiles of that range only. The 4 warps of the schedule each take 16 keys
// of every 64-key tile (key slices): the ring stage is read as [4, 16, 64],
// the loop carries a softmax state per slice ([4, 32] rows, [4, 32, 64]
// accumulators), and after the loop the slices merge as split-KV's combine
// does (max over slices, weights exp2(m_s - M), weighted sums). The partial
// outputs stay f32; P still enters the second product as f16.

// CHECK-LABEL: func.func @split_kv(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C11:.+]] = arith.constant 11 : index
// CHECK-DAG:     %[[C12:.+]] = arith.constant 12 : index
// CHECK-DAG:     %[[C43:.+]] = arith.constant 43 : index
// CHECK-DAG:     %[[C63:.+]] = arith.constant 63 : index
// CHECK-DAG:     %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C129:.+]] = arith.constant 129 : index
// CHECK:         %[[PO:.+]] = memref.alloc() : memref<3x2x8x3x64xf32>
// CHECK:         %[[PL:.+]] = memref.alloc() : memref<3x2x8x3xf32>
// CHECK:         scf.forall (%[[N:.+]], %[[B:.+]], %[[KVH:.+]]) in (3, 2, 2) {
// CHECK:           %[[H0:.+]] = arith.muli %[[KVH]], %[[C4]]
// CHECK:           %[[SPLITBEGIN:.+]] = arith.muli %[[N]], %[[C43]]
// CHECK-NEXT:      %[[SPLITNEXT:.+]] = arith.addi %[[SPLITBEGIN]], %[[C43]]
// CHECK-NEXT:      %[[SPLITEND:.+]] = arith.minsi %[[SPLITNEXT]], %[[C129]]
// CHECK:           %[[WBEGIN:.+]] = arith.select %[[HASWINDOW:.+]], %{{.+}}, %[[C0]]
// CHECK-NEXT:      %[[END:.+]] = arith.minsi %[[SPLITEND]], %[[C129]]
// CHECK-NEXT:      %[[BEGIN:.+]] = arith.maxsi %[[WBEGIN]], %[[SPLITBEGIN]]
// CHECK:           %[[QTILE:.+]] = memref.alloc() : memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<3x64x64xf16, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<3x64x64xf16, #gpu.address_space<workgroup>>
// CHECK:           attn.tile.load %{{.+}} into %[[QTILE]] rows %[[C12]] :
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        %[[RC:.+]] = arith.minsi %[[R]], %[[C11]]
// CHECK-NEXT:        %[[G:.+]] = arith.divui %[[RC]], %[[C3]]
// CHECK-NEXT:        %[[H:.+]] = arith.addi %[[H0]], %[[G]]
// CHECK-NEXT:        %[[I:.+]] = arith.remui %[[RC]], %[[C3]]
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[H]], %[[I]] : index, index, index
// CHECK:           %[[SPAN:.+]] = arith.subi %[[END]], %[[BEGIN]]
// CHECK-NEXT:      %[[SPAN0:.+]] = arith.maxsi %[[SPAN]], %[[C0]]
// CHECK-NEXT:      %[[SPANUP:.+]] = arith.addi %[[SPAN0]], %[[C63]]
// CHECK-NEXT:      %[[NTILES:.+]] = arith.divui %[[SPANUP]], %[[C64]]
// CHECK:           scf.if
// CHECK:             attn.tile.load
// CHECK-NEXT:        ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:          %[[J:.+]] = arith.addi %[[BEGIN]], %[[R]]
// CHECK-NEXT:          attn.tile.yield %[[B]], %[[KVH]], %[[J]] : index, index, index
// CHECK:           %[[STATE:.+]]:3 = scf.for %{{.+}} = %[[C0]] to %[[NTILES]] step %[[C1]] iter_args({{.*}}) -> (tensor<4x32xf32>, tensor<4x32xf32>, tensor<4x32x64xf32>) {
// CHECK:             %[[KSL:.+]] = memref.expand_shape %{{.+}} {{\[}}[0, 1], [2]] output_shape [4, 16, 64]
// CHECK:             attn.tile.matmul %[[QTILE]], %[[KSL]], %{{.+}} {transpose_rhs} : {{.*}}, tensor<4x32x16xf32>
// CHECK:             attn.tile.map ins(%{{.+}} : tensor<4x32x16xf32>) -> tensor<4x32x16xf32> {
// CHECK-NEXT:        ^bb0(%[[W:.+]]: index, %[[ROW:.+]]: index, %[[COL:.+]]: index, %{{.+}}: f32):
// CHECK:               arith.muli %[[W]], %[[C16]]
// CHECK:             attn.tile.reduce <max> %{{.+}}, %{{.+}} : tensor<4x32x16xf32> -> tensor<4x32xf32>
// CHECK:             math.exp2
// CHECK:             attn.tile.map ins(%{{.+}} : tensor<4x32x16xf32>) -> tensor<4x32x16xf16> {
// CHECK:               arith.truncf %{{.+}} : f32 to f16
// CHECK:             %[[VSL:.+]] = memref.expand_shape %{{.+}} {{\[}}[0, 1], [2]] output_shape [4, 16, 64]
// CHECK:             attn.tile.matmul %{{.+}}, %[[VSL]], %{{.+}} : tensor<4x32x16xf16>, {{.*}}, tensor<4x32x64xf32>
// CHECK:           %[[M:.+]] = attn.tile.reduce <max> %[[STATE]]#0, %{{.+}} {dim = 0 : i64} : tensor<4x32xf32> -> tensor<32xf32>
// CHECK:           %[[WTS:.+]] = attn.tile.map ins(%[[STATE]]#0, %[[M]] : tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32> {
// CHECK:             math.exp2
// CHECK:           } {indexing_maps = [#{{.+}}, #{{.+}}]}
// CHECK:           %[[LW:.+]] = attn.tile.map ins(%[[STATE]]#1, %[[WTS]] :
// CHECK:           %[[L:.+]] = attn.tile.reduce <add> %[[LW]], %{{.+}} {dim = 0 : i64} : tensor<4x32xf32> -> tensor<32xf32>
// CHECK:           %[[AW:.+]] = attn.tile.map ins(%[[STATE]]#2, %[[WTS]] : tensor<4x32x64xf32>, tensor<4x32xf32>)
// CHECK:           %[[ACC:.+]] = attn.tile.reduce <add> %[[AW]], %{{.+}} {dim = 0 : i64} : tensor<4x32x64xf32> -> tensor<32x64xf32>
// CHECK:           %[[INV:.+]] = attn.tile.map ins(%[[L]] : tensor<32xf32>) -> tensor<32xf32> {
// CHECK:             arith.divf
// CHECK:           attn.tile.map ins(%[[ACC]], %[[INV]] : tensor<32x64xf32>, tensor<32xf32>) -> tensor<32x64xf32> {
// CHECK-NOT:         arith.truncf
// CHECK:           attn.tile.store %{{.+}} into %[[PO]] rows %[[C12]] : tensor<32x64xf32> into memref<3x2x8x3x64xf32> {
// CHECK-NEXT:      ^bb0(%[[R:.+]]: index):
// CHECK-NEXT:        %[[RC:.+]] = arith.minsi %[[R]], %[[C11]]
// CHECK-NEXT:        %[[G:.+]] = arith.divui %[[RC]], %[[C3]]
// CHECK-NEXT:        %[[H:.+]] = arith.addi %[[H0]], %[[G]]
// CHECK-NEXT:        %[[I:.+]] = arith.remui %[[RC]], %[[C3]]
// CHECK-NEXT:        attn.tile.yield %[[N]], %[[B]], %[[H]], %[[I]] : index, index, index, index
// CHECK:           attn.tile.store %{{.+}} into %[[PL]] rows %[[C12]] : tensor<32xf32> into memref<3x2x8x3xf32> {
// CHECK:             attn.tile.yield %[[N]], %[[B]], %{{.+}}, %{{.+}} : index, index, index, index
// CHECK:         } {attn.schedule = #attn.schedule<block_q = 32, block_kv = 64, stages = 3, warps = 4, key_slices = 4, shared_bytes = 53248>, mapping = [#gpu.block<x>, #gpu.block<z>, #gpu.block<y>]}
func.func @split_kv(%q: tensor<2x8x3x64xf16>, %k: tensor<2x2x129x64xf16>, %v: tensor<2x2x129x64xf16>) -> (tensor<3x2x8x3x64xf32>, tensor<3x2x8x3xf32>) {
  %po, %pl = attn.attention_partial %q, %k, %v {num_splits = 3 : i64, causal = #attn.causal<bottom_right>} : tensor<2x8x3x64xf16>, tensor<2x2x129x64xf16>, tensor<2x2x129x64xf16> -> tensor<3x2x8x3x64xf32>, tensor<3x2x8x3xf32>
  return %po, %pl : tensor<3x2x8x3x64xf32>, tensor<3x2x8x3xf32>
}

// -----

// Combine: the 2 x 8 x 3 = 48 rows of the partial results in tiles of
// block-q = 32 rows by 8 of the 64 columns (grid x and y on a GPU), row r
// of tile t being flat row 32 t + r = ((b 8) + h) 3 + i. One online pass
// over the splits: a map that loads reads the split's LSE into a row tile,
// the running max M grows, l and acc are rescaled by exp2((M_old - M)
// log2 e) and gain the weight exp2((LSE_s - M) log2 e) and the weighted
// columns of the split; O = acc (1 / l) is stored into the tile's columns
// in the output's layout (BSHD here: b, i, h), and the first column tile
// stores LSE = M + ln 2 log2 l.

// CHECK-LABEL: func.func @combine(
// CHECK-SAME:    %[[PO:[^:]+]]: tensor<3x2x8x3x64xf32>, %[[PL:[^:]+]]: tensor<3x2x8x3xf32>
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C8:.+]] = arith.constant 8 : index
// CHECK:         %[[O:.+]] = memref.alloc() : memref<2x3x8x64xf16>
// CHECK:         %[[LSE:.+]] = memref.alloc() : memref<2x8x3xf32>
// CHECK:         scf.forall (%{{.+}}, %[[CT:.+]]) in (2, 8) {
// CHECK:           %[[C0COL:.+]] = arith.muli %[[CT]], %[[C8]] : index
// CHECK:           %[[RES:.+]]:3 = scf.for %[[S:.+]] = %[[C0]] to %[[C3]] step %[[C1]] iter_args(%[[M:.+]] = %{{.+}}, %{{.+}} = %{{.+}}, %[[ACC:.+]] = %{{.+}}) -> (tensor<32xf32>, tensor<32xf32>, tensor<32x8xf32>) {
// CHECK-NEXT:        %[[LS:.+]] = attn.tile.map -> tensor<32xf32> {
// CHECK:               %[[I:.+]] = arith.remui %[[FLAT:.+]], %[[C3]]
// CHECK-NEXT:          %[[BH:.+]] = arith.divui %[[FLAT]], %[[C3]]
// CHECK-NEXT:          %[[B:.+]] = arith.divui %[[BH]], %[[C8]]
// CHECK-NEXT:          %[[H:.+]] = arith.remui %[[BH]], %[[C8]]
// CHECK-NEXT:          tensor.extract %[[PL]][%[[S]], %[[B]], %[[H]], %[[I]]]
// CHECK:             %[[MNEW:.+]] = attn.tile.map ins(%[[M]], %[[LS]] : tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32> {
// CHECK:               arith.maximumf
// CHECK:             %[[ALPHA:.+]] = attn.tile.map ins(%[[M]], %[[MNEW]] :
// CHECK:               math.exp2
// CHECK:             %[[W:.+]] = attn.tile.map ins(%[[LS]], %[[MNEW]] :
// CHECK:               math.exp2
// CHECK:             %[[PART:.+]] = attn.tile.map -> tensor<32x8xf32> {
// CHECK-NEXT:        ^bb0(%{{.+}}: index, %[[COL:.+]]: index):
// CHECK:               %[[J:.+]] = arith.addi %[[C0COL]], %[[COL]]
// CHECK-NEXT:          tensor.extract %[[PO]][%[[S]], %{{.+}}, %{{.+}}, %{{.+}}, %[[J]]]
// CHECK:             attn.tile.map ins(%[[ACC]], %[[PART]], %[[ALPHA]], %[[W]] :
// CHECK:               math.fma
// CHECK:           %[[INV:.+]] = attn.tile.map ins(%[[RES]]#1 : tensor<32xf32>) -> tensor<32xf32> {
// CHECK:             arith.divf
// CHECK:           %[[OT:.+]] = attn.tile.map ins(%[[RES]]#2, %[[INV]] : tensor<32x8xf32>, tensor<32xf32>) -> tensor<32x8xf16>
// CHECK:           %[[OCOLS:.+]] = memref.subview %[[O]][0, 0, 0, %[[C0COL]]] [2, 3, 8, 8] [1, 1, 1, 1]
// CHECK:           attn.tile.store %[[OT]] into %[[OCOLS]] rows %{{.+}} : tensor<32x8xf16> into memref<2x3x8x8xf16, strided<[1536, 512, 64, 1], offset: ?>> {
// CHECK:             %[[I:.+]] = arith.remui %[[FLAT:.+]], %[[C3]]
// CHECK-NEXT:        %[[BH:.+]] = arith.divui %[[FLAT]], %[[C3]]
// CHECK-NEXT:        %[[B:.+]] = arith.divui %[[BH]], %[[C8]]
// CHECK-NEXT:        %[[H:.+]] = arith.remui %[[BH]], %[[C8]]
// CHECK-NEXT:        attn.tile.yield %[[B]], %[[I]], %[[H]] : index, index, index
// CHECK:           %[[FIRST:.+]] = arith.cmpi eq, %[[CT]], %[[C0]]
// CHECK:           scf.if %[[FIRST]] {
// CHECK:             math.log2
// CHECK:             attn.tile.store %{{.+}} into %[[LSE]]
// CHECK:         } {attn.schedule = #attn.schedule<block_q = 32, block_kv = 8, stages = 0, warps = 1, key_slices = 1, shared_bytes = 0>, mapping = [#gpu.block<x>, #gpu.block<y>]}
func.func @combine(%po: tensor<3x2x8x3x64xf32>, %pl: tensor<3x2x8x3xf32>) -> (tensor<2x3x8x64xf16>, tensor<2x8x3xf32>) {
  %o, %lse = attn.combine %po, %pl {layout = #attn.layout<bshd>} : tensor<3x2x8x3x64xf32>, tensor<3x2x8x3xf32> -> tensor<2x3x8x64xf16>, tensor<2x8x3xf32>
  return %o, %lse : tensor<2x3x8x64xf16>, tensor<2x8x3xf32>
}

// -----

// Gradients: a record of statistics per query row over query tiles: D =
// rowsum(dO * O) (a map that loads, a row sum) and LSE log2(e) (+inf where
// LSE = -inf), stored field by field with two zeros; then per key/value
// tile (forall over batch, key/value head, key tile) K and V tiles and a
// Q/dO/record ring streaming the query tiles that see the tile (from
// max(0, j0 - 52) under bottom-right causal) of both query heads of the
// group: transposed scores S^T = K Q^T, P^T with LSE log2(e) read per
// column from the records' stage, dP^T = V dO^T, dS^T with D read
// likewise, dV += P^T dO and dK += dS^T Q on register tiles; then per
// query tile a loop over the key/value tiles it sees for dQ.

// CHECK-LABEL: func.func @grad(
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:     %[[C3:.+]] = arith.constant 3 : index
// CHECK-DAG:     %[[C52:.+]] = arith.constant 52 : index
// CHECK-DAG:     %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG:     %[[C77:.+]] = arith.constant 77 : index
// CHECK:         %[[DQ:.+]] = memref.alloc() : memref<2x4x77x32xf32>
// CHECK:         %[[DK:.+]] = memref.alloc() : memref<2x2x129x32xf32>
// CHECK:         %[[DV:.+]] = memref.alloc() : memref<2x2x129x16xf32>
// CHECK:         %[[D:.+]] = memref.alloc() : memref<2x4x77x4xf32>
// CHECK:         scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) in (2, 4, 3) {
// CHECK:           %[[PROD:.+]] = attn.tile.map -> tensor<32x16xf32> {
// CHECK:           %[[ROWDOT:.+]] = attn.tile.reduce <add> %[[PROD]]
// CHECK:           %[[LSEREC:.+]] = attn.tile.map -> tensor<32xf32> {
// CHECK:             arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK:           attn.tile.store %[[LSEREC]] into %[[D]]
// CHECK:             attn.tile.yield %{{.+}}, %{{.+}}, %{{.+}}, %[[C0]]
// CHECK:           attn.tile.store %[[ROWDOT]] into %[[D]]
// CHECK:             attn.tile.yield %{{.+}}, %{{.+}}, %{{.+}}, %[[C1]]
// CHECK:           attn.tile.store %{{.+}} into %[[D]]
// CHECK:           attn.tile.store %{{.+}} into %[[D]]
// CHECK:             attn.tile.yield %{{.+}}, %{{.+}}, %{{.+}}, %[[C3]]
// CHECK:         scf.forall (%[[B:.+]], %[[KVH:.+]], %[[KT:.+]]) in (2, 2, 3) {
// CHECK:           %[[J0:.+]] = arith.muli %[[KT]], %[[C64]]
// CHECK:           %[[KTILE:.+]] = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[VTILE:.+]] = memref.alloc() : memref<64x16xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<2x32x32xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<2x32x16xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[RECRING:.+]] = memref.alloc() : memref<2x32x4xf32, #gpu.address_space<workgroup>>
// CHECK:           attn.tile.load %{{.+}} into %[[KTILE]]
// CHECK:           attn.tile.load %{{.+}} into %[[VTILE]]
// CHECK:           %[[FIRSTQ:.+]] = arith.subi %[[J0]], %[[C52]]
// CHECK:           %[[CLAMP:.+]] = arith.maxsi %[[FIRSTQ]], %[[C0]]
// CHECK:           arith.minsi %[[CLAMP]], %[[C77]]
// CHECK:           %{{.+}}:2 = scf.for %{{.+}} = %[[C0]] to %{{.+}} step %[[C1]] iter_args(%[[DKACC:.+]] = %{{.+}}, %[[DVACC:.+]] = %{{.+}}) -> (tensor<64x32xf32>, tensor<64x16xf32>) {
// CHECK:             attn.tile.load
// CHECK:             attn.tile.load
// CHECK:             attn.tile.load %[[D]] into
// CHECK:             %[[ST:.+]] = attn.tile.matmul %[[KTILE]], %[[QSTAGE:[^,]+]], %{{.+}} {transpose_rhs} : {{.+}}, tensor<64x32xf32>
// CHECK:             scf.if
// CHECK:               attn.tile.map ins(%[[ST]] :
// CHECK:             %[[PT:.+]] = attn.tile.map ins(%{{.+}} : tensor<64x32xf32>)
// CHECK:               memref.load %[[RECSTAGE:.+]][%{{.+}}, %[[C0]]] : memref<32x4xf32, strided<[4, 1], offset: ?>, #gpu.address_space<workgroup>>
// CHECK:               math.exp2
// CHECK:             %[[DPT:.+]] = attn.tile.matmul %[[VTILE]], %[[DOSTAGE:[^,]+]], %{{.+}} {transpose_rhs}
// CHECK:             %[[DST:.+]] = attn.tile.map ins(%[[PT]], %[[DPT]] :
// CHECK:               memref.load %[[RECSTAGE]][%{{.+}}, %[[C1]]]
// CHECK:             %[[PTE:.+]] = attn.tile.map ins(%[[PT]] :
// CHECK:             %[[NEWDV:.+]] = attn.tile.matmul %[[PTE]], %[[DOSTAGE]], %[[DVACC]] :
// CHECK:             %[[NEWDK:.+]] = attn.tile.matmul %[[DST]], %[[QSTAGE]], %[[DKACC]] :
// CHECK:             scf.yield %[[NEWDK]], %[[NEWDV]]
// CHECK:           attn.tile.store %{{.+}} into %[[DK]]
// CHECK:           attn.tile.store %{{.+}} into %[[DV]]
// dQ is in the tile form: Q and dO tiles, the K/V ring of the forward
// (two stages), LSE log2(e) and D per row read from the records into row
// tiles (loads in a tile.map), and per key/value tile S = Q K^T, P, dP = dO V^T, dS and
// dQ += dS K on register tiles.
// CHECK:         scf.forall (%[[B:.+]], %[[H:.+]], %[[QT:.+]]) in (2, 4, 3) {
// CHECK:           %[[QTILE:.+]] = memref.alloc() : memref<32x32xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[DOTILE:.+]] = memref.alloc() : memref<32x16xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[KRING:.+]] = memref.alloc() : memref<2x64x32xf32, #gpu.address_space<workgroup>>
// CHECK:           memref.alloc() : memref<2x64x16xf32, #gpu.address_space<workgroup>>
// CHECK:           attn.tile.load %{{.+}} into %[[QTILE]]
// CHECK:           attn.tile.load %{{.+}} into %[[DOTILE]]
// CHECK:           %[[LSE2:.+]] = attn.tile.map -> tensor<32xf32> {
// CHECK:             memref.load %[[D]][%[[B]], %[[H]], %{{.+}}, %[[C0]]]
// CHECK:           %[[DROW:.+]] = attn.tile.map -> tensor<32xf32> {
// CHECK:             memref.load %[[D]][%[[B]], %[[H]], %{{.+}}, %[[C1]]]
// CHECK:           %[[DQACC:.+]] = scf.for %{{.+}} = %[[C0]] to %{{.+}} step %[[C1]] iter_args(%[[ACC:.+]] = %{{.+}}) -> (tensor<32x32xf32>) {
// CHECK:             attn.tile.load
// CHECK:             attn.tile.load
// CHECK:             %[[KSTAGE:.+]] = memref.subview %[[KRING]]
// CHECK:             %[[S:.+]] = attn.tile.matmul %[[QTILE]], %{{.+}}, %{{.+}} {transpose_rhs}
// CHECK:             %[[P:.+]] = attn.tile.map ins(%{{.+}}, %[[LSE2]] :
// CHECK:               math.exp2
// CHECK:             %[[DP:.+]] = attn.tile.matmul %[[DOTILE]], %{{.+}}, %{{.+}} {transpose_rhs}
// CHECK:             %[[DS:.+]] = attn.tile.map ins(%[[P]], %[[DP]], %[[DROW]] :
// CHECK:             %[[NEXT:.+]] = attn.tile.matmul %[[DS]], %{{.+}}, %[[ACC]] :
// CHECK:             scf.yield %[[NEXT]]
// CHECK:           %[[DQT:.+]] = attn.tile.map ins(%[[DQACC]] :
// CHECK:           attn.tile.store %[[DQT]] into %[[DQ]]
// CHECK-NOT:     memref.atomic_rmw

// ATOMIC-LABEL: func.func @grad(
// ATOMIC:         %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
// ATOMIC:         memref.alloc() : memref<2x4x77x4xf32>
// ATOMIC:         %[[DQACC:.+]] = memref.alloc() : memref<2x4x77x32xf32>
// ATOMIC-NOT:     linalg.fill
// ATOMIC:         scf.forall
// The row statistics nest zeroes the accumulator's rows.
// ATOMIC:           attn.tile.store %[[ZERO]] into %[[DQACC]] rows
// ATOMIC:         scf.forall
// ATOMIC:           %[[KTILE:.+]] = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
// ATOMIC:           %[[DSTILE:.+]] = memref.alloc() : memref<64x32xf32, #gpu.address_space<workgroup>>
// ATOMIC:           scf.for
// ATOMIC:             attn.tile.store %{{.+}} into %[[DSTILE]] rows %{{.+}} : tensor<64x32xf32> into memref<64x32xf32, #gpu.address_space<workgroup>>
// ATOMIC:             attn.tile.matmul %[[DSTILE]], %[[KTILE]], %{{.+}} {transpose_lhs} : {{.+}}, tensor<32x32xf32>
// ATOMIC:             attn.tile.store %{{.+}} into %[[DQACC]] rows
// ATOMIC:             } {accumulate}
// ATOMIC:         scf.forall
// ATOMIC:           memref.load %[[DQACC]]
// ATOMIC:           attn.tile.store
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

// -----

// Destination-passing: results materialized in buffers (every result's one
// use a bufferization.materialize_in_destination) are stored straight into
// them, with no result allocation; the materializations go away. This is
// how a GPU kernel's output parameters reach attn-tile.

// ATOMIC-LABEL: func.func @into_buffers(
// CHECK-LABEL: func.func @into_buffers(
// CHECK-SAME:    %[[O:[^:]+]]: memref<?x4x?x64xf16>, %[[LSE:[^:]+]]: memref<?x4x?xf32>
// CHECK-NOT:     memref.alloc() : memref<{{.*}}x64xf16>
// CHECK-NOT:     bufferization.materialize_in_destination
// CHECK:         scf.forall
// CHECK:           attn.tile.store %{{.+}} into %[[O]] rows
// CHECK:           attn.tile.store %{{.+}} into %[[LSE]] rows
// CHECK-NOT:     bufferization.materialize_in_destination
// CHECK:         return
func.func @into_buffers(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>, %o: memref<?x4x?x64xf16>, %lse: memref<?x4x?xf32>) {
  %out, %l = attn.attention %q, %k, %v : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<?x4x?x64xf16>, tensor<?x4x?xf32>
  bufferization.materialize_in_destination %out in restrict writable %o : (tensor<?x4x?x64xf16>, memref<?x4x?x64xf16>) -> ()
  bufferization.materialize_in_destination %l in restrict writable %lse : (tensor<?x4x?xf32>, memref<?x4x?xf32>) -> ()
  return
}

// -----

// A result more or less static than the operands (the verifier allows
// either): each result buffer has the declared type, its dynamic sizes the
// operands' (constants here, folded into a static buffer and a cast), and
// the result is that buffer's tensor, with no cast after it.

// CHECK-LABEL: func.func @result_types(
// CHECK:         %[[O:.+]] = memref.alloc() : memref<1x4x77x64xf16>
// CHECK-NEXT:    %[[OC:.+]] = memref.cast %[[O]] : memref<1x4x77x64xf16> to memref<?x4x?x64xf16>
// CHECK:         %[[L:.+]] = memref.alloc() : memref<1x4x77xf32>
// CHECK-NEXT:    %[[LC:.+]] = memref.cast %[[L]] : memref<1x4x77xf32> to memref<1x4x?xf32>
// CHECK:         %[[OT:.+]] = bufferization.to_tensor %[[OC]] restrict writable : memref<?x4x?x64xf16> to tensor<?x4x?x64xf16>
// CHECK:         %[[LT:.+]] = bufferization.to_tensor %[[LC]] restrict writable : memref<1x4x?xf32> to tensor<1x4x?xf32>
// CHECK:         return %[[OT]], %[[LT]] : tensor<?x4x?x64xf16>, tensor<1x4x?xf32>
func.func @result_types(%q: tensor<1x4x77x64xf16>, %k: tensor<1x4x129x64xf16>, %v: tensor<1x4x129x64xf16>) -> (tensor<?x4x?x64xf16>, tensor<1x4x?xf32>) {
  %o, %lse = attn.attention %q, %k, %v : tensor<1x4x77x64xf16>, tensor<1x4x129x64xf16>, tensor<1x4x129x64xf16> -> tensor<?x4x?x64xf16>, tensor<1x4x?xf32>
  return %o, %lse : tensor<?x4x?x64xf16>, tensor<1x4x?xf32>
}

// -----

// CHECK-LABEL: func.func @result_types_static(
// CHECK:         %[[O:.+]] = memref.alloc() : memref<1x4x77x64xf16>
// CHECK:         %[[OT:.+]] = bufferization.to_tensor %[[O]] restrict writable : memref<1x4x77x64xf16> to tensor<1x4x77x64xf16>
// CHECK:         return %[[OT]] : tensor<1x4x77x64xf16>
func.func @result_types_static(%q: tensor<?x4x?x64xf16>, %k: tensor<?x4x?x64xf16>, %v: tensor<?x4x?x64xf16>) -> tensor<1x4x77x64xf16> {
  %o = attn.attention %q, %k, %v : tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16>, tensor<?x4x?x64xf16> -> tensor<1x4x77x64xf16>
  return %o : tensor<1x4x77x64xf16>
}

// -----

// A paged cache: each sequence reads its key count (clamped to the
// capacity) once, and the K/V tile loads address their rows through the
// block table: page table[b, j / page_size], row j mod page_size.
// CHECK-LABEL: func.func @paged(
// CHECK: scf.forall
// CHECK: %[[LEN:.+]] = {{memref.load|tensor.extract}} %{{.+}}[%{{.+}}] : {{memref|tensor}}<2xi32
// CHECK: arith.index_cast %[[LEN]] : i32 to index
// CHECK: scf.for
// CHECK: attn.tile.load
// CHECK: ^bb0(%[[R:.+]]: index):
// CHECK: %[[PAGE:.+]] = {{memref.load|tensor.extract}} %{{.+}}[%{{.+}}, %{{.+}}] : {{memref|tensor}}<2x4xi32
// CHECK: %[[P:.+]] = arith.index_cast %[[PAGE]] : i32 to index
// CHECK: attn.tile.yield %[[P]], %{{.+}}, %{{.+}} : index, index, index
func.func @paged(%q: tensor<2x1x8x64xbf16>, %kc: tensor<10x16x2x64xbf16>, %vc: tensor<10x16x2x64xbf16>, %bt: tensor<2x4xi32>, %lens: tensor<2xi32>) -> (tensor<3x2x8x1x64xf32>, tensor<3x2x8x1xf32>) {
  %po, %pl = attn.attention_partial %q, %kc, %vc kv_lens(%lens : tensor<2xi32>) block_table(%bt : tensor<2x4xi32>) {num_splits = 3 : i64, causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>}
      : tensor<2x1x8x64xbf16>, tensor<10x16x2x64xbf16>, tensor<10x16x2x64xbf16> -> tensor<3x2x8x1x64xf32>, tensor<3x2x8x1xf32>
  return %po, %pl : tensor<3x2x8x1x64xf32>, tensor<3x2x8x1xf32>
}

// -----

// A packed batch: each query tile reads its sequence's offsets (clamped
// into the packed rows), counts its rows in the sequence, and addresses
// its Q rows and its keys from the sequences' first rows.
// CHECK-LABEL: func.func @packed(
// CHECK: scf.forall
// CHECK: %[[Q0:.+]] = {{memref.load|tensor.extract}} %{{.+}}[%{{.+}}] : {{memref|tensor}}<3xi32
// CHECK: arith.index_cast %[[Q0]] : i32 to index
// CHECK: attn.tile.load
// CHECK: attn.tile.yield %{{.+}}, %{{.+}}, %{{.+}} : index, index, index
// CHECK: attn.tile.store
func.func @packed(%q: tensor<1x40x8x64xf32>, %k: tensor<1x50x2x64xf32>, %qo: tensor<3xi32>, %ko: tensor<3xi32>) -> tensor<1x40x8x64xf32> {
  %o = attn.attention %q, %k, %k query_offsets(%qo : tensor<3xi32>) key_offsets(%ko : tensor<3xi32>) {causal = #attn.causal<bottom_right>, layout = #attn.layout<bshd>}
      : tensor<1x40x8x64xf32>, tensor<1x50x2x64xf32>, tensor<1x50x2x64xf32> -> tensor<1x40x8x64xf32>
  return %o : tensor<1x40x8x64xf32>
}

// -----

// Balanced split-KV: each work item (a loop iteration, a CTA on a GPU)
// finds its sequence and key range with attn.tile.work_item, whose region
// is a sequence's clamped length; the first one writes the offsets.
// CHECK-LABEL: func.func @balanced_partial
// CHECK:       scf.forall (%[[ITEM:.+]], %{{.+}}, %{{.+}}) in (32, 1, 8)
// CHECK:         %[[SEQ:.+]], %[[BEGIN:.+]], %[[END:.+]] = attn.tile.work_item %[[ITEM]] of %{{.+}} over %{{.+}} capacity %[[CAP:.+]] {
// CHECK-NEXT:    ^bb0(%[[S:.+]]: index):
// CHECK-NEXT:      %[[N:.+]] = tensor.extract %{{.+}}[%[[S]]] : tensor<8xi32>
// CHECK-NEXT:      %[[L:.+]] = arith.index_cast %[[N]] : i32 to index
// CHECK-NEXT:      %[[LO:.+]] = arith.maxsi %[[L]], %{{.+}} : index
// CHECK-NEXT:      %[[HI:.+]] = arith.minsi %[[LO]], %[[CAP]] : index
// CHECK-NEXT:      attn.tile.yield %[[HI]] : index
// CHECK:         scf.if
// CHECK:           memref.store
func.func @balanced_partial(%q: tensor<8x1x32x128xbf16>, %k: tensor<100x16x8x128xbf16>, %v: tensor<100x16x8x128xbf16>, %lens: tensor<8xi32>, %table: tensor<8x?xi32>) -> (tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>, tensor<9xi32>) {
  %po, %pl, %offsets = attn.attention_partial %q, %k, %v kv_lens(%lens : tensor<8xi32>) block_table(%table : tensor<8x?xi32>) {num_splits = 4 : i64, balanced, layout = #attn.layout<bshd>}
      : tensor<8x1x32x128xbf16>, tensor<100x16x8x128xbf16>, tensor<100x16x8x128xbf16>
      -> tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>, tensor<9xi32>
  return %po, %pl, %offsets : tensor<32x1x32x1x128xf32>, tensor<32x1x32x1xf32>, tensor<9xi32>
}
