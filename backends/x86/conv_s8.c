/* The int8 conv (tinyml_uk_conv_s8), built into both bitcodes: im2col and
 * the tiles of its ISA (conv_s8.h).
 *
 * Conv: the im2col columns of 4 output pixels (8 with AVX-512) hold int16 (x - zp); weights
 * are packed 8 output channels x 2 taps, widened with vpmovsxbw, and
 * vpmaddwd sums tap pairs into int32 lanes.  int16 products cannot saturate
 * (|x - zp| <= 255, |w| <= 128), unlike vpmaddubsw, so results stay exact.
 * The rescale runs 8 channels at a time in 64-bit lanes.  In the VNNI
 * bitcode (UK_VNNI), for a blob with dot4, the conv sums 4 byte taps per
 * vpdpbusd instead (conv_s8_vnni.c). */
#include "conv_s8.h"

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
#if UK_VNNI
  /* A blob packed without the dot4 bias (a compile pinned to a CPU whose
   * build has no dot4) takes the vpmaddwd path. */
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
