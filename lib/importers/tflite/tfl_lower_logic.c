/* Comparisons, logic, selection, casts and ARG_MAX/ARG_MIN: the operators
 * that make and use BOOL and index tensors (masks, thresholds, class
 * indices).  int8 and uint8 inputs are compared as TFLite (and TFLite
 * Micro) compare them, on each input brought to a common fixed-point
 * scale (ComparisonWithScaling), whatever their quantisations, and so
 * is int16 GREATER; the other int16 comparisons (which TFLM lacks) on raw
 * values, which needs the same quantisation on both.  UINT32 (carried as
 * int32 bits) exists only around CAST, which reads it as unsigned. */
#include <stdio.h>

#include "tfl_lower.h"
#include "tfl_quant.h"

enum {
  OP_CAST = 53, OP_ARG_MAX = 56, OP_LESS = 58, OP_GREATER = 61, OP_GREATER_EQUAL = 62,
  OP_LESS_EQUAL = 63, OP_SELECT = 64, OP_EQUAL = 71, OP_NOT_EQUAL = 72, OP_ARG_MIN = 79,
  OP_LOGICAL_OR = 84, OP_LOGICAL_AND = 86, OP_LOGICAL_NOT = 87, OP_SELECT_V2 = 123
};

static int same_quantization(const tfl_tensor_t *a, const tfl_tensor_t *b) {
  return a->type == b->type && tfl_scale(a) == tfl_scale(b) &&
         tfl_zero_point(a) == tfl_zero_point(b);
}

/* Types whose raw values order like their real values: floats, plain
 * integers, and uint8 (carried as int8 with the top bit flipped, which
 * keeps the order). */
static int ordered_type(int32_t t) {
  return t == TFL_FLOAT32 || t == TFL_INT32 || t == TFL_INT64 || t == TFL_INT8 ||
         t == TFL_UINT8 || t == TFL_INT16;
}

/* TFLite's scaled comparison value of a quantised 8-bit input:
 * MultiplyByQuantizedMultiplierSmallerThanOneExp((x - zp) << 8, scale).
 * Rounding can merge neighbouring values when the scale is below 1/256,
 * so this is not the raw order even with equal quantisations. */
static te_value_t scaled(tfl_ctx_t *c, te_value_t x, const tfl_tensor_t *t) {
  int32_t m;
  int s;
  int8_t ts;
  if (!(tfl_scale(t) < 1.0f) || !tfl_quantize_multiplier((double)tfl_scale(t), &m, &s) ||
      s > 0 || !tfl_tosa_shift(s, &ts)) {
    tfl_fail(c, "input scale %g is not in (0, 1)", (double)tfl_scale(t));
    return (te_value_t){0};
  }
  te_value_t v = te_binary(&c->e, "tosa.sub", te_cast(&c->e, x, TE_I32),
                           te_scalar_int(&c->e, TE_I32, tfl_zero_point(t)));
  v = te_mul(&c->e, v, te_scalar_int(&c->e, TE_I32, 256), 0);
  return te_rescale(&c->e, v, TE_I32, &m, &ts, 1, 0, 0, 1, 0, 0);
}

static te_value_t compare(tfl_ctx_t *c, int code, te_value_t a, te_value_t b) {
  te_t *e = &c->e;
  switch (code) {
    case OP_LESS: return te_binary(e, "tosa.greater", b, a);
    case OP_GREATER: return te_binary(e, "tosa.greater", a, b);
    case OP_GREATER_EQUAL: return te_binary(e, "tosa.greater_equal", a, b);
    case OP_LESS_EQUAL: return te_binary(e, "tosa.greater_equal", b, a);
    case OP_EQUAL: return te_binary(e, "tosa.equal", a, b);
    default: return te_unary(e, "tosa.logical_not", te_binary(e, "tosa.equal", a, b));
  }
}

tinyml_status_t tfl_lower_compare(tfl_ctx_t *c) {
  const tfl_tensor_t *a = tfl_in(c, 0), *b = tfl_in(c, 1), *out = tfl_out(c, 0);
  if (!a || !b || !out) return tfl_fail(c, "missing input or output");
  int code = (int)c->op->builtin_code;
  int equality = code == OP_EQUAL || code == OP_NOT_EQUAL;
  if (a->type != b->type || out->type != TFL_BOOL ||
      !(ordered_type(a->type) || (equality && a->type == TFL_BOOL)))
    return tfl_fail(c, "unsupported types %s, %s -> %s", tfl_type_name(a->type),
                    tfl_type_name(b->type), tfl_type_name(out->type));
  /* TFLM's GREATER (alone) takes int16 too, scaled like int8: ((x - zp)
   * << 8 fits int32).  The other int16 comparisons keep raw values. */
  int scaled16 = a->type == TFL_INT16 && code == OP_GREATER;
  int q8 = (a->type == TFL_INT8 || a->type == TFL_UINT8 || scaled16) && tfl_is_quantized(a) &&
           tfl_is_quantized(b);
  if (!q8 && tfl_is_quantized(a) && !same_quantization(a, b))
    return tfl_fail(c, "%s inputs of different quantisation (%g, %d and %g, %d) are not "
                    "supported", tfl_type_name(a->type), (double)tfl_scale(a),
                    (int)tfl_zero_point(a), (double)tfl_scale(b), (int)tfl_zero_point(b));
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  if (q8) {
    x = scaled(c, x, a);
    y = x.id ? scaled(c, y, b) : x;
    if (!y.id) return c->error;
  }
  return tfl_set_out(c, 0, compare(c, code, x, y));
}

tinyml_status_t tfl_lower_logical(tfl_ctx_t *c) {
  int code = (int)c->op->builtin_code, n = code == OP_LOGICAL_NOT ? 1 : 2;
  const tfl_tensor_t *out = tfl_out(c, 0);
  for (int i = 0; i < n; ++i)
    if (!tfl_in(c, (uint32_t)i) || tfl_in(c, (uint32_t)i)->type != TFL_BOOL)
      return tfl_fail(c, "input %d must be BOOL", i);
  if (!out || out->type != TFL_BOOL) return tfl_fail(c, "the output must be BOOL");
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  if (n == 1) return tfl_set_out(c, 0, te_unary(&c->e, "tosa.logical_not", x));
  te_value_t y = tfl_value_in(c, 1);
  if (!y.id) return c->error;
  const char *name = code == OP_LOGICAL_OR ? "tosa.logical_or" : "tosa.logical_and";
  return tfl_set_out(c, 0, te_binary(&c->e, name, x, y));
}

/* SELECT's condition may also be 1-D over the first axis of x (whole rows
 * chosen); SELECT_V2 broadcasts all three. */
static te_value_t row_condition(tfl_ctx_t *c, te_value_t cond, const te_type_t *x) {
  if (cond.type.rank != 1 || x->rank <= 1) return cond;
  int64_t dims[TE_MAX_RANK] = {cond.type.dims[0]};
  for (uint32_t d = 1; d < x->rank; ++d) dims[d] = 1;
  return te_reshape(&c->e, cond, x->rank, dims);
}

tinyml_status_t tfl_lower_select(tfl_ctx_t *c) {
  const tfl_tensor_t *cond = tfl_in(c, 0), *a = tfl_in(c, 1), *b = tfl_in(c, 2);
  const tfl_tensor_t *out = tfl_out(c, 0);
  if (!cond || !a || !b || !out) return tfl_fail(c, "missing input or output");
  if (cond->type != TFL_BOOL) return tfl_fail(c, "the condition must be BOOL");
  if (a->type != out->type || b->type != out->type)
    return tfl_fail(c, "unsupported types %s, %s -> %s", tfl_type_name(a->type),
                    tfl_type_name(b->type), tfl_type_name(out->type));
  if (tfl_is_quantized(out) && !(same_quantization(a, out) && same_quantization(b, out)))
    return tfl_fail(c, "inputs quantised unlike the output are not supported");
  te_value_t k = tfl_value_in(c, 0), x = tfl_value_in(c, 1), y = tfl_value_in(c, 2);
  if (!k.id || !x.id || !y.id) return c->error;
  if (c->op->builtin_code == OP_SELECT) k = row_condition(c, k, &x.type);
  return tfl_set_out(c, 0, te_select(&c->e, k, x, y));
}

/* uint8 travels as int8 (value - 128): back to its value, in i32. */
static te_value_t widen_uint8(tfl_ctx_t *c, te_value_t x) {
  return te_binary(&c->e, "tosa.add", te_cast(&c->e, x, TE_I32),
                   te_scalar_int(&c->e, TE_I32, 128));
}

/* TFLite's CAST is static_cast: floats truncate toward zero, integers wrap,
 * anything non-zero is true. */
static te_value_t cast(tfl_ctx_t *c, te_value_t x, int32_t from, const te_type_t *to) {
  te_t *e = &c->e;
  if (from == TFL_UINT8) x = widen_uint8(c, x);
  if (to->elem == TE_I1) {
    te_value_t zero = x.type.elem == TE_F32 ? te_scalar_f32(e, 0.0f)
                                            : te_scalar_int(e, x.type.elem, 0);
    return te_unary(e, "tosa.logical_not", te_binary(e, "tosa.equal", x, zero));
  }
  if (x.type.elem == TE_I1)
    return to->elem == TE_F32
               ? te_select(e, x, te_scalar_f32(e, 1.0f), te_scalar_f32(e, 0.0f))
               : te_select(e, x, te_scalar_int(e, to->elem, 1), te_scalar_int(e, to->elem, 0));
  if (x.type.elem == TE_F32 && to->elem != TE_F32) return te_trunc_to_int(e, x, to->elem);
  return te_cast(e, x, to->elem);
}

/* UINT32 travels as its int32 bit pattern, so the casts that agree with
 * int32's are shared (truncation to int8/int16, sign extension of int8 and
 * int16 into it, as C++ does); these are the ones that read the pattern
 * as unsigned.  To float: the two 16-bit halves are exact floats and one
 * addition rounds once, like static_cast<float>(uint32_t). */
static te_value_t uint32_to(tfl_ctx_t *c, te_value_t x, te_elem_t to) {
  te_t *e = &c->e;
  if (to == TE_F32) {
    te_value_t hi = te_binary(e, "tosa.logical_right_shift", x, te_scalar_int(e, TE_I32, 16));
    te_value_t lo = te_binary(e, "tosa.bitwise_and", x, te_scalar_int(e, TE_I32, 0xFFFF));
    hi = te_mul(e, te_cast(e, hi, TE_F32), te_scalar_f32(e, 65536.0f), 0);
    return te_binary(e, "tosa.add", hi, te_cast(e, lo, TE_F32));
  }
  /* int64 zero-extends: a set top bit is 2^32 more than the sign-extension. */
  te_value_t w = te_cast(e, x, TE_I64);
  te_value_t neg = te_binary(e, "tosa.greater", te_scalar_int(e, TE_I32, 0), x);
  return te_select(e, neg, te_binary(e, "tosa.add", w, te_scalar_int(e, TE_I64, 1LL << 32)), w);
}

/* float -> uint32 is defined for [0, 2^32): from 2^31 the value is an
 * integer and v - 2^32 is exact and in int32's range; below, plain
 * truncation gives the same bits as going through int64. */
static te_value_t float_to_uint32(tfl_ctx_t *c, te_value_t x) {
  te_t *e = &c->e;
  te_value_t big = te_binary(e, "tosa.greater_equal", x, te_scalar_f32(e, 2147483648.0f));
  te_value_t high = te_binary(e, "tosa.sub", x, te_scalar_f32(e, 4294967296.0f));
  return te_select(e, big, te_trunc_to_int(e, high, TE_I32), te_trunc_to_int(e, x, TE_I32));
}

static te_value_t cast_uint32(tfl_ctx_t *c, te_value_t x, int32_t from, int32_t to,
                              const te_type_t *tt) {
  if (from == TFL_UINT32 && (tt->elem == TE_F32 || tt->elem == TE_I64))
    return uint32_to(c, x, tt->elem);
  if (to == TFL_UINT32 && x.type.elem == TE_F32) return float_to_uint32(c, x);
  return cast(c, x, from, tt);
}

static const tfl_tensor_t *operand(tfl_ctx_t *c, uint32_t i) {
  return i < c->op->input_count ? tfl_in(c, i) : tfl_out(c, i - c->op->input_count);
}

/* UINT32 has no libtinyml dtype: it may only pass between CASTs. */
tinyml_status_t tfl_refuse_uint32(tfl_ctx_t *c) {
  const tfl_operator_t *op = c->op;
  uint32_t n = op->input_count + op->output_count;
  int any = 0;
  for (uint32_t i = 0; i < n; ++i) any |= operand(c, i) && operand(c, i)->type == TFL_UINT32;
  if (!any || (!op->custom_code && op->builtin_code == OP_CAST)) return TINYML_OK;
  char types[160] = "";
  size_t len = 0;
  for (uint32_t i = 0; i < n && len < sizeof types - 32; ++i) {
    const char *sep = i == 0 ? "" : i == op->input_count ? " -> " : ", ";
    const tfl_tensor_t *t = operand(c, i);
    len += (size_t)snprintf(types + len, sizeof types - len, "%s%s", sep,
                            t ? tfl_type_name(t->type) : "none");
  }
  return tfl_fail(c, "unsupported types %s (UINT32 only as CAST's input or output)", types);
}

tinyml_status_t tfl_lower_cast(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  te_type_t to;
  if (!in || !out) return tfl_fail(c, "missing input or output");
  /* uint8 results would need the wrap done on the value, then the carry
   * to int8; no model we know casts to uint8.  int16 casts its raw values
   * (TFLM ignores quantisation here) like any other integer. */
  if (!tfl_te_type(out, &to) || out->type == TFL_UINT8 || !tfl_te_type(in, &(te_type_t){0}))
    return tfl_fail(c, "casting %s to %s is not supported", tfl_type_name(in->type),
                    tfl_type_name(out->type));
  te_value_t x = tfl_value_in(c, 0);
  return x.id ? tfl_set_out(c, 0, cast_uint32(c, x, in->type, out->type, &to)) : c->error;
}

/* The axis input: a constant scalar or 1-element int32/int64 tensor. */
static int arg_axis(tfl_ctx_t *c, uint32_t rank, int32_t *axis) {
  int64_t v;
  uint32_t n = 0;
  if (!tfl_const_ints(c, 1, &v, 1, &n)) return 0;
  if (n == 1 && v < 0) v += rank;
  if (n != 1 || v < 0 || v >= rank) {
    tfl_fail(c, "the axis must be one value in [-%u, %u)", rank, rank);
    return 0;
  }
  *axis = (int32_t)v;
  return 1;
}

/* tosa.argmax keeps the first of equal maxima, as TFLite does.  ARG_MIN
 * is ARG_MAX of an order-reversed copy: -x for floats, ~x = -x - 1 for
 * integers (no overflow). */
tinyml_status_t tfl_lower_arg_min_max(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int32_t axis = 0;
  if (!in || !out) return tfl_fail(c, "missing input or output");
  if (!ordered_type(in->type) || in->type == TFL_INT64 ||
      (out->type != TFL_INT32 && out->type != TFL_INT64))
    return tfl_fail(c, "unsupported types %s -> %s", tfl_type_name(in->type),
                    tfl_type_name(out->type));
  if (!arg_axis(c, in->rank, &axis)) return c->error;
  if (in->shape[axis] <= 0) return tfl_fail(c, "empty inputs are not supported");
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  if (c->op->builtin_code == OP_ARG_MIN)
    x = x.type.elem == TE_F32 ? te_mul(&c->e, x, te_scalar_f32(&c->e, -1.0f), 0)
                              : te_unary(&c->e, "tosa.bitwise_not", x);
  te_value_t y = te_argmax(&c->e, x, axis);
  return tfl_set_out(c, 0, te_cast(&c->e, y, out->type == TFL_INT64 ? TE_I64 : TE_I32));
}
