/* What the backends' int8 depthwise kernels share: their start (the
 * context and the workgroup's band), the portable kernel for windows too
 * large to list, and the in-image tap lists of the output pixels whose
 * window crosses the image's border.  The walk over a band's rows and a
 * row's interior columns is uk_common.h's.  Everything here inlines into
 * each backend's own loops, as the same statements it had written out:
 * the Cortex-M4's and RVV's instructions do not move. */
#ifndef TINYML_UKERNELS_UK_DEPTHWISE_H
#define TINYML_UKERNELS_UK_DEPTHWISE_H

#include "uk_common.h"

/* Depthwise, channel multiplier 1: channels are independent, so the inner
 * loop runs over contiguous channels and vectorises on targets with SIMD.
 * Output pixels [lo, hi) (uk_band). */
UK_INLINE void uk_depthwise_generic(const uk_ctx_t *c, const int8_t *in, int8_t *out,
                                    int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  enum { CB = 16 };
  uk_pos_t at = uk_pos_at(p, lo);
  for (int32_t q = lo; q < hi; ++q, uk_pos_next(p, &at)) {
    const int8_t *img = in + (size_t)at.n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)q * p->oc;
    for (int32_t c0 = 0; c0 < p->ic; c0 += CB) {
      int32_t cn = p->ic - c0 < CB ? p->ic - c0 : CB;
      int32_t acc[CB];
      for (int32_t j = 0; j < CB; ++j) acc[j] = 0;
      for (int32_t ky = 0; ky < p->kh; ++ky) {
        int32_t iy = at.oy * p->stride_h - p->pad_top + ky * p->dil_h;
        if (iy < 0 || iy >= p->ih) continue;
        for (int32_t kx = 0; kx < p->kw; ++kx) {
          int32_t ix = at.ox * p->stride_w - p->pad_left + kx * p->dil_w;
          if (ix < 0 || ix >= p->iw) continue;
          const int8_t *x = img + ((size_t)iy * p->iw + ix) * p->ic + c0;
          const int8_t *w = c->weights + ((size_t)ky * p->kw + kx) * p->ic + c0;
          if (cn == CB) {
            for (int32_t j = 0; j < CB; ++j) acc[j] += (x[j] - p->in_zp) * w[j];
          } else {
            for (int32_t j = 0; j < cn; ++j) acc[j] += (x[j] - p->in_zp) * w[j];
          }
        }
      }
      for (int32_t j = 0; j < cn; ++j) dst[c0 + j] = uk_requant_ch(c, acc[j], c0 + j);
    }
  }
}

enum { UK_MAX_TAPS = 64 }; /* 512 bytes of stack on a microcontroller */

/* The start of tinyml_uk_depthwise_s8: the blob's context in *c, and
 * workgroup wg's band [*lo, *hi) of output pixels; returns c->p. */
UK_INLINE const tinyml_uk_params_t *uk_dw_start(uk_ctx_t *c, const void *blob, int32_t wg,
                                                int32_t count, int32_t *lo, int32_t *hi) {
  *c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c->p;
  uk_band(p, wg, count, lo, hi);
  return p;
}

/* With more than UK_MAX_TAPS taps (too many for the tap lists below),
 * runs the band [lo, hi) on uk_depthwise_generic and returns 1: the
 * kernel is done.  Otherwise 0. */
UK_INLINE int uk_dw_large_generic(const uk_ctx_t *c, const int8_t *in, int8_t *out,
                                  int32_t lo, int32_t hi) {
  if (c->p->kh * c->p->kw > UK_MAX_TAPS) {
    uk_depthwise_generic(c, in, out, lo, hi);
    return 1;
  }
  return 0;
}

/* The in-image taps of output pixel (oy, ox) for a depthwise kernel: input
 * and weight offsets; kh * kw <= UK_MAX_TAPS. */
UK_INLINE int32_t uk_dw_taps(const tinyml_uk_params_t *p, int32_t oy, int32_t ox,
                             int32_t *xo, int32_t *wo) {
  int32_t n = 0;
  for (int32_t ky = 0; ky < p->kh; ++ky) {
    int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
    if (iy < 0 || iy >= p->ih) continue;
    for (int32_t kx = 0; kx < p->kw; ++kx) {
      int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
      if (ix < 0 || ix >= p->iw) continue;
      xo[n] = (iy * p->iw + ix) * p->ic;
      wo[n++] = (ky * p->kw + kx) * p->ic;
    }
  }
  return n;
}

#endif
