/* TRANSPOSE_CONV: inputs (output_shape, weights, input, optional bias).
 *
 * TFLite's reference kernel scatters each input pixel (iy, ix) to output
 * rows iy * stride - pad_top + ky (and columns likewise), dropping the
 * ones outside the output, where the padding is what CONV_2D would need
 * to map the output back to the input (ComputePaddingHeightWidth on the
 * output's size).  That is TOSA's transpose_conv2d with out_pad_top =
 * -pad_top and a trailing out_pad that makes the output size exact; both
 * use the weights as [out_channels, kh, kw, in_channels].
 *
 * int8 (per-channel or per-tensor int8 weights, int32 bias) accumulates
 * (x - input_zp) * w + bias in int32 and rescales per channel as CONV_2D
 * does (PopulateConvolutionQuantizationParams), then the fused activation
 * (version 4 of the operator) as a clamp.
 *
 * int16 x int8 (zero points 0, int64 or int16 bias) accumulates in int64
 * and rescales with TFLite's 64-bit MultiplyByQuantizedMultiplier (a
 * 16-bit multiplier, one rounding shift).  TOSA's 16-bit transpose conv
 * accumulates in i48, which we do not lower, so the input is split into
 * bytes, x = 256 * hi + lo, and each byte runs through the int8 operator
 * (lo as unsigned, i.e. int8 with zero point -128): two exact int32 sums. */
#include <stdio.h>

#include "../../common/alloc.h"
#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OPT_TRANSPOSE_CONV = 49 };

typedef struct tconv {
  int64_t out_dims[4], stride[2], kernel[2];
  int64_t out_pad[4]; /* TOSA's: top, bottom, left, right */
  int padding_same, activation, quant; /* quant: 0 float, 1 int8, 2 int16x8 */
  int bias_type;                       /* quantized_bias_type; 0 = unset */
} tconv_t;

/* TFLite's padding for one axis of a transpose conv of output size `out`,
 * then TOSA's out_pad for an input of size `in`. */
static int axis_pad(tfl_ctx_t *c, tconv_t *t, int ax, int64_t in) {
  int64_t out = t->out_dims[1 + ax], s = t->stride[ax], k = t->kernel[ax];
  int64_t conv_out = t->padding_same ? (out + s - 1) / s : (out - k + s) / s;
  int64_t total = (conv_out - 1) * s + k - out, before = total > 0 ? total / 2 : 0;
  t->out_pad[2 * ax] = -before;
  t->out_pad[2 * ax + 1] = out - (in - 1) * s - k + before;
  if (before >= k || t->out_pad[2 * ax + 1] <= -k) {
    tfl_fail(c, "output size %lld along %s does not fit input size %lld, kernel %lld and "
                "stride %lld", (long long)out, ax ? "width" : "height", (long long)in,
             (long long)k, (long long)s);
    return 0;
  }
  return 1;
}

static int read_options(tfl_ctx_t *c, tconv_t *t) {
  const tfl_table_t *o = tfl_options(c, OPT_TRANSPOSE_CONV);
  int bad = 0;
  if (!o) return 0;
  t->padding_same = tfl_table_i8(o, 0, 0, &bad) == 0;
  t->stride[1] = tfl_table_i32(o, 1, 1, &bad);
  t->stride[0] = tfl_table_i32(o, 2, 1, &bad);
  t->activation = tfl_table_i8(o, 3, 0, &bad);
  t->bias_type = tfl_table_i8(o, 4, 0, &bad);
  if (bad || t->stride[0] < 1 || t->stride[1] < 1 || t->stride[0] > 4096 ||
      t->stride[1] > 4096) {
    tfl_fail(c, "malformed options or invalid stride");
    return 0;
  }
  return 1;
}

/* Checks the operands' shapes and types; fills out_dims and kernel. */
static int check_operands(tfl_ctx_t *c, tconv_t *t) {
  const tfl_tensor_t *in = tfl_in(c, 2), *w = tfl_in(c, 1), *out = tfl_out(c, 0);
  uint32_t n = 0;
  if (!in || !w || !out || in->rank != 4 || w->rank != 4 || out->rank != 4) {
    tfl_fail(c, "expects a 4-D input, weights and output");
    return 0;
  }
  if (!tfl_const_ints(c, 0, t->out_dims, 4, &n)) return 0;
  for (uint32_t d = 0; d < 4; ++d)
    if (n != 4 || t->out_dims[d] != out->shape[d]) {
      tfl_fail(c, "output_shape disagrees with output '%s'", out->name);
      return 0;
    }
  if (w->shape[0] != out->shape[3] || w->shape[3] != in->shape[3] || in->shape[0] != out->shape[0]) {
    tfl_fail(c, "weights must be [output channels, kh, kw, input channels] and the batch kept");
    return 0;
  }
  if (!w->data) {
    tfl_fail(c, "weights '%s' must be constant", w->name);
    return 0;
  }
  t->kernel[0] = w->shape[1];
  t->kernel[1] = w->shape[2];
  if (in->type == TFL_FLOAT32 && w->type == TFL_FLOAT32 && out->type == TFL_FLOAT32) {
    t->quant = 0;
  } else if (in->type == TFL_INT8 && w->type == TFL_INT8 && out->type == TFL_INT8 &&
             tfl_is_quantized(in) && tfl_is_quantized(w) && tfl_is_quantized(out)) {
    t->quant = 1;
  } else if (in->type == TFL_INT16 && w->type == TFL_INT8 && out->type == TFL_INT16 &&
             tfl_is_quantized(in) && tfl_is_quantized(w) && tfl_is_quantized(out)) {
    if (tfl_zero_point(in) != 0 || tfl_zero_point(out) != 0) {
      tfl_fail(c, "INT16 input and output need zero point 0");
      return 0;
    }
    t->quant = 2;
  } else {
    tfl_fail(c, "unsupported type combination: input %s, weights %s, output %s (FLOAT32 and "
                "INT8, and INT16 with INT8 weights, are supported)", tfl_type_name(in->type), tfl_type_name(w->type),
             tfl_type_name(out->type));
    return 0;
  }
  /* The accumulator TFLM has: int32 for int8, int64 for int16. */
  if (t->bias_type && t->bias_type != (t->quant == 2 ? TFL_INT64 : TFL_INT32)) {
    tfl_fail(c, "quantized_bias_type %s is not supported with %s input",
             tfl_type_name(t->bias_type), tfl_type_name(in->type));
    return 0;
  }
  return axis_pad(c, t, 0, in->shape[1]) && axis_pad(c, t, 1, in->shape[2]);
}

/* The bias (input 3) as `oc` values of the accumulator's type, or zeros. */
static te_value_t bias_value(tfl_ctx_t *c, const tconv_t *t, int64_t oc) {
  const tfl_tensor_t *b = c->op->input_count > 3 ? tfl_in(c, 3) : NULL;
  te_type_t bt = te_type(t->quant ? TE_I32 : TE_F32, 1, &oc);
  if (!b) return t->quant ? te_splat_int(&c->e, &bt, 0) : te_splat_f32(&c->e, &bt, 0.0f);
  if (!b->data || b->rank != 1 || b->shape[0] != oc ||
      b->type != (t->quant ? TFL_INT32 : TFL_FLOAT32)) {
    tfl_fail(c, "bias '%s' must be a constant %s vector of %lld", b->name,
             t->quant ? "INT32" : "FLOAT32", (long long)oc);
    return (te_value_t){0};
  }
  return tfl_value_in(c, 3);
}

/* TFLite's per-channel real multipliers, input * filter / output scale
 * (*n of them: 1 or per channel); NULL after recording an error. */
static double *real_scales(tfl_ctx_t *c, int64_t oc, uint32_t *n) {
  const tfl_tensor_t *in = tfl_in(c, 2), *w = tfl_in(c, 1), *out = tfl_out(c, 0);
  uint32_t ns = w->quant.scale_count;
  if (ns != 1 && ns != oc) {
    tfl_fail(c, "weights '%s' have %u scales for %lld channels", w->name, ns, (long long)oc);
    return NULL;
  }
  for (uint32_t k = 0; k < w->quant.zero_point_count; ++k)
    if (w->quant.zero_point[k] != 0) {
      tfl_fail(c, "weights '%s' have a non-zero zero point", w->name);
      return NULL;
    }
  double *real = tinyml__calloc(c->allocator, ns, sizeof(double), 8);
  if (!real) {
    tfl_out_of_memory(c);
    return NULL;
  }
  for (uint32_t k = 0; k < ns; ++k)
    real[k] = (double)tfl_scale(in) * (double)w->quant.scale[k] / (double)tfl_scale(out);
  *n = ns;
  return real;
}

static te_value_t requantize(tfl_ctx_t *c, te_value_t acc, int64_t oc) {
  uint32_t n = 0;
  double *real = real_scales(c, oc, &n);
  if (!real) return (te_value_t){0};
  te_value_t y = tfl_requantize(c, acc, real, n, tfl_out(c, 0));
  tinyml__free(c->allocator, real);
  return y;
}

static te_value_t zero_point(tfl_ctx_t *c, int quant, int64_t zp) {
  return quant ? te_scalar_int(&c->e, TE_I8, zp) : te_scalar_f32(&c->e, 0.0f);
}

/* The transpose conv of x (f32, or i8 with zero point zp) by the weights. */
static te_value_t emit(tfl_ctx_t *c, const tconv_t *t, te_value_t x, te_value_t bias, int64_t zp) {
  int q = x.type.elem != TE_F32;
  te_value_t ops[5] = {x, tfl_value_in(c, 1), bias, zero_point(c, q, zp), zero_point(c, q, 0)};
  if (!ops[1].id) return ops[1];
  char pad[96], stride[64], props[220];
  te_array_attr(64, t->out_pad, 4, pad, sizeof pad);
  te_array_attr(64, t->stride, 2, stride, sizeof stride);
  snprintf(props, sizeof props, "acc_type = %s, out_pad = %s, stride = %s", q ? "i32" : "f32",
           pad, stride);
  te_type_t at = te_type(q ? TE_I32 : TE_F32, 4, t->out_dims);
  return te_op(&c->e, "tosa.transpose_conv2d", ops, 5, props, &at);
}

/* The int64 bias: given (INT64, or INT16 as TFLM widens it) or zeros. */
static te_value_t bias64(tfl_ctx_t *c, int64_t oc) {
  const tfl_tensor_t *b = c->op->input_count > 3 ? tfl_in(c, 3) : NULL;
  te_type_t bt = te_type(TE_I64, 1, &oc);
  if (!b) return te_splat_int(&c->e, &bt, 0);
  if (!b->data || b->rank != 1 || b->shape[0] != oc ||
      (b->type != TFL_INT64 && b->type != TFL_INT16)) {
    tfl_fail(c, "bias '%s' must be a constant INT64 (or INT16) vector of %lld", b->name,
             (long long)oc);
    return (te_value_t){0};
  }
  te_value_t v = tfl_value_in(c, 3);
  return !v.id || v.type.elem == TE_I64 ? v : te_cast(&c->e, v, TE_I64);
}

/* TFLite's MultiplyByQuantizedMultiplier(int64 x, m, shift): the multiplier
 * rounded to 16 bits, then (x * m16 + round) >> (15 - shift). */
static te_value_t requantize16(tfl_ctx_t *c, te_value_t acc, int64_t oc) {
  uint32_t n = 0;
  double *real = real_scales(c, oc, &n);
  int64_t *p = real ? tinyml__calloc(c->allocator, 3 * (size_t)n, sizeof(int64_t), 8) : NULL;
  te_value_t y = {0};
  if (real && !p) tfl_out_of_memory(c);
  for (uint32_t k = 0; p && k < n; ++k) {
    int32_t m;
    int shift;
    if (!tfl_quantize_multiplier(real[k], &m, &shift) || shift < -31 || shift > 7) {
      tfl_fail(c, "scale ratio %g of channel %u is out of range", real[k], k);
      break;
    }
    p[k] = m < 0x7FFF0000 ? (m + (1 << 15)) >> 16 : 0x7FFF;
    p[n + k] = (int64_t)1 << (14 - shift);
    p[2 * n + k] = 15 - shift;
  }
  if (p && !c->error) {
    int64_t nn = n;
    te_type_t t = te_type(TE_I64, 1, &nn);
    y = te_binary(&c->e, "tosa.add", te_mul(&c->e, acc, te_const(&c->e, &t, p), 0),
                  te_const(&c->e, &t, p + n));
    y = te_binary_props(&c->e, "tosa.arithmetic_right_shift", y, te_const(&c->e, &t, p + 2 * n),
                        "round = false");
    y = te_cast(&c->e, te_clamp_int(&c->e, y, -32768, 32767), TE_I16);
  }
  tinyml__free(c->allocator, p);
  tinyml__free(c->allocator, real);
  return y;
}

/* int16 x int8: the input's high byte and its low byte (unsigned, so int8
 * with zero point -128) each through the int8 operator, then
 * 256 * hi + lo + bias in int64. */
static te_value_t accumulate16(tfl_ctx_t *c, const tconv_t *t, int64_t oc) {
  te_value_t x = tfl_value_in(c, 2), b = bias64(c, oc);
  if (!x.id || !b.id) return (te_value_t){0};
  te_value_t hi = te_binary_props(&c->e, "tosa.arithmetic_right_shift", x,
                                  te_scalar_int(&c->e, TE_I16, 8), "round = false");
  te_value_t lo = te_binary(&c->e, "tosa.bitwise_and", x, te_scalar_int(&c->e, TE_I16, 255));
  lo = te_binary(&c->e, "tosa.sub", lo, te_scalar_int(&c->e, TE_I16, 128));
  te_type_t zt = te_type(TE_I32, 1, &oc);
  te_value_t zb = te_splat_int(&c->e, &zt, 0);
  te_value_t ah = emit(c, t, te_cast(&c->e, hi, TE_I8), zb, 0);
  te_value_t al = emit(c, t, te_cast(&c->e, lo, TE_I8), zb, -128);
  if (!ah.id || !al.id) return (te_value_t){0};
  te_value_t acc = te_mul(&c->e, te_cast(&c->e, ah, TE_I64), te_scalar_int(&c->e, TE_I64, 256), 0);
  acc = te_binary(&c->e, "tosa.add", acc, te_cast(&c->e, al, TE_I64));
  return te_binary(&c->e, "tosa.add", acc, b);
}

tinyml_status_t tfl_lower_transpose_conv(tfl_ctx_t *c) {
  tconv_t t = {0};
  if (!read_options(c, &t) || !check_operands(c, &t)) return c->error;
  int64_t oc = t.out_dims[3];
  te_value_t y;
  if (t.quant == 2) {
    y = accumulate16(c, &t, oc);
    if (y.id) y = requantize16(c, y, oc);
  } else {
    te_value_t x = tfl_value_in(c, 2), b = bias_value(c, &t, oc);
    if (!x.id || !b.id) return c->error;
    y = emit(c, &t, x, b, t.quant ? tfl_zero_point(tfl_in(c, 2)) : 0);
    if (y.id && t.quant) y = requantize(c, y, oc);
  }
  if (!y.id) return c->error;
  return tfl_set_out(c, 0, tfl_activation(c, y, tfl_out(c, 0), t.activation));
}
