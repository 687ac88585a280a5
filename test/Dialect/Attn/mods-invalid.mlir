// RUN: attn-opt %s -split-input-file -verify-diagnostics

// Every way a score or mask modification can be malformed gets an error
// that names the region and the problem.

#q = tensor<1x2x8x16xf32>

func.func @score_args(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'score_mod' must take the arguments (b, h, i, j: index, score: f32), got 4 of types 'index', 'index', 'index', 'index'}}
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.constant 0.0 : f32
      attn.yield %c : f32
    }
  return
}

// -----

func.func @mask_yields_f32(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'mask_mod' must end in attn.yield of 'i1'}}
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.constant 0.0 : f32
      attn.yield %c : f32
    }
  return
}

// -----

// The op's verifier sees its regions before the verifier checks their ops:
// an empty block, a yield without its operand and a tensor.extract without
// its operands get the op's error, not a crash.
func.func @mask_empty_block(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'mask_mod' must end in attn.yield of 'i1'}}
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
    }
  return
}

// -----

func.func @mask_yields_nothing(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'mask_mod' must end in attn.yield of 'i1'}}
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      "attn.yield"() : () -> ()
    }
  return
}

// -----

func.func @score_extract_without_operands(%q: tensor<1x2x8x16xf32>, %t: tensor<8xf32>) {
  // expected-error @+1 {{'score_mod' holds 'tensor.extract', which reads a tensor that is not one of mod_operands}}
  %o = attn.attention %q, %q, %q mod_operands(%t : tensor<8xf32>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %sl: tensor<8xf32>):
      // expected-note @+1 {{here}}
      %x = "tensor.extract"() : () -> f32
      attn.yield %x : f32
    }
  return
}

// -----

func.func @captures(%q: tensor<1x2x8x16xf32>, %cap: f32) {
  // expected-error @+1 {{'score_mod' holds 'arith.divf', which uses a value defined outside the region (pass tensors through mod_operands and define constants inside)}}
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      // expected-note @+1 {{here}}
      %x = arith.divf %s, %cap : f32
      attn.yield %x : f32
    }
  return
}

// -----

func.func @nested_region(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'mask_mod' holds 'scf.if', an op with regions (write branches as arith.select)}}
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi ult, %j, %i : index
      // expected-note @+1 {{here}}
      %k = scf.if %c -> i1 {
        scf.yield %c : i1
      } else {
        scf.yield %c : i1
      }
      attn.yield %k : i1
    }
  return
}

// -----

func.func @side_effect(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'score_mod' holds 'memref.alloca', an op with side effects}}
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      // expected-note @+1 {{here}}
      %m = memref.alloca() : memref<f32>
      attn.yield %s : f32
    }
  return
}

// -----

func.func @tensor_op(%q: tensor<1x2x8x16xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{'score_mod' uses mod operand 0 in 'tensor.dim'; it may only be read by tensor.extract}}
  %o = attn.attention %q, %q, %q mod_operands(%t : tensor<4xf32>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32, %x: tensor<4xf32>):
      %c0 = arith.constant 0 : index
      %n = tensor.dim %x, %c0 : tensor<4xf32>
      attn.yield %s : f32
    }
  return
}

// -----

func.func @tensor_result(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'score_mod' holds 'tensor.empty', whose operands and results are not all scalars}}
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      // expected-note @+1 {{here}}
      %e = tensor.empty() : tensor<4xf32>
      attn.yield %s : f32
    }
  return
}

// -----

func.func @operands_without_region(%q: tensor<1x2x8x16xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{has mod_operands but neither a score_mod nor a mask_mod to read them}}
  %o = attn.attention %q, %q, %q mod_operands(%t : tensor<4xf32>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @missing_operand_arg(%q: tensor<1x2x8x16xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{'mask_mod' must take the arguments (b, h, i, j: index, tensor<4xf32>), got 4 of types}}
  %o = attn.attention %q, %q, %q mod_operands(%t : tensor<4xf32>) : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi ult, %j, %i : index
      attn.yield %c : i1
    }
  return
}

// -----

func.func @name_without_region(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{has a mod_name but neither a score_mod nor a mask_mod}}
  %o = attn.attention %q, %q, %q {mod_name = "x"} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  return
}

// -----

func.func @bad_name(%q: tensor<1x2x8x16xf32>) {
  // expected-error @+1 {{'mod_name' must be 1 to 64 letters, digits or '_' (it names GPU kernels), got "soft-cap"}}
  %o = attn.attention %q, %q, %q {mod_name = "soft-cap"} : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      attn.yield %s : f32
    }
  return
}

// -----

func.func @no_derivative(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>) {
  // expected-error @+1 {{'attn.attention_grad' op 'score_mod' holds 'math.erf', which depends on the score and has no derivative rule, so the gradient cannot flow through it}}
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %l : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      // expected-note @+1 {{here}}
      %e = math.erf %s : f32
      attn.yield %e : f32
    }
  return
}

// -----

// The forward needs no derivative: math.erf is fine there, and an op on
// the score through integers (no float result depends on it) is fine in
// the gradient.
func.func @erf_forward(%q: tensor<1x2x8x16xf32>, %l: tensor<1x2x8xf32>) {
  %o = attn.attention %q, %q, %q : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %e = math.erf %s : f32
      attn.yield %e : f32
    }
  %dq, %dk, %dv = attn.attention_grad %q, %q, %q, %q, %q, %l : tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8xf32> -> tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>
    score_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index, %s: f32):
      %zero = arith.constant 0.0 : f32
      %neg = arith.cmpf olt, %s, %zero : f32
      %m = arith.select %neg, %zero, %s : f32
      attn.yield %m : f32
    }
  return
}
