/* The int8 1x1 conv for dot4 blobs (uk_conv_s8_plan's UK_CONV_S8_PW):
 * vww's 1x1 convs on 8-64 input channels spent most of their time in the
 * rescale and the per-tile set-up of dot4_conv (per 8 pixels: a call, the
 * rescale constants made again, one rq16 of ~19 uops, a vpmovdb and a
 * store per 16 outputs), not in vpdpbusd.
 *
 * Here the rescale constants are made once per call, the accumulators
 * start at bias4 (no bias add), and a block is 16 accumulators: 4 pixels
 * x 64 channels, 8 x 32 or 16 x 16.  Each 16 outputs are rescaled in 11
 * uops (pw_apply: rq16's sum with its sign-dependent rounding term as one
 * constant less the sign bit), and 64 outputs, which are then adjacent in
 * memory, are narrowed together: two vpackssdw, a vpacksswb and a vpermd,
 * the clamp on bytes, one store.  Saturating to int8 and then clamping to
 * [act_min, act_max], which lies inside int8, is the same as clamping
 * first.  Same bytes as dot4_conv (same bias4, same high words).  The
 * stack holds the rows (4 KB), the rescale constants (up to 12 KB, 8 more
 * in pw_conv31) and the weights in vpdpbusd order (up to 32 KB): 56 KB;
 * pwk_conv also its band of input rows (20 KB; 36 KB of weights): 76 KB.
 * Within the 136 KiB include/tinyml.h allows kernels and the runtime's
 * 256 KB worker stacks (lib/runtime/pool.c).
 *
 * Layers with shifts of 31 (vww's 128 -> 128 and 128 -> 256 ones) take
 * pw_conv31: pw_apply31 and blocks of 6 pixels x 64 channels.  Layers
 * with 7-9 pixels an image (vww's 3x3 ones) take pw9_conv, at the end. */
#include "conv_s8.h"
#include "conv_s8_plan.h"

/* Up to this shift out_zp * 2^shift joins the rescale's constant term;
 * above it the sum may not fit int64, and out_zp is added after the shift
 * (pw_apply_z).  pw_make and pw_conv's zadd must agree on it. */
enum { PW_FOLD_MAX_SHIFT = 54 };

/* The constant term for the shifts s (one per qword, in [31, 62]):
 * TOSA's apply_scale_32 with s >= 32 adds 2^(s-1) and +-2^30 to v * mult
 * and shifts right by s; here the term for v >= 0 is 2^(s-1) + 2^30 (+
 * out_zp * 2^s up to PW_FOLD_MAX_SHIFT), below 2^62 in magnitude, so the
 * sum stays within int64, its high word within int32, shifted by s - 32.
 * (Made with vectors: the scalar loops were a visible part of a 9-pixel
 * layer's time.) */
UK_INLINE __m512i pw_k(__m512i s, int32_t out_zp) {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i k = _mm512_add_epi64(_mm512_sllv_epi64(one, _mm512_sub_epi64(s, one)),
                                     _mm512_set1_epi64((int64_t)1 << 30));
  const __mmask8 fold = _mm512_cmple_epi64_mask(s, _mm512_set1_epi64(PW_FOLD_MAX_SHIFT));
  return _mm512_mask_add_epi64(k, fold, k, _mm512_sllv_epi64(_mm512_set1_epi64(out_zp), s));
}

/* Channels o0..o0+15's constants; out_zp in r->zp where shift >
 * PW_FOLD_MAX_SHIFT (pw_apply_z adds it). */
UK_INLINE void pw_make(const uk_ctx_t *c, int32_t o0, pw_rq_t *r) {
  const __m512i s = _mm512_loadu_si512(c->shift + o0);
  const int32_t zp = c->p->out_zp;
  r->mult = _mm512_loadu_si512(c->mult + o0);
  r->mult_hi = _mm512_srli_epi64(r->mult, 32);
  r->ke = pw_k(_mm512_and_si512(s, _mm512_set1_epi64(0xffffffffLL)), zp);
  r->ko = pw_k(_mm512_srli_epi64(s, 32), zp);
  r->sh = _mm512_sub_epi32(s, _mm512_set1_epi32(32));
  r->zp = _mm512_maskz_mov_epi32(_mm512_cmpgt_epi32_mask(s, _mm512_set1_epi32(PW_FOLD_MAX_SHIFT)),
                                 _mm512_set1_epi32(zp));
}

/* pw_apply31's per-lane constants, even and odd channels as qwords: the
 * double rounding's sign bit (0 where s = 31) and the shift s. */
typedef struct pw_x {
  __m512i sge, sgo, she, sho;
} pw_x_t;

/* pw_make for pw_conv31: where s = 31, TOSA adds 2^30 alone (no +-2^30),
 * so the constant term is 2^30 + out_zp * 2^31 and x has no sign term. */
UK_INLINE void pw_make31(const uk_ctx_t *c, int32_t o0, pw_rq_t *r, pw_x_t *x) {
  pw_make(c, o0, r);
  const __m512i s = _mm512_loadu_si512(c->shift + o0), r30 = _mm512_set1_epi64((int64_t)1 << 30);
  const __m512i se = _mm512_and_si512(s, _mm512_set1_epi64(0xffffffffLL));
  const __m512i so = _mm512_srli_epi64(s, 32), s31 = _mm512_set1_epi64(31);
  const __mmask8 e31 = _mm512_cmpeq_epi64_mask(se, s31), o31 = _mm512_cmpeq_epi64_mask(so, s31);
  r->ke = _mm512_mask_sub_epi64(r->ke, e31, r->ke, r30);
  r->ko = _mm512_mask_sub_epi64(r->ko, o31, r->ko, r30);
  x->sge = _mm512_maskz_mov_epi64((__mmask8)~e31, _mm512_set1_epi64(0x80000000LL));
  x->sgo = _mm512_maskz_mov_epi64((__mmask8)~o31, _mm512_set1_epi64(0x80000000LL));
  x->she = se;
  x->sho = so;
}

/* pw_apply where some shifts are 31: x >> 31 does not fit a high word, so
 * both halves shift as qwords by s (the same low words as pw_apply's for
 * s >= 32); 12 uops per 16 outputs against 11. */
UK_INLINE __m512i pw_apply31(const pw_rq_t *r, const pw_x_t *x, __m512i v) {
  const __m512i vo = _mm512_srli_epi64(v, 32);
  const __m512i xe = _mm512_sub_epi64(_mm512_add_epi64(_mm512_mul_epi32(v, r->mult), r->ke),
                                      _mm512_and_si512(v, x->sge));
  const __m512i xo = _mm512_sub_epi64(_mm512_add_epi64(_mm512_mul_epi32(vo, r->mult_hi), r->ko),
                                      _mm512_and_si512(vo, x->sgo));
  /* the low words of the shifted xe (even lanes) and xo (odd) */
  const __m512i lo = _mm512_setr_epi32(0, 16, 2, 18, 4, 20, 6, 22, 8, 24, 10, 26, 12, 28, 14, 30);
  return _mm512_permutex2var_epi32(_mm512_srav_epi64(xe, x->she), lo,
                                   _mm512_srav_epi64(xo, x->sho));
}

/* Four vectors of int32 outputs as 64 bytes in their order, saturated,
 * clamped (pw_pack4), stored under m (pw_store4).  The packs interleave
 * 4-dword pieces per 128-bit lane; vpermd puts them back. */
UK_INLINE __m512i pw_pack4(__m512i r0, __m512i r1, __m512i r2, __m512i r3, __m512i lo,
                           __m512i hi) {
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m512i b = _mm512_packs_epi16(_mm512_packs_epi32(r0, r1), _mm512_packs_epi32(r2, r3));
  b = _mm512_permutexvar_epi32(order, b);
  return _mm512_min_epi8(_mm512_max_epi8(b, lo), hi);
}

UK_INLINE void pw_store4(const __m512i *r, int8_t *out, __mmask64 m, __m512i lo, __m512i hi) {
  const __m512i b = pw_pack4(r[0], r[1], r[2], r[3], lo, hi);
  if (m == ~(__mmask64)0)
    _mm512_storeu_si512(out, b);
  else
    _mm512_mask_storeu_epi8(out, m, b);
}

UK_DOT4 UK_INLINE void pw_out(const uk_ctx_t *c, const pw_rq_t *rq, const pw_x_t *xs, __m512i *a,
                              int32_t np, int32_t o0, int nz, int npix, int zadd, int8_t *out);

/* np (<= npix) pixels' flipped rows at col by the channels [o0, o0 +
 * 16 nz), into out (pixel 0's row): npix * nz accumulators, a multiple of
 * 4 (16, or 24 for pw_conv31's 6 x 64).  With nz < 4, oc = 16 nz: a chunk
 * of 4 vectors is 4 / nz whole pixels.  xs: pw_apply31's constants, or 0
 * for pw_apply (constants of each caller, so each gets its own code). */
UK_DOT4 UK_INLINE void pw_block(const uk_ctx_t *c, const pw_rq_t *rq, const pw_x_t *xs,
                                const int32_t *wt, const uint8_t *col, int32_t np, int32_t o0,
                                int nz, int npix, int zadd, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int na = npix * nz;
  const int32_t kp = p->k_padded;
  const int8_t *w = c->weights + (size_t)o0 * kp;
  const size_t panel = (size_t)8 * kp;
  const __m512i ix = dot4_index();
  __m512i a[UK_PW_ACC], x[4];
  for (int j = 0; j < na; ++j) a[j] = _mm512_loadu_si512(c->bias + o0 + 16 * (j % nz));
  for (int32_t k = 0; k < kp; k += 4) {
    for (int z = 0; z < nz; ++z)
      x[z] = wt ? _mm512_loadu_si512(wt + ((size_t)(o0 / 16 + z) * kp + k) * 4)
                : dot4_w(w + 2 * z * panel + k * 8, w + (2 * z + 1) * panel + k * 8, ix);
    for (int i = 0; i < npix; ++i) {
      int32_t v;
      __builtin_memcpy(&v, col + (size_t)i * kp + k, 4);
      const __m512i u = _mm512_set1_epi32(v);
      for (int z = 0; z < nz; ++z) a[i * nz + z] = _mm512_dpbusd_epi32(a[i * nz + z], u, x[z]);
    }
  }
  pw_out(c, rq, xs, a, np, o0, nz, npix, zadd, out);
}

/* pw_block's second half: its accumulators a rescaled, narrowed, stored. */
UK_DOT4 UK_INLINE void pw_out(const uk_ctx_t *c, const pw_rq_t *rq, const pw_x_t *xs, __m512i *a,
                              int32_t np, int32_t o0, int nz, int npix, int zadd, int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int na = npix * nz;
  const __m512i lo = _mm512_set1_epi8((char)p->act_min), hi = _mm512_set1_epi8((char)p->act_max);
  /* Unrolled, as the k loop is: as loops (clang left them so), a[] went
   * through the stack and each rescale loaded it, its constants by a
   * computed index, and stored it back; 10-15 % of a 64-channel layer. */
  UK_UNROLL
  for (int j = 0; j < na; ++j) {
    const pw_rq_t *r = &rq[o0 / 16 + j % nz];
    a[j] = xs ? pw_apply31(r, &xs[o0 / 16 + j % nz], a[j]) : pw_apply(r, a[j]);
    if (zadd) a[j] = _mm512_add_epi32(a[j], r->zp);
  }
  const int per = 4 / nz; /* pixels per chunk */
  UK_UNROLL
  for (int ch = 0; ch < na / 4; ++ch) {
    const int32_t i0 = ch * per, live = np - i0 < per ? np - i0 : per;
    if (live <= 0) break;
    const int32_t bytes = live * 16 * nz;
    pw_store4(a + 4 * ch, out + (size_t)i0 * p->oc + o0, bytes >= 64 ? ~(__mmask64)0 : dot4_low(bytes),
              lo, hi);
  }
}

UK_DOT4 UK_INLINE void pw_weights(const uk_ctx_t *c, int32_t *wt) {
  const int32_t kp = c->p->k_padded;
  const __m512i ix = dot4_index();
  for (int32_t o0 = 0; o0 < c->p->oc; o0 += 16) {
    const int8_t *w = c->weights + (size_t)o0 * kp;
    for (int32_t k = 0; k < kp; k += 4)
      _mm512_storeu_si512(wt + ((size_t)(o0 / 16) * kp + k) * 4,
                          dot4_w(w + k * 8, w + (size_t)8 * kp + k * 8, ix));
  }
}

/* Pixels [q, q + np) flipped to u = x + 128 into col, kp bytes each. */
UK_DOT4 UK_INLINE void pw_rows(const tinyml_uk_params_t *p, const int8_t *in, int direct,
                               int32_t q, int32_t np, uk_pos_t *at, uint8_t *col) {
  const int32_t kp = p->k_padded;
  if (direct) {
    dot4_flip(in + (size_t)q * kp, col, np * kp);
    return;
  }
  for (int32_t i = 0; i < np; ++i, uk_pos_next(p, at)) {
    const size_t y = (size_t)at->n * p->ih + (size_t)at->oy * p->stride_h;
    dot4_flip(in + (y * p->iw + (size_t)at->ox * p->stride_w) * kp, col + (size_t)i * kp, kp);
  }
}

/* The blocks of pixels [lo, hi); wt: the weights rearranged, or 0; xs as
 * pw_block's; wide: pixels per block of 64 channels. */
UK_DOT4 UK_INLINE void pw_run(const uk_ctx_t *c, const pw_rq_t *rq, const pw_x_t *xs,
                              const int32_t *wt, const int8_t *in, int8_t *out, int32_t lo,
                              int32_t hi, int wide, int zadd) {
  const tinyml_uk_params_t *p = c->p;
  uint8_t col[UK_PW_BUF] __attribute__((aligned(64)));
  const int32_t npix = p->oc >= 64 ? wide : uk_pw_pixels(p), kp = p->k_padded;
  const int direct = tinyml_uk_direct_1x1(p);
  uk_pos_t at = uk_pos_at(p, lo);
  for (int32_t q = lo; q < hi; q += npix) {
    const int32_t np = uk_min32(npix, hi - q);
    pw_rows(p, in, direct, q, np, &at, col);
    /* The slots past np are summed, not stored. */
    if (np < npix) dot4_fill(col + (size_t)np * kp, 0, (npix - np) * kp);
    int8_t *o = out + (size_t)q * p->oc;
    if (p->oc == 16) {
      pw_block(c, rq, xs, 0, col, np, 0, 1, 16, zadd, o);
    } else if (p->oc == 32) {
      pw_block(c, rq, xs, 0, col, np, 0, 2, 8, zadd, o);
    } else if (wt) {
      for (int32_t o0 = 0; o0 < p->oc; o0 += 64)
        pw_block(c, rq, xs, wt, col, np, o0, 4, wide, zadd, o);
    } else {
      for (int32_t o0 = 0; o0 < p->oc; o0 += 64)
        pw_block(c, rq, xs, 0, col, np, o0, 4, wide, zadd, o);
    }
  }
}

/* Whether any channel's shift is past PW_FOLD_MAX_SHIFT, so out_zp is
 * added after the shift (pw_apply_z) rather than in the constant term. */
UK_INLINE int pw_zadd(const uk_ctx_t *c) {
  int zadd = 0;
  for (int32_t o = 0; o < c->p->oc; ++o) zadd |= c->shift[o] > PW_FOLD_MAX_SHIFT;
  return zadd;
}

/* pw_make31 for every 16-channel group of the blob. */
UK_INLINE void pw_make31_all(const uk_ctx_t *c, pw_rq_t *rq, pw_x_t *xs) {
  for (int32_t o0 = 0; o0 < c->p->oc; o0 += 16) pw_make31(c, o0, &rq[o0 / 16], &xs[o0 / 16]);
}

/* What pw_conv and pw_conv31 do once their rescale constants are made:
 * the weights into pw_run's order where they fit the stack buffer, then
 * the pixels, out_zp added after the shift if any channel's is above
 * PW_FOLD_MAX_SHIFT.  Inlined, so each caller keeps its own code. */
UK_DOT4 UK_INLINE void pw_finish(const uk_ctx_t *c, const pw_rq_t *rq, const pw_x_t *xs,
                                 const int8_t *in, int8_t *out, int32_t lo, int32_t hi,
                                 int wide) {
  const tinyml_uk_params_t *p = c->p;
  const int zadd = pw_zadd(c);
  int32_t wbuf[UK_PW_WT / 4] __attribute__((aligned(64)));
  const int32_t *wt = 0;
  if (p->oc >= 64 && (int64_t)p->oc * p->k_padded <= UK_PW_WT) {
    pw_weights(c, wbuf);
    wt = wbuf;
  }
  if (zadd)
    pw_run(c, rq, xs, wt, in, out, lo, hi, wide, 1);
  else
    pw_run(c, rq, xs, wt, in, out, lo, hi, wide, 0);
}

/* tinyml_uk_conv_s8's pixels [lo, hi) for a blob uk_conv_s8_plan gives
 * UK_CONV_S8_PW (c->bias is its bias4); 0 if it does not take it after
 * all.  Not inlined, so a module's object names it (perf, objdump). */
__attribute__((noinline)) UK_DOT4 int pw_conv(const uk_ctx_t *c, const int8_t *in, int8_t *out,
                                              int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  if (!uk_pw_fits(p) || !uk_pw_shifts(p, c->shift)) return 0;
  pw_rq_t rq[UK_PW_OC / 16];
  for (int32_t o0 = 0; o0 < p->oc; o0 += 16) pw_make(c, o0, &rq[o0 / 16]);
  pw_finish(c, rq, 0, in, out, lo, hi, 4);
  return 1;
}

/* pw_conv for a blob uk_conv_s8_plan gives UK_CONV_S8_PW31: pw_apply31
 * and blocks of 6 pixels x 64 channels.  Its own function, so pw_conv's
 * code stays as it was (a53ee63 put both in one and kws' 64 -> 64 steps,
 * which have no shift of 31, went from 2.8-3.4 to 4.5-5.1 us). */
__attribute__((noinline)) UK_DOT4 int pw_conv31(const uk_ctx_t *c, const int8_t *in, int8_t *out,
                                                int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  if (!uk_pw31_fits(p) || !uk_pw31_shifts(p, c->shift)) return 0;
  pw_rq_t rq[UK_PW_OC / 16];
  pw_x_t xs[UK_PW_OC / 16];
  pw_make31_all(c, rq, xs);
  pw_finish(c, rq, xs, in, out, lo, hi, UK_PW31_WIDE);
  return 1;
}

/* pw9_conv: 1x1 convs with 7-9 pixels an image (vww's 3x3 ones, 128 and
 * 256 -> 256, steps 24 and 26).  pw_conv's 4-pixel blocks computed 12
 * pixels for 9 and, past 32 KB of weights, rearranged every weight once
 * per block (3 times); pw_conv31's 6-pixel ones computed 12 too.  Here a
 * block is all 9 pixels by 32 channels (18 accumulators): every weight
 * is loaded and put in vpdpbusd order once per block, 9 pixels' sums
 * from it.  Shifts of 31 or not: pw_apply31 (the same bytes as pw_apply
 * for shifts of 32 and more, one uop more; 9 x 256 outputs are few). */
UK_DOT4 UK_INLINE void pw9_block(const uk_ctx_t *c, const pw_rq_t *rq, const pw_x_t *xs,
                                 const uint8_t *col, int32_t np, int32_t o0, int zadd,
                                 int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded;
  const int8_t *w = c->weights + (size_t)o0 * kp;
  const size_t panel = (size_t)8 * kp;
  const __m512i ix = dot4_index();
  __m512i a[UK_PW9_PIX][2];
  for (int i = 0; i < UK_PW9_PIX; ++i)
    for (int z = 0; z < 2; ++z) a[i][z] = _mm512_loadu_si512(c->bias + o0 + 16 * z);
  for (int32_t k = 0; k < kp; k += 4) {
    const __m512i x0 = dot4_w(w + k * 8, w + panel + k * 8, ix);
    const __m512i x1 = dot4_w(w + 2 * panel + k * 8, w + 3 * panel + k * 8, ix);
    for (int i = 0; i < UK_PW9_PIX; ++i) {
      int32_t v;
      __builtin_memcpy(&v, col + (size_t)i * kp + k, 4);
      const __m512i u = _mm512_set1_epi32(v);
      a[i][0] = _mm512_dpbusd_epi32(a[i][0], u, x0);
      a[i][1] = _mm512_dpbusd_epi32(a[i][1], u, x1);
    }
  }
  /* unrolled, as pw_block's rescale */
  UK_UNROLL
  for (int i = 0; i < UK_PW9_PIX; ++i)
    for (int z = 0; z < 2; ++z) {
      const int32_t g = o0 / 16 + z;
      a[i][z] = pw_apply31(&rq[g], &xs[g], a[i][z]);
      if (zadd) a[i][z] = _mm512_add_epi32(a[i][z], rq[g].zp);
    }
  const __m512i lo = _mm512_set1_epi8((char)p->act_min), hi = _mm512_set1_epi8((char)p->act_max);
  /* two pixels' 32 outputs per pack (the last pixel twice) */
  UK_UNROLL
  for (int i = 0; i < UK_PW9_PIX && i < np; i += 2) {
    const int j = i + 1 < UK_PW9_PIX ? i + 1 : i;
    const __m512i b = pw_pack4(a[i][0], a[i][1], a[j][0], a[j][1], lo, hi);
    _mm256_storeu_si256((__m256i *)(void *)(out + (size_t)i * p->oc + o0), _mm512_castsi512_si256(b));
    if (i + 1 < np)
      _mm256_storeu_si256((__m256i *)(void *)(out + (size_t)(i + 1) * p->oc + o0),
                          _mm512_extracti64x4_epi64(b, 1));
  }
}

/* pw9_conv's pixels [lo, hi) in blocks of 9 (the slots past the last
 * pixel summed, not stored). */
UK_DOT4 UK_INLINE void pw9_run(const uk_ctx_t *c, const pw_rq_t *rq, const pw_x_t *xs,
                               const int8_t *in, int8_t *out, int32_t lo, int32_t hi, int zadd) {
  const tinyml_uk_params_t *p = c->p;
  uint8_t col[UK_PW_BUF] __attribute__((aligned(64)));
  const int32_t kp = p->k_padded;
  const int direct = tinyml_uk_direct_1x1(p);
  uk_pos_t at = uk_pos_at(p, lo);
  for (int32_t q = lo; q < hi; q += UK_PW9_PIX) {
    const int32_t np = uk_min32(UK_PW9_PIX, hi - q);
    pw_rows(p, in, direct, q, np, &at, col);
    if (np < UK_PW9_PIX) dot4_fill(col + (size_t)np * kp, 0, (UK_PW9_PIX - np) * kp);
    for (int32_t o0 = 0; o0 < p->oc; o0 += 32)
      pw9_block(c, rq, xs, col, np, o0, zadd, out + (size_t)q * p->oc);
  }
}

/* tinyml_uk_conv_s8's pixels [lo, hi) for a blob uk_conv_s8_plan gives
 * UK_CONV_S8_PW9; 0 if it does not take it after all.  Its own function,
 * as pw_conv31 (pw_conv's code stays as it was). */
__attribute__((noinline)) UK_DOT4 int pw9_conv(const uk_ctx_t *c, const int8_t *in, int8_t *out,
                                               int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  if (!uk_pw9_fits(p) || !uk_pw9_shifts(p, c->shift)) return 0;
  pw_rq_t rq[UK_PW_OC / 16];
  pw_x_t xs[UK_PW_OC / 16];
  pw_make31_all(c, rq, xs);
  if (pw_zadd(c))
    pw9_run(c, rq, xs, in, out, lo, hi, 1);
  else
    pw9_run(c, rq, xs, in, out, lo, hi, 0);
  return 1;
}

/* pwk_conv: convs with more taps on pw_conv's blocks (uk_conv_s8_plan's
 * PWK).  resnet8's 3x3 convs on 16-64 channels went through dot4_conv:
 * per 8 pixels a call, the weights put in vpdpbusd order again (one
 * vpermw per 8 vpdpbusd on 16 channels), the rescale constants made again
 * and rq16 (~19 uops) per 16 outputs, and each pixel's column written
 * by masked stores that its broadcast loads then read (on Intel a load
 * cannot forward from a masked store).  Here the image's rows are flipped
 * once into a padded band (uk_pwk_band) and a block of pixels of one row
 * reads its taps there in place; the rescale and stores are pw_conv's.
 * Layers or blocks that do not fit take dot4_im2col's columns. */
typedef struct pwk_src {
  const uint8_t *at; /* pixel 0's first tap */
  int32_t step;      /* bytes from a pixel's taps to the next pixel's */
  int32_t prow;      /* bytes from one kernel row's taps to the next's */
  int32_t rows, run; /* kernel rows, and taps (bytes) in each */
} pwk_src_t;

UK_DOT4 UK_INLINE void pwk_block(const uk_ctx_t *c, const pw_rq_t *rq, const int32_t *wt,
                                 const pwk_src_t *s, int32_t np, int32_t o0, int nz, int npix,
                                 int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int na = npix * nz;
  const int32_t kp = p->k_padded;
  const uint8_t *src = s->at;
  const int8_t *w = c->weights + (size_t)o0 * kp;
  const size_t panel = (size_t)8 * kp;
  const __m512i ix = dot4_index();
  __m512i a[UK_PW_ACC], x[4];
  for (int j = 0; j < na; ++j) a[j] = _mm512_loadu_si512(c->bias + o0 + 16 * (j % nz));
  int32_t k = 0;
  for (int32_t ky = 0; ky < s->rows; ++ky, src += s->prow) {
    for (int32_t t = 0; t < s->run; t += 4, k += 4) {
      for (int z = 0; z < nz; ++z)
        x[z] = wt ? _mm512_loadu_si512(wt + ((size_t)(o0 / 16 + z) * kp + k) * 4)
                  : dot4_w(w + 2 * z * panel + k * 8, w + (2 * z + 1) * panel + k * 8, ix);
      for (int i = 0; i < npix; ++i) {
        int32_t v;
        __builtin_memcpy(&v, src + (size_t)i * s->step + t, 4);
        const __m512i u = _mm512_set1_epi32(v);
        for (int z = 0; z < nz; ++z) a[i * nz + z] = _mm512_dpbusd_epi32(a[i * nz + z], u, x[z]);
      }
    }
  }
  /* zadd 1: r->zp is 0 where out_zp was folded (pw_make), so adding it
   * always gives the same bytes, with one copy of the blocks' code. */
  pw_out(c, rq, 0, a, np, o0, nz, npix, 1, out);
}

/* Padded rows [y0, y1) of image img as u = x + 128 at band, prow bytes
 * each; padding in_zp + 128, as dot4_im2col's. */
UK_DOT4 UK_INLINE void pwk_fill(const tinyml_uk_params_t *p, const int8_t *img, int32_t y0,
                                int32_t y1, int32_t prow, uint8_t *band) {
  const uint8_t z = (uint8_t)(p->in_zp + 128);
  const int32_t left = p->pad_left * p->ic, row = p->iw * p->ic;
  for (int32_t y = y0; y < y1; ++y, band += prow) {
    const int32_t iy = y - p->pad_top;
    if (iy < 0 || iy >= p->ih) {
      dot4_fill(band, z, prow);
      continue;
    }
    dot4_fill(band, z, left);
    dot4_flip(img + (size_t)iy * row, band + left, row);
    if (left + row < prow) dot4_fill(band + left + row, z, prow - left - row);
  }
}

/* The columns of np pixels from at into col (dot4_im2col), each one row
 * of k_padded taps: a block over a row's end, or a layer without a band. */
UK_DOT4 UK_INLINE pwk_src_t pwk_cols(const tinyml_uk_params_t *p, const int8_t *in, uk_pos_t *at,
                                     int32_t np, uint8_t *col) {
  const int32_t npix = uk_pw_pixels(p), kp = p->k_padded, image = p->ih * p->iw * p->ic;
  for (int32_t i = 0; i < np; ++i, uk_pos_next(p, at))
    dot4_im2col(p, in + (size_t)at->n * image, at->oy, at->ox, col + (size_t)i * kp);
  /* The slots past np are summed, not stored. */
  if (np < npix) dot4_fill(col + (size_t)np * kp, 0, (npix - np) * kp);
  return (pwk_src_t){col, kp, 0, 1, kp};
}

/* One block of np pixels, from the band or the columns: one call site,
 * so that each channel count's block is compiled once. */
UK_DOT4 UK_INLINE void pwk_blocks(const uk_ctx_t *c, const pw_rq_t *rq, const int32_t *wt,
                                  const pwk_src_t *s, int32_t np, int8_t *o) {
  const tinyml_uk_params_t *p = c->p;
  if (p->oc == 16) {
    pwk_block(c, rq, 0, s, np, 0, 1, 16, o);
  } else if (p->oc == 32) {
    pwk_block(c, rq, 0, s, np, 0, 2, 8, o);
  } else {
    for (int32_t o0 = 0; o0 < p->oc; o0 += 64) pwk_block(c, rq, wt, s, np, o0, 4, 4, o);
  }
}

/* Pixels [lo, hi) image by image: the rows they read flipped into the
 * band once, then blocks of one row in place, others by columns (on the
 * stack, or in the conv's scratch where they do not fit: uk_pwk_cols). */
UK_DOT4 UK_INLINE void pwk_run(const uk_ctx_t *c, const pw_rq_t *rq, const int32_t *wt,
                               const int8_t *in, int8_t *out, uint8_t *scratch, int32_t lo,
                               int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  uint8_t stack[UK_PW_BUF] __attribute__((aligned(64)));
  uint8_t *col = uk_pwk_cols(p) == 1 ? stack : scratch;
  uint8_t band[UK_PWK_BAND] __attribute__((aligned(64)));
  const int use_band = uk_pwk_band(p);
  /* within the band's 20 KB when it is used */
  const int32_t npix = uk_pw_pixels(p), per = p->oh * p->ow,
                prow = use_band ? (int32_t)uk_pwk_prow(p) : 0;
  uk_pos_t at = uk_pos_at(p, lo);
  int32_t y0 = 0, bn = -1; /* the band's first padded row and image */
  for (int32_t q = lo; q < hi;) {
    if (use_band && at.n != bn) {
      /* the rows that this image's pixels in [q, hi) read */
      const int32_t end = uk_min32(hi, (at.n + 1) * per) - 1 - at.n * per;
      y0 = at.oy * p->stride_h;
      bn = at.n;
      pwk_fill(p, in + (size_t)at.n * p->ih * p->iw * p->ic, y0,
               end / p->ow * p->stride_h + p->kh, prow, band);
    }
    const int32_t np = uk_min32(npix, hi - q);
    int8_t *o = out + (size_t)q * p->oc;
    pwk_src_t s;
    if (use_band && np == npix && at.ox + npix <= p->ow) {
      UK_PATH(pwk_band);
      s = (pwk_src_t){band + (size_t)(at.oy * p->stride_h - y0) * prow +
                          (size_t)at.ox * p->stride_w * p->ic,
                      p->stride_w * p->ic, prow, p->kh, p->kw * p->ic};
      for (int32_t i = 0; i < npix; ++i) uk_pos_next(p, &at);
    } else {
      UK_PATH(pwk_cols);
      s = pwk_cols(p, in, &at, np, col);
    }
    pwk_blocks(c, rq, wt, &s, np, o);
    q += np;
  }
}

/* tinyml_uk_conv_s8's pixels [lo, hi) for a blob uk_conv_s8_plan gives
 * UK_CONV_S8_PWK, scratch its workgroup's scratch; 0 if it does not take
 * it after all.  Its own function, as pw_conv31 (pw_conv's code stays as
 * it was). */
__attribute__((noinline)) UK_DOT4 int pwk_conv(const uk_ctx_t *c, const int8_t *in, int8_t *out,
                                               uint8_t *scratch, int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  if (!uk_pwk_fits(p) || !uk_pw_shifts(p, c->shift)) return 0;
  pw_rq_t rq[UK_PW_OC / 16];
  for (int32_t o0 = 0; o0 < p->oc; o0 += 16) pw_make(c, o0, &rq[o0 / 16]);
  int32_t wbuf[UK_PWK_WT / 4] __attribute__((aligned(64)));
  const int32_t *wt = 0;
  if (p->oc >= 64) {
    pw_weights(c, wbuf);
    wt = wbuf;
  }
  pwk_run(c, rq, wt, in, out, scratch, lo, hi);
  return 1;
}
