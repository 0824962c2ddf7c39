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
 * (version 4 of the operator) as a clamp. */
#include <stdio.h>

#include "../../common/alloc.h"
#include "tfl_lower.h"

enum { OPT_TRANSPOSE_CONV = 49 };

typedef struct tconv {
  int64_t out_dims[4], stride[2], kernel[2];
  int64_t out_pad[4]; /* TOSA's: top, bottom, left, right */
  int padding_same, activation, quant;
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
  int bias_type = tfl_table_i8(o, 4, 0, &bad);
  if (bad || t->stride[0] < 1 || t->stride[1] < 1 || t->stride[0] > 4096 ||
      t->stride[1] > 4096) {
    tfl_fail(c, "malformed options or invalid stride");
    return 0;
  }
  if (bias_type != 0 && bias_type != TFL_INT32) {
    tfl_fail(c, "quantized_bias_type %s is not supported", tfl_type_name(bias_type));
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
  } else {
    tfl_fail(c, "unsupported type combination: input %s, weights %s, output %s (FLOAT32 and "
                "INT8 are supported)", tfl_type_name(in->type), tfl_type_name(w->type),
             tfl_type_name(out->type));
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

/* Per-channel requantisation with TFLite's input * filter / output scales. */
static te_value_t requantize(tfl_ctx_t *c, te_value_t acc, int64_t oc) {
  const tfl_tensor_t *in = tfl_in(c, 2), *w = tfl_in(c, 1), *out = tfl_out(c, 0);
  uint32_t ns = w->quant.scale_count;
  if (ns != 1 && ns != oc) {
    tfl_fail(c, "weights '%s' have %u scales for %lld channels", w->name, ns, (long long)oc);
    return (te_value_t){0};
  }
  for (uint32_t k = 0; k < w->quant.zero_point_count; ++k)
    if (w->quant.zero_point[k] != 0) {
      tfl_fail(c, "weights '%s' have a non-zero zero point", w->name);
      return (te_value_t){0};
    }
  double *real = tinyml__calloc(c->allocator, ns, sizeof(double), 8);
  if (!real) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  for (uint32_t k = 0; k < ns; ++k)
    real[k] = (double)tfl_scale(in) * (double)w->quant.scale[k] / (double)tfl_scale(out);
  te_value_t y = tfl_requantize(c, acc, real, ns, out);
  tinyml__free(c->allocator, real);
  return y;
}

static te_value_t zero_point(tfl_ctx_t *c, int quant, int64_t zp) {
  return quant ? te_scalar_int(&c->e, TE_I8, zp) : te_scalar_f32(&c->e, 0.0f);
}

tinyml_status_t tfl_lower_transpose_conv(tfl_ctx_t *c) {
  tconv_t t = {0};
  if (!read_options(c, &t) || !check_operands(c, &t)) return c->error;
  int64_t oc = t.out_dims[3];
  te_value_t ops[5] = {tfl_value_in(c, 2), tfl_value_in(c, 1), bias_value(c, &t, oc),
                       zero_point(c, t.quant, tfl_zero_point(tfl_in(c, 2))),
                       zero_point(c, t.quant, 0)};
  if (c->error) return c->error;
  char pad[96], stride[64], props[220];
  te_array_attr(64, t.out_pad, 4, pad, sizeof pad);
  te_array_attr(64, t.stride, 2, stride, sizeof stride);
  snprintf(props, sizeof props, "acc_type = %s, out_pad = %s, stride = %s",
           t.quant ? "i32" : "f32", pad, stride);
  te_type_t at = te_type(t.quant ? TE_I32 : TE_F32, 4, t.out_dims);
  te_value_t y = te_op(&c->e, "tosa.transpose_conv2d", ops, 5, props, &at);
  if (t.quant) y = requantize(c, y, oc);
  if (!y.id) return c->error;
  return tfl_set_out(c, 0, tfl_activation(c, y, tfl_out(c, 0), t.activation));
}
