/* int8 microkernels for Armv7E-M (Cortex-M4/M7 DSP extension), compiled to
 * LLVM bitcode at build time and linked into every executable
 * (lib/ukernels/uk_abi.h).
 *
 * Conv works the way CMSIS-NN's s8 convolution does, on int16 im2col
 * columns and SMLAD, which multiplies two int16 pairs and adds both
 * products in one instruction.  The compiler folds the input zero point
 * into the bias (zp_in_bias: bias - in_zp * sum(w), exact modulo 2^32), so
 * the columns hold raw inputs and padding holds in_zp: a 4-tap group of
 * input channels is one word, and SXTB16 of it and of it rotated by 8 give
 * taps (0,2) and (1,3).  Weights are stored in tap order, so the same two
 * SXTB16s on a weight word pair them up.  Columns of n pixels (4, 2 or 1)
 * are interleaved word by word: group g of pixel i is words 2g*n + i
 * (taps 0,2) and (2g+1)*n + i (taps 1,3), so a kernel walks one pointer.
 * The main kernel is 2 channels x 4 pixels. */
#include <arm_acle.h>

#include "../../lib/ukernels/uk_abi.h"

/* The kernels read a blob's parameter header through this function,
 * which the compiler defines (lib/compiler/codegen/uk_specialise.c): in
 * each layer's copy of a kernel it returns that layer's header as a
 * constant, so LLVM folds every shape, stride, pad and zero point into the
 * copy before it unrolls; elsewhere it returns the blob. */
const tinyml_uk_params_t *tinyml_uk_header(const void *blob) __attribute__((const));
#define UK_HEADER(blob) tinyml_uk_header(blob)

#include "../../lib/ukernels/uk_depthwise.h"

UK_INLINE uint32_t ld32(const void *p) {
  uint32_t v;
  __builtin_memcpy(&v, p, 4);
  return v;
}

/* The output side of a kernel, held in locals so stores through int8_t
 * pointers (which may alias anything) do not force reloads. */
typedef struct m4_out {
  int32_t zp, lo, hi, full; /* full: the clamp is int8's own range */
  int32_t high; /* every shift lies in [33, 54]: the blob has req records */
} m4_out_t;

UK_INLINE m4_out_t m4_out(const tinyml_uk_params_t *p) {
  m4_out_t o = {p->out_zp, p->act_min, p->act_max, p->act_min == -128 && p->act_max == 127,
                p->req_off != 0};
  return o;
}

UK_INLINE int8_t m4_clamp(int32_t v, m4_out_t o) {
  if (o.full) return (int8_t)__ssat(v, 8);
  v = v < o.lo ? o.lo : v;
  return (int8_t)(v > o.hi ? o.hi : v);
}

/* apply_scale_32 of v (bias included) for a shift of 33 or more, as
 * tinyml_uk_req_t explains: hz is the high word of the rounding term (and
 * of anything else to add at 2^s), sh the shift minus 32. */
UK_INLINE int32_t m4_scale_hi(int32_t v, int32_t mult, int32_t hz, int32_t sh) {
  uint32_t lo;
  int32_t hi;
  /* Written out: clang made the low word with a constant move and BFI. */
  __asm__("and %[lo], %[v], #0x80000000\n\t"
          "orr %[lo], %[lo], #0x40000000\n\t"
          "add %[hi], %[hz], %[v], asr #31\n\t"
          "smlal %[lo], %[hi], %[v], %[m]"
          : [lo] "=&r"(lo), [hi] "=&r"(hi)
          : [v] "r"(v), [m] "r"(mult), [hz] "r"(hz));
  return hi >> sh;
}

/* uk_requant_ch on v = acc + bias.  With req records every shift is 33 or
 * more, and round_pos's high word is 2^(s-33), the hz of out_zp 0. */
UK_INLINE int8_t m4_requant_v(const tinyml_uk_chan_t *ch, int32_t v, m4_out_t o) {
  if (o.high)
    return m4_clamp(m4_scale_hi(v, ch->mult, (int32_t)(ch->round_pos >> 32), ch->shift - 32) + o.zp,
                    o);
  int32_t s = ch->shift;
  int64_t x = (int64_t)v * ch->mult + (v >= 0 ? ch->round_pos : ch->round_neg);
  v = (s >= 32 ? (int32_t)(x >> 32) >> (s - 32) : (int32_t)(x >> s)) + o.zp;
  return m4_clamp(v, o);
}

/* uk_requant_ch. */
UK_INLINE int8_t m4_requant(const tinyml_uk_chan_t *ch, int32_t acc, m4_out_t o) {
  return m4_requant_v(ch, (int32_t)((uint32_t)acc + (uint32_t)ch->bias), o);
}

/* A conv's per-channel data: the records when the blob has them. */
typedef struct m4_chan {
  const tinyml_uk_chan_t *chan;
  const tinyml_uk_req_t *req;
  const int32_t *bias;
} m4_chan_t;

UK_INLINE m4_chan_t m4_chan(const uk_ctx_t *c) {
  const uint8_t *blob = (const uint8_t *)c->chan - c->p->chan_off;
  m4_chan_t m = {c->chan, (const tinyml_uk_req_t *)(const void *)(blob + c->p->req_off), c->bias};
  return m;
}

/* Channels o and o + 1 (when it exists) of sums a and b that started
 * from their bias. */
UK_INLINE void store2(const m4_chan_t *m, int32_t o, int32_t oc, int32_t a, int32_t b,
                      m4_out_t q, int8_t *out) {
  int8_t ra, rb = 0;
  if (q.high) {
    const tinyml_uk_req_t *r = m->req + o;
    ra = m4_clamp(m4_scale_hi(a, r[0].mult, r[0].hz, r[0].sh), q);
    rb = m4_clamp(m4_scale_hi(b, r[1].mult, r[1].hz, r[1].sh), q);
  } else {
    ra = m4_requant_v(m->chan + o, a, q);
    if (o + 1 < oc) rb = m4_requant_v(m->chan + o + 1, b, q);
  }
  if (o + 1 < oc) out[o + 1] = rb;
  out[o] = ra;
}

/* Channel o of four pixels' sums, which started from its bias, into
 * out[o], out[o + oc], ...: one record's loads serve four outputs. */
UK_INLINE void store4(const m4_chan_t *m, int32_t o, int32_t oc, const int32_t a[4], m4_out_t q,
                      int8_t *out) {
  if (q.high) {
    const tinyml_uk_req_t r = m->req[o];
    for (int i = 0; i < 4; ++i) out[o + i * oc] = m4_clamp(m4_scale_hi(a[i], r.mult, r.hz, r.sh), q);
  } else {
    for (int i = 0; i < 4; ++i) out[o + i * oc] = m4_requant_v(m->chan + o, a[i], q);
  }
}

/* Writes one pixel's column into the layout of `n` pixels (header
 * comment): 4-tap group g of pixel i is words (2g * n + i) and
 * ((2g + 1) * n + i).  `col` points at the pixel's first word. */
UK_INLINE void put_group(uint32_t *col, int32_t n, uint32_t v) {
  col[0] = (uint32_t)__sxtb16(v);
  col[n] = (uint32_t)__sxtb16(__ror(v, 8));
}

/* Input channels a multiple of 4: each 4-tap group lies within one tap's
 * channels, so it is one word of the image, or all padding. */
static void col_words(const tinyml_uk_params_t *p, const int8_t *img, int32_t oy, int32_t ox,
                      uint32_t *col, int32_t n) {
  const uint32_t pad = 0x01010101u * (uint8_t)p->in_zp;
  for (int32_t ky = 0; ky < p->kh; ++ky) {
    int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
    for (int32_t kx = 0; kx < p->kw; ++kx) {
      int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
      if (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw) {
        const int8_t *src = img + ((size_t)iy * p->iw + ix) * p->ic;
        for (int32_t c = 0; c < p->ic; c += 4, col += 2 * n) put_group(col, n, ld32(src + c));
      } else {
        for (int32_t c = 0; c < p->ic; c += 4, col += 2 * n) put_group(col, n, pad);
      }
    }
  }
}

/* Any input channel count, tap by tap: first layers (1 or 3 channels),
 * whose columns are short. */
static void col_taps(const tinyml_uk_params_t *p, const int8_t *img, int32_t oy, int32_t ox,
                     uint32_t *col, int32_t n) {
  int16_t *h = (int16_t *)(void *)col;
  int32_t k = 0;
  for (int32_t ky = 0; ky < p->kh; ++ky) {
    int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
    for (int32_t kx = 0; kx < p->kw; ++kx) {
      int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
      int inside = iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw;
      const int8_t *src = img + ((size_t)iy * p->iw + ix) * p->ic;
      for (int32_t ch = 0; ch < p->ic; ++ch, ++k)
        h[((k >> 2) * 4 + (k & 1) * 2) * n + ((k >> 1) & 1)] = inside ? src[ch] : p->in_zp;
    }
  }
  for (; k < p->k_padded; ++k) h[((k >> 2) * 4 + (k & 1) * 2) * n + ((k >> 1) & 1)] = 0;
}

/* The columns of pixels q .. q + n - 1 of one image. */
static void im2col_n(const tinyml_uk_params_t *p, const int8_t *img, int32_t q, uint32_t *col,
                     int32_t n) {
  for (int32_t i = 0; i < n; ++i, ++q) {
    if (p->ic % 4 == 0)
      col_words(p, img, q / p->ow, q % p->ow, col + i, n);
    else
      col_taps(p, img, q / p->ow, q % p->ow, col + i, n);
  }
}

/* Two pixels x two channels over an interleaved column pair.  The tap
 * loop stays rolled: unrolled, it spills on 13 registers. */
static void conv_pair(const uk_ctx_t *c, const int16_t *cols, int8_t *out0, int8_t *out1) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded, oc = p->oc, ocp = p->oc_padded;
  const m4_out_t q = m4_out(p);
  const int8_t *w = c->weights;
  const m4_chan_t m = m4_chan(c);
  for (int32_t o = 0; o < ocp; o += 2) {
    int32_t a00 = m.bias[o], a01 = a00, a10 = m.bias[o + 1], a11 = a10;
    const int16_t *x = cols, *end = cols + 2 * kp;
    uint32_t wa, wb, xa, xb, t;
    /* Written out because clang's allocation of the same loop in C spilled
     * and shuffled registers: 17 instructions per 16 multiply-adds (LDRD
     * loads two words in one). */
    __asm__ volatile(
        "1:\n\t"
        "ldrd %[xa], %[xb], [%[x]], #8\n\t"
        "ldrd %[wa], %[wb], [%[w]], #8\n\t"
        "sxtb16 %[t], %[wa]\n\t"
        "smlad %[a00], %[t], %[xa], %[a00]\n\t"
        "smlad %[a01], %[t], %[xb], %[a01]\n\t"
        "sxtb16 %[t], %[wb]\n\t"
        "smlad %[a10], %[t], %[xa], %[a10]\n\t"
        "smlad %[a11], %[t], %[xb], %[a11]\n\t"
        "ldrd %[xa], %[xb], [%[x]], #8\n\t"
        "sxtb16 %[t], %[wa], ror #8\n\t"
        "smlad %[a00], %[t], %[xa], %[a00]\n\t"
        "smlad %[a01], %[t], %[xb], %[a01]\n\t"
        "sxtb16 %[t], %[wb], ror #8\n\t"
        "smlad %[a10], %[t], %[xa], %[a10]\n\t"
        "smlad %[a11], %[t], %[xb], %[a11]\n\t"
        "cmp %[x], %[end]\n\t"
        "bne 1b\n\t"
        : [a00] "+r"(a00), [a01] "+r"(a01), [a10] "+r"(a10), [a11] "+r"(a11), [x] "+r"(x),
          [w] "+r"(w), [wa] "=&r"(wa), [wb] "=&r"(wb), [xa] "=&r"(xa), [xb] "=&r"(xb),
          [t] "=&r"(t)
        : [end] "r"(end)
        : "cc", "memory");
    store2(&m, o, oc, a00, a10, q, out0);
    store2(&m, o, oc, a01, a11, q, out1);
  }
}

/* One trip of conv_quad's loop: 4 taps of 2 channels x 4 pixels. */
#define QUAD_TRIP \
  "ldrd %[t0], %[t1], [%[w]]\n\t" \
  "sxtb16 %[t0], %[t0]\n\t" \
  "sxtb16 %[t1], %[t1]\n\t" \
  "ldr %[xv], [%[x]], #4\n\t" \
  "smlad %[a00], %[t0], %[xv], %[a00]\n\t" \
  "smlad %[a10], %[t1], %[xv], %[a10]\n\t" \
  "ldr %[xv], [%[x]], #4\n\t" \
  "smlad %[a01], %[t0], %[xv], %[a01]\n\t" \
  "smlad %[a11], %[t1], %[xv], %[a11]\n\t" \
  "ldr %[xv], [%[x]], #4\n\t" \
  "smlad %[a02], %[t0], %[xv], %[a02]\n\t" \
  "smlad %[a12], %[t1], %[xv], %[a12]\n\t" \
  "ldr %[xv], [%[x]], #4\n\t" \
  "smlad %[a03], %[t0], %[xv], %[a03]\n\t" \
  "smlad %[a13], %[t1], %[xv], %[a13]\n\t" \
  "ldrd %[t0], %[t1], [%[w]], #8\n\t" \
  "sxtb16 %[t0], %[t0], ror #8\n\t" \
  "sxtb16 %[t1], %[t1], ror #8\n\t" \
  "ldr %[xv], [%[x]], #4\n\t" \
  "smlad %[a00], %[t0], %[xv], %[a00]\n\t" \
  "smlad %[a10], %[t1], %[xv], %[a10]\n\t" \
  "ldr %[xv], [%[x]], #4\n\t" \
  "smlad %[a01], %[t0], %[xv], %[a01]\n\t" \
  "smlad %[a11], %[t1], %[xv], %[a11]\n\t" \
  "ldr %[xv], [%[x]], #4\n\t" \
  "smlad %[a02], %[t0], %[xv], %[a02]\n\t" \
  "smlad %[a12], %[t1], %[xv], %[a12]\n\t" \
  "ldr %[xv], [%[x]], #4\n\t" \
  "smlad %[a03], %[t0], %[xv], %[a03]\n\t" \
  "smlad %[a13], %[t1], %[xv], %[a13]\n\t"

#define QUAD_LOOP(trips)                                                                 \
  __asm__ volatile("1:\n\t" trips "ldr %[t0], %[end]\n\t"                                 \
                   "cmp %[x], %[t0]\n\t"                                                   \
                   "bne 1b\n\t"                                                            \
                   : [a00] "+r"(a00), [a01] "+r"(a01), [a02] "+r"(a02), [a03] "+r"(a03),  \
                     [a10] "+r"(a10), [a11] "+r"(a11), [a12] "+r"(a12), [a13] "+r"(a13),  \
                     [x] "+r"(x), [w] "+r"(w), [t0] "=&r"(t0), [t1] "=&r"(t1),           \
                     [xv] "=&r"(xv)                                                      \
                   : [end] "m"(end)                                                      \
                   : "cc", "memory")

/* Four pixels x two channels: each channel pair's weights, widened once,
 * serve four pixels, 33 instructions per 32 multiply-adds.  13 registers
 * hold the loop, so its end is read from the stack. */
static void conv_quad(const uk_ctx_t *c, const int16_t *cols, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded, oc = p->oc, ocp = p->oc_padded;
  const m4_out_t q = m4_out(p);
  const int8_t *w = c->weights;
  const m4_chan_t m = m4_chan(c);
  for (int32_t o = 0; o < ocp; o += 2) {
    int32_t a00 = m.bias[o], a01 = a00, a02 = a00, a03 = a00;
    int32_t a10 = m.bias[o + 1], a11 = a10, a12 = a10, a13 = a10;
    const int16_t *x = cols, *end = cols + 4 * kp;
    uint32_t t0, t1, xv;
    /* Unrolled when the trips allow (k_padded is a layer constant): the
     * loop's end is read from the stack, which costs 3 per trip. */
    if (kp % 16 == 0)
      QUAD_LOOP(QUAD_TRIP QUAD_TRIP QUAD_TRIP QUAD_TRIP);
    else if (kp % 8 == 0)
      QUAD_LOOP(QUAD_TRIP QUAD_TRIP);
    else
      QUAD_LOOP(QUAD_TRIP);
    const int32_t a0[4] = {a00, a01, a02, a03}, a1[4] = {a10, a11, a12, a13};
    store4(&m, o, oc, a0, q, out);
    if (o + 1 < oc) store4(&m, o + 1, oc, a1, q, out);
  }
}

/* One pixel x two channels, 8 taps per trip (clang's allocation of a
 * 4-channel version spilled on 13 registers): odd tails, and
 * fully-connected layers. */
UK_INLINE void one_step(const int8_t *w, const int16_t *x, int32_t *a0, int32_t *a1) {
  uint32_t wa = ld32(w), wb = ld32(w + 4);
  int16x2_t xa = (int16x2_t)ld32(x), xb = (int16x2_t)ld32(x + 2);
  *a0 = __smlad(__sxtb16(wa), xa, *a0);
  *a0 = __smlad(__sxtb16(__ror(wa, 8)), xb, *a0);
  *a1 = __smlad(__sxtb16(wb), xa, *a1);
  *a1 = __smlad(__sxtb16(__ror(wb, 8)), xb, *a1);
}

static void conv_one(const uk_ctx_t *c, const int16_t *col, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded, oc = p->oc, ocp = p->oc_padded;
  const m4_out_t q = m4_out(p);
  const int8_t *w = c->weights;
  const m4_chan_t m = m4_chan(c);
  for (int32_t o = 0; o < ocp; o += 2) {
    int32_t a0 = m.bias[o], a1 = m.bias[o + 1];
    const int16_t *x = col, *end8 = col + (kp & ~7), *end = col + kp;
#pragma clang loop unroll(disable)
    for (; x != end8; x += 8, w += 16) {
      one_step(w, x, &a0, &a1);
      one_step(w + 8, x + 4, &a0, &a1);
    }
    if (x != end) {
      one_step(w, x, &a0, &a1);
      w += 8;
    }
    store2(&m, o, oc, a0, a1, q, out);
  }
}

/* Fully connected (one output pixel per image): 4 output channels x the
 * one column.  The weights are packed with oc_block 4 (armv7em.c,
 * fc_oc_block), so one LDM fetches the same 4-tap group of all 4 rows and
 * one LDRD the group's two column words, which all 4 rows share: 18
 * instructions per 16 multiply-adds.  The 4 row words are tied to
 * ascending registers because LDM fills them in register order.  The loop
 * stops at FC_END, a word after the column that no column word equals
 * (each half is an int8 value), because an end pointer would be a 14th
 * register, which the allocator cannot always find. */
#define FC_END "0x80008000"
#define FC_ROW(a, w)                              \
  "sxtb16 %[t], %[" w "]\n\t"                     \
  "smlad %[" a "], %[t], %[xa], %[" a "]\n\t"     \
  "sxtb16 %[t], %[" w "], ror #8\n\t"             \
  "smlad %[" a "], %[t], %[xb], %[" a "]\n\t"
/* One 4-tap group, then the next group's column words. */
#define FC_GROUP                                  \
  "ldm %[w]!, {%[w0], %[w1], %[w2], %[w3]}\n\t"   \
  FC_ROW("a0", "w0") FC_ROW("a1", "w1") FC_ROW("a2", "w2") FC_ROW("a3", "w3") \
  "ldrd %[xa], %[xb], [%[x]], #8\n\t"
/* `body` is FC_GROUP once or more. */
#define FC_LOOP(body)                                                                 \
  __asm__ volatile("ldrd %[xa], %[xb], [%[x]], #8\n\t"                              \
                   "1:\n\t" body "cmp %[xa], #" FC_END "\n\t"                         \
                   "bne 1b\n\t"                                                       \
                   : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),      \
                     [x] "+r"(x), [w] "+r"(w), [w0] "=&r"(w0), [w1] "=&r"(w1),        \
                     [w2] "=&r"(w2), [w3] "=&r"(w3), [xa] "=&r"(xa), [xb] "=&r"(xb), \
                     [t] "=&r"(t)                                                     \
                   :                                                                  \
                   : "cc", "memory")

/* Sums 4 rows over the column, which ends in FC_END; `w` advances past the
 * rows' weights.  Specialised per layer, only the loop that k_padded
 * allows survives: 8, 4, 2 or 1 groups per trip. */
UK_INLINE void fc_sums(const int8_t **wp, const int16_t *col, int32_t kp, int32_t acc[4]) {
  register uint32_t w0 __asm__("r3"), w1 __asm__("r4"), w2 __asm__("r5"), w3 __asm__("r6");
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const int8_t *w = *wp;
  const int16_t *x = col;
  uint32_t xa, xb, t;
  if (kp % 32 == 0)
    FC_LOOP(FC_GROUP FC_GROUP FC_GROUP FC_GROUP FC_GROUP FC_GROUP FC_GROUP FC_GROUP);
  else if (kp % 16 == 0)
    FC_LOOP(FC_GROUP FC_GROUP FC_GROUP FC_GROUP);
  else if (kp % 8 == 0)
    FC_LOOP(FC_GROUP FC_GROUP);
  else
    FC_LOOP(FC_GROUP);
  *wp = w;
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

static void fc_rows(const uk_ctx_t *c, const int16_t *col, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t oc = p->oc;
  const m4_out_t q = m4_out(p);
  const int8_t *w = c->weights;
  for (int32_t o = 0; o < p->oc_padded; o += 4) {
    int32_t acc[4];
    fc_sums(&w, col, p->k_padded, acc);
    for (int32_t j = 0; j < 4 && o + j < oc; ++j)
      out[o + j] = m4_requant(c->chan + o + j, acc[j], q);
  }
}

/* Images [lo, hi) of a fully-connected layer, one column each. */
static void fc_images(const uk_ctx_t *c, const int8_t *in, uint32_t *col, int8_t *out,
                      int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  for (int32_t n = lo; n < hi; ++n) {
    im2col_n(p, in + (size_t)n * p->ih * p->iw * p->ic, 0, col, 1);
    col[p->k_padded / 2] = 0x80008000u; /* FC_END; the scratch has room (uk_pack.c) */
    col[p->k_padded / 2 + 1] = 0;
    fc_rows(c, (const int16_t *)col, out + (size_t)n * p->oc);
  }
}

/* Output pixels [lo, hi) of workgroup wg (uk_abi.h), four at a time,
 * then two, then one, image by image.  The compiler never splits calls on
 * this single-core target, but the kernel honours the contract. */
void tinyml_uk_conv_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch,
                       int32_t wg, int32_t count) {
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  uint32_t *col = (uint32_t *)uk_scratch(scratch, p, wg);
  const int32_t pixels = p->oh * p->ow;
  int32_t lo, hi;
  uk_band(p, wg, count, &lo, &hi);
  if (p->oc_block == 4) { /* packed for the fully-connected kernel */
    fc_images(&c, in, col, out, lo, hi);
    return;
  }
  for (int32_t n = lo / pixels; n * pixels < hi; ++n) {
    const int8_t *img = in + (size_t)n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)n * pixels * p->oc;
    const int32_t end = hi - n * pixels < pixels ? hi - n * pixels : pixels;
    int32_t q = lo > n * pixels ? lo - n * pixels : 0;
    for (; q + 4 <= end; q += 4) {
      im2col_n(p, img, q, col, 4);
      conv_quad(&c, (const int16_t *)col, dst + (size_t)q * p->oc);
    }
    while (q + 2 <= end) {
      im2col_n(p, img, q, col, 2);
      int8_t *o0 = dst + (size_t)q * p->oc;
      conv_pair(&c, (const int16_t *)col, o0, o0 + p->oc);
      q += 2;
    }
    if (q < end) {
      im2col_n(p, img, q, col, 1);
      conv_one(&c, (const int16_t *)col, dst + (size_t)q * p->oc);
    }
  }
}

/* Depthwise.  With at most UK_MAX_TAPS taps the blob's weights are int16
 * (lib/compiler/tosa/uk_pack.c, backend.h dw_wide): for each full group of
 * 4 channels, tap by tap, the group's 4 weights as channels 0, 2, 1, 3;
 * then the channels after the last group, each as its taps.  SXTB16 splits
 * an input word of 4 channels into lanes (0, 2) and (1, 3), which meet
 * their weights in one word each without widening them: per 4 channels
 * and tap, one LDR, one LDRD (post-incremented: the weights are one
 * stream), two SXTB16 and four SMLABB/SMLATT.  After the weights come ic
 * bytes of in_zp, the row that taps outside the image read, so border
 * pixels run the same sums as the others.  The sums are of x * w; the
 * packer took in_zp * sum(w), chan[].zp_sum, off chan[].bias (exact
 * modulo 2^32, as m4_requant adds the bias). */
UK_INLINE const int16_t *dw_w16(const uk_ctx_t *c) {
  return (const int16_t *)(const void *)c->weights;
}

UK_INLINE const int8_t *dw_pad_row(const uk_ctx_t *c) {
  const tinyml_uk_params_t *p = c->p;
  return c->weights + ((2 * p->kh * p->kw * p->ic + 3) & ~3);
}

typedef struct dw_acc {
  int32_t a0, a1, a2, a3;
} dw_acc_t;

/* One tap of 4 channels: x holds the channels' inputs, *w their weights,
 * then the next tap's.  Written out because clang, given the unrolled taps
 * in C, summed one channel at a time and spilled the widened inputs. */
UK_INLINE void dw_tap(dw_acc_t *a, uint32_t x, const int16_t **w) {
  uint32_t w02, w13, t;
  __asm__ volatile(
      "ldrd %[w02], %[w13], [%[w]], #8\n\t"
      "sxtb16 %[t], %[x]\n\t"
      "smlabb %[a0], %[t], %[w02], %[a0]\n\t"
      "smlatt %[a2], %[t], %[w02], %[a2]\n\t"
      "sxtb16 %[t], %[x], ror #8\n\t"
      "smlabb %[a1], %[t], %[w13], %[a1]\n\t"
      "smlatt %[a3], %[t], %[w13], %[a3]\n\t"
      : [a0] "+r"(a->a0), [a1] "+r"(a->a1), [a2] "+r"(a->a2), [a3] "+r"(a->a3), [w] "+r"(*w),
        [w02] "=&r"(w02), [w13] "=&r"(w13), [t] "=&r"(t)
      : [x] "r"(x)
      : "memory");
}

UK_INLINE void dw_store4(const uk_ctx_t *c, int32_t c0, dw_acc_t a, int8_t *dst) {
  const tinyml_uk_chan_t *ch = c->chan + c0;
  const m4_out_t q = m4_out(c->p);
  int8_t r0 = m4_requant(ch, a.a0, q), r1 = m4_requant(ch + 1, a.a1, q);
  int8_t r2 = m4_requant(ch + 2, a.a2, q), r3 = m4_requant(ch + 3, a.a3, q);
  dst[c0] = r0;
  dst[c0 + 1] = r1;
  dst[c0 + 2] = r2;
  dst[c0 + 3] = r3;
}

UK_INLINE void dw_store1(const uk_ctx_t *c, int32_t c0, int32_t a, int8_t *dst) {
  dst[c0] = m4_requant(c->chan + c0, a, m4_out(c->p));
}

/* The input of each tap of output pixel (oy, ox), the padding row for a
 * tap outside the image. */
static void dw_tap_ptrs(const uk_ctx_t *c, const int8_t *img, int32_t oy, int32_t ox,
                        const int8_t **xp) {
  const tinyml_uk_params_t *p = c->p;
  const int8_t *pad = dw_pad_row(c);
  for (int32_t ky = 0; ky < p->kh; ++ky) {
    const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
    for (int32_t kx = 0; kx < p->kw; ++kx, ++xp) {
      const int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
      const int inside = iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw;
      *xp = inside ? img + ((size_t)iy * p->iw + ix) * p->ic : pad;
    }
  }
}

/* A pixel whose window crosses the image's border, through its taps'
 * input pointers. */
static void dw_pixel(const uk_ctx_t *c, const int8_t *const *xp, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t taps = p->kh * p->kw;
  const int16_t *w = dw_w16(c);
  int32_t c0 = 0;
  for (; c0 + 4 <= p->ic; c0 += 4) {
    dw_acc_t a = {0, 0, 0, 0};
    for (int32_t t = 0; t < taps; ++t) dw_tap(&a, ld32(xp[t] + c0), &w);
    dw_store4(c, c0, a, dst);
  }
  for (; c0 < p->ic; ++c0, w += taps) {
    int32_t a = 0;
    for (int32_t t = 0; t < taps; ++t) a += xp[t][c0] * w[t];
    dw_store1(c, c0, a, dst);
  }
}

/* A pixel whose taps all lie in the image, x0 its window's first tap: the
 * offsets of the taps are the layer's constants. */
static void dw_inner(const uk_ctx_t *c, const int8_t *x0, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t row = p->dil_h * p->iw * p->ic, step = p->dil_w * p->ic;
  const int16_t *w = dw_w16(c);
  int32_t c0 = 0;
  for (; c0 + 4 <= p->ic; c0 += 4) {
    dw_acc_t a = {0, 0, 0, 0};
    for (int32_t ky = 0; ky < p->kh; ++ky)
      for (int32_t kx = 0; kx < p->kw; ++kx) dw_tap(&a, ld32(x0 + ky * row + kx * step + c0), &w);
    dw_store4(c, c0, a, dst);
  }
  for (; c0 < p->ic; ++c0) {
    int32_t a = 0;
    for (int32_t ky = 0; ky < p->kh; ++ky)
      for (int32_t kx = 0; kx < p->kw; ++kx, ++w) a += x0[ky * row + kx * step + c0] * *w;
    dw_store1(c, c0, a, dst);
  }
}

void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch,
                            int32_t wg, int32_t count) {
  (void)scratch;
  uk_ctx_t c;
  int32_t lo, hi;
  const tinyml_uk_params_t *p = uk_dw_start(&c, blob, wg, count, &lo, &hi);
  if (uk_dw_large_generic(&c, in, out, lo, hi)) return;
  const int8_t *xp[UK_MAX_TAPS];
  for (int32_t r = lo / p->ow; r * p->ow < hi; ++r) { /* rows of batch * oh */
    const int32_t oy = r % p->oh;
    const int8_t *img = in + (size_t)(r / p->oh) * p->ih * p->iw * p->ic;
    int32_t x0, x1;
    uk_row_span(p, r, lo, hi, &x0, &x1);
    for (int32_t ox = x0; ox < x1; ++ox) {
      int8_t *dst = out + ((size_t)r * p->ow + ox) * p->oc;
      int32_t iy = oy * p->stride_h - p->pad_top, ix = ox * p->stride_w - p->pad_left;
      if (iy >= 0 && ix >= 0 && iy + (p->kh - 1) * p->dil_h < p->ih &&
          ix + (p->kw - 1) * p->dil_w < p->iw) {
        dw_inner(&c, img + ((size_t)iy * p->iw + ix) * p->ic, dst);
        continue;
      }
      dw_tap_ptrs(&c, img, oy, ox, xp);
      dw_pixel(&c, xp, dst);
    }
  }
}
