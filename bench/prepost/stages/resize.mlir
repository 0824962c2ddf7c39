// Stage 2 of 7: bilinear 320x240 -> 96x96 (TOSA's integer coordinates are
// TFLite's convention without half-pixel centres: scale 96/240 = 2/5, 96/320 = 3/10).
module {
  func.func @main(%x: tensor<1x240x320x1xf32> {tinyml.name = "gray"}) -> (tensor<1x96x96x1xf32> {tinyml.name = "resized"}) {
    %scale = tosa.const_shape {values = dense<[2, 5, 3, 10]> : tensor<4xindex>} : () -> !tosa.shape<4>
    %off = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %border = tosa.const_shape {values = dense<[-3, -7]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %r = tosa.resize %x, %scale, %off, %border {mode = BILINEAR} : (tensor<1x240x320x1xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<1x96x96x1xf32>
    return %r : tensor<1x96x96x1xf32>
  }
}
