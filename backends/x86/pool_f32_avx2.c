/* The f32 max pool's pixels with AVX2 (pool_f32.h), in the AVX2 bitcode
 * only; pool_f32.c says how the result stays the Linalg path's bit for
 * bit. */
#include "pool_f32.h"

UK_INLINE __m256 max_exact(__m256 acc, __m256 x) {
  const __m256 a = _mm256_blendv_ps(acc, x, x), b = _mm256_blendv_ps(x, acc, x);
  return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

/* The maximum of finite taps from s, their bits' signed maximum, and u,
 * their unsigned minimum: a non-negative s is the largest non-negative
 * tap; otherwise every tap is negative and u, the one nearest zero, is the
 * maximum. */
UK_INLINE __m256 fast_end(__m256i s, __m256i u) {
  return _mm256_blendv_ps(_mm256_castsi256_ps(s), _mm256_castsi256_ps(u),
                          _mm256_castsi256_ps(s));
}

UK_INLINE __m256 load8(const float *a, int masked, __m256i tail) {
  return masked ? _mm256_maskload_ps(a, tail) : _mm256_loadu_ps(a);
}

/* nv vectors of one pixel's channels from x (8 each; masked: the lanes of
 * tail), three chains each (s, u, z) in 16 registers. */
UK_INLINE void pool_block(const float *x, const int32_t *xo, int32_t taps, int nv, int masked,
                          __m256i tail, float *dst) {
  const __m256 zero = _mm256_setzero_ps();
  __m256i s[4], u[4];
  __m256 z[4];
  for (int v = 0; v < nv; ++v) {
    const __m256 in = taps ? load8(x + xo[0] + 8 * v, masked, tail) : _mm256_set1_ps(POOL_LOWEST);
    s[v] = u[v] = _mm256_castps_si256(in);
    z[v] = _mm256_mul_ps(in, zero);
  }
  for (int32_t t = 1; t < taps; ++t)
    for (int v = 0; v < nv; ++v) {
      const __m256 in = load8(x + xo[t] + 8 * v, masked, tail);
      s[v] = _mm256_max_epi32(s[v], _mm256_castps_si256(in));
      u[v] = _mm256_min_epu32(u[v], _mm256_castps_si256(in));
      z[v] = _mm256_fmadd_ps(in, zero, z[v]);
    }
  for (int v = 1; v < nv; ++v) z[0] = _mm256_add_ps(z[0], z[v]);
  const int redo = _mm256_movemask_ps(_mm256_cmp_ps(z[0], z[0], _CMP_UNORD_Q)) != 0;
  for (int v = 0; v < nv; ++v) {
    __m256 r = fast_end(s[v], u[v]);
    if (redo) {
      r = _mm256_set1_ps(POOL_LOWEST);
      for (int32_t t = 0; t < taps; ++t) r = max_exact(r, load8(x + xo[t] + 8 * v, masked, tail));
    }
    if (masked)
      _mm256_maskstore_ps(dst + 8 * v, tail, r);
    else
      _mm256_storeu_ps(dst + 8 * v, r);
  }
}

__attribute__((noinline)) void ukf_maxpool_avx2(const float *x, int32_t xstep,
                                                const int32_t *xo, int32_t taps, int32_t n,
                                                int32_t ic, float *dst) {
  const __m256i all = _mm256_set1_epi32(-1);
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(ic % 8),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  for (int32_t i = 0; i < n; ++i, x += xstep, dst += ic) {
    int32_t c0 = 0;
    for (; c0 + 32 <= ic; c0 += 32) pool_block(x + c0, xo, taps, 4, 0, all, dst + c0);
    for (; c0 + 8 <= ic; c0 += 8) pool_block(x + c0, xo, taps, 1, 0, all, dst + c0);
    if (c0 < ic) pool_block(x + c0, xo, taps, 1, 1, tail, dst + c0);
  }
}
