/* Winograd F(2x2, 3x3) and F(4x4, 3x3) for 3x3 stride-1 f32 convs
 * (uk_abi.h, wino_tiles and wino_m), built into both bitcodes: the GEMMs
 * run on the conv's register tiles (conv_f32.h).
 *
 * Each m x m block of outputs (a tile; m = 2 or 4) comes from an n x n
 * patch d of the input (n = m + 2): V = B^T d B per input channel, then
 * for each of the n^2 positions xi a GEMM M[xi] = V[xi] (tiles x ic) by
 * U[xi] (ic x oc, U = G g G^T packed at compile time), then Y = A^T M A.
 * Per output, input and output channel that is 16 / 4 = 4 multiply-adds
 * (m = 2) or 36 / 16 = 2.25 (m = 4), against 9 for the direct sum.  The
 * transforms are adds and multiplies by small constants, 8 channels at a
 * time.
 *
 * A block of up to wino_tiles tiles goes through the three steps with its
 * V and M in the workgroup's scratch, which holds (floats) zeros, ones
 * and -0.0 (n16 each: the GEMMs' bias, scale and offset, which leave their
 * sums as they are), then V [n^2][tiles][icp], then M [n^2][tiles][ocp]
 * (icp, ocp: the channel counts rounded up to 8).
 *
 * Workgroups take bands of tiles (n, ty, tx in order), not of pixels: a
 * tile is computed once, by one workgroup.  Every output is bias + Y in
 * the same arithmetic whatever the band, block or ISA (the GEMMs are the
 * conv tiles', which give the same bits with AVX2 and AVX-512; the
 * transforms here use 8-lane vectors and explicit FMAs in both builds). */
#include "wino_f32.h"

#include "conv_f32.h"

UK_INLINE int32_t wround8(int32_t n) { return (n + 7) & ~7; }

/* B^T on four values: the input transform's 1-D step. */
#define WINO_IN(d0, d1, d2, d3, r0, r1, r2, r3) \
  do {                                          \
    r0 = _mm256_sub_ps(d0, d2);                 \
    r1 = _mm256_add_ps(d1, d2);                 \
    r2 = _mm256_sub_ps(d2, d1);                 \
    r3 = _mm256_sub_ps(d1, d3);                 \
  } while (0)

/* A^T on four values: the output transform's 1-D step. */
#define WINO_OUT(m0, m1, m2, m3, y0, y1)                 \
  do {                                                   \
    y0 = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);       \
    y1 = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);       \
  } while (0)

/* F(4x4, 3x3)'s 1-D steps, points 0, +-1, +-2 and infinity.  B^T on six
 * values: */
#define WINO4_IN(d, i, st, r, j, rt)                                                  \
  do {                                                                                \
    const __m256 four = _mm256_set1_ps(4.0f), five = _mm256_set1_ps(5.0f);            \
    const __m256 two = _mm256_set1_ps(2.0f);                                          \
    const __m256 d0 = d[i], d1 = d[(i) + (st)], d2 = d[(i) + 2 * (st)];               \
    const __m256 d3 = d[(i) + 3 * (st)], d4 = d[(i) + 4 * (st)], d5 = d[(i) + 5 * (st)]; \
    r[j] = _mm256_fmadd_ps(four, d0, _mm256_fnmadd_ps(five, d2, d4));                 \
    r[(j) + (rt)] = _mm256_fnmadd_ps(four, _mm256_add_ps(d1, d2), _mm256_add_ps(d3, d4)); \
    r[(j) + 2 * (rt)] = _mm256_fmadd_ps(four, _mm256_sub_ps(d1, d2), _mm256_sub_ps(d4, d3)); \
    r[(j) + 3 * (rt)] = _mm256_fmadd_ps(two, _mm256_sub_ps(d3, d1), _mm256_sub_ps(d4, d2)); \
    r[(j) + 4 * (rt)] = _mm256_fmadd_ps(two, _mm256_sub_ps(d1, d3), _mm256_sub_ps(d4, d2)); \
    r[(j) + 5 * (rt)] = _mm256_fmadd_ps(four, d1, _mm256_fnmadd_ps(five, d3, d5));    \
  } while (0)

/* ... and A^T on six values, giving four (s: sums, d: differences). */
#define WINO4_OUT(x, i, st, y, j, yt)                                                 \
  do {                                                                                \
    const __m256 s12 = _mm256_add_ps(x[(i) + (st)], x[(i) + 2 * (st)]);               \
    const __m256 d12 = _mm256_sub_ps(x[(i) + (st)], x[(i) + 2 * (st)]);               \
    const __m256 s34 = _mm256_add_ps(x[(i) + 3 * (st)], x[(i) + 4 * (st)]);           \
    const __m256 d34 = _mm256_sub_ps(x[(i) + 3 * (st)], x[(i) + 4 * (st)]);           \
    y[j] = _mm256_add_ps(_mm256_add_ps(x[i], s12), s34);                              \
    y[(j) + (yt)] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), d34, d12);                  \
    y[(j) + 2 * (yt)] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), s34, s12);              \
    y[(j) + 3 * (yt)] =                                                               \
        _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), d34, d12), x[(i) + 5 * (st)]); \
  } while (0)

typedef struct wino_at {
  int32_t n, ty, tx;
} wino_at_t;

UK_INLINE wino_at_t wino_tile(int32_t t, int32_t th, int32_t tw) {
  wino_at_t a = {t / (th * tw), t / tw % th, t % tw};
  return a;
}

/* The n x n input patch of tile `at` (m outputs a side, n = m + 2): a
 * pixel's channels, or null outside the image (padding). */
static void wino_patch(const tinyml_uk_params_t *p, const float *in, wino_at_t at, int32_t m,
                       const float **src) {
  const int32_t n = m + 2;
  for (int32_t r = 0; r < n; ++r)
    for (int32_t s = 0; s < n; ++s) {
      const int32_t iy = m * at.ty - p->pad_top + r, ix = m * at.tx - p->pad_left + s;
      const int inside = iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw;
      src[r * n + s] = inside ? in + (((size_t)at.n * p->ih + iy) * p->iw + ix) * p->ic : 0;
    }
}

/* Channels [c0, c0 + 8) of the nn pixels of a patch, zero past ic. */
UK_INLINE void wino_load(const float *const *src, int nn, int32_t ic, int32_t c0, __m256 *d) {
  const __m256i m = lanes_below(ic - c0);
  const int whole = c0 + 8 <= ic;
  for (int i = 0; i < nn; ++i)
    d[i] = !src[i] ? _mm256_setzero_ps()
           : whole ? _mm256_loadu_ps(src[i] + c0)
                   : _mm256_maskload_ps(src[i] + c0, m);
}

/* V of one tile: v + xi * vs + c for position xi, channel c (zero past
 * ic up to icp). */
static __attribute__((noinline)) void ukf_wino_in(const tinyml_uk_params_t *p, const float *in,
                                                  wino_at_t at, float *v, ptrdiff_t vs) {
  const float *src[16];
  wino_patch(p, in, at, 2, src);
  for (int32_t c0 = 0; c0 < wround8(p->ic); c0 += 8) {
    __m256 d[16], t[16];
    wino_load(src, 16, p->ic, c0, d);
    for (int s = 0; s < 4; ++s) /* columns: t = B^T d */
      WINO_IN(d[s], d[4 + s], d[8 + s], d[12 + s], t[s], t[4 + s], t[8 + s], t[12 + s]);
    for (int r = 0; r < 4; ++r) /* rows: V = t B */
      WINO_IN(t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3], d[4 * r], d[4 * r + 1],
              d[4 * r + 2], d[4 * r + 3]);
    for (int i = 0; i < 16; ++i) _mm256_storeu_ps(v + i * vs + c0, d[i]);
  }
}

/* ukf_wino_in for F(4x4, 3x3): 36 positions. */
static __attribute__((noinline)) void ukf_wino4_in(const tinyml_uk_params_t *p, const float *in,
                                                   wino_at_t at, float *v, ptrdiff_t vs) {
  const float *src[36];
  wino_patch(p, in, at, 4, src);
  for (int32_t c0 = 0; c0 < wround8(p->ic); c0 += 8) {
    __m256 d[36], t[36];
    wino_load(src, 36, p->ic, c0, d);
    for (int s = 0; s < 6; ++s) WINO4_IN(d, s, 6, t, s, 6);         /* columns */
    for (int r = 0; r < 6; ++r) WINO4_IN(t, 6 * r, 1, d, 6 * r, 1); /* rows */
    for (int i = 0; i < 36; ++i) _mm256_storeu_ps(v + i * vs + c0, d[i]);
  }
}

/* The m x m outputs of tile `at`, or null outside the image. */
static void wino_outs(const ukf_ctx_t *c, wino_at_t at, int32_t m, float *out, float **dst) {
  const tinyml_uk_params_t *p = c->p;
  for (int32_t r = 0; r < m; ++r)
    for (int32_t s = 0; s < m; ++s) {
      const int32_t oy = m * at.ty + r, ox = m * at.tx + s;
      dst[r * m + s] = oy < p->oh && ox < p->ow
                           ? out + (((size_t)at.n * p->oh + oy) * p->ow + ox) * c->pitch
                           : 0;
    }
}

/* bias + y[i] through the epilogue into channels [o0, o0 + 8) of dst[i]. */
UK_INLINE void wino_store(const ukf_ctx_t *c, const __m256 *y, float *const *dst, int mm,
                          int32_t o0) {
  const __m256i mask = lanes_below(c->p->oc - o0);
  const __m256 lo = _mm256_set1_ps(c->lo), hi = _mm256_set1_ps(c->hi);
  const __m256 bias = _mm256_loadu_ps(c->bias + o0);
  for (int i = 0; i < mm; ++i) {
    if (!dst[i]) continue;
    float *o = dst[i] + o0;
    __m256 v = fepi(_mm256_add_ps(bias, y[i]), c->scale + o0, c->offset + o0,
                    c->res ? c->res + (o - c->out0) : 0, mask, lo, hi);
    _mm256_maskstore_ps(o, mask, v);
  }
}

/* Y of one tile from M (m + xi * ms + o) for channels [o_lo, o_hi), then
 * bias + Y through the epilogue into the outputs inside the image. */
static __attribute__((noinline)) void ukf_wino_out(const ukf_ctx_t *c, const float *m,
                                                   ptrdiff_t ms, wino_at_t at, float *out,
                                                   int32_t o_lo, int32_t o_hi) {
  float *dst[4];
  wino_outs(c, at, 2, out, dst);
  for (int32_t o0 = o_lo; o0 < o_hi && o0 < c->p->oc; o0 += 8) {
    __m256 x[16], t[8], y[4];
    for (int i = 0; i < 16; ++i) x[i] = _mm256_loadu_ps(m + i * ms + o0);
    for (int s = 0; s < 4; ++s) /* columns: t = A^T M */
      WINO_OUT(x[s], x[4 + s], x[8 + s], x[12 + s], t[s], t[4 + s]);
    for (int r = 0; r < 2; ++r) /* rows: Y = t A */
      WINO_OUT(t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3], y[2 * r], y[2 * r + 1]);
    wino_store(c, y, dst, 4, o0);
  }
}

/* ukf_wino_out for F(4x4, 3x3). */
static __attribute__((noinline)) void ukf_wino4_out(const ukf_ctx_t *c, const float *m,
                                                    ptrdiff_t ms, wino_at_t at, float *out,
                                                    int32_t o_lo, int32_t o_hi) {
  float *dst[16];
  wino_outs(c, at, 4, out, dst);
  for (int32_t o0 = o_lo; o0 < o_hi && o0 < c->p->oc; o0 += 8) {
    __m256 x[36], t[24], y[16];
    for (int i = 0; i < 36; ++i) x[i] = _mm256_loadu_ps(m + i * ms + o0);
    for (int s = 0; s < 6; ++s) WINO4_OUT(x, s, 6, t, s, 6);         /* columns: 4 x 6 */
    for (int r = 0; r < 4; ++r) WINO4_OUT(t, 6 * r, 1, y, 4 * r, 1); /* rows: 4 x 4 */
    wino_store(c, y, dst, 16, o0);
  }
}

/* The block's GEMMs: M[xi] = V[xi] U[xi] over the block's nt tiles, for
 * each of the nn positions xi. */
static void wino_gemms(const ukf_ctx_t *c, const float *fixed, const float *v, ptrdiff_t vs,
                       float *m, ptrdiff_t ms, int32_t nt, int nn, int32_t o_lo, int32_t o_hi) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t icp = wround8(p->ic), ocp = p->oc_padded, n16 = (ocp + 15) & ~15;
  tinyml_uk_params_t q = *p; /* the GEMM's k is ic */
  q.k = q.k_padded = p->ic;
  ukf_ctx_t g = *c;
  g.p = &q;
  g.bias = fixed;
  g.scale = fixed + n16;
  g.offset = fixed + 2 * n16;
  g.lo = -__builtin_inff();
  g.hi = __builtin_inff();
  g.res = 0;
  float *outs[FB_MAX];
  for (int xi = 0; xi < nn; ++xi) {
    g.weights = c->weights + (size_t)xi * p->ic * ocp;
    for (int32_t t = 0; t < nt; ++t) outs[t] = m + xi * ms + (size_t)t * ocp;
    const frun_t run = {v + xi * vs, nt, outs};
    fgemm_runs(&g, &run, 1, icp, 0, o_lo, o_hi);
  }
}

/* Workgroup wg's tiles [*t0, *t1) and channels [*o_lo, *o_hi): bands of
 * tiles, or, by fband's rule on the direct sum's weights (9 ic oc, not
 * U's 16 or 36), bands of 32 channels (never for F(4x4, 3x3), whose U is
 * at most 2.5 MB: the rule wants 1 MB of direct weights).  Each channel
 * band transforms its tiles' input again, so Winograd takes them later
 * than the direct sum would on U's size.  Measured on 2 threads
 * (docs/PERF.md): channel bands for every layer of more channels than
 * pixels ran SqueezeNet's 13x13 convs (590 KB and 1 MB of U) 1.15x faster
 * than 1 thread; with U's size as the weights, the 1 MB ones 1.43-1.76x,
 * 10-25% slower than with bands of tiles (1.74-1.88x, 1 thread the same).
 * With 4 or more workgroups (an even count), channel bands also halve the
 * tiles: a thread's own two workgroups then share one band of channels
 * and transform each tile's input once between them.  ResNet-50's 14x14
 * convs on 2 threads: 1.6x faster than 1 thread instead of 1.45x. */
static void wino_band(const tinyml_uk_params_t *p, int32_t wg, int32_t count, int32_t *t0,
                      int32_t *t1, int32_t *o_lo, int32_t *o_hi) {
  const int32_t m = p->wino_m == 4 ? 4 : 2;
  const int32_t tiles = p->batch * ((p->oh + m - 1) / m) * ((p->ow + m - 1) / m);
  if (!fband_channels(p, 9LL * p->ic * p->oc_padded)) {
    uk_split(tiles, wg, count, t0, t1);
    *o_lo = 0;
    *o_hi = p->oc_padded;
    return;
  }
  const int32_t halves = count >= 4 && count % 2 == 0 ? 2 : 1;
  uk_split(tiles, wg % halves, halves, t0, t1);
  if (!fchannel_band(p, wg / halves, count / halves, o_lo, o_hi)) *t1 = *t0;
}

void wino_f32(const ukf_ctx_t *c, const float *in, float *out, float *scratch, int32_t wg,
              int32_t count) {
  const tinyml_uk_params_t *p = c->p;
  /* At most FB_MAX (wino_gemms' output rows); the compiler gives <= 96. */
  const int32_t tiles = p->wino_tiles < FB_MAX ? p->wino_tiles : FB_MAX;
  const int32_t icp = wround8(p->ic), ocp = p->oc_padded;
  const int32_t wm = p->wino_m == 4 ? 4 : 2, nn = (wm + 2) * (wm + 2);
  const int32_t n16 = (ocp + 15) & ~15, th = (p->oh + wm - 1) / wm, tw = (p->ow + wm - 1) / wm;
  const ptrdiff_t vs = (ptrdiff_t)tinyml_uk_wino_stride((int64_t)tiles * icp);
  const ptrdiff_t ms = (ptrdiff_t)tinyml_uk_wino_stride((int64_t)tiles * ocp);
  int32_t t0, t1, o_lo, o_hi;
  wino_band(p, wg, count, &t0, &t1, &o_lo, &o_hi);
  if (t0 >= t1) return; /* wg >= count has no scratch of its own (uk_abi.h) */
  float *fixed = scratch, *v = scratch + 3 * n16, *m = v + nn * vs;
  for (int32_t i = 0; i < n16; ++i) {
    fixed[i] = 0.0f;
    fixed[n16 + i] = 1.0f;
    fixed[2 * n16 + i] = -0.0f;
  }
  /* Blocks of nearly equal size (49 tiles in 24s: 16, 16, 17). */
  const int32_t blocks = (t1 - t0 + tiles - 1) / tiles;
  for (int32_t b = 0; b < blocks; ++b) {
    const int32_t nt = (t1 - t0) / (blocks - b);
    for (int32_t t = 0; t < nt; ++t)
      (wm == 4 ? ukf_wino4_in : ukf_wino_in)(p, in, wino_tile(t0 + t, th, tw),
                                              v + (size_t)t * icp, vs);
    wino_gemms(c, fixed, v, vs, m, ms, nt, nn, o_lo, o_hi);
    for (int32_t t = 0; t < nt; ++t)
      (wm == 4 ? ukf_wino4_out : ukf_wino_out)(c, m + (size_t)t * ocp, ms,
                                                wino_tile(t0 + t, th, tw), out, o_lo, o_hi);
    t0 += nt;
  }
}
