/* int8 and f32 microkernels for x86-64 with AVX2 and FMA, compiled to LLVM
 * bitcode at build time and linked into every executable
 * (lib/ukernels/uk_abi.h).
 *
 * Conv: the im2col columns of 4 output pixels (8 with AVX-512) hold int16 (x - zp); weights
 * are packed 8 output channels x 2 taps, widened with vpmovsxbw, and
 * vpmaddwd sums tap pairs into int32 lanes.  int16 products cannot saturate
 * (|x - zp| <= 255, |w| <= 128), unlike vpmaddubsw, so results stay exact.
 * The rescale runs 8 channels at a time in 64-bit lanes.  With AVX512-VNNI
 * (the blob's dot4), the conv sums 4 byte taps per vpdpbusd instead
 * (ukernels_dot4.h). */
#include <immintrin.h>

#include "../../lib/ukernels/uk_depthwise.h"

/* Built a second time with AVX-512 (F, BW, VL) for CPUs that have it: then
 * 16 channels share a vector. */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define UK_ZMM 1
#else
#define UK_ZMM 0
#endif

/* Pixels per int8 conv tile (x86.c sizes the im2col scratch for them).
 * With AVX-512, 8: a 16-channel layer's tile then has 8 accumulators,
 * not 4, and each widened weight vector serves 8 pixels; resnet8 ran
 * 0.155-0.161 ms against 0.173-0.176 with 4 (best of 2000, 3 runs each),
 * kws and vww the same. */
enum { PIX = UK_ZMM ? 8 : 4 };

UK_INLINE __m256i load_w(const int8_t *w) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)w));
}

UK_INLINE __m256i ld8(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)(const void *)p); }

UK_INLINE __m256i pair(const int16_t *col, int32_t k) {
  int32_t v;
  __builtin_memcpy(&v, col + k, 4);
  return _mm256_set1_epi32(v);
}

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

#if !UK_ZMM
/* PIX pixels x 16 channels; unused pixel slots hold copies of a real one. */
UK_INLINE void tile16(const uk_ctx_t *c, const int16_t *col, int32_t o0, int32_t npix,
                      int8_t *const *outs) {
  const int32_t kp = c->p->k_padded;
  const int8_t *w0 = c->weights + (size_t)o0 * kp, *w1 = w0 + (size_t)8 * kp;
  __m256i a0[PIX], a1[PIX];
  for (int i = 0; i < PIX; ++i) a0[i] = a1[i] = _mm256_setzero_si256();
  for (int32_t k = 0; k < kp; k += 2) {
    __m256i x0 = load_w(w0 + k * 8), x1 = load_w(w1 + k * 8);
    for (int i = 0; i < PIX; ++i) {
      __m256i b = pair(col + (size_t)i * kp, k);
      a0[i] = _mm256_add_epi32(a0[i], _mm256_madd_epi16(b, x0));
      a1[i] = _mm256_add_epi32(a1[i], _mm256_madd_epi16(b, x1));
    }
  }
  for (int i = 0; i < npix; ++i) {
    requant8(c, a0[i], o0, outs[i], 8);
    requant8(c, a1[i], o0 + 8, outs[i], left(c->p, o0 + 8));
  }
}

#endif

UK_INLINE void tile8(const uk_ctx_t *c, const int16_t *col, int32_t o0, int32_t npix,
                     int8_t *const *outs) {
  const int32_t kp = c->p->k_padded;
  const int8_t *w0 = c->weights + (size_t)o0 * kp;
  __m256i a0[PIX];
  for (int i = 0; i < PIX; ++i) a0[i] = _mm256_setzero_si256();
  for (int32_t k = 0; k < kp; k += 2) {
    __m256i x0 = load_w(w0 + k * 8);
    for (int i = 0; i < PIX; ++i)
      a0[i] = _mm256_add_epi32(a0[i], _mm256_madd_epi16(pair(col + (size_t)i * kp, k), x0));
  }
  for (int i = 0; i < npix; ++i) requant8(c, a0[i], o0, outs[i], left(c->p, o0));
}

#if UK_ZMM
/* Two 8-channel panels' tap pair k as one vector: lanes 0-7 the first
 * panel's channels, 8-15 the second's. */
UK_INLINE __m512i load_w2(const int8_t *w0, const int8_t *w1) {
  __m256i b = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)w0)),
      _mm_loadu_si128((const __m128i *)(const void *)w1), 1);
  return _mm512_cvtepi8_epi16(b);
}

UK_INLINE __m512i pair16(const int16_t *col, int32_t k) {
  int32_t v;
  __builtin_memcpy(&v, col + k, 4);
  return _mm512_set1_epi32(v);
}

/* acc + the int16 pair products of a and b: one vpdpwssd with VNNI. */
UK_INLINE __m512i dp16(__m512i acc, __m512i a, __m512i b) {
#if defined(__AVX512VNNI__)
  return _mm512_dpwssd_epi32(acc, a, b);
#else
  return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
#endif
}

UK_INLINE void requant16(const uk_ctx_t *c, __m512i a, int32_t o0, int8_t *out) {
  requant8(c, _mm512_castsi512_si256(a), o0, out, left(c->p, o0));
  requant8(c, _mm512_extracti64x4_epi64(a, 1), o0 + 8, out, left(c->p, o0 + 8));
}

/* PIX pixels x 16 * nz channels. */
UK_INLINE void ztile(const uk_ctx_t *c, int nz, const int16_t *col, int32_t o0, int32_t npix,
                     int8_t *const *outs) {
  const int32_t kp = c->p->k_padded;
  const int8_t *w = c->weights + (size_t)o0 * kp;
  const size_t panel = (size_t)8 * kp;
  __m512i a[PIX][2];
  for (int i = 0; i < PIX; ++i) a[i][0] = a[i][1] = _mm512_setzero_si512();
  for (int32_t k = 0; k < kp; k += 2) {
    __m512i x0 = load_w2(w + k * 8, w + panel + k * 8);
    __m512i x1 = nz == 2 ? load_w2(w + 2 * panel + k * 8, w + 3 * panel + k * 8) : x0;
    for (int i = 0; i < PIX; ++i) {
      __m512i b = pair16(col + (size_t)i * kp, k);
      a[i][0] = dp16(a[i][0], b, x0);
      if (nz == 2) a[i][1] = dp16(a[i][1], b, x1);
    }
  }
  for (int i = 0; i < npix; ++i)
    for (int z = 0; z < nz; ++z) requant16(c, a[i][z], o0 + 16 * z, outs[i]);
}

/* Not inlined, so a module's object names the kernels it got. */
static __attribute__((noinline)) void uk_tile_avx512(const uk_ctx_t *c, const int16_t *col,
                                                     int32_t npix, int8_t *const *outs) {
  const tinyml_uk_params_t *p = c->p;
  int32_t o0 = 0;
  for (; o0 + 32 <= p->oc_padded; o0 += 32) ztile(c, 2, col, o0, npix, outs);
  if (o0 + 16 <= p->oc_padded) {
    ztile(c, 1, col, o0, npix, outs);
    o0 += 16;
  }
  if (o0 < p->oc_padded) tile8(c, col, o0, npix, outs);
}
#else
static __attribute__((noinline)) void uk_tile_avx2(const uk_ctx_t *c, const int16_t *col,
                                                   int32_t npix, int8_t *const *outs) {
  const tinyml_uk_params_t *p = c->p;
  int32_t o0 = 0;
  for (; o0 + 16 <= p->oc_padded; o0 += 16) tile16(c, col, o0, npix, outs);
  if (o0 < p->oc_padded) tile8(c, col, o0, npix, outs);
}
#endif

UK_INLINE void conv_tile(const uk_ctx_t *c, const int16_t *col, int32_t npix, int8_t *const *outs) {
#if UK_ZMM
  uk_tile_avx512(c, col, npix, outs);
#else
  uk_tile_avx2(c, col, npix, outs);
#endif
}

/* The last n (< 16) of a run: one masked load and store with AVX-512
 * (a 3-channel first conv's taps are 3 or 9 bytes long), else one by one. */
UK_INLINE void widen_tail(const int8_t *src, int16_t *dst, int32_t n, int32_t zp) {
#if UK_ZMM
  const __mmask16 m = (__mmask16)((1u << n) - 1);
  const __m256i v = _mm256_cvtepi8_epi16(_mm_maskz_loadu_epi8(m, src));
  _mm256_mask_storeu_epi16(dst, m, _mm256_sub_epi16(v, _mm256_set1_epi16((int16_t)zp)));
#else
  for (int32_t i = 0; i < n; ++i) dst[i] = (int16_t)(src[i] - zp);
#endif
}

/* uk_im2col with the widening done 16 channels at a time. */
UK_INLINE void widen(const int8_t *src, int16_t *dst, int32_t n, int32_t zp) {
  const __m256i z = _mm256_set1_epi16((int16_t)zp);
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(src + i)));
    _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm256_sub_epi16(v, z));
  }
  widen_tail(src + i, dst + i, n - i, zp);
}

/* Pixel (oy, ox)'s im2col column, for columns of any element type:
 * put(col, t, src, n, zp) writes n taps from the image at tap t,
 * pad(col, t, n, zp) n padded ones.  Called with constant functions, which
 * inline. */
typedef void (*im2col_put_fn)(void *col, int32_t t, const int8_t *src, int32_t n, int32_t zp);
typedef void (*im2col_pad_fn)(void *col, int32_t t, int32_t n, int32_t zp);

UK_INLINE void im2col_walk(const tinyml_uk_params_t *p, const int8_t *img, int32_t oy,
                           int32_t ox, void *col, im2col_put_fn put, im2col_pad_fn pad) {
  const int32_t ic = p->ic;
  int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
  if (p->dil_w == 1 && iy0 >= 0 && ix0 >= 0 && iy0 + (p->kh - 1) * p->dil_h < p->ih &&
      ix0 + p->kw - 1 < p->iw) {
    /* Inside the image, each kernel row is one contiguous run of input. */
    const int32_t run = p->kw * ic;
    for (int32_t ky = 0; ky < p->kh; ++ky)
      put(col, ky * run, img + ((size_t)(iy0 + ky * p->dil_h) * p->iw + ix0) * ic, run, p->in_zp);
    return;
  }
  for (int32_t ky = 0; ky < p->kh; ++ky) {
    int32_t iy = iy0 + ky * p->dil_h;
    for (int32_t kx = 0; kx < p->kw; ++kx) {
      int32_t ix = ix0 + kx * p->dil_w, t = (ky * p->kw + kx) * ic;
      if (iy < 0 || iy >= p->ih || ix < 0 || ix >= p->iw)
        pad(col, t, ic, p->in_zp);
      else
        put(col, t, img + ((size_t)iy * p->iw + ix) * ic, ic, p->in_zp);
    }
  }
}

UK_INLINE void col16_put(void *col, int32_t t, const int8_t *src, int32_t n, int32_t zp) {
  widen(src, (int16_t *)col + t, n, zp);
}

UK_INLINE void col16_pad(void *col, int32_t t, int32_t n, int32_t zp) {
  (void)zp;
  for (int32_t i = 0; i < n; ++i) ((int16_t *)col)[t + i] = 0;
}

/* int16 columns of x - in_zp. */
static void im2col(const tinyml_uk_params_t *p, const int8_t *img, int32_t oy, int32_t ox,
                   int16_t *col) {
  im2col_walk(p, img, oy, ox, col, col16_put, col16_pad);
  for (int32_t k = p->k; k < p->k_padded; ++k) col[k] = 0;
}

#if UK_ZMM
#include "ukernels_dot4.h" /* dot4_conv */
#endif

/* Output pixels [lo, hi) of workgroup wg (uk_abi.h), PIX at a time; a
 * group may span two images.  Integer sums are exact, so any grouping gives
 * the same bytes. */
void tinyml_uk_conv_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch,
                       int32_t wg, int32_t count) {
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  int16_t *col = (int16_t *)uk_scratch(scratch, p, wg);
  const int32_t kp = p->k_padded, image = p->ih * p->iw * p->ic;
  int32_t lo, hi;
  uk_band(p, wg, count, &lo, &hi);
#if UK_ZMM
  /* The flag is tested here, outside the VNNI-compiled function, so a CPU
   * without VNNI never enters it. */
  if (p->dot4) {
    dot4_conv(&c, in, out, (uint8_t *)(void *)col, lo, hi);
    return;
  }
#endif
  uk_pos_t at = uk_pos_at(p, lo); /* of pixel q: no division per pixel */
  for (int32_t q = lo; q < hi; q += PIX) {
    int32_t np = hi - q < PIX ? hi - q : PIX;
    int8_t *outs[PIX];
    for (int32_t i = 0; i < np; ++i, uk_pos_next(p, &at)) {
      im2col(p, in + (size_t)at.n * image, at.oy, at.ox, col + (size_t)i * kp);
      outs[i] = out + (size_t)(q + i) * p->oc;
    }
    for (int32_t i = np; i < PIX; ++i)
      for (int32_t k = 0; k < kp; ++k) col[(size_t)i * kp + k] = 0;
    conv_tile(&c, col, np, outs);
  }
}

#include "ukernels_dw8.h" /* dw_pixel, uk_dw8x2_avx512 */

/* ---- f32 ------------------------------------------------------------------
 *
 * Conv (and matmul, as a 1x1 conv): a GEMM of pixels x taps by taps x
 * channels (weights packed in panels of 16 channels, uk_abi.h); where a
 * pixel's taps come from, and the loop nest, are in ukernels_fconv.h.  The
 * AVX2 register tile is 6 pixels x 16 channels: 12 accumulators, two
 * weight vectors and a broadcast, 12 FMAs per tap (the AVX-512 build
 * replaces the tiles with ukernels_avx512.h's 12 x 32).  Taps run
 * innermost, in pieces (fpiece_t) with the accumulators in registers
 * across them.  Accumulators start at the bias; with more than one tap
 * chunk the partial sums wait in the output.  The last chunk applies the
 * epilogue (scale, offset, clamp) and stores. */

/* A piece of a tap chunk: taps [t, t + len) of the chunk sit at
 * a + off + i * lda for pixel i (a, lda: the tile's).  An im2col column is
 * one piece; a pixel read straight from the image has one per kernel row
 * (ukernels_fconv.h). */
typedef struct fpiece {
  ptrdiff_t off;
  int32_t len;
} fpiece_t;

/* Before a tile's taps: its output rows are written only after them, and
 * the residual read then, both by then from memory unless asked for now,
 * so that the FMAs hide the latency (a prefetch for writing on the first
 * chunk; the partial sums of later chunks are already in cache).  np
 * pixels' nv vectors of `lanes` channels from o0. */
UK_INLINE void ftile_prefetch_out(const ukf_ctx_t *c, int np, int nv, int lanes,
                                  float *const *outs, int32_t o0, int first, int last) {
  if (last && c->res)
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v)
        _mm_prefetch((const char *)(c->res + (outs[i] + o0 + lanes * v - c->out0)), _MM_HINT_T0);
  if (first)
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) __builtin_prefetch(outs[i] + o0 + lanes * v, 1, 3);
}

/* 8-lane helpers for both builds: the AVX2 tiles' and the Winograd
 * transforms' (ukernels_wino.h). */
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

#if defined(__AVX512F__)
#include "ukernels_avx512.h" /* MR, KC, OC_TILE, fconv_tile, dw_pixels, dw_run */
#else
enum { MR = 6, KC = TINYML_UK_F32_KC, OC_TILE = 16 };

/* np pixels (pixel i's taps at a + i * lda) x nv vectors of 8 channels,
 * over the tap chunk's pieces (fpiece_t); `valid` channels of the panel
 * exist in each outs[i] (pixel i's output row, channel 0). */
UK_INLINE void ftile(const ukf_ctx_t *c, int np, int nv, const float *a, int32_t lda,
                     const fpiece_t *pc, int npc, const float *w, ptrdiff_t ahead,
                     float *const *outs, int32_t o0, int32_t valid, int first, int last) {
  __m256 acc[MR][2];
  const int full = valid >= nv * 8;
  const __m256i m0 = lanes_below(valid), m1 = lanes_below(valid - 8);
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      if (first)
        acc[i][v] = _mm256_loadu_ps(c->bias + o0 + 8 * v);
      else if (full)
        acc[i][v] = _mm256_loadu_ps(outs[i] + o0 + 8 * v);
      else
        acc[i][v] = _mm256_maskload_ps(outs[i] + o0 + 8 * v, v ? m1 : m0);
    }
  ftile_prefetch_out(c, np, nv, 8, outs, o0, first, last);
  const int W = nv * 8;
  for (int j = 0; j < npc; ++j) {
    const float *a0 = a + pc[j].off, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda,
                *a4 = a3 + lda, *a5 = a4 + lda;
    const int32_t len = pc[j].len;
    for (int32_t k = 0; k < len; ++k) {
      /* The next block's row (ukernels_avx512.h says why). */
      _mm_prefetch((const char *)(w + (size_t)k * W + ahead), _MM_HINT_T0);
      __m256 w0 = _mm256_loadu_ps(w + (size_t)k * W);
      __m256 w1 = nv == 2 ? _mm256_loadu_ps(w + (size_t)k * W + 8) : w0;
#define FROW(i, ai)                                                     \
  if (np > i) {                                                         \
    __m256 b = _mm256_broadcast_ss(ai + k);                             \
    acc[i][0] = _mm256_fmadd_ps(b, w0, acc[i][0]);                      \
    if (nv == 2) acc[i][1] = _mm256_fmadd_ps(b, w1, acc[i][1]);         \
  }
      FROW(0, a0) FROW(1, a1) FROW(2, a2) FROW(3, a3) FROW(4, a4) FROW(5, a5)
#undef FROW
    }
    w += (size_t)len * W;
  }
  const __m256 lo = _mm256_set1_ps(c->lo), hi = _mm256_set1_ps(c->hi);
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      __m256 r = acc[i][v];
      float *o = outs[i] + o0 + 8 * v;
      if (last)
        r = fepi(r, c->scale + o0 + 8 * v, c->offset + o0 + 8 * v,
                 c->res ? c->res + (o - c->out0) : 0, v ? m1 : m0, lo, hi);
      if (full)
        _mm256_storeu_ps(o, r);
      else
        _mm256_maskstore_ps(o, v ? m1 : m0, r);
    }
}

/* One tile (np pixels from `a`, channels [o0, o0 + 16), taps [k0, k0 +
 * kc) in pieces) with np and nv as constants in each variant, so the
 * accumulators stay in registers.  Not inlined: its name in the object
 * tells which kernels a module got (tests/compiler/test_ukernels.py). */
static __attribute__((noinline)) void ukf_tile_avx2(const ukf_ctx_t *c, int np, const float *a,
                                                    int32_t lda, const fpiece_t *pc, int npc,
                                                    int32_t k0, float *const *outs, int32_t o0,
                                                    int first, int last) {
  const tinyml_uk_params_t *p = c->p;
  const int nv = p->oc_padded - o0 >= 16 ? 2 : 1;
  const int32_t valid = p->oc - o0 < 8 * nv ? p->oc - o0 : 8 * nv;
  const int32_t kc = tinyml_uk_f32_chunk(p->k, k0);
  const float *w = c->weights + (size_t)k0 * p->oc_padded + (size_t)o0 * kc;
  const ptrdiff_t ahead = (ptrdiff_t)8 * nv * kc;
#define FT(N, V) ftile(c, N, V, a, lda, pc, npc, w, ahead, outs, o0, valid, first, last)
  if (nv == 2) {
    switch (np) {
      case 6: FT(6, 2); break;
      case 5: FT(5, 2); break;
      case 4: FT(4, 2); break;
      case 3: FT(3, 2); break;
      case 2: FT(2, 2); break;
      default: FT(1, 2); break;
    }
  } else {
    switch (np) {
      case 6: FT(6, 1); break;
      case 5: FT(5, 1); break;
      case 4: FT(4, 1); break;
      case 3: FT(3, 1); break;
      case 2: FT(2, 1); break;
      default: FT(1, 1); break;
    }
  }
#undef FT
}

UK_INLINE void fconv_tile(const ukf_ctx_t *c, int np, const float *a, int32_t lda,
                          const fpiece_t *pc, int npc, int32_t k0, float *const *outs,
                          int32_t o0, int first, int last) {
  ukf_tile_avx2(c, np, a, lda, pc, npc, k0, outs, o0, first, last);
}
#endif

#include "ukernels_fconv.h" /* tinyml_uk_conv_f32, _conv_add_f32, _convcat_f32 */

#if !defined(__AVX512F__)
/* Depthwise: channels are independent.  np pixels (xstep floats apart)
 * x nv vectors of 8 channels from channel c0, over taps at x + xo[t] and
 * weights + wo[t]; `mask` limits a single vector to the channels left. */
UK_INLINE void dw_block(const ukf_ctx_t *c, int np, int nv, int masked, const float *x,
                        int32_t xstep, const int32_t *xo, const int32_t *wo, int32_t taps,
                        int32_t c0, __m256i mask, float *dst, int32_t dstep) {
  __m256 a[2][4];
  for (int v = 0; v < nv; ++v) {
    __m256 b = _mm256_loadu_ps(c->bias + c0 + 8 * v);
    for (int i = 0; i < np; ++i) a[i][v] = b;
  }
  const float *w = c->weights + c0;
  for (int32_t t = 0; t < taps; ++t) {
    const float *xp = x + xo[t], *wp = w + wo[t];
    for (int v = 0; v < nv; ++v) {
      __m256 wv = masked ? _mm256_maskload_ps(wp, mask) : _mm256_loadu_ps(wp + 8 * v);
      for (int i = 0; i < np; ++i) {
        const float *xi = xp + (size_t)i * xstep + 8 * v;
        __m256 xv = masked ? _mm256_maskload_ps(xi, mask) : _mm256_loadu_ps(xi);
        a[i][v] = _mm256_fmadd_ps(xv, wv, a[i][v]);
      }
    }
  }
  const __m256 lo = _mm256_set1_ps(c->lo), hi = _mm256_set1_ps(c->hi);
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      __m256 r = fepi(a[i][v], c->scale + c0 + 8 * v, c->offset + c0 + 8 * v, 0,
                       _mm256_setzero_si256(), lo, hi);
      float *o = dst + (size_t)i * dstep + c0 + 8 * v;
      if (masked)
        _mm256_maskstore_ps(o, mask, r);
      else
        _mm256_storeu_ps(o, r);
    }
}

/* All channels of np pixels; x points at pixel 0's origin (channel 0). */
UK_INLINE void dw_all(const ukf_ctx_t *c, int np, const float *x, int32_t xstep,
                      const int32_t *xo, const int32_t *wo, int32_t taps, float *dst) {
  const int32_t ic = c->p->ic;
  const __m256i all = _mm256_set1_epi32(-1);
  int32_t c0 = 0;
  for (; c0 + 32 <= ic; c0 += 32)
    dw_block(c, np, 4, 0, x + c0, xstep, xo, wo, taps, c0, all, dst, ic);
  for (; c0 + 8 <= ic; c0 += 8)
    dw_block(c, np, 1, 0, x + c0, xstep, xo, wo, taps, c0, all, dst, ic);
  if (c0 < ic)
    dw_block(c, np, 1, 1, x + c0, xstep, xo, wo, taps, c0, lanes_below(ic - c0), dst, ic);
}

/* Not inlined, for the same reason as ukf_tile_avx2. */
static __attribute__((noinline)) void ukf_dw_avx2(const ukf_ctx_t *c, int np, const float *x,
                                                  int32_t xstep, const int32_t *xo,
                                                  const int32_t *wo, int32_t taps, float *dst) {
  if (np == 2)
    dw_all(c, 2, x, xstep, xo, wo, taps, dst);
  else
    dw_all(c, 1, x, xstep, xo, wo, taps, dst);
}

UK_INLINE void dw_pixels(const ukf_ctx_t *c, int np, const float *x, int32_t xstep,
                         const int32_t *xo, const int32_t *wo, int32_t taps, float *dst) {
  ukf_dw_avx2(c, np, x, xstep, xo, wo, taps, dst);
}

/* n interior pixels of a row (x at the first one's origin), two at a time. */
UK_INLINE void dw_run(const ukf_ctx_t *c, const float *x, int32_t xstep, const int32_t *xo,
                      const int32_t *wo, int32_t taps, int32_t n, float *dst) {
  const int32_t ic = c->p->ic;
  int32_t i = 0;
  for (; i + 1 < n; i += 2)
    dw_pixels(c, 2, x + (size_t)i * xstep, xstep, xo, wo, taps, dst + (size_t)i * ic);
  if (i < n) dw_pixels(c, 1, x + (size_t)i * xstep, xstep, xo, wo, taps, dst + (size_t)i * ic);
}
#endif

/* Where a depthwise conv's input rows are: row y at img + dw_at(s, y),
 * the image's rows from y0 on in order, or (ring > 0) row y in slot
 * y % ring of a ring of rows (ukernels_block.h). */
typedef struct dw_src {
  const float *img;
  int32_t y0, ring, row; /* row: floats a row, iw * ic */
} dw_src_t;

UK_INLINE ptrdiff_t dw_at(const dw_src_t *s, int32_t y) {
  return (ptrdiff_t)(s->ring ? y % s->ring : y - s->y0) * s->row;
}

/* An interior pixel's tap offsets from its window's first row, iy0, when
 * the rows are in a ring: rows are apart by where their slots are. */
static void dw_ring_taps(const tinyml_uk_params_t *p, const dw_src_t *s, int32_t iy0,
                         int32_t taps, int32_t *io) {
  for (int32_t t = 0; t < taps; ++t)
    io[t] = (int32_t)(dw_at(s, iy0 + (t / p->kw) * p->dil_h) - dw_at(s, iy0)) +
            (t % p->kw) * p->dil_w * p->ic;
}

/* uk_dw_taps' offsets, (iy * iw + ix) * ic, to where `s` has row iy. */
static void dw_place_taps(const dw_src_t *s, int32_t taps, int32_t *xo) {
  if (!s->ring && !s->y0) return;
  for (int32_t t = 0; t < taps; ++t) {
    const int32_t iy = xo[t] / s->row;
    xo[t] = (int32_t)dw_at(s, iy) + (xo[t] - iy * s->row);
  }
}

/* Every tap, one channel at a time: kernels larger than UK_MAX_TAPS. */
static void dw_large(const ukf_ctx_t *c, const dw_src_t *s, int32_t oy, int32_t ox,
                     float *dst) {
  const tinyml_uk_params_t *p = c->p;
  for (int32_t ch = 0; ch < p->ic; ++ch) {
    float acc = c->bias[ch];
    for (int32_t ky = 0; ky < p->kh; ++ky) {
      int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
      for (int32_t kx = 0; kx < p->kw; ++kx) {
        int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
        if (iy >= 0 && iy < p->ih && ix >= 0 && ix < p->iw)
          acc = __builtin_fmaf(s->img[dw_at(s, iy) + (ptrdiff_t)ix * p->ic + ch],
                               c->weights[((size_t)ky * p->kw + kx) * p->ic + ch], acc);
      }
    }
    dst[ch] = ukf_epilogue(c, acc, ch);
  }
}

/* What every output row of a depthwise conv shares: its interior columns
 * [x_lo, x_hi) (every tap inside the image across) and an interior
 * pixel's tap offsets when rows follow each other. */
typedef struct dw_plan {
  int32_t x_lo, x_hi, taps;
  int32_t io[UK_MAX_TAPS], iwo[UK_MAX_TAPS];
} dw_plan_t;

static void dw_plan(const tinyml_uk_params_t *p, dw_plan_t *pl) {
  const int32_t ic = p->ic;
  pl->taps = p->kh * p->kw;
  for (int32_t t = 0; t < pl->taps && t < UK_MAX_TAPS; ++t) {
    pl->io[t] = ((t / p->kw) * p->dil_h * p->iw + (t % p->kw) * p->dil_w) * ic;
    pl->iwo[t] = t * ic;
  }
  finterior(p, &pl->x_lo, &pl->x_hi);
}

/* The int8 depthwise conv, here to share dw_plan with the f32 one:
 * pixels whose taps all lie inside the image take the plan's tap offsets
 * from their top-left tap (uk_dw_taps' order), so they skip building
 * their own: vww_96_int8's depthwise convs spent nearly a third of their
 * time on the lists (perf, cpu-clock samples). */
void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch,
                            int32_t wg, int32_t count) {
  (void)scratch;
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  int32_t lo, hi;
  uk_band(p, wg, count, &lo, &hi);
  if (p->kh * p->kw > UK_MAX_TAPS) {
    uk_depthwise_generic(&c, in, out, lo, hi);
    return;
  }
  int32_t xo[UK_MAX_TAPS], wo[UK_MAX_TAPS];
  dw_plan_t pl;
  dw_plan(p, &pl);
  uk_pos_t at = uk_pos_at(p, lo);
  for (int32_t q = lo; q < hi; ++q, uk_pos_next(p, &at)) {
    const int8_t *img = in + (size_t)at.n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)q * p->oc;
    const int32_t iy = at.oy * p->stride_h - p->pad_top;
    if (iy >= 0 && iy + (p->kh - 1) * p->dil_h < p->ih && at.ox >= pl.x_lo && at.ox < pl.x_hi) {
      const int8_t *src = img + ((size_t)iy * p->iw + at.ox * p->stride_w - p->pad_left) * p->ic;
#if UK_ZMM
      if (p->ic == 8 && q + 1 < hi && at.ox + 1 < pl.x_hi) {
        uk_dw8x2_avx512(&c, src, p->stride_w * 8, pl.io, pl.iwo, pl.taps, dst);
        ++q; /* and the next pixel */
        uk_pos_next(p, &at);
        continue;
      }
#endif
      dw_pixel(&c, src, pl.io, pl.iwo, pl.taps, dst);
      continue;
    }
    int32_t taps = uk_dw_taps(p, at.oy, at.ox, xo, wo);
    dw_pixel(&c, img, xo, wo, taps, dst);
  }
}

/* Output row oy of one image, columns [x0, x1), into dst (ic floats a
 * pixel).  Interior pixels of a row whose taps all lie inside the image
 * run as one span (dw_run) over the row's tap offsets; border pixels list
 * their in-image taps.  Which of these a pixel takes depends only on the
 * pixel, and each is the same sum. */
static void dw_row(const ukf_ctx_t *c, const dw_plan_t *pl, const dw_src_t *s, int32_t oy,
                   int32_t x0, int32_t x1, float *dst) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t ic = p->ic, xstep = p->stride_w * ic;
  const int32_t xe = pl->x_hi < x1 ? pl->x_hi : x1; /* pairs stay inside the span */
  const int32_t iy0 = oy * p->stride_h - p->pad_top;
  const int inside = pl->taps <= UK_MAX_TAPS && iy0 >= 0 &&
                     iy0 + (p->kh - 1) * p->dil_h < p->ih;
  int32_t xo[UK_MAX_TAPS], wo[UK_MAX_TAPS], ring_io[UK_MAX_TAPS];
  const int32_t *io = pl->io;
  if (inside && s->ring) {
    dw_ring_taps(p, s, iy0, pl->taps, ring_io);
    io = ring_io;
  }
  for (int32_t ox = x0; ox < x1;) {
    float *d = dst + (size_t)(ox - x0) * ic;
    if (pl->taps > UK_MAX_TAPS) {
      dw_large(c, s, oy, ox, d);
      ++ox;
    } else if (inside && ox >= pl->x_lo && ox < pl->x_hi) {
      const float *x = s->img + dw_at(s, iy0) + (ptrdiff_t)(ox * p->stride_w - p->pad_left) * ic;
      dw_run(c, x, xstep, io, pl->iwo, pl->taps, xe - ox, d);
      ox = xe;
    } else {
      int32_t taps = uk_dw_taps(p, oy, ox, xo, wo);
      dw_place_taps(s, taps, xo);
      dw_pixels(c, 1, s->img, 0, xo, wo, taps, d);
      ++ox;
    }
  }
}

/* Output pixels [lo, hi), pixel q's channels at out + (q - lo) * ic. */
static void dw_f32(const ukf_ctx_t *c, const float *in, int32_t lo, int32_t hi, float *out) {
  const tinyml_uk_params_t *p = c->p;
  dw_plan_t pl;
  dw_plan(p, &pl);
  const int32_t r1 = hi > lo ? (hi - 1) / p->ow + 1 : 0;
  for (int32_t r = lo / p->ow; r < r1; ++r) {
    int32_t x0, x1;
    uk_row_span(p, r, lo, hi, &x0, &x1);
    const dw_src_t src = {in + (size_t)(r / p->oh) * p->ih * p->iw * p->ic, 0, 0,
                          p->iw * p->ic};
    dw_row(c, &pl, &src, r % p->oh, x0, x1, out + (size_t)(r * p->ow + x0 - lo) * p->ic);
  }
}

/* Workgroup wg's band of output pixels (uk_abi.h). */
void tinyml_uk_depthwise_f32(const float *in, const void *blob, float *out, void *scratch,
                             int32_t wg, int32_t count) {
  (void)scratch;
  const ukf_ctx_t c = ukf_ctx(blob);
  int32_t lo, hi;
  uk_band(c.p, wg, count, &lo, &hi);
  dw_f32(&c, in, lo, hi, out + (size_t)lo * c.p->ic);
}

#include "ukernels_block.h" /* tinyml_uk_dwpw_f32, tinyml_uk_pwdwpw_f32 and _add_ */
#include "ukernels_pool.h" /* tinyml_uk_maxpool_f32, tinyml_uk_convpool_f32 */
