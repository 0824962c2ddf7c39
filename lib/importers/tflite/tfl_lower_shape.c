/* Data movement: RESHAPE/SQUEEZE/EXPAND_DIMS, PAD/PADV2, CONCATENATION,
 * TRANSPOSE, GATHER, GATHER_ND, EMBEDDING_LOOKUP; and MEAN.
 * Shape operands must be constant: only static shapes are supported. */
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OPT_CONCAT = 10, OPT_GATHER = 23 };

int tfl_const_ints(tfl_ctx_t *c, uint32_t input, int64_t *out, uint32_t cap, uint32_t *n) {
  const tfl_tensor_t *t = tfl_in(c, input);
  if (!t || !t->data || (t->type != TFL_INT32 && t->type != TFL_INT64)) {
    tfl_fail(c, "operand %u must be a constant INT32 or INT64 tensor", input);
    return 0;
  }
  size_t es = t->type == TFL_INT32 ? 4 : 8, count = t->data_size / es;
  if (count > cap) {
    tfl_fail(c, "operand %u has too many elements", input);
    return 0;
  }
  for (size_t i = 0; i < count; ++i) {
    if (es == 4) {
      int32_t v;
      memcpy(&v, t->data + 4 * i, 4);
      out[i] = v;
    } else {
      memcpy(&out[i], t->data + 8 * i, 8);
    }
  }
  *n = (uint32_t)count;
  return 1;
}

int tfl_quant_matches(const tfl_tensor_t *a, const tfl_tensor_t *b) {
  if (a->type != b->type) return 0;
  if (!tfl_is_quantized(a) && !tfl_is_quantized(b)) return 1;
  return tfl_scale(a) == tfl_scale(b) && tfl_zero_point(a) == tfl_zero_point(b);
}

/* uint8 x brought to `out`'s quantisation as TFLite's uint8
 * ConcatenationWithScaling does it, in float: round(q * scale + bias) +
 * out_zp with scale = in_scale * (1 / out_scale) and bias = -in_zp * scale,
 * rounding half away from zero, clamped to 0..255.  (q is the raw byte:
 * the int8 we carry + 128.) */
static te_value_t requant_uint8(tfl_ctx_t *c, te_value_t x, const tfl_tensor_t *in,
                                const tfl_tensor_t *out) {
  te_t *e = &c->e;
  const float scale = tfl_scale(in) * (1.0f / tfl_scale(out));
  const float bias = (float)-(tfl_zero_point(in) + 128) * scale;
  te_value_t q = te_binary(e, "tosa.add", te_cast(e, x, TE_F32), te_scalar_f32(e, 128.0f));
  q = te_binary(e, "tosa.add", te_mul(e, q, te_scalar_f32(e, scale), 0), te_scalar_f32(e, bias));
  te_value_t r = te_cast(e, tfl_round_away(c, q), TE_I32);
  r = te_binary(e, "tosa.add", r, te_scalar_int(e, TE_I32, tfl_zero_point(out)));
  return te_cast(e, te_clamp_int(e, r, -128, 127), TE_I8);
}

/* Brings x to `out`'s quantisation when it differs (a TFLite requantise). */
static te_value_t requant_to(tfl_ctx_t *c, te_value_t x, const tfl_tensor_t *in,
                             const tfl_tensor_t *out) {
  if (tfl_quant_matches(in, out)) return x;
  if (in->type == TFL_UINT8 && out->type == TFL_UINT8 && in->quant.scale_count == 1 &&
      out->quant.scale_count == 1)
    return requant_uint8(c, x, in, out);
  if (!tfl_is_quantized(in) || !tfl_is_quantized(out) || in->type == TFL_INT16 ||
      in->quant.scale_count != 1 || out->quant.scale_count != 1) {
    tfl_fail(c, "operand '%s' and output '%s' differ in type or quantisation", in->name, out->name);
    return (te_value_t){0};
  }
  int32_t m;
  int s;
  int8_t ts;
  if (!tfl_quantize_multiplier((double)tfl_scale(in) / (double)tfl_scale(out), &m, &s) ||
      !tfl_tosa_shift(s, &ts)) {
    tfl_fail(c, "scale ratio of '%s' is out of range", in->name);
    return (te_value_t){0};
  }
  return te_rescale(&c->e, x, TE_I8, &m, &ts, 1, tfl_zero_point(in), tfl_zero_point(out), 1, 0, 0);
}

tinyml_status_t tfl_lower_reshape(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  te_type_t t;
  if (!in || !out || !tfl_te_type(out, &t)) return tfl_fail(c, "unsupported output");
  if (!tfl_quant_matches(in, out)) return tfl_fail(c, "input and output quantisation differ");
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  if (te_numel(&x.type) != te_numel(&t))
    return tfl_fail(c, "output '%s' has a different element count", out->name);
  return tfl_set_out(c, 0, te_reshape(&c->e, x, t.rank, t.dims));
}

tinyml_status_t tfl_lower_pad(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int64_t pads[2 * TE_MAX_RANK];
  uint32_t n;
  if (!in || !out || !tfl_const_ints(c, 1, pads, 2 * TE_MAX_RANK, &n)) return c->error;
  if (n != 2 * in->rank) return tfl_fail(c, "paddings must be [rank, 2]");
  for (uint32_t i = 0; i < n; ++i)
    if (pads[i] < 0) return tfl_fail(c, "negative padding is not supported");
  if (!tfl_quant_matches(in, out)) return tfl_fail(c, "input and output quantisation differ");
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  te_value_t pad_const;
  const tfl_tensor_t *pv = c->op->builtin_code == 60 ? tfl_in(c, 2) : NULL;
  if (pv) {
    if (!pv->data || pv->type != in->type) return tfl_fail(c, "the pad value must be a constant of the input's type");
    pad_const = te_reshape(&c->e, tfl_value_in(c, 2), 1, (int64_t[1]){1});
  } else if (x.type.elem == TE_F32) {
    pad_const = te_scalar_f32(&c->e, 0.0f);
  } else {
    pad_const = te_scalar_int(&c->e, x.type.elem, tfl_is_quantized(in) ? tfl_zero_point(in) : 0);
  }
  te_type_t t = x.type;
  for (uint32_t d = 0; d < t.rank; ++d) t.dims[d] += pads[2 * d] + pads[2 * d + 1];
  te_value_t ops[3] = {x, te_shape(&c->e, n, pads), pad_const};
  return tfl_set_out(c, 0, te_op(&c->e, "tosa.pad", ops, 3, NULL, &t));
}

tinyml_status_t tfl_lower_concat(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, OPT_CONCAT);
  const tfl_tensor_t *out = tfl_out(c, 0);
  if (!o || !out) return c->error ? c->error : tfl_fail(c, "missing output");
  int bad = 0;
  int32_t axis = tfl_table_i32(o, 0, 0, &bad);
  int act = tfl_table_i8(o, 1, 0, &bad);
  if (axis < 0) axis += (int32_t)out->rank;
  if (bad || axis < 0 || (uint32_t)axis >= out->rank || c->op->input_count == 0 ||
      c->op->input_count > 64)
    return tfl_fail(c, "invalid axis or inputs");
  te_value_t ops[64];
  te_type_t t;
  if (!tfl_te_type(out, &t)) return tfl_fail(c, "unsupported output type");
  int64_t total = 0;
  for (uint32_t i = 0; i < c->op->input_count; ++i) {
    const tfl_tensor_t *in = tfl_in(c, i);
    te_value_t x = tfl_value_in(c, i);
    if (!x.id || !in) return c->error ? c->error : tfl_fail(c, "missing input %u", i);
    if (x.type.rank != t.rank) return tfl_fail(c, "input %u has the wrong rank", i);
    ops[i] = requant_to(c, x, in, out);
    if (!ops[i].id) return c->error;
    total += x.type.dims[axis];
  }
  t.dims[axis] = total;
  char props[32];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  te_value_t y = te_op(&c->e, "tosa.concat", ops, c->op->input_count, props, &t);
  return tfl_set_out(c, 0, tfl_activation(c, y, out, act));
}

tinyml_status_t tfl_lower_transpose(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int64_t perm[TE_MAX_RANK];
  uint32_t n;
  if (!in || !out || !tfl_const_ints(c, 1, perm, TE_MAX_RANK, &n)) return c->error;
  if (n != in->rank) return tfl_fail(c, "permutation length differs from the rank");
  int32_t p[TE_MAX_RANK];
  uint32_t seen = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (perm[i] < 0 || perm[i] >= (int64_t)n || (seen >> perm[i]) & 1)
      return tfl_fail(c, "invalid permutation");
    seen |= 1u << perm[i];
    p[i] = (int32_t)perm[i];
  }
  if (!tfl_quant_matches(in, out)) return tfl_fail(c, "input and output quantisation differ");
  te_value_t x = tfl_value_in(c, 0);
  return x.id ? tfl_set_out(c, 0, te_transpose(&c->e, x, p)) : c->error;
}

/* Desktop TFLite's uint8 Mean (reference_integer_ops::Mean):
 * MultiplyByQuantizedMultiplier(sum, in/out scale), divide by the count
 * rounding half away from zero, add the output zero point. */
static te_value_t mean_rounded(tfl_ctx_t *c, te_value_t sum, int64_t count,
                               const tfl_tensor_t *in, const tfl_tensor_t *out) {
  int32_t m;
  int s;
  int8_t ts;
  if (!tfl_quantize_multiplier((double)tfl_scale(in) / (double)tfl_scale(out), &m, &s) ||
      !tfl_tosa_shift(s, &ts)) {
    tfl_fail(c, "scale ratio out of range");
    return (te_value_t){0};
  }
  te_value_t r = te_rescale(&c->e, sum, TE_I32, &m, &ts, 1, 0, 0, 1, 0, 0);
  te_value_t half = te_scalar_int(&c->e, TE_I32, count / 2);
  te_value_t pos = te_binary(&c->e, "tosa.greater", r, te_scalar_int(&c->e, TE_I32, 0));
  te_value_t q = te_select(&c->e, pos, te_binary(&c->e, "tosa.add", r, half),
                           te_binary(&c->e, "tosa.sub", r, half));
  q = te_binary(&c->e, "tosa.intdiv", q, te_scalar_int(&c->e, TE_I32, count));
  return te_binary(&c->e, "tosa.add", q, te_scalar_int(&c->e, TE_I32, tfl_zero_point(out)));
}

/* TFLite Micro's int8/int16 MEAN (EvalIntegerMean) and SUM.  A MEAN with
 * the input's quantisation on the output is reference_ops::Mean: the raw
 * values' sum divided by the count in C, truncating toward zero.  Otherwise
 * QuantizedMeanOrSum: MultiplyByQuantizedMultiplier of (sum - zp * count),
 * for a MEAN with 1/count folded into the multiplier in integers,
 * (m << k) / count with k = floor(log2(count)) limited to 32 and to
 * 31 + shift. */
static te_value_t mean_tflm(tfl_ctx_t *c, te_value_t raw_sum, int64_t count, int is_sum,
                            const tfl_tensor_t *in, const tfl_tensor_t *out) {
  if (!is_sum && tfl_quant_matches(in, out))
    return te_binary(&c->e, "tosa.intdiv", raw_sum, te_scalar_int(&c->e, TE_I32, count));
  int32_t m;
  int s, k = 0;
  int8_t ts;
  if (!tfl_quantize_multiplier((double)tfl_scale(in) / (double)tfl_scale(out), &m, &s)) {
    tfl_fail(c, "scale ratio out of range");
    return (te_value_t){0};
  }
  int32_t mc = m;
  if (!is_sum) {
    while (k < 32 && (count >> (k + 1)) > 0) ++k;
    if (k > 31 + s) k = 31 + s;
    mc = (int32_t)(((int64_t)m << k) / count);
  }
  if (!tfl_tosa_shift(s - k, &ts)) {
    tfl_fail(c, "scale ratio out of range");
    return (te_value_t){0};
  }
  te_value_t sum = te_binary(&c->e, "tosa.sub", raw_sum,
                             te_scalar_int(&c->e, TE_I32, (int64_t)tfl_zero_point(in) * count));
  te_value_t r = te_rescale(&c->e, sum, TE_I32, &mc, &ts, 1, 0, 0, 1, 0, 0);
  return te_binary(&c->e, "tosa.add", r, te_scalar_int(&c->e, TE_I32, tfl_zero_point(out)));
}

/* MEAN over constant axes (SUM too, for int8 and int16).  int8 and int16
 * follow TFLite Micro's kernel; uint8, which TFLM lacks, desktop TFLite's. */
static tinyml_status_t lower_mean_or_sum(tfl_ctx_t *c, int is_sum) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int64_t axes[TE_MAX_RANK];
  uint32_t n;
  if (!in || !out || !tfl_const_ints(c, 1, axes, TE_MAX_RANK, &n)) return c->error;
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  int is_float = in->type == TFL_FLOAT32 && out->type == TFL_FLOAT32;
  if (!is_float && !(tfl_is_quantized(in) && tfl_is_quantized(out) && in->type == out->type &&
                     (in->type == TFL_INT8 || in->type == TFL_UINT8 || in->type == TFL_INT16)))
    return tfl_fail(c, "unsupported types %s -> %s", tfl_type_name(in->type), tfl_type_name(out->type));
  int tflm = in->type != TFL_UINT8;
  te_value_t acc = x;
  if (!is_float) {
    acc = te_cast(&c->e, x, TE_I32);
    if (!tflm)
      acc = te_binary(&c->e, "tosa.sub", acc, te_scalar_int(&c->e, TE_I32, tfl_zero_point(in)));
  }
  int64_t count = 1;
  uint32_t done = 0;
  for (uint32_t i = 0; i < n; ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + in->rank : axes[i];
    if (a < 0 || a >= (int64_t)in->rank) return tfl_fail(c, "axis %lld out of range", (long long)axes[i]);
    if ((done >> a) & 1) continue;
    done |= 1u << a;
    count *= in->shape[a];
    acc = te_reduce(&c->e, "tosa.reduce_sum", acc, (int32_t)a);
  }
  if (count < 1) return tfl_fail(c, "mean over an empty axis");
  te_value_t y;
  if (is_float) {
    y = te_mul(&c->e, acc, te_scalar_f32(&c->e, 1.0f / (float)count), 0);
  } else {
    te_value_t q = tflm ? mean_tflm(c, acc, count, is_sum, in, out)
                        : mean_rounded(c, acc, count, in, out);
    if (!q.id) return c->error;
    int32_t qmin, qmax;
    tfl_qrange(out, &qmin, &qmax);
    y = te_cast(&c->e, te_clamp_int(&c->e, q, qmin, qmax), in->type == TFL_INT16 ? TE_I16 : TE_I8);
  }
  te_type_t t;
  if (!tfl_te_type(out, &t) || te_numel(&t) != te_numel(&y.type))
    return tfl_fail(c, "output shape disagrees with the reduced axes");
  return tfl_set_out(c, 0, te_reshape(&c->e, y, t.rank, t.dims));
}

tinyml_status_t tfl_lower_mean(tfl_ctx_t *c) { return lower_mean_or_sum(c, 0); }

tinyml_status_t tfl_lower_sum_q(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0);
  if (in && in->type == TFL_UINT8) return tfl_fail(c, "unsupported types UINT8 -> UINT8");
  return lower_mean_or_sum(c, 1);
}

/* GATHER (axis, batch_dims 0): params seen as [outer, dim, inner], one
 * tosa.gather with the run-time indices.  TFLite fails an invoke on an
 * index outside [0, dim); compiled code cannot fail half-way, so the
 * compiler clamps such indices into the tensor instead. */
tinyml_status_t tfl_lower_gather(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, OPT_GATHER);
  const tfl_tensor_t *in = tfl_in(c, 0), *ix = tfl_in(c, 1), *out = tfl_out(c, 0);
  if (!o || !in || !ix || !out) return c->error ? c->error : tfl_fail(c, "missing operand");
  int bad = 0;
  int32_t axis = tfl_table_i32(o, 0, 0, &bad), batch_dims = tfl_table_i32(o, 1, 0, &bad);
  if (axis < 0) axis += (int32_t)in->rank;
  if (bad || axis < 0 || (uint32_t)axis >= in->rank)
    return tfl_fail(c, "axis %d is out of range for rank %u", axis, in->rank);
  if (batch_dims != 0) return tfl_fail(c, "batch_dims %d is not supported", batch_dims);
  if (ix->type != TFL_INT32 && ix->type != TFL_INT64)
    return tfl_fail(c, "indices must be INT32 or INT64, not %s", tfl_type_name(ix->type));
  if (in->type == TFL_BOOL || in->type == TFL_INT64 || !tfl_quant_matches(in, out))
    return tfl_fail(c, "params of type %s, or output quantisation unlike the params', are "
                    "not supported", tfl_type_name(in->type));
  te_type_t t;
  if (!tfl_te_type(out, &t) || in->rank + ix->rank - 1 != out->rank)
    return tfl_fail(c, "output '%s' has an unsupported type or rank", out->name);
  int64_t outer = 1, inner = 1, dim = in->shape[axis];
  for (int32_t d = 0; d < axis; ++d) outer *= in->shape[d];
  for (uint32_t d = (uint32_t)axis + 1; d < in->rank; ++d) inner *= in->shape[d];
  int64_t want[TE_MAX_RANK];
  uint32_t k = 0;
  for (int32_t d = 0; d < axis; ++d) want[k++] = in->shape[d];
  for (uint32_t d = 0; d < ix->rank; ++d) want[k++] = ix->shape[d];
  for (uint32_t d = (uint32_t)axis + 1; d < in->rank; ++d) want[k++] = in->shape[d];
  if (memcmp(want, t.dims, sizeof(int64_t) * t.rank) != 0)
    return tfl_fail(c, "output '%s' does not have the gathered shape", out->name);
  if (dim < 1 || dim > INT32_MAX || te_numel(&t) == 0)
    return tfl_fail(c, "empty or very large gathers are not supported");
  te_value_t x = tfl_value_in(c, 0), idx = tfl_value_in(c, 1);
  if (!x.id || !idx.id) return c->error;
  idx = te_cast(&c->e, idx, TE_I32);
  return tfl_set_out(c, 0, te_gather_axis(&c->e, x, outer, dim, inner, idx, t.rank, t.dims));
}

/* GATHER_ND: each row of the last index axis picks one slice of params;
 * the row becomes one flat index (row . strides) into params seen as
 * [1, prod(leading dims), prod(the rest)], then one GATHER. */
tinyml_status_t tfl_lower_gather_nd(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *ix = tfl_in(c, 1), *out = tfl_out(c, 0);
  te_type_t t;
  if (!in || !ix || !out || !tfl_te_type(out, &t) || !tfl_quant_matches(in, out) ||
      in->type == TFL_BOOL || in->type == TFL_INT64)
    return tfl_fail(c, "missing operand, or unsupported types");
  if (ix->type != TFL_INT32 || ix->rank < 1) return tfl_fail(c, "indices must be INT32 of rank 1 or more");
  int64_t k = ix->shape[ix->rank - 1], rows = 1, lead = 1, inner = 1;
  if (k < 1 || k > (int64_t)in->rank) return tfl_fail(c, "index depth %lld is out of range", (long long)k);
  for (uint32_t d = 0; d + 1 < ix->rank; ++d) rows *= ix->shape[d];
  for (int64_t d = 0; d < k; ++d) lead *= in->shape[d];
  for (uint32_t d = (uint32_t)k; d < in->rank; ++d) inner *= in->shape[d];
  if (te_numel(&t) != rows * inner || lead < 1 || lead > INT32_MAX)
    return tfl_fail(c, "output '%s' does not have the gathered shape", out->name);
  int32_t strides[TE_MAX_RANK];
  int64_t s = 1;
  for (int64_t d = k - 1; d >= 0; --d) strides[d] = (int32_t)s, s *= in->shape[d];
  te_value_t x = tfl_value_in(c, 0), idx = tfl_value_in(c, 1);
  if (!x.id || !idx.id) return c->error;
  te_type_t st = te_type(TE_I32, 1, &k);
  idx = te_reshape(&c->e, idx, 2, (int64_t[2]){rows, k});
  idx = te_mul(&c->e, idx, te_const(&c->e, &st, strides), 0);
  idx = te_reshape(&c->e, te_reduce(&c->e, "tosa.reduce_sum", idx, 1), 1, &rows);
  return tfl_set_out(c, 0, te_gather_axis(&c->e, x, 1, lead, inner, idx, t.rank, t.dims));
}

/* EMBEDDING_LOOKUP (ids, table): rows of the table; a GATHER on axis 0. */
tinyml_status_t tfl_lower_embedding_lookup(tfl_ctx_t *c) {
  const tfl_tensor_t *ids = tfl_in(c, 0), *tab = tfl_in(c, 1), *out = tfl_out(c, 0);
  te_type_t t;
  if (!ids || !tab || !out || !tfl_te_type(out, &t) || ids->type != TFL_INT32 || tab->rank < 1 ||
      !tfl_quant_matches(tab, out) || tab->type == TFL_BOOL)
    return tfl_fail(c, "unsupported types (INT32 ids, and a table of the output's type and "
                    "quantisation, are supported)");
  int64_t inner = 1;
  for (uint32_t d = 1; d < tab->rank; ++d) inner *= tab->shape[d];
  te_value_t x = tfl_value_in(c, 1), idx = tfl_value_in(c, 0);
  if (!x.id || !idx.id) return c->error;
  if (tab->shape[0] < 1 || te_numel(&t) != te_numel(&idx.type) * inner)
    return tfl_fail(c, "output '%s' does not have the looked-up shape", out->name);
  return tfl_set_out(c, 0, te_gather_axis(&c->e, x, 1, tab->shape[0], inner, idx, t.rank, t.dims));
}
