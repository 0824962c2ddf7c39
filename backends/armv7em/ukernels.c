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
  out[o] = uk_requant(p, a + c->bias[o], c->mult[o], c->shift[o]);
  if (o + 1 < p->oc) out[o + 1] = uk_requant(p, b + c->bias[o + 1], c->mult[o + 1], c->shift[o + 1]);
}

/* Two pixels (col0, col1) at once; col1 may equal col0 for an odd tail. */
static void conv_pair(const uk_ctx_t *c, const int16_t *col0, const int16_t *col1,
                      int8_t *out0, int8_t *out1) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded;
  const int8_t *w = c->weights;
  for (int32_t o = 0; o < p->oc_padded; o += 2) {
    int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
    for (int32_t k = 0; k < kp; k += 4, w += 8) {
      uint32_t wa = ld32(w), wb = ld32(w + 4);
      int16x2_t wa_lo = __sxtb16(wa), wa_hi = __sxtb16(__ror(wa, 8));
      int16x2_t wb_lo = __sxtb16(wb), wb_hi = __sxtb16(__ror(wb, 8));
      int16x2_t x0a = (int16x2_t)ld32(col0 + k), x0b = (int16x2_t)ld32(col0 + k + 2);
      int16x2_t x1a = (int16x2_t)ld32(col1 + k), x1b = (int16x2_t)ld32(col1 + k + 2);
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
    if (out1 != out0) store2(c, o, a01, a11, out1);
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
        conv_pair(&c, col0, col0, o0, o0);
      }
    }
  }
}

void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  (void)scratch;
  uk_ctx_t c = uk_ctx(blob);
  uk_depthwise_generic(&c, in, out);
}
