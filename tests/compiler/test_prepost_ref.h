/* The pre/post-processing stages of docs/PREPOST.md as plain C loops, one
 * loop per stage over the whole tensor.  They are the reference the fused
 * modules are checked against (tests) and the unfused baseline they are
 * timed against (bench/prepost).  Each stage does the same float32
 * operations in the same order as the compiled graph, so results agree
 * exactly; build with -ffp-contract=off so the compiler keeps them so. */
#ifndef TINYML_TESTS_PREPOST_REF_H
#define TINYML_TESTS_PREPOST_REF_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml.h"

/* The model input the pre-processing feeds. */
typedef struct ppref_model_input {
  tinyml_dtype_t dtype; /* float32, int8, uint8 or int16 */
  float scale;          /* integer dtypes */
  int64_t zero_point;
} ppref_model_input_t;

/* Channels of one pixel of `format` in the image buffer. */
uint32_t ppref_pixel_bytes(tinyml_pixel_format_t format);

/* Colour conversion of every pixel: `image` (h x w, `format`) to float32
 * HWC with `channels` (1 or 3) model channels, values 0..255. */
void ppref_colour(const uint8_t *image, uint32_t w, uint32_t h, tinyml_pixel_format_t format,
                  uint32_t channels, float *out);

/* Resize float32 HWC `in` (ih x iw x c) to oh x ow: TFLite's convention
 * without half-pixel centres, source coordinates computed exactly. */
void ppref_resize(const float *in, uint32_t ih, uint32_t iw, uint32_t c, float *out,
                  uint32_t oh, uint32_t ow, tinyml_resize_t mode);

/* (x - mean[c]) / std[c] and quantisation to `mi`, for `count` values with
 * channel c = index % channels.  `out` has mi->dtype. */
void ppref_normalise(const float *in, size_t count, uint32_t channels,
                     const tinyml_preprocess_t *pre, const ppref_model_input_t *mi, void *out);

/* HWC -> CHW for `elem_size`-byte elements. */
void ppref_to_chw(const void *in, uint32_t h, uint32_t w, uint32_t c, size_t elem_size,
                  void *out);

/* int16 samples to float, for ppref_normalise. */
void ppref_int16_to_float(const int16_t *in, size_t count, float *out);

/* The whole image pipeline into `model_in` (the model's input bytes);
 * `scratch` holds PPREF_IMAGE_SCRATCH(pre, h, w) floats. */
#define PPREF_IMAGE_SCRATCH(pre, h, w) \
  ((size_t)(pre)->image_width * (pre)->image_height * 3 + (size_t)(h) * (w) * 6)
void ppref_image(const uint8_t *image, const tinyml_preprocess_t *pre, uint32_t h, uint32_t w,
                 uint32_t c, int nchw, const ppref_model_input_t *mi, float *scratch,
                 void *model_in);

/* Post-processing of `count` raw output values of `dtype` (uint8 as
 * stored).  Dequantise: (q - zp) * scale. */
void ppref_dequantize(const void *raw, tinyml_dtype_t dtype, size_t count, float scale,
                      int64_t zero_point, float *out);
/* Softmax over rows of `n`, in place. */
void ppref_softmax(float *x, size_t rows, size_t n);
/* Indices of the k largest raw values of one row, best first, lower index
 * first on ties. */
void ppref_top_k(const void *raw, tinyml_dtype_t dtype, size_t n, uint32_t k, int32_t *out);

#endif
