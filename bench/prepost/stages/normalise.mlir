// Stage 3 of 7: (x - mean) / std with mean 0, std 255.
module {
  func.func @main(%x: tensor<1x96x96x1xf32> {tinyml.name = "resized"}) -> (tensor<1x96x96x1xf32> {tinyml.name = "normalised"}) {
    %a = "tosa.const"() <{values = dense<0.00392156886> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
    %b = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
    %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %m = tosa.mul %x, %a, %sh : (tensor<1x96x96x1xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x96x96x1xf32>
    %n = tosa.sub %m, %b : (tensor<1x96x96x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x96x96x1xf32>
    return %n : tensor<1x96x96x1xf32>
  }
}
