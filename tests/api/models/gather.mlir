module {
  // A run-time gather: rows of input 0 picked by the int32 indices of
  // input 1 (tests/api/test_no_abort.c feeds it indices out of range).
  func.func @main(%arg0: tensor<1x5x3xf32>, %arg1: tensor<1x6xi32>) -> tensor<1x6x3xf32> {
    %0 = tosa.gather %arg0, %arg1 : (tensor<1x5x3xf32>, tensor<1x6xi32>) -> tensor<1x6x3xf32>
    return %0 : tensor<1x6x3xf32>
  }
}
