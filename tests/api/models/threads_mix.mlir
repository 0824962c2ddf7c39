module {
  // tests/api/test_threads.c: ops that stay on the Linalg path and are large
  // enough to split (elementwise with broadcast, a transpose, a reduction,
  // exp, a matmul of two inputs), so the thread test covers split phases
  // whichever microkernels a target has.
  func.func @main(%arg0: tensor<1x192x320x40xf32>, %arg1: tensor<1x1x1x40xf32>, %arg2: tensor<1x96x160xf32>, %arg3: tensor<1x160x72xf32>) -> (tensor<1x40x192x320xf32>, tensor<1x192x320x1xf32>, tensor<1x96x72xf32>) {
    %z = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %v0 = tosa.add %arg0, %arg1 : (tensor<1x192x320x40xf32>, tensor<1x1x1x40xf32>) -> tensor<1x192x320x40xf32>
    %v1 = tosa.mul %v0, %arg0, %z : (tensor<1x192x320x40xf32>, tensor<1x192x320x40xf32>, tensor<1xi8>) -> tensor<1x192x320x40xf32>
    %v2 = tosa.exp %v1 : (tensor<1x192x320x40xf32>) -> tensor<1x192x320x40xf32>
    %v3 = tosa.transpose %v2 {perms = array<i32: 0, 3, 1, 2>} : (tensor<1x192x320x40xf32>) -> tensor<1x40x192x320xf32>
    %v4 = tosa.reduce_sum %v1 {axis = 3 : i32} : (tensor<1x192x320x40xf32>) -> tensor<1x192x320x1xf32>
    %fz = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %v5 = tosa.matmul %arg2, %arg3, %fz, %fz : (tensor<1x96x160xf32>, tensor<1x160x72xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x96x72xf32>
    return %v3, %v4, %v5 : tensor<1x40x192x320xf32>, tensor<1x192x320x1xf32>, tensor<1x96x72xf32>
  }
}
