/* CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and the 2-D pools.
 *
 * Quantised kernels follow TFLite's reference kernels: int32 accumulation of
 * (x - input_zp) * w plus an int32 bias, then a per-channel rescale with
 * TFLite's multipliers (DOUBLE_ROUND equals MultiplyByQuantizedMultiplier),
 * the output zero point, and the fused activation as a clamp.
 *
 * Hybrid kernels (int8 weights, float activations) do what TFLite's hybrid
 * kernels do: quantise the input per batch at run time, symmetric int8 with
 * scale max|x| / 127 (SymmetricQuantizeFloats), run the int8 kernel, and
 * compute float(acc) * input_scale * filter_scale + bias. */
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OPT_CONV2D = 1, OPT_DEPTHWISE = 2, OPT_POOL2D = 5, OPT_FULLY_CONNECTED = 8 };

typedef struct window {
  int32_t stride[2], dilation[2], kernel[2];
  int padding_same;
  int64_t pad[4]; /* top, bottom, left, right */
} window_t;

/* TFLite's output size and padding for one spatial axis, then TOSA's: TOSA
 * wants (in + pads - effective kernel) divisible by the stride, so the
 * trailing pad is whatever makes the declared output size exact; a negative
 * trailing pad means input rows that TFLite never reads. */
static int axis_padding(tfl_ctx_t *c, const window_t *w, int ax, int64_t in,
                        int64_t out, int64_t *before, int64_t *after) {
  int64_t eff = (int64_t)(w->kernel[ax] - 1) * w->dilation[ax] + 1;
  int64_t s = w->stride[ax];
  int64_t want = w->padding_same ? (in + s - 1) / s : (in - eff + s) / s;
  if (want != out || out < 1) {
    tfl_fail(c, "output size %lld along %s disagrees with the input, kernel and "
                "stride (expected %lld)", (long long)out, ax ? "width" : "height",
             (long long)want);
    return 0;
  }
  int64_t total = (out - 1) * s + eff - in;
  *before = w->padding_same && total > 0 ? total / 2 : 0;
  *after = (out - 1) * s + eff - in - *before;
  return 1;
}

/* Fills the pads; returns the input, sliced where a trailing pad is
 * negative.  Id 0 on error. */
static te_value_t pad_window(tfl_ctx_t *c, window_t *w, te_value_t in,
                             const int64_t *out_dims) {
  int64_t size[4] = {in.type.dims[0], in.type.dims[1], in.type.dims[2], in.type.dims[3]};
  for (int ax = 0; ax < 2; ++ax) {
    if (!axis_padding(c, w, ax, in.type.dims[1 + ax], out_dims[1 + ax], &w->pad[2 * ax],
                      &w->pad[2 * ax + 1]))
      return (te_value_t){0};
    if (w->pad[2 * ax + 1] < 0) {
      size[1 + ax] += w->pad[2 * ax + 1];
      w->pad[2 * ax + 1] = 0;
    }
  }
  if (size[1] == in.type.dims[1] && size[2] == in.type.dims[2]) return in;
  static const int64_t zero[4] = {0, 0, 0, 0};
  return te_slice(&c->e, in, zero, size);
}

static void window_props(const window_t *w, int with_kernel, const char *acc, char *out,
                         size_t cap) {
  char pad[96], stride[64], dil[64], kernel[64];
  int64_t s[2] = {w->stride[0], w->stride[1]}, d[2] = {w->dilation[0], w->dilation[1]};
  int64_t k[2] = {w->kernel[0], w->kernel[1]};
  te_array_attr(64, w->pad, 4, pad, sizeof pad);
  te_array_attr(64, s, 2, stride, sizeof stride);
  te_array_attr(64, d, 2, dil, sizeof dil);
  te_array_attr(64, k, 2, kernel, sizeof kernel);
  if (with_kernel)
    snprintf(out, cap, "acc_type = %s, kernel = %s, pad = %s, stride = %s", acc, kernel, pad, stride);
  else
    snprintf(out, cap, "acc_type = %s, dilation = %s, pad = %s, stride = %s", acc, dil, pad, stride);
}

static int check_nhwc(tfl_ctx_t *c, const tfl_tensor_t *in, const tfl_tensor_t *out) {
  if (!in || !out || in->rank != 4 || out->rank != 4 || in->shape[0] != out->shape[0]) {
    tfl_fail(c, "expects 4-D NHWC input and output with the same batch");
    return 0;
  }
  return 1;
}

/* How a kernel's numbers work: all-float, int8/uint8, or hybrid. */
typedef enum { K_FLOAT, K_QUANT, K_HYBRID } kind_t;

static int kernel_kind(tfl_ctx_t *c, const tfl_tensor_t *in, const tfl_tensor_t *w,
                       const tfl_tensor_t *out, kind_t *kind) {
  if (in->type == TFL_FLOAT32 && out->type == TFL_FLOAT32 && w->type == TFL_FLOAT32)
    *kind = K_FLOAT;
  else if (in->type == TFL_FLOAT32 && out->type == TFL_FLOAT32 &&
           (w->type == TFL_INT8 || w->type == TFL_UINT8) && w->data && tfl_is_quantized(w))
    *kind = K_HYBRID;
  else if ((in->type == TFL_INT8 || in->type == TFL_UINT8) && in->type == out->type &&
           (w->type == TFL_INT8 || w->type == TFL_UINT8) && tfl_is_quantized(in) &&
           tfl_is_quantized(out) && tfl_is_quantized(w))
    *kind = K_QUANT;
  else {
    tfl_fail(c, "unsupported type combination: input %s, weights %s, output %s",
             tfl_type_name(in->type), tfl_type_name(w->type), tfl_type_name(out->type));
    return 0;
  }
  if (!w->data) {
    tfl_fail(c, "weights '%s' must be constant", w->name);
    return 0;
  }
  return 1;
}

/* The bias as a TOSA value of `n` channels: given, or zeros. */
static te_value_t bias_value(tfl_ctx_t *c, uint32_t input, kind_t kind, int64_t n) {
  const tfl_tensor_t *b = tfl_in(c, input);
  te_type_t t = te_type(kind == K_QUANT ? TE_I32 : TE_F32, 1, &n);
  if (!b) return kind == K_QUANT ? te_splat_int(&c->e, &t, 0) : te_splat_f32(&c->e, &t, 0.0f);
  if (!b->data || b->rank != 1 || b->shape[0] != n ||
      b->type != (kind == K_QUANT ? TFL_INT32 : TFL_FLOAT32)) {
    tfl_fail(c, "bias '%s' must be a constant %s vector of %lld", b->name,
             kind == K_QUANT ? "INT32" : "FLOAT32", (long long)n);
    return (te_value_t){0};
  }
  return tfl_value_in(c, input);
}

/* Weights as TOSA wants them: [n, ...] reinterpreted to `dims`, raw or
 * dequantised. */
static te_value_t weight_value(tfl_ctx_t *c, uint32_t rank, const int64_t *dims) {
  te_value_t v = tfl_value_in(c, 1);
  return v.id ? te_reshape(&c->e, v, rank, dims) : v;
}

static int per_channel_scales(tfl_ctx_t *c, const tfl_tensor_t *in, const tfl_tensor_t *w,
                              const tfl_tensor_t *out, int64_t channels, double *real,
                              int float_product) {
  uint32_t ns = w->quant.scale_count;
  if (ns != 1 && ns != channels) {
    tfl_fail(c, "weights '%s' have %u scales for %lld channels", w->name, ns, (long long)channels);
    return 0;
  }
  for (uint32_t k = 0; k < w->quant.zero_point_count; ++k)
    if (w->quant.zero_point[k] != 0 && (w->type == TFL_INT8 || ns > 1)) {
      tfl_fail(c, "weights '%s' have a non-zero zero point", w->name);
      return 0;
    }
  for (int64_t k = 0; k < channels; ++k) {
    float ws = w->quant.scale[ns == 1 ? 0 : k];
    /* TFLite's fully-connected path multiplies the scales in float first. */
    double prod = float_product ? (double)(tfl_scale(in) * ws)
                                : (double)tfl_scale(in) * (double)ws;
    real[k] = prod / (double)tfl_scale(out);
  }
  return 1;
}

static te_value_t finish_quant(tfl_ctx_t *c, te_value_t acc, const tfl_tensor_t *in,
                               const tfl_tensor_t *w, const tfl_tensor_t *out,
                               int64_t channels, int activation, int float_product) {
  double *real = tinyml__calloc(c->allocator, (size_t)channels, sizeof(double), 8);
  te_value_t v = {0};
  if (!real) {
    tfl_out_of_memory(c);
    return v;
  }
  uint32_t n = w->quant.scale_count == 1 ? 1 : (uint32_t)channels;
  if (per_channel_scales(c, in, w, out, channels, real, float_product))
    v = tfl_requantize(c, acc, real, n, out);
  tinyml__free(c->allocator, real);
  return v.id ? tfl_activation(c, v, out, activation) : v;
}

static te_value_t zero_point_value(tfl_ctx_t *c, kind_t kind, te_elem_t elem, int64_t zp) {
  if (kind == K_HYBRID) return te_scalar_int(&c->e, elem, 0);
  return kind == K_QUANT ? te_scalar_int(&c->e, elem, zp) : te_scalar_f32(&c->e, 0.0f);
}

static int hybrid_supported(tfl_ctx_t *c, const tfl_tensor_t *w) {
  if (w->quant.scale_count != 1 || c->op->builtin_code == 4) {
    tfl_fail(c, "hybrid kernels need per-tensor int8 weights (TFLite's per-channel and "
                "depthwise hybrid kernels quantise asymmetrically; not supported)");
    return 0;
  }
  return 1;
}

/* Returns x quantised per batch row, and the row's float(acc) multiplier
 * (input scale * filter scale) shaped [n, 1, ...] to broadcast. */
static te_value_t hybrid_input(tfl_ctx_t *c, te_value_t x, float filter_scale,
                               te_value_t *row_scale) {
  int64_t n = x.type.dims[0], flat[2] = {n, te_numel(&x.type) / n};
  te_value_t f = te_reshape(&c->e, x, 2, flat);
  te_value_t range = te_reduce(&c->e, "tosa.reduce_max", te_unary(&c->e, "tosa.abs", f), 1);
  te_value_t nz = te_binary(&c->e, "tosa.greater", range, te_scalar_f32(&c->e, 0.0f));
  te_value_t safe = te_select(&c->e, nz, range, te_scalar_f32(&c->e, 1.0f));
  te_value_t inv = te_mul(&c->e, te_unary(&c->e, "tosa.reciprocal", safe),
                          te_scalar_f32(&c->e, 127.0f), 0);
  te_value_t q = tfl_round_away(c, te_mul(&c->e, f, inv, 0));
  q = te_cast(&c->e, te_clamp_f32(&c->e, q, -127.0f, 127.0f), TE_I8);
  te_value_t s = te_mul(&c->e, safe, te_scalar_f32(&c->e, 1.0f / 127.0f), 0);
  s = te_mul(&c->e, s, te_scalar_f32(&c->e, filter_scale), 0);
  int64_t sd[TE_MAX_RANK];
  for (uint32_t d = 0; d < x.type.rank; ++d) sd[d] = d ? 1 : n;
  *row_scale = te_reshape(&c->e, s, x.type.rank, sd);
  return te_reshape(&c->e, q, x.type.rank, x.type.dims);
}

/* float(acc) * row scale + bias, then the activation. */
static te_value_t hybrid_finish(tfl_ctx_t *c, te_value_t acc, te_value_t row_scale,
                                te_value_t bias, const tfl_tensor_t *out, int act) {
  te_value_t y = te_mul(&c->e, te_cast(&c->e, acc, TE_F32), row_scale, 0);
  return tfl_activation(c, te_binary(&c->e, "tosa.add", y, bias), out, act);
}

/* Shared by CONV_2D and DEPTHWISE_CONV_2D once weights are in TOSA layout. */
static tinyml_status_t emit_conv(tfl_ctx_t *c, const char *op_name, window_t *w,
                                 const int64_t *wdims, int activation) {
  const tfl_tensor_t *in = tfl_in(c, 0), *wt = tfl_in(c, 1), *out = tfl_out(c, 0);
  kind_t kind = K_QUANT;
  int w16 = in->type == TFL_INT16; /* 16x8: tfl_lower_int16.c */
  if (!w16 && !kernel_kind(c, in, wt, out, &kind)) return c->error;
  int64_t oc = out->shape[3];
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  int64_t odims[4] = {out->shape[0], out->shape[1], out->shape[2], out->shape[3]};
  if (w16) {
    char p16[400];
    x = pad_window(c, w, x, odims); /* fills the pads */
    window_props(w, 0, "i32", p16, sizeof p16);
    return x.id ? tfl_lower_16x8(c, op_name, x, weight_value(c, 4, wdims), p16, odims,
                                 activation, 0)
                : c->error;
  }
  te_value_t row_scale = {0};
  if (kind == K_HYBRID) {
    if (!hybrid_supported(c, wt)) return c->error;
    x = hybrid_input(c, x, tfl_scale(wt), &row_scale);
  }
  int int_acc = kind != K_FLOAT;
  x = pad_window(c, w, x, odims);
  te_value_t ops[5] = {x, weight_value(c, 4, wdims), bias_value(c, 2, kind, oc),
                       zero_point_value(c, kind, TE_I8, tfl_zero_point(in)),
                       zero_point_value(c, kind, TE_I8, wt->type == TFL_UINT8 ? tfl_zero_point(wt) : 0)};
  if (c->error) return c->error;
  te_value_t bias = ops[2];
  if (kind == K_HYBRID) {
    te_type_t bt = te_type(TE_I32, 1, &oc);
    ops[2] = te_splat_int(&c->e, &bt, 0);
  }
  char props[400];
  window_props(w, 0, int_acc ? "i32" : "f32", props, sizeof props);
  te_type_t at = te_type(int_acc ? TE_I32 : TE_F32, 4, odims);
  te_value_t acc = te_op(&c->e, op_name, ops, 5, props, &at);
  /* uint8 takes TFLite's legacy per-tensor multiplier: scales multiplied in float. */
  int float_product = in->type == TFL_UINT8;
  te_value_t y = kind == K_QUANT    ? finish_quant(c, acc, in, wt, out, oc, activation, float_product)
                 : kind == K_HYBRID ? hybrid_finish(c, acc, row_scale, bias, out, activation)
                                    : tfl_activation(c, acc, out, activation);
  return tfl_set_out(c, 0, y);
}

static void read_window(const tfl_table_t *o, int stride_field, int dil_field, window_t *w,
                        int *bad) {
  w->padding_same = tfl_table_i8(o, 0, 0, bad) == 0;
  w->stride[1] = tfl_table_i32(o, stride_field, 1, bad);
  w->stride[0] = tfl_table_i32(o, stride_field + 1, 1, bad);
  w->dilation[1] = dil_field >= 0 ? tfl_table_i32(o, dil_field, 1, bad) : 1;
  w->dilation[0] = dil_field >= 0 ? tfl_table_i32(o, dil_field + 1, 1, bad) : 1;
}

static int window_ok(tfl_ctx_t *c, const window_t *w, int bad) {
  for (int i = 0; i < 2; ++i)
    if (w->stride[i] < 1 || w->dilation[i] < 1 || w->kernel[i] < 1 || w->stride[i] > 4096 ||
        w->dilation[i] > 4096 || w->kernel[i] > 4096 || bad) {
      tfl_fail(c, "invalid stride, dilation or kernel size");
      return 0;
    }
  return 1;
}

tinyml_status_t tfl_lower_conv2d(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, OPT_CONV2D);
  const tfl_tensor_t *in = tfl_in(c, 0), *wt = tfl_in(c, 1), *out = tfl_out(c, 0);
  if (!o || !check_nhwc(c, in, out)) return c->error;
  if (!wt || wt->rank != 4 || wt->shape[0] != out->shape[3] || wt->shape[3] != in->shape[3])
    return tfl_fail(c, "weights must be [out_channels, kh, kw, in_channels]"
                       " (grouped convolution is not supported)");
  window_t w = {0};
  int bad = 0;
  read_window(o, 1, 4, &w, &bad);
  w.kernel[0] = wt->shape[1];
  w.kernel[1] = wt->shape[2];
  int act = tfl_table_i8(o, 3, 0, &bad);
  if (!window_ok(c, &w, bad)) return c->error;
  int64_t wdims[4] = {wt->shape[0], wt->shape[1], wt->shape[2], wt->shape[3]};
  return emit_conv(c, "tosa.conv2d", &w, wdims, act);
}

tinyml_status_t tfl_lower_depthwise(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, OPT_DEPTHWISE);
  const tfl_tensor_t *in = tfl_in(c, 0), *wt = tfl_in(c, 1), *out = tfl_out(c, 0);
  if (!o || !check_nhwc(c, in, out)) return c->error;
  int64_t ic = in->shape[3], oc = out->shape[3];
  if (!wt || wt->rank != 4 || wt->shape[0] != 1 || wt->shape[3] != oc || ic < 1 || oc % ic)
    return tfl_fail(c, "weights must be [1, kh, kw, channels * multiplier]");
  window_t w = {0};
  int bad = 0;
  read_window(o, 1, 5, &w, &bad);
  w.kernel[0] = wt->shape[1];
  w.kernel[1] = wt->shape[2];
  int act = tfl_table_i8(o, 4, 0, &bad);
  if (!window_ok(c, &w, bad)) return c->error;
  /* [1, kh, kw, c*m] and TOSA's [kh, kw, c, m] are the same bytes. */
  int64_t wdims[4] = {wt->shape[1], wt->shape[2], ic, oc / ic};
  return emit_conv(c, "tosa.depthwise_conv2d", &w, wdims, act);
}

/* Transposes the constant [o, i] weights to TOSA's [1, i, o] here, at
 * compile time, so no transpose runs per inference. */
static te_value_t transposed_weights(tfl_ctx_t *c, const tfl_tensor_t *w, int64_t o,
                                     int64_t i) {
  te_type_t src;
  if (!tfl_te_type(w, &src) || w->data_size != (size_t)(o * i) * te_elem_size(src.elem)) {
    tfl_fail(c, "weights '%s' have the wrong size", w->name);
    return (te_value_t){0};
  }
  size_t es = te_elem_size(src.elem);
  uint8_t *t = tinyml__alloc(c->allocator, w->data_size + 1, 16);
  if (!t) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  /* uint8 is carried as int8 inside the graph (see tfl_zero_point). */
  uint8_t flip = w->type == TFL_UINT8 ? 0x80 : 0;
  for (int64_t r = 0; r < o; ++r)
    for (int64_t k = 0; k < i; ++k)
      for (size_t b = 0; b < es; ++b)
        t[(size_t)(k * o + r) * es + b] = w->data[(size_t)(r * i + k) * es + b] ^ flip;
  int64_t dims[3] = {1, i, o};
  te_type_t ty = te_type(src.elem, 3, dims);
  te_value_t v = te_const(&c->e, &ty, t);
  tinyml__free(c->allocator, t);
  return v;
}

tinyml_status_t tfl_lower_fully_connected(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, OPT_FULLY_CONNECTED);
  const tfl_tensor_t *in = tfl_in(c, 0), *wt = tfl_in(c, 1), *out = tfl_out(c, 0);
  if (!o || !in || !out) return c->error ? c->error : tfl_fail(c, "missing input or output");
  if (in->type == TFL_INT16) return tfl_lower_fc_16x8(c);
  int bad = 0;
  int act = tfl_table_i8(o, 0, 0, &bad);
  if (tfl_table_i8(o, 1, 0, &bad) != 0 || bad)
    return tfl_fail(c, "shuffled weights formats are not supported");
  if (!wt || wt->rank != 2) return tfl_fail(c, "weights must be a 2-D [out, in] matrix");
  kind_t kind;
  if (!kernel_kind(c, in, wt, out, &kind)) return c->error;
  int64_t oc = wt->shape[0], ic = wt->shape[1], total = 1;
  for (uint32_t d = 0; d < in->rank; ++d) total *= in->shape[d];
  if (ic < 1 || total % ic) return tfl_fail(c, "input size is not a multiple of %lld", (long long)ic);
  int64_t rows = total / ic, adims[3] = {1, rows, ic}, odims[3] = {1, rows, oc};
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  x = te_reshape(&c->e, x, 3, adims);
  te_value_t row_scale = {0};
  if (kind == K_HYBRID) {
    if (tfl_table_bool(o, 3, 0, &bad)) return tfl_fail(c, "asymmetric_quantize_inputs is not supported");
    if (!hybrid_supported(c, wt)) return c->error;
    /* TFLite quantises each input row on its own: rows are the batch. */
    int64_t rdims[3] = {rows, 1, ic};
    x = te_reshape(&c->e, hybrid_input(c, te_reshape(&c->e, x, 3, rdims), tfl_scale(wt), &row_scale), 3, adims);
    int64_t sdims[3] = {1, rows, 1};
    row_scale = te_reshape(&c->e, row_scale, 3, sdims);
  }
  te_value_t ops[4] = {x, transposed_weights(c, wt, oc, ic),
                       zero_point_value(c, kind, TE_I8, tfl_zero_point(in)),
                       zero_point_value(c, kind, TE_I8, wt->type == TFL_UINT8 ? tfl_zero_point(wt) : 0)};
  if (c->error) return c->error;
  te_type_t at = te_type(kind == K_FLOAT ? TE_F32 : TE_I32, 3, odims);
  te_value_t acc = te_op(&c->e, "tosa.matmul", ops, 4, NULL, &at);
  te_value_t bias = bias_value(c, 2, kind, oc);
  if (!bias.id) return c->error;
  te_value_t y;
  if (kind == K_HYBRID) {
    y = hybrid_finish(c, acc, row_scale, bias, out, act);
  } else {
    if (tfl_in(c, 2)) acc = te_binary(&c->e, "tosa.add", acc, bias);
    y = kind == K_QUANT ? finish_quant(c, acc, in, wt, out, oc, act, 1)
                        : tfl_activation(c, acc, out, act);
  }
  if (!y.id) return c->error;
  te_type_t want;
  if (!tfl_te_type(out, &want) || te_numel(&want) != rows * oc)
    return tfl_fail(c, "output shape does not match %lld x %lld", (long long)rows, (long long)oc);
  return tfl_set_out(c, 0, te_reshape(&c->e, y, want.rank, want.dims));
}

/* ---- pools ------------------------------------------------------------- */

static int read_pool(tfl_ctx_t *c, window_t *w, int *act) {
  const tfl_table_t *o = tfl_options(c, OPT_POOL2D);
  if (!o || !check_nhwc(c, tfl_in(c, 0), tfl_out(c, 0))) return 0;
  int bad = 0;
  read_window(o, 1, -1, w, &bad);
  w->kernel[1] = tfl_table_i32(o, 3, 0, &bad);
  w->kernel[0] = tfl_table_i32(o, 4, 0, &bad);
  *act = tfl_table_i8(o, 5, 0, &bad);
  if (tfl_in(c, 0)->shape[3] != tfl_out(c, 0)->shape[3]) {
    tfl_fail(c, "pooling must keep the channel count");
    return 0;
  }
  return window_ok(c, w, bad);
}

static int same_quant(const tfl_tensor_t *a, const tfl_tensor_t *b) {
  return a->type == b->type && tfl_scale(a) == tfl_scale(b) &&
         tfl_zero_point(a) == tfl_zero_point(b);
}

tinyml_status_t tfl_lower_max_pool(tfl_ctx_t *c) {
  window_t w = {0};
  int act;
  if (!read_pool(c, &w, &act)) return c->error;
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  if (in->type != TFL_FLOAT32 && !(tfl_is_quantized(in) && same_quant(in, out)))
    return tfl_fail(c, "quantised MAX_POOL_2D needs equal input and output quantisation");
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  int64_t odims[4] = {out->shape[0], out->shape[1], out->shape[2], out->shape[3]};
  x = pad_window(c, &w, x, odims);
  if (!x.id) return c->error;
  char props[400], *p = props;
  window_props(&w, 1, "f32", props, sizeof props);
  p = strstr(props, "kernel"); /* max_pool2d has no acc_type */
  te_type_t t = te_type(x.type.elem, 4, odims);
  te_value_t y = te_op(&c->e, "tosa.max_pool2d", &x, 1, p, &t);
  return tfl_set_out(c, 0, tfl_activation(c, y, out, act));
}

/* int8 average: TFLite sums the raw values over the part of the window
 * inside the input, divides by that count rounding half away from zero,
 * then clamps.  We sum with a depthwise conv of ones (padding adds 0) and
 * divide by a per-position count. */
static te_value_t quant_avg(tfl_ctx_t *c, const window_t *w, te_value_t x,
                            const int64_t *odims) {
  int64_t ch = odims[3], kd[4] = {w->kernel[0], w->kernel[1], ch, 1};
  te_type_t kt = te_type(TE_I8, 4, kd), bt = te_type(TE_I32, 1, &ch);
  te_value_t ops[5] = {x, te_splat_int(&c->e, &kt, 1), te_splat_int(&c->e, &bt, 0),
                       te_scalar_int(&c->e, TE_I8, 0), te_scalar_int(&c->e, TE_I8, 0)};
  window_t w1 = *w;
  w1.dilation[0] = w1.dilation[1] = 1;
  char props[400];
  window_props(&w1, 0, "i32", props, sizeof props);
  te_type_t st = te_type(TE_I32, 4, odims);
  te_value_t sum = x.type.elem == TE_I16 ? tfl_window_sum_16(c, x, ops[1], props, &st)
                                         : te_op(&c->e, "tosa.depthwise_conv2d", ops, 5, props, &st);
  int64_t cd[4] = {1, odims[1], odims[2], 1}, n = odims[1] * odims[2];
  int32_t *count = tinyml__calloc(c->allocator, (size_t)n, 4, 4);
  if (!count) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  int64_t ih = x.type.dims[1], iw = x.type.dims[2];
  for (int64_t oy = 0; oy < odims[1]; ++oy)
    for (int64_t ox = 0; ox < odims[2]; ++ox) {
      int64_t y0 = oy * w->stride[0] - w->pad[0], x0 = ox * w->stride[1] - w->pad[2];
      int64_t y1 = y0 + w->kernel[0], x1 = x0 + w->kernel[1];
      y0 = y0 < 0 ? 0 : y0; x0 = x0 < 0 ? 0 : x0;
      y1 = y1 > ih ? ih : y1; x1 = x1 > iw ? iw : x1;
      count[oy * odims[2] + ox] = (int32_t)((y1 - y0) * (x1 - x0));
    }
  int32_t *half = tinyml__calloc(c->allocator, (size_t)n, 4, 4);
  if (!half) {
    tinyml__free(c->allocator, count);
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  for (int64_t k = 0; k < n; ++k) half[k] = count[k] / 2;
  te_type_t ct = te_type(TE_I32, 4, cd);
  te_value_t cnt = te_const(&c->e, &ct, count), hv = te_const(&c->e, &ct, half);
  tinyml__free(c->allocator, count);
  tinyml__free(c->allocator, half);
  te_value_t zero = te_scalar_int(&c->e, TE_I32, 0);
  te_value_t pos = te_binary(&c->e, "tosa.greater", sum, te_reshape(&c->e, zero, 4, (int64_t[4]){1, 1, 1, 1}));
  te_value_t up = te_binary(&c->e, "tosa.add", sum, hv);
  te_value_t down = te_binary(&c->e, "tosa.sub", sum, hv);
  te_value_t q = te_binary(&c->e, "tosa.intdiv", te_select(&c->e, pos, up, down), cnt);
  return q;
}

tinyml_status_t tfl_lower_avg_pool(tfl_ctx_t *c) {
  window_t w = {0};
  int act;
  if (!read_pool(c, &w, &act)) return c->error;
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  int64_t odims[4] = {out->shape[0], out->shape[1], out->shape[2], out->shape[3]};
  x = pad_window(c, &w, x, odims);
  if (!x.id) return c->error;
  te_value_t y;
  if (in->type == TFL_FLOAT32 && out->type == TFL_FLOAT32) {
    te_value_t ops[3] = {x, te_scalar_f32(&c->e, 0.0f), te_scalar_f32(&c->e, 0.0f)};
    char props[400];
    window_props(&w, 1, "f32", props, sizeof props);
    te_type_t t = te_type(TE_F32, 4, odims);
    y = te_op(&c->e, "tosa.avg_pool2d", ops, 3, props, &t);
  } else if (tfl_is_quantized(in) && same_quant(in, out) &&
             (in->type != TFL_INT16 || tfl_zero_point(in) == 0)) {
    y = quant_avg(c, &w, x, odims);
    if (!y.id) return c->error;
    int32_t qmin, qmax, lo, hi;
    tfl_qrange(out, &qmin, &qmax);
    tfl_activation_range_q(act, tfl_scale(out), tfl_zero_point(out), qmin, qmax, &lo, &hi);
    y = te_cast(&c->e, te_clamp_int(&c->e, y, lo, hi), in->type == TFL_INT16 ? TE_I16 : TE_I8);
    return tfl_set_out(c, 0, y);
  } else {
    return tfl_fail(c, "quantised AVERAGE_POOL_2D needs equal input and output quantisation");
  }
  return tfl_set_out(c, 0, tfl_activation(c, y, out, act));
}
