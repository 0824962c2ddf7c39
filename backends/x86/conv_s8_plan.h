/* Which kernel tinyml_uk_conv_s8 runs for a blob: a pure function of the
 * blob's header and shifts, with no intrinsics, so that a white-box test
 * (tests/compiler/test_conv_s8_plan.c) can check that the models' convs
 * reach the fast paths.  Every path gives the same bytes, so only this
 * test fails when a gate stops taking a layer it should. */
#ifndef TINYML_BACKENDS_X86_CONV_S8_PLAN_H
#define TINYML_BACKENDS_X86_CONV_S8_PLAN_H

#include "../../lib/ukernels/uk_abi.h"

typedef enum uk_conv_s8_kernel {
  UK_CONV_S8_MADD,  /* vpmaddwd tiles on int16 columns (no dot4 bias) */
  UK_CONV_S8_DOT4,  /* vpdpbusd tiles on byte columns (conv_s8_vnni.c) */
  UK_CONV_S8_LANES, /* first convs, lanes as pixels (conv_s8_lanes.c) */
  UK_CONV_S8_PW,    /* 1x1 convs, pixels streamed (conv_s8_pw.c) */
  UK_CONV_S8_PW31,  /* the same with shifts of 31 (conv_s8_pw.c, pw_conv31) */
  UK_CONV_S8_PW9,   /* 1x1 convs on 7-9 pixels an image (conv_s8_pw.c, pw9_conv) */
  UK_CONV_S8_PWK,   /* other convs on pw_conv's blocks (conv_s8_pw.c, pwk_conv) */
} uk_conv_s8_kernel_t;

/* The lanes kernel's band of padded input rows on the stack (bytes), its
 * most 4-byte groups of taps, repacked weights and channels. */
enum { UK_LN_BUF = 8192, UK_LN_G = 16, UK_LN_WT = 2048, UK_LN_OC = 256 };

/* The lanes kernel's view of a layer. */
typedef struct ln_geo {
  int32_t run, gpr, g; /* bytes per kernel row, groups per row, groups */
  int32_t step;        /* stride_w * ic */
  int32_t prow, rows;  /* padded row bytes (even), rows in the band */
  int32_t total;       /* padded rows an image needs */
  int32_t ocs;         /* oc_padded rounded up to 16 */
  int32_t row16;       /* 1 when 16 pixels of a row fit one window */
} ln_geo_t;

/* 0 when the lanes kernel does not take the layer's shape. */
static inline int uk_ln_geo(const tinyml_uk_params_t *p, ln_geo_t *g) {
  /* 1x1 convs and deeper inputs have no im2col walk to save: their
   * columns are input rows or long runs (vww's 1x1 convs on 8-32
   * channels ran 1.7-4.5x slower there). */
  if (p->dil_h != 1 || p->dil_w != 1 || p->ic > 4 || p->kh * p->kw == 1) return 0;
  g->run = p->kw * p->ic;
  g->gpr = (g->run + 3) / 4;
  g->g = p->kh * g->gpr;
  g->step = p->stride_w * p->ic;
  g->ocs = (p->oc_padded + 15) / 16 * 16;
  if (g->g > UK_LN_G || g->g * g->ocs > UK_LN_WT || g->ocs > UK_LN_OC) return 0;
  /* At least 4 pixels of a row per window, or the chunks are too small. */
  if (3 * g->step + 5 > 128) return 0;
  const int32_t need = (p->ow - 1) * g->step + 4 * g->gpr;
  const int32_t have = (p->pad_left + p->iw) * p->ic;
  g->prow = ((need > have ? need : have) + 1) & ~1;
  g->rows = UK_LN_BUF / g->prow;
  g->total = (p->oh - 1) * p->stride_h + p->kh;
  g->row16 = 15 * g->step + 5 <= 128;
  return p->kh <= g->rows;
}

/* Whether every live channel's shift lies in [33, 54] (rq16's range,
 * backends/x86/ukernels_common.h). */
static inline int uk_conv_s8_rq16(const tinyml_uk_params_t *p, const int32_t *shift) {
  for (int32_t o = 0; o < p->oc; ++o)
    if (shift[o] < 33 || shift[o] > 54) return 0;
  return 1;
}

/* Whether the clamp lies inside int8: then saturating to int8 and
 * clamping the bytes, as the fast paths do, is the same as clamping. */
static inline int uk_conv_s8_int8_clamp(const tinyml_uk_params_t *p) {
  return p->act_min >= -128 && p->act_max <= 127;
}

/* The pointwise kernel's limits: output channels whose rescale constants
 * it keeps, and bytes of flipped input rows (16 pixels of 256 taps). */
enum { UK_PW_OC = 512, UK_PW_BUF = 4096 };

/* Bytes of weights the pointwise kernel rearranges once per call on the
 * stack (128 x 256); beyond, it rearranges them per block. */
enum { UK_PW_WT = 32768 };

/* Whether every shift lies in [32, 62], where the pointwise kernel's
 * rescale keeps the sum within int64 (conv_s8_pw.c, pw_make). */
static inline int uk_pw_shifts(const tinyml_uk_params_t *p, const int32_t *shift) {
  int ok = 1; /* no early exit: the loop vectorizes (256-channel layers) */
  for (int32_t o = 0; o < p->oc; ++o) ok &= (shift[o] >= 32) & (shift[o] <= 62);
  return ok;
}

/* Pixels per block of the pointwise kernel: 16 accumulators of 16
 * channels, 64 channels of 4 pixels, 32 of 8 or 16 of 16. */
static inline int32_t uk_pw_pixels(const tinyml_uk_params_t *p) {
  return p->oc >= 64 ? 4 : 16 / (p->oc / 16);
}

/* Whether some shift is 31 and all lie in [31, 62]: TOSA rounds 31 once
 * (2^30, no +-2^30), which pw_conv31's rescale does (vww's 128 -> 128 and
 * 128 -> 256 1x1 convs each have such channels). */
static inline int uk_pw31_shifts(const tinyml_uk_params_t *p, const int32_t *shift) {
  int ok = 1, any = 0;
  for (int32_t o = 0; o < p->oc; ++o) {
    ok &= (shift[o] >= 31) & (shift[o] <= 62);
    any |= shift[o] == 31;
  }
  return ok & any;
}

/* pw_conv31's pixels per block of 64 channels: 24 accumulators of the 32
 * zmm, with 4 of weights and the broadcast input; 16 accumulators for 16
 * and 32 channels, as pw_conv. */
enum { UK_PW31_WIDE = 6, UK_PW_ACC = 24 };

static inline int32_t uk_pw31_pixels(const tinyml_uk_params_t *p) {
  return p->oc >= 64 ? UK_PW31_WIDE : uk_pw_pixels(p);
}

/* 1x1 convs without padding on whole 4-tap groups (k_padded = ic), the
 * x86 packing (8 channels x 2 taps), 16, 32 or a multiple of 64 channels. */
static inline int uk_pw_shape(const tinyml_uk_params_t *p) {
  if (p->kh != 1 || p->kw != 1 || p->pad_top != 0 || p->pad_left != 0) return 0;
  if (p->k_padded != p->ic || p->oc_block != 8 || p->k_block != 2 || p->oc_padded != p->oc)
    return 0;
  if (!uk_conv_s8_int8_clamp(p)) return 0;
  return p->oc == 16 || p->oc == 32 || (p->oc % 64 == 0 && p->oc <= UK_PW_OC);
}

/* The same whose block's rows fit the buffer: pw_conv's, pw_conv31's. */
static inline int uk_pw_fits(const tinyml_uk_params_t *p) {
  return uk_pw_shape(p) && uk_pw_pixels(p) * p->k_padded <= UK_PW_BUF;
}

static inline int uk_pw31_fits(const tinyml_uk_params_t *p) {
  return uk_pw_shape(p) && uk_pw31_pixels(p) * p->k_padded <= UK_PW_BUF;
}

/* pw9_conv's block: 9 pixels x 32 channels, 18 accumulators. */
enum { UK_PW9_PIX = 9 };

/* 1x1 convs of 64 or more channels whose images have 7-9 pixels (vww's
 * 3x3 ones): one block of 9 an image, where pw_conv's of 4 and pw_conv31's
 * of 6 computed 12. */
static inline int uk_pw9_fits(const tinyml_uk_params_t *p) {
  const int32_t px = p->oh * p->ow;
  return uk_pw_shape(p) && p->oc >= 64 && px >= 7 && px <= UK_PW9_PIX &&
         UK_PW9_PIX * p->k_padded <= UK_PW_BUF;
}

/* Whether every shift lies in [31, 62] (pw9_conv's pw_apply31). */
static inline int uk_pw9_shifts(const tinyml_uk_params_t *p, const int32_t *shift) {
  int ok = 1;
  for (int32_t o = 0; o < p->oc; ++o) ok &= (shift[o] >= 31) & (shift[o] <= 62);
  return ok;
}

/* Bytes of weights pwk_conv puts in vpdpbusd order on the stack: 64 x
 * 576, resnet8's 3x3 64 -> 64 conv. */
enum { UK_PWK_WT = 36864 };

/* Where pwk_conv writes a block's im2col columns (blocks over a row's
 * end, layers off the band): its stack's 4 KB (1), else the conv's scratch
 * (2), which x86's packing sizes for 8 pixels of int16 taps (16 k_padded
 * bytes, lib/compiler/tosa/uk_pack.c), so 16 pixels of 288 taps fit (a
 * 3x3 32 -> 16 conv); 0 when neither holds them.  With 16 or 32 output
 * channels that scratch always holds them, so every such multi-tap conv
 * takes pwk_conv, off the band by columns (measured level with dot4_conv
 * there, docs/PERF.md). */
static inline int uk_pwk_cols(const tinyml_uk_params_t *p) {
  const int64_t bytes = (int64_t)uk_pw_pixels(p) * p->k_padded;
  return bytes <= UK_PW_BUF ? 1 : bytes <= p->scratch_bytes ? 2 : 0;
}

/* Convs with more than one tap (or padding) whose im2col columns fit
 * pw_conv's blocks (resnet8's 3x3 ones on 16-64 channels) and somewhere
 * to be written (uk_pwk_cols): the same
 * packing, channels and clamp as uk_pw_shape asks. */
static inline int uk_pwk_fits(const tinyml_uk_params_t *p) {
  if (p->kh * p->kw == 1 && p->pad_top == 0 && p->pad_left == 0) return 0;
  if (p->oc_block != 8 || p->k_block != 2 || p->oc_padded != p->oc) return 0;
  if (!uk_conv_s8_int8_clamp(p)) return 0;
  if (!(p->oc == 16 || p->oc == 32 || (p->oc % 64 == 0 && p->oc <= UK_PW_OC))) return 0;
  /* 64 and more channels only with their weights in vpdpbusd order on the
   * stack: per block of 4 pixels, a vpermw per 4 vpdpbusd made resnet8's
   * 64 -> 64 conv slower (11.4 -> 13.0 us). */
  if (p->oc >= 64 && (int64_t)p->oc * p->k_padded > UK_PWK_WT) return 0;
  return uk_pwk_cols(p) != 0;
}

/* pwk_conv's band of padded input rows, flipped once per image (bytes):
 * resnet8's 32x32x16 input takes 34 rows of 544. */
enum { UK_PWK_BAND = 20480 };

/* Bytes per padded row: the pixels' reach or the input's, the larger
 * (widened first, as uk_dw_map_row: a layer far past the band must not
 * overflow before uk_pwk_band refuses it). */
static inline int64_t uk_pwk_prow(const tinyml_uk_params_t *p) {
  const int64_t need = ((int64_t)(p->ow - 1) * p->stride_w + p->kw) * p->ic;
  const int64_t have = ((int64_t)p->pad_left + p->iw) * p->ic;
  return need > have ? need : have;
}

/* Whether pwk_conv reads the taps in place from the band: whole 4-tap
 * groups in each kernel row (ic % 4 = 0), no dilation, an image's rows
 * within the band. */
static inline int uk_pwk_band(const tinyml_uk_params_t *p) {
  if (p->dil_h != 1 || p->dil_w != 1 || p->ic % 4 != 0 || p->k != p->k_padded) return 0;
  const int64_t rows = (int64_t)(p->oh - 1) * p->stride_h + p->kh;
  return rows * uk_pwk_prow(p) <= UK_PWK_BAND;
}

/* The kernel for the conv blob with header p and shifts shift[oc]. */
static inline uk_conv_s8_kernel_t uk_conv_s8_plan(const tinyml_uk_params_t *p,
                                                  const int32_t *shift) {
  if (!p->dot4) return UK_CONV_S8_MADD;
  if (!uk_conv_s8_int8_clamp(p)) return UK_CONV_S8_DOT4;
  ln_geo_t g;
  if (uk_conv_s8_rq16(p, shift) && uk_ln_geo(p, &g)) return UK_CONV_S8_LANES;
  if (uk_pw9_fits(p) && uk_pw9_shifts(p, shift)) return UK_CONV_S8_PW9;
  if (uk_pw_shifts(p, shift) && uk_pw_fits(p)) return UK_CONV_S8_PW;
  if (uk_pw31_shifts(p, shift) && uk_pw31_fits(p)) return UK_CONV_S8_PW31;
  if (uk_pw_shifts(p, shift) && uk_pwk_fits(p)) return UK_CONV_S8_PWK;
  return UK_CONV_S8_DOT4;
}

#endif
