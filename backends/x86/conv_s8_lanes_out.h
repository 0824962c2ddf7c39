/* The lanes kernel's rescaled bytes back to NHWC (conv_s8_lanes.c): its
 * accumulators hold one channel of 16 pixels a vector; 4 channels at a
 * time become pixels by packs and in-lane shuffles, with no VBMI (the
 * VNNI bitcode is built for Cascade Lake, which lacks it). */
#ifndef TINYML_BACKENDS_X86_CONV_S8_LANES_OUT_H
#define TINYML_BACKENDS_X86_CONV_S8_LANES_OUT_H

#include "conv_s8.h"

/* Channels v[0..3] of 16 pixels saturated to bytes (vpackssdw and
 * vpacksswb saturate as vpmovsdb does) and clamped; then, per 128-bit
 * lane k, pixel 4k + q's 4 channels in dword q (an in-lane vpshufb:
 * the packs leave channel c's pixels 4k..4k+3 in bytes 4c..4c+3). */
UK_INLINE __m512i ln_quad(const __m512i *v, __m512i lo, __m512i hi) {
  const __m512i t = _mm512_set4_epi32(0x0f0b0703, 0x0e0a0602, 0x0d090501, 0x0c080400);
  const __m512i b =
      _mm512_packs_epi16(_mm512_packs_epi32(v[0], v[1]), _mm512_packs_epi32(v[2], v[3]));
  return _mm512_shuffle_epi8(_mm512_min_epi8(_mm512_max_epi8(b, lo), hi), t);
}

/* n bytes of x (n <= 64) at d: a plain store when whole. */
UK_INLINE void ln_store(int8_t *d, __m512i x, int32_t n) {
  if (n >= 64)
    _mm512_storeu_si512(d, x);
  else if (n > 0)
    _mm512_mask_storeu_epi8(d, (__mmask64)((1ULL << n) - 1), x);
}

/* 8 channels' bytes of 16 pixels in pixel order: 8 bytes a pixel, pixels
 * 0-7 in x[0], 8-15 in x[1]. */
UK_INLINE void ln_pix8(const __m512i *r, __m512i lo, __m512i hi, __m512i x[2]) {
  const __m512i q0 = ln_quad(r, lo, hi), q1 = ln_quad(r + 4, lo, hi);
  /* lane k: pixels 4k, 4k + 1 in a's qwords, 4k + 2, 4k + 3 in b's */
  const __m512i a = _mm512_unpacklo_epi32(q0, q1), b = _mm512_unpackhi_epi32(q0, q1);
  x[0] = _mm512_permutex2var_epi64(a, _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), b);
  x[1] = _mm512_permutex2var_epi64(a, _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4), b);
}

/* 16 channels' bytes of 16 pixels: pixel 4k + q in lane k of x[q]. */
UK_INLINE void ln_pix16(const __m512i *r, __m512i lo, __m512i hi, __m512i x[4]) {
  __m512i q[4];
  for (int j = 0; j < 4; ++j) q[j] = ln_quad(r + 4 * j, lo, hi);
  const __m512i al = _mm512_unpacklo_epi32(q[0], q[1]), ah = _mm512_unpackhi_epi32(q[0], q[1]);
  const __m512i bl = _mm512_unpacklo_epi32(q[2], q[3]), bh = _mm512_unpackhi_epi32(q[2], q[3]);
  x[0] = _mm512_unpacklo_epi64(al, bl);
  x[1] = _mm512_unpackhi_epi64(al, bl);
  x[2] = _mm512_unpacklo_epi64(ah, bh);
  x[3] = _mm512_unpackhi_epi64(ah, bh);
}

/* ln_pix16's lanes as 4 pixels a vector (a 4x4 transpose of lanes). */
UK_INLINE void ln_rows16(__m512i x[4]) {
  const __m512i t0 = _mm512_shuffle_i64x2(x[0], x[1], 0x44),
                t1 = _mm512_shuffle_i64x2(x[2], x[3], 0x44);
  const __m512i t2 = _mm512_shuffle_i64x2(x[0], x[1], 0xEE),
                t3 = _mm512_shuffle_i64x2(x[2], x[3], 0xEE);
  x[0] = _mm512_shuffle_i64x2(t0, t1, 0x88);
  x[1] = _mm512_shuffle_i64x2(t0, t1, 0xDD);
  x[2] = _mm512_shuffle_i64x2(t2, t3, 0x88);
  x[3] = _mm512_shuffle_i64x2(t2, t3, 0xDD);
}

/* The rescaled bytes r[0..nb) (channel per vector, 16 pixels) of cnt
 * pixels to NHWC at out (channel o0 of the chunk's first pixel).  When
 * the chunk's channels are all of oc (vww's 8, resnet8's 16) its pixels
 * are one run of cnt * nb bytes: whole 64-byte stores. */
UK_DOT4 UK_INLINE void ln_out(const tinyml_uk_params_t *p, const __m512i *r, int8_t *out,
                              int32_t cnt, int32_t o0, int nb) {
  const __m512i lo = _mm512_set1_epi8((char)p->act_min), hi = _mm512_set1_epi8((char)p->act_max);
  __m512i x[4];
  int8_t t[256] __attribute__((aligned(64)));
  const __mmask16 m = rq16_live(uk_min32(nb, p->oc - o0));
  if (nb == 8) {
    ln_pix8(r, lo, hi, x);
    if (p->oc == 8) {
      ln_store(out, x[0], cnt * 8);
      ln_store(out + 64, x[1], cnt * 8 - 64);
      return;
    }
    _mm512_store_si512(t, x[0]);
    _mm512_store_si512(t + 64, x[1]);
    for (int32_t l = 0; l < cnt; ++l)
      _mm_mask_storeu_epi8(out + (size_t)l * p->oc, m,
                           _mm_loadl_epi64((const __m128i *)(const void *)(t + 8 * l)));
    return;
  }
  ln_pix16(r, lo, hi, x);
  if (p->oc == 16) {
    ln_rows16(x);
    for (int v = 0; v < 4; ++v) ln_store(out + 64 * v, x[v], cnt * 16 - 64 * v);
    return;
  }
  for (int v = 0; v < 4; ++v) _mm512_store_si512(t + 64 * v, x[v]);
  for (int32_t l = 0; l < cnt; ++l) {
    const __m128i v =
        _mm_load_si128((const __m128i *)(const void *)(t + (l % 4) * 64 + (l / 4) * 16));
    if (m == 0xFFFF)
      _mm_storeu_si128((__m128i *)(void *)(out + (size_t)l * p->oc), v);
    else
      _mm_mask_storeu_epi8(out + (size_t)l * p->oc, m, v);
  }
}

#endif
