/* LOGISTIC and TANH with int16 input and output (zero point 0), bit for
 * bit as TFLite Micro's reference_integer_ops::Logistic / Tanh for int16:
 *
 *   d = (x * input_multiplier + round) >> input_left_shift   (scale 1/(3*4096))
 *   sigmoid: interpolate sigmoid_table_uint16 at |d| / 2^9, mirror for d < 0
 *   tanh:    the same table at |d| / 2^8, as 2 sigmoid(2x) - 1
 *
 * The table's segments are 512/3 or 256/3 input units wide, which
 * tosa.table (128 units) cannot express, so the lookup is a gather of a
 * segment's base and step, interpolated with integer ops.  The same
 * functions serve any lowering with TFLM's 16-bit sigmoid/tanh. */
#include <math.h>

#include "tfl_q16_act.h"
#include "tfl_quant.h"

/* TFLM's sigmoid_table_uint16 (kernels/internal/common.h): sigmoid(i/24)
 * in 0.16.  Copied, not computed: 44 entries differ from rounding. */
static const uint16_t SIGMOID_TABLE[256] = {
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535};

static te_value_t k32(tfl_ctx_t *c, int64_t v) { return te_scalar_int(&c->e, TE_I32, v); }

static te_value_t shr(tfl_ctx_t *c, te_value_t x, int n) {
  return te_binary_props(&c->e, "tosa.arithmetic_right_shift", x, k32(c, n), "round = false");
}

static te_value_t table_const(tfl_ctx_t *c, const int32_t *v) {
  te_type_t t = te_type(TE_I32, 1, (int64_t[1]){256});
  return te_const(&c->e, &t, v);
}

/* `saturated` is TFLM's result for |d| beyond the table. */
static tfl_q16_lut_t make_lut(tfl_ctx_t *c, int bits, int32_t saturated) {
  int32_t base[256], step[256];
  for (int k = 0; k < 255; ++k) {
    base[k] = (int32_t)SIGMOID_TABLE[k] << bits;
    step[k] = SIGMOID_TABLE[k + 1] - SIGMOID_TABLE[k];
  }
  base[255] = saturated;
  step[255] = 0;
  return (tfl_q16_lut_t){bits, table_const(c, base), table_const(c, step)};
}

tfl_q16_lut_t tfl_q16_sigmoid_lut(tfl_ctx_t *c) { return make_lut(c, 9, 0x7FFF << 10); }
tfl_q16_lut_t tfl_q16_tanh_lut(tfl_ctx_t *c) { return make_lut(c, 8, 0xFFFF << 8); }

/* The interpolated table value of |d|, before the sign is applied. */
static te_value_t lookup(tfl_ctx_t *c, const tfl_q16_lut_t *t, te_value_t d) {
  te_value_t a = te_clamp_int(&c->e, te_unary(&c->e, "tosa.abs", d), 0, 255 << t->bits);
  te_value_t seg = shr(c, a, t->bits);
  te_value_t frac = te_binary(&c->e, "tosa.bitwise_and", a, k32(c, (1 << t->bits) - 1));
  uint32_t r = a.type.rank;
  te_value_t base = te_gather_axis(&c->e, t->base, 1, 256, 1, seg, r, a.type.dims);
  te_value_t step = te_gather_axis(&c->e, t->step, 1, 256, 1, seg, r, a.type.dims);
  return te_binary(&c->e, "tosa.add", base, te_mul(&c->e, frac, step, 0));
}

/* TFLM's result = d >= 0 ? pos_bias + r : neg_bias - r, then >> shift. */
static te_value_t mirror(tfl_ctx_t *c, te_value_t d, te_value_t r, int32_t pos_bias,
                         int32_t neg_bias, int shift) {
  te_value_t pos = te_binary(&c->e, "tosa.add", r, k32(c, pos_bias));
  te_value_t neg = te_binary(&c->e, "tosa.sub", k32(c, neg_bias), r);
  te_value_t nonneg = te_binary(&c->e, "tosa.greater_equal", d, k32(c, 0));
  return shr(c, te_select(&c->e, nonneg, pos, neg), shift);
}

te_value_t tfl_q16_sigmoid(tfl_ctx_t *c, const tfl_q16_lut_t *t, te_value_t d) {
  return mirror(c, d, lookup(c, t, d), 1 << 9, (1 << 25) + (1 << 9) - 1, 10);
}

te_value_t tfl_q16_tanh(tfl_ctx_t *c, const tfl_q16_lut_t *t, te_value_t d) {
  return mirror(c, d, lookup(c, t, d), (1 << 7) - (1 << 23), (1 << 23) + (1 << 7) - 1, 8);
}

/* TFLM's CheckedLog2: log2 in float, rounded; exact to within 1e-3. */
static int checked_log2(float x, int *out) {
  float l = logf(x) * (1.0f / logf(2.0f));
  float r = roundf(l);
  *out = (int)r;
  return fabsf(l - r) < 1e-3f;
}

/* TFLM's Prepare (logistic_common.cc, tanh.cc) with the kernel's power-of-
 * two case folded in: d = (x * *mult + round) >> *shift. */
static int input_params(tfl_ctx_t *c, int logistic, float scale, int32_t *mult, int *shift) {
  int l2;
  int pot = checked_log2(scale, &l2);
  int left = 12 + l2; /* (15 - kInputIntegerBits) + log2(scale) */
  /* Only scale 2^-12 (and 2^-11 for tanh) takes the POT path: exactly 3
   * << left, even when the scale is only within 1e-3 of a power of two. */
  pot = pot && (left == 0 || (!logistic && left == 1));
  if (pot) {
    *mult = 3 << left;
    *shift = 0;
    return 1;
  }
  double m = (double)scale * 4096.0 * 3.0;
  *shift = 0;
  while (m <= 32767.0 / 2.0 && *shift <= 30) {
    ++*shift;
    m *= 2.0;
  }
  /* TFLM asserts this; beyond it x * multiplier could overflow int32. */
  if (!(m <= 32767.0)) {
    tfl_fail(c, "int16 input scale %g is too large (TFLite Micro needs a multiplier <= 32767)",
             (double)scale);
    return 0;
  }
  *mult = (int32_t)m;
  return 1;
}

tinyml_status_t tfl_lower_q16_logistic_tanh(tfl_ctx_t *c, int logistic) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int out_l2, shift;
  int32_t mult;
  if (tfl_zero_point(in) != 0 || tfl_zero_point(out) != 0)
    return tfl_fail(c, "INT16 -> INT16 needs zero point 0 (TFLite Micro)");
  if (!checked_log2(tfl_scale(out), &out_l2) || out_l2 != -15)
    return tfl_fail(c, "INT16 -> INT16 needs output scale 1/32768 (TFLite Micro), not %g",
                    (double)tfl_scale(out));
  if (!input_params(c, logistic, tfl_scale(in), &mult, &shift)) return c->error;
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  te_value_t d = te_mul(&c->e, te_cast(&c->e, x, TE_I32), k32(c, mult), 0);
  if (shift > 0) d = shr(c, te_binary(&c->e, "tosa.add", d, k32(c, 1LL << (shift - 1))), shift);
  tfl_q16_lut_t t = logistic ? tfl_q16_sigmoid_lut(c) : tfl_q16_tanh_lut(c);
  te_value_t y = logistic ? tfl_q16_sigmoid(c, &t, d) : tfl_q16_tanh(c, &t, d);
  return tfl_set_out(c, 0, te_cast(&c->e, y, TE_I16));
}
