#include "tfl_quant.h"

#include <math.h>

int tfl_quantize_multiplier(double real, int32_t *multiplier, int *shift) {
  *multiplier = 0;
  *shift = 0;
  if (!(real >= 0.0) || isinf(real)) return 0;
  if (real == 0.0) return 1;
  double q = frexp(real, shift);
  int64_t q_fixed = (int64_t)round(q * (double)(1LL << 31));
  if (q_fixed == (1LL << 31)) {
    q_fixed /= 2;
    ++*shift;
  }
  if (*shift < -31) {
    *shift = 0;
    q_fixed = 0;
  }
  *multiplier = (int32_t)q_fixed;
  return 1;
}

int tfl_tosa_shift(int tflite_shift, int8_t *out) {
  int s = 31 - tflite_shift;
  if (s < 2 || s > 62) return 0;
  *out = (int8_t)s;
  return 1;
}

void tfl_activation_range_q(int activation, float scale, int32_t zero_point,
                            int32_t qmin, int32_t qmax, int32_t *lo, int32_t *hi) {
  /* TFLite quantises the bounds in float: zero_point + round(f / scale). */
#define Q(f) (zero_point + (int32_t)roundf((f) / scale))
  *lo = qmin;
  *hi = qmax;
  if (activation == 1 || activation == 3) {
    int32_t z = Q(0.0f);
    *lo = z > qmin ? z : qmin;
  }
  if (activation == 3) {
    int32_t s = Q(6.0f);
    *hi = s < qmax ? s : qmax;
  }
  if (activation == 2) {
    int32_t a = Q(-1.0f), b = Q(1.0f);
    *lo = a > qmin ? a : qmin;
    *hi = b < qmax ? b : qmax;
  }
#undef Q
}

int32_t tfl_srdhm(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  int64_t ab = (int64_t)a * (int64_t)b;
  int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
  return (int32_t)((ab + nudge) / (1LL << 31));
}

int32_t tfl_rdbpot(int32_t x, int exponent) {
  int32_t mask = (int32_t)((1LL << exponent) - 1);
  int32_t remainder = x & mask;
  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

int32_t tfl_mbqm(int32_t x, int32_t multiplier, int shift) {
  int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return tfl_rdbpot(tfl_srdhm((int32_t)((uint32_t)x << left), multiplier), right);
}

/* SaturatingRoundingMultiplyByPOT for a positive exponent. */
static int32_t sat_shl(int32_t x, int exponent) {
  int32_t threshold = (int32_t)((1LL << (31 - exponent)) - 1);
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return (int32_t)((uint32_t)x << exponent);
}

/* exp on [-1/4, 0) by a Taylor expansion around -1/8 (Q0.31 in and out). */
static int32_t exp_quarter(int32_t a) {
  const int32_t constant_term = 1895147668, one_third = 715827883;
  int32_t x = a + (1 << 28);
  int32_t x2 = tfl_srdhm(x, x), x3 = tfl_srdhm(x2, x), x4 = tfl_srdhm(x2, x2);
  int32_t x4_over_4 = tfl_rdbpot(x4, 2);
  int32_t poly = tfl_rdbpot(tfl_srdhm(x4_over_4 + x3, one_third) + x2, 1);
  return constant_term + tfl_srdhm(constant_term, x + poly);
}

int32_t tfl_exp_on_negative_values(int32_t a, int integer_bits) {
  const int frac = 31 - integer_bits;
  const int32_t one_quarter = 1 << (frac - 2), mask = one_quarter - 1;
  int32_t a_mod = (a & mask) - one_quarter;
  int32_t result = exp_quarter(sat_shl(a_mod, integer_bits));
  int32_t remainder = a_mod - a;
  static const int32_t mult[7] = {1672461947, 1302514674, 790015084, 290630308,
                                  39332535, 720401, 242};
  for (int k = 0; k < 7; ++k) {
    int exponent = k - 2;
    if (integer_bits > exponent && (remainder & (1 << (frac + exponent))))
      result = tfl_srdhm(result, mult[k]);
  }
  if (integer_bits > 5) {
    int32_t clamp = -(1 << (36 - integer_bits)) * (1 << 0);
    if (a < clamp) result = 0;
  }
  if (a == 0) result = INT32_MAX;
  return result;
}

void tfl_softmax_params(double beta, double input_scale, tfl_softmax_params_t *p) {
  const int integer_bits = 5;
  double real = beta * input_scale * (double)(1 << (31 - integer_bits));
  const double max_real = (double)((1LL << 31) - 1);
  if (real > max_real) real = max_real;
  if (!tfl_quantize_multiplier(real, &p->input_multiplier, &p->input_left_shift))
    p->input_multiplier = 0;
  double radius = 1.0 * ((1 << integer_bits) - 1) *
                  (double)(1LL << (31 - integer_bits)) /
                  (double)(1LL << p->input_left_shift);
  p->diff_min = -(int32_t)floor(radius);
}

void tfl_softmax_exp_tables(const tfl_softmax_params_t *p, int32_t q0[256],
                            int32_t q12[256]) {
  for (int i = 0; i < 256; ++i) {
    int32_t diff = -i;
    q0[i] = q12[i] = 0;
    if (diff < p->diff_min) continue;
    int32_t scaled = tfl_srdhm((int32_t)((uint32_t)diff << p->input_left_shift),
                               p->input_multiplier);
    q0[i] = tfl_exp_on_negative_values(scaled, 5);
    q12[i] = tfl_rdbpot(q0[i], 12);
  }
}
