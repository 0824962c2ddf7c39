module {
  // tosa.fft2d: LLVM merges the sinf and cosf of one angle into sincosf.
  func.func @main(%arg0: tensor<1x8x8xf32>, %arg1: tensor<1x8x8xf32>) -> (tensor<1x8x8xf32>) {
    %r, %i = tosa.fft2d %arg0, %arg1 {inverse = false} : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>)
    return %r : tensor<1x8x8xf32>
  }
}
