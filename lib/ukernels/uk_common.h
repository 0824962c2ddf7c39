/* Target-independent parts of the microkernels: parameter access, the
 * exact requantisation, im2col, and portable kernels.  Included by each
 * backend's ukernels.c, which is compiled to LLVM bitcode for its target;
 * a backend replaces only the inner loops worth hand-writing.
 *
 * Kernels read `blob` (a module constant) and `in`, write every byte of
 * `out`, and use at most params->scratch_bytes of `scratch`.  They call no
 * library functions, so the executables keep their import list. */
#ifndef TINYML_UKERNELS_UK_COMMON_H
#define TINYML_UKERNELS_UK_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "uk_abi.h"

#define UK_INLINE static inline __attribute__((always_inline))

typedef struct uk_ctx {
  const tinyml_uk_params_t *p;
  const int32_t *bias, *mult, *shift;
  const int8_t *weights;
  const int64_t *round_pos, *round_neg; /* see uk_abi.h */
  const tinyml_uk_chan_t *chan;
} uk_ctx_t;

UK_INLINE uk_ctx_t uk_ctx(const void *blob) {
  const tinyml_uk_params_t *p = (const tinyml_uk_params_t *)blob;
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

/* The f32 kinds' view of the blob (uk_abi.h, "f32 kinds"). */
typedef struct ukf_ctx {
  const tinyml_uk_params_t *p;
  const float *bias, *scale, *offset, *weights;
  float lo, hi; /* the clamp */
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
                 0.0f};
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

/* Depthwise, channel multiplier 1: channels are independent, so the inner
 * loop runs over contiguous channels and vectorises on targets with SIMD. */
UK_INLINE void uk_depthwise_generic(const uk_ctx_t *c, const int8_t *in, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  enum { CB = 16 };
  for (int32_t n = 0; n < p->batch; ++n) {
    const int8_t *img = in + (size_t)n * p->ih * p->iw * p->ic;
    for (int32_t oy = 0; oy < p->oh; ++oy)
      for (int32_t ox = 0; ox < p->ow; ++ox) {
        int8_t *dst = out + (((size_t)n * p->oh + oy) * p->ow + ox) * p->oc;
        for (int32_t c0 = 0; c0 < p->ic; c0 += CB) {
          int32_t cn = p->ic - c0 < CB ? p->ic - c0 : CB;
          int32_t acc[CB];
          for (int32_t j = 0; j < CB; ++j) acc[j] = 0;
          for (int32_t ky = 0; ky < p->kh; ++ky) {
            int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
            if (iy < 0 || iy >= p->ih) continue;
            for (int32_t kx = 0; kx < p->kw; ++kx) {
              int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
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
          for (int32_t j = 0; j < cn; ++j)
            dst[c0 + j] = uk_requant_ch(c, acc[j], c0 + j);
        }
      }
  }
}

enum { UK_MAX_TAPS = 64 }; /* 512 bytes of stack on a microcontroller */

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

/* Drives a conv: one im2col column per output pixel, then `pixel`. */
#define UK_CONV_DRIVER(c, in, out, scratch, pixel)                                  \
  do {                                                                               \
    const tinyml_uk_params_t *p_ = (c)->p;                                           \
    int16_t *col_ = (int16_t *)(void *)(scratch);                                    \
    for (int32_t n_ = 0; n_ < p_->batch; ++n_) {                                     \
      const int8_t *img_ = (in) + (size_t)n_ * p_->ih * p_->iw * p_->ic;             \
      for (int32_t oy_ = 0; oy_ < p_->oh; ++oy_)                                     \
        for (int32_t ox_ = 0; ox_ < p_->ow; ++ox_) {                                 \
          uk_im2col(p_, img_, oy_, ox_, col_);                                       \
          pixel((c), col_, (out) + (((size_t)n_ * p_->oh + oy_) * p_->ow + ox_) * p_->oc); \
        }                                                                            \
    }                                                                                \
  } while (0)

#endif
