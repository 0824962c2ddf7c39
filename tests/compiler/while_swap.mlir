module {
  // (x, y) = (y, x + y) while i < n: the body yields its loop values in
  // another order, so writing each in place must not clobber one still to
  // be read (test_emit.py).
  func.func @main(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>, %n: tensor<i32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
    %zero = "tosa.const"() <{values = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %r:4 = "tosa.while_loop"(%zero, %n, %a, %b) ({
    ^bb0(%i: tensor<i32>, %m: tensor<i32>, %x: tensor<1x4xf32>, %y: tensor<1x4xf32>):
      %go = "tosa.greater"(%m, %i) : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "tosa.yield"(%go) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i32>, %m: tensor<i32>, %x: tensor<1x4xf32>, %y: tensor<1x4xf32>):
      %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %i2 = "tosa.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %s = "tosa.add"(%x, %y) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      "tosa.yield"(%i2, %m, %y, %s) : (tensor<i32>, tensor<i32>, tensor<1x4xf32>, tensor<1x4xf32>) -> ()
    }) : (tensor<i32>, tensor<i32>, tensor<1x4xf32>, tensor<1x4xf32>) -> (tensor<i32>, tensor<i32>, tensor<1x4xf32>, tensor<1x4xf32>)
    return %r#2, %r#3 : tensor<1x4xf32>, tensor<1x4xf32>
  }
}
