/* int8 microkernels for x86-64 with AVX2, compiled to LLVM bitcode at build
 * time and linked into every executable (lib/ukernels/uk_abi.h).
 *
 * Conv: the im2col column of 4 output pixels holds int16 (x - zp); weights
 * are packed 8 output channels x 2 taps, widened with vpmovsxbw, and
 * vpmaddwd sums tap pairs into int32 lanes.  int16 products cannot saturate
 * (|x - zp| <= 255, |w| <= 128), unlike vpmaddubsw, so results stay exact. */
#include <immintrin.h>

#include "../../lib/ukernels/uk_common.h"

enum { PIX = 4 };

UK_INLINE __m256i load_w(const int8_t *w) {
  return _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)w));
}

UK_INLINE __m256i pair(const int16_t *col, int32_t k) {
  int32_t v;
  __builtin_memcpy(&v, col + k, 4);
  return _mm256_set1_epi32(v);
}

UK_INLINE void store_block(const uk_ctx_t *c, __m256i acc, int32_t o0, int8_t *out) {
  int32_t a[8];
  _mm256_storeu_si256((__m256i *)(void *)a, acc);
  const tinyml_uk_params_t *p = c->p;
  for (int32_t j = 0; j < 8 && o0 + j < p->oc; ++j)
    out[o0 + j] = uk_requant(p, a[j] + c->bias[o0 + j], c->mult[o0 + j], c->shift[o0 + j]);
}

/* PIX pixels x 16 output channels per pass (8 when one block is left). */
static void conv_tile(const uk_ctx_t *c, const int16_t *col, int32_t npix, int8_t *const *outs) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded;
  for (int32_t o0 = 0; o0 < p->oc_padded; o0 += 16) {
    const int two = o0 + 8 < p->oc_padded;
    const int8_t *w0 = c->weights + (size_t)o0 * kp;
    const int8_t *w1 = w0 + (size_t)8 * kp;
    __m256i a0[PIX], a1[PIX];
    for (int i = 0; i < PIX; ++i) a0[i] = a1[i] = _mm256_setzero_si256();
    if (two && npix == PIX) {
      for (int32_t k = 0; k < kp; k += 2) {
        __m256i x0 = load_w(w0 + k * 8), x1 = load_w(w1 + k * 8);
        for (int i = 0; i < PIX; ++i) {
          __m256i b = pair(col + (size_t)i * kp, k);
          a0[i] = _mm256_add_epi32(a0[i], _mm256_madd_epi16(b, x0));
          a1[i] = _mm256_add_epi32(a1[i], _mm256_madd_epi16(b, x1));
        }
      }
    } else {
      for (int32_t k = 0; k < kp; k += 2) {
        __m256i x0 = load_w(w0 + k * 8);
        __m256i x1 = two ? load_w(w1 + k * 8) : x0;
        for (int i = 0; i < npix; ++i) {
          __m256i b = pair(col + (size_t)i * kp, k);
          a0[i] = _mm256_add_epi32(a0[i], _mm256_madd_epi16(b, x0));
          a1[i] = _mm256_add_epi32(a1[i], _mm256_madd_epi16(b, x1));
        }
      }
    }
    for (int i = 0; i < npix; ++i) {
      store_block(c, a0[i], o0, outs[i]);
      if (two) store_block(c, a1[i], o0 + 8, outs[i]);
    }
  }
}

void tinyml_uk_conv_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  int16_t *col = (int16_t *)scratch;
  const int32_t pixels = p->oh * p->ow;
  for (int32_t n = 0; n < p->batch; ++n) {
    const int8_t *img = in + (size_t)n * p->ih * p->iw * p->ic;
    int8_t *dst = out + (size_t)n * pixels * p->oc;
    for (int32_t q = 0; q < pixels; q += PIX) {
      int32_t np = pixels - q < PIX ? pixels - q : PIX;
      int8_t *outs[PIX];
      for (int32_t i = 0; i < np; ++i) {
        uk_im2col(p, img, (q + i) / p->ow, (q + i) % p->ow, col + (size_t)i * p->k_padded);
        outs[i] = dst + (size_t)(q + i) * p->oc;
      }
      conv_tile(&c, col, np, outs);
    }
  }
}

void tinyml_uk_depthwise_s8(const int8_t *in, const void *blob, int8_t *out, void *scratch) {
  (void)scratch;
  uk_ctx_t c = uk_ctx(blob);
  uk_depthwise_generic(&c, in, out);
}
