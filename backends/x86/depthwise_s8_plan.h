/* Which kernel runs an int8 depthwise conv (tinyml_uk_depthwise_s8): a
 * pure function of the layer's parameters and shifts, so a white-box test
 * (tests/compiler/test_dw_plan.c) can check that the layers of the models
 * we measure take the fast kernels; the fallbacks give the same bytes, so
 * no output test would see them stop being taken.  Plain C, no intrinsics:
 * the test builds it with the host compiler. */
#ifndef TINYML_BACKENDS_X86_DEPTHWISE_S8_PLAN_H
#define TINYML_BACKENDS_X86_DEPTHWISE_S8_PLAN_H

#include "../../lib/ukernels/uk_depthwise.h"

typedef enum uk_dw_kernel {
  UK_DW_GENERIC, /* more than UK_MAX_TAPS taps: uk_depthwise_generic */
  UK_DW_PIXELS,  /* one call a pixel: uk_dw_avx512 or uk_dw_avx2 */
  UK_DW_ROWS,    /* AVX-512 row kernels, 16 channels a vector */
  UK_DW_ROWS8,   /* AVX-512 row kernels, 8 channels, two pixels a vector */
  UK_DW_MAP      /* the row kernels (either) on an in_zp-padded copy of the map */
} uk_dw_kernel_t;

/* The row kernels' limits: 16-channel blocks whose rescale constants,
 * folded biases and widened weights the driver makes once per call (16
 * blocks did not pay: vww's 3x3x256 layer, all border pixels, ran 2.3 ->
 * 3.0 us on the row kernels, 0.5 of them making the constants; docs/PERF.md);
 * taps whose weights stay in registers; the band on the stack that border
 * pixels go through, which one pixel's window must fit. */
enum { UK_DW_RQ_BLOCKS = 8, UK_DW_REG_TAPS = 9, UK_DW_BAND_BYTES = 4096 };

/* Output rows whose windows' input rows, padded (in_zp outside the image
 * across and down), fit in this many bytes on the stack go through one
 * copy of those rows, after which every pixel is interior and a row kernel
 * call covers whole rows; larger maps go a chunk of rows at a time.  The
 * bands (uk_dw_band_avx512) copied a pixel group's window rows for each
 * group with a border pixel, 3 calls a row: vww's layers take 8-28% less
 * time this way (docs/PERF.md). */
enum { UK_DW_MAP_BYTES = 16384 };

/* A padded map row's bytes: the columns of the windows of a whole output
 * row. */
UK_INLINE int64_t uk_dw_map_row(const tinyml_uk_params_t *p) {
  return ((int64_t)(p->ow - 1) * p->stride_w + (int64_t)(p->kw - 1) * p->dil_w + 1) * p->ic;
}

/* Output rows a map chunk holds (0: not one). */
UK_INLINE int32_t uk_dw_map_rows(const tinyml_uk_params_t *p) {
  const int64_t rows = UK_DW_MAP_BYTES / uk_dw_map_row(p) - (int64_t)(p->kh - 1) * p->dil_h - 1;
  return rows < 0 ? 0 : (int32_t)(rows / p->stride_h + 1);
}

/* Whether every live channel of the row kernels' blocks has a shift in
 * rq16's range, [33, 54] (ukernels_common.h: rq16_make checks the same),
 * and a multiplier >= 0, so that its product with v has v's sign (the row
 * kernels' rescale, dwq_apply in depthwise_s8_avx512.c, takes that). */
UK_INLINE int uk_dw_row_scales(const tinyml_uk_params_t *p, const int32_t *mult,
                               const int32_t *shift) {
  const int32_t blocks_end = (p->ic + 15) / 16 * 16;
  const int32_t n = p->oc < blocks_end ? p->oc : blocks_end;
  for (int32_t o = 0; o < n; ++o)
    if (shift[o] < 33 || shift[o] > 54 || mult[o] < 0) return 0;
  return 1;
}

/* The kernel for a layer with parameters p and per-channel multipliers and
 * shifts (p->oc of each), on a build with AVX-512 (`zmm`) or AVX2 only. */
UK_INLINE uk_dw_kernel_t uk_dw_plan(const tinyml_uk_params_t *p, const int32_t *mult,
                                    const int32_t *shift, int zmm) {
  if (p->kh * p->kw > UK_MAX_TAPS) return UK_DW_GENERIC;
  if (!zmm || p->kh * p->kw > UK_DW_REG_TAPS || p->ic > 16 * UK_DW_RQ_BLOCKS ||
      p->kh * ((p->kw - 1) * p->dil_w + 1) * p->ic > UK_DW_BAND_BYTES ||
      !uk_dw_row_scales(p, mult, shift))
    return UK_DW_PIXELS;
  if (uk_dw_map_rows(p) > 0) return UK_DW_MAP;
  return p->ic == 8 ? UK_DW_ROWS8 : UK_DW_ROWS;
}

#endif
