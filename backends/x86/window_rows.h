/* What the window kernels (depthwise convs and max pools, int8 and f32)
 * share: where their input rows are, the image or a ring of rows that a
 * conv computes as the window goes down (pwdwpw_f32, convpool_f32), and
 * the plan of an interior pixel's taps (window_rows.c). */
#ifndef TINYML_BACKENDS_X86_WINDOW_ROWS_H
#define TINYML_BACKENDS_X86_WINDOW_ROWS_H

#include "../../lib/ukernels/uk_depthwise.h"
#include "conv_f32.h"

/* Where a depthwise conv's input rows are: row y at img + dw_at(s, y),
 * the image's rows from y0 on in order, or (ring > 0) row y in slot
 * y % ring of a ring of rows (xwin_t below). */
typedef struct dw_src {
  const float *img;
  int32_t y0, ring, row; /* row: floats a row, iw * ic */
} dw_src_t;

UK_INLINE ptrdiff_t dw_at(const dw_src_t *s, int32_t y) {
  return (ptrdiff_t)(s->ring ? y % s->ring : y - s->y0) * s->row;
}

/* The taps of output row oy's window whose input rows lie inside the
 * image, in window order (every tap of an interior pixel of that row):
 * offsets io from the first such row, *y_first, where `s` has the rows,
 * and weight offsets iwo.  Returns how many; 0 when no row is inside. */
UK_INLINE int32_t dw_row_taps(const tinyml_uk_params_t *p, const dw_src_t *s, int32_t iy0,
                              int32_t taps, int32_t *io, int32_t *iwo, int32_t *y_first) {
  int32_t n = 0;
  *y_first = -1;
  for (int32_t t = 0; t < taps; ++t) {
    const int32_t iy = iy0 + (t / p->kw) * p->dil_h;
    if (iy < 0 || iy >= p->ih) continue;
    if (*y_first < 0) *y_first = iy;
    io[n] = (int32_t)(dw_at(s, iy) - dw_at(s, *y_first)) + (t % p->kw) * p->dil_w * p->ic;
    iwo[n++] = t * p->ic;
  }
  return n;
}

/* uk_dw_taps' offsets, (iy * iw + ix) * ic, to where `s` has row iy. */
UK_INLINE void dw_place_taps(const dw_src_t *s, int32_t taps, int32_t *xo) {
  if (!s->ring && !s->y0) return;
  for (int32_t t = 0; t < taps; ++t) {
    const int32_t iy = xo[t] / s->row;
    xo[t] = (int32_t)dw_at(s, iy) + (xo[t] - iy * s->row);
  }
}

/* What every output row of a depthwise conv shares: its interior columns
 * [x_lo, x_hi) (every tap inside the image across) and an interior
 * pixel's tap offsets when rows follow each other. */
typedef struct dw_plan {
  int32_t x_lo, x_hi, taps;
  int32_t io[UK_MAX_TAPS], iwo[UK_MAX_TAPS];
} dw_plan_t;

void dw_plan(const tinyml_uk_params_t *p, dw_plan_t *pl);

/* A window kernel's work on a row's pixels (window_row), k its context:
 * `large`, pixel (oy, ox) of a window of more than UK_MAX_TAPS taps;
 * `span`, n pixels from x, xstep floats apart, over taps at x + io[t]
 * (the kernel's weights at iwo[t]), into dst, ic floats a pixel. */
typedef void (*window_large_fn)(const void *k, const dw_src_t *s, int32_t oy, int32_t ox,
                                float *dst);
typedef void (*window_span_fn)(const void *k, const float *x, int32_t xstep, const int32_t *io,
                               const int32_t *iwo, int32_t taps, int32_t n, float *dst);

/* Output row oy of one image, columns [x0, x1), into dst (ic floats a
 * pixel), each pixel from the taps of its window that lie inside the
 * image, in window order, the input rows where `s` has them (the image,
 * or a ring of conv rows).  Interior pixels of a row (every tap inside
 * the image across) run as one span over the row's in-image taps, also in
 * the first and last rows, whose windows hang over the top or bottom;
 * the other pixels list their in-image taps, a span of one.  Which of
 * these a pixel takes depends only on the pixel, and each is the same
 * sum.  Called with constant functions, which inline: the depthwise
 * conv's (dw_row) and the max pool's (pool_row). */
UK_INLINE void window_row(const tinyml_uk_params_t *p, const dw_plan_t *pl, const dw_src_t *s,
                          int32_t oy, int32_t x0, int32_t x1, float *dst, const void *k,
                          window_large_fn large, window_span_fn span) {
  const int32_t ic = p->ic, xstep = p->stride_w * ic;
  const int32_t xe = pl->x_hi < x1 ? pl->x_hi : x1; /* pairs stay inside the span */
  const int32_t iy0 = oy * p->stride_h - p->pad_top;
  int32_t xo[UK_MAX_TAPS], wo[UK_MAX_TAPS], row_io[UK_MAX_TAPS], row_iwo[UK_MAX_TAPS], y_first = 0;
  const int32_t row_taps = pl->taps <= UK_MAX_TAPS
                               ? dw_row_taps(p, s, iy0, pl->taps, row_io, row_iwo, &y_first)
                               : 0;
  for (int32_t ox = x0; ox < x1;) {
    float *d = dst + (size_t)(ox - x0) * ic;
    if (pl->taps > UK_MAX_TAPS) {
      large(k, s, oy, ox, d);
      ++ox;
    } else if (row_taps > 0 && ox >= pl->x_lo && ox < pl->x_hi) {
      const float *x =
          s->img + dw_at(s, y_first) + (ptrdiff_t)(ox * p->stride_w - p->pad_left) * ic;
      span(k, x, xstep, row_io, row_iwo, row_taps, xe - ox, d);
      ox = xe;
    } else {
      int32_t taps = uk_dw_taps(p, oy, ox, xo, wo);
      dw_place_taps(s, taps, xo);
      span(k, s->img, 0, xo, wo, taps, 1, d);
      ++ox;
    }
  }
}

/* A conv's output rows that a window kernel reads (pwdwpw_f32's
 * depthwise conv, convpool_f32's pool), in a ring of `span` rows (row y in
 * slot y % span: dw_src_t): as the band's output rows go down the image,
 * each new row is computed once into the slot of one no longer needed,
 * and nothing moves. */
typedef struct xwin {
  const ukf_ctx_t *ex;
  const float *in; /* the conv's input */
  float *ring;
  float *cols; /* the first conv's im2col columns, ccap of them */
  int32_t ccap;
  dw_src_t src;  /* the ring, as the depthwise conv reads it */
  int32_t b, hi; /* rows [hi - span, hi) of image b are in the ring */
} xwin_t;

/* Makes the ring hold rows [ya, yb) of image b (yb - ya <= span, and ya
 * and yb never go back up within an image). */
UK_INLINE void xwin_slide(xwin_t *w, int32_t b, int32_t ya, int32_t yb) {
  const tinyml_uk_params_t *ep = w->ex->p;
  const int32_t held = w->b == b && ya >= w->hi - w->src.ring && ya <= w->hi;
  for (int32_t y = held ? w->hi : ya; y < yb; ++y) {
    const int32_t r = b * ep->oh + y;
    conv_pixels(w->ex, w->in, w->ring + dw_at(&w->src, y), r, w->cols, w->ccap, r * ep->ow,
                (r + 1) * ep->ow, 0, ep->oc_padded);
  }
  if (!held || yb > w->hi) w->hi = yb;
  w->b = b;
}

#endif
