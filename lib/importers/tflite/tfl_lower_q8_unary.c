/* int8 (and, where TFLite has them, uint8) forms of ABS, LEAKY_RELU,
 * HARD_SWISH and ELU.
 *
 * Each output byte depends only on the input byte, so the operator becomes
 * one tosa.table of 256 entries, and each entry is what TFLite Micro's
 * kernel computes for that byte, in the kernel's own integer (or, for ELU,
 * float) arithmetic, run here at compile time: abs and leaky_relu are
 * MultiplyByQuantizedMultiplier of the offset input (elementwise.cc,
 * leaky_relu_common.cc), hard_swish is reference_ops::HardSwish's 16-bit
 * fixed point, elu is the float lookup table of elu.cc.  uint8 travels as
 * int8 (value - 128, zero point - 128), where these formulas are unchanged.
 * int16 ABS and LEAKY_RELU use the same formulas elementwise (unary_q16). */
#include <math.h>

#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OP_LEAKY_RELU = 98, OP_ABS = 101, OP_ELU = 111, OP_HARD_SWISH = 117 };

typedef struct q8_params {
  int32_t in_zp, out_zp, qmin, qmax;
  float in_scale, out_scale;
  int32_t m1, m2;   /* multipliers: identity/alpha, or hard_swish's int16 pair */
  int s1, s2;       /* their shifts */
} q8_params_t;

static int32_t clamp_q(const q8_params_t *p, int32_t v) {
  return v < p->qmin ? p->qmin : v > p->qmax ? p->qmax : v;
}

static int32_t abs_entry(const q8_params_t *p, int32_t x) {
  int32_t v = x - p->in_zp;
  if (v < 0) v = -v;
  if (p->in_scale == p->out_scale) return clamp_q(p, v + p->out_zp);
  return clamp_q(p, tfl_mbqm(v, p->m1, p->s1) + p->out_zp);
}

static int32_t leaky_entry(const q8_params_t *p, int32_t x) {
  int32_t v = x - p->in_zp;
  return clamp_q(p, p->out_zp + (v >= 0 ? tfl_mbqm(v, p->m1, p->s1) : tfl_mbqm(v, p->m2, p->s2)));
}

static int32_t elu_entry(const q8_params_t *p, int32_t x) {
  float d = p->in_scale * (float)(x - p->in_zp);
  float t = d < 0.0f ? expm1f(d) : d;
  float r = roundf(t * (1.0f / p->out_scale));
  return clamp_q(p, (int32_t)(r + (float)p->out_zp));
}

/* gemmlowp's int16 SaturatingRoundingDoublingHighMul and RoundingDivideByPOT,
 * and TFLite's SaturatingDoublingHighMul and SaturatingLeftShift. */
static int16_t srdhm16(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  int32_t ab = (int32_t)a * b;
  int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return (int16_t)((ab + nudge) / (1 << 15));
}

static int16_t sdhm16(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  return (int16_t)(((int32_t)a * b) / (1 << 15));
}

static int16_t sat_shl16(int16_t v, int amount) {
  int64_t r = (int64_t)v * ((int64_t)1 << amount);
  return (int16_t)(r > INT16_MAX ? INT16_MAX : r < INT16_MIN ? INT16_MIN : r);
}

static int16_t rdbpot16(int16_t x, int e) {
  int16_t mask = (int16_t)((1 << e) - 1), rem = (int16_t)(x & mask);
  int16_t threshold = (int16_t)((mask >> 1) + (x < 0 ? 1 : 0));
  return (int16_t)((x >> e) + (rem > threshold ? 1 : 0));
}

/* m1/s1: the output multiplier (int16) and exponent; m2/s2: the relu-ish one. */
static int32_t hard_swish_entry(const q8_params_t *p, int32_t x) {
  int16_t hires = (int16_t)((x - p->in_zp) * (1 << 7));
  int16_t pre_out = srdhm16(hires, (int16_t)p->m1);
  int16_t r = hires;
  if (p->s2 > 0) r = sat_shl16(r, p->s2 - 1);
  r = srdhm16(r, (int16_t)p->m2);
  if (p->s2 > 0) r = sat_shl16(r, 1);
  if (p->s2 < 0) r = rdbpot16(r, -p->s2);
  r = (int16_t)((r + (1 << 15)) >> 1);
  int16_t out = rdbpot16(sdhm16(r, pre_out), -p->s1);
  return clamp_q(p, out + p->out_zp);
}

/* TFLite's DownScaleInt32ToInt16Multiplier. */
static int32_t to_int16_multiplier(int32_t m) {
  if (m >= INT32_MAX - (1 << 15)) return INT16_MAX;
  return (m + (1 << 15)) >> 16;
}

/* The multipliers each kernel's Prepare computes, from float scales as it does. */
static int prepare(tfl_ctx_t *c, int code, float alpha, q8_params_t *p) {
  float in_s = p->in_scale, out_s = p->out_scale;
  switch (code) {
    case OP_ABS:
      return in_s == out_s || tfl_quantize_multiplier((double)in_s / (double)out_s, &p->m1, &p->s1);
    case OP_LEAKY_RELU:
      if (!(alpha >= 0.0f)) return tfl_fail(c, "quantised LEAKY_RELU with a negative alpha (%g) is not supported", (double)alpha), 0;
      return tfl_quantize_multiplier((double)(in_s / out_s), &p->m1, &p->s1) &&
             (alpha == 0.0f || tfl_quantize_multiplier((double)(in_s * alpha / out_s), &p->m2, &p->s2));
    case OP_HARD_SWISH: {
      float hires = (1.0f / 128.0f) * in_s;
      int32_t m;
      if (!tfl_quantize_multiplier((double)(hires / out_s), &m, &p->s1) || p->s1 > 0) return 0;
      p->m1 = to_int16_multiplier(m);
      if (!tfl_quantize_multiplier((double)(hires / (3.0f / 32768.0f)), &m, &p->s2)) return 0;
      p->m2 = to_int16_multiplier(m);
      return 1;
    }
    default: return 1; /* OP_ELU: the table is computed in float */
  }
}

/* MultiplyByQuantizedMultiplier on i32: a DOUBLE_ROUND rescale. */
static te_value_t mbqm32(tfl_ctx_t *c, te_value_t v, int32_t m, int s) {
  int8_t ts;
  if (!tfl_tosa_shift(s, &ts)) {
    tfl_fail(c, "scale ratio shift %d is out of range", s);
    return (te_value_t){0};
  }
  return te_rescale(&c->e, v, TE_I32, &m, &ts, 1, 0, 0, 1, 0, 0);
}

/* int16 ABS and LEAKY_RELU: the int8 formulas above, elementwise in i32
 * (a table of every int16 input would cost 128 KiB per operator). */
static tinyml_status_t unary_q16(tfl_ctx_t *c, int code, float alpha) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  q8_params_t p = {tfl_zero_point(in), tfl_zero_point(out), -32768, 32767, tfl_scale(in),
                   tfl_scale(out), 0, 0, 0, 0};
  if (code == OP_ABS && (p.in_zp || p.out_zp))
    return tfl_fail(c, "INT16 -> INT16 ABS needs zero point 0 (TFLite Micro)");
  if (!prepare(c, code, alpha, &p))
    return c->error ? c->error : tfl_fail(c, "scales %g -> %g give a multiplier out of range",
                                          (double)p.in_scale, (double)p.out_scale);
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  te_value_t v = te_binary(&c->e, "tosa.sub", te_cast(&c->e, x, TE_I32),
                           te_scalar_int(&c->e, TE_I32, p.in_zp));
  te_value_t y;
  if (code == OP_ABS) {
    v = te_unary(&c->e, "tosa.abs", v);
    y = p.in_scale == p.out_scale ? v : mbqm32(c, v, p.m1, p.s1);
  } else {
    te_value_t nonneg = te_binary(&c->e, "tosa.greater_equal", v, te_scalar_int(&c->e, TE_I32, 0));
    y = te_select(&c->e, nonneg, mbqm32(c, v, p.m1, p.s1), mbqm32(c, v, p.m2, p.s2));
  }
  if (c->error) return c->error;
  y = te_binary(&c->e, "tosa.add", y, te_scalar_int(&c->e, TE_I32, p.out_zp));
  return tfl_set_out(c, 0, te_cast(&c->e, te_clamp_int(&c->e, y, p.qmin, p.qmax), TE_I16));
}

tinyml_status_t tfl_lower_unary_q8(tfl_ctx_t *c, float alpha) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int code = (int)c->op->builtin_code;
  if (in && out && in->type == TFL_INT16 && out->type == TFL_INT16 && tfl_is_quantized(in) &&
      tfl_is_quantized(out) && in->quant.scale_count == 1 && out->quant.scale_count == 1 &&
      (code == OP_ABS || code == OP_LEAKY_RELU))
    return unary_q16(c, code, alpha);
  int uint8_ok = code == OP_LEAKY_RELU || code == OP_HARD_SWISH;
  if (!in || !out || in->type != out->type || !tfl_is_quantized(in) || !tfl_is_quantized(out) ||
      in->quant.scale_count != 1 || out->quant.scale_count != 1 ||
      !(in->type == TFL_INT8 || (in->type == TFL_UINT8 && uint8_ok)))
    return tfl_fail(c, "unsupported types %s -> %s (FLOAT32, INT8%s with one scale each)",
                    in ? tfl_type_name(in->type) : "?", out ? tfl_type_name(out->type) : "?",
                    uint8_ok ? ", UINT8" : "");
  q8_params_t p = {tfl_zero_point(in), tfl_zero_point(out), 0, 0, tfl_scale(in), tfl_scale(out),
                   0, 0, 0, 0};
  tfl_qrange(out, &p.qmin, &p.qmax);
  if (!prepare(c, code, alpha, &p))
    return c->error ? c->error : tfl_fail(c, "scales %g -> %g give a multiplier out of range",
                                          (double)p.in_scale, (double)p.out_scale);
  int32_t (*entry)(const q8_params_t *, int32_t) =
      code == OP_ABS ? abs_entry : code == OP_LEAKY_RELU ? leaky_entry
      : code == OP_ELU ? elu_entry : hard_swish_entry;
  int8_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = (int8_t)entry(&p, i - 128);
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  return tfl_set_out(c, 0, tfl_lookup_i8(c, x, table));
}

/* int8/uint8/int16 PRELU (TFLite's BroadcastPrelu4DSlow): x - zp >= 0 is
 * rescaled by in/out scale, otherwise (x - zp) * (alpha - alpha_zp) by
 * in * alpha / out scale; both are MultiplyByQuantizedMultiplier, one TOSA
 * rescale each, and the per-element choice a select.  TFLM's int16 form
 * takes an int8 alpha (PreluPrepare insists) and any zero points; the
 * product still fits int32 (65535 * 255). */
tinyml_status_t tfl_lower_prelu_q8(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *al = tfl_in(c, 1), *out = tfl_out(c, 0);
  int is16 = in && in->type == TFL_INT16;
  if (!in || !al || !out || in->type != out->type ||
      al->type != (is16 ? TFL_INT8 : in->type) ||
      !(in->type == TFL_INT8 || in->type == TFL_UINT8 || is16) || !tfl_is_quantized(in) ||
      !tfl_is_quantized(al) || !tfl_is_quantized(out) || al->quant.scale_count != 1)
    return tfl_fail(c, "unsupported types %s, alpha %s -> %s (FLOAT32, INT8/UINT8 with the same "
                    "alpha type, or INT16 with an INT8 alpha; one alpha scale)",
                    in ? tfl_type_name(in->type) : "?", al ? tfl_type_name(al->type) : "?",
                    out ? tfl_type_name(out->type) : "?");
  int32_t m1, m2;
  int s1, s2;
  int8_t t1, t2;
  double si = tfl_scale(in), sa = tfl_scale(al), so = tfl_scale(out);
  if (!tfl_quantize_multiplier(si / so, &m1, &s1) || !tfl_tosa_shift(s1, &t1) ||
      !tfl_quantize_multiplier(si * sa / so, &m2, &s2) || !tfl_tosa_shift(s2, &t2))
    return tfl_fail(c, "scales give a multiplier out of range");
  te_value_t x = tfl_value_in(c, 0), a = tfl_value_in(c, 1);
  if (!x.id || !a.id) return c->error;
  te_value_t xv = te_binary(&c->e, "tosa.sub", te_cast(&c->e, x, TE_I32),
                            te_scalar_int(&c->e, TE_I32, tfl_zero_point(in)));
  te_value_t av = te_binary(&c->e, "tosa.sub", te_cast(&c->e, a, TE_I32),
                            te_scalar_int(&c->e, TE_I32, tfl_zero_point(al)));
  te_value_t pos = te_rescale(&c->e, xv, TE_I32, &m1, &t1, 1, 0, 0, 1, 0, 0);
  te_value_t neg = te_rescale(&c->e, te_mul(&c->e, xv, av, 0), TE_I32, &m2, &t2, 1, 0, 0, 1, 0, 0);
  te_value_t is_pos = te_binary(&c->e, "tosa.greater_equal", xv, te_scalar_int(&c->e, TE_I32, 0));
  te_value_t y = te_binary(&c->e, "tosa.add", te_select(&c->e, is_pos, pos, neg),
                           te_scalar_int(&c->e, TE_I32, tfl_zero_point(out)));
  int32_t qmin, qmax;
  tfl_qrange(out, &qmin, &qmax);
  y = te_clamp_int(&c->e, y, qmin, qmax);
  return tfl_set_out(c, 0, te_cast(&c->e, y, is16 ? TE_I16 : TE_I8));
}
