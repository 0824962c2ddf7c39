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

/* ---- the row kernels (uk_dw_row_t): weights in registers ---------------- */

/* acc + x * w in each 32-bit lane, x an int8 sign-extended, w an int8 in
 * the low 16 bits with a zero high half (uk_dw_w16): vpmaddwd's high product
 * is then 0 and its low one exact.  One p0 uop with VNNI (vpdpwssd), two
 * without, where vpmulld is two p0 uops and then an add. */
UK_INLINE __m512i dw_mac(__m512i acc, __m512i x, __m512i w) {
#if UK_VNNI
  return _mm512_dpwssd_epi32(acc, x, w);
#else
  return _mm512_add_epi32(acc, _mm512_madd_epi16(x, w));
#endif
}

/* A row's fields the kernels read between their byte stores, which may
 * alias anything: copied once into locals, they stay in registers. */
typedef struct dw_rowv {
  const int8_t *src; /* the row's input, borrowed from uk_dw_row_t */
  int8_t *dst;       /* its output, borrowed the same way */
  int32_t io[UK_DW_REG_TAPS], xstep, ic, n, rows, ystep;
} dw_rowv_t;

UK_INLINE dw_rowv_t dw_rowv(const uk_ctx_t *c, const uk_dw_row_t *r) {
  dw_rowv_t v;
  for (int32_t t = 0; t < UK_DW_REG_TAPS; ++t) v.io[t] = t < r->taps ? r->io[t] : 0;
  v.src = r->src;
  v.dst = r->dst;
  v.xstep = r->xstep;
  v.ic = c->p->ic;
  v.n = r->n;
  v.rows = r->rows;
  v.ystep = r->ystep;
  return v;
}

/* The row kernels' rescale of 16 lanes: rq16_apply's high words (the
 * same numbers as requant8's) in 11 uops against the 15 of a 64-bit
 * shift by s with the low words gathered.  v * mult + hz * 2^32 + 2^30,
 * less 2^31 where v < 0, is rq16's (hz + (v >> 31)) * 2^32 + ((v & 2^31) |
 * 2^30) modulo 2^64 (conv_s8_pw.c's pw_apply does the same); its high
 * words, even and odd lanes, gathered by one vpermt2d, are shifted right
 * by s - 32.  The folded bias starts the accumulators (dw_init) rather
 * than being added here.  Outputs narrow with signed saturation, which
 * with act_min = -128 and act_max = 127 (every layer of vww and kws: the
 * relu is the zero point) is the whole clamp; otherwise the bytes are
 * clamped too: saturating, then clamping to [act_min, act_max] inside
 * int8, is the same as clamping first.  uk_dw_plan asks mult >= 0 of the
 * row kernels (rq16_make the shifts in [33, 54]). */
typedef struct dwq {
  __m512i bias, me, mo, ke, ko, sh;
  __m128i lo, hi; /* act_min, act_max as bytes */
  int clamp;      /* whether [act_min, act_max] is narrower than int8 */
} dwq_t;

/* From rq16's constants (shift s = sh + 32, hz * 2^32 = 2^(s-1) +
 * out_zp * 2^s) and the folded bias: even lanes' terms in the even
 * lanes' 64-bit lanes, odd lanes' in the odd lanes'. */
UK_INLINE dwq_t dwq_make(const tinyml_uk_params_t *p, const rq16_t *q, __m512i fb) {
  const __m512i hi32 = _mm512_set1_epi64((int64_t)0xffffffff00000000ull);
  const __m512i r30 = _mm512_set1_epi64((int64_t)1 << 30);
  dwq_t d;
  d.bias = fb;
  d.me = q->mult;
  d.mo = q->mult_hi;
  d.ke = _mm512_add_epi64(_mm512_slli_epi64(q->hz, 32), r30);
  d.ko = _mm512_add_epi64(_mm512_and_si512(q->hz, hi32), r30);
  d.sh = q->sh;
  d.lo = _mm_set1_epi8((char)p->act_min);
  d.hi = _mm_set1_epi8((char)p->act_max);
  d.clamp = p->act_min > -128 || p->act_max < 127;
  return d;
}

/* The outputs of 16 lanes' sums v (bias included) as int32, not clamped. */
UK_INLINE __m512i dwq_r(const dwq_t *q, __m512i v) {
  return rq16_hi(v, q->me, q->mo, q->ke, q->ko, q->sh);
}

/* The outputs of 16 lanes' sums v (bias included) as bytes, clamped. */
UK_INLINE __m128i dwq_apply(const dwq_t *q, __m512i v) {
  const __m128i b = _mm512_cvtsepi32_epi8(dwq_r(q, v));
  return q->clamp ? _mm_min_epi8(_mm_max_epi8(b, q->lo), q->hi) : b;
}

/* Four 16-lane sums' outputs as 64 bytes, sum j's in 128-bit lane j:
 * narrowed together, two vpackssdw, a vpacksswb and a vpermd (their
 * 4-dword pieces interleave per 128-bit lane), against four vpmovsdb of
 * two uops each. */
UK_INLINE __m512i dwq_apply4(const dwq_t *q, const __m512i *s) {
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i w01 = _mm512_packs_epi32(dwq_r(q, s[0]), dwq_r(q, s[1]));
  const __m512i w23 = _mm512_packs_epi32(dwq_r(q, s[2]), dwq_r(q, s[3]));
  const __m512i b = _mm512_permutexvar_epi32(order, _mm512_packs_epi16(w01, w23));
  if (!q->clamp) return b;
  return _mm512_min_epi8(_mm512_max_epi8(b, _mm512_broadcast_i32x4(q->lo)),
                         _mm512_broadcast_i32x4(q->hi));
}

/* dwq_apply4 into 64 adjacent bytes at d (4 pairs of 8 channels). */
UK_INLINE void dwq_store4(const dwq_t *q, const __m512i *s, int8_t *d) {
  _mm512_storeu_si512(d, dwq_apply4(q, s));
}

/* The first n (<= 16) bytes of b at d. */
UK_INLINE void dwq_store(__m128i b, int8_t *d, int32_t n) {
  if (n >= 16)
    _mm_storeu_si128((__m128i *)(void *)d, b);
  else
    _mm_mask_storeu_epi8(d, rq16_live(n), b);
}

/* The chains' accumulators, k pixels of n each: the first of each pixel
 * starts at the folded bias (dwq_apply adds none). */
UK_INLINE void dw_init(__m512i *a, int32_t k, int32_t n, const dwq_t *q) {
  for (int32_t j = 0; j < k * n; ++j) a[j] = j % n ? _mm512_setzero_si512() : q->bias;
}

/* The block's rescale constants with the folded bias (uk_dw_row_t). */
UK_INLINE dwq_t dw_rowq(const uk_ctx_t *c, const uk_dw_row_t *r, int32_t b) {
  return dwq_make(c->p, r->q + b, r->fb[b]);
}

/* Tap io's inputs from s, hidden from the compiler's loop strength
 * reduction: otherwise it keeps every (tap, pixel) address as its own
 * induction variable, 36 of them, most spilled to the stack. */
UK_INLINE const int8_t *dw_tap(const int8_t *s, int32_t io) {
  const int8_t *b = s + io;
  __asm__ volatile("" : "+r"(b));
  return b;
}

/* Sums in flight per pixel when k pixels go together: 8 or 9 chains in
 * all (4 for one pixel), as dw_mac has 5 cycles of latency (vpdpwssd;
 * vpmaddwd and an add, 6) and one issues a cycle. */
UK_INLINE int32_t dw_chains(int32_t k) { return k >= 3 ? 2 : 4; }

/* The chains' sums, pixel j's in a[j * n]. */
UK_INLINE __m512i dw_sum(const __m512i *a, int32_t n) {
  __m512i r = a[0];
  for (int32_t i = 1; i < n; ++i) r = _mm512_add_epi32(r, a[i]);
  return r;
}

/* K pixels' chains (n a pixel, pixel j's from a[j * n]) rescaled, pixel
 * j's nc bytes at d + j * step; 4 whole 16-byte outputs narrowed together
 * (dwq_apply4) and stored a 128-bit lane each (vextracti32x4 to memory is
 * a store alone, no shuffle uop). */
UK_INLINE void dw_out(const dwq_t *q, const __m512i *a, int32_t n, int32_t k, int8_t *d,
                      int32_t step, int32_t nc) {
  if (k == 4 && nc >= 16) {
    __m512i s[4];
    for (int32_t j = 0; j < 4; ++j) s[j] = dw_sum(a + j * n, n);
    const __m512i b = dwq_apply4(q, s);
    _mm_storeu_si128((__m128i *)(void *)d, _mm512_castsi512_si128(b));
    _mm_storeu_si128((__m128i *)(void *)(d + step), _mm512_extracti32x4_epi32(b, 1));
    _mm_storeu_si128((__m128i *)(void *)(d + 2 * step), _mm512_extracti32x4_epi32(b, 2));
    _mm_storeu_si128((__m128i *)(void *)(d + 3 * step), _mm512_extracti32x4_epi32(b, 3));
    return;
  }
  for (int32_t j = 0; j < k; ++j) dwq_store(dwq_apply(q, dw_sum(a + j * n, n)), d + j * step, nc);
}

/* dw_out for 8-channel pairs (step 16): four whole pairs' 64 bytes are
 * adjacent, one store (dwq_store4). */
UK_INLINE void dw8_out(const dwq_t *q, const __m512i *a, int32_t n, int32_t k, int8_t *d,
                       int32_t nc) {
  if (k == 4 && nc == 16) {
    __m512i s[4];
    for (int32_t j = 0; j < 4; ++j) s[j] = dw_sum(a + j * n, n);
    dwq_store4(q, s, d);
    return;
  }
  for (int32_t j = 0; j < k; ++j) dwq_store(dwq_apply(q, dw_sum(a + j * n, n)), d + 16 * j, nc);
}

/* K pixels of one 16-channel block (lanes m), from s, into d: every tap's
 * product for all K before the next tap, in dw_chains(k) chains each.
 * Past taps have zero weights and offset 0. */
UK_INLINE void dw_pixels(const dw_rowv_t *v, const int8_t *s, __mmask16 m, const __m512i *w,
                         const dwq_t *q, int8_t *d, int32_t nc, int32_t k) {
  const int32_t n = dw_chains(k);
  __m512i a[9];
  dw_init(a, k, n, q);
#pragma GCC unroll 9
  for (int32_t t = 0; t < UK_DW_REG_TAPS; ++t) {
    const int8_t *b = dw_tap(s, v->io[t]);
    for (int32_t j = 0; j < k; ++j) {
      const __m128i x = _mm_maskz_loadu_epi8(m, b + j * v->xstep);
      a[j * n + t % n] = dw_mac(a[j * n + t % n], _mm512_cvtepi8_epi32(x), w[t]);
    }
  }
  dw_out(q, a, n, k, d, v->ic, nc);
}

/* dw_pixels for a 3x3 window whose taps across are xstep apart (stride 1,
 * no dilation): pixel j's tap (ky, kx) is column j + kx of window row ky,
 * so each of a row's k + 2 columns is loaded and widened once, not up to
 * three times. */
UK_INLINE void dw_pixels33(const dw_rowv_t *v, const int8_t *s, __mmask16 m, const __m512i *w,
                           const dwq_t *q, int8_t *d, int32_t nc, int32_t k) {
  const int32_t n = dw_chains(k);
  __m512i a[9];
  dw_init(a, k, n, q);
  for (int32_t ky = 0; ky < 3; ++ky) {
    const int8_t *b = dw_tap(s, v->io[3 * ky]);
    __m512i x[6];
    for (int32_t i = 0; i < k + 2; ++i)
      x[i] = _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, b + i * v->xstep));
    for (int32_t kx = 0; kx < 3; ++kx)
      for (int32_t j = 0; j < k; ++j) {
        const int32_t t = 3 * ky + kx;
        a[j * n + t % n] = dw_mac(a[j * n + t % n], x[j + kx], w[t]);
      }
  }
  dw_out(q, a, n, k, d, v->ic, nc);
}

/* One 16-channel block of a row: 4 pixels at a time, then the 1-3 left
 * together (kws_ref_model's rows are 5 pixels); `s33`, dw_pixels33. */
UK_INLINE void dw_block(const dw_rowv_t *v, const int8_t *s, int8_t *d, int32_t n, __mmask16 m,
                        const __m512i *w, const dwq_t *q, int32_t nc, int s33) {
  int32_t x = 0;
  for (; x + 4 <= n; x += 4, s += 4 * v->xstep, d += 4 * v->ic) {
    if (s33)
      dw_pixels33(v, s, m, w, q, d, nc, 4);
    else
      dw_pixels(v, s, m, w, q, d, nc, 4);
  }
  for (int32_t k = 3; k >= 1; --k)
    if (n - x == k) {
      if (s33)
        dw_pixels33(v, s, m, w, q, d, nc, k);
      else
        dw_pixels(v, s, m, w, q, d, nc, k);
    }
}

/* dw_block for either s33, its loads under m; called with a constant
 * 0xffff for whole blocks, where they become plain loads: border rows read
 * the band just stored (uk_dw_band_avx512), and on Intel a masked load
 * waits for the stores it overlaps to reach the cache. */
UK_INLINE void dw_block_full(const dw_rowv_t *v, const int8_t *s, int8_t *d, int32_t n,
                             __mmask16 m, const __m512i *w, const dwq_t *q, int32_t nc, int s33) {
  if (s33)
    dw_block(v, s, d, n, m, w, q, nc, 1);
  else
    dw_block(v, s, d, n, m, w, q, nc, 0);
}

/* The row kernel on `rows` rows (uk_dw_rows_avx512) or, with `multi` 0,
 * one: the rows' loop inside the blocks' costs the one-row calls of the
 * larger maps 5-10% (registers), so they keep a loop-free copy. */
UK_INLINE void dw_row16(const uk_ctx_t *c, const uk_dw_row_t *r, int multi) {
  const dw_rowv_t v = dw_rowv(c, r);
  const int s33 = r->taps == 9 && c->p->kw == 3 && v.io[1] == v.xstep && v.io[2] == 2 * v.xstep;
  for (int32_t c0 = 0; c0 < v.ic; c0 += 16) {
    const __mmask16 m = rq16_live(v.ic - c0);
    __m512i w[UK_DW_REG_TAPS];
    for (int32_t t = 0; t < UK_DW_REG_TAPS; ++t) w[t] = r->w[c0 / 16 * UK_DW_REG_TAPS + t];
    const dwq_t q = dw_rowq(c, r, c0 / 16);
    for (int32_t y = 0; y < (multi ? v.rows : 1); ++y) {
      const int8_t *src = v.src + c0 + (size_t)y * v.ystep;
      int8_t *dst = v.dst + c0 + (size_t)y * v.n * v.ic;
      if (v.ic - c0 >= 16) /* a constant mask: plain loads (dw_block_full) */
        dw_block_full(&v, src, dst, v.n, 0xffff, w, &q, v.ic - c0, s33);
      else
        dw_block_full(&v, src, dst, v.n, m, w, &q, v.ic - c0, s33);
    }
  }
}

__attribute__((noinline)) void uk_dw_row_avx512(const uk_ctx_t *c, const uk_dw_row_t *r) {
  dw_row16(c, r, 0);
}

__attribute__((noinline)) void uk_dw_rows_avx512(const uk_ctx_t *c, const uk_dw_row_t *r) {
  dw_row16(c, r, 1);
}

/* Tap t's inputs of two 8-channel pixels, the second xstep bytes on: one
 * load when they are adjacent (stride 1); `one`, the first alone. */
UK_INLINE __m512i dw8_in(const dw_rowv_t *v, const int8_t *s, int32_t t, int adjacent, int one) {
  const int8_t *x = dw_tap(s, v->io[t]);
  __m128i lo = _mm_loadl_epi64((const __m128i *)(const void *)x);
  if (one) return _mm512_cvtepi8_epi32(lo);
  if (adjacent) return _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)x));
  __m128i hi = _mm_loadl_epi64((const __m128i *)(const void *)(x + v->xstep));
  return _mm512_cvtepi8_epi32(_mm_unpacklo_epi64(lo, hi));
}

/* K pairs of 8-channel pixels (or, with `one`, a last pixel alone) from s,
 * their bytes into d on: pixel pairs are 16 contiguous output bytes.  As
 * dw_pixels, in dw_chains(k) chains a pair. */
UK_INLINE void dw8_pairs(const dw_rowv_t *v, const int8_t *s, const __m512i *w, const dwq_t *q,
                         int8_t *d, int32_t k, int adjacent, int one) {
  const int32_t n = dw_chains(k);
  __m512i a[9];
  dw_init(a, k, n, q);
#pragma GCC unroll 9
  for (int32_t t = 0; t < UK_DW_REG_TAPS; ++t)
    for (int32_t j = 0; j < k; ++j) {
      const __m512i x = dw8_in(v, s + 2 * j * v->xstep, t, adjacent, one);
      a[j * n + t % n] = dw_mac(a[j * n + t % n], x, w[t]);
    }
  dw8_out(q, a, n, k, d, one ? 8 : 16);
}

/* dw8_pairs for a 3x3 window at stride 1 (no dilation): pair j's tap
 * (ky, kx) is the 16 bytes at column 2j + kx of window row ky, so a row's
 * 2k + 1 columns are each loaded and widened once, not 3k loads. */
UK_INLINE void dw8_pairs33(const dw_rowv_t *v, const int8_t *s, const __m512i *w,
                           const dwq_t *q, int8_t *d, int32_t k) {
  const int32_t n = dw_chains(k);
  __m512i a[9];
  dw_init(a, k, n, q);
  for (int32_t ky = 0; ky < 3; ++ky) {
    const int8_t *b = dw_tap(s, v->io[3 * ky]);
    __m512i x[9];
    for (int32_t i = 0; i < 2 * k + 1; ++i)
      x[i] = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(b + 8 * i)));
    for (int32_t kx = 0; kx < 3; ++kx)
      for (int32_t j = 0; j < k; ++j) {
        const int32_t t = 3 * ky + kx;
        a[j * n + t % n] = dw_mac(a[j * n + t % n], x[2 * j + kx], w[t]);
      }
  }
  dw8_out(q, a, n, k, d, 16);
}

/* A row's 8-channel pixels, 4 pairs at a time (a 3x3 window at stride 1:
 * dw8_pairs33), then the 1-3 pairs left together, then a last pixel. */
UK_INLINE void dw8_row(const uk_ctx_t *c, const dw_rowv_t *v, const uk_dw_row_t *r,
                       const __m512i *w, const dwq_t *q, int adjacent) {
  const int s33 = adjacent && r->taps == 9 && c->p->kw == 3 && v->io[1] == 8 && v->io[2] == 16;
  const int8_t *s = r->src;
  int8_t *d = r->dst;
  int32_t x = 0;
  for (; x + 8 <= r->n; x += 8, s += 8 * v->xstep, d += 64) {
    if (s33)
      dw8_pairs33(v, s, w, q, d, 4);
    else
      dw8_pairs(v, s, w, q, d, 4, adjacent, 0);
  }
  const int32_t pairs = (r->n - x) / 2;
  if (pairs == 3) dw8_pairs(v, s, w, q, d, 3, adjacent, 0);
  if (pairs == 2) dw8_pairs(v, s, w, q, d, 2, adjacent, 0);
  if (pairs == 1) dw8_pairs(v, s, w, q, d, 1, adjacent, 0);
  if ((r->n - x) % 2)
    dw8_pairs(v, s + 2 * pairs * v->xstep, w, q, d + 16 * pairs, 1, adjacent, 1);
}

__attribute__((noinline)) void uk_dw8_row_avx512(const uk_ctx_t *c, const uk_dw_row_t *r) {
  const dw_rowv_t v = dw_rowv(c, r);
  __m512i w[UK_DW_REG_TAPS];
  for (int32_t t = 0; t < UK_DW_REG_TAPS; ++t) w[t] = r->w[t];
  const dwq_t q = dw_rowq(c, r, 0);
  if (v.xstep == 8)
    dw8_row(c, &v, r, w, &q, 1);
  else
    dw8_row(c, &v, r, w, &q, 0);
}

/* ---- pixels whose windows cross the border: through a padded band ------ */

/* n bytes from s (or, when s is null, n copies of v) to d.  Whole 64-byte
 * pieces by plain stores: the row kernel reads the band right after, and
 * on Intel a load cannot take its bytes from a masked store in flight. */
UK_INLINE void dw_put(int8_t *d, const int8_t *s, int8_t v, int32_t n) {
  const __m512i fill = _mm512_set1_epi8(v);
  int32_t i = 0;
  for (; i + 64 <= n; i += 64)
    _mm512_storeu_si512(d + i, s ? _mm512_loadu_si512(s + i) : fill);
  if (i < n) {
    const __mmask64 m = ((__mmask64)1 << (n - i)) - 1;
    _mm512_mask_storeu_epi8(d + i, m, s ? _mm512_maskz_loadu_epi8(m, s + i) : fill);
  }
}

/* Band row ky of the windows of output row oy, input columns [ix, ix + w):
 * the image's bytes, and in_zp where the window leaves the image (a tap
 * there adds (in_zp - in_zp) * w = 0, as the skipped tap did). */
UK_INLINE void dw_band_row(const tinyml_uk_params_t *p, const int8_t *img, int32_t iy, int32_t ix,
                           int32_t w, int8_t *d) {
  const int8_t zp = (int8_t)p->in_zp;
  const int32_t ic = p->ic;
  if (iy < 0 || iy >= p->ih) {
    dw_put(d, 0, zp, w * ic);
    return;
  }
  const int32_t a = ix < 0 ? -ix : 0;
  const int32_t b = ix + w > p->iw ? p->iw - ix : w; /* columns [a, b) in the image */
  dw_put(d, 0, zp, (a < w ? a : w) * ic);
  if (b > a) dw_put(d + a * ic, img + ((size_t)iy * p->iw + ix + a) * ic, 0, (b - a) * ic);
  if (b < w) dw_put(d + (b > a ? b : a) * ic, 0, zp, (w - (b > a ? b : a)) * ic);
}

/* Input columns the windows of n adjacent output pixels span. */
UK_INLINE int32_t dw_band_cols(const tinyml_uk_params_t *p, int32_t n) {
  return (n - 1) * p->stride_w + (p->kw - 1) * p->dil_w + 1;
}

__attribute__((noinline)) void uk_dw_band_avx512(const uk_ctx_t *c, const uk_dw_row_t *r,
                                                 const int8_t *img, int32_t oy, int32_t x0) {
  const tinyml_uk_params_t *p = c->p;
  int8_t band[UK_DW_BAND_BYTES] __attribute__((aligned(64)));
  int32_t chunk = r->n;
  while (chunk > 1 && p->kh * dw_band_cols(p, chunk) * p->ic > UK_DW_BAND_BYTES) chunk /= 2;
  const int32_t w = dw_band_cols(p, chunk);
  int32_t io[UK_DW_REG_TAPS], t = 0;
  for (int32_t ky = 0; ky < p->kh; ++ky) /* no division: it took a quarter of this */
    for (int32_t kx = 0; kx < p->kw; ++kx) io[t++] = (ky * w + kx * p->dil_w) * p->ic;
  for (int32_t x = 0; x < r->n; x += chunk) {
    const int32_t n = r->n - x < chunk ? r->n - x : chunk;
    for (int32_t ky = 0; ky < p->kh; ++ky)
      dw_band_row(p, img, oy * p->stride_h - p->pad_top + ky * p->dil_h,
                  (x0 + x) * p->stride_w - p->pad_left, w, band + (size_t)ky * w * p->ic);
    uk_dw_row_t b = *r;
    b.src = band;
    b.dst = r->dst + (size_t)x * p->ic;
    b.n = n;
    b.io = io;
    uk_dw_row(c, &b);
  }
}

/* ---- small maps: one padded copy, every pixel interior ----------------- */

/* r's rows on the map: 8 channels one row a call (their kernel takes one). */
UK_INLINE void dw_map_call(const uk_ctx_t *c, uk_dw_row_t *r) {
  if (c->p->ic != 8) {
    uk_dw_rows_avx512(c, r);
    return;
  }
  const int32_t rows = r->rows;
  r->rows = 1;
  for (int32_t y = 0; y < rows; ++y, r->src += r->ystep, r->dst += (size_t)r->n * 8)
    uk_dw8_row_avx512(c, r);
  r->rows = rows;
}

/* Pixels [q, qe) of image img, in output rows [oy0, oy1], from its padded
 * map: those rows' window rows copied, then the rows. */
UK_INLINE void dw_map_image(const uk_ctx_t *c, const uk_dw_row_t *r, const int8_t *img,
                            int8_t *out, int32_t q, int32_t qe, int8_t *map) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t cols = dw_band_cols(p, p->ow), row = cols * p->ic;
  const int32_t oy0 = q / p->ow % p->oh, oy1 = (qe - 1) / p->ow % p->oh;
  const int32_t iy0 = oy0 * p->stride_h - p->pad_top;
  const int32_t rows = (oy1 - oy0) * p->stride_h + (p->kh - 1) * p->dil_h + 1;
  for (int32_t i = 0; i < rows; ++i)
    dw_band_row(p, img, iy0 + i, -p->pad_left, cols, map + (size_t)i * row);
  uk_dw_row_t b = *r;
  b.ystep = p->stride_h * row;
  for (int32_t y = oy0, x = q % p->ow; q < qe; x = 0) {
    b.rows = 1; /* a partial row alone, whole rows in one call */
    b.n = qe - q < p->ow - x ? qe - q : p->ow - x;
    if (x == 0 && qe - q >= p->ow) b.rows = (qe - q) / p->ow;
    b.src = map + ((size_t)(y - oy0) * b.ystep + (size_t)x * p->stride_w * p->ic);
    b.dst = out + (size_t)q * p->oc;
    dw_map_call(c, &b);
    q += b.rows * b.n;
    y += b.rows;
  }
}

__attribute__((noinline)) void uk_dw_map_avx512(const uk_ctx_t *c, const uk_dw_row_t *r,
                                                const int8_t *in, int8_t *out, int32_t lo,
                                                int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  int8_t map[UK_DW_MAP_BYTES] __attribute__((aligned(64)));
  const int32_t row = dw_band_cols(p, p->ow) * p->ic, plane = p->oh * p->ow;
  const int32_t chunk = uk_dw_map_rows(p); /* output rows a copy serves */
  int32_t io[UK_DW_REG_TAPS], t = 0;
  for (int32_t ky = 0; ky < p->kh; ++ky)
    for (int32_t kx = 0; kx < p->kw; ++kx)
      io[t++] = ky * p->dil_h * row + kx * p->dil_w * p->ic;
  uk_dw_row_t b = *r;
  b.io = io;
  b.xstep = p->stride_w * p->ic;
  for (int32_t q = lo; q < hi;) {
    const int32_t n = q / plane, oy = q % plane / p->ow;
    const int32_t end = n * plane + (oy + chunk < p->oh ? oy + chunk : p->oh) * p->ow;
    const int32_t qe = hi < end ? hi : end;
    dw_map_image(c, &b, in + (size_t)n * p->ih * p->iw * p->ic, out, q, qe, map);
    q = qe;
  }
}
