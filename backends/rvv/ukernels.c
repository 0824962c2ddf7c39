/* int8 microkernels for RISC-V with the V extension (RVV 1.0 intrinsics),
 * compiled to LLVM bitcode at build time and linked into every executable
 * (lib/ukernels/uk_abi.h).
 *
 * Vector-length agnostic: SEW/LMUL is 8 everywhere (e8m2, e16m4, e32m8, and
 * e32m4/e64m8 for the rescale), fixed lengths never exceed what VLEN = 128
 * (the V extension's minimum) holds, and the rest strip-mines on VLMAX.
 *
 * Each layer runs one of two kernels, whichever a rough instruction count
 * says is cheaper for its shape (choose_*):
 *
 * - Channel kernels: vector lanes are output channels.  Conv weights are
 *   packed [oc_padded/32][k_padded][32] (rvv.c: oc_block 32, k_block 1);
 *   the int16 im2col columns of 3 output pixels feed, per tap, one widened
 *   weight vector into three e32m8 accumulators (vwmacc.vx).  Depthwise runs
 *   a pixel at a time over up to VLMAX(e32m8) channels.  Good for few
 *   pixels and many channels.
 * - Pixel kernels: vector lanes are the output pixels of (a chunk of) one
 *   output row, or of all pixels for a 1x1 stride-1 unpadded conv.  Input
 *   values come straight from the image by strided loads, one scalar weight
 *   per output channel multiplies them (vwmacc.vx), and the per-channel
 *   rescale uses scalar parameters.  Good for many pixels and few channels.
 *   They take a row's interior columns (uk_interior_cols), whose taps all
 *   lie inside the image's width; the channel kernels take the others.
 *
 * Zero points: TOSA pads the input with its zero point, so
 * sum over taps of (x - zp) * w = sum of x' * w - zp * sum of w, where x' is
 * the input with padding lanes set to zp.  Pixel kernels and the depthwise
 * channel kernel start their accumulators at bias - zp * sum(w) and
 * multiply raw inputs (masked loads put zp in the padding lanes); the conv
 * channel kernel's im2col columns hold x - zp with zeros for padding.  All
 * sums are int32, as in the reference, so the results are identical.
 *
 * Rescale (uk_requant_ch, exactly): x = v * mult + (v < 0 ? round_neg :
 * round_pos) in 64 bits (vwmacc), vnsra by the shift (the int32 truncation
 * of x >> shift), + out_zp, clamp to [act_min, act_max], narrow to int8. */
#include <riscv_vector.h>

#include "../../lib/ukernels/uk_depthwise.h"

enum { OB = 32, PIX = 3 };

/* ---- the rescale, lanes = channels --------------------------------------- */

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

/* Rescales and stores vl <= VLMAX(e32m8) channels starting at o. */
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

/* The same from vl <= 2 * VLMAX(e32m4) int32 at acc. */
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

/* ---- the rescale, lanes = pixels of one channel -------------------------- */

UK_INLINE void px_requant_half(const tinyml_uk_params_t *p, const tinyml_uk_chan_t *ch,
                               vint32m4_t v, size_t n, int8_t *dst, ptrdiff_t stride) {
  vbool8_t neg = __riscv_vmslt_vx_i32m4_b8(v, 0, n);
  vint64m8_t r = __riscv_vmv_v_x_i64m8(ch->round_pos, n);
  r = __riscv_vmerge_vxm_i64m8(r, ch->round_neg, neg, n);
  r = __riscv_vwmacc_vx_i64m8(r, ch->mult, v, n);
  vint32m4_t y = __riscv_vnsra_wx_i32m4(r, (size_t)ch->shift, n);
  y = __riscv_vadd_vx_i32m4(y, p->out_zp, n);
  y = __riscv_vmax_vx_i32m4(y, p->act_min, n);
  y = __riscv_vmin_vx_i32m4(y, p->act_max, n);
  __riscv_vsse8_v_i8m1(dst, stride, __riscv_vncvt_x_x_w_i8m1(__riscv_vncvt_x_x_w_i16m2(y, n), n),
                       n);
}

/* vl <= VLMAX(e32m8) pixels of channel ch (bias included) to dst, dst + stride.. */
UK_INLINE void px_store(const tinyml_uk_params_t *p, const tinyml_uk_chan_t *ch, vint32m8_t acc,
                        size_t vl, int8_t *dst, ptrdiff_t stride) {
  size_t half = __riscv_vsetvlmax_e32m4();
  size_t n0 = vl < half ? vl : half;
  px_requant_half(p, ch, __riscv_vget_v_i32m8_i32m4(acc, 0), n0, dst, stride);
  if (vl > half)
    px_requant_half(p, ch, __riscv_vget_v_i32m8_i32m4(acc, 1), vl - half,
                    dst + (ptrdiff_t)half * stride, stride);
}

/* Lanes per pixel-kernel chunk: VLMAX(e32m8), at most 256. */
UK_INLINE size_t px_vlmax(void) {
  size_t v = __riscv_vsetvlmax_e32m8();
  return v < 256 ? v : 256;
}

/* The same from vl int32 at acc. */
UK_INLINE void px_store_mem(const tinyml_uk_params_t *p, const tinyml_uk_chan_t *ch,
                            const int32_t *acc, size_t vl, int8_t *dst, ptrdiff_t stride) {
  size_t half = __riscv_vsetvlmax_e32m4();
  size_t n0 = vl < half ? vl : half;
  px_requant_half(p, ch, __riscv_vle32_v_i32m4(acc, n0), n0, dst, stride);
  if (vl > half)
    px_requant_half(p, ch, __riscv_vle32_v_i32m4(acc + half, vl - half), vl - half,
                    dst + (ptrdiff_t)half * stride, stride);
}

/* ---- conv, channel kernel ------------------------------------------------ */

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
      a = uk_min32(a, p->kw);
      b = uk_max32(uk_min32(b, p->kw), a);
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
    UK_FENCE();
    UK_TAP(1);
    UK_FENCE();
    UK_TAP(2);
    UK_FENCE();
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

/* Output pixels pix[0..np-1] (np <= PIX; indices into image img's oh x ow
 * pixels), every channel.  col: PIX columns of k_padded int16. */
static void conv_group(const uk_ctx_t *c, const int8_t *img, int8_t *dst, const int32_t *pix,
                       int32_t np, int16_t *col) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded;
  int8_t *outs[PIX];
  const int16_t *xs[PIX];
  for (int32_t i = 0; i < np; ++i) {
    im2col(p, img, pix[i] / p->ow, pix[i] % p->ow, col + (size_t)i * kp);
    outs[i] = dst + (size_t)pix[i] * p->oc;
    xs[i] = col + (size_t)i * kp;
  }
  for (int32_t i = np; i < PIX; ++i) xs[i] = col;
  for (int32_t o0 = 0; o0 < p->oc; o0 += OB) {
    size_t vl = (size_t)uk_min32(p->oc - o0, OB);
    if (np == PIX)
      conv_block(c, xs[0], xs[1], xs[2], o0, vl, PIX, outs);
    else if (np == 2)
      conv_block(c, xs[0], xs[1], xs[2], o0, vl, 2, outs);
    else
      conv_block(c, xs[0], xs[1], xs[2], o0, vl, 1, outs);
  }
}

/* Output pixels [lo, hi), in groups that stay inside one image. */
static void conv_channels(const uk_ctx_t *c, const int8_t *in, int8_t *out, int16_t *col,
                          int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t pixels = p->oh * p->ow;
  for (int32_t n = lo / pixels; n * pixels < hi; ++n) {
    const int8_t *img = in + (size_t)n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)n * pixels * p->oc;
    const int32_t end = uk_min32(hi - n * pixels, pixels);
    for (int32_t q = uk_max32(lo - n * pixels, 0); q < end; q += PIX) {
      int32_t pix[PIX] = {q, q + 1, q + 2};
      conv_group(c, img, dst, pix, uk_min32(end - q, PIX), col);
    }
  }
}

/* ---- conv, pixel kernel -------------------------------------------------- */

enum { SB = 96 }; /* output channels per pass: 3 weight blocks, 32 triples */

/* Three output channels' accumulators a0..a2 += over n taps j: the inputs
 * at xb + j (lanes xs bytes apart) times the weights at w + j * OB + 0, 1,
 * 2.  Advances w. */
#define PX_TAP(x, j)                                                               \
  do {                                                                             \
    vint16m4_t u_ = __riscv_vsext_vf2_i16m4(__riscv_vlse8_v_i8m2((x), xs, vl), vl); \
    a0 = __riscv_vwmacc_vx_i32m8(a0, w[(j) * OB], u_, vl);                         \
    a1 = __riscv_vwmacc_vx_i32m8(a1, w[(j) * OB + 1], u_, vl);                     \
    a2 = __riscv_vwmacc_vx_i32m8(a2, w[(j) * OB + 2], u_, vl);                     \
    PX_FENCE();                                                                    \
  } while (0)
/* As in conv_block: three accumulators leave 8 vector registers, and the
 * scheduler would hoist more loads than fit. */
#define PX_FENCE() __asm__("" : "+vr"(a0), "+vr"(a1), "+vr"(a2), "+r"(w))
#define PX_TAPS(xb, n)                                                             \
  do {                                                                             \
    const int8_t *xp_ = (xb), *end4_ = xp_ + ((n) & ~3), *end_ = xp_ + (n);       \
    for (; xp_ != end4_; xp_ += 4, w += 4 * OB) {                                  \
      PX_TAP(xp_, 0);                                                              \
      PX_TAP(xp_ + 1, 1);                                                          \
      PX_TAP(xp_ + 2, 2);                                                          \
      PX_TAP(xp_ + 3, 3);                                                          \
    }                                                                              \
    for (; xp_ != end_; ++xp_, w += OB) PX_TAP(xp_, 0);                            \
  } while (0)

/* One chunk of vl output pixels starting at (oy, ox0) of image img, all
 * taps inside the image's width; output channels o0.. o0+on-1 (o0 % OB ==
 * 0, on <= SB; adj: their bias - zp * sum of weights), three at a time.
 * Triples stay inside a block of OB channels, so one pointer with
 * immediate offsets reaches their weights: the last triple of a block
 * overlaps the one before (32 = 3 * 10 + 2), which stores a channel twice. */
static void conv_px_chunk(const uk_ctx_t *c, const tinyml_uk_params_t *p, const int32_t *adj,
                          const int8_t *img, int32_t oy, int32_t ox0, size_t vl, int32_t o0,
                          int32_t on, int8_t *dst) {
  const int32_t ic = p->ic, kw = p->kw, kp = p->k_padded;
  const ptrdiff_t xs = (ptrdiff_t)p->stride_w * ic, cs = (ptrdiff_t)p->dil_w * ic;
  const int8_t zp = (int8_t)p->in_zp;
  const int8_t *x00 = img + (ptrdiff_t)(ox0 * p->stride_w - p->pad_left) * ic;
  for (int32_t b = o0; b < o0 + on; b += OB) {
    const int32_t nb = uk_min32(o0 + on - b, OB), last = uk_max32(nb - 3, 0);
    for (int32_t t = 0; t < nb; t += 3) {
      const int32_t o = b + uk_min32(t, last), r = o - o0;
      const int8_t *w = c->weights + (size_t)b * kp + (o - b); /* rows of OB */
      vint32m8_t a0 = __riscv_vmv_v_x_i32m8(adj[r], vl);
      vint32m8_t a1 = __riscv_vmv_v_x_i32m8(adj[r + 1], vl);
      vint32m8_t a2 = __riscv_vmv_v_x_i32m8(adj[r + 2], vl);
      for (int32_t ky = 0; ky < p->kh; ++ky) {
        int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
        if (iy < 0 || iy >= p->ih) { /* padding: every x' is zp */
          vint16m4_t z = __riscv_vmv_v_x_i16m4(zp, vl);
          for (int32_t j = 0; j < kw * ic; ++j, w += OB) {
            a0 = __riscv_vwmacc_vx_i32m8(a0, w[0], z, vl);
            a1 = __riscv_vwmacc_vx_i32m8(a1, w[1], z, vl);
            a2 = __riscv_vwmacc_vx_i32m8(a2, w[2], z, vl);
          }
          continue;
        }
        const int8_t *xr = x00 + (ptrdiff_t)iy * p->iw * ic;
        if (p->dil_w == 1) { /* the row's taps are one run */
          PX_TAPS(xr, kw * ic);
        } else {
          for (int32_t kx = 0; kx < kw; ++kx, xr += cs) PX_TAPS(xr, ic);
        }
      }
      /* The rescale needs 24 registers: park two accumulators. */
      int32_t buf[2 * 256]; /* vl <= px_vlmax() <= 256 */
      __riscv_vse32_v_i32m8(buf, a1, vl);
      __riscv_vse32_v_i32m8(buf + vl, a2, vl);
      px_store(p, c->chan + o, a0, vl, dst + o, p->oc);
      if (o + 1 < b + nb) px_store_mem(p, c->chan + o + 1, buf, vl, dst + o + 1, p->oc);
      if (o + 2 < b + nb) px_store_mem(p, c->chan + o + 2, buf + vl, vl, dst + o + 2, p->oc);
    }
  }
}
#undef PX_TAPS
#undef PX_FENCE
#undef PX_TAP

UK_INLINE int conv_is_flat(const tinyml_uk_params_t *p) {
  return p->kh == 1 && p->kw == 1 && p->stride_h == 1 && p->stride_w == 1 && p->pad_top == 0 &&
         p->pad_left == 0 && p->ih == p->oh && p->iw == p->ow;
}

/* conv_group on the pixels pix[0..np-1] of image n. */
static void conv_group_of(const uk_ctx_t *c, const tinyml_uk_params_t *p, const int8_t *in,
                          int8_t *out, int32_t n, const int32_t *pix, int32_t np, int16_t *col) {
  conv_group(c, in + (size_t)n * p->ih * p->iw * p->ic, out + (size_t)n * p->oh * p->ow * p->oc,
             pix, np, col);
}

/* The border columns (outside interior_cols) of the band [lo, hi), on the
 * channel kernel, in groups inside one image. */
static void conv_border(const uk_ctx_t *c, const tinyml_uk_params_t *p, const int8_t *in,
                        int8_t *out, int16_t *col, int32_t lo, int32_t hi) {
  int32_t cx0, cx1, pix[PIX], np = 0, img = lo / (p->oh * p->ow);
  uk_interior_cols(p, &cx0, &cx1);
  const int32_t r1 = uk_rows_end(p, lo, hi);
  for (int32_t r = lo / p->ow; r < r1; ++r) {
    int32_t x0, x1;
    uk_row_span(p, r, lo, hi, &x0, &x1);
    if (r / p->oh != img && np) conv_group_of(c, p, in, out, img, pix, np, col), np = 0;
    img = r / p->oh;
    for (int32_t ox = x0; ox < x1; ++ox) {
      if (ox >= cx0 && ox < cx1) ox = cx1;
      if (ox >= x1) break;
      pix[np++] = (r % p->oh) * p->ow + ox;
      if (np == PIX) conv_group_of(c, p, in, out, img, pix, np, col), np = 0;
    }
  }
  if (np) conv_group_of(c, p, in, out, img, pix, np, col);
}

/* Output pixels [lo, hi) (of batch * oh * ow, also when 1x1 convs run as
 * one long row). */
static void conv_pixels(const uk_ctx_t *c, const int8_t *in, int8_t *out, int16_t *col,
                        int32_t lo, int32_t hi) {
  tinyml_uk_params_t q = *c->p;
  const tinyml_uk_params_t *p = &q;
  if (conv_is_flat(p)) { /* 1x1: every pixel of every image is one long row */
    q.iw = q.ow = q.batch * q.oh * q.ow;
    q.ih = q.oh = q.batch = 1;
  }
  int32_t cx0, cx1;
  uk_interior_cols(p, &cx0, &cx1);
  if (cx0 > 0 || cx1 < q.ow) conv_border(c, p, in, out, col, lo, hi);
  if (cx1 <= cx0) return;
  const size_t vlmax = px_vlmax();
  const int32_t zp = q.in_zp, kp = q.k_padded;
  for (int32_t o0 = 0; o0 < q.oc; o0 += SB) {
    /* adj = bias - zp * (sum of the weights) of these channels */
    int32_t adj[SB + 2] = {0};
    for (int32_t b = o0; b < o0 + SB && b < q.oc; b += OB) {
      const size_t vb = OB;
      const int8_t *w = c->weights + (size_t)b * kp;
      vint32m8_t s = __riscv_vle32_v_i32m8(c->bias + b, vb);
      for (int32_t k = 0; k < q.k; ++k, w += OB)
        s = __riscv_vwmacc_vx_i32m8(
            s, (int16_t)-zp, __riscv_vsext_vf2_i16m4(__riscv_vle8_v_i8m2(w, vb), vb), vb);
      __riscv_vse32_v_i32m8(adj + (b - o0), s, vb);
    }
    int32_t on = uk_min32(q.oc - o0, SB), r1 = uk_rows_end(p, lo, hi);
    for (int32_t r = lo / q.ow; r < r1; ++r) {
      const int8_t *img = in + (size_t)(r / q.oh) * q.ih * q.iw * q.ic;
      int8_t *drow = out + (size_t)r * q.ow * q.oc;
      int32_t x0, x1;
      uk_row_span(p, r, lo, hi, &x0, &x1);
      const int32_t end = uk_min32(cx1, x1);
      for (int32_t ox = uk_max32(cx0, x0); ox < end;) {
        size_t vl = (size_t)uk_min32(end - ox, (int32_t)vlmax);
        conv_px_chunk(c, p, adj, img, r % q.oh, ox, vl, o0, on, drow + (size_t)ox * q.oc);
        ox += (int32_t)vl;
      }
    }
  }
}

/* ---- conv: which kernel -------------------------------------------------- */

static int conv_use_pixels(const tinyml_uk_params_t *p) {
  /* Instructions, roughly (measured at VLEN 128; what matters is the
   * ratio): the channel kernel per group of 3 pixels and 32 channels, and
   * per pixel (im2col); the pixel kernel per chunk and triple of channels,
   * plus its border columns on the channel kernel. */
  const int64_t vlmax = (int64_t)px_vlmax(), half = vlmax / 2;
  const int64_t np = (int64_t)p->batch * p->oh * p->ow, k = p->k, oc = p->oc, kh = p->kh;
  const int64_t blocks = (oc + OB - 1) / OB, hc = oc > half ? 2 : 1;
  const int64_t group = p->k_padded * 21 / 2 + 3 * hc * 30 + 60;
  const int64_t pixel = 60 + kh * (25 + 6 * ((p->kw * p->ic + 63) / 64));
  int64_t ch = (np + PIX - 1) / PIX * blocks * group + np * pixel;
  int64_t rows = (int64_t)p->batch * p->oh, width, border;
  if (conv_is_flat(p)) {
    rows = 1, width = np, border = 0;
  } else {
    int32_t c0, c1;
    uk_interior_cols(p, &c0, &c1);
    width = c1 - c0, border = (p->ow - width) * rows;
  }
  const int64_t chunks = rows * ((width + vlmax - 1) / vlmax);
  const int64_t halves = (width < vlmax ? width : vlmax) > half ? 2 : 1;
  int64_t trip = 0;
  for (int64_t b = 0; b < oc; b += OB) trip += ((oc - b < OB ? oc - b : OB) + 2) / 3;
  int64_t px = chunks * trip * (k * 41 / 4 + kh * 20 + 3 * halves * 30 + 40) + blocks * k * 4 +
               (border + PIX - 1) / PIX * blocks * group + border * pixel;
  return px < ch;
}

/* Output pixels [lo, hi) of workgroup wg (uk_abi.h).  Which kernel runs
 * depends on the layer only; sums are exact int32, so any band gives the
 * same bytes. */
void tinyml_uk_conv_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch,
                       int32_t wg, int32_t count) {
  uk_ctx_t c = uk_ctx(blob);
  int16_t *col = (int16_t *)uk_scratch(scratch, c.p, wg);
  int32_t lo, hi;
  uk_band(c.p, wg, count, &lo, &hi);
  if (c.p->oc_block != OB || c.p->k_block != 1) /* packed for another kernel */
    UK_CONV_DRIVER(&c, in, out, col, lo, hi, uk_conv_pixel_generic);
  else if (conv_use_pixels(c.p))
    conv_pixels(&c, in, out, col, lo, hi);
  else
    conv_channels(&c, in, out, col, lo, hi);
}

/* ---- depthwise, channel kernel ------------------------------------------- */

/* One output pixel whose taps are all inside the image: x is its top-left
 * tap.  The accumulators start at bias - zp_sum, so raw inputs multiply. */
static void dw_pixel_inside(const uk_ctx_t *c, const int8_t *x, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t ic = p->ic;
  const ptrdiff_t rs = (ptrdiff_t)p->dil_h * p->iw * ic, cs = (ptrdiff_t)p->dil_w * ic;
  for (int32_t c0 = 0; c0 < ic;) {
    size_t vl = __riscv_vsetvl_e32m8((size_t)(ic - c0));
    vint32m8_t acc = __riscv_vsub_vv_i32m8(
        __riscv_vle32_v_i32m8(c->bias + c0, vl),
        __riscv_vlse32_v_i32m8(&c->chan[c0].zp_sum, sizeof(tinyml_uk_chan_t), vl), vl);
    const int8_t *w = c->weights + c0;
    for (int32_t ky = 0; ky < p->kh; ++ky) {
      const int8_t *xr = x + ky * rs + c0;
      for (int32_t kx = 0; kx < p->kw; ++kx, xr += cs, w += ic) {
        vint16m4_t xv = __riscv_vsext_vf2_i16m4(__riscv_vle8_v_i8m2(xr, vl), vl);
        vint16m4_t wv = __riscv_vsext_vf2_i16m4(__riscv_vle8_v_i8m2(w, vl), vl);
        acc = __riscv_vwmacc_vv_i32m8(acc, xv, wv, vl);
      }
    }
    store_acc(c, acc, c0, vl, dst);
    c0 += (int32_t)vl;
  }
}

/* Any output pixel: taps at x + xo[t] (input) and wo[t] (weights). */
static void dw_pixel_taps(const uk_ctx_t *c, const int8_t *x, const int32_t *xo,
                          const int32_t *wo, int32_t taps, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int16_t zp = (int16_t)p->in_zp;
  const int32_t ic = p->ic;
  for (int32_t c0 = 0; c0 < ic;) {
    size_t vl = __riscv_vsetvl_e32m8((size_t)(ic - c0));
    vint32m8_t acc = __riscv_vle32_v_i32m8(c->bias + c0, vl);
    for (int32_t t = 0; t < taps; ++t) {
      vint16m4_t xv = __riscv_vsub_vx_i16m4(
          __riscv_vsext_vf2_i16m4(__riscv_vle8_v_i8m2(x + xo[t] + c0, vl), vl), zp, vl);
      vint16m4_t wv = __riscv_vsext_vf2_i16m4(__riscv_vle8_v_i8m2(c->weights + wo[t] + c0, vl), vl);
      acc = __riscv_vwmacc_vv_i32m8(acc, xv, wv, vl);
    }
    store_acc(c, acc, c0, vl, dst);
    c0 += (int32_t)vl;
  }
}

static void dw_channels(const uk_ctx_t *c, const int8_t *in, int8_t *out, int32_t lo,
                        int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  int32_t xo[UK_MAX_TAPS], wo[UK_MAX_TAPS];
  const int32_t span_h = (p->kh - 1) * p->dil_h, span_w = (p->kw - 1) * p->dil_w;
  uk_pos_t at = uk_pos_at(p, lo);
  for (int32_t q = lo; q < hi; ++q, uk_pos_next(p, &at)) {
    const int8_t *img = in + (size_t)at.n * p->ih * p->iw * p->ic;
    int32_t iy = at.oy * p->stride_h - p->pad_top, ix = at.ox * p->stride_w - p->pad_left;
    int8_t *dst = out + (size_t)q * p->oc;
    if (iy >= 0 && iy + span_h < p->ih && ix >= 0 && ix + span_w < p->iw) {
      dw_pixel_inside(c, img + ((size_t)iy * p->iw + ix) * p->ic, dst);
    } else {
      int32_t taps = uk_dw_taps(p, at.oy, at.ox, xo, wo);
      dw_pixel_taps(c, img, xo, wo, taps, dst);
    }
  }
}

/* ---- depthwise, pixel kernel --------------------------------------------- */

/* Channels ch and ch + d (d = 1, or 0 for a last odd channel) of a chunk of
 * vl output pixels from (oy, ox0) whose taps all lie inside the image's
 * width.  x00: the chunk's first input column in row 0. */
UK_INLINE void dw_px_pair(const uk_ctx_t *c, const int8_t *x00, int32_t oy, size_t vl,
                          int32_t ch, const int d, const int kw3, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t ic = p->ic, kw = kw3 ? 3 : p->kw; /* kw3: unrolled for kw == 3 */
  const ptrdiff_t xs = (ptrdiff_t)p->stride_w * ic, cs = (ptrdiff_t)p->dil_w * ic;
  const tinyml_uk_chan_t *cr = c->chan + ch;
  vint32m8_t a0 = __riscv_vmv_v_x_i32m8(cr[0].bias - cr[0].zp_sum, vl);
  vint32m8_t a1 = __riscv_vmv_v_x_i32m8(cr[d].bias - cr[d].zp_sum, vl);
  const int8_t *w = c->weights + ch;
  int32_t iy = oy * p->stride_h - p->pad_top;
  for (int32_t ky = 0; ky < p->kh; ++ky, iy += p->dil_h) {
    if (iy < 0 || iy >= p->ih) { /* padding: every x' is zp */
      vint16m4_t z = __riscv_vmv_v_x_i16m4((int16_t)p->in_zp, vl);
      for (int32_t kx = 0; kx < kw; ++kx, w += ic) {
        a0 = __riscv_vwmacc_vx_i32m8(a0, w[0], z, vl);
        a1 = __riscv_vwmacc_vx_i32m8(a1, w[d], z, vl);
      }
      continue;
    }
    const int8_t *xb = x00 + (ptrdiff_t)iy * p->iw * ic + ch;
    for (int32_t kx = 0; kx < kw; ++kx, w += ic, xb += cs) {
      vint16m4_t u = __riscv_vsext_vf2_i16m4(__riscv_vlse8_v_i8m2(xb, xs, vl), vl);
      a0 = __riscv_vwmacc_vx_i32m8(a0, w[0], u, vl);
      if (d) {
        vint16m4_t v = __riscv_vsext_vf2_i16m4(__riscv_vlse8_v_i8m2(xb + 1, xs, vl), vl);
        a1 = __riscv_vwmacc_vx_i32m8(a1, w[1], v, vl);
      }
    }
  }
  px_store(p, cr, a0, vl, dst + ch, ic);
  if (d) px_store(p, cr + 1, a1, vl, dst + ch + 1, ic);
}

/* One chunk of vl output pixels from (oy, ox0) whose taps all lie inside
 * the image's width, every channel. */
static void dw_px_chunk(const uk_ctx_t *c, const int8_t *img, int32_t oy, int32_t ox0,
                        size_t vl, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int8_t *x00 = img + (ptrdiff_t)(ox0 * p->stride_w - p->pad_left) * p->ic;
  int32_t ch = 0;
  if (p->kw == 3)
    for (; ch + 2 <= p->ic; ch += 2) dw_px_pair(c, x00, oy, vl, ch, 1, 1, dst);
  else
    for (; ch + 2 <= p->ic; ch += 2) dw_px_pair(c, x00, oy, vl, ch, 1, 0, dst);
  if (ch < p->ic) dw_px_pair(c, x00, oy, vl, ch, 0, 0, dst);
}

/* Output pixels [lo, hi), row by row. */
static void dw_pixels(const uk_ctx_t *c, const int8_t *in, int8_t *out, int32_t lo,
                      int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  const size_t vlmax = __riscv_vsetvlmax_e32m8();
  int32_t cx0, cx1, xo[UK_MAX_TAPS], wo[UK_MAX_TAPS];
  uk_interior_cols(p, &cx0, &cx1);
  const int32_t r1 = uk_rows_end(p, lo, hi);
  for (int32_t r = lo / p->ow; r < r1; ++r) {
    const int8_t *img = in + (size_t)(r / p->oh) * p->ih * p->iw * p->ic;
    const int32_t oy = r % p->oh;
    int8_t *drow = out + (size_t)r * p->ow * p->oc;
    int32_t x0, x1;
    uk_row_span(p, r, lo, hi, &x0, &x1);
    for (int32_t ox = x0; ox < x1; ++ox) { /* the other columns */
      if (ox >= cx0 && ox < cx1) ox = cx1;
      if (ox >= x1) break;
      int32_t taps = uk_dw_taps(p, oy, ox, xo, wo);
      dw_pixel_taps(c, img, xo, wo, taps, drow + (size_t)ox * p->oc);
    }
    const int32_t end = uk_min32(cx1, x1);
    for (int32_t ox = uk_max32(cx0, x0); ox < end;) {
      size_t vl = (size_t)uk_min32(end - ox, (int32_t)vlmax);
      dw_px_chunk(c, img, oy, ox, vl, drow + (size_t)ox * p->oc);
      ox += (int32_t)vl;
    }
  }
}

static int dw_use_pixels(const tinyml_uk_params_t *p) {
  /* As conv_use_pixels: the channel kernel per pixel and block of channels,
   * the pixel kernel per chunk and pair of channels, plus its border
   * columns on the channel kernel. */
  const int64_t vlmax = (int64_t)__riscv_vsetvlmax_e32m8(), half = vlmax / 2;
  const int64_t np = (int64_t)p->batch * p->oh * p->ow, taps = (int64_t)p->kh * p->kw;
  const int64_t ic = p->ic, rows = (int64_t)p->batch * p->oh;
  int32_t c0, c1;
  uk_interior_cols(p, &c0, &c1);
  const int64_t width = c1 - c0, border = (p->ow - width) * rows;
  const int64_t cb = (ic + vlmax - 1) / vlmax, hc = (ic < vlmax ? ic : vlmax) > half ? 2 : 1;
  const int64_t pixel = cb * (taps * 8 + hc * 30 + 20) + 30;
  int64_t ch = np * pixel + border * taps * 12;
  const int64_t chunks = rows * ((width + vlmax - 1) / vlmax);
  const int64_t halves = (width < vlmax ? width : vlmax) > half ? 2 : 1;
  int64_t px = chunks * ((ic + 1) / 2) * (p->kh * (p->kw * 10 + 16) + halves * 60 + 40) +
               border * (pixel + taps * 12);
  return taps <= UK_MAX_TAPS && px < ch;
}

/* Output pixels [lo, hi) of workgroup wg (uk_abi.h); as the conv. */
void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch,
                            int32_t wg, int32_t count) {
  (void)scratch;
  uk_ctx_t c;
  int32_t lo, hi;
  const tinyml_uk_params_t *p = uk_dw_start(&c, blob, wg, count, &lo, &hi);
  if (dw_use_pixels(p))
    dw_pixels(&c, in, out, lo, hi);
  else if (p->kh * p->kw > UK_MAX_TAPS)
    uk_depthwise_generic(&c, in, out, lo, hi);
  else
    dw_channels(&c, in, out, lo, hi);
}
