/* White-box tests of Winograd F(2x2, 3x3)'s compile-time half
 * (lib/compiler/ukernel_wino.c): which convs take it, how many tiles a
 * block holds, and the filter transform.  The kernels are tested against
 * the Linalg path in test_ukernels.py. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/compiler/ukernel.h"

/* A 3x3 stride-1 f32 conv, padding 1: oh = h, ow = w. */
static tinyml_uk_params_t conv3x3(int32_t h, int32_t w, int32_t ic, int32_t oc) {
  tinyml_uk_params_t p;
  memset(&p, 0, sizeof(p));
  p.kind = TINYML_UK_CONV_F32;
  p.batch = 1;
  p.ih = p.oh = h;
  p.iw = p.ow = w;
  p.ic = ic;
  p.oc = oc;
  p.oc_padded = (oc + 7) / 8 * 8;
  p.kh = p.kw = 3;
  p.stride_h = p.stride_w = p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = 1;
  return p;
}

static void test_only_3x3_stride_1(void **state) {
  (void)state;
  tinyml_uk_params_t p = conv3x3(56, 56, 64, 64);
  assert_int_not_equal(tc_wino_tiles(&p), 0);
  tinyml_uk_params_t q = p;
  q.stride_w = 2;
  assert_int_equal(tc_wino_tiles(&q), 0);
  q = p;
  q.dil_h = 2;
  assert_int_equal(tc_wino_tiles(&q), 0);
  q = p;
  q.kw = 1;
  assert_int_equal(tc_wino_tiles(&q), 0);
  q = p;
  q.kind = TINYML_UK_DEPTHWISE_F32;
  assert_int_equal(tc_wino_tiles(&q), 0);
}

static void test_channels_and_weights(void **state) {
  (void)state;
  tinyml_uk_params_t p = conv3x3(28, 28, 31, 64);
  assert_int_equal(tc_wino_tiles(&p), 0); /* too few input channels */
  p = conv3x3(28, 28, 64, 24);
  assert_int_equal(tc_wino_tiles(&p), 0); /* too few output channels */
  p = conv3x3(14, 14, 256, 256);          /* U of exactly 4 MB */
  assert_int_not_equal(tc_wino_tiles(&p), 0);
  p = conv3x3(14, 14, 256, 264); /* just over */
  assert_int_equal(tc_wino_tiles(&p), 0);
}

static void test_tiles_per_block(void **state) {
  (void)state;
  /* U in L2: V and M of 256 KB, in twelves */
  tinyml_uk_params_t p = conv3x3(56, 56, 64, 64);
  assert_int_equal(tc_wino_tiles(&p), 24);
  p = conv3x3(28, 28, 128, 128);
  assert_int_equal(tc_wino_tiles(&p), 12);
  p = conv3x3(6, 6, 32, 32); /* 9 tiles: one block of all */
  assert_int_equal(tc_wino_tiles(&p), 9);
  /* U of 4 MB: up to 2 MB of V and M, so ResNet-50's 14x14 convs read U once */
  p = conv3x3(14, 14, 256, 256);
  assert_int_equal(tc_wino_tiles(&p), 49);
  p = conv3x3(56, 56, 256, 256);
  assert_int_equal(tc_wino_tiles(&p), 60);
  p = conv3x3(56, 56, 136, 136); /* 1.2 MB: capped at 96 */
  assert_int_equal(tc_wino_tiles(&p), 96);
  p.wino_tiles = 96;
  assert_int_equal(tc_wino_scratch(&p), 4 * (3 * 144 + 16 * 96 * (136 + 136)));
}

/* Y = A^T [(G g G^T) . (B^T d B)] A is the 3x3 conv of d (valid, 2x2). */
static void test_filter_transform(void **state) {
  (void)state;
  static const double BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static const double AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  float g[9], u[16];
  double d[4][4], m[4][4], t[2][4];
  for (int i = 0; i < 9; ++i) g[i] = (float)(i * 37 % 11) / 4.0f - 1.25f;
  for (int i = 0; i < 16; ++i) d[i / 4][i % 4] = (double)(i * 13 % 7) - 2.5;
  tc_wino_filter(g, u);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) s += BT[i][a] * d[a][b] * BT[j][b];
      m[i][j] = s * u[4 * i + j];
    }
  for (int r = 0; r < 2; ++r)
    for (int j = 0; j < 4; ++j) t[r][j] = AT[r][0] * m[0][j] + AT[r][1] * m[1][j] +
                                          AT[r][2] * m[2][j] + AT[r][3] * m[3][j];
  for (int r = 0; r < 2; ++r)
    for (int s = 0; s < 2; ++s) {
      double y = 0, want = 0;
      for (int j = 0; j < 4; ++j) y += t[r][j] * AT[s][j];
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) want += d[r + ky][s + kx] * g[3 * ky + kx];
      assert_true(fabs(y - want) < 1e-5);
    }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_only_3x3_stride_1),
      cmocka_unit_test(test_channels_and_weights),
      cmocka_unit_test(test_tiles_per_block),
      cmocka_unit_test(test_filter_transform),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
