/* Winograd F(2x2, 3x3) and F(4x4, 3x3) for the f32 conv kernel (uk_abi.h,
 * wino_m and wino_tiles): when a conv takes which, and the filter
 * transforms.
 *
 * A 3x3 stride-1 conv then does 16 multiply-adds per 2x2 outputs and
 * channel pair, or 36 per 4x4, instead of 9 per output, plus transforms
 * in vector adds and FMAs (backends/x86/wino_f32.c).  The
 * transformed weights U are 16 / 9 or 36 / 9 the size of the conv's and
 * every block of tiles reads all of them, so how many tiles a block holds
 * depends on whether U stays in the core's L2.  Measured (docs/PERF.md):
 * ResNet-50's 3x3 convs of the 56x56, 28x28 and 14x14 stages took
 * 0.51-0.61 of the direct sum's time with F(2x2, 3x3); F(4x4, 3x3) takes
 * the 56x56 and 28x28 ones (and SqueezeNet's 27x27 ones) down to 0.65-0.7
 * of that. */
#include "uk_wino.h"

static int64_t round8(int64_t v) { return (v + 7) / 8 * 8; }

/* Bytes of U for tiles of m x m outputs: (m + 2)^2 matrices of ic x oc. */
static int64_t wino_u_bytes(const tinyml_uk_params_t *p, int32_t m) {
  return (int64_t)(m + 2) * (m + 2) * round8(p->ic) * round8(p->oc) * 4;
}

/* Whether tiles of m x m outputs compute at most 1.2 times the outputs
 * (they cover whole tiles): 13x13 computes 16x16, 1.5 times. */
static int wino_covers(const tinyml_uk_params_t *p, int32_t m) {
  const int64_t h = (p->oh + m - 1) / m * m, w = (p->ow + m - 1) / m * m;
  return 5 * h * w <= 6 * (int64_t)p->oh * p->ow;
}

/* The thresholds are the backend's (tc_wino_tuning_t); x86-64's were
 * measured so.  With F(2x2, 3x3) alone, SqueezeNet's 16 -> 64 convs of
 * 55x55 gained 5-10% on one thread and lost on two, so the bound was 32
 * channels; with F(4x4, 3x3) they take 0.71-0.75 of the direct sum's time
 * on one thread (docs/PERF.md, "16-channel Winograd"), and x86-64's bound
 * is 16.  Below that the transforms cost too much of the GEMMs.
 * F(4x4, 3x3) needs 2.25 multiply-adds per output and channel pair
 * against F(2x2, 3x3)'s 4, for 2.25x the size of U.  It is taken while U
 * stays within WINO4_MAX_U (ResNet-50's 14x14 convs, 9.4 MB of U, gained
 * nothing in the model) and the tiles cover little more than the image
 * (SqueezeNet's 13x13 convs: 1.1-1.3x faster on one thread, slower on
 * two). */
int32_t tc_wino_m(const tc_wino_tuning_t *t, const tinyml_uk_params_t *p) {
  if (p->kind != TINYML_UK_CONV_F32 || p->kh != 3 || p->kw != 3 || p->stride_h != 1 ||
      p->stride_w != 1 || p->dil_h != 1 || p->dil_w != 1)
    return 0;
  if (t->min_channels <= 0 || p->ic < t->min_channels || p->oc < t->min_channels) return 0;
  if (wino_u_bytes(p, 4) <= t->max_u4_bytes && wino_covers(p, 4)) return 4;
  return wino_u_bytes(p, 2) <= t->max_u_bytes ? 2 : 0;
}

/* Tiles per block for p->wino_m: with U in L2, blocks whose V and M stay
 * there too (24 tiles for 64 channels; 12 or 48 made ResNet-50's 56x56
 * convs no faster); otherwise, for F(2x2, 3x3), as many as
 * WINO_BIG_BLOCK_BYTES holds, since every block reads all of U
 * (ResNet-50's 14x14 convs: one block of 49 tiles against 2 of 24-25 or 3
 * of 16-17, 10-13% faster, for 3.5 MB more arena).  F(4x4, 3x3) keeps
 * the small blocks: ResNet-50's 28x28 convs (2.25 MB of U) ran as fast
 * in blocks of 12 tiles as of 48, and the arena stays 2.5 MB smaller. */
int32_t tc_wino_tiles(const tc_wino_tuning_t *t, const tinyml_uk_params_t *p) {
  const int32_t m = p->wino_m, nn = (m + 2) * (m + 2);
  const int64_t u = wino_u_bytes(p, m), icp = round8(p->ic), ocp = round8(p->oc);
  const int64_t tiles = (int64_t)p->batch * ((p->oh + m - 1) / m) * ((p->ow + m - 1) / m);
  const int64_t bytes = m == 2 && u > t->l2_u_bytes ? t->big_block_bytes : t->block_bytes;
  int64_t tb = bytes / (4 * nn * (icp + ocp)) / t->tile_rows * t->tile_rows;
  if (tb < t->tile_rows) tb = t->tile_rows;
  if (tb > t->max_tiles) tb = t->max_tiles;
  return (int32_t)(tb < tiles ? tb : tiles);
}

int64_t tc_wino_scratch(const tinyml_uk_params_t *p) {
  const int64_t n16 = (p->oc_padded + 15) / 16 * 16, nn = (p->wino_m + 2) * (p->wino_m + 2);
  const int64_t vs = tinyml_uk_wino_stride((int64_t)p->wino_tiles * round8(p->ic));
  const int64_t ms = tinyml_uk_wino_stride((int64_t)p->wino_tiles * p->oc_padded);
  return 4 * (3 * n16 + nn * (vs + ms));
}

/* U = G g G^T in double: each U element is one rounding from the exact
 * value.  F(2x2, 3x3): G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1];
 * F(4x4, 3x3), points 0, 1, -1, 2, -2 and infinity: G's rows are
 * [1/4 0 0], -1/6 [1 1 1], -1/6 [1 -1 1], 1/24 [1 2 4], 1/24 [1 -2 4]
 * and [0 0 1]. */
void tc_wino_filter(const float g[9], int32_t m, float *u) {
  static const double G2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static const double G4[6][3] = {{0.25, 0, 0},
                                  {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                  {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                  {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                  {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                  {0, 0, 1}};
  const int n = m + 2;
  const double(*G)[3] = m == 4 ? G4 : G2;
  double t[6][3];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < 3; ++j)
      t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      u[n * i + j] = (float)(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
}
