/* The f32 depthwise pixels with AVX-512 (depthwise_f32.h), in the
 * AVX-512 bitcode only: 16 channels per vector, the channel tail under a
 * mask; a row's interior runs 8 pixels x 16 channels at a time, then the
 * 4-7 left as one chunk (dw_run in depthwise_f32.c), the rest up to 4
 * vectors x 2 pixels. */
#include "depthwise_f32.h"

/* The epilogue, less the scale and offset when `id` (a constant in each
 * caller's variant, so that no test runs per vector): the clamp, 2 ops
 * instead of fepi16_v's 4; the same bits, as x * 1 + -0.0 is x. */
UK_INLINE __m512 dw_epi(__m512 a, __m512 sc, __m512 of, __m512 lo, __m512 hi, int id) {
  return id ? _mm512_min_ps(hi, _mm512_max_ps(lo, a)) : fepi16_v(a, sc, of, 0, 0, lo, hi);
}

/* dw_block's stores (dw_epi). */
UK_INLINE void dw_store(int np, int nv, int id, __m512 (*a)[4], const __m512 *sc,
                        const __m512 *of, const __mmask16 *m, __m512 lo, __m512 hi, float *d,
                        int32_t dstep) {
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v)
      _mm512_mask_storeu_ps(d + (size_t)i * dstep + 16 * v, m[v],
                            dw_epi(a[i][v], sc[v], of[v], lo, hi, id));
}

/* Depthwise: np pixels (xstep floats apart) x nv vectors of 16 channels
 * from channel c0 (negative for the head of a shifted pixel, dw_head,
 * whose x and arrays' addresses then lie before their starts: UK_AT),
 * over taps at x + xo[t] and weights + wo[t]; `first` and `last` mask the
 * first and last vectors to the channels in [0, ic) (which also keeps
 * their loads inside the tensors).  Up to 8 independent accumulators
 * (np x nv) hide the FMA latency over the few taps of a window. */
UK_INLINE void dw_block(const ukf_ctx_t *c, int np, int nv, __mmask16 first, __mmask16 last,
                        const float *x, int32_t xstep, const int32_t *xo, const int32_t *wo,
                        int32_t taps, int32_t c0, float *dst, int32_t dstep) {
  UK_PATH(dw_f32_block);
  __m512 a[DW_NP][4];
  __mmask16 m[4];
  const float *bias = UK_AT(c->bias, c0), *w = UK_AT(c->weights, c0);
  for (int v = 0; v < nv; ++v) {
    m[v] = (v == 0 ? first : (__mmask16)0xffff) & (v == nv - 1 ? last : (__mmask16)0xffff);
    __m512 b = _mm512_maskz_loadu_ps(m[v], bias + 16 * v);
    for (int i = 0; i < np; ++i) a[i][v] = b;
  }
  for (int32_t t = 0; t < taps; ++t) {
    const float *xp = x + xo[t], *wp = w + wo[t];
    for (int v = 0; v < nv; ++v) {
      __m512 wv = _mm512_maskz_loadu_ps(m[v], wp + 16 * v);
      for (int i = 0; i < np; ++i) {
        __m512 xv = _mm512_maskz_loadu_ps(m[v], xp + (size_t)i * xstep + 16 * v);
        a[i][v] = _mm512_fmadd_ps(xv, wv, a[i][v]);
      }
    }
  }
  const __m512 lo = _mm512_set1_ps(c->lo), hi = _mm512_set1_ps(c->hi);
  /* Once per block, as the conv tile does (fepi16_v). */
  __m512 sc[4], of[4];
  const float *scale = UK_AT(c->scale, c0), *offset = UK_AT(c->offset, c0);
  for (int v = 0; v < nv; ++v) {
    sc[v] = _mm512_maskz_loadu_ps(m[v], scale + 16 * v);
    of[v] = _mm512_maskz_loadu_ps(m[v], offset + 16 * v);
  }
  if (fepi16_identity(nv, sc, of, m))
    dw_store(np, nv, 1, a, sc, of, m, lo, hi, UK_AT(dst, c0), dstep);
  else
    dw_store(np, nv, 0, a, sc, of, m, lo, hi, UK_AT(dst, c0), dstep);
}

/* The channel the pixel's first 16-channel block starts at: 0, or when
 * every pixel's channels start at the same offset in a 64-byte line
 * (16 | ic) and that offset is not 0 (a caller's buffer at malloc's
 * 16-byte alignment), minus the floats before channel 0 in its line: the
 * first block, masked to the channels from 0, ends on the next line and
 * every later load is aligned.  A 64-byte load across two
 * lines made a 14x14x576 3x3 depthwise conv 1.57x slower (PERF.md, "Buffer
 * placement").  Each channel's sum is the same whichever block takes it. */
UK_INLINE int32_t dw_head(const float *x, const int32_t *xo, int32_t taps, int32_t ic) {
  const uintptr_t at = (uintptr_t)(x + (taps ? xo[0] : 0)) & 63;
  return ic % 16 ? 0 : -(int32_t)(at / 4);
}

/* The lanes of the block from channel c0 that hold channels [0, ic). */
UK_INLINE __mmask16 dw_lanes(int32_t c0, int32_t ic) {
  return mask_below(ic - c0) & (__mmask16)~mask_below(-c0);
}

/* The head (dw_head), 64 channels at a time, then the 1..63 left in one
 * block. */
UK_INLINE void dw_all(const ukf_ctx_t *c, int np, const float *x, int32_t xstep,
                      const int32_t *xo, const int32_t *wo, int32_t taps, float *dst) {
  const int32_t ic = c->p->ic;
  int32_t c0 = dw_head(x, xo, taps, ic);
  if (c0) {
    dw_block(c, np, 1, dw_lanes(c0, ic), 0xffff, UK_AT(x, c0), xstep, xo, wo, taps, c0, dst,
             ic);
    c0 += 16;
  }
  for (; c0 + 64 <= ic; c0 += 64)
    dw_block(c, np, 4, 0xffff, 0xffff, x + c0, xstep, xo, wo, taps, c0, dst, ic);
  const int32_t left = ic - c0, nv = (left + 15) / 16;
  const __mmask16 last = mask_below(left - (nv - 1) * 16);
#define DW(N) dw_block(c, np, N, 0xffff, last, x + c0, xstep, xo, wo, taps, c0, dst, ic)
  switch (nv) {
    case 0: break;
    case 1: DW(1); break;
    case 2: DW(2); break;
    case 3: DW(3); break;
    default: DW(4); break;
  }
#undef DW
}

/* All channels of np (1 or 2) pixels; x points at pixel 0's origin.  Not
 * inlined, for the same reason as ukf_tile_avx512 (conv_f32_avx512.c). */
__attribute__((noinline)) void ukf_dw_avx512(const ukf_ctx_t *c, int np, const float *x,
                                             int32_t xstep, const int32_t *xo, const int32_t *wo,
                                             int32_t taps, float *dst) {
  if (np == 2)
    dw_all(c, 2, x, xstep, xo, wo, taps, dst);
  else
    dw_all(c, 1, x, xstep, xo, wo, taps, dst);
}

/* dw_block3's stores (dw_epi): its np pixels, and the border ones when
 * el, er. */
UK_INLINE void dw_store3(int np, int el, int er, int id, __mmask16 m, const __m512 *a, __m512 bl,
                         __m512 br, __m512 sc, __m512 of, __m512 lo, __m512 hi, float *d,
                         int32_t dstep) {
  for (int i = 0; i < np; ++i)
    _mm512_mask_storeu_ps(d + (size_t)i * dstep, m, dw_epi(a[i], sc, of, lo, hi, id));
  if (el) _mm512_mask_storeu_ps(d - dstep, m, dw_epi(bl, sc, of, lo, hi, id));
  if (er) _mm512_mask_storeu_ps(d + (size_t)np * dstep, m, dw_epi(br, sc, of, lo, hi, id));
}

/* dw_block's one-vector case where the taps come in kernel rows of 3
 * whose input columns are xstep apart (xo[t + 1] == xo[t] + xstep: a
 * 3-wide window at stride 1, dil 1, or stride 2, dil 2 across): each of a row's np + 2 input vectors
 * is loaded once for the row's 3 * np FMAs, not once a FMA (dw_block's
 * loads, a weight and np inputs a tap, bound it).  MobileNetV2's stride-1
 * depthwise steps ran 3-5% faster; the same at stride 2 (2 * np + 1
 * vectors a row) changed nothing (docs/PERF.md).  Each accumulator takes
 * the same FMAs in the same (tap) order from the same addresses: the same
 * sums.  el, er: also the row's border pixels (ukf_dw_edges_avx512). */
UK_INLINE void dw_block3(const ukf_ctx_t *c, int np, int el, int er, __mmask16 m, const float *x,
                         int32_t xstep, const int32_t *xo, const int32_t *wo, int32_t taps,
                         int32_t c0, float *dst, int32_t dstep) {
  UK_PATH(dw_f32_rows3);
  __m512 a[DW_NP], xv[DW_NP + 2], bl, br;
  const float *w = UK_AT(c->weights, c0);
  const __m512 b = _mm512_maskz_loadu_ps(m, UK_AT(c->bias, c0));
  for (int i = 0; i < np; ++i) a[i] = b;
  bl = br = b;
  for (int32_t t = 0; t < taps; t += 3) {
    const float *xp = x + xo[t];
    const __m512 w0 = _mm512_maskz_loadu_ps(m, w + wo[t]);
    const __m512 w1 = _mm512_maskz_loadu_ps(m, w + wo[t + 1]);
    const __m512 w2 = _mm512_maskz_loadu_ps(m, w + wo[t + 2]);
    for (int j = 0; j < np + 2; ++j) xv[j] = _mm512_maskz_loadu_ps(m, xp + (size_t)j * xstep);
    for (int i = 0; i < np; ++i) {
      a[i] = _mm512_fmadd_ps(xv[i], w0, a[i]);
      a[i] = _mm512_fmadd_ps(xv[i + 1], w1, a[i]);
      a[i] = _mm512_fmadd_ps(xv[i + 2], w2, a[i]);
    }
    if (el) bl = _mm512_fmadd_ps(xv[1], w2, _mm512_fmadd_ps(xv[0], w1, bl));
    if (er) br = _mm512_fmadd_ps(xv[np + 1], w1, _mm512_fmadd_ps(xv[np], w0, br));
  }
  const __m512 lo = _mm512_set1_ps(c->lo), hi = _mm512_set1_ps(c->hi);
  const __m512 sc = _mm512_maskz_loadu_ps(m, UK_AT(c->scale, c0));
  const __m512 of = _mm512_maskz_loadu_ps(m, UK_AT(c->offset, c0));
  float *d = UK_AT(dst, c0);
  if (fepi16_identity(1, &sc, &of, &m))
    dw_store3(np, el, er, 1, m, a, bl, br, sc, of, lo, hi, d, dstep);
  else
    dw_store3(np, el, er, 0, m, a, bl, br, sc, of, lo, hi, d, dstep);
}

/* np pixels (DW_NP_MIN..DW_NP), all channels, 16 at a time: the chunk's
 * input columns (3 x (np + 2) pixels for a 3x3 window at stride 1) stay
 * in L1 while the channel blocks pass, and np accumulators share each
 * weight load.  Against 2 pixels x 64 channels: 112x112 layers 1.27-1.29x
 * faster, others 0.95-1.12x (noisy); a whole row per 16-channel block was
 * 0.85-0.97x.  `rows3`: dw_block3's taps (dw_rows3). */
UK_INLINE void dw_chunk(const ukf_ctx_t *c, int np, int rows3, int el, int er, const float *x,
                        int32_t xstep, const int32_t *xo, const int32_t *wo, int32_t taps,
                        float *dst) {
  const int32_t ic = c->p->ic;
  for (int32_t c0 = dw_head(x, xo, taps, ic); c0 < ic; c0 += 16) {
    if (rows3)
      dw_block3(c, np, el, er, dw_lanes(c0, ic), UK_AT(x, c0), xstep, xo, wo, taps, c0, dst,
                ic);
    else
      dw_block(c, np, 1, dw_lanes(c0, ic), 0xffff, UK_AT(x, c0), xstep, xo, wo, taps, c0, dst,
               ic);
  }
}

/* dw_chunk with np (DW_NP_MIN..DW_NP) as a constant, which dw_block's
 * and dw_block3's arrays need; R, L, E: its rows3, el, er, constants too.
 * ukf_dw_chunk_avx512's and ukf_dw_edges_avx512's one switch. */
#define DW_CHUNK_NP(R, L, E)                                           \
  switch (np) {                                                        \
    case 4: dw_chunk(c, 4, R, L, E, x, xstep, xo, wo, taps, dst); break; \
    case 5: dw_chunk(c, 5, R, L, E, x, xstep, xo, wo, taps, dst); break; \
    case 6: dw_chunk(c, 6, R, L, E, x, xstep, xo, wo, taps, dst); break; \
    case 7: dw_chunk(c, 7, R, L, E, x, xstep, xo, wo, taps, dst); break; \
    default: /* dw_run and dw_row_edges: only 8 */                     \
      dw_chunk(c, DW_NP, R, L, E, x, xstep, xo, wo, taps, dst);        \
      break;                                                           \
  }

__attribute__((noinline)) void ukf_dw_chunk_avx512(const ukf_ctx_t *c, int np, int rows3,
                                                   const float *x, int32_t xstep,
                                                   const int32_t *xo, const int32_t *wo,
                                                   int32_t taps, float *dst) {
  if (rows3)
    DW_CHUNK_NP(1, 0, 0)
  else
    DW_CHUNK_NP(0, 0, 0)
}

/* ukf_dw_chunk_avx512 on dw_rows3's taps with the row's left border
 * pixel (the one before the chunk: its taps 1 and 2 of each kernel row are
 * the chunk's first two input vectors) when el, the right one (after it:
 * taps 0 and 1 on the last two) when er; a 3x3 window at stride 1 and
 * padding 1 across.  Alone (ukf_dw_avx512, one pixel) a border pixel
 * loads an input and a weight a FMA.  Each border pixel's sum takes its
 * in-image taps in window order, as alone: the same bits. */
__attribute__((noinline)) void ukf_dw_edges_avx512(const ukf_ctx_t *c, int np, int el, int er,
                                                   const float *x, int32_t xstep,
                                                   const int32_t *xo, const int32_t *wo,
                                                   int32_t taps, float *dst) {
  if (el && er)
    DW_CHUNK_NP(1, 1, 1)
  else if (el)
    DW_CHUNK_NP(1, 1, 0)
  else
    DW_CHUNK_NP(1, 0, 1)
}
#undef DW_CHUNK_NP
