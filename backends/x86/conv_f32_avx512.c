/* The f32 conv's register tile with AVX-512 (conv_f32.h), in the bitcode
 * built with -mavx512f (the compiler links it for targets that have
 * AVX-512).  Same packed weights as the AVX2 tiles (uk_abi.h, "f32
 * kinds"); only the register tile changes.
 *
 * Conv: 12 pixels x 32 channels, i.e. two 16-channel weight panels side by
 * side: 24 zmm accumulators and two weight vectors, and the pixel's value
 * broadcast once (vbroadcastss) for its two FMAs, 24 FMAs per tap.  That
 * is twice the AVX2 tile's work per tap at the same FMA count, which is
 * where onnxruntime gets its 175-195 GFLOP/s; with its data in L1 the loop
 * runs at the core's peak, about 220 GFLOP/s here.  Folding the broadcast
 * into both FMAs ({1to16}, twice the loads) made ResNet-50 15% slower.
 * The last panel may be 8 channels wide and the channel count need not
 * fill it: masks cover both, so one code path serves every tile width.
 * KC taps of the two panels (64 KB) stay in L2 across a run's tiles
 * (conv_f32.c).  Each tap also prefetches the same row of the next
 * block (the weights are one forward stream, uk_abi.h): where there are
 * few pixels (ResNet-50's 14x14 and 7x7 stages) a block's tiles take
 * about as long as fetching the next from memory, and the hardware
 * prefetcher alone left the first tile of every block waiting
 * (docs/PERF.md, "Prefetches, tap chunks of 512, ...").  Past the last
 * block it prefetches nothing useful, which is harmless (no fault).
 * A 1x1 conv that bands pixels reads its rows from the tensor the step
 * before wrote, mostly from L3 on Intel (2 MB L2); there (rows_ahead)
 * each tap also prefetches one line of the next tile's rows, which ran
 * ResNet-50's 56x56 and 28x28 1x1 convs 4-11% faster on an Emerald
 * Rapids (docs/PERF.md, "ResNet-50 on Intel"); in one-panel tiles too
 * (oc 16, the last 16 of 48): there each tile reads its rows only once,
 * and SqueezeNet's 55x55 128 -> 16 conv ran 20-25% faster (docs/PERF.md,
 * "f32 1x1 convs with more channels than pixels"). */
#include "conv_f32.h"

/* Where a tile's two panels are: panel j holds channels [o0 + 16j, +width)
 * at rows of `width` floats; the second is unused when nv is 1. */
typedef struct ftile_w {
  const float *w[2];
  int32_t width[2];
  ptrdiff_t ahead; /* floats from a weight row to the same row of the next block */
  ptrdiff_t anext; /* floats from the first panel's row t to line t of the next tile's taps */
} ftile_w_t;

/* What each tap prefetches besides its panels' rows `ahead` (ftile_w_t)
 * into L1: nothing more (FPF_NEXT), also a line of the next tile's rows
 * (FPF_ROWS, rows_ahead), or the same rows into L2 only (FPF_L2: convs of
 * fewer than FNEAR_PIXELS pixels, whose tiles wait for the next block's
 * weights from L3, and in L1 those would evict the block's own rows and
 * the pixels' taps: the Gemms ran 6-7% (MobileNetV2) and 13% (ResNet-50)
 * faster, ResNet-50's 7x7 stage 3-6%, docs/PERF.md, "Near prefetches in
 * the projections, L2 prefetches for few pixels"). */
enum { FPF_NEXT, FPF_ROWS, FPF_L2 };

/* np pixels (pixel i's taps at a + i * lda) x nv panels, over the tap
 * chunk's pieces (fpiece_t); `valid` channels from o0 exist in each
 * outs[i] (pixel i's output row, channel 0).  The accumulators stay in
 * registers across pieces.  The bias, scale and offset arrays are whole
 * multiples of 16 long, so they load unmasked. */
UK_INLINE void ftile(const ukf_ctx_t *c, int np, int nv, const float *a, int32_t lda,
                     const fpiece_t *pc, int npc, const ftile_w_t *pw, float *const *outs,
                     int32_t o0, int32_t valid, int first, int last, int pf) {
  __m512 acc[MR][2];
  const __mmask16 m[2] = {mask_below(valid), mask_below(valid - 16)};
  const __mmask16 wm0 = mask_below(pw->width[0]), wm1 = mask_below(pw->width[1]);
  /* From the bias or the partial sums, by one load either way: a branch
   * here would make the compiler pass the accumulators through the stack.
   * Lanes past `valid` are never stored, so zeroing them does no harm. */
  float *o[MR];
  for (int i = 0; i < np; ++i) o[i] = outs[i] + o0;
  for (int i = 0; i < np; ++i) {
    const float *src = first ? c->bias + o0 : o[i];
    for (int v = 0; v < nv; ++v) acc[i][v] = _mm512_maskz_loadu_ps(m[v], src + 16 * v);
  }
  ftile_prefetch_out(c, np, nv, 16, outs, o0, first, last);
  const float *w0 = pw->w[0], *w1 = pw->w[1];
  const int32_t s0 = pw->width[0], s1 = pw->width[1];
  /* do-while: pieces are never empty, and loops that may not run make the
   * compiler pass the accumulators through the stack around them. */
  int j = 0;
  do {
    const float *aj = a + pc[j].off;
    const int32_t len = pc[j].len;
    const float *w0e = w0 + (size_t)len * s0;
    do {
      if (pf == FPF_L2) {
        _mm_prefetch((const char *)UK_AT(w0, pw->ahead), _MM_HINT_T1);
        if (nv == 2) _mm_prefetch((const char *)UK_AT(w1, pw->ahead), _MM_HINT_T1);
      } else {
        ftile_prefetch_at(w0, pw->ahead);
        if (nv == 2) ftile_prefetch_at(w1, pw->ahead);
      }
      if (pf == FPF_ROWS) ftile_prefetch_at(w0, pw->anext);
      __m512 x0 = _mm512_maskz_loadu_ps(wm0, w0);
      __m512 x1 = nv == 2 ? _mm512_maskz_loadu_ps(wm1, w1) : x0;
      for (int i = 0; i < np; ++i) {
        __m512 b = _mm512_set1_ps(aj[(size_t)i * lda]);
        acc[i][0] = _mm512_fmadd_ps(b, x0, acc[i][0]);
        if (nv == 2) acc[i][1] = _mm512_fmadd_ps(b, x1, acc[i][1]);
      }
      ++aj;
      w0 += s0;
      w1 += s1;
    } while (w0 != w0e);
  } while (++j < npc);
  const __m512 lo = _mm512_set1_ps(c->lo), hi = _mm512_set1_ps(c->hi);
  /* Once per tile (fepi_v); the arrays are whole multiples of 16 long. */
  __m512 sc[2], of[2];
  for (int v = 0; v < nv; ++v) {
    sc[v] = _mm512_loadu_ps(c->scale + o0 + 16 * v);
    of[v] = _mm512_loadu_ps(c->offset + o0 + 16 * v);
  }
  /* The residual test once, not per vector, and the output pointers from
   * o[] and out0 in locals: LLVM reloads outs[i], c->res and c->out0
   * after every masked store (it cannot tell they do not alias), 24 loads
   * and branches a tile. */
  const float *res = last ? c->res : 0;
  const float *const out0 = c->out0;
  if (res && fepi16_identity(nv, sc, of, m)) { /* fepi16_v less the identity's 2 ops */
#pragma GCC unroll 12
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) {
        float *out = o[i] + 16 * v;
        const __m512 r = _mm512_maskz_loadu_ps(m[v], res + (out - out0));
        const __m512 y = _mm512_add_ps(acc[i][v], r);
        _mm512_mask_storeu_ps(out, m[v], _mm512_min_ps(hi, _mm512_max_ps(lo, y)));
      }
    return;
  }
  if (res) {
#pragma GCC unroll 12
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) {
        float *out = o[i] + 16 * v;
        const float *r = res + (out - out0);
        _mm512_mask_storeu_ps(out, m[v], fepi16_v(acc[i][v], sc[v], of[v], r, m[v], lo, hi));
      }
    return;
  }
  /* Without the steps that change nothing, where a whole layer has them:
   * at 4 vector ops an accumulator the epilogue takes 48 of the FMA
   * ports' cycles a 12x32 tile, and k is 16-160 in these models.
   * min(+inf, x) and max(-inf, x) are x, NaN included.  Each variant
   * interleaves its ops vector by vector: done step by step over all the
   * accumulators, MobileNetV2 ran 1% slower. */
  const int hi_inf = !(c->hi < __builtin_inff()), lo_inf = !(c->lo > -__builtin_inff());
  const int identity = last && fepi16_identity(nv, sc, of, m);
  /* With BatchNorm folded into the weights (uk_pack.c, fill_f32) most
   * tiles are identities: ReLU6 keeps its clamp (2 ops), a projection
   * stores (0 ops), a ReLU its max (1 op). */
  if (identity && hi_inf && lo_inf) {
#pragma GCC unroll 12
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v) _mm512_mask_storeu_ps(o[i] + 16 * v, m[v], acc[i][v]);
    return;
  }
  if (identity && hi_inf) {
#pragma GCC unroll 12
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v)
        _mm512_mask_storeu_ps(o[i] + 16 * v, m[v], _mm512_max_ps(lo, acc[i][v]));
    return;
  }
  if (identity) {
#pragma GCC unroll 12
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v)
        _mm512_mask_storeu_ps(o[i] + 16 * v, m[v],
                              _mm512_min_ps(hi, _mm512_max_ps(lo, acc[i][v])));
    return;
  }
  if (last && hi_inf && lo_inf) {
#pragma GCC unroll 12
    for (int i = 0; i < np; ++i)
      for (int v = 0; v < nv; ++v)
        _mm512_mask_storeu_ps(o[i] + 16 * v, m[v],
                              _mm512_add_ps(_mm512_mul_ps(acc[i][v], sc[v]), of[v]));
    return;
  }
  /* Unrolled, or the accumulators go through the stack. */
#pragma GCC unroll 12
  for (int i = 0; i < np; ++i)
    for (int v = 0; v < nv; ++v) {
      __m512 r = acc[i][v];
      if (last) r = fepi16_v(r, sc[v], of[v], 0, m[v], lo, hi);
      _mm512_mask_storeu_ps(o[i] + 16 * v, m[v], r);
    }
}

/* Whether each tap prefetches its own panel's rows FNEAR_TAPS taps
 * ahead rather than the next block's: in a 1x1 conv of at least
 * FNEAR_PIXELS pixels that does not fetch the next tile's rows, every
 * tile of a panel but the first reads its rows from L2 (or L1), and the
 * next block's rows, fetched by every tile, helped only the first.  With
 * channel bands, SqueezeNet-1.1's last conv (512 -> 1000 at 13x13, 15
 * tiles a panel) ran 1.5-2% faster; in dwpw's and pwdwpw's projections
 * (pixel bands of 2-12 tiles, 14x14 and up) MobileNetV2's steps ran
 * 1.2-2% faster (docs/PERF.md, "Near prefetches in the projections, L2
 * prefetches for few pixels").  With few pixels (7x7 layers, Gemms) the
 * next block is what the tiles wait for, so they keep it (FPF_L2). */
enum { FNEAR_TAPS = 16, FNEAR_PIXELS = 8 * MR };
UK_INLINE int fnear_prefetch(const ukf_ctx_t *c, int32_t lda) {
  const tinyml_uk_params_t *p = c->p;
  return !c->rows_ahead && p->kh == 1 && p->kw == 1 && lda == p->k &&
         p->batch * p->oh * p->ow >= FNEAR_PIXELS;
}

/* One tile (np pixels from `a`, channels [o0, o0 + 32), taps [k0, k0 +
 * kc) in pieces) with np and nv as constants in each variant, so the
 * accumulators stay in registers.  Not inlined: its name in the object
 * tells which kernels a module got (tests/compiler/test_ukernels.py). */
__attribute__((noinline)) void ukf_tile_avx512(const ukf_ctx_t *c, int np, const float *a,
                                               int32_t lda, const fpiece_t *pc, int npc,
                                               int32_t k0, float *const *outs, int32_t o0,
                                               int first, int last) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t k = p->k, ocp = p->oc_padded;
  const int nv = ocp - o0 > 16 ? 2 : 1;
  const int32_t valid = p->oc - o0 < 32 ? p->oc - o0 : 32;
  ftile_w_t pw;
  pw.width[0] = ocp - o0 < 16 ? ocp - o0 : 16;
  pw.width[1] = nv == 2 ? (ocp - o0 - 16 < 16 ? ocp - o0 - 16 : 16) : 0;
  const int32_t kc = tinyml_uk_f32_chunk(k, k0);
  pw.w[0] = c->weights + (size_t)k0 * ocp + (size_t)o0 * kc;
  pw.w[1] = nv == 2 ? pw.w[0] + (size_t)16 * kc : pw.w[0];
  pw.ahead = (ptrdiff_t)(pw.width[0] + pw.width[1]) * kc;
  const int near = fnear_prefetch(c, lda);
  if (near) pw.ahead = (ptrdiff_t)pw.width[0] * FNEAR_TAPS;
  const int pf = c->rows_ahead && lda == k && k == kc && pw.width[0] == 16 ? FPF_ROWS
                 : p->batch * p->oh * p->ow < FNEAR_PIXELS                ? FPF_L2
                                                                           : FPF_NEXT;
  pw.anext = (ptrdiff_t)(((intptr_t)(a + (size_t)np * lda) - (intptr_t)pw.w[0]) / 4);
#define FTV(N, V, F) ftile(c, N, V, a, lda, pc, npc, &pw, outs, o0, valid, first, last, F)
#define FT(N)                                                 \
  case N:                                                     \
    if (nv == 2 && pf == FPF_ROWS)                            \
      FTV(N, 2, FPF_ROWS);                                    \
    else if (nv == 2 && pf == FPF_L2)                         \
      FTV(N, 2, FPF_L2);                                      \
    else if (nv == 2)                                         \
      FTV(N, 2, FPF_NEXT);                                    \
    else if (pf == FPF_ROWS)                                  \
      FTV(N, 1, FPF_ROWS);                                    \
    else if (pf == FPF_L2)                                    \
      FTV(N, 1, FPF_L2);                                      \
    else                                                      \
      FTV(N, 1, FPF_NEXT);                                    \
    break;
  switch (np) {
    FT(12) FT(11) FT(10) FT(9) FT(8) FT(7) FT(6) FT(5) FT(4) FT(3) FT(2) default: FT(1)
  }
#undef FT
#undef FTV
}
