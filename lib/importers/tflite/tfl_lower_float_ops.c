/* Float elementwise operators beyond the arithmetic of tfl_lower_math.c:
 * the unary math (ABS ... HARD_SWISH), LEAKY_RELU and the binary
 * MAXIMUM, MINIMUM, DIV, SQUARED_DIFFERENCE, FLOOR_DIV.  Each follows the
 * float formula of TFLite's reference kernel.  The int8 forms TFLite Micro
 * has (ABS, LEAKY_RELU, HARD_SWISH, ELU) are in tfl_lower_q8_unary.c, the
 * integer DIV, SQUARED_DIFFERENCE and RSQRT in tfl_lower_q8_math.c; the
 * other quantised forms are refused by name. */
#include <string.h>

#include "tfl_lower.h"

enum {
  OP_FLOOR = 8, OP_DIV = 42, OP_EXP = 47, OP_MAXIMUM = 55, OP_MINIMUM = 57, OP_NEG = 59,
  OP_SIN = 66, OP_LOG = 73, OP_SQRT = 75, OP_RSQRT = 76, OP_FLOOR_DIV = 90, OP_SQUARE = 92,
  OP_LEAKY_RELU = 98, OP_SQUARED_DIFFERENCE = 99, OP_ABS = 101, OP_CEIL = 104, OP_COS = 108,
  OP_ELU = 111, OP_ROUND = 116, OP_HARD_SWISH = 117
};
enum { OPT_DIV = 29, OPT_LEAKY_RELU = 75 };

static te_value_t kf(tfl_ctx_t *c, float v) { return te_scalar_f32(&c->e, v); }

static te_value_t mulk(tfl_ctx_t *c, te_value_t x, float k) { return te_mul(&c->e, x, kf(c, k), 0); }

/* x where x > 0, else `neg_part` (TFLite's ELU and LEAKY_RELU test x > 0
 * or x < 0 alike for every value but 0, where both give 0). */
static te_value_t positive_or(tfl_ctx_t *c, te_value_t x, te_value_t neg_part) {
  return te_select(&c->e, te_binary(&c->e, "tosa.greater", x, kf(c, 0.0f)), x, neg_part);
}

static te_value_t unary(tfl_ctx_t *c, int code, te_value_t x, float alpha) {
  switch (code) {
    case OP_ABS: return te_unary(&c->e, "tosa.abs", x);
    case OP_NEG: return mulk(c, x, -1.0f);
    case OP_EXP: return te_unary(&c->e, "tosa.exp", x);
    case OP_LOG: return te_unary(&c->e, "tosa.log", x);
    case OP_SQRT: return te_unary(&c->e, "tosa.reciprocal", te_unary(&c->e, "tosa.rsqrt", x));
    case OP_RSQRT: return te_unary(&c->e, "tosa.rsqrt", x);
    case OP_SQUARE: return te_mul(&c->e, x, x, 0);
    case OP_CEIL: return te_unary(&c->e, "tosa.ceil", x);
    case OP_FLOOR: return te_unary(&c->e, "tosa.floor", x);
    case OP_ROUND: return te_round_half_even(&c->e, x);
    case OP_SIN: return te_unary(&c->e, "tosa.sin", x);
    case OP_COS: return te_unary(&c->e, "tosa.cos", x);
    case OP_ELU:
      return positive_or(c, x, te_binary(&c->e, "tosa.add", te_unary(&c->e, "tosa.exp", x), kf(c, -1.0f)));
    case OP_LEAKY_RELU: return positive_or(c, x, mulk(c, x, alpha));
    default: /* OP_HARD_SWISH: x * relu6(x + 3) / 6 */
      return te_divf(&c->e,
                     te_mul(&c->e, x, te_clamp_f32(&c->e, te_binary(&c->e, "tosa.add", x, kf(c, 3.0f)), 0.0f, 6.0f), 0),
                     kf(c, 6.0f));
  }
}

tinyml_status_t tfl_lower_unary_math(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int code = (int)c->op->builtin_code, bad = 0;
  if (!in || !out) return tfl_fail(c, "missing input or output");
  float alpha = 0.0f;
  if (code == OP_LEAKY_RELU) {
    const tfl_table_t *o = tfl_options(c, OPT_LEAKY_RELU);
    if (!o) return c->error;
    alpha = tfl_table_f32(o, 0, 0.0f, &bad);
    if (bad) return tfl_fail(c, "malformed options");
  }
  int has_q8 = code == OP_ABS || code == OP_LEAKY_RELU || code == OP_HARD_SWISH || code == OP_ELU;
  if (has_q8 && in->type != TFL_FLOAT32) return tfl_lower_unary_q8(c, alpha);
  if (code == OP_RSQRT && in->type != TFL_FLOAT32) return tfl_lower_rsqrt_q8(c);
  if (in->type != TFL_FLOAT32 || out->type != TFL_FLOAT32)
    return tfl_fail(c, "unsupported types %s -> %s (only FLOAT32 so far)",
                    tfl_type_name(in->type), tfl_type_name(out->type));
  te_value_t x = tfl_value_in(c, 0);
  return x.id ? tfl_set_out(c, 0, unary(c, code, x, alpha)) : c->error;
}

static te_value_t binary(tfl_ctx_t *c, int code, te_value_t a, te_value_t b) {
  switch (code) {
    case OP_MAXIMUM: return te_binary(&c->e, "tosa.maximum", a, b);
    case OP_MINIMUM: return te_binary(&c->e, "tosa.minimum", a, b);
    case OP_DIV: return te_divf(&c->e, a, b);
    case OP_FLOOR_DIV: return te_unary(&c->e, "tosa.floor", te_divf(&c->e, a, b));
    default: { /* OP_SQUARED_DIFFERENCE */
      te_value_t d = te_binary(&c->e, "tosa.sub", a, b);
      return te_mul(&c->e, d, d, 0);
    }
  }
}

/* Integer MAXIMUM/MINIMUM: TFLite compares raw values, which is the real
 * maximum only when both inputs and the output share one quantisation. */
static tinyml_status_t max_min_int(tfl_ctx_t *c, int code, const tfl_tensor_t *a,
                                   const tfl_tensor_t *b, const tfl_tensor_t *out) {
  int32_t t = out->type;
  if (a->type != t || b->type != t ||
      !(t == TFL_INT8 || t == TFL_UINT8 || t == TFL_INT16 || t == TFL_INT32 || t == TFL_INT64))
    return tfl_fail(c, "unsupported types %s, %s -> %s", tfl_type_name(a->type),
                    tfl_type_name(b->type), tfl_type_name(t));
  if (!tfl_quant_matches(a, out) || !tfl_quant_matches(b, out))
    return tfl_fail(c, "inputs and output must share one quantisation");
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  te_elem_t elem = x.type.elem;
  if (elem == TE_I32) return tfl_set_out(c, 0, binary(c, code, x, y));
  if (elem == TE_I64) { /* TOSA's maximum/minimum stop at i32; a compare does not */
    te_value_t gt = te_binary(&c->e, "tosa.greater", x, y);
    return tfl_set_out(c, 0, code == OP_MAXIMUM ? te_select(&c->e, gt, x, y)
                                                : te_select(&c->e, gt, y, x));
  }
  te_value_t r = binary(c, code, te_cast(&c->e, x, TE_I32), te_cast(&c->e, y, TE_I32));
  return tfl_set_out(c, 0, te_cast(&c->e, r, elem));
}

tinyml_status_t tfl_lower_binary_math(tfl_ctx_t *c) {
  const tfl_tensor_t *a = tfl_in(c, 0), *b = tfl_in(c, 1), *out = tfl_out(c, 0);
  int code = (int)c->op->builtin_code, act = 0, bad = 0;
  if (!a || !b || !out) return tfl_fail(c, "missing input or output");
  if ((code == OP_MAXIMUM || code == OP_MINIMUM) && out->type != TFL_FLOAT32)
    return max_min_int(c, code, a, b, out);
  if (code == OP_DIV) {
    const tfl_table_t *o = tfl_options(c, OPT_DIV);
    if (!o) return c->error;
    act = tfl_table_i8(o, 0, 0, &bad);
    if (bad) return tfl_fail(c, "malformed options");
  }
  if ((code == OP_DIV || code == OP_SQUARED_DIFFERENCE) && out->type != TFL_FLOAT32)
    return tfl_lower_binary_int(c, act);
  if (a->type != TFL_FLOAT32 || b->type != TFL_FLOAT32 || out->type != TFL_FLOAT32)
    return tfl_fail(c, "unsupported types %s, %s -> %s (only FLOAT32 so far)", tfl_type_name(a->type),
                    tfl_type_name(b->type), tfl_type_name(out->type));
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  te_value_t r = tfl_activation(c, binary(c, code, x, y), out, act);
  return r.id ? tfl_set_out(c, 0, r) : c->error;
}
