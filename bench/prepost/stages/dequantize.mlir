// Stage 5 of 7: person_detect's int8 output (scale 1/256, zero point -128) to float.
module {
  func.func @main(%x: tensor<1x2xi8> {tinyml.name = "output"}) -> (tensor<1x2xf32> {tinyml.name = "scores"}) {
    %f = tosa.cast %x : (tensor<1x2xi8>) -> tensor<1x2xf32>
    %z = "tosa.const"() <{values = dense<128.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
    %s = "tosa.const"() <{values = dense<0.00390625> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
    %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %a = tosa.add %f, %z : (tensor<1x2xf32>, tensor<1x1xf32>) -> tensor<1x2xf32>
    %d = tosa.mul %a, %s, %sh : (tensor<1x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x2xf32>
    return %d : tensor<1x2xf32>
  }
}
