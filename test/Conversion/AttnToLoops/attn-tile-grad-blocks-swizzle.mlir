// RUN: attn-opt %s -split-input-file --attn-tile="value-blocks=2 target=sm_90a memory-space=default" -verify-diagnostics | FileCheck %s

// Gradient column blocks for sm_90a's swizzled tiles (gradBlockAlign): D = 224
// is 448-byte rows in a 64-byte swizzle, column blocks of 32, so the two blocks
// of dK and dV are 128 columns wide and start at min(4 c, 3) x 32: columns 0 and
// 96 (224 - 128), views a wgmma descriptor can start at.

// CHECK-LABEL: func.func @grad_d224
// CHECK: %[[STEPS:.*]] = arith.muli %{{.*}}, %c4{{.*}} : index
// CHECK-NEXT: %[[CLAMPED:.*]] = arith.minsi %[[STEPS]], %c3{{.*}} : index
// CHECK-NEXT: %[[FIRST:.*]] = arith.muli %[[CLAMPED]], %c32{{.*}} : index
// CHECK: memref.subview %{{.*}}[0, %[[FIRST]]] [64, 128]
// CHECK: memref.subview %{{.*}}[0, 0, 0, %[[FIRST]]] [1, 2, 40, 128]
func.func @grad_d224(%q: tensor<1x2x33x224xbf16>, %k: tensor<1x2x40x224xbf16>, %v: tensor<1x2x40x224xbf16>, %o: tensor<1x2x33x224xbf16>, %do: tensor<1x2x33x224xbf16>, %lse: tensor<1x2x33xf32>) -> (tensor<1x2x33x224xbf16>, tensor<1x2x40x224xbf16>, tensor<1x2x40x224xbf16>) {
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<1x2x33x224xbf16>, tensor<1x2x40x224xbf16>, tensor<1x2x40x224xbf16>, tensor<1x2x33x224xbf16>, tensor<1x2x33x224xbf16>, tensor<1x2x33xf32> -> tensor<1x2x33x224xbf16>, tensor<1x2x40x224xbf16>, tensor<1x2x40x224xbf16>
  return %dq, %dk, %dv : tensor<1x2x33x224xbf16>, tensor<1x2x40x224xbf16>, tensor<1x2x40x224xbf16>
}

// -----

// D = 40 on sm_90a takes tiles of 64 columns (128-byte rows, one column block
// of 64): every block would have to start at column 0 and be 64 wide, so a
// block but the last would run past D. (On sm_80's padded tiles two blocks of
// 32 start at 0 and 8.)
func.func @grad_d40(%q: tensor<1x2x33x40xbf16>, %k: tensor<1x2x40x40xbf16>, %v: tensor<1x2x40x40xbf16>, %o: tensor<1x2x33x40xbf16>, %do: tensor<1x2x33x40xbf16>, %lse: tensor<1x2x33xf32>) -> (tensor<1x2x33x40xbf16>, tensor<1x2x40x40xbf16>, tensor<1x2x40x40xbf16>) {
  // expected-error @+1 {{value-blocks = 2 cannot cut D = 40 and Dv = 40 (tiles of 64 and 64 columns) into blocks of whole 16-column steps, starting on multiples of 64 (D) and 64 (Dv) columns (column blocks of the swizzled tiles), each but the last inside the head dim}}
  %dq, %dk, %dv = attn.attention_grad %q, %k, %v, %o, %do, %lse : tensor<1x2x33x40xbf16>, tensor<1x2x40x40xbf16>, tensor<1x2x40x40xbf16>, tensor<1x2x33x40xbf16>, tensor<1x2x33x40xbf16>, tensor<1x2x33xf32> -> tensor<1x2x33x40xbf16>, tensor<1x2x40x40xbf16>, tensor<1x2x40x40xbf16>
  return %dq, %dk, %dv : tensor<1x2x33x40xbf16>, tensor<1x2x40x40xbf16>, tensor<1x2x40x40xbf16>
}
