/* The f32 depthwise pixels with AVX2 (depthwise_f32.h), in the AVX2
 * bitcode only. */
#include "depthwise_f32.h"

/* Depthwise: channels are independent.  np pixels (xstep floats apart)
 * x nv vectors of 8 channels from channel c0, over taps at x + xo[t] and
 * weights + wo[t]; `mask` limits a single vector to the channels left. */
UK_INLINE void dw_block(const ukf_ctx_t *c, int np, int nv, int masked, const float *x,
                        int32_t xstep, const int32_t *xo, const int32_t *wo, int32_t taps,
                        int32_t c0, __m256i mask, float *dst, int32_t dstep) {
  __m256 a[2][4];
  for (int v = 0; v < nv; ++v) {
    __m256 b = _mm256_loadu_ps(c->bias + c0 + 8 * v);
    for (int i = 0; i < np; ++i) a[i][v] = b;
  }
  const float *w = c->weights + c0;
  for (int32_t t = 0; t < taps; ++t) {
    const float *xp = x + xo[t], *wp = w + wo[t];
    for (int v = 0; v < nv; ++v) {
      __m256 wv = masked ? _mm256_maskload_ps(wp, mask) : _mm256_loadu_ps(wp + 8 * v);
      for (int i = 0; i < np; ++i) {
        const float *xi = xp + (size_t)i * xstep + 8 * v;
        __m256 xv = masked ? _mm256_maskload_ps(xi, mask) : _mm256_loadu_ps(xi);
        a[i][v] = _mm256_fmadd_ps(xv, wv, a[i][v]);
      }
    }
  }
  const __m256 lo = _mm256_set1_ps(c->lo), hi = _mm256_set1_ps(c->hi);
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      __m256 r = fepi(a[i][v], c->scale + c0 + 8 * v, c->offset + c0 + 8 * v, 0,
                       _mm256_setzero_si256(), lo, hi);
      float *o = dst + (size_t)i * dstep + c0 + 8 * v;
      if (masked)
        _mm256_maskstore_ps(o, mask, r);
      else
        _mm256_storeu_ps(o, r);
    }
}

/* All channels of np pixels; x points at pixel 0's origin (channel 0). */
UK_INLINE void dw_all(const ukf_ctx_t *c, int np, const float *x, int32_t xstep,
                      const int32_t *xo, const int32_t *wo, int32_t taps, float *dst) {
  const int32_t ic = c->p->ic;
  const __m256i all = _mm256_set1_epi32(-1);
  int32_t c0 = 0;
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
