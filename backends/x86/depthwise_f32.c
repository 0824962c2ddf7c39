/* The f32 depthwise conv (tinyml_uk_depthwise_f32), built into both
 * bitcodes on its ISA's pixel kernels (depthwise_f32.h), and its rows,
 * which dwpw_f32 and pwdwpw_f32 (block_f32.c) compute into their scratch. */
#include "depthwise_f32.h"

/* The ISA's kernel on np (1 or 2) pixels (depthwise_f32.h). */
UK_INLINE void dw_pixels(const ukf_ctx_t *c, int np, const float *x, int32_t xstep,
                         const int32_t *xo, const int32_t *wo, int32_t taps, float *dst) {
#if defined(__AVX512F__)
  ukf_dw_avx512(c, np, x, xstep, xo, wo, taps, dst);
#else
  ukf_dw_avx2(c, np, x, xstep, xo, wo, taps, dst);
#endif
}

#if defined(__AVX512F__)
/* Whether the taps are kernel rows of 3 with input columns xstep apart
 * (dw_block3 in depthwise_f32_avx512.c): once a span, not a chunk. */
UK_INLINE int dw_rows3(int32_t xstep, const int32_t *xo, int32_t taps) {
  if (taps % 3 || xstep <= 0) return 0;
  for (int32_t t = 0; t < taps; t += 3)
    if (xo[t + 1] - xo[t] != xstep || xo[t + 2] - xo[t + 1] != xstep) return 0;
  return 1;
}

/* n pixels of a row (window_row's span; k: the ukf_ctx_t): DW_NP-pixel
 * chunks, then the 4-7 left as one chunk (a 7x7 image's 5 interior pixels
 * were 2 + 2 + 1: its depthwise conv 16% slower), the rest in pairs.
 * Cutting a 12-pixel run 6 + 6 instead of 8 + 4 was 5-8% slower.  Each
 * output is the same sum whichever path takes it. */
UK_INLINE void dw_run(const void *k, const float *x, int32_t xstep, const int32_t *xo,
                      const int32_t *wo, int32_t taps, int32_t n, float *dst) {
  const ukf_ctx_t *c = (const ukf_ctx_t *)k;
  const int32_t ic = c->p->ic;
  const int rows3 = n >= DW_NP_MIN && dw_rows3(xstep, xo, taps);
  int32_t i = 0;
  while (i + DW_NP_MIN <= n) {
    const int np = n - i < DW_NP ? n - i : DW_NP;
    ukf_dw_chunk_avx512(c, np, rows3, x + (size_t)i * xstep, xstep, xo, wo, taps,
                        dst + (size_t)i * ic);
    i += np;
  }
  for (; i + 1 < n; i += 2)
    dw_pixels(c, 2, x + (size_t)i * xstep, xstep, xo, wo, taps, dst + (size_t)i * ic);
  if (i < n) dw_pixels(c, 1, x + (size_t)i * xstep, xstep, xo, wo, taps, dst + (size_t)i * ic);
}

#else
/* n pixels of a row (window_row's span; k: the ukf_ctx_t), x at the
 * first one's origin, two at a time. */
UK_INLINE void dw_run(const void *k, const float *x, int32_t xstep, const int32_t *xo,
                      const int32_t *wo, int32_t taps, int32_t n, float *dst) {
  const ukf_ctx_t *c = (const ukf_ctx_t *)k;
  const int32_t ic = c->p->ic;
  int32_t i = 0;
  for (; i + 1 < n; i += 2)
    dw_pixels(c, 2, x + (size_t)i * xstep, xstep, xo, wo, taps, dst + (size_t)i * ic);
  if (i < n) dw_pixels(c, 1, x + (size_t)i * xstep, xstep, xo, wo, taps, dst + (size_t)i * ic);
}
#endif

/* Every tap, one channel at a time: kernels larger than UK_MAX_TAPS
 * (window_row's large; k: the ukf_ctx_t). */
static void dw_large(const void *k, const dw_src_t *s, int32_t oy, int32_t ox, float *dst) {
  const ukf_ctx_t *c = (const ukf_ctx_t *)k;
  const tinyml_uk_params_t *p = c->p;
  for (int32_t ch = 0; ch < p->ic; ++ch) {
    float acc = c->bias[ch];
    for (int32_t ky = 0; ky < p->kh; ++ky) {
      int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
      for (int32_t kx = 0; kx < p->kw; ++kx) {
        int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
        if (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw)
          acc = __builtin_fmaf(s->img[dw_at(s, iy) + (ptrdiff_t)ix * p->ic + ch],
                               c->weights[((size_t)ky * p->kw + kx) * p->ic + ch], acc);
      }
    }
    dst[ch] = ukf_epilogue(c, acc, ch);
  }
}

#if defined(__AVX512F__)
/* A whole output row of a 3-wide window at stride 1, dil 1, padding 1 on
 * both sides (iw == ow), when its interior pixels split into chunks only
 * (dw_run: 8s, then 4-7): the first chunk takes the left border pixel
 * and the last the right one (ukf_dw_edges_avx512), each the same sum as
 * alone.  Returns 0, doing nothing, for any other row. */
static int dw_row_edges(const ukf_ctx_t *c, const dw_plan_t *pl, const dw_src_t *s, int32_t oy,
                        int32_t x0, int32_t x1, float *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t n = p->ow - 2, ic = p->ic;
  if (p->kw != 3 || p->stride_w != 1 || p->dil_w != 1 || p->pad_left != 1 || p->iw != p->ow ||
      x0 != 0 || x1 != p->ow || pl->x_lo != 1 || pl->x_hi != p->ow - 1 || n < DW_NP_MIN ||
      (n % DW_NP && n % DW_NP < DW_NP_MIN) || pl->taps > UK_MAX_TAPS)
    return 0;
  int32_t io[UK_MAX_TAPS], iwo[UK_MAX_TAPS], y_first;
  const int32_t taps = dw_row_taps(p, s, oy * p->stride_h - p->pad_top, pl->taps, io, iwo,
                                   &y_first);
  if (taps == 0) return 0;
  UK_PATH(dw_f32_edges);
  const float *x = s->img + dw_at(s, y_first);
  for (int32_t i = 0; i < n;) {
    const int np = n - i < DW_NP ? n - i : DW_NP;
    const int el = i == 0, er = i + np == n;
    float *d = dst + (size_t)(1 + i) * ic;
    if (el || er)
      ukf_dw_edges_avx512(c, np, el, er, x + (size_t)i * ic, ic, io, iwo, taps, d);
    else
      ukf_dw_chunk_avx512(c, np, 1, x + (size_t)i * ic, ic, io, iwo, taps, d);
    i += np;
  }
  return 1;
}
#endif

/* Output row oy of one image, columns [x0, x1), into dst (ic floats a
 * pixel): window_row on the kernels above. */
void dw_row(const ukf_ctx_t *c, const dw_plan_t *pl, const dw_src_t *s, int32_t oy, int32_t x0,
            int32_t x1, float *dst) {
#if defined(__AVX512F__)
  if (dw_row_edges(c, pl, s, oy, x0, x1, dst)) return;
#endif
  UK_PATH(dw_f32_window_row);
  window_row(c->p, pl, s, oy, x0, x1, dst, c, dw_large, dw_run);
}

/* Output pixels [lo, hi), pixel q's channels at out + (q - lo) * ic. */
void dw_f32(const ukf_ctx_t *c, const float *in, int32_t lo, int32_t hi, float *out) {
  const tinyml_uk_params_t *p = c->p;
  dw_plan_t pl;
  dw_plan(p, &pl);
  const int32_t r1 = uk_rows_end(p, lo, hi);
  for (int32_t r = lo / p->ow; r < r1; ++r) {
    int32_t x0, x1;
    uk_row_span(p, r, lo, hi, &x0, &x1);
    const dw_src_t src = {in + (size_t)(r / p->oh) * p->ih * p->iw * p->ic, 0, 0,
                          p->iw * p->ic};
    dw_row(c, &pl, &src, r % p->oh, x0, x1, out + (size_t)(r * p->ow + x0 - lo) * p->ic);
  }
}

/* Floats of weights tinyml_uk_depthwise_f32 copies to the stack (36 KB):
 * a 3x3 window on up to 1024 channels. */
enum { DW_WCOPY = 9 * 1024 };

/* Workgroup wg's band of output pixels (uk_abi.h).  On a caller's input
 * off a vector's alignment (malloc gives 16 bytes past a 64-byte line),
 * the kernels shift their channel blocks onto it (dw_head, 16 channels on
 * AVX-512, 8 on AVX2); the weights, in the blob at a 64-byte line, are
 * then copied to the input's offset in a line so that their loads are
 * aligned too.  With the weights' loads split,
 * a 14x14x576 3x3 depthwise conv at +16 took 0.048 ms, 0.041 aligned
 * (PERF.md, "Buffer placement"). */
void tinyml_uk_depthwise_f32(const float *in, const void *blob, float *out, void *scratch,
                             int32_t wg, int32_t count) {
  (void)scratch;
  ukf_ctx_t c = ukf_ctx(blob);
  int32_t lo, hi;
  uk_band(c.p, wg, count, &lo, &hi);
  float wbuf[DW_WCOPY + 16] __attribute__((aligned(64)));
  const size_t n = (size_t)c.p->kh * c.p->kw * c.p->ic;
  const uintptr_t at = (uintptr_t)in & 63, vec = UK_ZMM ? 64 : 32;
  if (at % vec && c.p->ic % (int32_t)(vec / 4) == 0 && n <= DW_WCOPY) {
    __builtin_memcpy(wbuf + at / 4, c.weights, n * sizeof(float));
    c.weights = wbuf + at / 4;
  }
  dw_f32(&c, in, lo, hi, out + (size_t)lo * c.p->ic);
}
