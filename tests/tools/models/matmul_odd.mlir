// bench/offsets' byte-identity check (tests/tools/meson.build): a matmul of
// two inputs whose sizes leave partial register tiles and blocks in m, n
// and k, so the peeled, masked and full tile paths all read and write the
// caller's buffers.
func.func @main(%a: tensor<1x67x300xf32>, %b: tensor<1x300x45xf32>) -> tensor<1x67x45xf32> {
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.matmul %a, %b, %z, %z : (tensor<1x67x300xf32>, tensor<1x300x45xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x67x45xf32>
  return %c : tensor<1x67x45xf32>
}
