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

/* What the row kernels (uk_dw_row_t) need beyond dw_rq: the folded
 * biases, and for 8 channels the constants with both halves theirs. */
typedef struct dw_fast {
  __m512i fb[UK_DW_RQ_BLOCKS], w[UK_DW_RQ_BLOCKS * UK_DW_REG_TAPS];
  rq16_t pair;
  const rq16_t *q;
} dw_fast_t;

/* The row kernels' constants, for a layer uk_dw_plan gave them; 0 when
 * the rescale constants cannot be made after all (rq null, or rq16_pair
 * refusing 8 channels: the plan checks the same shifts, so only if the two
 * drift apart), and the caller falls back to the pixel kernels.
 * bias - in_zp * sum(w) is made once per call: the same int32 sums as the
 * pixel kernel's (x - in_zp) * w, modulo 2^32, for pixels whose taps all
 * lie inside the image.  So are the widened weights: made per row call,
 * they took about a tenth of the stride-2 layers, whose rows are three
 * calls (band, interior, band). */
UK_INLINE int dw_fast(const uk_ctx_t *c, int32_t taps, dw_rq_t rq, dw_fast_t *f) {
  const tinyml_uk_params_t *p = c->p;
  if (!rq || (p->ic == 8 && !rq16_pair(c, 0, &f->pair))) return 0;
  const __m512i zp = _mm512_set1_epi32(p->in_zp);
  for (int32_t c0 = 0; c0 < p->ic; c0 += 16) {
    const __mmask16 m = rq16_live(p->ic == 8 ? 8 : p->ic - c0);
    __m512i sw = _mm512_setzero_si512();
    for (int32_t t = 0; t < UK_DW_REG_TAPS; ++t) { /* zeros past the taps */
      __m128i b = _mm_maskz_loadu_epi8(t < taps ? m : 0, c->weights + t * p->ic + c0);
      if (p->ic == 8) b = _mm_unpacklo_epi64(b, b); /* both halves */
      sw = _mm512_add_epi32(sw, _mm512_cvtepi8_epi32(b));
      f->w[c0 / 16 * UK_DW_REG_TAPS + t] = uk_dw_w16(b);
    }
    const __m512i b = p->ic == 8 ? f->pair.bias : rq[c0 / 16].bias;
    f->fb[c0 / 16] = _mm512_sub_epi32(b, _mm512_mullo_epi32(zp, sw));
  }
  f->q = p->ic == 8 ? &f->pair : rq;
  return 1;
}

/* Output pixels [ox, x1) of row oy of image img into dst on the row
 * kernels: straight from the image when every tap lies inside it, else
 * through a band (uk_dw_band_avx512). */
UK_INLINE void dw_run(const uk_ctx_t *c, const dw_fast_t *f, const dw_plan_t *pl,
                      const int8_t *img, int32_t oy, int32_t ox, int32_t x1, int8_t *dst,
                      int inside) {
  const tinyml_uk_params_t *p = c->p;
  uk_dw_row_t r = {img, dst, p->stride_w * p->ic, x1 - ox, pl->taps, pl->io, f->q, f->fb, f->w,
                   1, 0};
  if (!inside) {
    uk_dw_band_avx512(c, &r, img, oy, ox);
    return;
  }
  r.src = img + ((size_t)(oy * p->stride_h - p->pad_top) * p->iw + ox * p->stride_w -
                 p->pad_left) * p->ic;
  uk_dw_row(c, &r);
}

/* The band [lo, hi) on the row kernels: each row's interior columns
 * straight, the columns either side of them and rows whose windows leave
 * the image through bands. */
UK_INLINE void dw_fast_rows(const uk_ctx_t *c, const dw_fast_t *f, const dw_plan_t *pl,
                            const int8_t *in, int8_t *out, int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  /* Straight columns [xl, xr): the interior less 3 pixels each side, so
   * that a band has 4 pixels in flight; none when that leaves few. */
  int32_t xl = pl->x_lo + 3 < pl->x_hi ? pl->x_lo + 3 : pl->x_hi;
  int32_t xr = pl->x_hi - 3 > xl ? pl->x_hi - 3 : xl;
  if (xr - xl < 4) xl = xr = p->ow;
  uk_pos_t at = uk_pos_at(p, lo);
  for (int32_t q = lo; q < hi;) {
    const int8_t *img = in + (size_t)at.n * p->ih * p->iw * p->ic;
    const int32_t iy = at.oy * p->stride_h - p->pad_top;
    const int rows_in = iy >= 0 && iy + (p->kh - 1) * p->dil_h < p->ih;
    const int32_t end = hi - q < p->ow - at.ox ? at.ox + (hi - q) : p->ow;
    int32_t x1 = end;
    const int inside = rows_in && at.ox >= xl && at.ox < xr;
    if (inside && xr < end) x1 = xr;
    if (rows_in && at.ox < xl && xl < end) x1 = xl;
    dw_run(c, f, pl, img, at.oy, at.ox, x1, out + (size_t)q * p->oc, inside);
    q += x1 - at.ox;
    at.ox = x1 - 1;
    uk_pos_next(p, &at);
  }
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
  const uk_dw_kernel_t kernel = uk_dw_plan(p, c.mult, c.shift, UK_ZMM);
  if (kernel == UK_DW_GENERIC) {
    UK_PATH(dw_s8_generic);
    uk_depthwise_generic(&c, in, out, lo, hi);
    return;
  }
  int32_t xo[UK_MAX_TAPS], wo[UK_MAX_TAPS];
  dw_plan_t pl;
  dw_plan(p, &pl);
#if UK_ZMM
  rq16_t qs[UK_DW_RQ_BLOCKS];
  const dw_rq_t rq = dw_rq(&c, qs);
  dw_fast_t f;
  if (kernel != UK_DW_PIXELS && dw_fast(&c, pl.taps, rq, &f)) {
    if (kernel == UK_DW_MAP) {
      UK_PATH(dw_s8_map);
      const uk_dw_row_t r = {0, 0, 0, 0, pl.taps, 0, f.q, f.fb, f.w, 1, 0};
      uk_dw_map_avx512(&c, &r, in, out, lo, hi);
    } else {
      UK_PATH(dw_s8_rows);
      dw_fast_rows(&c, &f, &pl, in, out, lo, hi);
    }
    return;
  }
#else
  const dw_rq_t rq = 0;
#endif
  UK_PATH(dw_s8_pixels);
  uk_pos_t at = uk_pos_at(p, lo);
  for (int32_t q = lo; q < hi; ++q, uk_pos_next(p, &at)) {
    const int8_t *img = in + (size_t)at.n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)q * p->oc;
    const int32_t iy = at.oy * p->stride_h - p->pad_top;
    if (iy >= 0 && iy + (p->kh - 1) * p->dil_h < p->ih && at.ox >= pl.x_lo && at.ox < pl.x_hi) {
      const int8_t *src = img + ((size_t)iy * p->iw + at.ox * p->stride_w - p->pad_left) * p->ic;
#if UK_ZMM
      if (p->ic == 8 && q + 1 < hi && at.ox + 1 < pl.x_hi) {
        UK_PATH(dw_s8_pair);
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
