// Stage 6 of 7: softmax over the classes.
module {
  func.func @main(%x: tensor<1x2xf32> {tinyml.name = "scores"}) -> (tensor<1x2xf32> {tinyml.name = "probs"}) {
    %m = tosa.reduce_max %x {axis = 1 : i32} : (tensor<1x2xf32>) -> tensor<1x1xf32>
    %d = tosa.sub %x, %m : (tensor<1x2xf32>, tensor<1x1xf32>) -> tensor<1x2xf32>
    %e = tosa.exp %d : (tensor<1x2xf32>) -> tensor<1x2xf32>
    %s = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<1x2xf32>) -> tensor<1x1xf32>
    %r = tosa.reciprocal %s : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %p = tosa.mul %e, %r, %sh : (tensor<1x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x2xf32>
    return %p : tensor<1x2xf32>
  }
}
