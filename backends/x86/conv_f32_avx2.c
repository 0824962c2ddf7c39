/* The f32 conv's register tile with AVX2 (conv_f32.h): 6 pixels x 16
 * channels, in the AVX2 bitcode only. */
#include "conv_f32.h"

/* A tile's epilogue and stores, `full` (every lane stored) and the
 * residual `res` tested once a tile by the caller, not per vector: with
 * them (and outs[i]) read inside the loop, LLVM reloaded outs[i] and
 * c->res and tested both after every masked store (it cannot tell they do
 * not alias), as conv_f32_avx512.c's tile did.  Unrolled, or the
 * accumulators go through the stack. */
UK_INLINE void ftile_store(const ukf_ctx_t *c, int np, int nv, __m256 (*acc)[2], float *const *o,
                           const __m256 *sc, const __m256 *of, const __m256i *m, int full,
                           const float *res, int last) {
  const __m256 lo = _mm256_set1_ps(c->lo), hi = _mm256_set1_ps(c->hi);
  const float *out0 = c->out0;
#pragma GCC unroll 6
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      float *out = o[i] + 8 * v;
      __m256 r = acc[i][v];
      if (last) r = fepi_v(r, sc[v], of[v], res ? res + (out - out0) : 0, m[v], lo, hi);
      if (full)
        _mm256_storeu_ps(out, r);
      else
        _mm256_maskstore_ps(out, m[v], r);
    }
}

/* np pixels (pixel i's taps at a + i * lda) x nv vectors of 8 channels,
 * over the tap chunk's pieces (fpiece_t); `valid` channels of the panel
 * exist in each outs[i] (pixel i's output row, channel 0). */
UK_INLINE void ftile(const ukf_ctx_t *c, int np, int nv, const float *a, int32_t lda,
                     const fpiece_t *pc, int npc, const float *w, ptrdiff_t ahead,
                     float *const *outs, int32_t o0, int32_t valid, int first, int last) {
  __m256 acc[MR][2];
  const int full = valid >= nv * 8;
  const __m256i m[2] = {lanes_below(valid), lanes_below(valid - 8)};
  float *o[MR];
  for (int i = 0; i < np; ++i) o[i] = outs[i] + o0;
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      if (first)
        acc[i][v] = _mm256_loadu_ps(c->bias + o0 + 8 * v);
      else if (full)
        acc[i][v] = _mm256_loadu_ps(o[i] + 8 * v);
      else
        acc[i][v] = _mm256_maskload_ps(o[i] + 8 * v, m[v]);
    }
  ftile_prefetch_out(c, np, nv, 8, outs, o0, first, last);
  const int W = nv * 8;
  for (int j = 0; j < npc; ++j) {
    const float *a0 = a + pc[j].off, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda,
                *a4 = a3 + lda, *a5 = a4 + lda;
    const int32_t len = pc[j].len;
    for (int32_t k = 0; k < len; ++k) {
      /* The next block's row (conv_f32_avx512.c says why). */
      ftile_prefetch_at(w + (size_t)k * W, ahead);
      __m256 w0 = _mm256_loadu_ps(w + (size_t)k * W);
      __m256 w1 = nv == 2 ? _mm256_loadu_ps(w + (size_t)k * W + 8) : w0;
#define FROW(i, ai)                                                     \
  if (np > i) {                                                         \
    __m256 b = _mm256_broadcast_ss(ai + k);                             \
    acc[i][0] = _mm256_fmadd_ps(b, w0, acc[i][0]);                      \
    if (nv == 2) acc[i][1] = _mm256_fmadd_ps(b, w1, acc[i][1]);         \
  }
      FROW(0, a0) FROW(1, a1) FROW(2, a2) FROW(3, a3) FROW(4, a4) FROW(5, a5)
#undef FROW
    }
    w += (size_t)len * W;
  }
  /* Once per tile (fepi_v). */
  __m256 sc[2], of[2];
  for (int v = 0; v < nv; ++v) {
    sc[v] = _mm256_loadu_ps(c->scale + o0 + 8 * v);
    of[v] = _mm256_loadu_ps(c->offset + o0 + 8 * v);
  }
  const float *res = last ? c->res : 0;
  if (full && res)
    ftile_store(c, np, nv, acc, o, sc, of, m, 1, res, last);
  else if (full)
    ftile_store(c, np, nv, acc, o, sc, of, m, 1, 0, last);
  else
    ftile_store(c, np, nv, acc, o, sc, of, m, 0, res, last);
}

/* One tile (np pixels from `a`, channels [o0, o0 + 16), taps [k0, k0 +
 * kc) in pieces) with np and nv as constants in each variant, so the
 * accumulators stay in registers.  Not inlined: its name in the object
 * tells which kernels a module got (tests/compiler/test_ukernels.py). */
__attribute__((noinline)) void ukf_tile_avx2(const ukf_ctx_t *c, int np, const float *a,
                                             int32_t lda, const fpiece_t *pc, int npc, int32_t k0,
                                             float *const *outs, int32_t o0, int first,
                                             int last) {
  const tinyml_uk_params_t *p = c->p;
  const int nv = p->oc_padded - o0 >= 16 ? 2 : 1;
  const int32_t valid = p->oc - o0 < 8 * nv ? p->oc - o0 : 8 * nv;
  const int32_t kc = tinyml_uk_f32_chunk(p->k, k0);
  const float *w = c->weights + (size_t)k0 * p->oc_padded + (size_t)o0 * kc;
  const ptrdiff_t ahead = (ptrdiff_t)8 * nv * kc;
#define FT(N, V) ftile(c, N, V, a, lda, pc, npc, w, ahead, outs, o0, valid, first, last)
  if (nv == 2) {
    switch (np) {
      case 6: FT(6, 2); break;
      case 5: FT(5, 2); break;
      case 4: FT(4, 2); break;
      case 3: FT(3, 2); break;
      case 2: FT(2, 2); break;
      default: FT(1, 2); break;
    }
  } else {
    switch (np) {
      case 6: FT(6, 1); break;
      case 5: FT(5, 1); break;
      case 4: FT(4, 1); break;
      case 3: FT(3, 1); break;
      case 2: FT(2, 1); break;
      default: FT(1, 1); break;
    }
  }
#undef FT
}
