/* Which x86 int8 conv kernel (backends/x86/conv_s8_plan.h) the layers of
 * vww_96_int8, kws_ref_model and resnet8_int8 get, and that shapes the fast
 * paths do not take fall back to the dot4 columns.  Every path gives the
 * same bytes, so test_ukernels.py cannot tell whether a fast path ran:
 * this test fails when a gate stops taking a layer it was written for.
 * It checks the choice, not the dispatch: conv_s8_vnni.c's switch on
 * uk_conv_s8_plan losing a case would pass here (and give the same bytes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../backends/x86/conv_s8_plan.h"

/* A conv blob's header as x86's packing sets it (lib/compiler/tosa/uk_pack.c):
 * 8-channel panels of tap pairs, k padded to 4, a dot4 bias. */
static tinyml_uk_params_t conv(int32_t ih, int32_t iw, int32_t ic, int32_t oh, int32_t ow,
                               int32_t oc, int32_t kh, int32_t kw, int32_t stride, int32_t pad_top,
                               int32_t pad_left) {
  tinyml_uk_params_t p = {0};
  p.kind = TINYML_UK_CONV;
  p.batch = 1;
  p.ih = ih, p.iw = iw, p.ic = ic, p.oh = oh, p.ow = ow, p.oc = oc;
  p.kh = kh, p.kw = kw, p.stride_h = p.stride_w = stride, p.dil_h = p.dil_w = 1;
  p.pad_top = pad_top, p.pad_left = pad_left;
  p.act_min = -128, p.act_max = 127;
  p.k = kh * kw * ic;
  p.k_padded = (p.k + 3) / 4 * 4;
  p.oc_block = 8, p.k_block = 2;
  p.oc_padded = (oc + 7) / 8 * 8;
  p.dot4 = 4096; /* any offset: set */
  p.scratch_bytes = 16 * p.k_padded; /* 8 pixels of int16 columns */
  return p;
}

/* Shifts in rq16's range ([33, 54]), as the first convs and vww's
 * shallow 1x1 convs have; in [32, 62], as vww's deep 1x1 convs have (their
 * dead channels); one of 31 (low: pw_conv31 takes it); one of 30 (lower:
 * below every fast path). */
static int32_t high[512], wide[512], low[512], lower[512];

static void setup_shifts(void) {
  for (int i = 0; i < 512; ++i)
    high[i] = 33 + i % 22, wide[i] = 32 + i % 31, low[i] = 33, lower[i] = 33;
  low[5] = 31;   /* vww's 128 -> 128 and 128 -> 256 convs: pw_conv31 */
  lower[5] = 30;
}

static void plan_is(tinyml_uk_params_t p, const int32_t *shift, uk_conv_s8_kernel_t want) {
  assert_int_equal(uk_conv_s8_plan(&p, shift), want);
}

static void test_first_convs(void **state) {
  (void)state;
  setup_shifts();
  plan_is(conv(96, 96, 3, 48, 48, 8, 3, 3, 2, 0, 0), high, UK_CONV_S8_LANES);   /* vww */
  plan_is(conv(49, 10, 1, 25, 5, 64, 10, 4, 2, 4, 1), high, UK_CONV_S8_LANES);  /* kws */
  plan_is(conv(32, 32, 3, 32, 32, 16, 3, 3, 1, 1, 1), high, UK_CONV_S8_LANES);  /* resnet8 */
}

static void test_pointwise(void **state) {
  (void)state;
  setup_shifts();
  /* vww_96_int8's 1x1 convs */
  static const int32_t vww[][3] = {{48, 8, 16},  {24, 16, 32}, {24, 32, 32}, {12, 32, 64},
                                   {12, 64, 64}, {6, 64, 128}, {6, 128, 128}};
  for (size_t i = 0; i < sizeof vww / sizeof vww[0]; ++i) {
    const int32_t s = vww[i][0], ic = vww[i][1], oc = vww[i][2];
    plan_is(conv(s, s, ic, s, s, oc, 1, 1, 1, 0, 0), high, UK_CONV_S8_PW);
    plan_is(conv(s, s, ic, s, s, oc, 1, 1, 1, 0, 0), wide, UK_CONV_S8_PW);
  }
  plan_is(conv(25, 5, 64, 25, 5, 64, 1, 1, 1, 0, 0), high, UK_CONV_S8_PW);  /* kws */
  /* resnet8's shortcuts: 1x1 at stride 2 */
  plan_is(conv(32, 32, 16, 16, 16, 32, 1, 1, 2, 0, 0), high, UK_CONV_S8_PW);
  plan_is(conv(16, 16, 32, 8, 8, 64, 1, 1, 2, 0, 0), high, UK_CONV_S8_PW);
  /* a shift of 31 (TOSA's single rounding): vww's deep 1x1 convs (steps
   * 14-24), and the other shapes */
  plan_is(conv(6, 6, 128, 6, 6, 128, 1, 1, 1, 0, 0), low, UK_CONV_S8_PW31);
  plan_is(conv(12, 12, 32, 12, 12, 64, 1, 1, 1, 0, 0), low, UK_CONV_S8_PW31);
  plan_is(conv(48, 48, 8, 48, 48, 16, 1, 1, 1, 0, 0), low, UK_CONV_S8_PW31);
  /* 6 pixels of 680 taps fit its rows' buffer; 4 of 1024 fit pw_conv's */
  plan_is(conv(3, 2, 680, 3, 2, 64, 1, 1, 1, 0, 0), low, UK_CONV_S8_PW31);
  plan_is(conv(3, 2, 1024, 3, 2, 64, 1, 1, 1, 0, 0), high, UK_CONV_S8_PW);
}

/* 7-9 pixels an image and 64 channels or more: pw9_conv, whatever the
 * shifts in [31, 62] (vww's steps 24 and 26, 128 and 256 -> 256 at 3x3). */
static void test_pointwise9(void **state) {
  (void)state;
  setup_shifts();
  const int32_t *any[] = {high, wide, low};
  for (int s = 0; s < 3; ++s) {
    plan_is(conv(3, 3, 128, 3, 3, 256, 1, 1, 1, 0, 0), any[s], UK_CONV_S8_PW9);
    plan_is(conv(3, 3, 256, 3, 3, 256, 1, 1, 1, 0, 0), any[s], UK_CONV_S8_PW9);
  }
  plan_is(conv(7, 1, 64, 7, 1, 64, 1, 1, 1, 0, 0), low, UK_CONV_S8_PW9);
  plan_is(conv(8, 1, 96, 8, 1, 512, 1, 1, 1, 0, 0), high, UK_CONV_S8_PW9);
  plan_is(conv(5, 5, 64, 3, 3, 128, 1, 1, 2, 0, 0), high, UK_CONV_S8_PW9); /* stride 2 */
  /* 6 or 10 pixels, 32 channels, 9 rows beyond the buffer: not pw9_conv */
  plan_is(conv(3, 2, 128, 3, 2, 128, 1, 1, 1, 0, 0), high, UK_CONV_S8_PW);
  plan_is(conv(5, 2, 128, 5, 2, 128, 1, 1, 1, 0, 0), low, UK_CONV_S8_PW31);
  plan_is(conv(3, 3, 128, 3, 3, 32, 1, 1, 1, 0, 0), high, UK_CONV_S8_PW);
  plan_is(conv(3, 3, 512, 3, 3, 64, 1, 1, 1, 0, 0), high, UK_CONV_S8_PW);
  plan_is(conv(3, 3, 128, 3, 3, 256, 1, 1, 1, 0, 0), lower, UK_CONV_S8_DOT4);
}

/* resnet8_int8's 3x3 convs after the first: pwk_conv, read in place from
 * the band (uk_pwk_band); layers that do not fit it by columns. */
static void test_pwk(void **state) {
  (void)state;
  setup_shifts();
  static const int32_t r8[][6] = {/* in, ic, out, oc, stride, pad */
                                  {32, 16, 32, 16, 1, 1}, {32, 16, 16, 32, 2, 0},
                                  {16, 32, 16, 32, 1, 1}, {16, 32, 8, 64, 2, 0},
                                  {8, 64, 8, 64, 1, 1}};
  for (size_t i = 0; i < sizeof r8 / sizeof r8[0]; ++i) {
    const int32_t *l = r8[i];
    const tinyml_uk_params_t p = conv(l[0], l[0], l[1], l[2], l[2], l[3], 3, 3, l[4], l[5], l[5]);
    plan_is(p, high, UK_CONV_S8_PWK);
    plan_is(p, wide, UK_CONV_S8_PWK);
    assert_true(uk_pwk_band(&p));
  }
  /* by columns: an image beyond the band, 6 input channels, dilation */
  tinyml_uk_params_t p = conv(40, 40, 16, 40, 40, 16, 3, 3, 1, 1, 1);
  plan_is(p, high, UK_CONV_S8_PWK);
  assert_false(uk_pwk_band(&p));
  p = conv(7, 9, 6, 7, 9, 32, 3, 3, 1, 1, 1);
  plan_is(p, high, UK_CONV_S8_PWK);
  assert_false(uk_pwk_band(&p));
  p = conv(13, 12, 8, 9, 8, 16, 3, 3, 1, 0, 0);
  p.dil_h = p.dil_w = 2;
  plan_is(p, high, UK_CONV_S8_PWK);
  assert_false(uk_pwk_band(&p));
  /* columns beyond the stack's 4 KB in the scratch: 16 pixels of 288
   * taps (3x3 32 -> 16, on the band), 8 of 576 (3x3 64 -> 32, by columns) */
  p = conv(8, 8, 32, 8, 8, 16, 3, 3, 1, 1, 1);
  assert_int_equal(uk_pwk_cols(&p), 2);
  plan_is(p, high, UK_CONV_S8_PWK);
  assert_true(uk_pwk_band(&p));
  p = conv(40, 40, 64, 40, 40, 32, 3, 3, 1, 1, 1);
  assert_int_equal(uk_pwk_cols(&p), 2);
  plan_is(p, high, UK_CONV_S8_PWK);
  assert_false(uk_pwk_band(&p));
  /* not pwk_conv: a shift of 31 or below, 48 channels, 64 -> 128 (weights
   * beyond its 36 KB), columns that neither the stack nor the scratch
   * holds */
  plan_is(conv(8, 8, 64, 8, 8, 64, 3, 3, 1, 1, 1), low, UK_CONV_S8_DOT4);
  plan_is(conv(8, 8, 64, 8, 8, 64, 3, 3, 1, 1, 1), lower, UK_CONV_S8_DOT4);
  plan_is(conv(8, 8, 16, 8, 8, 48, 3, 3, 1, 1, 1), high, UK_CONV_S8_DOT4);
  plan_is(conv(8, 8, 64, 8, 8, 128, 3, 3, 1, 1, 1), high, UK_CONV_S8_DOT4);
  p = conv(8, 8, 32, 8, 8, 16, 3, 3, 1, 1, 1);
  p.scratch_bytes = 8 * p.k_padded; /* 4 pixels' int16 columns (AVX2's) */
  assert_int_equal(uk_pwk_cols(&p), 0);
  plan_is(p, high, UK_CONV_S8_DOT4);
}

static void test_fallbacks(void **state) {
  (void)state;
  setup_shifts();
  tinyml_uk_params_t p = conv(12, 12, 32, 12, 12, 64, 1, 1, 1, 0, 0);
  p.dot4 = 0; /* a blob for a CPU without VNNI */
  plan_is(p, high, UK_CONV_S8_MADD);
  /* one shift below 31; a 31 where 6 pixels do not fit */
  plan_is(conv(12, 12, 32, 12, 12, 64, 1, 1, 1, 0, 0), lower, UK_CONV_S8_DOT4);
  plan_is(conv(3, 2, 684, 3, 2, 64, 1, 1, 1, 0, 0), low, UK_CONV_S8_DOT4);
  plan_is(conv(96, 96, 3, 48, 48, 8, 3, 3, 2, 0, 0), low, UK_CONV_S8_DOT4);
  plan_is(conv(96, 96, 3, 48, 48, 8, 3, 3, 2, 0, 0), wide, UK_CONV_S8_DOT4);
  /* 1x1: 12 or 48 channels, K not whole 4-tap groups, rows beyond the
   * block's buffer, padding (pwk_conv), a clamp wider than int8 */
  plan_is(conv(6, 7, 8, 6, 7, 12, 1, 1, 1, 0, 0), high, UK_CONV_S8_DOT4);
  plan_is(conv(5, 5, 16, 5, 5, 48, 1, 1, 1, 0, 0), high, UK_CONV_S8_DOT4);
  plan_is(conv(5, 6, 6, 5, 6, 16, 1, 1, 1, 0, 0), high, UK_CONV_S8_DOT4);
  plan_is(conv(3, 4, 264, 3, 4, 16, 1, 1, 1, 0, 0), high, UK_CONV_S8_DOT4);
  plan_is(conv(4, 5, 16, 5, 5, 32, 1, 1, 1, 1, 0), high, UK_CONV_S8_PWK); /* by columns */
  p = conv(6, 6, 16, 6, 6, 32, 1, 1, 1, 0, 0);
  p.act_max = 300;
  plan_is(p, high, UK_CONV_S8_DOT4);
  p = conv(96, 96, 3, 48, 48, 8, 3, 3, 2, 0, 0);
  p.act_min = -129;
  plan_is(p, high, UK_CONV_S8_DOT4);
  /* first convs: more than 4 channels, dilation, more than 64 taps */
  plan_is(conv(9, 7, 5, 9, 7, 13, 3, 3, 1, 1, 1), high, UK_CONV_S8_DOT4);
  p = conv(13, 12, 3, 9, 8, 16, 3, 3, 1, 0, 0);
  p.dil_h = p.dil_w = 2;
  plan_is(p, high, UK_CONV_S8_PWK); /* by columns */
  /* (pwk_conv takes it: 16 pixels of 324 taps in the scratch) */
  plan_is(conv(20, 20, 4, 12, 12, 16, 9, 9, 1, 0, 0), high, UK_CONV_S8_PWK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_first_convs),
      cmocka_unit_test(test_pointwise),
      cmocka_unit_test(test_pointwise9),
      cmocka_unit_test(test_pwk),
      cmocka_unit_test(test_fallbacks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
