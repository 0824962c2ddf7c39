/* The f32 max pool's pixels with AVX-512 (pool_f32.h), in the AVX-512
 * bitcode only; pool_f32.c says how the result stays the Linalg path's
 * bit for bit. */
#include "pool_f32.h"

UK_INLINE __m512 max_exact(__m512 acc, __m512 x) {
  const __mmask16 neg = _mm512_movepi32_mask(_mm512_castps_si512(x));
  const __m512 a = _mm512_mask_blend_ps(neg, acc, x), b = _mm512_mask_blend_ps(neg, x, acc);
  const __mmask16 nan = _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
  return _mm512_mask_blend_ps(nan, _mm512_max_ps(a, b), a);
}

/* np pixels (xstep floats apart) times nv vectors of channels from x (16
 * each, the lanes of tail): np * nv <= 8 chains, enough to hide latency. */
UK_INLINE void pool_block(const float *x, int32_t xstep, const int32_t *xo, int32_t taps,
                          int np, int nv, __mmask16 tail, float *dst, int32_t ic) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 m[8], z[8];
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      const float *a = x + i * xstep + 16 * v;
      m[i * nv + v] = taps ? _mm512_maskz_loadu_ps(tail, a + xo[0]) : _mm512_set1_ps(POOL_LOWEST);
      z[i * nv + v] = _mm512_mul_ps(m[i * nv + v], zero);
    }
  for (int32_t t = 1; t < taps; ++t)
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) {
        const __m512 in = _mm512_maskz_loadu_ps(tail, x + i * xstep + xo[t] + 16 * v);
        m[i * nv + v] = _mm512_range_ps(m[i * nv + v], in, 0x05);
        z[i * nv + v] = _mm512_fmadd_ps(in, zero, z[i * nv + v]);
      }
  for (int v = 1; v < np * nv; ++v) z[0] = _mm512_add_ps(z[0], z[v]);
  if (_mm512_cmp_ps_mask(z[0], z[0], _CMP_UNORD_Q))
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) {
        __m512 r = _mm512_set1_ps(POOL_LOWEST);
        for (int32_t t = 0; t < taps; ++t)
          r = max_exact(r, _mm512_maskz_loadu_ps(tail, x + i * xstep + xo[t] + 16 * v));
        m[i * nv + v] = r;
      }
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v)
      _mm512_mask_storeu_ps(dst + (size_t)i * ic + 16 * v, tail, m[i * nv + v]);
}

/* One pixel's channels. */
UK_INLINE void pool_one(const float *x, const int32_t *xo, int32_t taps, int32_t ic, float *dst) {
  int32_t c0 = 0;
  for (; c0 + 128 <= ic; c0 += 128) pool_block(x + c0, 0, xo, taps, 1, 8, 0xffff, dst + c0, ic);
  for (; c0 + 64 <= ic; c0 += 64) pool_block(x + c0, 0, xo, taps, 1, 4, 0xffff, dst + c0, ic);
  for (; c0 < ic; c0 += 16)
    pool_block(x + c0, 0, xo, taps, 1, 1, mask_below(ic - c0), dst + c0, ic);
}

/* n pixels xstep floats apart, two at a time when 64 channels would leave
 * too few chains.  Not inlined: the tests look for its name to tell the
 * bitcodes apart. */
__attribute__((noinline)) void ukf_maxpool_avx512(const float *x, int32_t xstep,
                                                  const int32_t *xo, int32_t taps, int32_t n,
                                                  int32_t ic, float *dst) {
  int32_t i = 0;
  if (ic == 64)
    for (; i + 2 <= n; i += 2)
      pool_block(x + (size_t)i * xstep, xstep, xo, taps, 2, 4, 0xffff, dst + (size_t)i * ic, ic);
  for (; i < n; ++i) pool_one(x + (size_t)i * xstep, xo, taps, ic, dst + (size_t)i * ic);
}
