module {
  // tests/compiler/test_rvv_codegen.py: a 3x3 conv whose padding copies
  // rows of 16 channels into a padded buffer (the copy is vectorized).
  func.func @main(%arg0: tensor<1x8x8x16xf32>) -> (tensor<1x8x8x16xf32>) {
    %w = "tosa.const"() <{values = dense<0.5> : tensor<16x3x3x16xf32>}> : () -> tensor<16x3x3x16xf32>
    %b = "tosa.const"() <{values = dense<0.25> : tensor<16xf32>}> : () -> tensor<16xf32>
    %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
    %y = tosa.conv2d %arg0, %w, %b, %z, %z {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x16xf32>, tensor<16x3x3x16xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x16xf32>
    return %y : tensor<1x8x8x16xf32>
  }
}
