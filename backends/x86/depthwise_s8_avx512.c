/* The int8 depthwise pixel kernels with AVX-512 (depthwise_s8.h), in the
 * AVX-512 bitcode only: 16 channels per vector, and two pixels per vector
 * for 8-channel layers. */
#include "depthwise_s8.h"

/* 16 channels per vector; masked loads cover the tail without reading
 * past a tensor.  q, when not null, holds every 16-channel block's rescale
 * constants (rq16), made once per call of the driver: made per pixel they
 * took about a quarter of this kernel's time in vww (perf, cpu-clock). */
__attribute__((noinline)) void uk_dw_avx512(const uk_ctx_t *c, const int8_t *img,
                                            const int32_t *xo, const int32_t *wo, int32_t taps,
                                            int8_t *dst, const rq16_t *q) {
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
    if (q) {
      rq16_store(rq16_apply(q + c0 / 16, a), dst + c0, p->ic - c0);
      continue;
    }
    rq16_t qc;
    if (rq16_at(c, c0, &qc)) {
      rq16_store(rq16_apply(&qc, a), dst + c0, p->ic - c0);
      continue;
    }
    requant8(c, _mm512_castsi512_si256(a), c0, dst, left(p, c0));
    if (c0 + 8 < p->ic)
      requant8(c, _mm512_extracti64x4_epi64(a, 1), c0 + 8, dst, left(p, c0 + 8));
  }
}

/* Two pixels of an 8-channel layer in one vector (vww's first depthwise,
 * 48x48): lanes 0-7 the pixel whose taps start at img, 8-15 the next,
 * whose taps are step bytes on; the same sums, half the tap loops. */
__attribute__((noinline)) void uk_dw8x2_avx512(const uk_ctx_t *c, const int8_t *img,
                                               int32_t step, const int32_t *xo, const int32_t *wo,
                                               int32_t taps, int8_t *dst) {
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
  rq16_t q;
  if (rq16_pair(c, 0, &q)) {
    rq16_store2(rq16_apply(&q, a), dst, dst + c->p->oc, 8);
    return;
  }
  requant8(c, _mm512_castsi512_si256(a), 0, dst, 8);
  requant8(c, _mm512_extracti64x4_epi64(a, 1), 0, dst + c->p->oc, 8);
}
