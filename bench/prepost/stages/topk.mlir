// Stage 7 of 7: the top 2 classes and their scores, as TOSA a user would
// write it: argmax, mask the winner, argmax again, gather.
module {
  func.func @main(%x: tensor<1x2xf32> {tinyml.name = "probs"}) -> (tensor<2xi32> {tinyml.name = "top_k_indices"}, tensor<2xf32> {tinyml.name = "top_k_scores"}) {
    %i0 = tosa.argmax %x {axis = 1 : i32} : (tensor<1x2xf32>) -> tensor<1xi32>
    %iota = "tosa.const"() <{values = dense<[[0, 1]]> : tensor<1x2xi32>}> : () -> tensor<1x2xi32>
    %s11 = tosa.const_shape {values = dense<[1, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %i0b = tosa.reshape %i0, %s11 : (tensor<1xi32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %hit = tosa.equal %iota, %i0b : (tensor<1x2xi32>, tensor<1x1xi32>) -> tensor<1x2xi1>
    %low = "tosa.const"() <{values = dense<0xFF800000> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
    %y = tosa.select %hit, %low, %x : (tensor<1x2xi1>, tensor<1x1xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
    %i1 = tosa.argmax %y {axis = 1 : i32} : (tensor<1x2xf32>) -> tensor<1xi32>
    %idx = tosa.concat %i0, %i1 {axis = 0 : i32} : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %s12 = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %idx2 = tosa.reshape %idx, %s12 : (tensor<2xi32>, !tosa.shape<2>) -> tensor<1x2xi32>
    %s121 = tosa.const_shape {values = dense<[1, 2, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %v = tosa.reshape %x, %s121 : (tensor<1x2xf32>, !tosa.shape<3>) -> tensor<1x2x1xf32>
    %g = tosa.gather %v, %idx2 : (tensor<1x2x1xf32>, tensor<1x2xi32>) -> tensor<1x2x1xf32>
    %s2 = tosa.const_shape {values = dense<[2]> : tensor<1xindex>} : () -> !tosa.shape<1>
    %sc = tosa.reshape %g, %s2 : (tensor<1x2x1xf32>, !tosa.shape<1>) -> tensor<2xf32>
    return %idx, %sc : tensor<2xi32>, tensor<2xf32>
  }
}
