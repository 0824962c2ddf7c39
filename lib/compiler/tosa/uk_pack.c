/* The blobs of the kernels a chain becomes (uk_pack.h, uk_abi.h): the
 * parameters, per-channel arrays and the weights packed as the backend's
 * kernels read them. */
#include "uk_pack.h"

#include <mlir-c/BuiltinAttributes.h>
#include <math.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../ukernels/uk_depthwise.h"
#include "uk_read.h"
#include "uk_wino.h"
#include "ukernel_op.h"

static int32_t round_up(int32_t v, int32_t m) { return (v + m - 1) / m * m; }

/* SXTB16's lane order: bytes 0 and 2 of a word, then 1 and 3 (k_perm and
 * dw_wide groups of 4). */
static const int perm4[4] = {0, 2, 1, 3};

/* Where tap k of channel o goes in the packed conv weights. */
static size_t packed_at(const tinyml_uk_params_t *p, const tc_ukernels_t *uk, int32_t o,
                        int32_t k) {
  const int32_t ob = p->oc_block, kb = p->k_block;
  int32_t t = k % kb;
  if (uk->k_perm) t = (t & ~3) | perm4[t & 3];
  return (size_t)(o / ob) * ob * p->k_padded + (size_t)(k / kb) * ob * kb +
         (size_t)(o % ob) * kb + (size_t)t;
}

static void pack_conv(const tc_uk_chain_t *c, const tc_ukernels_t *uk, int8_t *dst) {
  const tinyml_uk_params_t *p = &c->p;
  for (int32_t o = 0; o < p->oc; ++o)
    for (int32_t k = 0; k < p->k; ++k) {
      intptr_t from = c->w_transposed ? (intptr_t)k * p->oc + o : (intptr_t)o * p->k + k;
      dst[packed_at(p, uk, o, k)] = mlirDenseElementsAttrGetInt8Value(c->weights, from);
    }
}

/* Whether depthwise `p` gets backend.h's dw_wide weights, and their bytes
 * with the padding row. */
static int dw_wide(const tinyml_uk_params_t *p, const tc_ukernels_t *uk) {
  return p->kind == TINYML_UK_DEPTHWISE && uk->dw_wide && p->kh * p->kw <= UK_MAX_TAPS;
}

static int64_t dw_wide_bytes(const tinyml_uk_params_t *p) {
  return round_up(2 * p->kh * p->kw * p->ic, 4) + round_up(p->ic, 4);
}

/* The int16 weights of dw_wide: each full group of 4 channels tap by tap,
 * as channels 0, 2, 1, 3; then each other channel's taps; then the in_zp
 * row. */
static void pack_dw_wide(const tc_uk_chain_t *c, int8_t *dst) {
  const tinyml_uk_params_t *p = &c->p;
  const int32_t full = p->ic / 4 * 4, taps = p->kh * p->kw;
  int16_t *w = (int16_t *)(void *)dst;
  for (int32_t ch = 0; ch < p->ic; ++ch)
    for (int32_t t = 0; t < taps; ++t) {
      const size_t at = ch < full ? ((size_t)(ch / 4) * taps + t) * 4 + perm4[ch & 3]
                                  : (size_t)full * taps + (size_t)(ch - full) * taps + t;
      w[at] = mlirDenseElementsAttrGetInt8Value(c->weights, (intptr_t)t * p->ic + ch);
    }
  memset(dst + round_up(2 * taps * p->ic, 4), (int8_t)p->in_zp, (size_t)p->ic);
}

/* dw_wide kernels sum x * w over every tap, the padding row's in_zp
 * included, so in_zp * sum(w) comes off every sum: here, in chan[].bias
 * (modulo 2^32 as the kernel adds), instead of per output. */
static void fold_zp_sum(const tinyml_uk_params_t *p, uint8_t *blob) {
  tinyml_uk_chan_t *ch = (tinyml_uk_chan_t *)(void *)(blob + p->chan_off);
  for (int32_t o = 0; o < p->oc_padded; ++o)
    ch[o].bias = (int32_t)((uint32_t)ch[o].bias - (uint32_t)ch[o].zp_sum);
}

/* dot4's bias - (in_zp + 128) * sum w (uk_abi.h), modulo 2^32 as the kernel
 * sums, from the bias and the packed weights already in the blob. */
static void fill_dot4_bias(const tinyml_uk_params_t *p, const tc_ukernels_t *uk,
                           uint8_t *blob) {
  const int32_t *bias = (const int32_t *)(const void *)(blob + p->bias_off);
  const int8_t *w = (const int8_t *)(blob + p->weights_off);
  uint32_t *bias4 = (uint32_t *)(void *)(blob + p->dot4);
  for (int32_t o = 0; o < p->oc; ++o) {
    uint32_t sum = 0;
    for (int32_t k = 0; k < p->k; ++k) sum += (uint32_t)w[packed_at(p, uk, o, k)];
    bias4[o] = (uint32_t)bias[o] - (uint32_t)(p->in_zp + 128) * sum;
  }
}

/* The sum of channel o's weights, for zp_in_bias (backend.h). */
static uint32_t weight_sum(const tc_uk_chain_t *c, int32_t o) {
  const tinyml_uk_params_t *p = &c->p;
  uint32_t sum = 0;
  for (int32_t k = 0; k < p->k; ++k) {
    intptr_t from = c->w_transposed ? (intptr_t)k * p->oc + o : (intptr_t)o * p->k + k;
    sum += (uint32_t)mlirDenseElementsAttrGetInt8Value(c->weights, from);
  }
  return sum;
}

static void fill_channels(const tc_uk_chain_t *c, int zp_in_bias, uint8_t *blob) {
  const tinyml_uk_params_t *p = &c->p;
  int32_t *bias = (int32_t *)(void *)(blob + p->bias_off);
  int32_t *mult = (int32_t *)(void *)(blob + p->mult_off);
  int32_t *shift = (int32_t *)(void *)(blob + p->shift_off);
  int64_t nb = mlirAttributeIsNull(c->bias) ? 0 : tc_uk_numel(c->bias), nm = tc_uk_numel(c->mult);
  for (int32_t o = 0; o < p->oc; ++o) {
    bias[o] = nb ? mlirDenseElementsAttrGetInt32Value(c->bias, nb == 1 ? 0 : o) : 0;
    mult[o] = mlirDenseElementsAttrGetInt32Value(c->mult, nm == 1 ? 0 : o);
    shift[o] = mlirDenseElementsAttrGetInt8Value(c->shift, nm == 1 ? 0 : o);
    if (zp_in_bias && p->kind == TINYML_UK_CONV)
      bias[o] = (int32_t)((uint32_t)bias[o] - (uint32_t)p->in_zp * weight_sum(c, o));
  }
  int32_t n16 = round_up(p->oc_padded, 16);
  for (int32_t o = p->oc; o < n16; ++o) shift[o] = 2;
  int64_t *round = (int64_t *)(void *)(blob + p->round_off);
  for (int32_t o = 0; o < n16; ++o) {
    int64_t r = (int64_t)1 << (shift[o] - 1), d = shift[o] > 31 ? (int64_t)1 << 30 : 0;
    round[o] = r + d;
    round[n16 + o] = r - d;
  }
  tinyml_uk_chan_t *ch = (tinyml_uk_chan_t *)(void *)(blob + p->chan_off);
  for (int32_t o = 0; o < p->oc_padded; ++o) {
    int32_t zp_sum = 0;
    for (int32_t t = 0; p->kind == TINYML_UK_DEPTHWISE && t < p->kh * p->kw; ++t)
      zp_sum += p->in_zp * mlirDenseElementsAttrGetInt8Value(c->weights, (intptr_t)t * p->ic + o);
    ch[o] = (tinyml_uk_chan_t){bias[o], mult[o], shift[o], zp_sum, round[o], round[n16 + o]};
  }
}

/* Whether every channel's shift lies in [33, 54], where tinyml_uk_req_t
 * holds it (uk_abi.h): hz = 2^(s-33) + out_zp * 2^(s-32) then fits in 30
 * bits, and so does the high word it is added to. */
static int req_fits(const tc_uk_chain_t *c) {
  int64_t nm = tc_uk_numel(c->mult);
  for (int32_t o = 0; o < c->p.oc; ++o) {
    int32_t s = mlirDenseElementsAttrGetInt8Value(c->shift, nm == 1 ? 0 : o);
    if (s < 33 || s > 54) return 0;
  }
  return 1;
}

/* The req records from the per-channel arrays fill_channels wrote; padded
 * channels get a harmless record (mult 0). */
static void fill_req(const tinyml_uk_params_t *p, uint8_t *blob) {
  const tinyml_uk_chan_t *ch = (const tinyml_uk_chan_t *)(const void *)(blob + p->chan_off);
  tinyml_uk_req_t *r = (tinyml_uk_req_t *)(void *)(blob + p->req_off);
  for (int32_t o = 0; o < p->oc_padded; ++o) {
    int32_t s = o < p->oc ? ch[o].shift : 33;
    int32_t hz = (int32_t)(((int64_t)1 << (s - 33)) + (int64_t)p->out_zp * ((int64_t)1 << (s - 32)));
    r[o] = (tinyml_uk_req_t){ch[o].bias, o < p->oc ? ch[o].mult : 0, hz, s - 32};
  }
}

/* Lays out the blob; returns its size (0 when too large for int32 offsets). */
static size_t layout(tc_uk_chain_t *c, const tc_target_t *t) {
  const tc_ukernels_t *uk = &t->backend->ukernels;
  tinyml_uk_params_t *p = &c->p;
  p->version = TINYML_UK_VERSION;
  int64_t k = (int64_t)p->kh * p->kw * p->ic;
  if (k > (1 << 24) || p->oc > (1 << 20)) return 0;
  p->k = (int32_t)k;
  if (p->kind == TINYML_UK_CONV) {
    p->oc_block = uk->oc_block;
    if (uk->fc_oc_block && (int64_t)p->oh * p->ow == 1 && p->oc >= uk->fc_oc_block)
      p->oc_block = uk->fc_oc_block; /* fewer channels would leave most rows empty */
    p->k_block = uk->k_block;
    p->k_padded = round_up(round_up(p->k, p->k_block), 4);
    p->oc_padded = round_up(p->oc, p->oc_block);
    int64_t cols = t->ukernels->scratch_per_k / 2, pixels = (int64_t)p->oh * p->ow;
    if (uk->tail_columns && pixels < cols) cols = pixels;
    p->scratch_bytes = (int32_t)(2 * cols * p->k_padded);
    if (p->oc_block != uk->oc_block) p->scratch_bytes += 8; /* fc_oc_block: an end mark */
  } else {
    p->oc_block = p->k_block = 1;
    p->k_padded = p->k;
    p->oc_padded = p->oc;
    p->scratch_bytes = 0;
  }
  /* Vector kernels read channel arrays 8 or 16 at a time. */
  int64_t chan = (int64_t)round_up(p->oc_padded, 16) * 4;
  int64_t w = p->kind == TINYML_UK_CONV ? (int64_t)p->oc_padded * p->k_padded : k;
  if (dw_wide(p, uk)) w = dw_wide_bytes(p);
  int64_t off = round_up((int32_t)sizeof(tinyml_uk_params_t), 16);
  p->bias_off = (int32_t)off;
  p->mult_off = (int32_t)(off += chan);
  p->shift_off = (int32_t)(off += chan);
  p->round_off = (int32_t)(off += chan);
  p->chan_off = (int32_t)(off += 4 * chan);
  off += (int64_t)p->oc_padded * (int64_t)sizeof(tinyml_uk_chan_t);
  if (p->kind == TINYML_UK_CONV && t->ukernels->dot4) {
    p->dot4 = (int32_t)off;
    off += chan;
  }
  if (uk->req_records && req_fits(c)) {
    p->req_off = (int32_t)off;
    /* A depthwise kernel requantises from tinyml_uk_chan_t (round_pos's
     * high word): its req_off only says every shift fits, and 16 bytes a
     * channel of records would be flash for nothing (uk_abi.h). */
    if (p->kind == TINYML_UK_CONV) off += (int64_t)p->oc_padded * (int64_t)sizeof(tinyml_uk_req_t);
  }
  p->weights_off = (int32_t)off;
  int64_t total = off + w;
  return total < (1LL << 30) ? (size_t)total : 0;
}

MlirValue tc_uk_blob_s8(MlirContext ctx, tc_uk_chain_t *c, const tc_target_t *t,
                           const tinyml_allocator_t *a, MlirOperation before) {
  MlirValue none = {NULL};
  size_t size = layout(c, t);
  uint8_t *blob = size ? tinyml__calloc(a, size, 1, 16) : NULL;
  if (!blob) return none;
  memcpy(blob, &c->p, sizeof(c->p));
  fill_channels(c, t->backend->ukernels.zp_in_bias, blob);
  if (c->p.req_off && c->p.kind == TINYML_UK_CONV) fill_req(&c->p, blob);
  int8_t *w = (int8_t *)(blob + c->p.weights_off);
  if (c->p.kind == TINYML_UK_CONV) {
    pack_conv(c, &t->backend->ukernels, w);
    if (c->p.dot4) fill_dot4_bias(&c->p, &t->backend->ukernels, blob);
    if (c->p.dot4 && t->dot4_blobs) ++*t->dot4_blobs;
    if (t->conv_blobs) ++*t->conv_blobs;
  } else if (dw_wide(&c->p, &t->backend->ukernels)) {
    pack_dw_wide(c, w);
    fold_zp_sum(&c->p, blob);
  } else {
    for (int32_t i = 0; i < c->p.k; ++i) w[i] = mlirDenseElementsAttrGetInt8Value(c->weights, i);
  }
  return tc_uk_blob_const(ctx, blob, size, a, before);
}

int32_t tc_uk_f32_chan_layout(tinyml_uk_params_t *p) {
  const int32_t chan = 4 * round_up(p->oc_padded, 16);
  int32_t off = round_up((int32_t)sizeof(tinyml_uk_params_t), 64);
  p->bias_off = off;
  p->mult_off = off += chan;
  p->shift_off = off += chan;
  p->round_off = p->chan_off = 0;
  return round_up(off + chan, 64);
}

enum { F32_MB = TINYML_UK_F32_BLOCK }; /* pixels per im2col block */

/* Lays out an f32 blob (uk_abi.h, "f32 kinds"); returns its size, or 0. */
static size_t layout_f32(tc_uk_chain_t *c) {
  tinyml_uk_params_t *p = &c->p;
  p->version = TINYML_UK_VERSION;
  int64_t k = (int64_t)p->kh * p->kw * p->ic;
  if (k > (1 << 24) || p->oc > (1 << 20)) return 0;
  p->k = p->k_padded = (int32_t)k;
  p->k_block = 1;
  int64_t wfloats = k;
  p->scratch_bytes = 0;
  if (p->kind == TINYML_UK_CONV_F32) {
    p->oc_block = 16;
    p->oc_padded = round_up(p->oc, 8);
    wfloats = (int64_t)p->oc_padded * k;
    int direct = tinyml_uk_direct_1x1(p);
    p->wino_m = c->winograd ? tc_wino_m(c->winograd, p) : 0;
    p->wino_tiles = p->wino_m ? tc_wino_tiles(c->winograd, p) : 0;
    if (p->wino_tiles) {
      wfloats = (int64_t)(p->wino_m + 2) * (p->wino_m + 2) * p->ic * p->oc_padded;
      int64_t scratch = tc_wino_scratch(p);
      if (scratch > (1LL << 30)) return 0;
      p->scratch_bytes = (int32_t)scratch;
    } else if (!direct) {
      int64_t pixels = (int64_t)p->batch * p->oh * p->ow, mb = F32_MB;
      const int64_t most = c->tuning->im2col_bytes, mr = c->tuning->tile_rows;
      if (mb * k * 4 > most) mb = most / (k * 4) / mr * mr;
      if (mb < mr) mb = mr;
      if (mb > pixels) mb = pixels;
      if (mb * k * 4 > (1LL << 30)) return 0;
      p->scratch_bytes = (int32_t)(mb * k * 4);
    }
  } else {
    p->oc_block = 1;
    p->oc_padded = p->oc;
  }
  p->weights_off = tc_uk_f32_chan_layout(p);
  memcpy(&p->act_min, &c->lo, 4);
  memcpy(&p->act_max, &c->hi, 4);
  int64_t total = p->weights_off + 4 * wfloats;
  return total < (1LL << 30) ? (size_t)total : 0;
}

/* Where tap t of channel o goes among a conv's f32 weights of k taps. */
static int64_t f32_w_at(const tinyml_uk_params_t *p, int64_t k, int64_t t, int32_t o) {
  const int64_t ocp = p->oc_padded, k0 = t / TINYML_UK_F32_KC * TINYML_UK_F32_KC;
  const int64_t kc = tinyml_uk_f32_chunk((int32_t)k, (int32_t)k0);
  const int32_t o0 = o / 16 * 16, width = p->oc_padded - o0 >= 16 ? 16 : 8;
  return k0 * ocp + o0 * kc + (t - k0) * width + (o - o0);
}

/* A folded weight (fill_f32): w * s, one rounding, when `s` is given;
 * *finite stays 1 while every result is finite. */
static float fold_w(float w, const float *s, int32_t o, int *finite) {
  if (!s) return w;
  w *= s[o];
  *finite &= isfinite(w) != 0;
  return w;
}

/* U, (m + 2)^2 matrices of ic taps, each packed as a conv's weights with
 * k = ic.  The scale `s` (or none) goes into g, before the transform: U
 * is then the transform of the same folded taps a direct conv would take,
 * and its own rounding stays the only one after the fold's. */
static int fill_wino(const tc_uk_chain_t *c, const float *s, float *w) {
  const tinyml_uk_params_t *p = &c->p;
  const int64_t plane = (int64_t)p->ic * p->oc_padded;
  const int nn = (p->wino_m + 2) * (p->wino_m + 2);
  int finite = 1;
  for (int32_t o = 0; o < p->oc; ++o)
    for (int32_t i = 0; i < p->ic; ++i) {
      float g[9], u[36];
      for (int32_t t = 0; t < 9; ++t)
        g[t] = fold_w(tc_uk_f32_at(c->weights, ((int64_t)o * 9 + t) * p->ic + i), s, o, &finite);
      tc_wino_filter(g, p->wino_m, u);
      for (int xi = 0; xi < nn; ++xi) {
        /* F(2x2)'s U reaches 2.25x its largest tap: finite folded taps
         * may still overflow. */
        finite &= isfinite(u[xi]) != 0;
        w[xi * plane + f32_w_at(p, p->ic, i, o)] = u[xi];
      }
    }
  return finite;
}

/* The weights, each times s[its channel] when `s` is given; returns
 * whether every folded weight is finite. */
static int fill_f32_weights(const tc_uk_chain_t *c, const float *s, float *w) {
  const tinyml_uk_params_t *p = &c->p;
  int finite = 1;
  if (p->kind != TINYML_UK_CONV_F32) { /* depthwise: tap t of channel o at t * ic + o */
    for (int32_t i = 0; i < p->k; ++i)
      w[i] = fold_w(tc_uk_f32_at(c->weights, i), s, i % p->ic, &finite);
    return finite;
  }
  if (p->wino_tiles) return fill_wino(c, s, w);
  const int64_t k = p->k;
  for (int32_t o = 0; o < p->oc; ++o)
    for (int64_t t = 0; t < k; ++t)
      w[f32_w_at(p, k, t, o)] = fold_w(
          tc_uk_f32_at(c->weights, c->w_transposed ? t * p->oc + o : o * k + t), s, o, &finite);
  return finite;
}

/* Whether every channel's scale and offset are finite, and each folded
 * bias (bias * scale + offset, by fmaf: one rounding) too: then so is the
 * chain's TOSA result up to the rounding the fold moves.  An inf or NaN
 * scale stays in the epilogue, where TOSA applies it: with scale inf,
 * weights {0, 1} and inputs {1, 1} give 1 * inf = inf, but folded, 0 * inf
 * is a NaN weight and the sum NaN. */
static int foldable(const tinyml_uk_params_t *p, const float *bias, const float *scale,
                    const float *offset) {
  for (int32_t o = 0; o < p->oc; ++o)
    if (!isfinite(scale[o]) || !isfinite(offset[o]) ||
        !isfinite(fmaf(bias[o], scale[o], offset[o])))
      return 0;
  return 1;
}

/* BatchNorm's scale and offset folded into the weights and the bias, as
 * onnxruntime's ConvBNFusion does: (x . w + b) * s + f becomes x . (w * s)
 * + (b * s + f), and the blob's scale 1 and offset -0.0 let the kernels
 * skip both (x * 1 + -0.0 is x).  Only when every value stays finite
 * (foldable, fill_f32_weights); else the weights are packed again as
 * they are. */
static void fill_f32(const tc_uk_chain_t *c, uint8_t *blob) {
  const tinyml_uk_params_t *p = &c->p;
  float *bias = (float *)(void *)(blob + p->bias_off);
  float *scale = (float *)(void *)(blob + p->mult_off);
  float *offset = (float *)(void *)(blob + p->shift_off);
  float *w = (float *)(void *)(blob + p->weights_off);
  int64_t nb = mlirAttributeIsNull(c->bias) ? 0 : tc_uk_numel(c->bias);
  int64_t ns = mlirAttributeIsNull(c->scale) ? 0 : tc_uk_numel(c->scale);
  int64_t no = mlirAttributeIsNull(c->offset) ? 0 : tc_uk_numel(c->offset);
  int32_t n16 = round_up(p->oc_padded, 16);
  for (int32_t o = 0; o < n16; ++o) {
    int in = o < p->oc;
    bias[o] = in && nb ? tc_uk_f32_at(c->bias, nb == 1 ? 0 : o) : 0.0f;
    scale[o] = in && ns ? tc_uk_f32_at(c->scale, ns == 1 ? 0 : o) : 1.0f;
    offset[o] = in && no ? tc_uk_f32_at(c->offset, no == 1 ? 0 : o) : -0.0f;
  }
  int fold = (ns || no) && foldable(p, bias, scale, offset);
  if (!fill_f32_weights(c, fold ? scale : NULL, w)) {
    fold = 0;
    fill_f32_weights(c, NULL, w);
  }
  for (int32_t o = 0; fold && o < p->oc; ++o) {
    bias[o] = fmaf(bias[o], scale[o], offset[o]);
    scale[o] = 1.0f;
    offset[o] = -0.0f;
  }
}

MlirValue tc_uk_blob_f32(MlirContext ctx, tc_uk_chain_t *c, const tinyml_allocator_t *a,
                               MlirOperation before) {
  MlirValue none = {NULL};
  size_t size = layout_f32(c);
  uint8_t *blob = size ? tinyml__calloc(a, size, 1, 64) : NULL;
  if (!blob) return none;
  memcpy(blob, &c->p, sizeof(c->p));
  fill_f32(c, blob);
  return tc_uk_blob_const(ctx, blob, size, a, before);
}
