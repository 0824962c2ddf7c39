/* TFLite's "16x8" quantisation: int16 activations (symmetric, zero point
 * 0) with int8 weights, for CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED.
 *
 * TFLite Micro's kernels (reference_integer_ops ConvPerChannel,
 * DepthwiseConvPerChannel and FullyConnected, int16 versions) accumulate
 * x * w in int64, add an int64 bias, and scale with the int64 form of
 * MultiplyByQuantizedMultiplier, which first rounds the Q31 multiplier to
 * 16 bits:
 *   reduced = m < 0x7FFF0000 ? (m + 2^15) >> 16 : 0x7FFF
 *   y = (acc * reduced + 2^(14 - shift)) >> (15 - shift)
 * That is one TOSA rescale with SINGLE_ROUND, multiplier `reduced` and
 * shift 15 - shift, computed in 64 bits.
 *
 * TOSA's own i16 x i8 convolution accumulates in i48, which our compiler
 * does not carry (no buffer or constant may be i48).  So each int16 input
 * is split exactly into bytes, x = 256 * hi + lo with hi = x >> 8 in
 * [-128, 127] and lo = x & 255, and the layer runs twice as an i8 x i8
 * convolution with an i32 accumulator: on hi, and on lo stored as lo - 128
 * with input zero point -128 (TOSA subtracts it, and pads with it, so the
 * padding still adds 0).  Each accumulator is exact for up to 2^16 taps
 * (|hi * w| <= 2^14, |lo * w| < 2^15), and the int64 sum
 * 256 * acc_hi + acc_lo + bias is TFLite's accumulator exactly.  The
 * rescale from i64 then rounds as TFLite does; its saturation to int16
 * and the activation clamp are TFLite's clamps. */
#include <stdio.h>

#include "../../common/alloc.h"
#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OPT_FULLY_CONNECTED = 8 };

static int is_int16_q(const tfl_tensor_t *t) {
  return t && t->type == TFL_INT16 && tfl_is_quantized(t) && t->quant.scale_count == 1;
}

/* The operand checks TFLite's Prepare makes for 16x8 kernels. */
static int check_16x8(tfl_ctx_t *c, const tfl_tensor_t *in, const tfl_tensor_t *w,
                      const tfl_tensor_t *out, int64_t channels) {
  if (!is_int16_q(in) || !is_int16_q(out) || !w || w->type != TFL_INT8 ||
      !tfl_is_quantized(w)) {
    tfl_fail(c, "unsupported type combination: input %s, weights %s, output %s (16x8 "
                "kernels take INT16 input and output, INT8 weights)",
             tfl_type_name(in->type), w ? tfl_type_name(w->type) : "none",
             out ? tfl_type_name(out->type) : "none");
    return 0;
  }
  if (tfl_zero_point(in) != 0 || tfl_zero_point(out) != 0) {
    tfl_fail(c, "INT16 input and output need zero point 0 (got %d and %d)",
             (int)tfl_zero_point(in), (int)tfl_zero_point(out));
    return 0;
  }
  if (!w->data) {
    tfl_fail(c, "weights '%s' must be constant", w->name);
    return 0;
  }
  uint32_t ns = w->quant.scale_count;
  if (ns != 1 && ns != channels) {
    tfl_fail(c, "weights '%s' have %u scales for %lld channels", w->name, ns,
             (long long)channels);
    return 0;
  }
  for (uint32_t k = 0; k < w->quant.zero_point_count; ++k)
    if (w->quant.zero_point[k] != 0) {
      tfl_fail(c, "weights '%s' have a non-zero zero point", w->name);
      return 0;
    }
  if (channels < 1) {
    tfl_fail(c, "output '%s' has no channels", out->name);
    return 0;
  }
  /* Each byte pass sums taps * 255 * 128 at most in int32. */
  if (tfl_numel(w) / channels > 65536) {
    tfl_fail(c, "%lld taps per output are more than the 65536 the int16 kernels sum exactly",
             (long long)(tfl_numel(w) / channels));
    return 0;
  }
  const tfl_tensor_t *b = tfl_in(c, 2);
  if (b && (b->type != TFL_INT64 || !b->data || b->rank != 1 || b->shape[0] != channels)) {
    tfl_fail(c, "bias '%s' must be a constant INT64 vector of %lld for INT16 input (got %s)",
             b->name, (long long)channels, tfl_type_name(b->type));
    return 0;
  }
  return 1;
}

/* TFLite's int64 MultiplyByQuantizedMultiplier as TOSA rescale parameters:
 * the Q31 multiplier rounded to 16 bits and the shift 15 - shift. */
int tfl_reduced_multiplier(double real, int32_t *m, int8_t *s) {
  int32_t q;
  int shift;
  if (!tfl_quantize_multiplier(real, &q, &shift)) return 0;
  *m = q < 0x7FFF0000 ? (q + (1 << 15)) >> 16 : 0x7FFF;
  int total = 15 - shift;
  if (total < 2 || total > 62) return 0;
  *s = (int8_t)total;
  return 1;
}

/* acc (i64) scaled to int16 per channel with TFLite's multipliers: the
 * scales multiply in float first for a per-tensor FULLY_CONNECTED
 * (GetQuantizedConvolutionMultipler), in double for the convolutions and
 * per-channel weights (PopulateConvolutionQuantizationParams). */
static te_value_t requantize_16(tfl_ctx_t *c, te_value_t acc, const tfl_tensor_t *in,
                                const tfl_tensor_t *w, const tfl_tensor_t *out,
                                int64_t channels, int float_product) {
  uint32_t n = w->quant.scale_count == 1 ? 1 : (uint32_t)channels;
  int32_t *mult = tinyml__calloc(c->allocator, n, sizeof(int32_t), 4);
  int8_t *shift = tinyml__calloc(c->allocator, n, 1, 1);
  te_value_t v = {0};
  if (!mult || !shift) {
    tfl_out_of_memory(c);
  } else {
    uint32_t k = 0;
    double real = 0.0;
    for (; k < n; ++k) {
      float ws = w->quant.scale[k];
      double prod = float_product && n == 1 ? (double)(tfl_scale(in) * ws)
                                  : (double)tfl_scale(in) * (double)ws;
      real = prod / (double)tfl_scale(out);
      if (!tfl_reduced_multiplier(real, &mult[k], &shift[k])) break;
    }
    if (k < n)
      tfl_fail(c, "output scale ratio %g of '%s' is out of range", real, out->name);
    else
      v = te_rescale(&c->e, acc, TE_I16, mult, shift, n, 0, 0, 0, 0, 0);
  }
  tinyml__free(c->allocator, mult);
  tinyml__free(c->allocator, shift);
  return v;
}

/* One i8 x i8 -> i32 pass of `op_name` over bytes `x8` with input zero
 * point `zp`. */
static te_value_t byte_pass(tfl_ctx_t *c, const char *op_name, te_value_t x8, te_value_t w,
                            int64_t zp, const char *props, const te_type_t *acc_t) {
  int64_t oc = acc_t->dims[acc_t->rank - 1];
  te_type_t bt = te_type(TE_I32, 1, &oc);
  te_value_t ops[5] = {x8, w, te_splat_int(&c->e, &bt, 0), te_scalar_int(&c->e, TE_I8, zp),
                       te_scalar_int(&c->e, TE_I8, 0)};
  return te_op(&c->e, op_name, ops, 5, props, acc_t);
}

/* `op_name` over the high bytes of x and over its low bytes: the two i32
 * accumulators whose 256 * hi + lo is the op over x. */
void tfl_split_passes(tfl_ctx_t *c, const char *op_name, te_value_t x, te_value_t w,
                      const char *props, const te_type_t *acc_t, te_value_t *hi_acc,
                      te_value_t *lo_acc) {
  te_value_t hi = te_binary_props(&c->e, "tosa.arithmetic_right_shift", x,
                                  te_scalar_int(&c->e, TE_I16, 8), "round = false");
  /* The low byte with its top bit flipped is lo - 128, as a signed byte. */
  te_value_t lo = te_binary(&c->e, "tosa.bitwise_xor", x, te_scalar_int(&c->e, TE_I16, 0x80));
  *hi_acc = byte_pass(c, op_name, te_cast(&c->e, hi, TE_I8), w, 0, props, acc_t);
  *lo_acc = byte_pass(c, op_name, te_cast(&c->e, lo, TE_I8), w, -128, props, acc_t);
}

te_value_t tfl_window_sum_16(tfl_ctx_t *c, te_value_t x, te_value_t ones, const char *props,
                             const te_type_t *sum_t) {
  te_value_t hi, lo;
  tfl_split_passes(c, "tosa.depthwise_conv2d", x, ones, props, sum_t, &hi, &lo);
  hi = te_binary(&c->e, "tosa.logical_left_shift", hi, te_scalar_int(&c->e, TE_I32, 8));
  return te_binary(&c->e, "tosa.add", hi, lo);
}

tinyml_status_t tfl_lower_16x8(tfl_ctx_t *c, const char *op_name, te_value_t x, te_value_t w,
                               const char *props, const int64_t *acc_dims, int activation,
                               int float_product) {
  const tfl_tensor_t *in = tfl_in(c, 0), *wt = tfl_in(c, 1), *out = tfl_out(c, 0);
  int64_t oc = acc_dims[3];
  if (!check_16x8(c, in, wt, out, oc)) return c->error;
  if (!x.id || !w.id) return c->error;
  te_type_t at = te_type(TE_I32, 4, acc_dims);
  te_value_t acc_hi, acc_lo;
  tfl_split_passes(c, op_name, x, w, props, &at, &acc_hi, &acc_lo);
  te_value_t acc = te_binary(&c->e, "tosa.logical_left_shift", te_cast(&c->e, acc_hi, TE_I64),
                             te_scalar_int(&c->e, TE_I64, 8));
  acc = te_binary(&c->e, "tosa.add", acc, te_cast(&c->e, acc_lo, TE_I64));
  if (tfl_in(c, 2)) acc = te_binary(&c->e, "tosa.add", acc, tfl_value_in(c, 2));
  if (c->error) return c->error;
  te_value_t y = requantize_16(c, acc, in, wt, out, oc, float_product);
  if (!y.id) return c->error;
  y = tfl_activation(c, y, out, activation);
  if (!y.id) return c->error;
  te_type_t want;
  if (!tfl_te_type(out, &want) || te_numel(&want) != te_numel(&y.type))
    return tfl_fail(c, "output shape does not match the computed %lld elements",
                    (long long)te_numel(&y.type));
  return tfl_set_out(c, 0, te_reshape(&c->e, y, want.rank, want.dims));
}

/* FULLY_CONNECTED as a 1x1 convolution over [rows, 1, 1, in]: TFLite's
 * [out, in] weights are already TOSA's [out, 1, 1, in] filter. */
tinyml_status_t tfl_lower_fc_16x8(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, OPT_FULLY_CONNECTED);
  const tfl_tensor_t *in = tfl_in(c, 0), *wt = tfl_in(c, 1);
  if (!o) return c->error;
  int bad = 0;
  int act = tfl_table_i8(o, 0, 0, &bad);
  if (tfl_table_i8(o, 1, 0, &bad) != 0 || bad)
    return tfl_fail(c, "shuffled weights formats are not supported");
  if (!wt || wt->rank != 2) return tfl_fail(c, "weights must be a 2-D [out, in] matrix");
  int64_t oc = wt->shape[0], ic = wt->shape[1], total = tfl_numel(in);
  if (ic < 1 || oc < 1 || total % ic)
    return tfl_fail(c, "input size is not a multiple of %lld", (long long)ic);
  int64_t rows = total / ic, xd[4] = {rows, 1, 1, ic}, wd[4] = {oc, 1, 1, ic};
  int64_t ad[4] = {rows, 1, 1, oc};
  te_value_t x = tfl_value_in(c, 0);
  te_value_t w = tfl_value_in(c, 1);
  if (!x.id || !w.id) return c->error;
  static const char props[] = "acc_type = i32, dilation = array<i64: 1, 1>, "
                              "pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>";
  return tfl_lower_16x8(c, "tosa.conv2d", te_reshape(&c->e, x, 4, xd),
                        te_reshape(&c->e, w, 4, wd), props, ad, act, 1);
}
