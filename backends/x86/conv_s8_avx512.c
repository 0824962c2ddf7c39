/* The int8 conv tile with AVX-512 (conv_s8.h), in the AVX-512 bitcode
 * only: two 8-channel weight panels in one zmm, 16 or 32 channels per
 * pass. */
#include "conv_s8.h"

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
  store_tile16(c, a, o0, nz, npix, outs);
}

/* Not inlined, so a module's object names the kernels it got. */
__attribute__((noinline)) void uk_tile_avx512(const uk_ctx_t *c, const int16_t *col,
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
