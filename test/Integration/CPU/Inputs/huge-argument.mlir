// Arguments whose element counts overflow int64 or pass the runner's limit.
func.func @overflow(%q: tensor<1x2x4611686018427387904x64xf16>) -> tensor<1x2x4611686018427387904x64xf16> {
  return %q : tensor<1x2x4611686018427387904x64xf16>
}

func.func @large(%q: tensor<65536x65536x65536xf32>) -> tensor<65536x65536x65536xf32> {
  return %q : tensor<65536x65536x65536xf32>
}

func.func @large_result(%q: tensor<4xf32>) -> tensor<65536x65536xf32> {
  %e = tensor.empty() : tensor<65536x65536xf32>
  return %e : tensor<65536x65536xf32>
}
