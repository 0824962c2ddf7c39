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
 * each; the first vector's lanes those of `first`, the last's those of
 * `last`): np * nv <= 8 chains, enough to hide latency.  For a shifted
 * head (pool_head) x and dst lie before their arrays' starts (UK_AT). */
UK_INLINE void pool_block(const float *x, int32_t xstep, const int32_t *xo, int32_t taps,
                          int np, int nv, __mmask16 first, __mmask16 last, float *dst,
                          int32_t ic) {
  const __m512 zero = _mm512_setzero_ps();
  __m512 m[8], z[8];
  __mmask16 k[8];
  for (int v = 0; v < nv; ++v)
    k[v] = (v == 0 ? first : (__mmask16)0xffff) & (v == nv - 1 ? last : (__mmask16)0xffff);
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      const float *a = x + i * xstep + 16 * v;
      m[i * nv + v] = taps ? _mm512_maskz_loadu_ps(k[v], a + xo[0]) : _mm512_set1_ps(POOL_LOWEST);
      z[i * nv + v] = _mm512_mul_ps(m[i * nv + v], zero);
    }
  for (int32_t t = 1; t < taps; ++t)
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) {
        const __m512 in = _mm512_maskz_loadu_ps(k[v], x + i * xstep + xo[t] + 16 * v);
        m[i * nv + v] = _mm512_range_ps(m[i * nv + v], in, 0x05);
        z[i * nv + v] = _mm512_fmadd_ps(in, zero, z[i * nv + v]);
      }
  for (int v = 1; v < np * nv; ++v) z[0] = _mm512_add_ps(z[0], z[v]);
  if (_mm512_cmp_ps_mask(z[0], z[0], _CMP_UNORD_Q))
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) {
        __m512 r = _mm512_set1_ps(POOL_LOWEST);
        for (int32_t t = 0; t < taps; ++t)
          r = max_exact(r, _mm512_maskz_loadu_ps(k[v], x + i * xstep + xo[t] + 16 * v));
        m[i * nv + v] = r;
      }
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v)
      _mm512_mask_storeu_ps(dst + (size_t)i * ic + 16 * v, k[v], m[i * nv + v]);
}

/* One pixel's channels: the head block from c0 when pool_head shifted
 * it, then whole blocks under constant masks and the tail, the unshifted
 * path's code. */
UK_INLINE void pool_one(const float *x, const int32_t *xo, int32_t taps, int32_t ic, int32_t c0,
                        float *dst) {
  if (c0) {
    pool_block(UK_AT(x, c0), 0, xo, taps, 1, 1, (__mmask16)(0xffff << -c0), 0xffff,
               UK_AT(dst, c0), ic);
    c0 += 16;
  }
  for (; c0 + 128 <= ic; c0 += 128)
    pool_block(x + c0, 0, xo, taps, 1, 8, 0xffff, 0xffff, dst + c0, ic);
  for (; c0 + 64 <= ic; c0 += 64)
    pool_block(x + c0, 0, xo, taps, 1, 4, 0xffff, 0xffff, dst + c0, ic);
  for (; c0 < ic; c0 += 16)
    pool_block(x + c0, 0, xo, taps, 1, 1, mask_below(ic - c0), 0xffff, dst + c0, ic);
}

/* The channel the pixels' first block starts at: 0, or on a caller's
 * input off a 64-byte line with every pixel at the same offset in its
 * line (16 | ic), minus the floats before channel 0 in that line, so that
 * every load is aligned (the first masked to the channels from 0).  A
 * 3x3/2 pool on 56x56x64 at malloc's 16-byte alignment, 4 loads a tap
 * that split a line, was 1.6x slower than aligned; 5 aligned ones are
 * 1.25x (PERF.md, "Buffer placement").  The maximum of each channel is
 * the same whichever block takes it. */
UK_INLINE int32_t pool_head(const float *x, const int32_t *xo, int32_t taps, int32_t ic) {
  const uintptr_t at = (uintptr_t)(x + (taps ? xo[0] : 0)) & 63;
  return ic % 16 ? 0 : -(int32_t)(at / 4);
}

/* n pixels xstep floats apart, two at a time when 64 channels would leave
 * too few chains (shifted, the 5th vector as a 2 x 1 block: one 2 x 5
 * block was no faster).  Not inlined: the tests look for its name to tell
 * the bitcodes apart. */
__attribute__((noinline)) void ukf_maxpool_avx512(const float *x, int32_t xstep,
                                                  const int32_t *xo, int32_t taps, int32_t n,
                                                  int32_t ic, float *dst) {
  const int32_t c0 = pool_head(x, xo, taps, ic);
  const __mmask16 head = (__mmask16)(0xffff << -c0);
  int32_t i = 0;
  if (ic == 64 && c0)
    for (; i + 2 <= n; i += 2) {
      const float *xi = UK_AT(x, (ptrdiff_t)i * xstep + c0);
      float *di = UK_AT(dst, (ptrdiff_t)i * ic + c0);
      pool_block(xi, xstep, xo, taps, 2, 4, head, 0xffff, di, ic);
      pool_block(xi + 64, xstep, xo, taps, 2, 1, (__mmask16)~head, 0xffff, di + 64, ic);
    }
  else if (ic == 64)
    for (; i + 2 <= n; i += 2)
      pool_block(x + (size_t)i * xstep, xstep, xo, taps, 2, 4, 0xffff, 0xffff,
                 dst + (size_t)i * ic, ic);
  for (; i < n; ++i) pool_one(x + (size_t)i * xstep, xo, taps, ic, c0, dst + (size_t)i * ic);
}
