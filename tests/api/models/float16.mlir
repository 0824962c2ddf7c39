module {
  // Half precision arithmetic and conversions (F16C or soft-float helpers).
  func.func @main(%arg0: tensor<4x8xf16>, %arg1: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf32>) {
    %a = tosa.add %arg0, %arg1 : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
    %e = tosa.exp %a : (tensor<4x8xf16>) -> tensor<4x8xf16>
    %c = tosa.cast %e : (tensor<4x8xf16>) -> tensor<4x8xf32>
    return %e, %c : tensor<4x8xf16>, tensor<4x8xf32>
  }
}
