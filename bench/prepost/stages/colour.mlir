// Stage 1 of 7, run on its own: 320x240 RGB888 -> float gray (luma).
module {
  func.func @main(%img: tensor<1x240x320x3xi8> {tinyml.name = "image", tinyml.unsigned}) -> (tensor<1x240x320x1xf32> {tinyml.name = "gray"}) {
    %m = "tosa.const"() <{values = dense<-128> : tensor<1x1x1x1xi8>}> : () -> tensor<1x1x1x1xi8>
    %u = tosa.bitwise_xor %img, %m : (tensor<1x240x320x3xi8>, tensor<1x1x1x1xi8>) -> tensor<1x240x320x3xi8>
    %f = tosa.cast %u : (tensor<1x240x320x3xi8>) -> tensor<1x240x320x3xf32>
    %c = "tosa.const"() <{values = dense<128.0> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
    %v = tosa.add %f, %c : (tensor<1x240x320x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x240x320x3xf32>
    %w = "tosa.const"() <{values = dense<[[[[0.299, 0.587, 0.114]]]]> : tensor<1x1x1x3xf32>}> : () -> tensor<1x1x1x3xf32>
    %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %p = tosa.mul %v, %w, %sh : (tensor<1x240x320x3xf32>, tensor<1x1x1x3xf32>, tensor<1xi8>) -> tensor<1x240x320x3xf32>
    %g = tosa.reduce_sum %p {axis = 3 : i32} : (tensor<1x240x320x3xf32>) -> tensor<1x240x320x1xf32>
    return %g : tensor<1x240x320x1xf32>
  }
}
