/* int8 microkernels for Armv7E-M (Cortex-M4/M7 DSP extension), compiled to
 * LLVM bitcode at build time and linked into every executable
 * (lib/ukernels/uk_abi.h).
 *
 * Conv works the way CMSIS-NN's s8 convolution does: an im2col column of
 * int16 (x - zp) per output pixel, and a 2-channel x 2-pixel kernel where
 * SMLAD multiplies two int16 pairs and adds both products in one
 * instruction.  The compiler stores each 4-tap weight group as taps
 * 0,2,1,3, so SXTB16 (bytes 0 and 2) and SXTB16 of the word rotated by 8
 * (bytes 1 and 3) yield taps (0,1) and (2,3) in the column's order, with no
 * repacking at run time. */
#include <arm_acle.h>

#include "../../lib/ukernels/uk_common.h"

UK_INLINE uint32_t ld32(const void *p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

UK_INLINE void store2(const uk_ctx_t *c, int32_t o, int32_t a, int32_t b, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  out[o] = uk_requant_ch(c, a, o);
  if (o + 1 < p->oc) out[o + 1] = uk_requant_ch(c, b, o + 1);
}

/* Two pixels (col0, col1) x two channels.  The tap loop stays rolled:
 * unrolled, its 4 accumulators and 8 operands spill on 13 registers. */
static void conv_pair(const uk_ctx_t *c, const int16_t *col0, const int16_t *col1,
                      int8_t *out0, int8_t *out1) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded;
  const int8_t *w = c->weights;
  for (int32_t o = 0; o < p->oc_padded; o += 2) {
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    const int16_t *x0 = col0, *x1 = col1;
#pragma clang loop unroll(disable)
    for (int32_t k = 0; k < kp; k += 4, w += 8, x0 += 4, x1 += 4) {
      uint32_t wa = ld32(w), wb = ld32(w + 4);
      int16x2_t wa_lo = __sxtb16(wa), wa_hi = __sxtb16(__ror(wa, 8));
      int16x2_t wb_lo = __sxtb16(wb), wb_hi = __sxtb16(__ror(wb, 8));
      int16x2_t x0a = (int16x2_t)ld32(x0), x0b = (int16x2_t)ld32(x0 + 2);
      int16x2_t x1a = (int16x2_t)ld32(x1), x1b = (int16x2_t)ld32(x1 + 2);
      a00 = __smlad(wa_lo, x0a, a00);
      a00 = __smlad(wa_hi, x0b, a00);
      a01 = __smlad(wa_lo, x1a, a01);
      a01 = __smlad(wa_hi, x1b, a01);
      a10 = __smlad(wb_lo, x0a, a10);
      a10 = __smlad(wb_hi, x0b, a10);
      a11 = __smlad(wb_lo, x1a, a11);
      a11 = __smlad(wb_hi, x1b, a11);
    }
    store2(c, o, a00, a10, out0);
    store2(c, o, a01, a11, out1);
  }
}

/* One pixel x two channels: odd tails, and fully-connected layers. */
static void conv_one(const uk_ctx_t *c, const int16_t *col, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded;
  const int8_t *w = c->weights;
  for (int32_t o = 0; o < p->oc_padded; o += 2) {
    int32_t a0 = 0, a1 = 0;
    const int16_t *x = col;
#pragma clang loop unroll(disable)
    for (int32_t k = 0; k < kp; k += 4, w += 8, x += 4) {
      uint32_t wa = ld32(w), wb = ld32(w + 4);
      int16x2_t xa = (int16x2_t)ld32(x), xb = (int16x2_t)ld32(x + 2);
      a0 = __smlad(__sxtb16(wa), xa, a0);
      a0 = __smlad(__sxtb16(__ror(wa, 8)), xb, a0);
      a1 = __smlad(__sxtb16(wb), xa, a1);
      a1 = __smlad(__sxtb16(__ror(wb, 8)), xb, a1);
    }
    store2(c, o, a0, a1, out);
  }
}

void tinyml_uk_conv_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  int16_t *col0 = (int16_t *)scratch, *col1 = col0 + p->k_padded;
  const int32_t pixels = p->oh * p->ow;
  for (int32_t n = 0; n < p->batch; ++n) {
    const int8_t *img = in + (size_t)n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)n * pixels * p->oc;
    for (int32_t q = 0; q < pixels; q += 2) {
      uk_im2col(p, img, q / p->ow, q % p->ow, col0);
      int8_t *o0 = dst + (size_t)q * p->oc;
      if (q + 1 < pixels) {
        uk_im2col(p, img, (q + 1) / p->ow, (q + 1) % p->ow, col1);
        conv_pair(&c, col0, col1, o0, o0 + p->oc);
      } else {
        conv_one(&c, col0, o0);
      }
    }
  }
}

/* Depthwise, 4 channels per step: SXTB16 splits a word of 4 int8 into
 * lanes (0,2) and (1,3), SSUB16 removes the zero point from both lanes
 * (exact: |x - zp| <= 255), and SMLABB/SMLATT multiply-accumulate the bottom
 * and top lanes into separate channels. */
static void dw_pixel(const uk_ctx_t *c, const int8_t *img, const int32_t *xo, const int32_t *wo,
                     int32_t taps, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const uint32_t zp2 = ((uint32_t)(uint16_t)p->in_zp << 16) | (uint16_t)p->in_zp;
  int32_t c0 = 0;
  for (; c0 + 4 <= p->ic; c0 += 4) {
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#pragma clang loop unroll(disable)
    for (int32_t t = 0; t < taps; ++t) {
      uint32_t x = ld32(img + xo[t] + c0), w = ld32(c->weights + wo[t] + c0);
      int16x2_t xl = __ssub16(__sxtb16(x), (int16x2_t)zp2);
      int16x2_t xh = __ssub16(__sxtb16(__ror(x, 8)), (int16x2_t)zp2);
      int16x2_t wl = __sxtb16(w), wh = __sxtb16(__ror(w, 8));
      a0 = __smlabb(xl, wl, a0);
      a2 = __smlatt(xl, wl, a2);
      a1 = __smlabb(xh, wh, a1);
      a3 = __smlatt(xh, wh, a3);
    }
    int8_t r0 = uk_requant_ch(c, a0, c0), r1 = uk_requant_ch(c, a1, c0 + 1);
    int8_t r2 = uk_requant_ch(c, a2, c0 + 2), r3 = uk_requant_ch(c, a3, c0 + 3);
    dst[c0] = r0;
    dst[c0 + 1] = r1;
    dst[c0 + 2] = r2;
    dst[c0 + 3] = r3;
  }
  for (; c0 < p->ic; ++c0) {
    int32_t a = 0;
    for (int32_t t = 0; t < taps; ++t)
      a += (img[xo[t] + c0] - p->in_zp) * c->weights[wo[t] + c0];
    dst[c0] = uk_requant_ch(c, a, c0);
  }
}

void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  (void)scratch;
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  if (p->kh * p->kw > UK_MAX_TAPS) {
    uk_depthwise_generic(&c, in, out);
    return;
  }
  int32_t xo[UK_MAX_TAPS], wo[UK_MAX_TAPS];
  for (int32_t b = 0; b < p->batch; ++b) {
    const int8_t *img = in + (size_t)b * p->ih * p->iw * p->ic;
    for (int32_t oy = 0; oy < p->oh; ++oy)
      for (int32_t ox = 0; ox < p->ow; ++ox) {
        int32_t taps = uk_dw_taps(p, oy, ox, xo, wo);
        dw_pixel(&c, img, xo, wo, taps, out + (((size_t)b * p->oh + oy) * p->ow + ox) * p->oc);
      }
  }
}
