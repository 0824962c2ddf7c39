/* The f32 matmul whose B the model computes or reads at run time
 * (tinyml_uk_matmul_f32, uk_abi.h), on the f32 conv's register tiles
 * (conv_f32.h), built into both bitcodes.
 *
 * A matmul [1, M, K] x [1, K, N] is a 1x1 conv over M pixels whose
 * weights are B, but B is only known now, so each workgroup packs it
 * here, TINYML_UK_F32_GROUP (32) columns at a time (a group: one AVX-512
 * tile's two panels, two AVX2 tiles), into its scratch in the layout the
 * tiles read (uk_abi.h, "f32 kinds", for a conv of those 32 channels),
 * then runs every row of A through the group.  Workgroups take bands
 * of groups (fchannel_band), so each packs only its own columns and none
 * waits for another.  A group's K x 32 packed floats (64 KB for K =
 * 512) stay in L2 while A's rows pass under them.
 *
 * Each output is the bias (0 for a bare matmul), then the FMAs in k order
 * with partial sums stored between tap chunks as exact floats, as the
 * conv kernels do: results do not depend on the workgroup count nor on
 * the ISA's tile. */
#include "conv_f32.h"

enum { MM_AHEAD = 16 };

/* One panel row: n of B's floats, then zeros up to w (the panel's width). */
UK_INLINE void mm_row(const float *src, float *dst, int32_t n, int32_t w) {
  if (n == 16) {
    _mm256_storeu_ps(dst, _mm256_loadu_ps(src));
    _mm256_storeu_ps(dst + 8, _mm256_loadu_ps(src + 8));
    return;
  }
  int32_t i = 0;
  for (; i < n; ++i) dst[i] = src[i];
  for (; i < w; ++i) dst[i] = 0.0f;
}

/* Columns [o0, o0 + n) of B (k rows of ldb floats) as the weights of a
 * conv with n channels padded to ocp (a multiple of 8, at most 32): tap
 * chunk, then panel of 16 (the last 8 wide where ocp says so), then tap.
 * Rows are ldb floats apart (2 KB for N = 512), two lines a row in a 4 KB
 * page, which the hardware prefetchers do not follow: each row fetches
 * the one MM_AHEAD rows on (the 512^3 matmul's packs, 3-7% of its
 * time by two measures in docs/PERF.md, ran 1-1.5% faster overall). */
static void mm_pack(const float *b, int32_t k, int32_t ldb, int32_t o0, int32_t n, int32_t ocp,
                    float *dst) {
  for (int32_t k0 = 0; k0 < k; k0 += KC) {
    const int32_t kc = tinyml_uk_f32_chunk(k, k0);
    for (int32_t j = 0; j < ocp; j += 16) {
      const int32_t w = ocp - j < 16 ? ocp - j : 16, valid = n - j < w ? n - j : w;
      float *d = dst + (size_t)k0 * ocp + (size_t)j * kc;
      const float *s0 = b + (size_t)k0 * ldb + o0 + j;
      for (int32_t t = 0; t < kc; ++t, d += w) {
        const float *s = s0 + (size_t)t * ldb; /* never past B's last row */
        _mm_prefetch((const char *)UK_AT(s, (ptrdiff_t)MM_AHEAD * ldb), _MM_HINT_T0);
        _mm_prefetch((const char *)UK_AT(s, (ptrdiff_t)MM_AHEAD * ldb + 15), _MM_HINT_T0);
        mm_row(s, d, valid, w);
      }
    }
  }
}

/* in: A [M][K]; b: B [K][N]; out: [M][N].  Workgroup wg of count packs
 * and computes its band of column groups (uk_abi.h, workgroups). */
void tinyml_uk_matmul_f32(const float *in, const void *blob, float *out, void *scratch,
                          int32_t wg, int32_t count, const float *b) {
  const ukf_ctx_t c = ukf_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  int32_t o_lo, o_hi;
  if (!fchannel_band(p, wg, count, &o_lo, &o_hi)) return;
  float *w = (float *)uk_scratch(scratch, p, wg);
  const int32_t m = p->batch * p->oh * p->ow, k = p->k, n = p->oc;
  const int32_t width = TINYML_UK_F32_GROUP;
  for (int32_t g = o_lo; g < o_hi; g += width) {
    /* The group as a conv of its own channels: the tiles find its
     * weights, bias and epilogue from channel 0. */
    tinyml_uk_params_t q = *p;
    q.oc = n - g < width ? n - g : width;
    q.oc_padded = p->oc_padded - g < width ? p->oc_padded - g : width;
    mm_pack(b, k, n, g, q.oc, q.oc_padded, w);
    ukf_ctx_t d = c;
    d.p = &q;
    d.bias += g;
    d.scale += g;
    d.offset += g;
    d.weights = w;
    d.rows_ahead = 1; /* every tile of a group reads its A rows afresh: 0.7% faster */
    fgemm_rows(&d, in, k, 0, m, out + g, 0, q.oc_padded);
  }
}
