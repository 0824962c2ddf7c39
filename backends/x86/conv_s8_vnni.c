/* The int8 conv with 4-tap dot products (AVX512-VNNI's vpdpbusd), for
 * modules whose CPU has them (uk_abi.h, dot4); tinyml_uk_conv_s8
 * (conv_s8.c) calls dot4_conv in the VNNI bitcode only (UK_VNNI).
 *
 * vpdpbusd multiplies unsigned by signed bytes, four taps per 32-bit lane,
 * where vpmaddwd takes two int16 taps: half the instructions per tap, and
 * im2col columns of bytes instead of int16.  The columns hold
 * u = x + 128 (x ^ 0x80); a padded tap holds in_zp + 128, which is x = in_zp.
 * Then sum (x - in_zp) * w = sum u * w - (in_zp + 128) * sum w, so the
 * compiler folds -(in_zp + 128) * sum w into a second bias (uk_abi.h,
 * dot4).  That is exact modulo 2^32 (vpdpbusd wraps, it does not
 * saturate), and the int16 path's sum fits in an int32, so the bytes out
 * are the same.
 *
 * The weights stay as the compiler packs them for vpmaddwd (8 channels x
 * 2 taps); one vpermw per 16 channels and 4 taps puts each channel's 4
 * taps side by side, and serves PIX pixels.
 *
 * The functions carry the feature themselves, so the unit also compiles
 * into the plain AVX-512 bitcode (meson.build gives both one list), where
 * nothing calls them and globaldce drops them. */
#include "conv_s8.h"
#include "conv_s8_plan.h"

UK_INLINE __m512i dot4_col(const uint8_t *col, int32_t k) {
  int32_t v;
  __builtin_memcpy(&v, col + k, 4);
  return _mm512_set1_epi32(v);
}

/* The outputs of an 8-channel panel (dot4_tile's half): two pixels per
 * rescale, the second's sums moved into the high half. */
UK_DOT4 UK_INLINE void dot4_half_out(const uk_ctx_t *c, __m512i (*a)[2], int32_t o0,
                                     int32_t npix, int8_t *const *outs) {
  const int32_t n = left(c->p, o0);
  rq16_t q;
  if (!rq16_pair(c, o0, &q)) {
    for (int i = 0; i < npix; ++i) requant8(c, _mm512_castsi512_si256(a[i][0]), o0, outs[i], n);
    return;
  }
  int i = 0;
  for (; i + 2 <= npix; i += 2) {
    __m512i v = _mm512_inserti64x4(a[i][0], _mm512_castsi512_si256(a[i + 1][0]), 1);
    rq16_store2(rq16_apply(&q, v), outs[i] + o0, outs[i + 1] + o0, n);
  }
  if (i < npix) rq16_store(rq16_apply(&q, a[i][0]), outs[i] + o0, n);
}

/* PIX pixels x 16 * nz channels from o0; with half, one 8-channel panel
 * (the last of an oc_padded that is not a multiple of 16). */
UK_DOT4 UK_INLINE void dot4_tile(const uk_ctx_t *c, int nz, int half, const uint8_t *col,
                                 int32_t o0, int32_t npix, int8_t *const *outs) {
  const int32_t kp = c->p->k_padded;
  const int8_t *w = c->weights + (size_t)o0 * kp;
  const size_t panel = (size_t)8 * kp;
  const __m512i ix = dot4_index();
  __m512i a[PIX][2];
  for (int i = 0; i < PIX; ++i) a[i][0] = a[i][1] = _mm512_setzero_si512();
  for (int32_t k = 0; k < kp; k += 4) {
    __m512i x0 = dot4_w(w + k * 8, (half ? w : w + panel) + k * 8, ix);
    __m512i x1 = nz == 2 ? dot4_w(w + 2 * panel + k * 8, w + 3 * panel + k * 8, ix) : x0;
    for (int i = 0; i < PIX; ++i) {
      __m512i u = dot4_col(col + (size_t)i * kp, k);
      a[i][0] = _mm512_dpbusd_epi32(a[i][0], u, x0);
      if (nz == 2) a[i][1] = _mm512_dpbusd_epi32(a[i][1], u, x1);
    }
  }
  if (half) {
    dot4_half_out(c, a, o0, npix, outs);
    return;
  }
  store_tile16(c, a, o0, nz, npix, outs);
}

static __attribute__((noinline)) UK_DOT4 void uk_tile_dot4(const uk_ctx_t *c, const uint8_t *col,
                                                           int32_t npix, int8_t *const *outs) {
  const int32_t ocp = c->p->oc_padded;
  int32_t o0 = 0;
  for (; o0 + 32 <= ocp; o0 += 32) dot4_tile(c, 2, 0, col, o0, npix, outs);
  if (o0 + 16 <= ocp) {
    dot4_tile(c, 1, 0, col, o0, npix, outs);
    o0 += 16;
  }
  if (o0 < ocp) dot4_tile(c, 1, 1, col, o0, npix, outs);
}

/* tinyml_uk_conv_s8's pixels [lo, hi) with 4-tap dot products, for a blob
 * whose dot4 is set (the caller tests it). */
UK_DOT4 void dot4_conv(const uk_ctx_t *c0, const int8_t *in, int8_t *out, uint8_t *col,
                       int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c0->p; /* the blob's start */
  uk_ctx_t c = *c0;
  c.bias = (const int32_t *)(const void *)((const uint8_t *)p + p->dot4);
  /* The fast paths (conv_s8_plan.h) return 0 only if their own checks
   * disagree with the plan; then the columns below do the same sums. */
  switch (uk_conv_s8_plan(p, c.shift)) {
  case UK_CONV_S8_LANES:
    if (lanes_conv(&c, in, out, lo, hi)) return;
    break;
  case UK_CONV_S8_PW:
    if (pw_conv(&c, in, out, lo, hi)) return;
    break;
  case UK_CONV_S8_PW31:
    if (pw_conv31(&c, in, out, lo, hi)) return;
    break;
  case UK_CONV_S8_PW9:
    if (pw9_conv(&c, in, out, lo, hi)) return;
    break;
  case UK_CONV_S8_PWK:
    if (pwk_conv(&c, in, out, col, lo, hi)) return;
    break;
  default:
    break;
  }
  const int32_t kp = p->k_padded, image = p->ih * p->iw * p->ic;
  uk_pos_t at = uk_pos_at(p, lo);
  /* A 1x1 conv's columns are its input rows, PIX of them one block. */
  const int rows = tinyml_uk_direct_1x1(p) && kp == p->ic;
  for (int32_t q = lo; q < hi; q += PIX) {
    int32_t np = hi - q < PIX ? hi - q : PIX;
    int8_t *outs[PIX];
    for (int32_t i = 0; i < np; ++i) outs[i] = out + (size_t)(q + i) * p->oc;
    if (rows) {
      dot4_flip(in + (size_t)q * kp, col, np * kp);
    } else {
      for (int32_t i = 0; i < np; ++i, uk_pos_next(p, &at))
        dot4_im2col(p, in + (size_t)at.n * image, at.oy, at.ox, col + (size_t)i * kp);
    }
    dot4_fill(col + (size_t)np * kp, 0, (PIX - np) * kp);
    uk_tile_dot4(&c, col, np, outs);
  }
}
