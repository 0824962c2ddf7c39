/* The int8 conv tile with AVX2 (conv_s8.h), in the AVX2 bitcode only. */
#include "conv_s8.h"

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

__attribute__((noinline)) void uk_tile_avx2(const uk_ctx_t *c, const int16_t *col, int32_t npix,
                                            int8_t *const *outs) {
  const tinyml_uk_params_t *p = c->p;
  int32_t o0 = 0;
  for (; o0 + 16 <= p->oc_padded; o0 += 16) tile16(c, col, o0, npix, outs);
  if (o0 < p->oc_padded) tile8(c, col, o0, npix, outs);
}
