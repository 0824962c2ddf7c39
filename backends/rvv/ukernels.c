/* int8 microkernels for RISC-V with the V extension (RVV 1.0 intrinsics),
 * compiled to LLVM bitcode at build time and linked into every executable
 * (lib/ukernels/uk_abi.h).  Vector-length agnostic: every vl is at most
 * what VLEN = 128 (the V extension's minimum) holds, and requests never
 * exceed VLMAX, so vsetvl returns the requested length at any VLEN.
 *
 * SEW/LMUL is 8 throughout (e8m2, e16m4, e32m8; e64m8 for the rescale,
 * which then runs in halves of e32m4), so one mask type fits all.
 *
 * Conv: weights are packed [oc_padded/32][k_padded][32] (rvv.c sets
 * oc_block = 32, k_block = 1).  The im2col columns of PIX = 3 output pixels
 * hold int16 (x - zp); per tap, 32 weights are loaded (vle8), widened
 * (vsext.vf2) and multiplied into three int32 accumulators (e32m8) by
 * vwmacc.vx with each pixel's column value.  int16 x int16 products are
 * exact, and the accumulators start at the bias.
 *
 * Depthwise: per output pixel, its in-image taps; per block of up to 32
 * channels, acc += (sext(x) - zp) * sext(w) by vwmacc.vv.  A pixel whose
 * taps are all in the image uses offsets computed once per call.
 *
 * Rescale (uk_requant, exactly): prod = v * mult + round (vwmacc in 64
 * bits; round_neg where v < 0), vnsra.wv by the shift (the int32
 * truncation of (int64) >> shift), + out_zp, clamp, narrowed to int8. */
#include <riscv_vector.h>

#include "../../lib/ukernels/uk_common.h"

enum { OB = 32, PIX = 3 };

/* ---- the rescale ------------------------------------------------------- */

/* v (bias included) of channels o.. o+vl-1, vl <= VLMAX(e32m4), to int8. */
UK_INLINE vint8m1_t requant(const uk_ctx_t *c, vint32m4_t v, int32_t o, size_t vl) {
  const tinyml_uk_params_t *p = c->p;
  vint32m4_t m = __riscv_vle32_v_i32m4(c->mult + o, vl);
  vbool8_t neg = __riscv_vmslt_vx_i32m4_b8(v, 0, vl);
  vint64m8_t r = __riscv_vle64_v_i64m8(c->round_pos + o, vl);
  r = __riscv_vle64_v_i64m8_mu(neg, r, c->round_neg + o, vl);
  r = __riscv_vwmacc_vv_i64m8(r, v, m, vl);
  vuint32m4_t s = __riscv_vle32_v_u32m4((const uint32_t *)(const void *)(c->shift + o), vl);
  vint32m4_t y = __riscv_vnsra_wv_i32m4(r, s, vl);
  y = __riscv_vadd_vx_i32m4(y, p->out_zp, vl);
  y = __riscv_vmax_vx_i32m4(y, p->act_min, vl);
  y = __riscv_vmin_vx_i32m4(y, p->act_max, vl);
  return __riscv_vncvt_x_x_w_i8m1(__riscv_vncvt_x_x_w_i16m2(y, vl), vl);
}

/* Rescales and stores vl channels (vl <= VLMAX(e32m8)) starting at o. */
UK_INLINE void store_acc(const uk_ctx_t *c, vint32m8_t acc, int32_t o, size_t vl, int8_t *out) {
  size_t half = __riscv_vsetvlmax_e32m4();
  size_t n0 = vl < half ? vl : half;
  __riscv_vse8_v_i8m1(out + o, requant(c, __riscv_vget_v_i32m8_i32m4(acc, 0), o, n0), n0);
  if (vl > half) {
    size_t n1 = vl - half;
    __riscv_vse8_v_i8m1(out + o + half,
                        requant(c, __riscv_vget_v_i32m8_i32m4(acc, 1), o + (int32_t)half, n1),
                        n1);
  }
}

/* The same from vl int32 at acc. */
UK_INLINE void store_mem(const uk_ctx_t *c, const int32_t *acc, int32_t o, size_t vl,
                         int8_t *out) {
  size_t half = __riscv_vsetvlmax_e32m4();
  size_t n0 = vl < half ? vl : half;
  __riscv_vse8_v_i8m1(out + o, requant(c, __riscv_vle32_v_i32m4(acc, n0), o, n0), n0);
  if (vl > half) {
    size_t n1 = vl - half;
    __riscv_vse8_v_i8m1(out + o + half,
                        requant(c, __riscv_vle32_v_i32m4(acc + half, n1), o + (int32_t)half, n1),
                        n1);
  }
}

/* ---- conv -------------------------------------------------------------- */

/* n int16 zeros at dst. */
UK_INLINE void zero16(int16_t *dst, int32_t n) {
  for (size_t vl; n > 0; n -= (int32_t)vl, dst += vl) {
    vl = __riscv_vsetvl_e16m8((size_t)n);
    __riscv_vse16_v_i16m8(dst, __riscv_vmv_v_x_i16m8(0, vl), vl);
  }
}

/* n int16 (x - zp) at dst from int8 x at src. */
UK_INLINE void widen16(int16_t *dst, const int8_t *src, int32_t n, int8_t zp) {
  for (size_t vl; n > 0; n -= (int32_t)vl, dst += vl, src += vl) {
    vl = __riscv_vsetvl_e8m4((size_t)n);
    __riscv_vse16_v_i16m8(dst, __riscv_vwsub_vx_i16m8(__riscv_vle8_v_i8m4(src, vl), zp, vl), vl);
  }
}

/* uk_im2col, vectorised: with dil_w == 1 the in-image taps of a kernel row
 * are contiguous in the input, so each row is one copy between zeros. */
static void im2col(const tinyml_uk_params_t *p, const int8_t *img, int32_t oy, int32_t ox,
                   int16_t *col) {
  const int32_t ic = p->ic, rowk = p->kw * ic;
  const int8_t zp = (int8_t)p->in_zp;
  const int32_t ix0 = ox * p->stride_w - p->pad_left;
  int16_t *cp = col;
  for (int32_t ky = 0; ky < p->kh; ++ky, cp += rowk) {
    int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
    if (iy < 0 || iy >= p->ih) {
      zero16(cp, rowk);
      continue;
    }
    const int8_t *row = img + (size_t)iy * p->iw * ic;
    if (p->dil_w == 1) {
      int32_t a = ix0 < 0 ? -ix0 : 0, b = p->iw - ix0; /* the kx inside: [a, b) */
      a = a < p->kw ? a : p->kw;
      b = b < p->kw ? b : p->kw;
      b = b > a ? b : a;
      zero16(cp, a * ic);
      widen16(cp + a * ic, row + (ptrdiff_t)(ix0 + a) * ic, (b - a) * ic, zp);
      zero16(cp + b * ic, (p->kw - b) * ic);
    } else {
      for (int32_t kx = 0; kx < p->kw; ++kx) {
        int32_t ix = ix0 + kx * p->dil_w;
        if (ix < 0 || ix >= p->iw)
          zero16(cp + kx * ic, ic);
        else
          widen16(cp + kx * ic, row + (size_t)ix * ic, ic, zp);
      }
    }
  }
  zero16(col + p->k, p->k_padded - p->k);
}

/* np <= PIX pixels (columns x0, x1, x2) x vl <= OB channels from o0.  np is
 * a constant at each call, so each variant keeps only its accumulators. */
UK_INLINE void conv_block(const uk_ctx_t *c, const int16_t *x0, const int16_t *x1,
                          const int16_t *x2, int32_t o0, size_t vl, const int np,
                          int8_t *const *outs) {
  const int32_t kp = c->p->k_padded;
  const int8_t *w = c->weights + (size_t)o0 * kp;
  vint32m8_t a0 = __riscv_vle32_v_i32m8(c->bias + o0, vl), a1 = a0, a2 = a0;
#define UK_TAP(j)                                                                  \
  do {                                                                             \
    vint16m4_t wv = __riscv_vsext_vf2_i16m4(__riscv_vle8_v_i8m2(w + (j) * OB, vl), vl); \
    a0 = __riscv_vwmacc_vx_i32m8(a0, x0[k + (j)], wv, vl);                         \
    if (np > 1) a1 = __riscv_vwmacc_vx_i32m8(a1, x1[k + (j)], wv, vl);             \
    if (np > 2) a2 = __riscv_vwmacc_vx_i32m8(a2, x2[k + (j)], wv, vl);             \
  } while (0)
  /* The empty asm makes the next taps' weight loads depend on these taps'
   * multiply-adds.  Otherwise the scheduler hoists loads of later taps,
   * which need more than the 8 vector registers that three accumulators
   * leave, and spills. */
#define UK_FENCE()                                                                 \
  do {                                                                             \
    if (np > 2) __asm__("" : "+vr"(a0), "+vr"(a1), "+vr"(a2), "+r"(w));           \
  } while (0)
  for (int32_t k = 0; k < kp; k += 4, w += 4 * OB) { /* k_padded % 4 == 0 */
    UK_TAP(0);
    UK_TAP(1);
    UK_FENCE();
    UK_TAP(2);
    UK_TAP(3);
    UK_FENCE();
  }
#undef UK_TAP
#undef UK_FENCE
  if (np == 1) {
    store_acc(c, a0, o0, vl, outs[0]);
    return;
  }
  /* The rescale needs 24 registers: park the other accumulators. */
  int32_t buf[PIX - 1][OB];
  __riscv_vse32_v_i32m8(buf[0], a1, vl);
  if (np > 2) __riscv_vse32_v_i32m8(buf[1], a2, vl);
  store_acc(c, a0, o0, vl, outs[0]);
  store_mem(c, buf[0], o0, vl, outs[1]);
  if (np > 2) store_mem(c, buf[1], o0, vl, outs[2]);
}

void tinyml_uk_conv_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  const int32_t pixels = p->oh * p->ow, kp = p->k_padded;
  int16_t *col = (int16_t *)scratch; /* PIX columns of k_padded */
  for (int32_t n = 0; n < p->batch; ++n) {
    const int8_t *img = in + (size_t)n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)n * pixels * p->oc;
    for (int32_t q = 0; q < pixels; q += PIX) {
      int32_t np = pixels - q < PIX ? pixels - q : PIX;
      int8_t *outs[PIX];
      const int16_t *xs[PIX];
      for (int32_t i = 0; i < np; ++i) {
        im2col(p, img, (q + i) / p->ow, (q + i) % p->ow, col + (size_t)i * kp);
        outs[i] = dst + (size_t)(q + i) * p->oc;
        xs[i] = col + (size_t)i * kp;
      }
      for (int32_t i = np; i < PIX; ++i) xs[i] = col;
      for (int32_t o0 = 0; o0 < p->oc; o0 += OB) {
        size_t vl = (size_t)(p->oc - o0 < OB ? p->oc - o0 : OB);
        if (np == PIX)
          conv_block(&c, xs[0], xs[1], xs[2], o0, vl, PIX, outs);
        else if (np == 2)
          conv_block(&c, xs[0], xs[1], xs[2], o0, vl, 2, outs);
        else
          conv_block(&c, xs[0], xs[1], xs[2], o0, vl, 1, outs);
      }
    }
  }
}

/* ---- depthwise --------------------------------------------------------- */

/* One output pixel: taps at x + xo[t] (input) and wo[t] (weights). */
static void dw_pixel(const uk_ctx_t *c, const int8_t *x, const int32_t *xo, const int32_t *wo,
                     int32_t taps, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int8_t zp = (int8_t)p->in_zp;
  const int32_t ic = p->ic;
  for (int32_t c0 = 0; c0 < ic;) {
    size_t vl = __riscv_vsetvl_e32m8((size_t)(ic - c0));
    vint32m8_t acc = __riscv_vle32_v_i32m8(c->bias + c0, vl);
    for (int32_t t = 0; t < taps; ++t) {
      vint16m4_t xv = __riscv_vwsub_vx_i16m4(__riscv_vle8_v_i8m2(x + xo[t] + c0, vl), zp, vl);
      vint16m4_t wv = __riscv_vsext_vf2_i16m4(__riscv_vle8_v_i8m2(c->weights + wo[t] + c0, vl), vl);
      acc = __riscv_vwmacc_vv_i32m8(acc, xv, wv, vl);
    }
    store_acc(c, acc, c0, vl, dst);
    c0 += (int32_t)vl;
  }
}

void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  (void)scratch;
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  const int32_t taps_all = p->kh * p->kw;
  if (taps_all > UK_MAX_TAPS) {
    uk_depthwise_generic(&c, in, out);
    return;
  }
  /* Offsets of every tap from the top-left tap, for pixels whose taps are
   * all inside the image. */
  int32_t fxo[UK_MAX_TAPS], fwo[UK_MAX_TAPS], xo[UK_MAX_TAPS], wo[UK_MAX_TAPS];
  for (int32_t ky = 0, t = 0; ky < p->kh; ++ky)
    for (int32_t kx = 0; kx < p->kw; ++kx, ++t) {
      fxo[t] = (ky * p->dil_h * p->iw + kx * p->dil_w) * p->ic;
      fwo[t] = t * p->ic;
    }
  const int32_t span_h = (p->kh - 1) * p->dil_h, span_w = (p->kw - 1) * p->dil_w;
  for (int32_t b = 0; b < p->batch; ++b) {
    const int8_t *img = in + (size_t)b * p->ih * p->iw * p->ic;
    for (int32_t oy = 0; oy < p->oh; ++oy) {
      int32_t iy = oy * p->stride_h - p->pad_top;
      int32_t rows_in = iy >= 0 && iy + span_h < p->ih;
      for (int32_t ox = 0; ox < p->ow; ++ox) {
        int32_t ix = ox * p->stride_w - p->pad_left;
        int8_t *dst = out + (((size_t)b * p->oh + oy) * p->ow + ox) * p->oc;
        if (rows_in && ix >= 0 && ix + span_w < p->iw) {
          dw_pixel(&c, img + ((size_t)iy * p->iw + ix) * p->ic, fxo, fwo, taps_all, dst);
        } else {
          int32_t taps = uk_dw_taps(p, oy, ox, xo, wo);
          dw_pixel(&c, img, xo, wo, taps, dst);
        }
      }
    }
  }
}
