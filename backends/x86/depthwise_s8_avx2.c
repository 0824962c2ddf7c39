/* The int8 depthwise pixel kernel with AVX2 (depthwise_s8.h), in the
 * AVX2 bitcode only: 8 channels per vector. */
#include "depthwise_s8.h"

UK_INLINE __m256i dw_mac(__m256i acc, const int8_t *x, const int8_t *w, __m256i zp) {
  __m256i xi = _mm256_sub_epi32(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)x)), zp);
  __m256i wi = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)w));
  return _mm256_add_epi32(acc, _mm256_mullo_epi32(xi, wi));
}

__attribute__((noinline)) void uk_dw_avx2(const uk_ctx_t *c, const int8_t *img,
                                          const int32_t *xo, const int32_t *wo, int32_t taps,
                                          int8_t *dst) {
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
