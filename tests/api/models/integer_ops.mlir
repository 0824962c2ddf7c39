module {
  // Integer division and a shifted multiply (64-bit intermediates).
  func.func @main(%arg0: tensor<4x8xi32>, %arg1: tensor<4x8xi32>) -> (tensor<4x8xi32>, tensor<4x8xi32>) {
    %a = tosa.intdiv %arg0, %arg1 : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
    %s = "tosa.const"() <{values = dense<3> : tensor<1xi8>}> : () -> tensor<1xi8>
    %m = tosa.mul %arg0, %arg1, %s : (tensor<4x8xi32>, tensor<4x8xi32>, tensor<1xi8>) -> tensor<4x8xi32>
    return %a, %m : tensor<4x8xi32>, tensor<4x8xi32>
  }
}
