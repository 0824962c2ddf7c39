module {
  // tosa.erf lowers to a call of erff (math-to-libm).
  func.func @main(%arg0: tensor<2x8xf32>) -> (tensor<2x8xf32>) {
    %a = tosa.erf %arg0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
    return %a : tensor<2x8xf32>
  }
}
