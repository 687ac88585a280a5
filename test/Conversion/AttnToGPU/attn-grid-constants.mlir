// RUN: attn-opt %s -split-input-file -pass-pipeline='builtin.module(gpu.module(attn-grid-constants))' -verify-diagnostics | FileCheck %s

// The tensor map at position 1 becomes a by-value grid constant; the
// attribute goes.
// CHECK-LABEL: llvm.func @kernel(
// CHECK-SAME: %{{.*}}: i64, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<16 x i64>, nvvm.grid_constant}) attributes {nvvm.kernel}
// CHECK-NOT: attn.grid_constants
gpu.module @m {
  llvm.func @kernel(%a: i64, %t: !llvm.ptr) attributes {attn.grid_constants = array<i64: 1>, nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{names argument 0 as a tensor map; it is not a pointer argument}}
  llvm.func @kernel(%a: i64, %t: !llvm.ptr) attributes {attn.grid_constants = array<i64: 0>, nvvm.kernel} {
    llvm.return
  }
}

// -----

gpu.module @m {
  // expected-error @+1 {{names argument 5 as a tensor map}}
  llvm.func @kernel(%a: i64) attributes {attn.grid_constants = array<i64: 5>, nvvm.kernel} {
    llvm.return
  }
}
