/* The int8 depthwise pixel kernels, included by ukernels.c: AVX-512 (16
 * channels per vector, and two pixels per vector for 8-channel layers) or
 * AVX2.  tinyml_uk_depthwise_s8 there plans the taps and calls dw_pixel. */
#ifndef TINYML_BACKENDS_X86_UKERNELS_DW8_H
#define TINYML_BACKENDS_X86_UKERNELS_DW8_H

#if UK_ZMM
/* 16 channels per vector; masked loads cover the tail without reading
 * past a tensor. */
static __attribute__((noinline)) void uk_dw_avx512(const uk_ctx_t *c, const int8_t *img,
                                                   const int32_t *xo, const int32_t *wo,
                                                   int32_t taps, int8_t *dst) {
  const tinyml_uk_params_t *p = c->p;
  const __m512i zp = _mm512_set1_epi32(p->in_zp);
  for (int32_t c0 = 0; c0 < p->ic; c0 += 16) {
    const __mmask16 m = p->ic - c0 >= 16 ? (__mmask16)0xffff
                                         : (__mmask16)((1u << (p->ic - c0)) - 1);
    __m512i a = _mm512_setzero_si512();
    for (int32_t t = 0; t < taps; ++t) {
      __m512i x = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, img + xo[t] + c0));
      __m512i w = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, c->weights + wo[t] + c0));
      a = _mm512_add_epi32(a, _mm512_mullo_epi32(_mm512_sub_epi32(x, zp), w));
    }
    requant8(c, _mm512_castsi512_si256(a), c0, dst, left(p, c0));
    if (c0 + 8 < p->ic)
      requant8(c, _mm512_extracti64x4_epi64(a, 1), c0 + 8, dst, left(p, c0 + 8));
  }
}

/* Two pixels of an 8-channel layer in one vector (vww's first depthwise,
 * 48x48): lanes 0-7 the pixel whose taps start at img, 8-15 the next,
 * whose taps are step bytes on; the same sums, half the tap loops. */
static __attribute__((noinline)) void uk_dw8x2_avx512(const uk_ctx_t *c, const int8_t *img,
                                                      int32_t step, const int32_t *xo,
                                                      const int32_t *wo, int32_t taps,
                                                      int8_t *dst) {
  const __m512i zp = _mm512_set1_epi32(c->p->in_zp);
  __m512i a = _mm512_setzero_si512();
  for (int32_t t = 0; t < taps; ++t) {
    const int8_t *x = img + xo[t];
    __m128i x2 = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)x),
                                    _mm_loadl_epi64((const __m128i *)(const void *)(x + step)));
    __m128i w = _mm_loadl_epi64((const __m128i *)(const void *)(c->weights + wo[t]));
    __m512i xi = _mm512_sub_epi32(_mm512_cvtepi8_epi32(x2), zp);
    a = _mm512_add_epi32(a, _mm512_mullo_epi32(xi, _mm512_cvtepi8_epi32(_mm_unpacklo_epi64(w, w))));
  }
  requant8(c, _mm512_castsi512_si256(a), 0, dst, 8);
  requant8(c, _mm512_extracti64x4_epi64(a, 1), 0, dst + c->p->oc, 8);
}
#else
UK_INLINE __m256i dw_mac(__m256i acc, const int8_t *x, const int8_t *w, __m256i zp) {
  __m256i xi = _mm256_sub_epi32(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)x)), zp);
  __m256i wi = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)w));
  return _mm256_add_epi32(acc, _mm256_mullo_epi32(xi, wi));
}

static __attribute__((noinline)) void uk_dw_avx2(const uk_ctx_t *c, const int8_t *img,
                                                 const int32_t *xo, const int32_t *wo,
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

#endif

UK_INLINE void dw_pixel(const uk_ctx_t *c, const int8_t *img, const int32_t *xo, const int32_t *wo,
                        int32_t taps, int8_t *dst) {
#if UK_ZMM
  uk_dw_avx512(c, img, xo, wo, taps, dst);
#else
  uk_dw_avx2(c, img, xo, wo, taps, dst);
#endif
}

#endif
