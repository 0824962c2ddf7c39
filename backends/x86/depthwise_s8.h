/* The int8 depthwise conv's units: the driver (depthwise_s8.c, both
 * bitcodes), which plans the taps, and the pixel kernels it calls, AVX2
 * (depthwise_s8_avx2.c) or AVX-512 (depthwise_s8_avx512.c).  Not inlined,
 * so a module's object names the kernels it got. */
#ifndef TINYML_BACKENDS_X86_DEPTHWISE_S8_H
#define TINYML_BACKENDS_X86_DEPTHWISE_S8_H

#include "ukernels_common.h"
#include "window_rows.h"

/* One pixel, every channel: the taps at img + xo[t] (input) and wo[t]
 * (weights), rescaled into dst. */
#if UK_ZMM
void uk_dw_avx512(const uk_ctx_t *c, const int8_t *img, const int32_t *xo, const int32_t *wo,
                  int32_t taps, int8_t *dst, const rq16_t *q);

/* Channel blocks whose rescale constants the depthwise driver makes once
 * per call and passes to every pixel (uk_dw_avx512's q). */
enum { UK_DW_RQ_BLOCKS = 8 };

/* Two pixels of an 8-channel layer, the second's taps step bytes on,
 * into dst and dst + oc. */
void uk_dw8x2_avx512(const uk_ctx_t *c, const int8_t *img, int32_t step, const int32_t *xo,
                     const int32_t *wo, int32_t taps, int8_t *dst);
#else
void uk_dw_avx2(const uk_ctx_t *c, const int8_t *img, const int32_t *xo, const int32_t *wo,
                int32_t taps, int8_t *dst);
#endif

#endif
