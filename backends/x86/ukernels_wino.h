/* Winograd F(2x2, 3x3) for 3x3 stride-1 f32 convs (uk_abi.h, wino_tiles),
 * included by ukernels_fconv.h: the GEMMs run on its register tiles.
 *
 * Each 2x2 block of outputs (a tile) comes from a 4x4 patch d of the input:
 * V = B^T d B per input channel, then for each of the 16 positions xi a GEMM
 * M[xi] = V[xi] (tiles x ic) by U[xi] (ic x oc, U = G g G^T packed at
 * compile time), then Y = A^T M A.  That is 16 multiply-adds per tile,
 * input and output channel, against 36 for the direct sum: 2.25 times
 * fewer.  The transforms are adds only, 8 channels at a time.
 *
 * A block of up to wino_tiles tiles goes through the three steps with its
 * V and M in the workgroup's scratch, which holds (floats) zeros, ones
 * and -0.0 (n16 each: the GEMMs' bias, scale and offset, which leave their
 * sums as they are), then V [16][tiles][icp], then M [16][tiles][ocp]
 * (icp, ocp: the channel counts rounded up to 8).
 *
 * Workgroups take bands of tiles (n, ty, tx in order), not of pixels: a
 * tile is computed once, by one workgroup.  Every output is bias + Y in
 * the same arithmetic whatever the band, block or ISA (the GEMMs are the
 * conv tiles', which give the same bits with AVX2 and AVX-512; the
 * transforms here use 8-lane vectors in both builds). */
#ifndef TINYML_BACKENDS_X86_UKERNELS_WINO_H
#define TINYML_BACKENDS_X86_UKERNELS_WINO_H

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

typedef struct wino_at {
  int32_t n, ty, tx;
} wino_at_t;

UK_INLINE wino_at_t wino_tile(int32_t t, int32_t th, int32_t tw) {
  wino_at_t a = {t / (th * tw), t / tw % th, t % tw};
  return a;
}

/* V of one tile: v + xi * vs + c for position xi, channel c (zero past
 * ic up to icp). */
static __attribute__((noinline)) void ukf_wino_in(const tinyml_uk_params_t *p, const float *in,
                                                  wino_at_t at, float *v, ptrdiff_t vs) {
  const int32_t ic = p->ic, icp = wround8(ic);
  const float *src[16];
  for (int32_t r = 0; r < 4; ++r)
    for (int32_t s = 0; s < 4; ++s) {
      const int32_t iy = 2 * at.ty - p->pad_top + r, ix = 2 * at.tx - p->pad_left + s;
      const int inside = iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw;
      src[r * 4 + s] = inside ? in + (((size_t)at.n * p->ih + iy) * p->iw + ix) * ic : 0;
    }
  for (int32_t c0 = 0; c0 < icp; c0 += 8) {
    const __m256i m = lanes_below(ic - c0);
    const int whole = c0 + 8 <= ic;
    __m256 d[16], t[16];
    for (int i = 0; i < 16; ++i)
      d[i] = !src[i] ? _mm256_setzero_ps()
             : whole ? _mm256_loadu_ps(src[i] + c0)
                     : _mm256_maskload_ps(src[i] + c0, m);
    for (int s = 0; s < 4; ++s) /* columns: t = B^T d */
      WINO_IN(d[s], d[4 + s], d[8 + s], d[12 + s], t[s], t[4 + s], t[8 + s], t[12 + s]);
    for (int r = 0; r < 4; ++r) /* rows: V = t B */
      WINO_IN(t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3], d[4 * r], d[4 * r + 1],
              d[4 * r + 2], d[4 * r + 3]);
    for (int i = 0; i < 16; ++i) _mm256_storeu_ps(v + i * vs + c0, d[i]);
  }
}

/* Y of one tile from M (m + xi * ms + o) for channels [o_lo, o_hi), then
 * bias + Y through the epilogue into the outputs inside the image. */
static __attribute__((noinline)) void ukf_wino_out(const ukf_ctx_t *c, const float *m,
                                                   ptrdiff_t ms, wino_at_t at, float *out,
                                                   int32_t o_lo, int32_t o_hi) {
  const tinyml_uk_params_t *p = c->p;
  float *dst[4];
  for (int32_t r = 0; r < 2; ++r)
    for (int32_t s = 0; s < 2; ++s) {
      const int32_t oy = 2 * at.ty + r, ox = 2 * at.tx + s;
      dst[r * 2 + s] = oy < p->oh && ox < p->ow
                           ? out + (((size_t)at.n * p->oh + oy) * p->ow + ox) * c->pitch
                           : 0;
    }
  const __m256 lo = _mm256_set1_ps(c->lo), hi = _mm256_set1_ps(c->hi);
  for (int32_t o0 = o_lo; o0 < o_hi && o0 < p->oc; o0 += 8) {
    const __m256i mask = lanes_below(p->oc - o0);
    __m256 x[16], t[8], y[4];
    for (int i = 0; i < 16; ++i) x[i] = _mm256_loadu_ps(m + i * ms + o0);
    for (int s = 0; s < 4; ++s) /* columns: t = A^T M */
      WINO_OUT(x[s], x[4 + s], x[8 + s], x[12 + s], t[s], t[4 + s]);
    for (int r = 0; r < 2; ++r) /* rows: Y = t A */
      WINO_OUT(t[4 * r], t[4 * r + 1], t[4 * r + 2], t[4 * r + 3], y[2 * r], y[2 * r + 1]);
    const __m256 bias = _mm256_loadu_ps(c->bias + o0);
    for (int i = 0; i < 4; ++i) {
      if (!dst[i]) continue;
      float *o = dst[i] + o0;
      __m256 v = fepi(_mm256_add_ps(bias, y[i]), c->scale + o0, c->offset + o0,
                      c->res ? c->res + (o - c->out0) : 0, mask, lo, hi);
      _mm256_maskstore_ps(o, mask, v);
    }
  }
}

/* The block's GEMMs: M[xi] = V[xi] U[xi] over the block's nt tiles. */
static void wino_gemms(const ukf_ctx_t *c, const float *fixed, const float *v, float *m,
                       int32_t tiles, int32_t nt, int32_t o_lo, int32_t o_hi) {
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
  for (int xi = 0; xi < 16; ++xi) {
    g.weights = c->weights + (size_t)xi * p->ic * ocp;
    for (int32_t t = 0; t < nt; ++t) outs[t] = m + ((size_t)xi * tiles + t) * ocp;
    const frun_t run = {v + (size_t)xi * tiles * icp, nt, outs};
    fgemm_runs(&g, &run, 1, icp, 0, o_lo, o_hi);
  }
}

/* Workgroup wg's tiles [*t0, *t1) and channels [*o_lo, *o_hi): bands of
 * tiles, or, by fband's rule on the direct sum's weights (9 ic oc, not
 * U's 16), bands of 32 channels on every tile.  Each channel band
 * transforms every tile's input again, so Winograd takes them later than
 * the direct sum would on U's size.  Measured on 2 threads (docs/PERF.md):
 * channel bands for every layer of more channels than pixels ran
 * SqueezeNet's 13x13 convs (590 KB and 1 MB of U) 1.15x faster than 1
 * thread; with U's size as the weights, the 1 MB ones 1.43-1.76x, 10-25%
 * slower than with bands of tiles (1.74-1.88x, 1 thread the same). */
static void wino_band(const tinyml_uk_params_t *p, int32_t wg, int32_t count, int32_t *t0,
                      int32_t *t1, int32_t *o_lo, int32_t *o_hi) {
  const int32_t tiles = p->batch * ((p->oh + 1) / 2) * ((p->ow + 1) / 2);
  if (!fband_channels(p, 9LL * p->ic * p->oc_padded)) {
    uk_split(tiles, wg, count, t0, t1);
    *o_lo = 0;
    *o_hi = p->oc_padded;
    return;
  }
  *t0 = 0;
  *t1 = fchannel_band(p, wg, count, o_lo, o_hi) ? tiles : 0;
}

static void wino_f32(const ukf_ctx_t *c, const float *in, float *out, float *scratch,
                     int32_t wg, int32_t count) {
  const tinyml_uk_params_t *p = c->p;
  /* At most FB_MAX (wino_gemms' output rows); the compiler gives <= 96. */
  const int32_t tiles = p->wino_tiles < FB_MAX ? p->wino_tiles : FB_MAX;
  const int32_t icp = wround8(p->ic), ocp = p->oc_padded;
  const int32_t n16 = (ocp + 15) & ~15, th = (p->oh + 1) / 2, tw = (p->ow + 1) / 2;
  int32_t t0, t1, o_lo, o_hi;
  wino_band(p, wg, count, &t0, &t1, &o_lo, &o_hi);
  if (t0 >= t1) return; /* wg >= count has no scratch of its own (uk_abi.h) */
  float *fixed = scratch, *v = scratch + 3 * n16, *m = v + (size_t)16 * tiles * icp;
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
      ukf_wino_in(p, in, wino_tile(t0 + t, th, tw), v + (size_t)t * icp, (ptrdiff_t)tiles * icp);
    wino_gemms(c, fixed, v, m, tiles, nt, o_lo, o_hi);
    for (int32_t t = 0; t < nt; ++t)
      ukf_wino_out(c, m + (size_t)t * ocp, (ptrdiff_t)tiles * ocp, wino_tile(t0 + t, th, tw),
                   out, o_lo, o_hi);
    t0 += nt;
  }
}

#endif
