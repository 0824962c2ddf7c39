/* Winograd F(2x2, 3x3) for the f32 conv kernel (uk_abi.h, wino_tiles):
 * when a conv takes it, and its filter transform.
 *
 * A 3x3 stride-1 conv then does 16 multiply-adds per 2x2 outputs and
 * channel pair instead of 36, plus transforms that cost about 4 / oc and
 * 4 / ic of the GEMMs in vector adds (backends/x86/ukernels_wino.h).  The
 * transformed weights U are 16 / 9 the size of the conv's and every block
 * of tiles reads all of them, so how many tiles a block holds depends on
 * whether U stays in the core's L2.  Measured on ResNet-50 (docs/PERF.md):
 * its 3x3 convs of the 56x56, 28x28 and 14x14 stages take 0.51-0.61 of
 * the direct sum's time. */
#include "ukernel.h"

enum {
  WINO_MIN_CHANNELS = 32, /* see tc_wino_tiles */
  WINO_MAX_U = 4 << 20,   /* bytes of U; ResNet-50's 7x7 stage (16 MB) gains 1% */
  WINO_L2_U = 1 << 20,    /* bytes of U that stay in the core's L2 across blocks */
  WINO_BLOCK_BYTES = 256 << 10,   /* V and M of a block when U stays in L2 */
  WINO_BIG_BLOCK_BYTES = 2 << 20, /* ... and when each block reads U from memory */
  WINO_MIN_TILES = 12,    /* the AVX-512 tile's height */
  WINO_MAX_TILES = 96     /* within the kernel's FB_MAX output rows */
};

static int64_t round8(int64_t v) { return (v + 7) / 8 * 8; }

/* Below 32 channels the transforms cost too much of the GEMMs:
 * SqueezeNet's 16 -> 64 convs of 55x55 gained 5-10% on one thread and
 * lost on two (1.2-1.3x faster than one, against 1.86x direct).
 * Tiles per block: with U in L2, blocks whose V and M stay there too
 * (24 tiles for 64 channels; 12 or 48 made ResNet-50's 56x56 convs no
 * faster); otherwise as many as WINO_BIG_BLOCK_BYTES holds, since every
 * block reads all of U (ResNet-50's 14x14 convs: one block of 49 tiles
 * against 2 of 24-25 or 3 of 16-17, 10-13% faster, for 3.5 MB more arena). */
int32_t tc_wino_tiles(const tinyml_uk_params_t *p) {
  if (p->kind != TINYML_UK_CONV_F32 || p->kh != 3 || p->kw != 3 || p->stride_h != 1 ||
      p->stride_w != 1 || p->dil_h != 1 || p->dil_w != 1)
    return 0;
  const int64_t icp = round8(p->ic), ocp = round8(p->oc), u = 16 * icp * ocp * 4;
  if (p->ic < WINO_MIN_CHANNELS || p->oc < WINO_MIN_CHANNELS || u > WINO_MAX_U) return 0;
  const int64_t tiles = (int64_t)p->batch * ((p->oh + 1) / 2) * ((p->ow + 1) / 2);
  const int64_t bytes = u > WINO_L2_U ? WINO_BIG_BLOCK_BYTES : WINO_BLOCK_BYTES;
  int64_t tb = bytes / (64 * (icp + ocp)) / WINO_MIN_TILES * WINO_MIN_TILES;
  if (tb < WINO_MIN_TILES) tb = WINO_MIN_TILES;
  if (tb > WINO_MAX_TILES) tb = WINO_MAX_TILES;
  return (int32_t)(tb < tiles ? tb : tiles);
}

int64_t tc_wino_scratch(const tinyml_uk_params_t *p) {
  const int64_t n16 = (p->oc_padded + 15) / 16 * 16;
  return 4 * (3 * n16 + 16 * (int64_t)p->wino_tiles * (round8(p->ic) + p->oc_padded));
}

/* U = G g G^T, G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1], in double:
 * each U element is one rounding from the exact value. */
void tc_wino_filter(const float g[9], float u[16]) {
  static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  double t[4][3];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j)
      t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      u[4 * i + j] = (float)(t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2]);
}
