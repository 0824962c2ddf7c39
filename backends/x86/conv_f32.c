/* The f32 conv driver (tinyml_uk_conv_f32, _conv_add_f32, _convcat_f32),
 * built into both bitcodes on its ISA's register tiles (conv_f32.h).
 *
 * A GEMM of pixels x taps by taps x channels.  A pixel's taps come from
 * one of three places:
 * - the input row itself (1x1, stride 1, no padding: scratch_bytes 0);
 * - the image, read in place, for a pixel whose every tap lies inside it
 *   (dilation 1 across): kernel row ky is one contiguous run of kw * ic
 *   floats, so a tap chunk is at most kh pieces (fpiece_t), and the next
 *   pixel of the output row is stride_w * ic floats on.  This saves the
 *   im2col copy, which costs as much as the FMAs when k is small (27 for a
 *   3-channel 3x3 conv);
 * - an im2col column in scratch, for pixels that touch the padding, or
 *   all pixels when a row's interior ones would fill their tiles poorly
 *   (finplace_pays).  These are gathered from many rows into blocks, so
 *   that they too fill whole tiles (a 1-pixel tile has too few
 *   accumulators to hide FMA latency); each tile row then has its own
 *   output pointer.
 * The loop nest over runs of pixels (fgemm_runs) is tap chunk (KC taps of
 * a tile's panels, 32-64 KB, stay in cache across the runs' tiles) > panel
 * > run > tile, taps innermost; interior rows read in place go in batches
 * of runs up to FB_MAX pixels.  KC = 512: with 256, the partial sums'
 * round trips and restarts cost ResNet-50 4% more; 576, 768 and 1024
 * measured the same as 512.  A run of n pixels is cut into ceil(n / MR) tiles of nearly
 * equal size (49: 10, 10, 10, 10, 9, not 12, 12, 12, 12, 1).
 *
 * Every output is the bias, then the same FMAs in tap order, with partial
 * sums stored between tap chunks as exact floats, whichever source, tile,
 * run or band it falls in: results do not depend on the workgroup count
 * nor on the ISA's tile and chunk sizes. */
#include "conv_f32.h"
#include "wino_f32.h"

/* The ISA's tile (conv_f32.h). */
UK_INLINE void fconv_tile(const ukf_ctx_t *c, int np, const float *a, int32_t lda,
                          const fpiece_t *pc, int npc, int32_t k0, float *const *outs,
                          int32_t o0, int first, int last) {
#if defined(__AVX512F__)
  ukf_tile_avx512(c, np, a, lda, pc, npc, k0, outs, o0, first, last);
#else
  ukf_tile_avx2(c, np, a, lda, pc, npc, k0, outs, o0, first, last);
#endif
}

UK_INLINE void fcopy(const float *src, float *dst, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}

UK_INLINE void fzero(float *dst, int32_t n) {
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_setzero_ps());
  for (; i < n; ++i) dst[i] = 0.0f;
}

/* The k taps of output pixel (oy, ox) of image `img`, in OHWI order, zero
 * outside the image (TOSA pads float convs with 0). */
static void fim2col(const tinyml_uk_params_t *p, const float *img, int32_t oy, int32_t ox,
                    float *col) {
  const int32_t ic = p->ic;
  const int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
  const int row_inside = p->dil_w == 1 && ix0 >= 0 && ix0 + p->kw - 1 < p->iw;
  for (int32_t ky = 0; ky < p->kh; ++ky) {
    const int32_t iy = iy0 + ky * p->dil_h, run = p->kw * ic;
    float *c = col + (size_t)ky * run;
    if (iy < 0 || iy >= p->ih) {
      fzero(c, run);
      continue;
    }
    const float *row = img + (size_t)iy * p->iw * ic;
    if (row_inside) {
      fcopy(row + (size_t)ix0 * ic, c, run);
      continue;
    }
    for (int32_t kx = 0; kx < p->kw; ++kx, c += ic) {
      int32_t ix = ix0 + kx * p->dil_w;
      if (ix < 0 || ix >= p->iw)
        fzero(c, ic);
      else
        fcopy(row + (size_t)ix * ic, c, ic);
    }
  }
}

static void fband(const tinyml_uk_params_t *p, int32_t wg, int32_t count, int32_t *lo,
                  int32_t *hi, int32_t *o_lo, int32_t *o_hi) {
  if (!fband_channels(p, (int64_t)p->k * p->oc_padded)) {
    uk_band(p, wg, count, lo, hi);
    *o_lo = 0;
    *o_hi = p->oc_padded;
    return;
  }
  *lo = 0;
  *hi = fchannel_band(p, wg, count, o_lo, o_hi) ? p->batch * p->oh * p->ow : 0;
}

/* Taps [k0, k0 + kc) of a pixel read in place, as offsets from its
 * origin (its top-left tap): kernel row ky holds taps [ky * run, +run). */
static int fpieces_inplace(const tinyml_uk_params_t *p, int32_t k0, int32_t kc, fpiece_t *pc) {
  const int32_t run = p->kw * p->ic, k1 = k0 + kc;
  const ptrdiff_t row = (ptrdiff_t)p->dil_h * p->iw * p->ic;
  int n = 0;
  for (int32_t ky = k0 / run; ky < p->kh && ky * run < k1; ++ky) {
    const int32_t t0 = ky * run, s = k0 > t0 ? k0 : t0, e = k1 < t0 + run ? k1 : t0 + run;
    pc[n].off = ky * row + (s - t0);
    pc[n++].len = e - s;
  }
  return n;
}

/* The runs' pixels into channels [o_lo, o_hi).  Every run's tiles pass
 * under one tap chunk of a panel before the next, so a chunk's weights
 * are fetched once for all the runs' pixels, not once per run. */
void fgemm_runs(const ukf_ctx_t *c, const frun_t *runs, int nr, int32_t lda, int inplace,
                int32_t o_lo, int32_t o_hi) {
  const int32_t k = c->p->k;
  for (int32_t k0 = 0; k0 < k; k0 += KC) {
    const int32_t kc = k - k0 < KC ? k - k0 : KC;
    const int first = k0 == 0, last = k0 + kc == k;
    fpiece_t pc[FP_MAX] = {{k0, kc}};
    const int npc = inplace ? fpieces_inplace(c->p, k0, kc, pc) : 1;
    for (int32_t o0 = o_lo; o0 < o_hi; o0 += OC_TILE) {
      for (int r = 0; r < nr; ++r) {
        const int32_t n = runs[r].n, nt = (n + MR - 1) / MR;
        if (nt == 0) continue;
        const int32_t base = n / nt, extra = n % nt;
        for (int32_t t = 0, i = 0; t < nt; ++t) {
          const int np = base + (t < extra);
          fconv_tile(c, np, runs[r].a + (size_t)i * lda, lda, pc, npc, k0, runs[r].outs + i, o0,
                     first, last);
          i += np;
        }
      }
    }
  }
}

/* A conv with channel bands (more channels than pixels, fband_channels):
 * its n <= FB_ONCE pixels as runs of FB_MAX under one pass of the
 * weights (fgemm_runs), not one pass per run: SqueezeNet-1.1's last conv
 * (169 pixels, 2 MB of weights, more than L2) read them twice from L3.
 * Such convs do not fetch the next tile's rows (c->rows_ahead 0): their
 * few pixels' rows stay in cache while the weights stream, and fetching
 * ahead made them 3-5% slower. */
static void fgemm_rows_once(const ukf_ctx_t *c, const float *a, int32_t lda, int32_t n,
                            float *dst, int32_t o_lo, int32_t o_hi) {
  float *outs[FB_ONCE];
  frun_t runs[FB_ONCE / FB_MAX];
  int nr = 0;
  for (int32_t i = 0; i < n; ++i) outs[i] = dst + (size_t)i * c->pitch;
  for (int32_t b0 = 0; b0 < n; b0 += FB_MAX, ++nr) {
    runs[nr].a = a + (size_t)b0 * lda;
    runs[nr].n = n - b0 < FB_MAX ? n - b0 : FB_MAX;
    runs[nr].outs = outs + b0;
  }
  fgemm_runs(c, runs, nr, lda, 0, o_lo, o_hi);
}

/* Pixels that need im2col, gathered into a block of up to `cap`. */
typedef struct fgather {
  float *cols;
  int32_t n, cap;
  float *outs[FB_MAX];
} fgather_t;

static void fgather_flush(const ukf_ctx_t *c, fgather_t *g, int32_t o_lo, int32_t o_hi) {
  fgemm(c, g->cols, c->p->k, 0, g->n, g->outs, o_lo, o_hi);
  g->n = 0;
}

/* Interior runs read in place, batched up to FB_MAX pixels so that the
 * short rows of a small image share each tap chunk's weights (fgemm_runs):
 * a 28-pixel row alone has 3 tiles per chunk and panel, 4 rows 9. */
typedef struct finplace {
  frun_t runs[FB_MAX];
  int nr;
  int32_t n, lda;
  float *outs[FB_MAX];
} finplace_t;

static void finplace_flush(const ukf_ctx_t *c, finplace_t *b, int32_t o_lo, int32_t o_hi) {
  fgemm_runs(c, b->runs, b->nr, b->lda, 1, o_lo, o_hi);
  b->nr = 0;
  b->n = 0;
}

/* n pixels from a (b->lda apart) whose outputs follow each other from dst;
 * a run never straddles two batches unless it is longer than one. */
static void finplace_add(const ukf_ctx_t *c, finplace_t *b, const float *a, int32_t n,
                         float *dst, int32_t o_lo, int32_t o_hi) {
  while (n > 0) {
    const int32_t m = n < FB_MAX ? n : FB_MAX;
    if (b->n + m > FB_MAX) finplace_flush(c, b, o_lo, o_hi);
    frun_t *r = &b->runs[b->nr++];
    r->a = a;
    r->n = m;
    r->outs = b->outs + b->n;
    for (int32_t i = 0; i < m; ++i) b->outs[b->n + i] = dst + (size_t)i * c->pitch;
    b->n += m;
    a += (size_t)m * b->lda;
    dst += (size_t)m * c->pitch;
    n -= m;
  }
}

/* Whether a row's n interior pixels are read in place, in a call over
 * `rows` output rows.  A run's tiles never take the next row's pixels, so
 * the run must fill its tiles to at least 3/4 of MR; otherwise every pixel
 * goes through the im2col blocks, whose tiles are full.  A stride-2 conv's
 * 28 -> 14 rows (13 interior pixels) made two half tiles, each fetching its
 * weights from L2 for half the multiply-adds: gathered, ResNet-50's two
 * such convs took 6-8% less time.  Kept in place: SqueezeNet's 13x13
 * layers (11 of 12), conv1's 109 of 120 (gathering its 3-channel taps cost
 * it 40%), and every row of a one-row call (the window paths' first convs,
 * pwdwpw_f32 and convpool_f32), whose blocks could hold no other row's
 * pixels; sparing im2col matters most when channel bands each gather every
 * pixel.  A run still needs min(MR, 8) pixels (6 on AVX2, whose one
 * short tile would pass the 3/4 test with 5). */
static int finplace_pays(int32_t n, int32_t rows) {
  const int32_t tiles = (n + MR - 1) / MR;
  return n >= (MR < 8 ? MR : 8) && (rows == 1 || 4 * n >= 3 * tiles * MR);
}

/* Output pixels [lo, hi) (batch * oh rows, flattened) into channels
 * [o_lo, o_hi), row by row: interior runs read in place where
 * finplace_pays says so, every other pixel goes through gathered im2col
 * blocks of up to `ccap` columns in `cols` (ccap 0: the input rows are
 * the columns).  Pixel (r, ox) goes to out + ((r - row0) * ow + ox) *
 * pitch, so a caller may point `out` at row row0's place (pwdwpw_f32's
 * window of rows). */
void conv_pixels(const ukf_ctx_t *c, const float *in, float *out, int32_t row0, float *cols,
                 int32_t ccap, int32_t lo, int32_t hi, int32_t o_lo, int32_t o_hi) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t k = p->k, pitch = c->pitch, ic = p->ic;
  if (ccap == 0) {
    const float *a = in + (size_t)lo * k;
    float *dst = out + (size_t)(lo - row0 * p->ow) * pitch;
    ukf_ctx_t d = *c;
    d.rows_ahead = !fband_channels(p, (int64_t)k * p->oc_padded);
    if (!d.rows_ahead && hi - lo <= FB_ONCE)
      fgemm_rows_once(&d, a, k, hi - lo, dst, o_lo, o_hi);
    else
      fgemm_rows(&d, a, k, 0, hi - lo, dst, o_lo, o_hi);
    return;
  }
  fgather_t g;
  g.cols = cols;
  g.n = 0;
  g.cap = ccap < FB_MAX ? ccap : FB_MAX;
  int32_t x_lo, x_hi;
  finterior(p, &x_lo, &x_hi);
  const int32_t r1 = uk_rows_end(p, lo, hi);
  const int inplace =
      p->dil_w == 1 && p->kh <= FP_MAX && finplace_pays(x_hi - x_lo, r1 - lo / p->ow);
  finplace_t batch;
  batch.nr = 0;
  batch.n = 0;
  batch.lda = p->stride_w * ic;
  for (int32_t r = lo / p->ow; r < r1; ++r) {
    const int32_t oy = r % p->oh, iy0 = oy * p->stride_h - p->pad_top;
    const float *img = in + (size_t)(r / p->oh) * p->ih * p->iw * ic;
    const int inside = iy0 >= 0 && iy0 + (p->kh - 1) * p->dil_h < p->ih;
    const int row_in = inplace && inside;
    if (row_in)
      UK_PATH(conv_f32_inplace);
    else if (inside)
      UK_PATH(conv_f32_gathered);
    int32_t x0, x1;
    uk_row_span(p, r, lo, hi, &x0, &x1);
    for (int32_t ox = x0; ox < x1;) {
      float *dst = out + ((size_t)(r - row0) * p->ow + ox) * pitch;
      if (row_in && ox >= x_lo && ox < x_hi) {
        const int32_t e = x_hi < x1 ? x_hi : x1;
        const float *a = img + ((size_t)iy0 * p->iw + ox * p->stride_w - p->pad_left) * ic;
        finplace_add(c, &batch, a, e - ox, dst, o_lo, o_hi);
        ox = e;
        continue;
      }
      fim2col(p, img, oy, ox, g.cols + (size_t)g.n * k);
      g.outs[g.n++] = dst;
      if (g.n == g.cap) fgather_flush(c, &g, o_lo, o_hi);
      ++ox;
    }
  }
  finplace_flush(c, &batch, o_lo, o_hi);
  fgather_flush(c, &g, o_lo, o_hi);
}

/* Workgroup wg's band (fband) of a conv; its scratch is `cols`. */
static void conv_f32(const ukf_ctx_t *c, const float *in, float *out, float *cols, int32_t wg,
                     int32_t count) {
  const tinyml_uk_params_t *p = c->p;
  int32_t lo, hi, o_lo, o_hi;
  if (p->wino_tiles > 0) {
    wino_f32(c, in, out, cols, wg, count);
    return;
  }
  fband(p, wg, count, &lo, &hi, &o_lo, &o_hi);
  const int32_t ccap = p->scratch_bytes / (4 * p->k);
  conv_pixels(c, in, out, 0, cols, ccap, lo, hi, o_lo, o_hi);
}

void tinyml_uk_conv_f32(const float *in, const void *blob, float *out, void *scratch,
                        int32_t wg, int32_t count) {
  const ukf_ctx_t c = ukf_ctx(blob);
  conv_f32(&c, in, out, (float *)uk_scratch(scratch, c.p, wg), wg, count);
}

/* tinyml_uk_conv_f32, then + res[i] before the clamp (uk_abi.h). */
void tinyml_uk_conv_add_f32(const float *in, const void *blob, float *out, void *scratch,
                            int32_t wg, int32_t count, const float *res) {
  ukf_ctx_t c = ukf_ctx(blob);
  c.res = res;
  c.out0 = out;
  conv_f32(&c, in, out, (float *)uk_scratch(scratch, c.p, wg), wg, count);
}

/* Two convs of one input whose outputs a channel concat joins
 * (uk_abi.h, convcat_f32): each writes its channels of every output
 * pixel, the first from channel 0, the second after it, so the concat's
 * copies never run.  They take turns in the workgroup's scratch. */
void tinyml_uk_convcat_f32(const float *in, const void *blob, float *out, void *scratch,
                           int32_t wg, int32_t count) {
  const tinyml_uk_params_t *h = (const tinyml_uk_params_t *)blob;
  const uint8_t *a = (const uint8_t *)blob + h->next_off;
  ukf_ctx_t ca = ukf_ctx(a), cb = ukf_ctx(a + ca.p->next_off);
  ca.pitch = cb.pitch = ca.p->oc + cb.p->oc;
  float *cols = (float *)uk_scratch(scratch, h, wg);
  conv_f32(&ca, in, out, cols, wg, count);
  conv_f32(&cb, in, out + ca.p->oc, cols, wg, count);
}
