/* The f32 depthwise pixels with AVX2 (depthwise_f32.h), in the AVX2
 * bitcode only. */
#include "depthwise_f32.h"

/* Depthwise: channels are independent.  np pixels (xstep floats apart)
 * x nv vectors of 8 channels from channel c0 (negative for the head of a
 * shifted pixel, dw_head, whose x and arrays' addresses then lie before
 * their starts: UK_AT), over taps at x + xo[t] and weights + wo[t];
 * `masked` limits a single vector to the lanes of `mask`, the channels in
 * [0, ic), which also keeps its loads (bias, scale and offset too) inside
 * the arrays. */
UK_INLINE __m256 load8(const float *a, int masked, __m256i mask) {
  return masked ? _mm256_maskload_ps(a, mask) : _mm256_loadu_ps(a);
}

UK_INLINE void dw_block(const ukf_ctx_t *c, int np, int nv, int masked, const float *x,
                        int32_t xstep, const int32_t *xo, const int32_t *wo, int32_t taps,
                        int32_t c0, __m256i mask, float *dst, int32_t dstep) {
  __m256 a[2][4];
  const float *bias = UK_AT(c->bias, c0), *w = UK_AT(c->weights, c0);
  for (int v = 0; v < nv; ++v) {
    __m256 b = load8(bias + 8 * v, masked, mask);
    for (int i = 0; i < np; ++i) a[i][v] = b;
  }
  for (int32_t t = 0; t < taps; ++t) {
    const float *xp = x + xo[t], *wp = w + wo[t];
    for (int v = 0; v < nv; ++v) {
      __m256 wv = load8(wp + 8 * v, masked, mask);
      for (int i = 0; i < np; ++i)
        a[i][v] = _mm256_fmadd_ps(load8(xp + (size_t)i * xstep + 8 * v, masked, mask), wv,
                                  a[i][v]);
    }
  }
  const __m256 lo = _mm256_set1_ps(c->lo), hi = _mm256_set1_ps(c->hi);
  const float *scale = UK_AT(c->scale, c0), *offset = UK_AT(c->offset, c0);
  float *d = UK_AT(dst, c0);
  for (int v = 0; v < nv; ++v) {
    const __m256 sc = load8(scale + 8 * v, masked, mask);
    const __m256 of = load8(offset + 8 * v, masked, mask);
    for (int i = 0; i < np; ++i) {
      __m256 r = fepi_v(a[i][v], sc, of, 0, _mm256_setzero_si256(), lo, hi);
      float *o = d + (size_t)i * dstep + 8 * v;
      if (masked)
        _mm256_maskstore_ps(o, mask, r);
      else
        _mm256_storeu_ps(o, r);
    }
  }
}

/* The channel the pixel's first 8-channel block starts at: 0, or when
 * every pixel's channels start at the same offset in a 32-byte half line
 * (8 | ic) and that offset is not 0 (a caller's buffer at malloc's 16-byte
 * alignment), minus the floats before channel 0 in that half: the first
 * block, masked to the channels from 0, ends on it and every later load
 * is aligned.  Unshifted, a 14x14x576 3x3 depthwise conv at +16 was 1.21x
 * its aligned time (PERF.md, "Buffer placement").  Each channel's sum is
 * the same whichever block takes it. */
UK_INLINE int32_t dw_head(const float *x, const int32_t *xo, int32_t taps, int32_t ic) {
  const uintptr_t at = (uintptr_t)(x + (taps ? xo[0] : 0)) & 31;
  return ic % 8 ? 0 : -(int32_t)(at / 4);
}

/* All channels of np pixels; x points at pixel 0's origin (channel 0):
 * the head (dw_head), 32 channels at a time, 8, then the tail. */
UK_INLINE void dw_all(const ukf_ctx_t *c, int np, const float *x, int32_t xstep,
                      const int32_t *xo, const int32_t *wo, int32_t taps, float *dst) {
  const int32_t ic = c->p->ic;
  const __m256i all = _mm256_set1_epi32(-1);
  int32_t c0 = dw_head(x, xo, taps, ic);
  if (c0) { /* ic >= 8: every lane from -c0 up holds a channel */
    const __m256i head = _mm256_andnot_si256(lanes_below(-c0), all);
    dw_block(c, np, 1, 1, UK_AT(x, c0), xstep, xo, wo, taps, c0, head, dst, ic);
    c0 += 8;
  }
  for (; c0 + 32 <= ic; c0 += 32)
    dw_block(c, np, 4, 0, x + c0, xstep, xo, wo, taps, c0, all, dst, ic);
  for (; c0 + 8 <= ic; c0 += 8)
    dw_block(c, np, 1, 0, x + c0, xstep, xo, wo, taps, c0, all, dst, ic);
  if (c0 < ic)
    dw_block(c, np, 1, 1, x + c0, xstep, xo, wo, taps, c0, lanes_below(ic - c0), dst, ic);
}

/* Not inlined, for the same reason as ukf_tile_avx2 (conv_f32_avx2.c). */
__attribute__((noinline)) void ukf_dw_avx2(const ukf_ctx_t *c, int np, const float *x,
                                           int32_t xstep, const int32_t *xo, const int32_t *wo,
                                           int32_t taps, float *dst) {
  if (np == 2)
    dw_all(c, 2, x, xstep, xo, wo, taps, dst);
  else
    dw_all(c, 1, x, xstep, xo, wo, taps, dst);
}
