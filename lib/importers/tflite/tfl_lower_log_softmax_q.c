/* int8 LOG_SOFTMAX, bit-exact with TFLite Micro's reference kernel
 * (log_softmax.cc, LogSoftmaxQuantized): beta 1, output scale 16/256 and
 * zero point 127.
 *
 * Per element, both the scaled diff (Q5.26) and its exp (rescaled to
 * Q12.19) depend only on diff = x - max_in_row in [-255, 0], so they are
 * 256-entry tables built at compile time and gathered at run time.  Per
 * row, the log of the sum of exps is TFLite's
 * log_x_for_x_greater_than_or_equal_to_1<5>(Q12.19): counts of leading
 * zeros, a rational approximation and gemmlowp's Newton-Raphson reciprocal,
 * written here as TOSA integer ops. */
#include "tfl_gemmlowp.h"
#include "tfl_lower.h"
#include "tfl_quant.h"

static te_value_t k32(tfl_ctx_t *c, int64_t v) { return te_scalar_int(&c->e, TE_I32, v); }
static te_value_t add(tfl_ctx_t *c, te_value_t a, te_value_t b) {
  return te_binary(&c->e, "tosa.add", a, b);
}
static te_value_t sub(tfl_ctx_t *c, te_value_t a, te_value_t b) {
  return te_binary(&c->e, "tosa.sub", a, b);
}
static te_value_t shr(tfl_ctx_t *c, te_value_t x, te_value_t n) {
  return te_binary_props(&c->e, "tosa.arithmetic_right_shift", x, n, "round = false");
}

/* SaturatingRoundingMultiplyByPOTParam(x, e) for x > 0 and a run-time
 * e in [0, 31]: the threshold (1 << (31 - e)) - 1 is INT32_MAX >> e, which
 * also makes e = 0 the identity, as TFLite's early return does. */
static te_value_t sat_shl_var(tfl_ctx_t *c, te_value_t x, te_value_t e) {
  te_value_t hi = te_binary(&c->e, "tosa.greater", x, shr(c, k32(c, INT32_MAX), e));
  return te_select(&c->e, hi, k32(c, INT32_MAX),
                   te_binary(&c->e, "tosa.logical_left_shift", x, e));
}

/* gemmlowp's RoundingDivideByPOT by a constant e >= 0, any sign of x. */
static te_value_t rdbpot(tfl_ctx_t *c, te_value_t x, int e) {
  int32_t mask = (int32_t)((1LL << e) - 1);
  te_value_t rem = te_binary(&c->e, "tosa.bitwise_and", x, k32(c, mask));
  te_value_t neg = te_binary(&c->e, "tosa.greater", k32(c, 0), x);
  te_value_t thr = te_select(&c->e, neg, k32(c, (mask >> 1) + 1), k32(c, mask >> 1));
  te_value_t up = te_select(&c->e, te_binary(&c->e, "tosa.greater", rem, thr), k32(c, 1),
                            k32(c, 0));
  return add(c, shr(c, x, k32(c, e)), up);
}

/* gemmlowp's one_over_one_plus_x_for_x_in_0_1 (Q0.31 in, Q0.31 out).
 * RoundingHalfSum(a, One) is (a >> 1) + 2^30 for a > INT32_MIN. */
static te_value_t one_over_one_plus(tfl_ctx_t *c, te_value_t a) {
  te_value_t half = add(c, shr(c, a, k32(c, 1)), k32(c, 1 << 30));
  return tfl_gl_one_over_one_plus(c, half);
}

/* The mantissa r (Q0.31) and the exponent (Q6.25) of the row sum z_a
 * (Q12.19, >= 1.0), as TFLite picks the better of two normalisations. */
static te_value_t log_split(tfl_ctx_t *c, te_value_t z_a, te_value_t *pow_adj) {
  enum { kInBits = 12, kAccBits = 6 };
  const int32_t sqrt_half = 1518500250, shifted_quarter = 1 << 23; /* Rescale<6>(1/4) */
  /* z_a < 2^(32 - hp1), so the shift by hp1 - 1 cannot saturate; the
   * exponent terms are at most 31 << 25, below the saturation threshold. */
  te_value_t hp1_a = te_unary(&c->e, "tosa.clz", z_a);
  te_value_t r_a_tmp = te_binary(&c->e, "tosa.logical_left_shift", z_a,
                                 sub(c, hp1_a, k32(c, 1)));
  te_value_t r_a = tfl_gl_sat_shl(c, tfl_gl_srdhm(c, r_a_tmp, k32(c, sqrt_half)), 1);
  te_value_t unit = k32(c, 1 << (31 - kAccBits)); /* 1.0 in Q6.25 */
  te_value_t pow_a = add(c, te_mul(&c->e, sub(c, k32(c, kInBits), hp1_a), unit, 0),
                         k32(c, shifted_quarter));
  te_value_t z_b = tfl_gl_srdhm(c, z_a, k32(c, sqrt_half));
  te_value_t hr_b = sub(c, te_unary(&c->e, "tosa.clz", z_b), k32(c, 1));
  te_value_t r_b = sat_shl_var(c, z_a, hr_b);
  te_value_t pow_b = sub(c, te_mul(&c->e, sub(c, k32(c, kInBits), hr_b), unit, 0),
                         k32(c, shifted_quarter));
  *pow_adj = te_binary(&c->e, "tosa.maximum", pow_a, pow_b);
  return te_binary(&c->e, "tosa.minimum", r_a, r_b);
}

/* log_x_for_x_greater_than_or_equal_to_1<5>(Q12.19 sum): Q5.26. */
static te_value_t log_sum(tfl_ctx_t *c, te_value_t z_a) {
  const int32_t log_2 = 1488522236, sqrt_sqrt_half = 1805811301;
  const int32_t alpha_n = 117049297, alpha_d = 127690142, alpha_i = 1057819769,
                alpha_f = 638450708;
  te_value_t pow_adj;
  te_value_t r = log_split(c, z_a, &pow_adj);
  /* RoundingHalfSum(r, sqrt_sqrt_half) for r >= 0: sqrt_sqrt_half is odd. */
  te_value_t p = add(c, shr(c, r, k32(c, 1)), k32(c, sqrt_sqrt_half / 2 + 1));
  te_value_t q = sub(c, r, k32(c, sqrt_sqrt_half));
  q = add(c, q, q);
  te_value_t sq = tfl_gl_srdhm(c, q, q);
  te_value_t cube = tfl_gl_srdhm(c, q, sq);
  te_value_t num = add(c, tfl_gl_srdhm(c, q, r), tfl_gl_srdhm(c, cube, k32(c, alpha_n)));
  te_value_t inner = add(c, add(c, k32(c, alpha_i), q), tfl_gl_srdhm(c, k32(c, alpha_d), sq));
  te_value_t denom = add(c, tfl_gl_srdhm(c, p, inner), tfl_gl_srdhm(c, k32(c, alpha_f), q));
  te_value_t total = add(c, tfl_gl_srdhm(c, pow_adj, k32(c, log_2)),
                         tfl_gl_srdhm(c, rdbpot(c, num, 6), one_over_one_plus(c, denom)));
  return tfl_gl_sat_shl(c, total, 1); /* Rescale<5> from Q6.25 */
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

typedef struct {
  tfl_softmax_params_t p;  /* input multiplier, left shift, diff_min (beta 1) */
  int32_t divisor;         /* reverse_scaling_divisor */
  int right_shift;         /* reverse_scaling_right_shift */
  int32_t q5[256], q12[256];
} lsm_params_t;

/* TFLM's CalculateOpData (PreprocessLogSoftmaxScalingExp); 0 where TFLM's
 * QuantizeMultiplierGreaterThanOne / SmallerThanOneExp checks would fail. */
static int lsm_params(double in_scale, lsm_params_t *lp) {
  int32_t q0[256];
  tfl_softmax_params(1.0, in_scale, &lp->p);
  if (lp->p.input_multiplier <= 0 || lp->p.input_left_shift < 1) return 0;
  double reverse =
      (double)(1LL << (31 - lp->p.input_left_shift)) / (double)lp->p.input_multiplier;
  int shift;
  if (!tfl_quantize_multiplier(reverse, &lp->divisor, &shift) || shift > 0) return 0;
  lp->right_shift = -shift;
  tfl_softmax_exp_tables(&lp->p, q0, lp->q12);
  for (int i = 0; i < 256; ++i) { /* diffs below diff_min never reach the output */
    int32_t shifted = (int32_t)((uint32_t)(-i) << lp->p.input_left_shift);
    lp->q5[i] = -i < lp->p.diff_min ? 0 : tfl_srdhm(shifted, lp->p.input_multiplier);
  }
  return 1;
}

static te_value_t log_softmax_int8(tfl_ctx_t *c, te_value_t x, const lsm_params_t *lp) {
  te_value_t xi = te_cast(&c->e, x, TE_I32);
  te_value_t mx = te_reduce(&c->e, "tosa.reduce_max", xi, 1);
  te_value_t idx = sub(c, mx, xi); /* -diff in [0, 255] */
  te_value_t lsum = log_sum(c, te_reduce(&c->e, "tosa.reduce_sum", lookup(c, lp->q12, idx), 1));
  /* adjusted_diff_min = max(diff_min - 1, MBQM(lsum + INT32_MIN, divisor,
   * -right_shift)); lsum >= 0, so the add cannot overflow. */
  te_value_t low = add(c, lsum, k32(c, INT32_MIN));
  te_value_t scaled = rdbpot(c, tfl_gl_srdhm(c, low, k32(c, lp->divisor)), lp->right_shift);
  te_value_t adj = te_binary(&c->e, "tosa.maximum", scaled, k32(c, lp->p.diff_min - 1));
  te_value_t out = add(c, rdbpot(c, sub(c, lookup(c, lp->q5, idx), lsum), 31 - 5 - 4), k32(c, 127));
  out = te_clamp_int(&c->e, out, -128, 127);
  te_value_t keep = te_binary(&c->e, "tosa.greater", sub(c, xi, mx), adj);
  return te_cast(&c->e, te_select(&c->e, keep, out, k32(c, -128)), TE_I8);
}

tinyml_status_t tfl_lower_log_softmax_q8(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  if (!in || !out) return c->error ? c->error : tfl_fail(c, "missing input or output");
  if (out->type != TFL_INT8 || !tfl_is_quantized(in) || in->rank < 1)
    return tfl_fail(c, "unsupported types %s -> %s (TFLM: int8 -> int8 only)",
                    tfl_type_name(in->type), tfl_type_name(out->type));
  /* TFLM's CalculateOpData insists on exactly this output quantisation. */
  if (tfl_scale(out) != 16.0f / 256 || tfl_zero_point(out) != 127)
    return tfl_fail(c, "INT8 -> INT8 needs output scale 16/256 and zero point 127 (got %g, %d)",
                    (double)tfl_scale(out), (int)tfl_zero_point(out));
  lsm_params_t lp;
  if (!lsm_params(tfl_scale(in), &lp))
    return tfl_fail(c, "input scale %g is out of TFLM's range", (double)tfl_scale(in));
  int64_t depth = in->shape[in->rank - 1], total = 1;
  for (uint32_t d = 0; d < in->rank; ++d) total *= in->shape[d];
  if (depth < 1) return tfl_fail(c, "empty input");
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  int64_t dims[2] = {total / depth, depth};
  te_value_t y = log_softmax_int8(c, te_reshape(&c->e, x, 2, dims), &lp);
  return tfl_set_out(c, 0, te_reshape(&c->e, y, x.type.rank, x.type.dims));
}
