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

/* The taps' row width: each row of kw taps one pixel (ic floats) after the
 * other, else 0. */
static int32_t tap_rows(const int32_t *xo, int32_t taps, int32_t ic) {
  int32_t kw = 1;
  while (kw < taps && xo[kw] - xo[kw - 1] == ic) ++kw;
  if (taps == 0 || taps % kw) return 0;
  for (int32_t t = 1; t < taps; ++t)
    if (t % kw && xo[t] - xo[t - 1] != ic) return 0;
  return kw;
}

/* Line j of a row of taps (its lines b + 16 j, j = 0 .. last) into its
 * accumulator v = j % q: q * 16 channels from s floats before a line span
 * q + 1 lines a pixel, and a row of kw side by side q kw + 1, so acc[v]'s
 * lanes are channels 16 v - s + lane (mod 16 q) of every pixel in the row. */
UK_INLINE void line_max(__m512 *acc, int v, int j, int last, __mmask16 head, __m512 l) {
  const __mmask16 k = j == 0 ? head : j == last ? (__mmask16)~head : (__mmask16)0xffff;
  acc[v] = _mm512_mask_range_ps(acc[v], k, acc[v], l, 0x05);
}

/* Stores a pixel's q line-shaped accumulators (line_max) at dst. */
UK_INLINE void lines_store(const __m512 *acc, int q, int32_t s, __mmask16 head, float *dst) {
  _mm512_mask_storeu_ps(UK_AT(dst, -s), head, acc[0]);
  _mm512_mask_storeu_ps(UK_AT(dst, 16 * q - s), (__mmask16)~head, acc[0]);
  for (int v = 1; v < q; ++v) _mm512_storeu_ps(UK_AT(dst, 16 * v - s), acc[v]);
}

/* Line j of a row of np pixels' taps (the last, n, masked; j = last the
 * first pixel's last; the second pixel's from 2 q) into accumulator
 * v = j % q of each pixel it is in, and its tap * 0 into z[v]. */
UK_INLINE void line_in(__m512 *a, __m512 *b, __m512 *z, const float *row, int q, int v, int j,
                       int n, int last, int np, __mmask16 head) {
  const __mmask16 k = j == 0 ? head : j == n ? (__mmask16)~head : (__mmask16)0xffff;
  const __m512 l = _mm512_maskz_load_ps(k, row + 16 * j);
  z[v] = _mm512_fmadd_ps(l, _mm512_setzero_ps(), z[v]);
  if (j <= last) line_max(a, v, j, last, head, l);
  if (np == 2 && j >= 2 * q) line_max(b, v, j - 2 * q, last, head, l);
}

/* np pixels (1, or 2 at xstep = 2 ic: 3-wide rows share q + 1 lines) of
 * ic = 16 q channels s floats past a line (head: the lanes from s), their
 * taps in rows of kw: each line loaded once per row, q kw + 1 (+ 2 q)
 * aligned loads where the shifted blocks load (q + 1) kw.  A NaN or
 * infinity among the lines (tap * 0, pool_f32.c) sends the pixels to
 * pool_one.  q is a constant (pool_lines): the accumulators stay in
 * registers only when indexed by constants. */
UK_INLINE void lines_px(const float *x, const int32_t *xo, int32_t taps, int32_t kw, int np,
                        int q, int32_t s, __mmask16 head, float *dst) {
  __m512 a[4], b[4], z[4];
  const int last = q * kw, n = last + 2 * q * (np - 1);
  for (int v = 0; v < q; ++v) a[v] = b[v] = _mm512_set1_ps(POOL_LOWEST), z[v] = _mm512_setzero_ps();
  for (int32_t t = 0; t < taps; t += kw) {
    const float *row = UK_AT(x, xo[t] - s);
    if (np == 2) {
      UK_UNROLL
      for (int j = 0; j <= 5 * q; ++j) line_in(a, b, z, row, q, j % q, j, 5 * q, 3 * q, 2, head);
    } else {
      for (int g = 0; q * g <= n; ++g)
        for (int v = 0; v < q && q * g + v <= n; ++v)
          line_in(a, b, z, row, q, v, q * g + v, n, last, 1, head);
    }
  }
  for (int v = 1; v < q; ++v) z[0] = _mm512_add_ps(z[0], z[v]);
  if (_mm512_cmp_ps_mask(z[0], z[0], _CMP_UNORD_Q)) {
    for (int i = 0; i < np; ++i)
      pool_one(x + 32 * q * i, xo, taps, 16 * q, -s, dst + 16 * q * i);
    return;
  }
  lines_store(a, q, s, head, dst);
  if (np == 2) lines_store(b, q, s, head, dst + 16 * q);
}

/* ic = 16 q channels off a line, taps in rows of kw >= 2: lines_px, with
 * the 3x3 stride-2 pool's pixels two at a time and its loop unrolled (kw
 * and xstep constant).  At +16, 56x56x64 -> 28x28: the shifted blocks (2 x
 * 4 then 2 x 1, 5 loads a tap) took 1.25-1.33x the aligned time; this 1.03
 * in a harness, 1.09 in the module (PERF.md, "Buffer placement"). */
UK_INLINE void pool_lines_q(const float *x, int32_t xstep, const int32_t *xo, int32_t taps,
                            int32_t n, int32_t kw, int q, int32_t s, float *dst) {
  const __mmask16 head = (__mmask16)(0xffff << s);
  int32_t i = 0;
  if (kw == 3 && xstep == 32 * q)
    for (; i + 2 <= n; i += 2)
      lines_px(x + (size_t)i * xstep, xo, taps, 3, 2, q, s, head, dst + (size_t)i * 16 * q);
  for (; i < n; ++i)
    lines_px(x + (size_t)i * xstep, xo, taps, kw, 1, q, s, head, dst + (size_t)i * 16 * q);
}

/* pool_lines_q for 16, 32 or 64 channels (128 took 1.06x aligned in the
 * shifted blocks, 16 and 32 1.7x and 1.4x). */
static void pool_lines(const float *x, int32_t xstep, const int32_t *xo, int32_t taps,
                       int32_t n, int32_t kw, int32_t ic, int32_t s, float *dst) {
  if (ic == 16)
    pool_lines_q(x, xstep, xo, taps, n, kw, 1, s, dst);
  else if (ic == 32)
    pool_lines_q(x, xstep, xo, taps, n, kw, 2, s, dst);
  else
    pool_lines_q(x, xstep, xo, taps, n, kw, 4, s, dst);
}

/* n pixels xstep floats apart, two at a time when 64 channels would leave
 * too few chains; 16, 32 or 64 channels off a line in rows of taps by
 * pool_lines.
 * Not inlined: the tests look for its name to tell the bitcodes apart. */
__attribute__((noinline)) void ukf_maxpool_avx512(const float *x, int32_t xstep,
                                                  const int32_t *xo, int32_t taps, int32_t n,
                                                  int32_t ic, float *dst) {
  const int32_t c0 = pool_head(x, xo, taps, ic);
  const __mmask16 head = (__mmask16)(0xffff << -c0);
  const int32_t kw = (ic == 16 || ic == 32 || ic == 64) && c0 ? tap_rows(xo, taps, ic) : 0;
  int32_t i = 0;
  if (kw >= 2) {
    pool_lines(x, xstep, xo, taps, n, kw, ic, -c0, dst);
    return;
  }
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
