/* Elementwise arithmetic, activations, (de)quantisation and SOFTMAX.
 *
 * Quantised ADD/SUB follow TFLite's reference kernel step by step: shift the
 * zero-point-corrected inputs left by 20, rescale each to the doubled larger
 * input scale, add, and rescale to the output.  Each TFLite step is one TOSA
 * rescale with DOUBLE_ROUND, which reproduces MultiplyByQuantizedMultiplier
 * exactly; the fused elementwise ops cost nothing extra after Linalg fusion. */
#include <math.h>
#include <string.h>

#include "../../common/alloc.h"
#include "tfl_lower.h"
#include "tfl_q16_act.h"
#include "tfl_quant.h"

enum { OPT_ADD = 11, OPT_MUL = 21, OPT_SUB = 28 };

static int is_q8(const tfl_tensor_t *t) {
  return (t->type == TFL_INT8 || t->type == TFL_UINT8) && tfl_is_quantized(t) &&
         t->quant.scale_count == 1;
}

/* int16 as TFLite quantises it: symmetric, zero point 0. */
static int is_q16(const tfl_tensor_t *t) {
  return t->type == TFL_INT16 && tfl_is_quantized(t) && t->quant.scale_count == 1 &&
         tfl_zero_point(t) == 0;
}

static int all_float(const tfl_tensor_t *a, const tfl_tensor_t *b, const tfl_tensor_t *o) {
  return a->type == TFL_FLOAT32 && (!b || b->type == TFL_FLOAT32) && o->type == TFL_FLOAT32;
}

/* One TFLite multiplier step as a rescale: x * real with double rounding. */
static te_value_t scale_by(tfl_ctx_t *c, te_value_t x, double real, te_elem_t out,
                           int64_t in_zp, int64_t out_zp) {
  int32_t m;
  int s;
  int8_t ts;
  if (!tfl_quantize_multiplier(real, &m, &s) ||
      !tfl_tosa_shift(s, &ts)) {
    tfl_fail(c, "scale ratio %g is out of range", real);
    return (te_value_t){0};
  }
  return te_rescale(&c->e, x, out, &m, &ts, 1, in_zp, out_zp, 1, 0, 0);
}

/* (q - zp) << shift as int32, exactly: a rescale by 2^(shift+2) >> 2. */
static te_value_t widen(tfl_ctx_t *c, te_value_t q, int64_t zp, int shift) {
  int32_t m = 1 << (shift + 2);
  int8_t s = 2;
  return te_rescale(&c->e, q, TE_I32, &m, &s, 1, zp, 0, 0, 0, 0);
}

static tinyml_status_t quant_add_sub(tfl_ctx_t *c, int sub, int act) {
  const tfl_tensor_t *a = tfl_in(c, 0), *b = tfl_in(c, 1), *o = tfl_out(c, 0);
  /* TFLite Micro shifts int16 by 15, so 65535 << 15 still fits int32. */
  const int left_shift = o->type == TFL_INT16 ? 15 : 20;
  double sa = tfl_scale(a), sb = tfl_scale(b), so = tfl_scale(o);
  double twice_max = 2.0 * (double)(sa > sb ? (float)sa : (float)sb);
  te_value_t va = tfl_value_in(c, 0), vb = tfl_value_in(c, 1);
  if (!va.id || !vb.id) return c->error;
  te_value_t xa = scale_by(c, widen(c, va, tfl_zero_point(a), left_shift), sa / twice_max, TE_I32, 0, 0);
  te_value_t xb = scale_by(c, widen(c, vb, tfl_zero_point(b), left_shift), sb / twice_max, TE_I32, 0, 0);
  if (c->error) return c->error;
  te_value_t sum = te_binary(&c->e, sub ? "tosa.sub" : "tosa.add", xa, xb);
  te_value_t y = scale_by(c, sum, twice_max / ((double)(1 << left_shift) * so),
                          o->type == TFL_INT16 ? TE_I16 : TE_I8, 0, tfl_zero_point(o));
  if (!y.id) return c->error;
  return tfl_set_out(c, 0, tfl_activation(c, y, o, act));
}

static tinyml_status_t binary_float(tfl_ctx_t *c, const char *name, int act) {
  te_value_t a = tfl_value_in(c, 0), b = tfl_value_in(c, 1);
  if (!a.id || !b.id) return c->error;
  te_value_t y = strcmp(name, "tosa.mul") == 0 ? te_mul(&c->e, a, b, 0) : te_binary(&c->e, name, a, b);
  return tfl_set_out(c, 0, tfl_activation(c, y, tfl_out(c, 0), act));
}

static int binary_operands(tfl_ctx_t *c, uint8_t opt_type, int *act) {
  const tfl_table_t *o = tfl_options(c, opt_type);
  if (!o) return 0;
  int bad = 0;
  *act = tfl_table_i8(o, 0, 0, &bad);
  if (bad || !tfl_in(c, 0) || !tfl_in(c, 1) || !tfl_out(c, 0)) {
    tfl_fail(c, "malformed operands or options");
    return 0;
  }
  return 1;
}

tinyml_status_t tfl_lower_add_sub(tfl_ctx_t *c) {
  int sub = c->op->builtin_code == 41, act;
  if (!binary_operands(c, sub ? OPT_SUB : OPT_ADD, &act)) return c->error;
  const tfl_tensor_t *a = tfl_in(c, 0), *b = tfl_in(c, 1), *o = tfl_out(c, 0);
  if (all_float(a, b, o)) return binary_float(c, sub ? "tosa.sub" : "tosa.add", act);
  if (is_q8(a) && is_q8(b) && is_q8(o) && a->type == o->type && b->type == o->type)
    return quant_add_sub(c, sub, act);
  if (is_q16(a) && is_q16(b) && is_q16(o)) return quant_add_sub(c, sub, act);
  if (a->type == TFL_INT32 && b->type == TFL_INT32 && o->type == TFL_INT32 && act == 0)
    return binary_float(c, sub ? "tosa.sub" : "tosa.add", 0);
  return tfl_fail(c, "unsupported types %s, %s -> %s", tfl_type_name(a->type),
                  tfl_type_name(b->type), tfl_type_name(o->type));
}

tinyml_status_t tfl_lower_mul(tfl_ctx_t *c) {
  int act;
  if (!binary_operands(c, OPT_MUL, &act)) return c->error;
  const tfl_tensor_t *a = tfl_in(c, 0), *b = tfl_in(c, 1), *o = tfl_out(c, 0);
  if (all_float(a, b, o)) return binary_float(c, "tosa.mul", act);
  /* int32 is a plain product, as for ADD/SUB (TFLM's int32 Mul). */
  if (a->type == TFL_INT32 && b->type == TFL_INT32 && o->type == TFL_INT32 && act == 0)
    return binary_float(c, "tosa.mul", 0);
  /* int16 is TFLite Micro's MulElementwise as for int8 (the product fits int32). */
  int q16 = is_q16(a) && is_q16(b) && is_q16(o);
  if (!q16 && !(is_q8(a) && is_q8(b) && is_q8(o) && a->type == o->type && b->type == o->type))
    return tfl_fail(c, "unsupported types %s, %s -> %s", tfl_type_name(a->type),
                    tfl_type_name(b->type), tfl_type_name(o->type));
  te_value_t va = tfl_value_in(c, 0), vb = tfl_value_in(c, 1);
  if (!va.id || !vb.id) return c->error;
  te_value_t p = te_mul(&c->e, widen(c, va, tfl_zero_point(a), 0), widen(c, vb, tfl_zero_point(b), 0), 0);
  double real = (double)tfl_scale(a) * (double)tfl_scale(b) / (double)tfl_scale(o);
  te_value_t y = scale_by(c, p, real, q16 ? TE_I16 : TE_I8, 0, tfl_zero_point(o));
  if (!y.id) return c->error;
  return tfl_set_out(c, 0, tfl_activation(c, y, o, act));
}

/* RELU, RELU_N1_TO_1, RELU6: a clamp, with a rescale first when the input
 * and output quantisation differ. */
tinyml_status_t tfl_lower_relu(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int act = c->op->builtin_code == 19 ? 1 : c->op->builtin_code == 20 ? 2 : 3;
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id || !out) return c->error ? c->error : tfl_fail(c, "missing output");
  if (in->type == TFL_FLOAT32 && out->type == TFL_FLOAT32)
    return tfl_set_out(c, 0, tfl_activation(c, x, out, act));
  int q16 = is_q16(in) && is_q16(out); /* TFLM's ReluQuantized<int16_t> */
  if (!q16 && (!is_q8(in) || !is_q8(out) || in->type != out->type))
    return tfl_fail(c, "unsupported types %s -> %s", tfl_type_name(in->type), tfl_type_name(out->type));
  te_value_t y = scale_by(c, x, (double)tfl_scale(in) / (double)tfl_scale(out),
                          q16 ? TE_I16 : TE_I8, tfl_zero_point(in), tfl_zero_point(out));
  if (!y.id) return c->error;
  int32_t qmin, qmax, lo, hi;
  tfl_qrange(out, &qmin, &qmax);
  tfl_activation_range_q(act, tfl_scale(out), tfl_zero_point(out), qmin, qmax, &lo, &hi);
  return tfl_set_out(c, 0, te_clamp_int(&c->e, y, lo, hi));
}

/* int8 unary functions of one byte become a 256-entry TOSA table built at
 * compile time: dequantise, apply f in double, requantise with rounding
 * half away from zero (as TFLite's LUT-based kernels do). */
static te_value_t table_op(tfl_ctx_t *c, te_value_t x, const tfl_tensor_t *in,
                           const tfl_tensor_t *out, double (*f)(double)) {
  int8_t table[256];
  int32_t qmin, qmax;
  tfl_qrange(out, &qmin, &qmax);
  for (int i = 0; i < 256; ++i) {
    double v = f(((double)(i - 128) - tfl_zero_point(in)) * (double)tfl_scale(in));
    double q = round(v / (double)tfl_scale(out)) + tfl_zero_point(out);
    table[i] = (int8_t)(q < qmin ? qmin : q > qmax ? qmax : q);
  }
  return tfl_lookup_i8(c, x, table);
}

static double sigmoid(double v) { return 1.0 / (1.0 + exp(-v)); }

/* LOGISTIC and TANH. */
tinyml_status_t tfl_lower_unary_float(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int logistic = c->op->builtin_code == 14;
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id || !out) return c->error ? c->error : tfl_fail(c, "missing output");
  if (in->type == TFL_FLOAT32 && out->type == TFL_FLOAT32)
    return tfl_set_out(c, 0, te_unary(&c->e, logistic ? "tosa.sigmoid" : "tosa.tanh", x));
  if (is_q8(in) && is_q8(out) && in->type == out->type)
    return tfl_set_out(c, 0, table_op(c, x, in, out, logistic ? sigmoid : tanh));
  if (in->type == TFL_INT16 && out->type == TFL_INT16 && in->quant.scale_count == 1 &&
      out->quant.scale_count == 1 && tfl_scale(in) > 0.0f && tfl_scale(out) > 0.0f)
    return tfl_lower_q16_logistic_tanh(c, logistic);
  return tfl_fail(c, "unsupported types %s -> %s", tfl_type_name(in->type), tfl_type_name(out->type));
}

/* round-half-away-from-zero of a float tensor, as TfLiteRound does. */
te_value_t tfl_round_away(tfl_ctx_t *c, te_value_t x) {
  te_value_t half = te_scalar_f32(&c->e, 0.5f);
  te_value_t mag = te_unary(&c->e, "tosa.floor", te_binary(&c->e, "tosa.add", te_unary(&c->e, "tosa.abs", x), half));
  te_value_t neg = te_binary(&c->e, "tosa.greater", te_scalar_f32(&c->e, 0.0f), x);
  return te_select(&c->e, neg, te_mul(&c->e, mag, te_scalar_f32(&c->e, -1.0f), 0), mag);
}

static int is_int_q(const tfl_tensor_t *t) {
  return (t->type == TFL_INT8 || t->type == TFL_UINT8 || t->type == TFL_INT16) &&
         t->quant.scale_count == 1;
}

/* TFLM's Requantize: clamp(MBQM(x - in_zp, m, s) + out_zp) in the output
 * type.  TOSA allows a rescale's zero points only on 8-bit values, so
 * other types take the zero points as i32 adds around an i32 rescale. */
static te_value_t requantize(tfl_ctx_t *c, te_value_t x, const tfl_tensor_t *in,
                             const tfl_tensor_t *out, te_elem_t elem) {
  double real = (double)tfl_scale(in) / (double)tfl_scale(out);
  int32_t zi = tfl_zero_point(in), zo = tfl_zero_point(out);
  if (x.type.elem == TE_I8 && elem == TE_I8) return scale_by(c, x, real, TE_I8, zi, zo);
  te_value_t v = te_cast(&c->e, x, TE_I32);
  if (zi) v = te_binary(&c->e, "tosa.sub", v, te_scalar_int(&c->e, TE_I32, zi));
  v = scale_by(c, v, real, TE_I32, 0, 0);
  if (!v.id) return v;
  if (zo) v = te_binary(&c->e, "tosa.add", v, te_scalar_int(&c->e, TE_I32, zo));
  if (elem == TE_I32) return v;
  int32_t qmin, qmax;
  tfl_qrange(out, &qmin, &qmax);
  return te_cast(&c->e, te_clamp_int(&c->e, v, qmin, qmax), elem);
}

/* float -> int8/uint8/int16, and requantisation between int8, uint8 and
 * int16 (to int32 too, as the keyword models' last op). */
tinyml_status_t tfl_lower_quantize(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  te_value_t x = tfl_value_in(c, 0);
  te_type_t ot;
  if (!x.id || !out) return c->error ? c->error : tfl_fail(c, "missing output");
  int int32_out = out->type == TFL_INT32 && out->quant.scale_count == 1;
  if (!(is_int_q(out) || int32_out) || !tfl_te_type(out, &ot))
    return tfl_fail(c, "output type %s is not supported", tfl_type_name(out->type));
  if (is_int_q(in)) return tfl_set_out(c, 0, requantize(c, x, in, out, ot.elem));
  if (in->type != TFL_FLOAT32 || int32_out)
    return tfl_fail(c, "input type %s is not supported", tfl_type_name(in->type));
  /* q = clamp(round(x / scale) + zp). */
  te_value_t r = tfl_round_away(c, te_mul(&c->e, x, te_scalar_f32(&c->e, 1.0f / tfl_scale(out)), 0));
  int32_t qmin, qmax;
  tfl_qrange(out, &qmin, &qmax);
  te_value_t q = te_binary(&c->e, "tosa.add", r, te_scalar_f32(&c->e, (float)tfl_zero_point(out)));
  q = te_clamp_f32(&c->e, q, (float)qmin, (float)qmax);
  return tfl_set_out(c, 0, te_cast(&c->e, q, ot.elem));
}

tinyml_status_t tfl_lower_dequantize(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  if (!in || !out || out->type != TFL_FLOAT32)
    return tfl_fail(c, "only dequantisation to FLOAT32 is supported");
  if (in->data && (in->type == TFL_INT8 || in->type == TFL_UINT8)) {
    int64_t dims[TE_MAX_RANK];
    for (uint32_t d = 0; d < in->rank && d < TE_MAX_RANK; ++d) dims[d] = in->shape[d];
    return tfl_set_out(c, 0, tfl_dequantized_const(c, in, in->rank, dims));
  }
  if (!is_int_q(in)) return tfl_fail(c, "input type %s is not supported", tfl_type_name(in->type));
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  te_value_t f = te_binary(&c->e, "tosa.sub", te_cast(&c->e, x, TE_F32),
                           te_scalar_f32(&c->e, (float)tfl_zero_point(in)));
  return tfl_set_out(c, 0, te_mul(&c->e, f, te_scalar_f32(&c->e, tfl_scale(in)), 0));
}
