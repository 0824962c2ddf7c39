/* Integer forms of DIV (int8, int32), SQUARED_DIFFERENCE (int8, int16,
 * int32), RSQRT (int8) and L2_NORMALIZATION (int8), each following TFLite Micro's reference kernel
 * step by step so that the result is bit-exact:
 *
 *  - DIV int8 (reference_ops::DivElementwise): per element, the divisor's
 *    reciprocal by GetReciprocal (a function of one byte, so a table),
 *    the dividend normalised by its leading sign bits (a table too), their
 *    SaturatingRoundingDoublingHighMul, the output multiplier, and a
 *    rounding shift whose amount depends on both: TOSA integer ops.
 *  - DIV int32: C's truncating division and the activation clamp.
 *  - SQUARED_DIFFERENCE int8/int16: each input offset, shifted left
 *    (7 bits for int8, 0 for int16), rescaled to twice the larger scale,
 *    the difference squared and rescaled to the output; int32: (a - b)^2.
 *  - RSQRT int8: one output byte per input byte, so a tosa.table computed
 *    here with GetInvSqrtQuantizedMultiplierExp.
 *  - L2_NORMALIZATION int8: the same GetInvSqrtQuantizedMultiplierExp, but
 *    of each row's sum of squares, so as TOSA integer ops at run time. */
#include <math.h>

#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OP_DIV = 42, OP_RSQRT = 76, OP_SQUARED_DIFFERENCE = 99 };
enum { OPT_DIV = 29 };

static te_value_t k32(tfl_ctx_t *c, int64_t v) { return te_scalar_int(&c->e, TE_I32, v); }

static te_value_t bin(tfl_ctx_t *c, const char *op, te_value_t a, te_value_t b) {
  return te_binary(&c->e, op, a, b);
}

static te_value_t to_i32(tfl_ctx_t *c, te_value_t x) {
  return x.type.elem == TE_I32 ? x : te_cast(&c->e, x, TE_I32);
}

/* gemmlowp's SaturatingRoundingDoublingHighMul for operands that are never
 * both INT32_MIN: TOSA's i32 mul with shift 31 rounds the same way. */
static te_value_t srdhm(tfl_ctx_t *c, te_value_t a, te_value_t b) { return te_mul(&c->e, a, b, 31); }

/* gemmlowp's RoundingDivideByPOT with a per-element exponent in [0, 31]. */
static te_value_t rdbpot(tfl_ctx_t *c, te_value_t x, te_value_t e) {
  te_value_t mask = te_binary_props(&c->e, "tosa.logical_right_shift", k32(c, INT32_MAX),
                                    bin(c, "tosa.sub", k32(c, 31), e), NULL);
  te_value_t neg = te_cast(&c->e, bin(c, "tosa.greater", k32(c, 0), x), TE_I32);
  te_value_t threshold = bin(c, "tosa.add", te_binary_props(&c->e, "tosa.arithmetic_right_shift",
                                                            mask, k32(c, 1), "round = false"), neg);
  te_value_t up = te_cast(&c->e, bin(c, "tosa.greater", bin(c, "tosa.bitwise_and", x, mask), threshold),
                          TE_I32);
  return bin(c, "tosa.add", te_binary_props(&c->e, "tosa.arithmetic_right_shift", x, e, "round = false"), up);
}

/* table[idx] for an i32 index tensor, shaped like idx. */
static te_value_t lookup(tfl_ctx_t *c, const int32_t *table, int64_t n, te_value_t idx) {
  te_type_t tt = te_type(TE_I32, 1, &n);
  return te_gather_axis(&c->e, te_const(&c->e, &tt, table), 1, n, 1, idx, idx.type.rank, idx.type.dims);
}

/* gemmlowp's one_over_one_plus_x_for_x_in_0_1 as TFLite's GetReciprocal
 * uses it (x_integer_digits = 31), at compile time. */
static int32_t reciprocal(int32_t x, int *bits_over_unit) {
  int clz = 0;
  while (clz < 32 && !((uint32_t)x & (0x80000000u >> clz))) ++clz;
  *bits_over_unit = 31 - clz;
  int32_t shifted_minus_one = (int32_t)(((uint32_t)x << clz) - 0x80000000u);
  /* half_denominator = RoundingHalfSum(a, 1.0) in Q0.31 */
  int64_t sum = (int64_t)shifted_minus_one + INT32_MAX;
  int32_t half_d = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t v = 1515870810 + tfl_srdhm(half_d, -1010580540); /* 48/17 + (-32/17) d, Q2.29 */
  for (int i = 0; i < 3; ++i) {
    int32_t one_minus = (1 << 29) - tfl_srdhm(half_d, v);
    int32_t t = tfl_srdhm(v, one_minus);
    int64_t s = (int64_t)t * 4;
    v += (int32_t)(s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s);
  }
  int64_t r = (int64_t)v * 2; /* Rescale<0> from Q2.29: saturating << 1 */
  return (int32_t)(r > INT32_MAX ? INT32_MAX : r);
}

/* TFLite's CountLeadingSignBits. */
static int leading_sign_bits(int32_t x) {
  uint32_t u = x >= 0 ? (uint32_t)x : ~(uint32_t)x;
  int n = 0;
  while (n < 32 && !(u & (0x80000000u >> n))) ++n;
  return n - 1;
}

#define DIV_SPAN 511 /* offset values in [-255, 255] */

/* Per-dividend and per-divisor tables of DivElementwise (divisor made
 * positive by moving its sign to the dividend, as the kernel does). */
static void div_tables(int out_shift, int32_t *shifted, int32_t *a_exp, int32_t *inv, int32_t *b_exp) {
  for (int a = -255; a <= 255; ++a) {
    int h = leading_sign_bits(a);
    shifted[a + 255] = (int32_t)((uint32_t)a << h);
    a_exp[a + 255] = h - out_shift;
  }
  inv[0] = 0; /* division by zero: TFLM asserts; here the quotient is 0 */
  b_exp[0] = 0;
  for (int b = 1; b < 256; ++b) inv[b] = reciprocal(b, &b_exp[b]);
}

static tinyml_status_t div_int8(tfl_ctx_t *c, const tfl_tensor_t *a, const tfl_tensor_t *b,
                                const tfl_tensor_t *out, int act) {
  int32_t om;
  int os;
  double real = (double)(tfl_scale(a) / (tfl_scale(b) * tfl_scale(out)));
  if (!tfl_quantize_multiplier(real, &om, &os) || os > 23)
    return tfl_fail(c, "scales give a multiplier out of range");
  int32_t shifted[DIV_SPAN], a_exp[DIV_SPAN], inv[256], b_exp[256];
  div_tables(os, shifted, a_exp, inv, b_exp);
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  te_value_t av = bin(c, "tosa.sub", to_i32(c, x), k32(c, tfl_zero_point(a)));
  te_value_t bv = bin(c, "tosa.sub", to_i32(c, y), k32(c, tfl_zero_point(b)));
  /* both broadcast to the output's shape, then the divisor's sign moved
   * to the dividend */
  te_value_t A = bin(c, "tosa.add", av, te_mul(&c->e, bv, k32(c, 0), 0));
  te_value_t B = bin(c, "tosa.add", bv, te_mul(&c->e, av, k32(c, 0), 0));
  te_value_t bneg = bin(c, "tosa.greater", k32(c, 0), B);
  te_value_t sa = te_select(&c->e, bneg, bin(c, "tosa.sub", k32(c, 0), A), A);
  te_value_t bi = te_select(&c->e, bneg, bin(c, "tosa.sub", k32(c, 0), B), B);
  te_value_t ai = bin(c, "tosa.add", sa, k32(c, 255));
  te_value_t q = srdhm(c, srdhm(c, lookup(c, shifted, DIV_SPAN, ai), lookup(c, inv, 256, bi)),
                       te_splat_int(&c->e, &ai.type, om));
  te_value_t e = bin(c, "tosa.add", lookup(c, a_exp, DIV_SPAN, ai), lookup(c, b_exp, 256, bi));
  /* |q| < 2^31, so a shift past 31 rounds to 0 (TFLM's gemmlowp asserts) */
  te_value_t r = te_select(&c->e, bin(c, "tosa.greater", e, k32(c, 31)), te_splat_int(&c->e, &ai.type, 0),
                           rdbpot(c, q, te_clamp_int(&c->e, e, 0, 31)));
  r = tfl_activation(c, te_clamp_int(&c->e, bin(c, "tosa.add", r, k32(c, tfl_zero_point(out))), -128, 127),
                     out, act);
  return r.id ? tfl_set_out(c, 0, te_cast(&c->e, r, TE_I8)) : c->error;
}

/* DIV int32 (reference_ops::Div<int32_t>): C's truncating division, which
 * tosa.intdiv is, then CalculateActivationRange's clamp. */
static tinyml_status_t div_int32(tfl_ctx_t *c, int act) {
  static const int64_t lo[4] = {INT32_MIN, 0, -1, 0}, hi[4] = {INT32_MAX, INT32_MAX, 1, 6};
  if (act < 0 || act > 3) return tfl_fail(c, "fused activation %d is not supported", act);
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  te_value_t r = bin(c, "tosa.intdiv", x, y);
  return tfl_set_out(c, 0, act ? te_clamp_int(&c->e, r, lo[act], hi[act]) : r);
}

/* (x - zp) << left_shift, then MultiplyByQuantizedMultiplierSmallerThanOneExp. */
static te_value_t sqd_input(tfl_ctx_t *c, te_value_t x, int32_t zp, int left_shift, double real) {
  int32_t m;
  int s;
  int8_t ts;
  if (!tfl_quantize_multiplier(real, &m, &s) || !tfl_tosa_shift(s, &ts)) return (te_value_t){0};
  te_value_t v = te_mul(&c->e, bin(c, "tosa.sub", to_i32(c, x), k32(c, zp)), k32(c, 1 << left_shift), 0);
  return te_rescale(&c->e, v, TE_I32, &m, &ts, 1, 0, 0, 1, 0, 0);
}

/* SQUARED_DIFFERENCE int8/int16 (squared_difference.cc PrepareQuantized
 * and SquaredDifference<T>), the scales combined as the kernel does. */
static tinyml_status_t sqd_quantized(tfl_ctx_t *c, const tfl_tensor_t *a, const tfl_tensor_t *b,
                                     const tfl_tensor_t *out) {
  int is16 = out->type == TFL_INT16, ls = is16 ? 0 : 7;
  if (is16 && (tfl_zero_point(a) || tfl_zero_point(b) || tfl_zero_point(out)))
    return tfl_fail(c, "INT16 needs zero points 0");
  float s1 = tfl_scale(a), s2 = tfl_scale(b);
  double twice_max = 2.0 * (double)(s1 > s2 ? s1 : s2);
  double real_out = twice_max * twice_max / (double)((float)(1 << ls * 2) * tfl_scale(out));
  int32_t om;
  int os;
  int8_t ts;
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  te_value_t sx = sqd_input(c, x, tfl_zero_point(a), ls, (double)s1 / twice_max);
  te_value_t sy = sqd_input(c, y, tfl_zero_point(b), ls, (double)s2 / twice_max);
  if (!sx.id || !sy.id || !tfl_quantize_multiplier(real_out, &om, &os) || !tfl_tosa_shift(os, &ts))
    return tfl_fail(c, "scales give a multiplier out of range");
  te_value_t d = bin(c, "tosa.sub", sx, sy);
  return tfl_set_out(c, 0, te_rescale(&c->e, te_mul(&c->e, d, d, 0), is16 ? TE_I16 : TE_I8, &om, &ts, 1,
                                      0, tfl_zero_point(out), 1, 0, 0));
}

tinyml_status_t tfl_lower_binary_int(tfl_ctx_t *c, int act) {
  const tfl_tensor_t *a = tfl_in(c, 0), *b = tfl_in(c, 1), *out = tfl_out(c, 0);
  int code = (int)c->op->builtin_code, t = out->type;
  int q = t == TFL_INT8 || (t == TFL_INT16 && code == OP_SQUARED_DIFFERENCE);
  if (a->type != t || b->type != t || !(q || t == TFL_INT32) ||
      (q && (!tfl_is_quantized(a) || !tfl_is_quantized(b) || !tfl_is_quantized(out))))
    return tfl_fail(c, "unsupported types %s, %s -> %s (FLOAT32, INT32, quantised INT8%s)",
                    tfl_type_name(a->type), tfl_type_name(b->type), tfl_type_name(t),
                    code == OP_DIV ? "" : ", INT16");
  if (code == OP_DIV) return t == TFL_INT8 ? div_int8(c, a, b, out, act) : div_int32(c, act);
  if (q) return sqd_quantized(c, a, b, out);
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  te_value_t d = bin(c, "tosa.sub", x, y);
  return tfl_set_out(c, 0, te_mul(&c->e, d, d, 0));
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT with a positive exponent. */
static int32_t sat_shl(int32_t x, int exponent) {
  int64_t r = (int64_t)x * ((int64_t)1 << exponent);
  return (int32_t)(r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r);
}

/* TFLite's GetInvSqrtQuantizedMultiplierExp with reverse_shift -1. */
static void inv_sqrt(int32_t input, int32_t *out_inv, int *out_shift) {
  if (input <= 1) {
    *out_inv = INT32_MAX;
    *out_shift = 0;
    return;
  }
  int shift = 11;
  while (input >= (1 << 29)) input /= 4, ++shift;
  int clz = 0;
  while (!((uint32_t)input & (0x80000000u >> clz))) ++clz;
  int pairs = (clz - 1) / 2 - 1;
  shift -= pairs;
  input <<= 2 * pairs;
  int32_t half_input = tfl_rdbpot(input >> 1, 1), x = 1 << 28;
  for (int i = 0; i < 5; ++i) {
    int32_t x3 = sat_shl(tfl_srdhm(tfl_srdhm(x, x), x), 6);
    x = sat_shl(tfl_srdhm((1 << 28) + (1 << 27), x) - tfl_srdhm(half_input, x3), 3);
  }
  x = tfl_srdhm(x, 1518500250);
  if (shift < 0) {
    x = (int32_t)((uint32_t)x << -shift);
    shift = 0;
  }
  *out_inv = x;
  *out_shift = -shift;
}

/* RSQRT int8 (elementwise.cc RsqrtEvalQuantized).  TFLM's invoke fails on a
 * negative (x < zero point) input; a compiled model cannot, so those bytes
 * give the output's maximum, as for 0 (TensorFlow's TOSA legalisation's
 * choice). */
tinyml_status_t tfl_lower_rsqrt_q8(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  if (in->type != TFL_INT8 || out->type != TFL_INT8 || !tfl_is_quantized(in) || !tfl_is_quantized(out))
    return tfl_fail(c, "unsupported types %s -> %s (FLOAT32, quantised INT8)", tfl_type_name(in->type),
                    tfl_type_name(out->type));
  int32_t om, zi = tfl_zero_point(in), zo = tfl_zero_point(out);
  int os;
  if (!tfl_quantize_multiplier(1.0 / (double)(sqrtf(tfl_scale(in)) * tfl_scale(out)), &om, &os))
    return tfl_fail(c, "scales give a multiplier out of range");
  int8_t table[256];
  for (int i = 0; i < 256; ++i) {
    int32_t v = i - 128 - zi, inv, s;
    if (v <= 0) {
      table[i] = 127;
      continue;
    }
    inv_sqrt(v, &inv, &s);
    int32_t r = tfl_mbqm(tfl_mbqm(1, inv, s + 20), om, os - 20) + zo;
    table[i] = (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);
  }
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  return tfl_set_out(c, 0, tfl_lookup_i8(c, x, table));
}

/* gemmlowp's SaturatingRoundingMultiplyByPOT<exponent > 0> on a tensor. */
static te_value_t sat_shl_t(tfl_ctx_t *c, te_value_t x, int exponent) {
  int64_t thr = (1LL << (31 - exponent)) - 1;
  te_value_t r = te_select(&c->e, bin(c, "tosa.greater", x, k32(c, thr)), te_splat_int(&c->e, &x.type, INT32_MAX),
                           bin(c, "tosa.logical_left_shift", x, k32(c, exponent)));
  return te_select(&c->e, bin(c, "tosa.greater", k32(c, -thr), x), te_splat_int(&c->e, &x.type, INT32_MIN), r);
}

/* GetInvSqrtQuantizedMultiplierExp(acc, kReverseShift) at run time, per
 * row: acc in [0, 2^31).  Returns the multiplier; *out_shift the TFLite
 * (left-positive) shift. */
static te_value_t inv_sqrt_t(tfl_ctx_t *c, te_value_t acc, te_value_t *out_shift) {
  /* input >= 2^29 needs one division by 4 (acc < 2^31) */
  te_value_t big = bin(c, "tosa.greater_equal", acc, k32(c, 1 << 29));
  te_value_t v = te_select(&c->e, big, te_binary_props(&c->e, "tosa.arithmetic_right_shift", acc, k32(c, 2),
                                                       "round = false"), acc);
  te_value_t shift = te_select(&c->e, big, te_splat_int(&c->e, &acc.type, 12), te_splat_int(&c->e, &acc.type, 11));
  te_value_t clz = te_unary(&c->e, "tosa.clz", v);
  te_value_t pairs = bin(c, "tosa.sub", te_binary_props(&c->e, "tosa.arithmetic_right_shift",
                                                        bin(c, "tosa.sub", clz, k32(c, 1)), k32(c, 1),
                                                        "round = false"), k32(c, 1));
  pairs = te_clamp_int(&c->e, pairs, 0, 14); /* acc <= 1 rows, replaced below */
  shift = bin(c, "tosa.sub", shift, pairs);
  v = bin(c, "tosa.logical_left_shift", v, bin(c, "tosa.add", pairs, pairs));
  te_value_t half_input = rdbpot(c, te_binary_props(&c->e, "tosa.arithmetic_right_shift", v, k32(c, 1),
                                                    "round = false"), k32(c, 1));
  te_value_t x = te_splat_int(&c->e, &acc.type, 1 << 28);
  for (int i = 0; i < 5; ++i) {
    te_value_t x3 = sat_shl_t(c, srdhm(c, srdhm(c, x, x), x), 6);
    x = sat_shl_t(c, bin(c, "tosa.sub", srdhm(c, k32(c, (1 << 28) + (1 << 27)), x), srdhm(c, half_input, x3)), 3);
  }
  x = srdhm(c, x, k32(c, 1518500250));
  te_value_t neg = bin(c, "tosa.greater", k32(c, 0), shift);
  x = te_select(&c->e, neg, bin(c, "tosa.logical_left_shift", x,
                                te_clamp_int(&c->e, bin(c, "tosa.sub", k32(c, 0), shift), 0, 31)), x);
  shift = te_clamp_int(&c->e, shift, 0, 31);
  te_value_t small = bin(c, "tosa.greater", k32(c, 2), acc);
  *out_shift = te_select(&c->e, small, te_splat_int(&c->e, &acc.type, 0), bin(c, "tosa.sub", k32(c, 0), shift));
  return te_select(&c->e, small, te_splat_int(&c->e, &acc.type, INT32_MAX), x);
}

/* L2_NORMALIZATION int8 (reference_integer_ops::L2Normalization): the
 * row's sum of squared offsets, its inverse square root as a multiplier,
 * and MultiplyByQuantizedMultiplier(x - zp, m, shift + 7). */
tinyml_status_t tfl_lower_l2norm_q8(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  if (!in || !out || in->type != TFL_INT8 || out->type != TFL_INT8 || !tfl_is_quantized(in) ||
      !tfl_is_quantized(out))
    return tfl_fail(c, "unsupported types (FLOAT32, or quantised INT8)");
  if (tfl_scale(out) != 1.0f / 128.0f || tfl_zero_point(out) != 0)
    return tfl_fail(c, "an INT8 output needs scale 1/128 and zero point 0");
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  if (x.type.rank < 1 || x.type.dims[x.type.rank - 1] > 33000)
    return tfl_fail(c, "the input needs rank 1 or more and a last axis of at most 33000");
  te_value_t d = bin(c, "tosa.sub", to_i32(c, x), k32(c, tfl_zero_point(in)));
  te_value_t acc = te_reduce(&c->e, "tosa.reduce_sum", te_mul(&c->e, d, d, 0), (int32_t)x.type.rank - 1);
  te_value_t s, m = inv_sqrt_t(c, acc, &s);
  s = bin(c, "tosa.add", s, k32(c, 7));
  te_value_t left = te_clamp_int(&c->e, s, 0, 31);
  te_value_t right = te_clamp_int(&c->e, bin(c, "tosa.sub", k32(c, 0), s), 0, 31);
  te_value_t r = rdbpot(c, srdhm(c, bin(c, "tosa.logical_left_shift", d, left), m), right);
  return tfl_set_out(c, 0, te_cast(&c->e, te_clamp_int(&c->e, r, -128, 127), TE_I8));
}
