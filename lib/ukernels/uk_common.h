/* Target-independent parts of the microkernels: parameter access, the
 * exact requantisation, im2col, the walks over a band's pixels and rows,
 * and the portable conv.  Included by each backend's kernels, which are
 * compiled to LLVM bitcode for its target; a backend replaces only the
 * inner loops worth hand-writing (uk_depthwise.h: the depthwise kernels'
 * shared part).
 *
 * Kernels read `blob` (a module constant) and `in`, write every byte of
 * their band of `out`, and use at most params->scratch_bytes of their
 * workgroup's part of `scratch` (uk_abi.h, "Workgroups").  They call no
 * library functions, so the executables keep their import list. */
#ifndef TINYML_UKERNELS_UK_COMMON_H
#define TINYML_UKERNELS_UK_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "uk_abi.h"

#define UK_INLINE static inline __attribute__((always_inline))

/* Where a blob's parameter header is: at its start, unless the backend
 * routes it through a function the compiler defines per layer
 * (backends/armv7em/ukernels.c, lib/compiler/codegen/uk_specialise.c). */
#ifndef UK_HEADER
#define UK_HEADER(blob) ((const tinyml_uk_params_t *)(blob))
#endif

typedef struct uk_ctx {
  const tinyml_uk_params_t *p;
  const int32_t *bias, *mult, *shift;
  const int8_t *weights;
  const int64_t *round_pos, *round_neg; /* see uk_abi.h */
  const tinyml_uk_chan_t *chan;
} uk_ctx_t;

UK_INLINE uk_ctx_t uk_ctx(const void *blob) {
  const tinyml_uk_params_t *p = UK_HEADER(blob);
  const uint8_t *b = (const uint8_t *)blob;
  uk_ctx_t c = {p, (const int32_t *)(const void *)(b + p->bias_off),
                (const int32_t *)(const void *)(b + p->mult_off),
                (const int32_t *)(const void *)(b + p->shift_off),
                (const int8_t *)(b + p->weights_off),
                (const int64_t *)(const void *)(b + p->round_off),
                (const int64_t *)(const void *)(b + p->round_off) +
                    (p->oc_padded + 15) / 16 * 16,
                (const tinyml_uk_chan_t *)(const void *)(b + p->chan_off)};
  return c;
}

/* Workgroup wg's share [*lo, *hi) of `total` items (uk_abi.h: the first
 * total % count shares one item longer), empty for wg >= count.  Tensors
 * have at most 2^30 elements (lib/compiler/tosa/uk_read.c), so int32 arithmetic does:
 * no 64-bit division, which 32-bit cores would need a library call for. */
UK_INLINE void uk_split(int32_t total, int32_t wg, int32_t count, int32_t *lo, int32_t *hi) {
  if (count < 1 || wg < 0 || wg >= count) {
    *lo = *hi = 0;
    return;
  }
  const int32_t base = total / count, extra = total % count;
  *lo = wg * base + (wg < extra ? wg : extra);
  *hi = *lo + base + (wg < extra ? 1 : 0);
}

/* Workgroup wg's band of the batch * oh * ow output pixels. */
UK_INLINE void uk_band(const tinyml_uk_params_t *p, int32_t wg, int32_t count, int32_t *lo,
                       int32_t *hi) {
  uk_split(p->batch * p->oh * p->ow, wg, count, lo, hi);
}

/* Workgroup wg's part of the scratch argument. */
UK_INLINE void *uk_scratch(void *scratch, const tinyml_uk_params_t *p, int32_t wg) {
  return (uint8_t *)scratch + (size_t)wg * (size_t)TINYML_UK_SCRATCH_STRIDE(p->scratch_bytes);
}

/* An output pixel as image, row and column; uk_pos_next steps to the next
 * pixel in NHWC order without a division. */
typedef struct uk_pos {
  int32_t n, oy, ox;
} uk_pos_t;

UK_INLINE uk_pos_t uk_pos_at(const tinyml_uk_params_t *p, int32_t q) {
  const int32_t per_image = p->oh * p->ow, r = q % per_image;
  uk_pos_t s = {q / per_image, r / p->ow, r % p->ow};
  return s;
}

UK_INLINE void uk_pos_next(const tinyml_uk_params_t *p, uk_pos_t *s) {
  if (++s->ox < p->ow) return;
  s->ox = 0;
  if (++s->oy < p->oh) return;
  s->oy = 0;
  ++s->n;
}

/* Kernels that walk rows take rows [lo / ow, uk_rows_end) of batch * oh
 * for the band [lo, hi) of output pixels, and of row r the columns
 * uk_row_span gives. */
UK_INLINE int32_t uk_rows_end(const tinyml_uk_params_t *p, int32_t lo, int32_t hi) {
  return hi > lo ? (hi - 1) / p->ow + 1 : 0;
}

/* Row r (of batch * oh) as far as the band [lo, hi) covers it: columns
 * [*x0, *x1), empty when *x0 >= *x1. */
UK_INLINE void uk_row_span(const tinyml_uk_params_t *p, int32_t r, int32_t lo, int32_t hi,
                           int32_t *x0, int32_t *x1) {
  const int32_t start = r * p->ow;
  *x0 = lo > start ? lo - start : 0;
  *x1 = hi - start < p->ow ? hi - start : p->ow;
}

UK_INLINE int32_t uk_min32(int32_t a, int32_t b) { return a < b ? a : b; }
UK_INLINE int32_t uk_max32(int32_t a, int32_t b) { return a > b ? a : b; }

/* The output columns [*c0, *c1) whose every tap lies inside the image's
 * width (convs and depthwise convs alike): a row's interior, which
 * kernels may read in place or with a fixed tap pattern. */
UK_INLINE void uk_interior_cols(const tinyml_uk_params_t *p, int32_t *c0, int32_t *c1) {
  const int32_t sw = p->stride_w, pl = p->pad_left, span = (p->kw - 1) * p->dil_w;
  int32_t a = (pl + sw - 1) / sw, last = p->iw - 1 + pl - span;
  int32_t b = last < 0 ? 0 : last / sw + 1;
  *c0 = uk_min32(a, p->ow);
  *c1 = uk_max32(uk_min32(b, p->ow), *c0);
}

/* The f32 kinds' view of the blob (uk_abi.h, "f32 kinds"). */
typedef struct ukf_ctx {
  const tinyml_uk_params_t *p;
  const float *bias, *scale, *offset, *weights;
  float lo, hi; /* the clamp */
  /* conv_add_f32: the residual, at the same index as the output out0
   * (added after the offset, before the clamp); null for other kernels. */
  const float *res;
  const float *out0;
  /* Floats from one output pixel to the next: oc, or more when the
   * kernel writes its channels into a wider tensor (convcat_f32). */
  int32_t pitch;
  /* Nonzero: the GEMM's pixel rows are whole, one after another, in a
   * tensor that another step wrote (a 1x1 conv's input, mostly outside
   * this core's L2), so the tile fetches the next tile's as it goes
   * (x86-64's AVX-512 tile; docs/PERF.md, "ResNet-50 on Intel"). */
  int32_t rows_ahead;
} ukf_ctx_t;

UK_INLINE ukf_ctx_t ukf_ctx(const void *blob) {
  const tinyml_uk_params_t *p = (const tinyml_uk_params_t *)blob;
  const uint8_t *b = (const uint8_t *)blob;
  ukf_ctx_t c = {p,
                 (const float *)(const void *)(b + p->bias_off),
                 (const float *)(const void *)(b + p->mult_off),
                 (const float *)(const void *)(b + p->shift_off),
                 (const float *)(const void *)(b + p->weights_off),
                 0.0f,
                 0.0f,
                 0,
                 0,
                 p->oc,
                 0};
  __builtin_memcpy(&c.lo, &p->act_min, 4);
  __builtin_memcpy(&c.hi, &p->act_max, 4);
  return c;
}

/* The f32 epilogue on one value: TOSA's multiply, add and clamp, each
 * rounded on its own (no FMA), NaN passing through the clamp. */
UK_INLINE float ukf_epilogue(const ukf_ctx_t *c, float acc, int32_t o) {
  float v = acc * c->scale[o];
  v = v + c->offset[o];
  v = v < c->lo ? c->lo : v;
  return v > c->hi ? c->hi : v;
}

/* TOSA apply_scale_32 with double rounding: equal to TFLite's
 * MultiplyByQuantizedMultiplier.  2 <= shift <= 62 (the compiler checks). */
UK_INLINE int32_t uk_apply_scale(int32_t v, int32_t mult, int32_t shift) {
  int64_t round = (int64_t)1 << (shift - 1);
  if (shift > 31) round += v >= 0 ? (int64_t)1 << 30 : -((int64_t)1 << 30);
  return (int32_t)(((int64_t)v * mult + round) >> shift);
}

/* acc (bias included) to the int8 output: the rescale, its zero point, and
 * the clamp (act_min/act_max already lie inside [-128, 127]). */
UK_INLINE int8_t uk_requant(const tinyml_uk_params_t *p, int32_t acc, int32_t mult,
                            int32_t shift) {
  int32_t v = uk_apply_scale(acc, mult, shift) + p->out_zp;
  v = v < p->act_min ? p->act_min : v;
  v = v > p->act_max ? p->act_max : v;
  return (int8_t)v;
}

/* uk_requant for channel o, with the blob's precomputed rounding terms. */
UK_INLINE int8_t uk_requant_ch(const uk_ctx_t *c, int32_t acc, int32_t o) {
  const tinyml_uk_params_t *p = c->p;
  const tinyml_uk_chan_t *ch = c->chan + o;
  int32_t v = acc + ch->bias, s = ch->shift;
  int64_t x = (int64_t)v * ch->mult + (v >= 0 ? ch->round_pos : ch->round_neg);
  /* Shifts of 32 or more (scales below 1, the usual case) need only the
   * high word: one arithmetic shift instead of a 64-bit one on 32-bit cores. */
  if (s >= 32)
    v = ((int32_t)(x >> 32) >> (s - 32)) + p->out_zp;
  else
    v = (int32_t)(x >> s) + p->out_zp;
  v = v < p->act_min ? p->act_min : v;
  v = v > p->act_max ? p->act_max : v;
  return (int8_t)v;
}

/* The taps of output pixel (oy, ox) as int16 (x - input_zp), in OHWI order,
 * zero outside the image and up to k_padded: a padded tap then adds 0,
 * exactly as TOSA pads the input with its zero point. */
UK_INLINE void uk_im2col(const tinyml_uk_params_t *p, const int8_t *img, int32_t oy,
                         int32_t ox, int16_t *col) {
  int16_t *c = col;
  const int32_t zp = p->in_zp;
  for (int32_t ky = 0; ky < p->kh; ++ky) {
    int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
    for (int32_t kx = 0; kx < p->kw; ++kx) {
      int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
      if (iy < 0 || iy >= p->ih || ix < 0 || ix >= p->iw) {
        for (int32_t ch = 0; ch < p->ic; ++ch) c[ch] = 0;
      } else {
        const int8_t *src = img + ((size_t)iy * p->iw + ix) * p->ic;
        for (int32_t ch = 0; ch < p->ic; ++ch) c[ch] = (int16_t)(src[ch] - zp);
      }
      c += p->ic;
    }
  }
  for (int32_t k = p->k; k < p->k_padded; ++k) col[k] = 0;
}

/* Portable conv on one output pixel's im2col column, any packing. */
UK_INLINE void uk_conv_pixel_generic(const uk_ctx_t *c, const int16_t *col, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t ob = p->oc_block, kb = p->k_block, kp = p->k_padded;
  for (int32_t o0 = 0; o0 < p->oc_padded; o0 += ob) {
    const int8_t *w = c->weights + (size_t)o0 * kp;
    int32_t acc[64];
    for (int32_t j = 0; j < ob; ++j) acc[j] = 0;
    for (int32_t k0 = 0; k0 < kp; k0 += kb)
      for (int32_t j = 0; j < ob; ++j)
        for (int32_t t = 0; t < kb; ++t) acc[j] += col[k0 + t] * w[(k0 * ob) + j * kb + t];
    for (int32_t j = 0; j < ob && o0 + j < p->oc; ++j)
      out[o0 + j] = uk_requant_ch(c, acc[j], o0 + j);
  }
}

/* Drives a conv over output pixels [lo, hi): one im2col column per pixel
 * (in `col`), then `pixel`. */
#define UK_CONV_DRIVER(c, in, out, col, lo, hi, pixel)                               \
  do {                                                                               \
    const tinyml_uk_params_t *p_ = (c)->p;                                           \
    uk_pos_t at_ = uk_pos_at(p_, (lo));                                              \
    for (int32_t q_ = (lo); q_ < (hi); ++q_, uk_pos_next(p_, &at_)) {                \
      uk_im2col(p_, (in) + (size_t)at_.n * p_->ih * p_->iw * p_->ic, at_.oy, at_.ox,  \
                (col));                                                              \
      pixel((c), (col), (out) + (size_t)q_ * p_->oc);                                \
    }                                                                                \
  } while (0)

#endif
