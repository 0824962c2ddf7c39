/* The f32 conv's units: the driver (conv_f32.c, both bitcodes), its
 * register tiles (conv_f32_avx2.c or conv_f32_avx512.c, each in its
 * bitcode only), and what the kernels built on it use: Winograd
 * (wino_f32.c) runs its GEMMs on the tiles (fgemm_runs), dwpw and pwdwpw
 * (block_f32.c) their 1x1 convs (fgemm_rows), and the rings of conv rows
 * (window_rows.h) their first convs (conv_pixels).
 *
 * Conv (and matmul, as a 1x1 conv): a GEMM of pixels x taps by taps x
 * channels (weights packed in panels of 16 channels, uk_abi.h); where a
 * pixel's taps come from, and the loop nest, are in conv_f32.c.  The
 * AVX2 register tile is 6 pixels x 16 channels: 12 accumulators, two
 * weight vectors and a broadcast, 12 FMAs per tap (the AVX-512 build
 * replaces the tiles with conv_f32_avx512.c's 12 x 32).  Taps run
 * innermost, in pieces (fpiece_t) with the accumulators in registers
 * across them.  Accumulators start at the bias; with more than one tap
 * chunk the partial sums wait in the output.  The last chunk applies the
 * epilogue (scale, offset, clamp) and stores. */
#ifndef TINYML_BACKENDS_X86_CONV_F32_H
#define TINYML_BACKENDS_X86_CONV_F32_H

#include "ukernels_common.h"

/* The register tile: MR pixels x OC_TILE channels, over chunks of KC
 * taps (conv_f32.c says why 512). */
#if defined(__AVX512F__)
enum { MR = 12, KC = TINYML_UK_F32_KC, OC_TILE = 32 };
#else
enum { MR = 6, KC = TINYML_UK_F32_KC, OC_TILE = 16 };
#endif
/* A tile spanning two channel bands would race (fchannel_band). */
_Static_assert(TINYML_UK_F32_GROUP % OC_TILE == 0, "a channel group is whole register tiles");

/* FB_MAX: pixels per run, at most (bounds the output pointer list).
 * FP_MAX: pieces per tap chunk when reading in place. */
enum { FB_MAX = TINYML_UK_F32_BLOCK, FP_MAX = 16 };

/* FB_ONCE: pixels of a conv with channel bands that share one pass of the
 * weights, at most (conv_f32.c, fgemm_rows_once). */
enum { FB_ONCE = 4 * FB_MAX };

/* A piece of a tap chunk: taps [t, t + len) of the chunk sit at
 * a + off + i * lda for pixel i (a, lda: the tile's).  An im2col column is
 * one piece; a pixel read straight from the image has one per kernel row
 * (conv_f32.c). */
typedef struct fpiece {
  ptrdiff_t off;
  int32_t len;
} fpiece_t;

/* A read prefetch `floats` floats from p: the next block's weights (past
 * the array after the last block) or the next tile's input rows (another
 * buffer), hence UK_AT; a prefetch never faults. */
UK_INLINE void ftile_prefetch_at(const float *p, ptrdiff_t floats) {
  _mm_prefetch((const char *)UK_AT(p, floats), _MM_HINT_T0);
}

/* Before a tile's taps: its output rows are written only after them, and
 * the residual read then, both by then from memory unless asked for now,
 * so that the FMAs hide the latency (a prefetch for writing on the first
 * chunk; the partial sums of later chunks are already in cache).  np
 * pixels' nv vectors of `lanes` channels from o0. */
UK_INLINE void ftile_prefetch_out(const ukf_ctx_t *c, int np, int nv, int lanes,
                                  float *const *outs, int32_t o0, int first, int last) {
  if (last && c->res)
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v)
        _mm_prefetch((const char *)(c->res + (outs[i] + o0 + lanes * v - c->out0)), _MM_HINT_T0);
  if (first)
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) __builtin_prefetch(outs[i] + o0 + lanes * v, 1, 3);
}

/* One tile (np pixels from `a`, channels [o0, o0 + OC_TILE), taps [k0,
 * k0 + kc) in pieces); `first`/`last`: the tap chunk is the first/last,
 * so the tile starts from the bias/applies the epilogue. */
#if defined(__AVX512F__)
void ukf_tile_avx512(const ukf_ctx_t *c, int np, const float *a, int32_t lda, const fpiece_t *pc,
                     int npc, int32_t k0, float *const *outs, int32_t o0, int first, int last);
#else
void ukf_tile_avx2(const ukf_ctx_t *c, int np, const float *a, int32_t lda, const fpiece_t *pc,
                   int npc, int32_t k0, float *const *outs, int32_t o0, int first, int last);
#endif

/* Workgroup wg's band (uk_abi.h): output pixels [*lo, *hi) and channels
 * [*o_lo, *o_hi).  Bands of pixels keep each thread on the pixels it had
 * in the layers around (which it wrote or will read: from its own cache,
 * not the other core's), but each band reads every weight.  So with more
 * channels than pixels and weights of BAND_W_FLOATS or more, bands are
 * groups of 32 channels instead: two panels, and whole register tiles of
 * any width up to 32 (a tile spanning two bands would have both keep
 * partial sums in the same outputs).  Measured on 2 threads (docs/
 * PERF.md): pixel bands made MobileNetV2's 14x14 and 7x7 convs and
 * SqueezeNet's 13x13 ones 15-20% faster, but its 1.2-1.6 MB 7x7 layers
 * and ResNet-50's 2.4-9.4 MB ones slower. */
enum { BAND_W_FLOATS = 1 << 18 }; /* 1 MB */

/* Interior columns: every tap of output column ox in [*x_lo, *x_hi) lies
 * inside the image horizontally (convs and depthwise convs alike). */
UK_INLINE void finterior(const tinyml_uk_params_t *p, int32_t *x_lo, int32_t *x_hi) {
  int32_t a = 0, b;
  while (a < p->ow && a * p->stride_w - p->pad_left < 0) ++a;
  for (b = a; b < p->ow && b * p->stride_w - p->pad_left + (p->kw - 1) * p->dil_w < p->iw;
       ++b) {
  }
  *x_lo = a;
  *x_hi = b;
}

/* Whether a conv whose weights take w_floats bands its channels. */
UK_INLINE int fband_channels(const tinyml_uk_params_t *p, int64_t w_floats) {
  return p->oc > p->batch * p->oh * p->ow && w_floats >= BAND_W_FLOATS;
}

/* Workgroup wg's band of channel groups [*o_lo, *o_hi) (uk_abi.h,
 * TINYML_UK_F32_GROUP); returns whether it has any. */
UK_INLINE int fchannel_band(const tinyml_uk_params_t *p, int32_t wg, int32_t count,
                            int32_t *o_lo, int32_t *o_hi) {
  const int32_t g = TINYML_UK_F32_GROUP;
  int32_t a, b;
  uk_split((p->oc_padded + g - 1) / g, wg, count, &a, &b);
  *o_lo = a * g;
  *o_hi = b * g < p->oc_padded ? b * g : p->oc_padded;
  return a < b;
}

/* A run of n pixels: pixel i's taps from a + i * lda (in place or as
 * columns), its output row at outs[i]. */
typedef struct frun {
  const float *a;
  int32_t n;
  float *const *outs;
} frun_t;

/* The runs' pixels into channels [o_lo, o_hi) (conv_f32.c). */
void fgemm_runs(const ukf_ctx_t *c, const frun_t *runs, int nr, int32_t lda, int inplace,
                int32_t o_lo, int32_t o_hi);

/* One run of n pixels (fgemm_runs). */
UK_INLINE void fgemm(const ukf_ctx_t *c, const float *a, int32_t lda, int inplace, int32_t n,
                     float *const *outs, int32_t o_lo, int32_t o_hi) {
  const frun_t r = {a, n, outs};
  fgemm_runs(c, &r, 1, lda, inplace, o_lo, o_hi);
}

/* n pixels whose outputs follow each other from dst: runs of FB_MAX. */
UK_INLINE void fgemm_rows(const ukf_ctx_t *c, const float *a, int32_t lda, int inplace,
                          int32_t n, float *dst, int32_t o_lo, int32_t o_hi) {
  float *outs[FB_MAX];
  const int32_t oc = c->pitch;
  for (int32_t b0 = 0; b0 < n; b0 += FB_MAX) {
    const int32_t nb = n - b0 < FB_MAX ? n - b0 : FB_MAX;
    for (int32_t i = 0; i < nb; ++i) outs[i] = dst + (size_t)(b0 + i) * oc;
    fgemm(c, a + (size_t)b0 * lda, lda, inplace, nb, outs, o_lo, o_hi);
  }
}

/* Output pixels [lo, hi) (batch * oh rows, flattened) into channels
 * [o_lo, o_hi), pixel (r, ox) at out + ((r - row0) * ow + ox) * pitch,
 * with `cols` for ccap im2col columns (conv_f32.c). */
void conv_pixels(const ukf_ctx_t *c, const float *in, float *out, int32_t row0, float *cols,
                 int32_t ccap, int32_t lo, int32_t hi, int32_t o_lo, int32_t o_hi);

#endif
