/* The int8 depthwise conv (tinyml_uk_depthwise_s8), built into both
 * bitcodes on its ISA's pixel kernels (depthwise_s8.h). */
#include "depthwise_s8.h"

#if UK_ZMM
typedef const rq16_t *dw_rq_t;

/* Every channel block's rescale constants into q, or null when there are
 * too many blocks or a shift is outside rq16's range. */
UK_INLINE dw_rq_t dw_rq(const uk_ctx_t *c, rq16_t *q) {
  const int32_t ic = c->p->ic;
  if (ic > 16 * UK_DW_RQ_BLOCKS) return 0;
  for (int32_t c0 = 0; c0 < ic; c0 += 16)
    if (!rq16_at(c, c0, q + c0 / 16)) return 0;
  return q;
}
#else
typedef const void *dw_rq_t;
#endif

/* The ISA's kernel on one pixel's taps. */
UK_INLINE void dw_pixel(const uk_ctx_t *c, const int8_t *img, const int32_t *xo, const int32_t *wo,
                        int32_t taps, int8_t *dst, dw_rq_t q) {
#if UK_ZMM
  uk_dw_avx512(c, img, xo, wo, taps, dst, q);
#else
  (void)q;
  uk_dw_avx2(c, img, xo, wo, taps, dst);
#endif
}

/* The int8 depthwise conv, on the f32 one's dw_plan (window_rows.h):
 * pixels whose taps all lie inside the image take the plan's tap offsets
 * from their top-left tap (uk_dw_taps' order), so they skip building
 * their own: vww_96_int8's depthwise convs spent nearly a third of their
 * time on the lists (perf, cpu-clock samples). */
void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch,
                            int32_t wg, int32_t count) {
  (void)scratch;
  uk_ctx_t c;
  int32_t lo, hi;
  const tinyml_uk_params_t *p = uk_dw_start(&c, blob, wg, count, &lo, &hi);
  if (uk_dw_large_generic(&c, in, out, lo, hi)) return;
  int32_t xo[UK_MAX_TAPS], wo[UK_MAX_TAPS];
  dw_plan_t pl;
  dw_plan(p, &pl);
#if UK_ZMM
  rq16_t qs[UK_DW_RQ_BLOCKS];
  const dw_rq_t rq = dw_rq(&c, qs);
#else
  const dw_rq_t rq = 0;
#endif
  uk_pos_t at = uk_pos_at(p, lo);
  for (int32_t q = lo; q < hi; ++q, uk_pos_next(p, &at)) {
    const int8_t *img = in + (size_t)at.n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)q * p->oc;
    const int32_t iy = at.oy * p->stride_h - p->pad_top;
    if (iy >= 0 && iy + (p->kh - 1) * p->dil_h < p->ih && at.ox >= pl.x_lo && at.ox < pl.x_hi) {
      const int8_t *src = img + ((size_t)iy * p->iw + at.ox * p->stride_w - p->pad_left) * p->ic;
#if UK_ZMM
      if (p->ic == 8 && q + 1 < hi && at.ox + 1 < pl.x_hi) {
        uk_dw8x2_avx512(&c, src, p->stride_w * 8, pl.io, pl.iwo, pl.taps, dst);
        ++q; /* and the next pixel */
        uk_pos_next(p, &at);
        continue;
      }
#endif
      dw_pixel(&c, src, pl.io, pl.iwo, pl.taps, dst, rq);
      continue;
    }
    int32_t taps = uk_dw_taps(p, at.oy, at.ox, xo, wo);
    dw_pixel(&c, img, xo, wo, taps, dst, rq);
  }
}
