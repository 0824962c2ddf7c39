/* The int8 conv with few taps (K <= 64: first convs on 1-4 input
 * channels) for dot4 blobs, lanes as output pixels: vww's and kws's first
 * convs spent ~76 cycles per pixel in dot4_conv, mostly in its per-pixel
 * im2col walk (three 9-byte masked copies, bounds arithmetic and a call
 * per pixel) and in 8-channel tiles that fill half of each vector.
 *
 * Here a band of input rows is copied once, flipped to u = x + 128 and
 * padded with in_zp + 128 on every side (as dot4_im2col's padded taps),
 * so that every window lies inside it.  The kh runs of kw * ic bytes
 * are cut into 4-byte groups in tap order (the last one padded with taps
 * whose weight is 0; a group over a run's end takes its last bytes from
 * the next kernel row by a byte blend: vww's 27 taps in 7 groups, not 9
 * of one row each).  For a chunk of up to 16 pixels whose runs start
 * within one 128-byte window, one vpermt2w gathers a group's 4 bytes of
 * every pixel into one vector; one vpdpbusd per output channel, with the
 * channel's 4 weights broadcast, then sums that group for 16 pixels.  The
 * rescale runs per channel on 16 pixels (pw_apply with broadcast
 * constants); packs, a byte clamp and in-lane shuffles turn 4 channels
 * at a time back into NHWC, stored 64 bytes at a time where the chunk's
 * channels are all of oc.  Same sums as dot4_conv (same bias4), so the
 * same bytes.
 *
 * vpermt2w moves words: a run that starts at an odd byte (stride_w * ic
 * odd, as resnet8's 3 channels at stride 1) is read from a second copy
 * of the band one byte on, and a mask picks it per lane.  1x1 convs, more
 * than 4 input channels, dilations, and shifts rq16 does not take go to
 * dot4_conv's columns (lanes_conv returns 0).  The stack holds the two
 * bands (16.5 KB), the repacked weights (up to 8 KB) and the rescale
 * constants (5 KB). */
#include "conv_s8.h"
#include "conv_s8_lanes_out.h"
#include "conv_s8_plan.h"

enum {
  LN_BUF = UK_LN_BUF,         /* the band of padded rows on the stack */
  LN_SLACK = 128,             /* a window read at the band's last byte */
  LN_ODD = LN_BUF + LN_SLACK, /* the band again, one byte on (odd steps) */
  LN_G = UK_LN_G,             /* 4-byte groups at most: 64 taps */
  LN_WT = UK_LN_WT,           /* groups x channels of repacked weights */
  LN_OC = UK_LN_OC,           /* channels whose rescale constants are kept */
};

/* A chunk: its pixels, the padded rows it reads, where its window starts
 * in a row (even), and per lane the window's words and whether the run
 * starts at an odd byte (then read from the band shifted by one). */
typedef struct ln_chunk {
  int32_t cnt, rows, x0;
  __m512i idx;
  __mmask16 odd;
} ln_chunk_t;

/* Padded rows [r0, r0 + n) of image img into buf (ln_geo's layout). */
UK_DOT4 static void ln_band(const tinyml_uk_params_t *p, const ln_geo_t *g, const int8_t *img,
                            int32_t r0, int32_t n, uint8_t *buf) {
  const uint8_t zp = (uint8_t)(p->in_zp + 128);
  const int32_t left = p->pad_left * p->ic;
  const int32_t width = uk_min32(p->iw * p->ic, g->prow - left);
  for (int32_t r = 0; r < n; ++r) {
    uint8_t *d = buf + (size_t)r * g->prow;
    const int32_t iy = r0 + r - p->pad_top;
    if (iy < 0 || iy >= p->ih) {
      dot4_fill(d, zp, g->prow);
      continue;
    }
    dot4_fill(d, zp, left);
    dot4_flip(img + (size_t)iy * p->iw * p->ic, d + left, width);
    dot4_fill(d + left + width, zp, g->prow - left - width);
  }
}

/* n bytes from src to dst, 64 at a time (the last piece may read up to
 * 63 bytes past src + n: inside the band's slack). */
UK_INLINE void ln_shift(const uint8_t *src, uint8_t *dst, size_t n) {
  for (size_t i = 0; i < n; i += 64) _mm512_storeu_si512(dst + i, _mm512_loadu_si512(src + i));
}

/* The 4-tap groups of the kh * run taps in the kernel's order (vww's
 * and resnet8's 27 in 7 groups, not 9 of 3 per kernel row): n groups;
 * group gi reads the band a[gi] bytes on from a pixel's first tap, and,
 * where it runs over the end of a kernel row, the bytes m[gi] selects
 * b[gi] bytes on (the next row's first taps; with 2 or more taps a row
 * a group spans at most 2 rows). */
typedef struct ln_grp {
  int32_t n, taps, row;
  int32_t a[LN_G], b[LN_G];
  __mmask64 m[LN_G];
} ln_grp_t;

UK_INLINE void ln_groups(const tinyml_uk_params_t *p, const ln_geo_t *g, ln_grp_t *q) {
  q->taps = p->kh * g->run;
  /* One tap a kernel row (kh x 1 on one channel): a group would span 4
   * rows, so one group a row, its taps 1-3 of weight 0 (row = 1). */
  q->row = g->run == 1;
  q->n = q->row ? p->kh : (q->taps + 3) / 4;
  for (int32_t gi = 0; gi < q->n && q->row; ++gi) q->a[gi] = gi * g->prow, q->m[gi] = 0;
  for (int32_t gi = 0; gi < q->n && !q->row; ++gi) {
    const int32_t ky = 4 * gi / g->run, x = 4 * gi % g->run, j = g->run - x;
    q->a[gi] = ky * g->prow + x;
    q->b[gi] = (ky + 1) * g->prow - j;
    /* bytes j..3 of every dword from the next row */
    q->m[gi] = j < 4 && ky + 1 < p->kh ? 0x1111111111111111ULL * (0xFu & (0xFu << j)) : 0;
  }
}

/* Tap b of group gi in the kernel's tap order, or -1 for a padded tap. */
UK_INLINE int32_t ln_tap(const ln_grp_t *q, int32_t gi, int32_t b) {
  if (q->row) return b == 0 ? gi : -1;
  const int32_t t = 4 * gi + b;
  return t < q->taps ? t : -1;
}

/* Tap t's weight of channels o0..o0 + 15 (0 for a padded tap or past
 * oc_padded): in the vpmaddwd packing each channel of a panel holds taps
 * 2j, 2j + 1 as a word, so one 16-byte row of each of two panels. */
UK_INLINE __m128i ln_tapw(const uk_ctx_t *c, int32_t o0, int32_t t) {
  if (t < 0) return _mm_setzero_si128();
  const int32_t kp = c->p->k_padded;
  const int8_t *w0 = c->weights + (size_t)o0 * kp + (t / 2) * 16;
  const __m128i e =
      _mm_add_epi8(_mm_set_epi8(-1, -1, -1, -1, -1, -1, -1, -1, 14, 12, 10, 8, 6, 4, 2, 0),
                   _mm_set1_epi8((char)(t % 2)));
  const __m128i x0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)w0), e);
  const __m128i x1 =
      o0 + 8 < c->p->oc_padded
          ? _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(w0 + (size_t)8 * kp)),
                             e)
          : _mm_setzero_si128();
  return _mm_unpacklo_epi64(x0, x1);
}

/* wt[gi * ocs + o]: channel o's 4 weights of group gi, from the
 * vpmaddwd packing ([oc/8][k/2][8][2]).  When a kernel row is whole groups
 * the groups are taps 4gi..4gi+3, which dot4_w makes 16 channels a time. */
UK_DOT4 static void ln_weights(const uk_ctx_t *c, const ln_geo_t *g, const ln_grp_t *q,
                               int32_t *wt) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t kp = p->k_padded;
  if (g->run % 4 == 0) {
    const __m512i ix = dot4_index();
    for (int32_t o0 = 0; o0 < p->oc_padded; o0 += 16) {
      const int8_t *w0 = c->weights + (size_t)o0 * kp;
      const int8_t *w1 = o0 + 8 < p->oc_padded ? w0 + (size_t)8 * kp : w0;
      for (int32_t gi = 0; gi < q->n; ++gi)
        _mm512_storeu_si512(wt + gi * g->ocs + o0, dot4_w(w0 + gi * 32, w1 + gi * 32, ix));
    }
    return;
  }
  for (int32_t o0 = 0; o0 < p->oc_padded; o0 += 16)
    for (int32_t gi = 0; gi < q->n; ++gi) {
      __m128i t[4];
      for (int32_t b = 0; b < 4; ++b) t[b] = ln_tapw(c, o0, ln_tap(q, gi, b));
      const __m128i l01 = _mm_unpacklo_epi8(t[0], t[1]), h01 = _mm_unpackhi_epi8(t[0], t[1]);
      const __m128i l23 = _mm_unpacklo_epi8(t[2], t[3]), h23 = _mm_unpackhi_epi8(t[2], t[3]);
      __m128i *d = (__m128i *)(void *)(wt + gi * g->ocs + o0);
      _mm_storeu_si128(d, _mm_unpacklo_epi16(l01, l23));
      _mm_storeu_si128(d + 1, _mm_unpackhi_epi16(l01, l23));
      _mm_storeu_si128(d + 2, _mm_unpacklo_epi16(h01, h23));
      _mm_storeu_si128(d + 3, _mm_unpackhi_epi16(h01, h23));
    }
}

/* The rescale constants of every channel (rq16_make's), broadcast to a
 * pixel per lane: bias, mult, pw_apply's rounding term and shift. */
typedef struct ln_rq {
  int32_t bias[LN_OC], mult[LN_OC], sh[LN_OC];
  int64_t k[LN_OC];
} ln_rq_t;

/* 0 when a live channel's shift is outside rq16's range. */
UK_DOT4 static int ln_rescale(const uk_ctx_t *c, const ln_geo_t *g, ln_rq_t *r) {
  const int32_t ocp = c->p->oc_padded;
  for (int32_t o0 = 0; o0 < g->ocs; o0 += 16) {
    const __mmask16 m = rq16_live(ocp - o0); /* the arrays' end */
    rq16_t q;
    if (!rq16_make(c, _mm512_maskz_loadu_epi32(m, c->bias + o0),
                   _mm512_maskz_loadu_epi32(m, c->mult + o0),
                   _mm512_maskz_loadu_epi32(m, c->shift + o0), rq16_live(c->p->oc - o0), &q))
      return 0;
    _mm512_storeu_si512(r->bias + o0, q.bias);
    _mm512_storeu_si512(r->mult + o0, q.mult);
    _mm512_storeu_si512(r->sh + o0, q.sh);
    /* hz * 2^32 + 2^30 (pw_apply), channels o0..o0+15 */
    const __m512i half = _mm512_set1_epi64(1 << 30);
    _mm512_storeu_si512(
        r->k + o0,
        _mm512_or_si512(
            half, _mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm512_castsi512_si256(q.hz)), 32)));
    _mm512_storeu_si512(
        r->k + o0 + 8,
        _mm512_or_si512(half, _mm512_slli_epi64(
                                  _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(q.hz, 1)), 32)));
  }
  return 1;
}

/* Lane l's run starts rel bytes into the window: its two words, and
 * its bit of the odd mask. */
UK_INLINE void ln_lane(short *ix, __mmask16 *odd, int32_t l, int32_t rel) {
  ix[2 * l] = (short)(rel >> 1);
  ix[2 * l + 1] = (short)((rel >> 1) + 1);
  if (rel & 1) *odd |= (__mmask16)(1u << l);
}

/* The windows' words of 16 pixels of a row whose first run starts s0
 * (0 or 1) bytes into the window: made once per call, as a vector load
 * of ix just after its 32 word stores waits for them to retire. */
static void ln_row16(const ln_geo_t *g, int32_t s0, ln_chunk_t *k) {
  short ix[32];
  k->odd = 0;
  for (int32_t l = 0; l < 16; ++l) ln_lane(ix, &k->odd, l, s0 + l * g->step);
  k->idx = _mm512_loadu_si512(ix);
}

/* The next chunk from *at (advanced past it): up to min(16, left) pixels
 * of one image whose runs start within 128 bytes of the window's start
 * and whose rows fit the band.  row[s0]: ln_row16's chunks. */
static void ln_chunk(const tinyml_uk_params_t *p, const ln_geo_t *g, const ln_chunk_t row[2],
                     uk_pos_t *at, int32_t left, ln_chunk_t *k) {
  const uk_pos_t a0 = *at;
  short ix[32];
  int32_t l = 0, dy = 0;
  k->x0 = (a0.ox * g->step) & ~1;
  k->odd = 0;
  if (g->row16 && a0.ox + uk_min32(16, left) <= p->ow) {
    /* Within one row (all of vww's and resnet8's): no walk. */
    const ln_chunk_t *r = &row[a0.ox * g->step - k->x0];
    k->cnt = uk_min32(16, left);
    k->rows = p->kh;
    k->idx = r->idx;
    k->odd = r->odd & rq16_live(k->cnt);
    if ((at->ox += k->cnt) == p->ow) {
      at->ox = 0;
      if (++at->oy == p->oh) at->oy = 0, ++at->n;
    }
    return;
  }
  for (; l < 16 && l < left && at->n == a0.n; ++l, uk_pos_next(p, at)) {
    const int32_t y = (at->oy - a0.oy) * p->stride_h;
    const int32_t rel = y * g->prow + at->ox * g->step - k->x0;
    if (rel + 4 > 128 || y + p->kh > g->rows) break;
    ln_lane(ix, &k->odd, l, rel);
    dy = y;
  }
  k->cnt = l;
  for (; l < 16; ++l) ix[2 * l] = 0, ix[2 * l + 1] = 1;
  k->idx = _mm512_loadu_si512(ix);
  k->rows = dy + p->kh;
}

/* Channels [o0, o0 + nb) (nb 8 or 16) of the chunk's cnt pixels. */
UK_DOT4 UK_INLINE void ln_block(const uk_ctx_t *c, const ln_geo_t *g, int32_t ng, const ln_rq_t *r,
                                const int32_t *wt, const __m512i *col, int8_t *out, int32_t cnt,
                                int32_t o0, int nb) {
  __m512i a[16];
  for (int i = 0; i < nb; ++i) a[i] = _mm512_set1_epi32(r->bias[o0 + i]);
  for (int32_t gi = 0; gi < ng; ++gi) {
    const __m512i u = col[gi];
    const int32_t *w = wt + gi * g->ocs + o0;
#pragma clang loop unroll(full)
    for (int i = 0; i < nb; ++i) a[i] = _mm512_dpbusd_epi32(a[i], u, _mm512_set1_epi32(w[i]));
  }
  /* Unrolled, the accumulators stay in registers.  pw_apply with the
   * bias in the accumulators (12 uops a channel); the packs and the
   * clamp on bytes in ln_out: [act_min, act_max] lies inside int8, so
   * the same bytes as rq16's clamp. */
#pragma clang loop unroll(full)
  for (int i = 0; i < nb; ++i) {
    const int32_t o = o0 + i;
    const __m512i m = _mm512_set1_epi32(r->mult[o]), k = _mm512_set1_epi64(r->k[o]);
    const pw_rq_t q = {m, m, k, k, _mm512_set1_epi32(r->sh[o]), _mm512_setzero_si512()};
    a[i] = pw_apply(&q, a[i]);
  }
  ln_out(c->p, a, out + o0, cnt, o0, nb);
}

/* A group's 4 bytes for every lane of chunk k from the window at s:
 * lanes whose run starts at an odd byte from the band one byte on. */
UK_INLINE __m512i ln_gather(const uint8_t *s, const ln_chunk_t *k) {
  const __m512i v =
      _mm512_permutex2var_epi16(_mm512_loadu_si512(s), k->idx, _mm512_loadu_si512(s + 64));
  if (!k->odd) return v;
  return _mm512_mask_mov_epi32(v, k->odd,
                               _mm512_permutex2var_epi16(_mm512_loadu_si512(s + LN_ODD), k->idx,
                                                         _mm512_loadu_si512(s + LN_ODD + 64)));
}

/* tinyml_uk_conv_s8's pixels [lo, hi) for a dot4 blob (c->bias is its
 * bias4), or 0 when this path does not take the layer.  Not inlined, so
 * a module's object names it (perf, objdump). */
__attribute__((noinline)) UK_DOT4 int lanes_conv(const uk_ctx_t *c, const int8_t *in, int8_t *out,
                                                 int32_t lo, int32_t hi) {
  const tinyml_uk_params_t *p = c->p;
  ln_geo_t g;
  ln_rq_t rq;
  if (!uk_conv_s8_int8_clamp(p) || !uk_ln_geo(p, &g) || !ln_rescale(c, &g, &rq)) return 0;
  int32_t wt[LN_WT];
  uint8_t buf[2 * LN_ODD] __attribute__((aligned(64)));
  ln_grp_t gr;
  ln_groups(p, &g, &gr);
  ln_weights(c, &g, &gr, wt);
  const size_t image = (size_t)p->ih * p->iw * p->ic;
  int32_t bn = -1, r0 = 0, nrows = 0; /* the band: image bn's rows [r0, r0 + nrows) */
  uk_pos_t at = uk_pos_at(p, lo);
  ln_chunk_t row[2];
  ln_row16(&g, 0, &row[0]);
  ln_row16(&g, 1, &row[1]);
  for (int32_t q = lo; q < hi;) {
    const uk_pos_t a0 = at;
    ln_chunk_t k;
    __m512i col[LN_G];
    ln_chunk(p, &g, row, &at, hi - q, &k);
    const int32_t first = a0.oy * p->stride_h, cnt = k.cnt;
    if (a0.n != bn || first < r0 || first + k.rows > r0 + nrows) {
      bn = a0.n, r0 = first, nrows = uk_min32(g.rows, g.total - first);
      ln_band(p, &g, in + (size_t)bn * image, r0, nrows, buf);
      /* Runs at odd bytes read this copy one byte on, at even ones. */
      if (g.step & 1) ln_shift(buf + 1, buf + LN_ODD, (size_t)nrows * g.prow);
    }
    const size_t base = (size_t)(first - r0) * g.prow + k.x0;
    for (int32_t gi = 0; gi < gr.n; ++gi) {
      col[gi] = ln_gather(buf + base + gr.a[gi], &k);
      if (gr.m[gi])
        col[gi] = _mm512_mask_blend_epi8(gr.m[gi], col[gi], ln_gather(buf + base + gr.b[gi], &k));
    }
    int8_t *o = out + (size_t)q * p->oc;
    for (int32_t o0 = 0; o0 < p->oc; o0 += 16) {
      if (p->oc - o0 <= 8)
        ln_block(c, &g, gr.n, &rq, wt, col, o, cnt, o0, 8);
      else
        ln_block(c, &g, gr.n, &rq, wt, col, o, cnt, o0, 16);
    }
    q += cnt;
  }
  return 1;
}
