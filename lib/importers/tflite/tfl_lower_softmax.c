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

#include "tfl_gemmlowp.h"
#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OPT_SOFTMAX = 9 };

static te_value_t k32(tfl_ctx_t *c, int64_t v) { return te_scalar_int(&c->e, TE_I32, v); }

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
  return tfl_gl_one_over_one_plus(c, hd);
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
  te_value_t v = tfl_gl_srdhm(c, scale, lookup(c, q0, idx));
  te_value_t shift = te_binary(&c->e, "tosa.add", bits_over_unit, k32(c, 31 - bits));
  int32_t lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
  te_value_t out = te_binary(&c->e, "tosa.add", rdbpot(c, v, shift), k32(c, lo));
  return te_cast(&c->e, te_clamp_int(&c->e, out, lo, hi), bits == 16 ? TE_I16 : TE_I8);
}

/* ---- int16 -> int16: TFLM's SoftmaxInt16 --------------------------------- */

static te_value_t shr_by(tfl_ctx_t *c, te_value_t x, te_value_t n) {
  return te_binary_props(&c->e, "tosa.arithmetic_right_shift", x, n, "round = false");
}

static te_value_t shl_by(tfl_ctx_t *c, te_value_t x, te_value_t n) {
  return te_binary(&c->e, "tosa.logical_left_shift", x, n);
}

static te_value_t sat_i16(tfl_ctx_t *c, te_value_t x) {
  return te_cast(&c->e, te_clamp_int(&c->e, x, -32768, 32767), TE_I16);
}

static float exp_f(float v) { return expf(v); }
static float one_over_one_plus(float v) { return 1.0f / (1.0f + v); }

static int16_t round_to_i16(float v) {
  return (int16_t)fminf(fmaxf(v, -32768.0f), 32767.0f);
}

/* TFLM's gen_lut<float, int16_t, int16_t>(f, lo, hi, -1, 1): 512 samples
 * of f in Q0.15, each less half its interpolation error at the segment's
 * midpoint, and f(hi).  In float, as TFLM computes it (the tables are
 * TFLM's only after the same float rounding). */
static void gen_lut16(float (*f)(float), float lo, float hi, int16_t lut[513]) {
  const float step = (hi - lo) / 512, half = step / 2, inv = 65536.0f / 2.0f;
  for (int i = 0; i < 512; ++i) {
    float at = lo + (float)i * step;
    float val = f(at), mid = f(at + half), next = f(lo + (float)(i + 1) * step);
    float interp = roundf((next * inv + roundf(val * inv)) / 2);
    float bias = roundf((interp - roundf(mid * inv)) / 2);
    lut[i] = round_to_i16(roundf(val * inv) - bias);
  }
  lut[512] = round_to_i16(roundf(f(hi) * inv));
}

/* TFLM's lut_lookup_with_interpolation on int16 x.  tosa.table on i16 is
 * the same 513-entry table with 128 inputs per segment, giving (base << 7)
 * + slope * (x & 127) unrounded; TFLM rounds the product to Q0.15. */
static te_value_t lut16(tfl_ctx_t *c, te_value_t x16, const int16_t lut[513]) {
  int64_t n = 513;
  te_type_t tt = te_type(TE_I16, 1, &n), ot = te_type_with(&x16.type, TE_I32);
  te_value_t ops[2] = {x16, te_const(&c->e, &tt, lut)};
  te_value_t t = te_op(&c->e, "tosa.table", ops, 2, NULL, &ot);
  return shr_by(c, te_binary(&c->e, "tosa.add", t, k32(c, 64)), k32(c, 7));
}

/* exp(x - max) in Q0.15 from the exp table over [-10, 0]: the difference
 * scaled so -65535 is -10 (MultiplyByQuantizedMultiplier, a DOUBLE_ROUND
 * rescale), then recentred to [-32768, 32767]. */
static te_value_t exps16(tfl_ctx_t *c, te_value_t xi, double beta, float in_scale) {
  int16_t lut[513];
  int32_t m;
  int s;
  int8_t ts;
  double real = (double)in_scale * beta / (10.0 / 65535.0);
  if (!tfl_quantize_multiplier(real, &m, &s) || !tfl_tosa_shift(s, &ts)) {
    tfl_fail(c, "input scale times beta (%g) is out of range", real);
    return (te_value_t){0};
  }
  gen_lut16(exp_f, -10.0f, 0.0f, lut);
  te_value_t diff = te_binary(&c->e, "tosa.sub", xi, te_reduce(&c->e, "tosa.reduce_max", xi, 1));
  te_value_t scaled = te_rescale(&c->e, diff, TE_I32, &m, &ts, 1, 0, 0, 1, 0, 0);
  return lut16(c, sat_i16(c, te_binary(&c->e, "tosa.add", scaled, k32(c, 32767))), lut);
}

/* Per row: 1/sum from the 1/(1+x) table on the sum normalised to [1, 2),
 * and each exp times it, shifted back by the normalisation. */
static te_value_t softmax_int16(tfl_ctx_t *c, te_value_t x, double beta, float in_scale) {
  int16_t lut[513];
  te_value_t ex = exps16(c, te_cast(&c->e, x, TE_I32), beta, in_scale);
  if (!ex.id) return ex;
  gen_lut16(one_over_one_plus, 0.0f, 1.0f, lut);
  te_value_t sum = te_reduce(&c->e, "tosa.reduce_sum", ex, 1); /* > 0: the max gives 32767 */
  te_value_t hp1 = te_unary(&c->e, "tosa.clz", sum);
  /* ((sum << (hp1 - 1)) + 2^13) >> 14 without the int32 overflow of the
   * add: halve first (the same floor). */
  te_value_t norm = shl_by(c, sum, te_binary(&c->e, "tosa.sub", hp1, k32(c, 1)));
  te_value_t half = te_binary(&c->e, "tosa.add", shr_by(c, norm, k32(c, 1)), k32(c, 1 << 12));
  te_value_t shifted = shr_by(c, half, k32(c, 13));
  te_value_t sym = sat_i16(c, te_binary(&c->e, "tosa.sub", shifted, k32(c, (1 << 15) + (1 << 16))));
  te_value_t recip = lut16(c, sym, lut);
  te_value_t rs = te_binary(&c->e, "tosa.sub", k32(c, 31), hp1);
  te_value_t rnd = shl_by(c, k32(c, 1), te_binary(&c->e, "tosa.sub", rs, k32(c, 1)));
  te_value_t p = te_binary(&c->e, "tosa.add", te_mul(&c->e, ex, recip, 0), rnd);
  return te_cast(&c->e, te_clamp_int(&c->e, shr_by(c, p, rs), 0, 32767), TE_I16);
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
  /* TFLM's int16 softmax: output zero point 0 and scale 1/32768 to 0.1%. */
  if (in->type == TFL_INT16 && out->type == TFL_INT16 && tfl_is_quantized(in) &&
      tfl_zero_point(out) == 0 && fabs(tfl_scale(out) - 1.0 / 32768) <= 0.001 / 32768)
    return tfl_set_out(c, 0, softmax_int16(c, x, beta, tfl_scale(in)));
  return tfl_fail(c, "unsupported types %s -> %s (int8 and uint8 need output scale 1/256 and "
                  "zero point -128 or 0; int16 scale 1/32768 and zero point 0)", tfl_type_name(in->type), tfl_type_name(out->type));
}
