/* White-box test of which code path x86-64's kernels take where their
 * paths give the same bytes (ukernels_common.h, UK_PATH): the output tests
 * pass whichever runs, so a dispatch that stopped taking the fast one
 * (depthwise_s8.c ignoring UK_DW_MAP, pwk_run never using its band) would
 * go unseen; test_dw_plan.c checks only the choice, not that it is obeyed.
 * Here the kernels' sources are built natively with UK_PATH counting each
 * name's runs; each case runs a layer through the kernel's entry on a
 * hand-made blob (pwk_conv, which tinyml_uk_conv_s8 calls, on a hand-made
 * context) and checks both the output against a scalar reference and
 * which paths counted.
 * Needs AVX-512 (F, BW, VL, DQ) and VNNI: isa_gate.c's main() checks
 * the CPU and runs these cases only where it has them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The paths' names, as the kernels write them: an enum to count by, and
 * strings for the failures' messages. */
#define UK_PATHS(X)                                                                      \
  X(dw_s8_generic) X(dw_s8_map) X(dw_s8_rows) X(dw_s8_pixels) X(dw_s8_pair) X(pwk_band) \
  X(pwk_cols) X(dw_f32_rows3) X(dw_f32_block) X(dw_f32_edges) X(dw_f32_window_row)      \
  X(conv_f32_inplace) X(conv_f32_gathered)
#define UKP_ENUM(n) UKP_##n,
#define UKP_NAME(n) #n,
enum uk_path { UK_PATHS(UKP_ENUM) UKP_COUNT };
static const char *const names[] = {UK_PATHS(UKP_NAME)};
static long hits[UKP_COUNT];
#define UK_PATH(name) ((void)++hits[UKP_##name])

/* The int8 and f32 units' file-local helpers share some names. */
#define dw_run dw_run_s8
#define dw_pixels dw_pixels_s8
#define dw_block dw_block_s8
#include "backends/x86/depthwise_s8.c"
#include "backends/x86/depthwise_s8_avx512.c"
#undef dw_run
#undef dw_pixels
#undef dw_block
#include "backends/x86/conv_s8_pw.c"
#include "backends/x86/window_rows.c"
#include "backends/x86/depthwise_f32.c"
#include "backends/x86/depthwise_f32_avx512.c"
#include "backends/x86/conv_f32.c"
#include "backends/x86/conv_f32_avx512.c"
#include "backends/x86/wino_f32.c"

int isa_tests(void);

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static int32_t rnd(int32_t lo, int32_t hi) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return lo + (int32_t)(rs % (uint64_t)(hi - lo + 1));
}

/* A kh x kw layer on one h x w x ic image, SAME padding (TFLite's: the
 * extra row and column at the bottom and right), k and oc for a conv. */
static tinyml_uk_params_t layer(int32_t h, int32_t w, int32_t ic, int32_t oc, int32_t k,
                                int32_t stride) {
  tinyml_uk_params_t p;
  memset(&p, 0, sizeof(p));
  p.version = TINYML_UK_VERSION;
  p.batch = 1;
  p.ih = h;
  p.iw = w;
  p.ic = ic;
  p.oc = p.oc_padded = oc;
  p.kh = p.kw = k;
  p.stride_h = p.stride_w = stride;
  p.dil_h = p.dil_w = 1;
  p.oh = (h + stride - 1) / stride;
  p.ow = (w + stride - 1) / stride;
  p.pad_top = ((p.oh - 1) * stride + k - h) / 2;
  p.pad_left = ((p.ow - 1) * stride + k - w) / 2;
  p.in_zp = -3;
  p.out_zp = 5;
  p.act_min = -128;
  p.act_max = 127;
  return p;
}

/* Input pixel (iy, ix)'s channel ch when it lies in the image, else -1. */
static long in_at(const tinyml_uk_params_t *p, int32_t oy, int32_t ox, int32_t t, int32_t ch) {
  const int32_t iy = oy * p->stride_h - p->pad_top + t / p->kw * p->dil_h;
  const int32_t ix = ox * p->stride_w - p->pad_left + t % p->kw * p->dil_w;
  if (iy < 0 || iy >= p->ih || ix < 0 || ix >= p->iw) return -1;
  return ((long)iy * p->iw + ix) * p->ic + ch;
}

/* ---- the int8 depthwise conv (tinyml_uk_depthwise_s8) ------------------ */

/* A blob as lib/compiler/tosa/uk_pack.c lays it out for x86 (uk_abi.h):
 * the header, bias, mult, shift, the rounding terms, the channel records,
 * the [kh][kw][ic] weights; shifts in rq16's range (37-44, as the
 * models'), but channel 0's `shift0` when that is not 0. */
static uint8_t *dw_blob(tinyml_uk_params_t p, int32_t shift0) {
  const int32_t n16 = (p.oc + 15) / 16 * 16, chan = 4 * n16;
  p.kind = TINYML_UK_DEPTHWISE;
  p.k = p.kh * p.kw * p.ic;
  p.bias_off = 256;
  p.mult_off = p.bias_off + chan;
  p.shift_off = p.mult_off + chan;
  p.round_off = p.shift_off + chan;
  p.chan_off = p.round_off + 4 * chan;
  p.weights_off = p.chan_off + p.oc * (int32_t)sizeof(tinyml_uk_chan_t);
  uint8_t *b = aligned_alloc(64, (size_t)(p.weights_off + p.k + 63) / 64 * 64);
  memset(b, 0, (size_t)p.weights_off);
  memcpy(b, &p, sizeof(p));
  int32_t *bias = (int32_t *)(b + p.bias_off), *mult = (int32_t *)(b + p.mult_off),
          *shift = (int32_t *)(b + p.shift_off);
  int64_t *round = (int64_t *)(b + p.round_off);
  tinyml_uk_chan_t *ch = (tinyml_uk_chan_t *)(b + p.chan_off);
  for (int32_t o = 0; o < n16; ++o) {
    bias[o] = o < p.oc ? rnd(-3000, 3000) : 0;
    mult[o] = o < p.oc ? (1 << 30) + rnd(0, 1 << 29) : 0;
    shift[o] = o >= p.oc ? 2 : o == 0 && shift0 ? shift0 : rnd(37, 44);
    const int64_t r = (int64_t)1 << (shift[o] - 1), d = shift[o] > 31 ? (int64_t)1 << 30 : 0;
    round[o] = r + d;
    round[n16 + o] = r - d;
    if (o < p.oc) ch[o] = (tinyml_uk_chan_t){bias[o], mult[o], shift[o], 0, r + d, r - d};
  }
  for (int32_t i = 0; i < p.k; ++i) b[p.weights_off + i] = (uint8_t)rnd(-128, 127);
  return b;
}

/* The layer's pixels as TFLite's reference kernel sums and rescales them. */
static void dw_s8_ref(const uint8_t *blob, const int8_t *in, int8_t *out) {
  const uk_ctx_t c = uk_ctx(blob);
  const tinyml_uk_params_t *p = c.p;
  for (int32_t oy = 0; oy < p->oh; ++oy)
    for (int32_t ox = 0; ox < p->ow; ++ox)
      for (int32_t ch = 0; ch < p->ic; ++ch) {
        int32_t acc = c.bias[ch];
        for (int32_t t = 0; t < p->kh * p->kw; ++t) {
          const long at = in_at(p, oy, ox, t, ch);
          if (at >= 0) acc += (in[at] - p->in_zp) * c.weights[t * p->ic + ch];
        }
        out[((long)oy * p->ow + ox) * p->oc + ch] = uk_requant(p, acc, c.mult[ch], c.shift[ch]);
      }
}

/* Runs the layer in `wgs` workgroups; asserts the reference's bytes. */
static void dw_s8_run(const tinyml_uk_params_t *p, int32_t shift0, int32_t wgs) {
  uint8_t *blob = dw_blob(*p, shift0);
  const size_t ni = (size_t)p->ih * p->iw * p->ic, no = (size_t)p->oh * p->ow * p->oc;
  int8_t *in = malloc(ni), *out = malloc(no), *ref = malloc(no);
  for (size_t i = 0; i < ni; ++i) in[i] = (int8_t)rnd(-128, 127);
  memset(out, 0x55, no);
  memset(hits, 0, sizeof(hits));
  for (int32_t wg = 0; wg < wgs; ++wg) tinyml_uk_depthwise_s8(in, blob, out, 0, wg, wgs);
  dw_s8_ref(blob, in, ref);
  assert_memory_equal(out, ref, no);
  free(blob), free(in), free(out), free(ref);
}

/* Asserts that exactly the paths in `want` (a mask of uk_path bits) among
 * [first, last] counted. */
static void only(int first, int last, unsigned want) {
  for (int i = first; i <= last; ++i) {
    if ((hits[i] > 0) != (want >> i & 1u))
      print_message("%s ran %ld times, expected %s\n", names[i], hits[i],
                    want >> i & 1u ? "some" : "none");
    assert_true((hits[i] > 0) == (want >> i & 1u));
  }
}
#define BIT(n) (1u << UKP_##n)
#define ONLY_DW_S8(want) only(UKP_dw_s8_generic, UKP_dw_s8_pair, want)

/* vww_96_int8's first depthwise layer (test_dw_plan.c: UK_DW_MAP), and
 * kws_ref_model's, on one and on three workgroups. */
static void test_dw_s8_map(void **state) {
  (void)state;
  tinyml_uk_params_t p = layer(48, 48, 8, 8, 3, 1);
  dw_s8_run(&p, 0, 1);
  ONLY_DW_S8(BIT(dw_s8_map));
  p = layer(25, 5, 64, 64, 3, 1);
  dw_s8_run(&p, 0, 3);
  ONLY_DW_S8(BIT(dw_s8_map));
}

/* Rows too wide for a map chunk: the row kernels (UK_DW_ROWS, ROWS8). */
static void test_dw_s8_rows(void **state) {
  (void)state;
  tinyml_uk_params_t p = layer(5, 46, 128, 128, 3, 1);
  dw_s8_run(&p, 0, 2);
  ONLY_DW_S8(BIT(dw_s8_rows));
  p = layer(3, 690, 8, 8, 3, 1);
  dw_s8_run(&p, 0, 1);
  ONLY_DW_S8(BIT(dw_s8_rows));
}

/* A shift outside rq16's range (32): the pixel kernels, two pixels a call
 * (uk_dw8x2_avx512) on 8 channels. */
static void test_dw_s8_pixels(void **state) {
  (void)state;
  tinyml_uk_params_t p = layer(12, 12, 24, 24, 3, 2);
  dw_s8_run(&p, 32, 1);
  ONLY_DW_S8(BIT(dw_s8_pixels));
  p = layer(12, 12, 8, 8, 3, 1);
  dw_s8_run(&p, 32, 1);
  ONLY_DW_S8(BIT(dw_s8_pixels) | BIT(dw_s8_pair));
}

/* More than UK_MAX_TAPS taps: the portable loop. */
static void test_dw_s8_generic(void **state) {
  (void)state;
  tinyml_uk_params_t p = layer(12, 12, 16, 16, 9, 1);
  dw_s8_run(&p, 0, 1);
  ONLY_DW_S8(BIT(dw_s8_generic));
}

/* ---- pwk_conv (conv_s8_pw.c) ------------------------------------------ */

/* A dot4 conv's context as uk_pack.c packs it (8 channels x 2 taps,
 * bias4 = bias - (in_zp + 128) * sum w), its weights [oc][k] in wl. */
static uk_ctx_t pwk_ctx(tinyml_uk_params_t *p, int32_t *bias, int8_t *wl) {
  p->kind = TINYML_UK_CONV;
  p->k = p->k_padded = p->kh * p->kw * p->ic;
  p->oc_block = 8;
  p->k_block = 2;
  p->dot4 = 1;
  int32_t *mult = malloc(4 * (size_t)p->oc), *shift = malloc(4 * (size_t)p->oc),
          *bias4 = malloc(4 * (size_t)p->oc);
  int8_t *w = calloc((size_t)p->oc * p->k, 1);
  for (int32_t o = 0; o < p->oc; ++o) {
    bias[o] = rnd(-40000, 40000);
    mult[o] = (1 << 30) + rnd(0, 1 << 29);
    shift[o] = rnd(36, 44);
    uint32_t s = 0;
    for (int32_t k = 0; k < p->k; ++k) {
      const int8_t v = (int8_t)rnd(-128, 127);
      wl[(size_t)o * p->k + k] = v;
      s += (uint32_t)v;
      w[((size_t)(o / 8) * (p->k / 2) + k / 2) * 16 + (o % 8) * 2 + k % 2] = v;
    }
    bias4[o] = (int32_t)((uint32_t)bias[o] - (uint32_t)(p->in_zp + 128) * s);
  }
  return (uk_ctx_t){p, bias4, mult, shift, w, 0, 0, 0};
}

/* The conv as TFLite's reference kernel computes it. */
static void conv_ref(const uk_ctx_t *c, const int32_t *bias, const int8_t *wl, const int8_t *in,
                     int8_t *out) {
  const tinyml_uk_params_t *p = c->p;
  const int32_t taps = p->kh * p->kw;
  for (int32_t q = 0; q < p->oh * p->ow; ++q)
    for (int32_t o = 0; o < p->oc; ++o) {
      int32_t acc = bias[o];
      for (int32_t t = 0; t < taps; ++t)
        for (int32_t ci = 0; ci < p->ic; ++ci) {
          const long at = in_at(p, q / p->ow, q % p->ow, t, ci);
          if (at >= 0) acc += (in[at] - p->in_zp) * wl[((size_t)o * taps + t) * p->ic + ci];
        }
      out[(size_t)q * p->oc + o] = uk_requant(p, acc, c->mult[o], c->shift[o]);
    }
}

/* Runs pwk_conv on the layer in `wgs` bands; asserts the reference's
 * bytes. */
static void pwk_check(tinyml_uk_params_t p, int32_t wgs) {
  int32_t *bias = malloc(4 * (size_t)p.oc);
  int8_t *wl = malloc((size_t)p.oc * p.kh * p.kw * p.ic);
  const uk_ctx_t c = pwk_ctx(&p, bias, wl);
  const size_t ni = (size_t)p.ih * p.iw * p.ic, no = (size_t)p.oh * p.ow * p.oc;
  int8_t *in = malloc(ni), *out = malloc(no), *ref = malloc(no);
  for (size_t i = 0; i < ni; ++i) in[i] = (int8_t)rnd(-128, 127);
  memset(out, 0x55, no);
  memset(hits, 0, sizeof(hits));
  const int32_t total = p.oh * p.ow;
  for (int32_t g = 0; g < wgs; ++g)
    assert_true(pwk_conv(&c, in, out, 0, total * g / wgs, total * (g + 1) / wgs));
  conv_ref(&c, bias, wl, in, ref);
  assert_memory_equal(out, ref, no);
  free((void *)c.bias), free((void *)c.mult), free((void *)c.shift), free((void *)c.weights);
  free(bias), free(wl), free(in), free(out), free(ref);
}

/* resnet8_int8's 3x3 16 -> 16 conv on 32x32 (34 padded rows of 544
 * bytes): every block of 16 pixels lies in one row, read from the band;
 * in 3 bands, some blocks cross a row's end and take columns. */
static void test_pwk_band(void **state) {
  (void)state;
  pwk_check(layer(32, 32, 16, 16, 3, 1), 1);
  only(UKP_pwk_band, UKP_pwk_cols, BIT(pwk_band));
  pwk_check(layer(32, 32, 16, 16, 3, 1), 3);
  only(UKP_pwk_band, UKP_pwk_cols, BIT(pwk_band) | BIT(pwk_cols));
  pwk_check(layer(16, 16, 32, 64, 3, 2), 1);
  only(UKP_pwk_band, UKP_pwk_cols, BIT(pwk_band));
}

/* 40x40x16: 42 rows of 672 bytes, past the band's 20 KB; and dilation 2,
 * which the band does not take: columns only. */
static void test_pwk_cols(void **state) {
  (void)state;
  pwk_check(layer(40, 40, 16, 16, 3, 1), 1);
  only(UKP_pwk_band, UKP_pwk_cols, BIT(pwk_cols));
  tinyml_uk_params_t p = layer(20, 20, 12, 32, 3, 1);
  p.dil_h = p.dil_w = 2;
  p.pad_top = p.pad_left = 2;
  pwk_check(p, 1);
  only(UKP_pwk_band, UKP_pwk_cols, BIT(pwk_cols));
}

/* ---- the f32 depthwise conv (tinyml_uk_depthwise_f32) ------------------ */

/* An f32 blob as uk_pack.c lays it out (uk_abi.h, "f32 kinds") for the
 * header p, whose epilogue it makes the identity (no zero points, scale 1,
 * offset -0.0, no clamp): bias, scale and offset arrays of n16 floats (the
 * bias random for the first `valid` channels, else 0), then wfloats of
 * weights, zero, for the caller to fill.  Sets p's offsets; free() it. */
static float *f32_blob(tinyml_uk_params_t *p, int32_t valid, int32_t n16, size_t wfloats) {
  const float inf = __builtin_inff(), ninf = -inf;
  p->in_zp = p->out_zp = 0;
  memcpy(&p->act_min, &ninf, 4);
  memcpy(&p->act_max, &inf, 4);
  p->bias_off = 256;
  p->mult_off = p->bias_off + 4 * n16;
  p->shift_off = p->mult_off + 4 * n16;
  p->weights_off = (p->shift_off + 4 * n16 + 63) / 64 * 64;
  const size_t bytes = (size_t)p->weights_off + wfloats * 4;
  float *b = aligned_alloc(64, (bytes + 63) / 64 * 64);
  memset(b, 0, bytes);
  memcpy(b, p, sizeof(*p));
  for (int32_t o = 0; o < n16; ++o) {
    b[p->bias_off / 4 + o] = o < valid ? (float)rnd(-50, 50) : 0.0f;
    b[p->mult_off / 4 + o] = 1.0f;
    b[p->shift_off / 4 + o] = -0.0f;
  }
  return b;
}

/* Runs an f32 layer (bias, no scale, offset or clamp) from a blob as
 * uk_pack.c lays it out; small integers throughout, so every sum is exact
 * in any order and the reference is plain. */
static void dw_f32_check(const tinyml_uk_params_t *lp, int32_t wgs) {
  tinyml_uk_params_t p = *lp;
  const int32_t n16 = (p.ic + 15) / 16 * 16, taps = p.kh * p.kw;
  p.kind = TINYML_UK_DEPTHWISE_F32;
  float *b = f32_blob(&p, p.ic, n16, (size_t)taps * p.ic);
  float *bias = b + p.bias_off / 4, *w = b + p.weights_off / 4;
  for (int32_t i = 0; i < taps * p.ic; ++i) w[i] = (float)rnd(-8, 8);
  const size_t ni = (size_t)p.ih * p.iw * p.ic, no = (size_t)p.oh * p.ow * p.ic;
  float *in = aligned_alloc(64, (ni * 4 + 63) / 64 * 64), *out = malloc(no * 4),
        *ref = malloc(no * 4);
  for (size_t i = 0; i < ni; ++i) in[i] = (float)rnd(-20, 20);
  memset(hits, 0, sizeof(hits));
  for (int32_t wg = 0; wg < wgs; ++wg) tinyml_uk_depthwise_f32(in, b, out, 0, wg, wgs);
  for (int32_t q = 0; q < p.oh * p.ow; ++q)
    for (int32_t ch = 0; ch < p.ic; ++ch) {
      float acc = bias[ch];
      for (int32_t t = 0; t < taps; ++t) {
        const long at = in_at(&p, q / p.ow, q % p.ow, t, ch);
        if (at >= 0) acc += in[at] * w[t * p.ic + ch];
      }
      ref[(size_t)q * p.ic + ch] = acc;
    }
  assert_memory_equal(out, ref, no * 4);
  free(b), free(in), free(out), free(ref);
}
#define ONLY_DW_F32(want) only(UKP_dw_f32_rows3, UKP_dw_f32_window_row, want)

/* MobileNetV2's stride-1 depthwise shape: whole rows through
 * dw_row_edges (26 wide: a chunk between the border ones), every channel
 * block on dw_block3; without padding, window_row's chunks on dw_block3.
 * In 5 workgroups the rows cut in parts go through window_row (whose
 * chunks still take rows of 3, its border pixels dw_block). */
static void test_dw_f32_rows3(void **state) {
  (void)state;
  tinyml_uk_params_t p = layer(26, 26, 16, 16, 3, 1);
  dw_f32_check(&p, 1);
  ONLY_DW_F32(BIT(dw_f32_rows3) | BIT(dw_f32_edges));
  p = layer(18, 18, 16, 16, 3, 1);
  p.oh = p.ow = 16; /* VALID */
  p.pad_top = p.pad_left = 0;
  dw_f32_check(&p, 1);
  ONLY_DW_F32(BIT(dw_f32_rows3) | BIT(dw_f32_window_row));
  p = layer(14, 14, 32, 32, 3, 1);
  dw_f32_check(&p, 1);
  ONLY_DW_F32(BIT(dw_f32_rows3) | BIT(dw_f32_edges));
  dw_f32_check(&p, 5);
  ONLY_DW_F32(BIT(dw_f32_rows3) | BIT(dw_f32_edges) | BIT(dw_f32_block) |
              BIT(dw_f32_window_row));
}

/* Stride 2 (MobileNetV2's other depthwise steps): window_row, dw_block. */
static void test_dw_f32_stride2(void **state) {
  (void)state;
  const tinyml_uk_params_t p = layer(28, 28, 48, 48, 3, 2);
  dw_f32_check(&p, 1);
  ONLY_DW_F32(BIT(dw_f32_block) | BIT(dw_f32_window_row));
}

/* ---- the f32 conv (tinyml_uk_conv_f32) --------------------------------- */

/* Weight (tap t, channel o)'s place in an f32 conv blob's panels
 * (uk_abi.h, "f32 kinds"): tap chunk, then panel of 16 (or 8), then tap. */
static size_t f32_w_at(const tinyml_uk_params_t *p, int32_t t, int32_t o) {
  const int32_t k0 = t / TINYML_UK_F32_KC * TINYML_UK_F32_KC, o0 = o / 16 * 16;
  const int32_t kc = tinyml_uk_f32_chunk(p->k, k0);
  const int32_t n = p->oc_padded - o0 < 16 ? p->oc_padded - o0 : 16;
  return (size_t)k0 * p->oc_padded + (size_t)o0 * kc + (size_t)(t - k0) * n + (o - o0);
}

/* Runs an f32 conv (bias, scale 1, offset -0.0, no clamp) from a blob as
 * uk_pack.c lays it out, im2col scratch for TINYML_UK_F32_BLOCK pixels;
 * small integers, so every sum is exact and the reference plain. */
static void conv_f32_check(const tinyml_uk_params_t *lp, int32_t wgs) {
  tinyml_uk_params_t p = *lp;
  const int32_t pixels = p.oh * p.ow;
  p.kind = TINYML_UK_CONV_F32;
  p.k = p.k_padded = p.kh * p.kw * p.ic;
  p.k_block = 1;
  p.oc_block = 16;
  p.oc_padded = (p.oc + 7) / 8 * 8;
  const int32_t n16 = (p.oc_padded + 15) / 16 * 16;
  p.scratch_bytes = 4 * p.k * (pixels < TINYML_UK_F32_BLOCK ? pixels : TINYML_UK_F32_BLOCK);
  float *b = f32_blob(&p, p.oc, n16, (size_t)p.k * p.oc_padded);
  float *bias = b + p.bias_off / 4, *w = b + p.weights_off / 4;
  for (int32_t t = 0; t < p.k; ++t)
    for (int32_t o = 0; o < p.oc; ++o) w[f32_w_at(&p, t, o)] = (float)rnd(-8, 8);
  const size_t ni = (size_t)p.ih * p.iw * p.ic, no = (size_t)pixels * p.oc;
  float *in = aligned_alloc(64, (ni * 4 + 63) / 64 * 64), *out = malloc(no * 4),
        *ref = malloc(no * 4);
  void *scratch = aligned_alloc(64, (size_t)wgs * TINYML_UK_SCRATCH_STRIDE(p.scratch_bytes));
  for (size_t i = 0; i < ni; ++i) in[i] = (float)rnd(-20, 20);
  memset(hits, 0, sizeof(hits));
  for (int32_t wg = 0; wg < wgs; ++wg) tinyml_uk_conv_f32(in, b, out, scratch, wg, wgs);
  const int32_t taps = p.kh * p.kw;
  for (int32_t q = 0; q < pixels; ++q)
    for (int32_t o = 0; o < p.oc; ++o) {
      float acc = bias[o];
      for (int32_t t = 0; t < taps; ++t)
        for (int32_t ch = 0; ch < p.ic; ++ch) {
          const long at = in_at(&p, q / p.ow, q % p.ow, t, ch);
          if (at >= 0) acc += in[at] * w[f32_w_at(&p, t * p.ic + ch, o)];
        }
      ref[(size_t)q * p.oc + o] = acc;
    }
  assert_memory_equal(out, ref, no * 4);
  free(b), free(in), free(out), free(ref), free(scratch);
}
#define ONLY_CONV_F32(want) only(UKP_conv_f32_inplace, UKP_conv_f32_gathered, want)

/* Interior pixels read in place or gathered (conv_f32.c, finplace_pays):
 * a stride-1 3x3 conv's 28 of 30 (3 tiles of 12 hold 28: in place); a
 * stride-2 one's 13 of 14 (two half tiles in place: every pixel
 * gathered); 11 of 13 at stride 1 (one tile nearly full: in place). */
static void test_conv_f32_rows(void **state) {
  (void)state;
  tinyml_uk_params_t p = layer(6, 30, 24, 40, 3, 1);
  conv_f32_check(&p, 1);
  ONLY_CONV_F32(BIT(conv_f32_inplace));
  p = layer(8, 28, 24, 40, 3, 2);
  p.pad_top = p.pad_left = 1; /* 28 -> 14 as ONNX pads it: 13 interior pixels */
  conv_f32_check(&p, 1);
  ONLY_CONV_F32(BIT(conv_f32_gathered));
  conv_f32_check(&p, 3);
  ONLY_CONV_F32(BIT(conv_f32_gathered));
  p = layer(13, 13, 16, 24, 3, 1);
  conv_f32_check(&p, 2);
  ONLY_CONV_F32(BIT(conv_f32_inplace));
}

int isa_tests(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dw_s8_map),     cmocka_unit_test(test_dw_s8_rows),
      cmocka_unit_test(test_dw_s8_pixels),  cmocka_unit_test(test_dw_s8_generic),
      cmocka_unit_test(test_pwk_band),      cmocka_unit_test(test_pwk_cols),
      cmocka_unit_test(test_dw_f32_rows3),  cmocka_unit_test(test_dw_f32_stride2),
      cmocka_unit_test(test_conv_f32_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
