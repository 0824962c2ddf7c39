module {
  // WHILE i < n: (i, x) = (i + 1, x * 0.5 + 1), n a model input: one
  // tosa.while_loop, compiled as one scf.while dispatch (test_emit.py).
  func.func @main(%x: tensor<1x4xf32>, %n: tensor<i32>) -> (tensor<1x4xf32>, tensor<i32>) {
    %zero = "tosa.const"() <{values = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %r:3 = "tosa.while_loop"(%zero, %n, %x) ({
    ^bb0(%i: tensor<i32>, %b: tensor<i32>, %y: tensor<1x4xf32>):
      %go = "tosa.greater"(%b, %i) : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "tosa.yield"(%go) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %b: tensor<i32>, %y: tensor<1x4xf32>):
      %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i2 = "tosa.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %half = "tosa.const"() <{values = dense<0.5> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
      %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
      %h = "tosa.mul"(%y, %half, %shift) : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1xi8>) -> tensor<1x4xf32>
      %c1 = "tosa.const"() <{values = dense<1.0> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
      %y2 = "tosa.add"(%h, %c1) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      "tosa.yield"(%i2, %b, %y2) : (tensor<i32>, tensor<i32>, tensor<1x4xf32>) -> ()
    }) : (tensor<i32>, tensor<i32>, tensor<1x4xf32>) -> (tensor<i32>, tensor<i32>, tensor<1x4xf32>)
    return %r#2, %r#0 : tensor<1x4xf32>, tensor<i32>
  }
}
