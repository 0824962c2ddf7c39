// Stage 4 of 7: to person_detect's int8 input (scale 2/255, zero point -1).
module {
  func.func @main(%x: tensor<1x96x96x1xf32> {tinyml.name = "normalised"}) -> (tensor<1x96x96x1xi8> {tinyml.name = "input"}) {
    %a = "tosa.const"() <{values = dense<127.5> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
    %b = "tosa.const"() <{values = dense<-1.0> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
    %sh = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %m = tosa.mul %x, %a, %sh : (tensor<1x96x96x1xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x96x96x1xf32>
    %n = tosa.add %m, %b : (tensor<1x96x96x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x96x96x1xf32>
    %q = tosa.cast %n : (tensor<1x96x96x1xf32>) -> tensor<1x96x96x1xi8>
    return %q : tensor<1x96x96x1xi8>
  }
}
