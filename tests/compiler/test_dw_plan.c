/* White-box test of the int8 depthwise conv's kernel choice on x86-64
 * (backends/x86/depthwise_s8_plan.h).  The row kernels and the per-pixel
 * fallback give the same bytes, so no output test fails when a layer stops
 * taking the row kernels; this one does.  The shapes are vww_96_int8's and
 * kws_ref_model's depthwise layers (3x3, TFLite's SAME padding), with
 * shifts in rq16's range as every model's here (docs/PERF.md); the test's
 * are 37-44.  It checks the choice, not the dispatch: depthwise_s8.c
 * ignoring uk_dw_plan's answer would pass here (and give the same bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/x86/depthwise_s8_plan.h"

enum { MAX_CH = 512 };
static int32_t mults[MAX_CH], shifts[MAX_CH];

/* A 3x3 depthwise layer on an h x w x ic input at `stride`, SAME padding
 * (TFLite: the extra row and column at the bottom and right). */
static tinyml_uk_params_t dw3x3(int32_t h, int32_t w, int32_t ic, int32_t stride) {
  tinyml_uk_params_t p;
  memset(&p, 0, sizeof(p));
  p.kind = TINYML_UK_DEPTHWISE;
  p.batch = 1;
  p.ih = h;
  p.iw = w;
  p.ic = p.oc = ic;
  p.oh = (h + stride - 1) / stride;
  p.ow = (w + stride - 1) / stride;
  p.kh = p.kw = 3;
  p.stride_h = p.stride_w = stride;
  p.dil_h = p.dil_w = 1;
  p.pad_top = ((p.oh - 1) * stride + 3 - h) / 2;
  p.pad_left = ((p.ow - 1) * stride + 3 - w) / 2;
  return p;
}

static void set_shifts(int32_t n) {
  for (int32_t o = 0; o < MAX_CH; ++o) {
    mults[o] = o < n ? (1 << 30) + o * 4099 : 0;
    shifts[o] = o < n ? 37 + o % 8 : 0;
  }
}

static void test_vww_rows(void **state) {
  (void)state;
  static const int32_t layers[][4] = { /* h, w, ic, stride */
      {48, 48, 8, 1},  {48, 48, 16, 2}, {24, 24, 32, 1}, {24, 24, 32, 2}, {12, 12, 64, 1},
      {12, 12, 64, 2}, {6, 6, 128, 1},  {6, 6, 128, 2}};
  for (size_t i = 0; i < sizeof(layers) / sizeof(layers[0]); ++i) {
    const tinyml_uk_params_t p = dw3x3(layers[i][0], layers[i][1], layers[i][2], layers[i][3]);
    set_shifts(p.oc);
    assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_MAP);
    assert_int_equal(uk_dw_plan(&p, mults, shifts, 0), UK_DW_PIXELS); /* AVX2 */
  }
  /* the last, 3x3x256, where the row kernels did not pay */
  const tinyml_uk_params_t p = dw3x3(3, 3, 256, 1);
  set_shifts(p.oc);
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_PIXELS);
}

static void test_kws_rows(void **state) {
  (void)state;
  const tinyml_uk_params_t p = dw3x3(25, 5, 64, 1);
  set_shifts(p.oc);
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_MAP);
}

/* The padded map's chunks: as many output rows as their window rows fit
 * in UK_DW_MAP_BYTES (vww's first layer: 400-byte rows, 40 of
 * them, 38 output rows); where not one output row's do, the bands. */
static void test_map_rows(void **state) {
  (void)state;
  tinyml_uk_params_t p = dw3x3(48, 48, 8, 1);
  assert_int_equal(uk_dw_map_rows(&p), 38);
  p = dw3x3(48, 48, 16, 2); /* 784-byte rows, 20 of them */
  assert_int_equal(uk_dw_map_rows(&p), 9);
  p = dw3x3(6, 6, 128, 1);
  assert_int_equal(uk_dw_map_rows(&p), 14);
  p = dw3x3(5, 46, 128, 1); /* 3 rows of 48 columns: 18 KB */
  set_shifts(p.oc);
  assert_int_equal(uk_dw_map_rows(&p), 0);
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_ROWS);
  p = dw3x3(3, 690, 8, 1);
  set_shifts(p.oc);
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_ROWS8);
}

/* One channel's shift outside rq16's [33, 54] sends the layer to the
 * per-pixel kernels, whose rescale takes any shift. */
static void test_shift_outside_rq16(void **state) {
  (void)state;
  static const int32_t bad[] = {32, 20, 55, 62};
  static const int32_t ics[] = {8, 16, 72, 128};
  for (size_t i = 0; i < sizeof(ics) / sizeof(ics[0]); ++i)
    for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); ++j) {
      const tinyml_uk_params_t p = dw3x3(6, 6, ics[i], 1);
      set_shifts(p.oc);
      assert_int_not_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_PIXELS);
      shifts[p.oc - 1] = bad[j];
      assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_PIXELS);
    }
}

/* A negative multiplier: the row kernels' rescale takes the product's
 * sign for v's. */
static void test_negative_mult(void **state) {
  (void)state;
  const tinyml_uk_params_t p = dw3x3(6, 6, 128, 1);
  set_shifts(p.oc);
  mults[5] = 0;
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_MAP);
  mults[5] = -(1 << 30);
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_PIXELS);
}

/* The limits: more than 128 channels, more than 9 taps, a window wider
 * than the band; more than UK_MAX_TAPS taps go to the generic loop. */
static void test_limits(void **state) {
  (void)state;
  tinyml_uk_params_t p = dw3x3(6, 6, 136, 1);
  set_shifts(p.oc);
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_PIXELS);
  p = dw3x3(10, 10, 16, 1);
  p.kh = 2;
  p.kw = 5;
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_PIXELS);
  p.kh = 1;
  p.kw = 5;
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_MAP);
  p = dw3x3(20, 20, 128, 1);
  p.dil_w = 6; /* 3 rows of 13 columns of 128 bytes */
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_PIXELS);
  p = dw3x3(20, 20, 16, 1);
  p.kh = p.kw = 9;
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 1), UK_DW_GENERIC);
  assert_int_equal(uk_dw_plan(&p, mults, shifts, 0), UK_DW_GENERIC);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vww_rows),
      cmocka_unit_test(test_kws_rows),
      cmocka_unit_test(test_map_rows),
      cmocka_unit_test(test_shift_outside_rq16),
      cmocka_unit_test(test_negative_mult),
      cmocka_unit_test(test_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
