module {
  // IF c: |x| else 0 - x, c a model input: one tosa.cond_if, compiled as
  // one scf.if dispatch (test_emit.py).
  func.func @main(%x: tensor<1x4xf32>, %c: tensor<i1>) -> (tensor<1x4xf32>) {
    %r = "tosa.cond_if"(%c, %x) ({
    ^bb0(%y: tensor<1x4xf32>):
      %a = "tosa.abs"(%y) : (tensor<1x4xf32>) -> tensor<1x4xf32>
      "tosa.yield"(%a) : (tensor<1x4xf32>) -> ()
    }, {
    ^bb0(%y: tensor<1x4xf32>):
      %z = "tosa.const"() <{values = dense<0.0> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
      %a = "tosa.sub"(%z, %y) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      "tosa.yield"(%a) : (tensor<1x4xf32>) -> ()
    }) : (tensor<i1>, tensor<1x4xf32>) -> tensor<1x4xf32>
    return %r : tensor<1x4xf32>
  }
}
