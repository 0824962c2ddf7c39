/* White-box tests of Winograd F(2x2, 3x3) and F(4x4, 3x3)'s compile-time half
 * (lib/compiler/tosa/uk_wino.c): which convs take it, how many tiles a
 * block holds, and the filter transform.  The kernels are tested against
 * the Linalg path in test_ukernels.py. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends/registry.h"
#include "lib/compiler/tosa/uk_wino.h"

/* The thresholds are the x86-64 backend's (measured there). */
static const tc_wino_tuning_t *x86;

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
  assert_int_not_equal(tc_wino_m(x86, &p), 0);
  tinyml_uk_params_t q = p;
  q.stride_w = 2;
  assert_int_equal(tc_wino_m(x86, &q), 0);
  q = p;
  q.dil_h = 2;
  assert_int_equal(tc_wino_m(x86, &q), 0);
  q = p;
  q.kw = 1;
  assert_int_equal(tc_wino_m(x86, &q), 0);
  q = p;
  q.kind = TINYML_UK_DEPTHWISE_F32;
  assert_int_equal(tc_wino_m(x86, &q), 0);
}

static void test_channels_and_weights(void **state) {
  (void)state;
  tinyml_uk_params_t p = conv3x3(28, 28, 15, 64);
  assert_int_equal(tc_wino_m(x86, &p), 0); /* too few input channels */
  p = conv3x3(28, 28, 64, 15);
  assert_int_equal(tc_wino_m(x86, &p), 0); /* too few output channels */
  p = conv3x3(55, 55, 16, 64); /* SqueezeNet's fire2: the bound itself */
  assert_int_equal(tc_wino_m(x86, &p), 4);
  p = conv3x3(14, 14, 256, 256);      /* U of exactly 4 MB for F(2x2, 3x3) */
  assert_int_equal(tc_wino_m(x86, &p), 2);
  p = conv3x3(14, 14, 256, 264); /* just over */
  assert_int_equal(tc_wino_m(x86, &p), 0);
}

/* F(4x4, 3x3) while its U is at most 2.5 MB and its tiles cover at most
 * 1.2 times the outputs; F(2x2, 3x3) otherwise. */
static void test_tile_size(void **state) {
  (void)state;
  tinyml_uk_params_t p = conv3x3(56, 56, 64, 64); /* ResNet-50's 56x56 and 28x28 stages */
  assert_int_equal(tc_wino_m(x86, &p), 4);
  p = conv3x3(28, 28, 128, 128);
  assert_int_equal(tc_wino_m(x86, &p), 4);
  p = conv3x3(27, 27, 32, 128); /* SqueezeNet: tiles cover 28x28 */
  assert_int_equal(tc_wino_m(x86, &p), 4);
  p = conv3x3(13, 13, 64, 256); /* ... 16x16 */
  assert_int_equal(tc_wino_m(x86, &p), 2);
  p = conv3x3(8, 10, 32, 32); /* 8x12: exactly 1.2 times */
  assert_int_equal(tc_wino_m(x86, &p), 4);
  p = conv3x3(7, 10, 32, 32); /* 8x12 for 7x10 */
  assert_int_equal(tc_wino_m(x86, &p), 2);
  p = conv3x3(8, 8, 568, 32); /* U of 2,617,344 bytes */
  assert_int_equal(tc_wino_m(x86, &p), 4);
  p = conv3x3(8, 8, 576, 32); /* 2,654,208 */
  assert_int_equal(tc_wino_m(x86, &p), 2);
}

static tinyml_uk_params_t with_m(tinyml_uk_params_t p, int32_t m) {
  p.wino_m = m;
  return p;
}

static void test_tiles_per_block(void **state) {
  (void)state;
  /* U in L2: V and M of 256 KB, in twelves */
  tinyml_uk_params_t p = with_m(conv3x3(56, 56, 64, 64), 2);
  assert_int_equal(tc_wino_tiles(x86, &p), 24);
  p = with_m(conv3x3(28, 28, 128, 128), 2);
  assert_int_equal(tc_wino_tiles(x86, &p), 12);
  p = with_m(conv3x3(6, 6, 32, 32), 2); /* 9 tiles: one block of all */
  assert_int_equal(tc_wino_tiles(x86, &p), 9);
  p = with_m(conv3x3(56, 56, 64, 64), 4); /* 36 positions: 14 tiles' worth */
  assert_int_equal(tc_wino_tiles(x86, &p), 12);
  /* U of 4 MB: up to 2 MB of V and M, so ResNet-50's 14x14 convs read U once */
  p = with_m(conv3x3(14, 14, 256, 256), 2);
  assert_int_equal(tc_wino_tiles(x86, &p), 49);
  p = with_m(conv3x3(56, 56, 256, 256), 2);
  assert_int_equal(tc_wino_tiles(x86, &p), 60);
  p = with_m(conv3x3(28, 28, 128, 128), 4); /* 2.25 MB of U, but small blocks */
  assert_int_equal(tc_wino_tiles(x86, &p), 12);
  p = with_m(conv3x3(56, 56, 136, 136), 2); /* 1.2 MB: capped at 96 */
  assert_int_equal(tc_wino_tiles(x86, &p), 96);
}

/* V and M of each position start an odd number of 64-byte lines apart. */
static void test_scratch(void **state) {
  (void)state;
  assert_int_equal(tinyml_uk_wino_stride(96 * 136), 96 * 136 + 16); /* 816 lines -> 817 */
  assert_int_equal(tinyml_uk_wino_stride(12 * 64), 12 * 64 + 16);   /* 48 -> 49 */
  assert_int_equal(tinyml_uk_wino_stride(9 * 40), 368);             /* 22.5 -> 23 */
  tinyml_uk_params_t p = with_m(conv3x3(56, 56, 136, 136), 2);
  p.wino_tiles = 96;
  assert_int_equal(tc_wino_scratch(&p), 4 * (3 * 144 + 16 * 2 * (96 * 136 + 16)));
  p = with_m(conv3x3(20, 20, 35, 37), 4);
  p.wino_tiles = 12;
  assert_int_equal(tc_wino_scratch(&p), 4 * (3 * 48 + 36 * 2 * (12 * 40 + 16)));
}

/* Y = A^T [(G g G^T) . (B^T d B)] A is the 3x3 conv of d (valid, m x m),
 * for B^T and A^T as the kernels apply them. */
static void check_filter(int m, const double *bt, const double *at) {
  const int n = m + 2;
  float g[9], u[36];
  double d[6][6], mm[6][6], t[4][6];
  for (int i = 0; i < 9; ++i) g[i] = (float)(i * 37 % 11) / 4.0f - 1.25f;
  for (int i = 0; i < n * n; ++i) d[i / n][i % n] = (double)(i * 13 % 7) - 2.5;
  tc_wino_filter(g, m, u);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b) s += bt[i * n + a] * d[a][b] * bt[j * n + b];
      mm[i][j] = s * u[n * i + j];
    }
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < n; ++j) {
      t[r][j] = 0;
      for (int a = 0; a < n; ++a) t[r][j] += at[r * n + a] * mm[a][j];
    }
  for (int r = 0; r < m; ++r)
    for (int s = 0; s < m; ++s) {
      double y = 0, want = 0;
      for (int j = 0; j < n; ++j) y += t[r][j] * at[s * n + j];
      for (int ky = 0; ky < 3; ++ky)
        for (int kx = 0; kx < 3; ++kx) want += d[r + ky][s + kx] * g[3 * ky + kx];
      assert_true(fabs(y - want) < 1e-4);
    }
}

static void test_filter_transform(void **state) {
  (void)state;
  static const double BT2[16] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
  static const double AT2[8] = {1, 1, 1, 0, 0, 1, -1, -1};
  check_filter(2, BT2, AT2);
  static const double BT4[36] = {4, 0, -5, 0,  1, 0, 0, -4, -4, 1,  1, 0,
                                 0, 4, -4, -1, 1, 0, 0, -2, -1, 2,  1, 0,
                                 0, 2, -1, -2, 1, 0, 0, 4,  0,  -5, 0, 1};
  static const double AT4[24] = {1, 1, 1,  1, 1,  0, 0, 1, -1, 2, -2, 0,
                                 0, 1, 1,  4, 4,  0, 0, 1, -1, 8, -8, 1};
  check_filter(4, BT4, AT4);
}

int main(void) {
  const tinyml_backend_t *be = tinyml__backend_find("x86-64");
  if (!be) {
    printf("SKIP: the x86-64 backend was not built\n");
    return 77;
  }
  x86 = &be->ukernels.f32_tuning.winograd;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_only_3x3_stride_1),
      cmocka_unit_test(test_channels_and_weights),
      cmocka_unit_test(test_tile_size),
      cmocka_unit_test(test_tiles_per_block),
      cmocka_unit_test(test_scratch),
      cmocka_unit_test(test_filter_transform),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
