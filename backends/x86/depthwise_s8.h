/* The int8 depthwise conv's units: the driver (depthwise_s8.c, both
 * bitcodes), which plans the taps, and the pixel kernels it calls, AVX2
 * (depthwise_s8_avx2.c) or AVX-512 (depthwise_s8_avx512.c).  Not inlined,
 * so a module's object names the kernels it got. */
#ifndef TINYML_BACKENDS_X86_DEPTHWISE_S8_H
#define TINYML_BACKENDS_X86_DEPTHWISE_S8_H

#include "depthwise_s8_plan.h"
#include "ukernels_common.h"
#include "window_rows.h"

/* One pixel, every channel: the taps at img + xo[t] (input) and wo[t]
 * (weights), rescaled into dst. */
#if UK_ZMM
void uk_dw_avx512(const uk_ctx_t *c, const int8_t *img, const int32_t *xo, const int32_t *wo,
                  int32_t taps, int8_t *dst, const rq16_t *q);

/* Two pixels of an 8-channel layer, the second's taps step bytes on,
 * into dst and dst + oc. */
void uk_dw8x2_avx512(const uk_ctx_t *c, const int8_t *img, int32_t step, const int32_t *xo,
                     const int32_t *wo, int32_t taps, int8_t *dst);

/* The interior pixels of one output row, for windows of at most
 * UK_DW_REG_TAPS taps, whose weights then stay in registers while the
 * row's pixels go by, several at a time.  n pixels; the first's window
 * starts at src, the next's xstep bytes on; tap t at io[t] (taps of them),
 * outputs ic bytes apart from dst.  q and fb: every 16-channel block's
 * rescale constants and its bias less in_zp * (the sum of its weights),
 * so that the taps multiply raw inputs (the same int32 sums, modulo 2^32);
 * w: block b's weights at w[b * UK_DW_REG_TAPS + t] as uk_dw_w16 makes
 * them, zero past the taps, widened once per call of the driver.
 * rows: how many such rows uk_dw_rows_avx512 takes (the others one), each
 * block's constants loaded once for all of them.
 * UK_DW_REG_TAPS and the other limits: depthwise_s8_plan.h. */
typedef struct uk_dw_row {
  const int8_t *src;
  int8_t *dst;
  int32_t xstep, n, taps;
  const int32_t *io;
  const rq16_t *q;
  const __m512i *fb, *w;
  int32_t rows, ystep; /* rows of n pixels: src ystep bytes apart, dst n * ic */
} uk_dw_row_t;

/* 16 weight bytes as the row kernels' multiply-add takes them: each in
 * the low half of a 32-bit lane, the high half zero (vpmaddwd's second
 * product is then 0). */
UK_INLINE __m512i uk_dw_w16(__m128i b) { return _mm512_cvtepu16_epi32(_mm256_cvtepi8_epi16(b)); }

/* Any channel count (16 per vector); uk_dw8_row_avx512 for 8 channels,
 * two pixels per vector (q and fb with both halves the 8 channels'). */
void uk_dw_row_avx512(const uk_ctx_t *c, const uk_dw_row_t *r);
void uk_dw_rows_avx512(const uk_ctx_t *c, const uk_dw_row_t *r); /* r->rows rows */
void uk_dw8_row_avx512(const uk_ctx_t *c, const uk_dw_row_t *r);

/* The row kernel for the layer's channel count. */
UK_INLINE void uk_dw_row(const uk_ctx_t *c, const uk_dw_row_t *r) {
  if (c->p->ic == 8)
    uk_dw8_row_avx512(c, r);
  else
    uk_dw_row_avx512(c, r);
}

/* Output pixels [x0, x0 + r->n) of row oy of image img, whose windows may
 * leave the image: their windows' bytes, in_zp outside the image, copied
 * into a band of at most UK_DW_BAND_BYTES on the stack, a chunk of pixels
 * at a time, then r's row kernel on the band (r->src and r->io unused).
 * One pixel's band must fit: kh * ((kw - 1) * dil_w + 1) * ic bytes. */
void uk_dw_band_avx512(const uk_ctx_t *c, const uk_dw_row_t *r, const int8_t *img, int32_t oy,
                       int32_t x0);

/* Output pixels [lo, hi) (of all images), uk_dw_map_rows(p) > 0 (the
 * plan's UK_DW_MAP): a chunk of output rows at a time, their windows' input
 * rows copied, in_zp outside the image, into a map on the stack
 * (UK_DW_MAP_BYTES), then r's row kernel on it, whole rows in one call
 * (r: q, fb, w, taps). */
void uk_dw_map_avx512(const uk_ctx_t *c, const uk_dw_row_t *r, const int8_t *in, int8_t *out,
                      int32_t lo, int32_t hi);
#else
void uk_dw_avx2(const uk_ctx_t *c, const int8_t *img, const int32_t *xo, const int32_t *wo,
                int32_t taps, int8_t *dst);
#endif

#endif
