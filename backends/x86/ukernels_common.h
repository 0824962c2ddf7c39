/* What several of the x86-64 microkernel units share: the int8 rescale of
 * 8 channels and the f32 epilogue on a vector.
 *
 * The kernels (lib/ukernels/uk_abi.h) are laid out as IREE lays out its
 * ukernels: one unit per operation and ISA, a driver (conv_s8.c,
 * conv_f32.c, ...) built into both bitcodes and its ISA's tiles
 * (conv_s8_avx2.c, conv_s8_avx512.c, ...) built only into theirs.
 * meson.build compiles each unit to LLVM bitcode with the bitcode's flags,
 * links them into one module and internalizes all but the tinyml_uk_*
 * entry points, so that a unit's helpers inline into their callers and
 * never become a compiled model's exports.  The AVX2 bitcode is built with
 * AVX2 and FMA, the wide one a second time with AVX-512 (F, BW, VL, DQ)
 * for CPUs that have it: then 16 channels share a vector. */
#ifndef TINYML_BACKENDS_X86_UKERNELS_COMMON_H
#define TINYML_BACKENDS_X86_UKERNELS_COMMON_H

#include <immintrin.h>

#include "../../lib/ukernels/uk_common.h"

/* p + n elements, formed as an integer.  For addresses that may lie
 * outside p's array: a shifted head block starts up to a vector before
 * channel 0 (only its lanes from channel 0 on are loaded or stored, under
 * a mask), and a prefetch may aim past the end.  Pointer arithmetic that
 * leaves an array is undefined in C, which an optimiser may exploit. */
#define UK_AT(p, n) ((__typeof__(p))((uintptr_t)(p) + (uintptr_t)(intptr_t)(n) * sizeof(*(p))))

/* UK_PATH(name);, one line on each branch of a run-time choice between
 * code paths that give the same bytes (depthwise_s8.c's kernels,
 * pwk_run's band or columns, the f32 depthwise's rows of 3 and row
 * edges): no output test can tell which one ran, so a dispatch that lost
 * its fast path would pass them all.  Empty, and so free, unless the file
 * including this header defines it first, as the native white-box test
 * tests/compiler/test_uk_paths.c does to count each name's runs (its enum
 * lists the names; a new one goes there too).  The kernels' bitcode
 * (meson.build) never defines it. */
#ifndef UK_PATH
#define UK_PATH(name) ((void)0)
#endif

/* Before a loop clang must unroll fully: conv_s8_pw.c's accumulators then
 * stay in registers, and the max pool's pairs of lines (lines_px) fold
 * their masks (12.8 against 12.9-13.3 us at +16, docs/PERF.md).  gcc
 * builds these files too, for the native white-box tests, where the
 * pragma would be an unknown-pragma error. */
#ifdef __clang__
#define UK_UNROLL _Pragma("clang loop unroll(full)")
#else
#define UK_UNROLL
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define UK_ZMM 1
#else
#define UK_ZMM 0
#endif

/* ---- int8: the rescale of 8 channels (conv and depthwise) -------------- */

UK_INLINE __m256i ld8(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)(const void *)p); }

#if UK_ZMM
/* Rescales 8 channels' accumulators (bias not yet added) and stores n:
 * AVX-512 has the 64-bit arithmetic shift and the narrowing moves that the
 * AVX2 version builds from shuffles. */
UK_INLINE void requant8(const uk_ctx_t *c, __m256i acc, int32_t o0, int8_t *out, int32_t n) {
  const tinyml_uk_params_t *p = c->p;
  __m256i v = _mm256_add_epi32(acc, ld8(c->bias + o0));
  __m512i prod =
      _mm512_mul_epi32(_mm512_cvtepi32_epi64(v), _mm512_cvtepi32_epi64(ld8(c->mult + o0)));
  __mmask8 neg = _mm256_cmplt_epi32_mask(v, _mm256_setzero_si256());
  __m512i rnd = _mm512_mask_blend_epi64(neg, _mm512_loadu_si512(c->round_pos + o0),
                                        _mm512_loadu_si512(c->round_neg + o0));
  __m512i x = _mm512_srav_epi64(_mm512_add_epi64(prod, rnd),
                               _mm512_cvtepu32_epi64(ld8(c->shift + o0)));
  __m256i r = _mm256_add_epi32(_mm512_cvtepi64_epi32(x), _mm256_set1_epi32(p->out_zp));
  r = _mm256_max_epi32(r, _mm256_set1_epi32(p->act_min));
  r = _mm256_min_epi32(r, _mm256_set1_epi32(p->act_max));
  _mm_mask_storeu_epi8(out + o0, (__mmask16)((1u << n) - 1), _mm256_cvtepi32_epi8(r));
}

#else
/* apply_scale_32 on four 64-bit lanes: the product plus the rounding term
 * of the lane's sign, shifted right arithmetically by s. */
UK_INLINE __m256i scale64(__m256i prod, __m256i s, __m256i neg, __m256i rpos, __m256i rneg) {
  const __m256i top = _mm256_set1_epi64x((int64_t)1 << 63);
  __m256i x = _mm256_add_epi64(prod, _mm256_blendv_epi8(rpos, rneg, neg));
  /* Arithmetic shift by a per-lane count, which AVX2 lacks for 64 bits. */
  return _mm256_sub_epi64(_mm256_srlv_epi64(_mm256_xor_si256(x, top), s),
                          _mm256_srlv_epi64(top, s));
}

UK_INLINE __m256i ld4q(const int64_t *p) {
  return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

/* Rescales 8 channels' accumulators (bias not yet added) and stores n. */
UK_INLINE void requant8(const uk_ctx_t *c, __m256i acc, int32_t o0, int8_t *out, int32_t n) {
  const tinyml_uk_params_t *p = c->p;
  __m256i v = _mm256_add_epi32(acc, ld8(c->bias + o0));
  __m256i m = ld8(c->mult + o0), s = ld8(c->shift + o0);
  __m256i sign = _mm256_srai_epi32(v, 31);
  /* Channel j sits in 64-bit lane j/2 of the even (j even) or odd half;
   * the round arrays are permuted to match with one shuffle each. */
  __m256i rp0 = ld4q(c->round_pos + o0), rp1 = ld4q(c->round_pos + o0 + 4);
  __m256i rn0 = ld4q(c->round_neg + o0), rn1 = ld4q(c->round_neg + o0 + 4);
  __m256i rpe = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(rp0, rp1), 0xD8);
  __m256i rpo = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(rp0, rp1), 0xD8);
  __m256i rne = _mm256_permute4x64_epi64(_mm256_unpacklo_epi64(rn0, rn1), 0xD8);
  __m256i rno = _mm256_permute4x64_epi64(_mm256_unpackhi_epi64(rn0, rn1), 0xD8);
  const __m256i lo = _mm256_set1_epi64x(0xffffffff);
  __m256i ev = scale64(_mm256_mul_epi32(v, m), _mm256_and_si256(s, lo),
                       _mm256_shuffle_epi32(sign, 0xA0), rpe, rne);
  __m256i od = scale64(_mm256_mul_epi32(_mm256_srli_epi64(v, 32), _mm256_srli_epi64(m, 32)),
                       _mm256_srli_epi64(s, 32), _mm256_shuffle_epi32(sign, 0xF5), rpo, rno);
  __m256i r = _mm256_blend_epi32(ev, _mm256_slli_epi64(od, 32), 0xAA);
  r = _mm256_add_epi32(r, _mm256_set1_epi32(p->out_zp));
  r = _mm256_max_epi32(r, _mm256_set1_epi32(p->act_min));
  r = _mm256_min_epi32(r, _mm256_set1_epi32(p->act_max));
  __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
  __m128i w8 = _mm_packs_epi16(w16, w16);
  if (n == 8) {
    _mm_storel_epi64((__m128i *)(void *)(out + o0), w8);
  } else {
    int8_t t[16];
    _mm_storeu_si128((__m128i *)(void *)t, w8);
    for (int32_t j = 0; j < n; ++j) out[o0 + j] = t[j];
  }
}

#endif

UK_INLINE int32_t left(const tinyml_uk_params_t *p, int32_t o0) {
  return p->oc - o0 < 8 ? p->oc - o0 : 8;
}

#if UK_ZMM
/* ---- int8: the rescale of 16 lanes with the shifts in [33, 54] -------- *
 * Every model seen so far has them there (scales below 2^-1).  Then, as
 * Armv7E-M's req records do (uk_abi.h, tinyml_uk_req_t), the output is the
 * high word of v * mult + (hz + (v >> 31)) * 2^32 + ((v & 2^31) | 2^30),
 * shifted right by s - 32, with hz = 2^(s-33) + out_zp * 2^(s-32): the
 * same bytes as requant8 without its sign select, 64-bit shift, zero-point
 * add or its vpmovsxdq / vpmovqd widening and narrowing, which are two
 * port-5 uops each on Intel cores.  The constants of a tile's 16 lanes are
 * made once (rq16_make) and serve all its pixels. */
typedef struct rq16 {
  __m512i bias, mult, mult_hi, hz, sh, lo, hi;
} rq16_t;

/* From 16 lanes of bias, mult and shift, of which `live` are stored:
 * 0 when a live lane's shift is outside [33, 54] (then requant8 does). */
UK_INLINE int rq16_make(const uk_ctx_t *c, __m512i bias, __m512i mult, __m512i s,
                        __mmask16 live, rq16_t *q) {
  const tinyml_uk_params_t *p = c->p;
  const __m512i s33 = _mm512_sub_epi32(s, _mm512_set1_epi32(33));
  if (_mm512_mask_cmpgt_epu32_mask(live, s33, _mm512_set1_epi32(54 - 33))) return 0;
  const __m512i sh = _mm512_add_epi32(s33, _mm512_set1_epi32(1));
  q->bias = bias;
  q->mult = mult;
  q->mult_hi = _mm512_srli_epi64(mult, 32);
  q->hz = _mm512_add_epi32(_mm512_sllv_epi32(_mm512_set1_epi32(1), s33),
                           _mm512_sllv_epi32(_mm512_set1_epi32(p->out_zp), sh));
  q->sh = sh;
  q->lo = _mm512_set1_epi32(p->act_min);
  q->hi = _mm512_set1_epi32(p->act_max);
  return 1;
}

UK_INLINE __mmask16 rq16_live(int32_t n) {
  return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1);
}

/* Channels o0..o0+15. */
UK_INLINE int rq16_at(const uk_ctx_t *c, int32_t o0, rq16_t *q) {
  return rq16_make(c, _mm512_loadu_si512(c->bias + o0), _mm512_loadu_si512(c->mult + o0),
                   _mm512_loadu_si512(c->shift + o0), rq16_live(c->p->oc - o0), q);
}

/* Channels o0..o0+7 in both halves: two pixels of an 8-channel tile. */
UK_INLINE int rq16_pair(const uk_ctx_t *c, int32_t o0, rq16_t *q) {
  const __mmask16 live = (__mmask16)(rq16_live(left(c->p, o0)) & 0xff);
  return rq16_make(c, _mm512_broadcast_i64x4(ld8(c->bias + o0)),
                   _mm512_broadcast_i64x4(ld8(c->mult + o0)),
                   _mm512_broadcast_i64x4(ld8(c->shift + o0)), live, q);
}

/* The 16 lanes' outputs as int32, clamped. */
UK_INLINE __m512i rq16_apply(const rq16_t *q, __m512i acc) {
  const __m512i v = _mm512_add_epi32(acc, q->bias);
  const __m512i pe = _mm512_mul_epi32(v, q->mult);
  const __m512i po = _mm512_mul_epi32(_mm512_srli_epi64(v, 32), q->mult_hi);
  const __m512i th = _mm512_add_epi32(q->hz, _mm512_srai_epi32(v, 31));
  const __m512i tl = _mm512_or_si512(_mm512_and_si512(v, _mm512_set1_epi32(INT32_MIN)),
                                     _mm512_set1_epi32(1 << 30));
  /* Even lanes' 64-bit sums in place; odd lanes' from their high words. */
  const __m512i xe =
      _mm512_add_epi64(pe, _mm512_mask_blend_epi32(0xAAAA, tl, _mm512_slli_epi64(th, 32)));
  const __m512i xo =
      _mm512_add_epi64(po, _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(tl, 32), th));
  __m512i r = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(xe, 32), xo);
  r = _mm512_srav_epi32(r, q->sh);
  return _mm512_min_epi32(_mm512_max_epi32(r, q->lo), q->hi);
}

/* rq16_apply's shifted high words without its bias add and clamp, the
 * cheaper way: v * mult + k - (v < 0) * 2^31 per 64-bit lane (even lanes
 * mult, ke; odd lanes mult_hi, ko), their high words gathered by one
 * vpermt2d, shifted right by sh.  With k = hz * 2^32 + 2^30 the high words
 * are rq16's, modulo 2^64 (conv_s8.h's pw_rq_t).  The 1x1 convs' pw_apply
 * and the depthwise row kernels' dwq_r are this. */
UK_INLINE __m512i rq16_hi(__m512i v, __m512i mult, __m512i mult_hi, __m512i ke, __m512i ko,
                          __m512i sh) {
  const __m512i sign = _mm512_set1_epi64(0x80000000LL);
  const __m512i vo = _mm512_srli_epi64(v, 32);
  const __m512i xe = _mm512_sub_epi64(_mm512_add_epi64(_mm512_mul_epi32(v, mult), ke),
                                      _mm512_and_si512(v, sign));
  const __m512i xo = _mm512_sub_epi64(_mm512_add_epi64(_mm512_mul_epi32(vo, mult_hi), ko),
                                      _mm512_and_si512(vo, sign));
  const __m512i hi = _mm512_setr_epi32(1, 17, 3, 19, 5, 21, 7, 23, 9, 25, 11, 27, 13, 29, 15, 31);
  return _mm512_srav_epi32(_mm512_permutex2var_epi32(xe, hi, xo), sh);
}

/* The first n (<= 16) lanes' bytes at out. */
UK_INLINE void rq16_store(__m512i r, int8_t *out, int32_t n) {
  if (n >= 16)
    _mm_storeu_si128((__m128i *)(void *)out, _mm512_cvtepi32_epi8(r));
  else
    _mm_mask_storeu_epi8(out, rq16_live(n), _mm512_cvtepi32_epi8(r));
}

/* Lanes 0..n-1 at out0 and 8..8+n-1 at out1 (n <= 8): two pixels. */
UK_INLINE void rq16_store2(__m512i r, int8_t *out0, int8_t *out1, int32_t n) {
  const __m128i b = _mm512_cvtepi32_epi8(r);
  if (n >= 8) {
    _mm_storel_epi64((__m128i *)(void *)out0, b);
    _mm_storeh_pd((double *)(void *)out1, _mm_castsi128_pd(b));
    return;
  }
  const __mmask16 m = rq16_live(n);
  _mm_mask_storeu_epi8(out0, m, b);
  _mm_mask_storeu_epi8(out1, m, _mm_unpackhi_epi64(b, b));
}

UK_INLINE void requant16(const uk_ctx_t *c, __m512i a, int32_t o0, int8_t *out) {
  requant8(c, _mm512_castsi512_si256(a), o0, out, left(c->p, o0));
  requant8(c, _mm512_extracti64x4_epi64(a, 1), o0 + 8, out, left(c->p, o0 + 8));
}
#endif

/* ---- f32: the epilogue (scale, offset, residual, clamp) on a vector ---- */

/* 8-lane helpers for both builds: the AVX2 tiles' and the Winograd
 * transforms' (wino_f32.c). */
UK_INLINE __m256i lanes_below(int32_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* `res`, when not null, is the residual for these lanes (conv_add_f32),
 * read under `m`. */
UK_INLINE __m256 fepi(__m256 v, const float *scale, const float *offset, const float *res,
                      __m256i m, __m256 lo, __m256 hi) {
  v = _mm256_mul_ps(v, _mm256_loadu_ps(scale));
  v = _mm256_add_ps(v, _mm256_loadu_ps(offset));
  if (res) v = _mm256_add_ps(v, _mm256_maskload_ps(res, m));
  /* max/min return their second operand when either is NaN: NaN passes. */
  return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

/* fepi with the scale and offset already in registers: the same operations
 * in the same order, so the same bits.  A tile loads them once per
 * column, not once per pixel: its stores may alias the arrays, so the
 * compiler reloads them for every vector otherwise. */
UK_INLINE __m256 fepi_v(__m256 v, __m256 scale, __m256 offset, const float *res, __m256i m,
                        __m256 lo, __m256 hi) {
  v = _mm256_mul_ps(v, scale);
  v = _mm256_add_ps(v, offset);
  if (res) v = _mm256_add_ps(v, _mm256_maskload_ps(res, m));
  return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

#if defined(__AVX512F__)
/* fepi16 with the scale and offset in registers (fepi_v). */
UK_INLINE __m512 fepi16_v(__m512 v, __m512 scale, __m512 offset, const float *res,
                          __mmask16 m, __m512 lo, __m512 hi) {
  v = _mm512_mul_ps(v, scale);
  v = _mm512_add_ps(v, offset);
  if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, res));
  return _mm512_min_ps(hi, _mm512_max_ps(lo, v));
}

/* Whether fepi16_v's scale and offset change nothing on the lanes of
 * m[v], v < nv: every scale is 1 and every offset -0.0 (x * 1 + -0.0 is
 * x, bit for bit), as uk_pack.c's fill_f32 leaves them where it folded a
 * BatchNorm into the weights, and for a conv with neither.  +0.0 is not:
 * -0.0 + +0.0 is +0.0.  The kernels then skip both, one test a tile. */
UK_INLINE int fepi16_identity(int nv, const __m512 *sc, const __m512 *of, const __mmask16 *m) {
  __mmask16 moves = 0;
  for (int v = 0; v < nv; ++v) {
    moves |= _mm512_mask_cmp_ps_mask(m[v], sc[v], _mm512_set1_ps(1.0f), _CMP_NEQ_UQ);
    moves |= _mm512_mask_cmpneq_epi32_mask(m[v], _mm512_castps_si512(of[v]),
                                           _mm512_set1_epi32(INT32_MIN));
  }
  return moves == 0;
}
#endif

#if defined(__AVX512F__)
UK_INLINE __mmask16 mask_below(int32_t n) {
  return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* `res`, when not null, is the residual for these lanes (conv_add_f32),
 * read under `m`. */
UK_INLINE __m512 fepi16(__m512 v, const float *scale, const float *offset, const float *res,
                        __mmask16 m, __m512 lo, __m512 hi) {
  v = _mm512_mul_ps(v, _mm512_loadu_ps(scale));
  v = _mm512_add_ps(v, _mm512_loadu_ps(offset));
  if (res) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, res));
  /* max/min return their second operand when either is NaN: NaN passes. */
  return _mm512_min_ps(hi, _mm512_max_ps(lo, v));
}
#endif

#endif
