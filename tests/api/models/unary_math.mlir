module {
  // Elementwise math that lowers to libm calls or inline code: every
  // import the kernels use must be in TINYML_EXE_IMPORTS.
  func.func @main(%arg0: tensor<2x8xf32>, %arg1: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
    %a = tosa.sin %arg0 : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %c = tosa.exp %a : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %d = tosa.log %c : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %e = tosa.tanh %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %g = tosa.pow %e, %arg1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %h = tosa.sigmoid %g : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %i = tosa.rsqrt %h : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %j = tosa.reciprocal %i : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %k = tosa.floor %j : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %b = tosa.cos %arg1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %l = tosa.ceil %b : (tensor<2x8xf32>) -> tensor<2x8xf32>
    return %k, %l : tensor<2x8xf32>, tensor<2x8xf32>
  }
}
