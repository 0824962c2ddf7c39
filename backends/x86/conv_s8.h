/* The int8 conv's units: the driver (conv_s8.c, both bitcodes) and the
 * tiles it calls, vpmaddwd with AVX2 (conv_s8_avx2.c) or AVX-512
 * (conv_s8_avx512.c), and vpdpbusd (conv_s8_vnni.c).  Here: what they
 * share, and the tiles' entry points. */
#ifndef TINYML_BACKENDS_X86_CONV_S8_H
#define TINYML_BACKENDS_X86_CONV_S8_H

#include "ukernels_common.h"

/* Pixels per int8 conv tile (x86.c sizes the im2col scratch for them).
 * With AVX-512, 8: a 16-channel layer's tile then has 8 accumulators,
 * not 4, and each widened weight vector serves 8 pixels; resnet8 ran
 * 0.155-0.161 ms against 0.173-0.176 with 4 (best of 2000, 3 runs each),
 * kws and vww the same. */
enum { PIX = UK_ZMM ? 8 : 4 };

UK_INLINE __m256i load_w(const int8_t *w) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)w));
}

UK_INLINE __m256i pair(const int16_t *col, int32_t k) {
  int32_t v;
  __builtin_memcpy(&v, col + k, 4);
  return _mm256_set1_epi32(v);
}

/* PIX pixels x 8 channels: the last panel of both ISAs' tiles. */
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

/* Pixel (oy, ox)'s im2col column, for columns of any element type:
 * put(col, t, src, n, zp) writes n taps from the image at tap t,
 * pad(col, t, n, zp) n padded ones.  Called with constant functions, which
 * inline: the int16 columns (conv_s8.c) and the byte ones (conv_s8_vnni.c). */
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

/* The tiles: npix (<= PIX) pixels' int16 columns (PIX of them, k_padded
 * each) by every output channel, into outs[i].  Not inlined, so a
 * module's object names the kernels it got. */
#if UK_ZMM
void uk_tile_avx512(const uk_ctx_t *c, const int16_t *col, int32_t npix, int8_t *const *outs);

/* Rescales and stores npix pixels' accumulators for the 16-channel groups
 * [o0, o0 + 16 * nz): from the high words (rq16) where every shift of a
 * group allows, else requant16.  Both AVX-512 tiles end this way. */
UK_INLINE void store_tile16(const uk_ctx_t *c, __m512i a[][2], int32_t o0, int nz,
                            int32_t npix, int8_t *const *outs) {
  for (int z = 0; z < nz; ++z) {
    const int32_t oz = o0 + 16 * z;
    rq16_t q;
    if (rq16_at(c, oz, &q)) {
      for (int i = 0; i < npix; ++i) rq16_store(rq16_apply(&q, a[i][z]), outs[i] + oz, c->p->oc - oz);
    } else {
      for (int i = 0; i < npix; ++i) requant16(c, a[i][z], oz, outs[i]);
    }
  }
}


/* One 16-channel group's rescale constants for pw_apply (rq16's in fewer
 * uops): mult for the even lanes (vpmuldq reads the low dword of each
 * qword) and the odd ones; the sum's constant term for v >= 0 for even and
 * odd lanes (rq16's hz * 2^32 + 2^30, or conv_s8_pw.c's pw_make); the
 * shift s - 32; the out_zp to add after it where the sum could not hold
 * it (pw_apply_z). */
typedef struct pw_rq {
  __m512i mult, mult_hi, ke, ko, sh, zp;
} pw_rq_t;

/* rq16_apply without its bias add and clamp: v * mult + hz * 2^32 + 2^30
 * - (v < 0) * 2^31 is rq16's (hz + (v >> 31)) * 2^32 + ((v & 2^31) | 2^30)
 * modulo 2^64, so the high words and the outputs are the same. */
UK_INLINE __m512i pw_apply(const pw_rq_t *r, __m512i v) {
  return rq16_hi(v, r->mult, r->mult_hi, r->ke, r->ko, r->sh);
}

/* pw_apply, then out_zp where it is not in the constant term. */
UK_INLINE __m512i pw_apply_z(const pw_rq_t *r, __m512i v, int zadd) {
  const __m512i x = pw_apply(r, v);
  return zadd ? _mm512_add_epi32(x, r->zp) : x;
}

/* 1 in the VNNI bitcode only (meson.build): its conv calls dot4_conv for a
 * blob with dot4.  A constant of the build, not the blob's choice, so the
 * plain AVX-512 bitcode has no VNNI instruction and a module can carry it
 * beside the VNNI one for AVX-512 CPUs without VNNI. */
#ifndef UK_VNNI
#define UK_VNNI 0
#endif

/* The VNNI kernels' feature, which they carry themselves (conv_s8_vnni.c). */
#define UK_DOT4 __attribute__((target("avx512vnni")))

/* The dot4 kernels' shared pieces (conv_s8_vnni.c, conv_s8_lanes.c). */
/* Word j of the 32 in a zmm: 16-channel half h = j / 16, channel
 * (j % 16) / 2 of its panel, tap pair j % 2; the source holds a panel's
 * two 16-byte tap-pair rows one after the other. */
UK_INLINE __m512i dot4_index(void) {
  short ix[32];
  for (int j = 0; j < 32; ++j) ix[j] = (short)((j / 16) * 16 + (j % 2) * 8 + (j % 16) / 2);
  return _mm512_loadu_si512(ix);
}

/* Taps k..k+3 of the panels at w0 and w1 (8 channels each), each
 * channel's four bytes side by side. */
UK_DOT4 UK_INLINE __m512i dot4_w(const int8_t *w0, const int8_t *w1, __m512i ix) {
  __m512i z = _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)w0)),
      _mm256_loadu_si256((const __m256i *)(const void *)w1), 1);
  return _mm512_permutexvar_epi16(ix, z);
}

/* The low n (< 64) bytes. */
UK_INLINE __mmask64 dot4_low(int32_t n) { return ((__mmask64)1 << n) - 1; }

/* n bytes of x at src as x ^ 0x80 at dst.  The tail is one masked load
 * and store: whole stores where the scratch had room measured slower
 * (resnet8's --emit c loop 0.114 against 0.110 ms per invoke). */
UK_INLINE void dot4_flip(const int8_t *src, uint8_t *dst, int32_t n) {
  const __m512i m = _mm512_set1_epi8((char)0x80);
  int32_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(dst + i, _mm512_xor_si512(_mm512_loadu_si512(src + i), m));
  if (i < n)
    _mm512_mask_storeu_epi8(dst + i, dot4_low(n - i),
                            _mm512_xor_si512(_mm512_maskz_loadu_epi8(dot4_low(n - i), src + i), m));
}

/* n bytes of v at dst. */
UK_INLINE void dot4_fill(uint8_t *dst, uint8_t v, int32_t n) {
  const __m512i x = _mm512_set1_epi8((char)v);
  int32_t i = 0;
  for (; i + 64 <= n; i += 64) _mm512_storeu_si512(dst + i, x);
  if (i < n) _mm512_mask_storeu_epi8(dst + i, dot4_low(n - i), x);
}

UK_INLINE void col8_put(void *col, int32_t t, const int8_t *src, int32_t n, int32_t zp) {
  (void)zp;
  dot4_flip(src, (uint8_t *)col + t, n);
}

UK_INLINE void col8_pad(void *col, int32_t t, int32_t n, int32_t zp) {
  dot4_fill((uint8_t *)col + t, (uint8_t)(zp + 128), n);
}

/* im2col's columns as bytes u = x + 128 (dot4_conv, pwk_conv). */
UK_INLINE void dot4_im2col(const tinyml_uk_params_t *p, const int8_t *img, int32_t oy,
                           int32_t ox, uint8_t *col) {
  im2col_walk(p, img, oy, ox, col, col8_put, col8_pad);
  /* The padded taps' weights are 0. */
  for (int32_t k = p->k; k < p->k_padded; ++k) col[k] = 0;
}

/* The same with lanes as pixels, for convs with few taps (conv_s8_lanes.c);
 * 0 when it does not take the layer.  c->bias is the blob's bias4. */
UK_DOT4 int lanes_conv(const uk_ctx_t *c, const int8_t *in, int8_t *out, int32_t lo, int32_t hi);

/* The same for 1x1 convs, pixels streamed (conv_s8_pw.c). */
UK_DOT4 int pw_conv(const uk_ctx_t *c, const int8_t *in, int8_t *out, int32_t lo, int32_t hi);

/* The same for layers with shifts of 31 (uk_conv_s8_plan's PW31). */
UK_DOT4 int pw_conv31(const uk_ctx_t *c, const int8_t *in, int8_t *out, int32_t lo, int32_t hi);

/* The same for 1x1 convs on 7-9 pixels an image (uk_conv_s8_plan's PW9). */
UK_DOT4 int pw9_conv(const uk_ctx_t *c, const int8_t *in, int8_t *out, int32_t lo, int32_t hi);

/* The same for convs with more taps, pw_conv's blocks on im2col columns
 * (uk_conv_s8_plan's PWK). */
UK_DOT4 int pwk_conv(const uk_ctx_t *c, const int8_t *in, int8_t *out, uint8_t *scratch, int32_t lo,
                     int32_t hi);

/* tinyml_uk_conv_s8's pixels [lo, hi) with 4-tap dot products, for a blob
 * whose dot4 is set (the caller tests it); col is the scratch. */
UK_DOT4 void dot4_conv(const uk_ctx_t *c0, const int8_t *in, int8_t *out, uint8_t *col,
                       int32_t lo, int32_t hi);
#else
void uk_tile_avx2(const uk_ctx_t *c, const int16_t *col, int32_t npix, int8_t *const *outs);
#endif

#endif
