/* SOFTMAX.  Float: exp(beta * (x - max)) / sum.
 *
 * int8 and uint8 reproduce TFLite's reference kernel (gemmlowp fixed point) exactly.
 * Per element, exp depends only on diff = x - max_in_row in [-255, 0], so
 * both fixed-point exp forms come from 256-entry tables built at compile
 * time (tfl_softmax_exp_tables) and gathered at run time.  Per row, the
 * reciprocal of the sum is TFLite's GetReciprocal: a count of leading zeros
 * and three Newton-Raphson steps in Q2.29, written here as TOSA integer ops. */
#include <math.h>
#include <string.h>

#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OPT_SOFTMAX = 9 };

static te_value_t k32(tfl_ctx_t *c, int64_t v) { return te_scalar_int(&c->e, TE_I32, v); }

/* gemmlowp's SaturatingRoundingDoublingHighMul: TOSA's i32 mul with shift
 * 31 computes (a*b + 2^30) >> 31 in 64 bits, which is the same except when
 * both are INT32_MIN, which cannot occur here (all operands are positive). */
static te_value_t srdhm(tfl_ctx_t *c, te_value_t a, te_value_t b) {
  return te_mul(&c->e, a, b, 31);
}

/* SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0. */
static te_value_t sat_shl(tfl_ctx_t *c, te_value_t x, int exponent) {
  int64_t thr = (1LL << (31 - exponent)) - 1;
  te_value_t shifted = te_binary(&c->e, "tosa.logical_left_shift", x, k32(c, exponent));
  te_value_t hi = te_binary(&c->e, "tosa.greater", x, k32(c, thr));
  te_value_t lo = te_binary(&c->e, "tosa.greater", k32(c, -thr), x);
  te_value_t r = te_select(&c->e, hi, k32(c, INT32_MAX), shifted);
  return te_select(&c->e, lo, k32(c, INT32_MIN), r);
}

/* gemmlowp's one_over_one_plus_x_for_x_in_0_1 after GetReciprocal's
 * normalisation; `sum` > 0 is a row's Q12.19 sum of exps.  Gives the Q0.31
 * scale and the row's num_bits_over_unit. */
static te_value_t reciprocal(tfl_ctx_t *c, te_value_t sum, te_value_t *bits_over_unit) {
  te_value_t hp1 = te_unary(&c->e, "tosa.clz", sum);
  *bits_over_unit = te_binary(&c->e, "tosa.sub", k32(c, 12), hp1);
  /* RoundingHalfSum(shifted_sum_minus_one, One) = (sum << hp1) / 2 as a
   * uint32, because shifted_sum_minus_one = (sum << hp1) - 2^31. */
  te_value_t hd = te_binary(&c->e, "tosa.logical_right_shift",
                            te_binary(&c->e, "tosa.logical_left_shift", sum, hp1), k32(c, 1));
  te_value_t x = te_binary(&c->e, "tosa.add", k32(c, 1515870810), srdhm(c, hd, k32(c, -1010580540)));
  for (int i = 0; i < 3; ++i) {
    te_value_t one_minus = te_binary(&c->e, "tosa.sub", k32(c, 1 << 29), srdhm(c, hd, x));
    x = te_binary(&c->e, "tosa.add", x, sat_shl(c, srdhm(c, x, one_minus), 2));
  }
  return sat_shl(c, x, 1);
}

/* RoundingDivideByPOT with a per-row exponent. */
static te_value_t rdbpot(tfl_ctx_t *c, te_value_t x, te_value_t exponent) {
  te_value_t one = k32(c, 1);
  te_value_t mask = te_binary(&c->e, "tosa.sub",
                              te_binary(&c->e, "tosa.logical_left_shift", one, exponent), one);
  te_value_t rem = te_binary(&c->e, "tosa.bitwise_and", x, mask);
  te_value_t neg = te_binary(&c->e, "tosa.greater", k32(c, 0), x);
  te_value_t thr = te_binary(&c->e, "tosa.add",
                             te_binary_props(&c->e, "tosa.arithmetic_right_shift", mask, one, "round = false"),
                             te_select(&c->e, neg, one, k32(c, 0)));
  te_value_t up = te_select(&c->e, te_binary(&c->e, "tosa.greater", rem, thr), one, k32(c, 0));
  return te_binary(&c->e, "tosa.add",
                   te_binary_props(&c->e, "tosa.arithmetic_right_shift", x, exponent, "round = false"), up);
}

/* Gathers table[idx] for an i32 [rows, depth] index tensor. */
static te_value_t lookup(tfl_ctx_t *c, const int32_t table[256], te_value_t idx) {
  int64_t rows = idx.type.dims[0], depth = idx.type.dims[1];
  int64_t td[3] = {1, 256, 1}, id[2] = {1, rows * depth}, od[3] = {1, rows * depth, 1};
  te_type_t tt = te_type(TE_I32, 3, td), ot = te_type(TE_I32, 3, od);
  te_value_t ops[2] = {te_const(&c->e, &tt, table), te_reshape(&c->e, idx, 2, id)};
  te_value_t g = te_op(&c->e, "tosa.gather", ops, 2, NULL, &ot);
  return te_reshape(&c->e, g, 2, idx.type.dims);
}

/* The output has `bits` bits: 8, or 16 for int8 -> int16 (TFLM). */
static te_value_t softmax_int8(tfl_ctx_t *c, te_value_t x, double beta, float in_scale, int bits) {
  tfl_softmax_params_t p;
  int32_t q0[256], q12[256];
  tfl_softmax_params(beta, in_scale, &p);
  tfl_softmax_exp_tables(&p, q0, q12);
  te_value_t xi = te_cast(&c->e, x, TE_I32);
  te_value_t mx = te_reduce(&c->e, "tosa.reduce_max", xi, 1);
  te_value_t idx = te_binary(&c->e, "tosa.sub", mx, xi); /* -diff in [0, 255] */
  te_value_t sum = te_reduce(&c->e, "tosa.reduce_sum", lookup(c, q12, idx), 1);
  te_value_t bits_over_unit;
  te_value_t scale = reciprocal(c, sum, &bits_over_unit);
  te_value_t v = srdhm(c, scale, lookup(c, q0, idx));
  te_value_t shift = te_binary(&c->e, "tosa.add", bits_over_unit, k32(c, 31 - bits));
  int32_t lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
  te_value_t out = te_binary(&c->e, "tosa.add", rdbpot(c, v, shift), k32(c, lo));
  return te_cast(&c->e, te_clamp_int(&c->e, out, lo, hi), bits == 16 ? TE_I16 : TE_I8);
}

static te_value_t softmax_float(tfl_ctx_t *c, te_value_t x, float beta) {
  te_value_t mx = te_reduce(&c->e, "tosa.reduce_max", x, 1);
  te_value_t d = te_binary(&c->e, "tosa.sub", x, mx);
  if (beta != 1.0f) d = te_mul(&c->e, d, te_scalar_f32(&c->e, beta), 0);
  te_value_t ex = te_unary(&c->e, "tosa.exp", d);
  te_value_t inv = te_unary(&c->e, "tosa.reciprocal", te_reduce(&c->e, "tosa.reduce_sum", ex, 1));
  return te_mul(&c->e, ex, inv, 0);
}

tinyml_status_t tfl_lower_softmax(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, OPT_SOFTMAX);
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  if (!o || !in || !out) return c->error ? c->error : tfl_fail(c, "missing input or output");
  int bad = 0;
  float beta = tfl_table_f32(o, 0, 1.0f, &bad);
  if (bad || in->rank < 1 || !(beta > 0.0f) || beta > 1e6f)
    return tfl_fail(c, "malformed options (beta %g) or input", (double)beta);
  int64_t depth = in->shape[in->rank - 1], total = 1;
  for (uint32_t d = 0; d < in->rank; ++d) total *= in->shape[d];
  if (depth < 1) return tfl_fail(c, "empty input");
  int64_t dims[2] = {total / depth, depth};
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  x = te_reshape(&c->e, x, 2, dims);
  if (in->type == TFL_FLOAT32 && out->type == TFL_FLOAT32)
    return tfl_set_out(c, 0, softmax_float(c, x, beta));
  /* TFLite requires this output quantisation: scale 1/256 and the type's
   * minimum as zero point (-128 for int8, 0 for uint8).  uint8 is carried
   * as int8 (tfl_zero_point), where TFLite's uint8 kernel, which adds 0 and
   * clamps to [0, 255], is the int8 one. */
  if ((in->type == TFL_INT8 || in->type == TFL_UINT8) && out->type == in->type &&
      tfl_is_quantized(in) && tfl_scale(out) == 1.0f / 256 && tfl_zero_point(out) == -128)
    return tfl_set_out(c, 0, softmax_int8(c, x, beta, tfl_scale(in), 8));
  /* TFLM's int8 -> int16 softmax: zero point -32768 and scale 1/65536 to
   * within 0.1% (the keyword models have 1/65535). */
  if (in->type == TFL_INT8 && out->type == TFL_INT16 && tfl_is_quantized(in) &&
      tfl_zero_point(out) == -32768 && fabs(tfl_scale(out) - 1.0 / 65536) <= 0.001 / 65536)
    return tfl_set_out(c, 0, softmax_int8(c, x, beta, tfl_scale(in), 16));
  return tfl_fail(c, "unsupported types %s -> %s (int8 and uint8 need output scale 1/256 and "
                  "zero point -128 or 0)", tfl_type_name(in->type), tfl_type_name(out->type));
}
