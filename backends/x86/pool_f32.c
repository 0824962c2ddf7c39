/* f32 max pool (TINYML_UK_MAXPOOL_F32), alone or on a conv's rows as the
 * conv computes them (TINYML_UK_CONVPOOL_F32), built into both bitcodes
 * on its ISA's pixels (pool_f32.h): AVX2 (8 channels a vector, in
 * pool_f32_avx2.c) and AVX-512 (16, pool_f32_avx512.c).  Each output pixel reads its window straight from the
 * NHWC input, clipped to the image, so there is no padded copy.  Clipping
 * is exact: TOSA pads a max pool with the lowest float and starts each
 * max there too, so a padding tap changes nothing once the kernel starts
 * from it.
 *
 * The result must be the Linalg path's bit for bit.  There every tap is
 * arith.maximumf, which LLVM lowers for x86 (LowerFMINIMUM_FMAXIMUM) as:
 * the new tap x first when its sign bit is set, else the running max; maxps
 * of the pair, which returns its second operand when the two are equal or
 * either is NaN (so +0 wins over -0); then the first operand instead when
 * it is NaN.  Over a window that is the IEEE maximum when no tap is NaN;
 * otherwise a NaN that depends on the order of the NaNs and their signs (a
 * positive NaN stays, a negative one gives way to the next NaN), which the
 * tests pin down against the Linalg path.
 *
 * max_exact() is that sequence, five or six instructions a tap.  With
 * neither NaN nor infinity among the taps, any order gives the same
 * maximum, and the kernel takes a quicker one: vrangeps on AVX-512 (an
 * IEEE maximum that puts -0 below +0, but skips quiet NaNs), and on AVX2
 * the float bits as integers, whose signed maximum orders the non-negative
 * floats and whose unsigned minimum the negative ones (fast_end() picks).
 * Alongside, it sums tap * 0 over the taps, which is NaN exactly when one
 * is NaN or infinite; a block of channels with such a sum is done again
 * with max_exact().  (Infinities go that way too: without -inf among
 * them, the taps' maximum is also their maximum with the lowest float, so
 * the quick path can start from the first tap.) */
#include "pool_f32.h"

/* The scalar max_exact, for windows of more than UK_MAX_TAPS taps. */
UK_INLINE float max_exact1(float acc, float x) {
  uint32_t bits;
  __builtin_memcpy(&bits, &x, 4);
  const float a = bits >> 31 ? x : acc, b = bits >> 31 ? acc : x;
  const float m = a > b ? a : b; /* maxss */
  return a != a ? a : m;
}

/* Every tap, one channel at a time (window_row's large; k: the pool's
 * parameters). */
static void pool_large(const void *k, const dw_src_t *s, int32_t oy, int32_t ox, float *dst) {
  const tinyml_uk_params_t *p = (const tinyml_uk_params_t *)k;
  for (int32_t ch = 0; ch < p->ic; ++ch) {
    float acc = POOL_LOWEST;
    for (int32_t ky = 0; ky < p->kh; ++ky) {
      const int32_t iy = oy * p->stride_h - p->pad_top + ky;
      for (int32_t kx = 0; kx < p->kw; ++kx) {
        const int32_t ix = ox * p->stride_w - p->pad_left + kx;
        if (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw)
          acc = max_exact1(acc, s->img[dw_at(s, iy) + (ptrdiff_t)ix * p->ic + ch]);
      }
    }
    dst[ch] = acc;
  }
}

/* The ISA's pixels (pool_f32.h). */
UK_INLINE void pool_pixels(const float *x, int32_t xstep, const int32_t *xo, int32_t taps,
                           int32_t n, int32_t ic, float *dst) {
#if UK_ZMM
  ukf_maxpool_avx512(x, xstep, xo, taps, n, ic, dst);
#else
  ukf_maxpool_avx2(x, xstep, xo, taps, n, ic, dst);
#endif
}

/* window_row's span: n pixels, k the pool's parameters; a pool has no
 * weights. */
UK_INLINE void pool_span(const void *k, const float *x, int32_t xstep, const int32_t *io,
                         const int32_t *iwo, int32_t taps, int32_t n, float *dst) {
  (void)iwo;
  pool_pixels(x, xstep, io, taps, n, ((const tinyml_uk_params_t *)k)->ic, dst);
}

/* Output row oy of one image, columns [x0, x1), into dst: window_row on
 * the kernels above (a pool's dilations are 1). */
static void pool_row(const tinyml_uk_params_t *p, const dw_plan_t *pl, const dw_src_t *s,
                     int32_t oy, int32_t x0, int32_t x1, float *dst) {
  window_row(p, pl, s, oy, x0, x1, dst, p, pool_large, pool_span);
}

/* Output pixels [lo, hi) of workgroup wg (uk_abi.h), row by row. */
void tinyml_uk_maxpool_f32(const float *in, const void *blob, float *out, void *scratch,
                           int32_t wg, int32_t count) {
  (void)scratch;
  const tinyml_uk_params_t *p = (const tinyml_uk_params_t *)blob;
  dw_plan_t pl;
  dw_plan(p, &pl); /* a pool's dilations are 1 (ukernel_pool.c) */
  int32_t lo, hi;
  uk_band(p, wg, count, &lo, &hi);
  const int32_t r1 = uk_rows_end(p, lo, hi);
  for (int32_t r = lo / p->ow; r < r1; ++r) {
    int32_t x0, x1;
    uk_row_span(p, r, lo, hi, &x0, &x1);
    const dw_src_t src = {in + (size_t)(r / p->oh) * p->ih * p->iw * p->ic, 0, 0,
                          p->iw * p->ic};
    pool_row(p, &pl, &src, r % p->oh, x0, x1, out + ((size_t)r * p->ow + x0) * p->ic);
  }
}

/* A conv and the max pool that reads its result (uk_abi.h): the pool's
 * output rows in order, the conv rows each row's windows need computed
 * into a window of the pool's kh rows (xwin_t), each once per band. */
void tinyml_uk_convpool_f32(const float *in, const void *blob, float *out, void *scratch,
                            int32_t wg, int32_t count) {
  const ukf_ctx_t cv = ukf_ctx(blob);
  const tinyml_uk_params_t *pp =
      (const tinyml_uk_params_t *)(const void *)((const uint8_t *)blob + cv.p->next_off);
  const int32_t span = pp->kh, row = pp->iw * pp->ic;
  float *ring = (float *)uk_scratch(scratch, cv.p, wg);
  xwin_t w = {&cv, in, ring, ring + (size_t)span * row, tinyml_uk_window_cols(cv.p),
              {ring, 0, span, row}, -1, 0};
  dw_plan_t pl;
  dw_plan(pp, &pl);
  int32_t lo, hi;
  uk_band(pp, wg, count, &lo, &hi);
  const int32_t r1 = uk_rows_end(pp, lo, hi);
  for (int32_t r = lo / pp->ow; r < r1; ++r) {
    const int32_t oy = r % pp->oh, iy0 = oy * pp->stride_h - pp->pad_top;
    const int32_t ya = iy0 > 0 ? iy0 : 0, yb = iy0 + span < pp->ih ? iy0 + span : pp->ih;
    int32_t x0, x1;
    uk_row_span(pp, r, lo, hi, &x0, &x1);
    xwin_slide(&w, r / pp->oh, ya, yb);
    pool_row(pp, &pl, &w.src, oy, x0, x1, out + ((size_t)r * pp->ow + x0) * pp->ic);
  }
}
