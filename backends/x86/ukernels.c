/* int8 microkernels for x86-64 with AVX2, compiled to LLVM bitcode at build
 * time and linked into every executable (lib/ukernels/uk_abi.h).
 *
 * Conv: the im2col columns of 4 output pixels hold int16 (x - zp); weights
 * are packed 8 output channels x 2 taps, widened with vpmovsxbw, and
 * vpmaddwd sums tap pairs into int32 lanes.  int16 products cannot saturate
 * (|x - zp| <= 255, |w| <= 128), unlike vpmaddubsw, so results stay exact.
 * The rescale runs 8 channels at a time in 64-bit lanes. */
#include <immintrin.h>

#include "../../lib/ukernels/uk_common.h"

enum { PIX = 4 };

UK_INLINE __m256i load_w(const int8_t *w) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)w));
}

UK_INLINE __m256i ld8(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)(const void *)p); }

UK_INLINE __m256i pair(const int16_t *col, int32_t k) {
  int32_t v;
  __builtin_memcpy(&v, col + k, 4);
  return _mm256_set1_epi32(v);
}

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

UK_INLINE int32_t left(const tinyml_uk_params_t *p, int32_t o0) {
  return p->oc - o0 < 8 ? p->oc - o0 : 8;
}

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

static void conv_tile(const uk_ctx_t *c, const int16_t *col, int32_t npix, int8_t *const *outs) {
  const tinyml_uk_params_t *p = c->p;
  int32_t o0 = 0;
  for (; o0 + 16 <= p->oc_padded; o0 += 16) tile16(c, col, o0, npix, outs);
  if (o0 < p->oc_padded) tile8(c, col, o0, npix, outs);
}

/* uk_im2col with the widening done 16 channels at a time. */
UK_INLINE void widen(const int8_t *src, int16_t *dst, int32_t n, int32_t zp) {
  const __m256i z = _mm256_set1_epi16((int16_t)zp);
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(src + i)));
    _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm256_sub_epi16(v, z));
  }
  for (; i < n; ++i) dst[i] = (int16_t)(src[i] - zp);
}

static void im2col(const tinyml_uk_params_t *p, const int8_t *img, int32_t oy, int32_t ox,
                   int16_t *col) {
  const __m256i zp = _mm256_set1_epi16((int16_t)p->in_zp);
  const int32_t ic = p->ic, vec = ic & ~15;
  int16_t *c = col;
  int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
  if (p->dil_w == 1 && iy0 >= 0 && ix0 >= 0 && iy0 + (p->kh - 1) * p->dil_h < p->ih &&
      ix0 + p->kw - 1 < p->iw) {
    /* Inside the image, each kernel row is one contiguous run of input. */
    const int32_t run = p->kw * ic;
    for (int32_t ky = 0; ky < p->kh; ++ky, c += run)
      widen(img + ((size_t)(iy0 + ky * p->dil_h) * p->iw + ix0) * ic, c, run, p->in_zp);
    for (int32_t k = p->k; k < p->k_padded; ++k) col[k] = 0;
    return;
  }
  for (int32_t ky = 0; ky < p->kh; ++ky) {
    int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
    for (int32_t kx = 0; kx < p->kw; ++kx, c += ic) {
      int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
      if (iy < 0 || iy >= p->ih || ix < 0 || ix >= p->iw) {
        for (int32_t ch = 0; ch < ic; ++ch) c[ch] = 0;
        continue;
      }
      const int8_t *src = img + ((size_t)iy * p->iw + ix) * ic;
      int32_t ch = 0;
      for (; ch < vec; ch += 16) {
        __m256i v = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(src + ch)));
        _mm256_storeu_si256((__m256i *)(void *)(c + ch), _mm256_sub_epi16(v, zp));
      }
      for (; ch < ic; ++ch) c[ch] = (int16_t)(src[ch] - p->in_zp);
    }
  }
  for (int32_t k = p->k; k < p->k_padded; ++k) col[k] = 0;
}

void tinyml_uk_conv_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  int16_t *col = (int16_t *)scratch;
  const int32_t pixels = p->oh * p->ow, kp = p->k_padded;
  for (int32_t n = 0; n < p->batch; ++n) {
    const int8_t *img = in + (size_t)n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)n * pixels * p->oc;
    int32_t oy = 0, ox = 0; /* of pixel q: no division per pixel */
    for (int32_t q = 0; q < pixels; q += PIX) {
      int32_t np = pixels - q < PIX ? pixels - q : PIX;
      int8_t *outs[PIX];
      for (int32_t i = 0; i < np; ++i) {
        im2col(p, img, oy, ox, col + (size_t)i * kp);
        outs[i] = dst + (size_t)(q + i) * p->oc;
        if (++ox == p->ow) {
          ox = 0;
          ++oy;
        }
      }
      for (int32_t i = np; i < PIX; ++i)
        for (int32_t k = 0; k < kp; ++k) col[(size_t)i * kp + k] = 0;
      conv_tile(&c, col, np, outs);
    }
  }
}

UK_INLINE __m256i dw_mac(__m256i acc, const int8_t *x, const int8_t *w, __m256i zp) {
  __m256i xi = _mm256_sub_epi32(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)x)), zp);
  __m256i wi = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)w));
  return _mm256_add_epi32(acc, _mm256_mullo_epi32(xi, wi));
}

static void dw_pixel(const uk_ctx_t *c, const int8_t *img, const int32_t *xo, const int32_t *wo,
                     int32_t taps, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const __m256i zp = _mm256_set1_epi32(p->in_zp);
  int32_t c0 = 0;
  for (; c0 + 16 <= p->ic; c0 += 16) {
    __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
    for (int32_t t = 0; t < taps; ++t) {
      a = dw_mac(a, img + xo[t] + c0, c->weights + wo[t] + c0, zp);
      b = dw_mac(b, img + xo[t] + c0 + 8, c->weights + wo[t] + c0 + 8, zp);
    }
    requant8(c, a, c0, dst, 8);
    requant8(c, b, c0 + 8, dst, 8);
  }
  for (; c0 < p->ic; c0 += 8) {
    int32_t n = p->ic - c0 < 8 ? p->ic - c0 : 8;
    __m256i a = _mm256_setzero_si256();
    for (int32_t t = 0; t < taps && n == 8; ++t)
      a = dw_mac(a, img + xo[t] + c0, c->weights + wo[t] + c0, zp);
    for (int32_t t = 0; t < taps && n < 8; ++t) {
      int8_t xs[8] = {0}, ws[8] = {0}; /* staged: never read past a tensor */
      for (int32_t j = 0; j < n; ++j) {
        xs[j] = img[xo[t] + c0 + j];
        ws[j] = c->weights[wo[t] + c0 + j];
      }
      a = dw_mac(a, xs, ws, zp);
    }
    requant8(c, a, c0, dst, n);
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
