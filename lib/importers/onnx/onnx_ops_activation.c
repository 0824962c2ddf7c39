/* ONNX lowerings: unary math, activations and Clip (split from
 * onnx_ops_elementwise.c to keep files short).  See onnx_lower.h. */
#include "onnx_elt_util.h"

/* ---- unary math ---------------------------------------------------------- */

static te_value_t float_in(onnx_ctx_t *c) {
  if (!check(c, 1, T_F, 0)) return (te_value_t){0};
  return onnx_in(c, 0);
}

static tinyml_status_t unary_f(onnx_ctx_t *c, const char *tosa) {
  te_value_t x = float_in(c);
  return x.id ? out_like(c, un(c, tosa, x), 0) : c->error;
}

static tinyml_status_t lower_exp(onnx_ctx_t *c) { return unary_f(c, "tosa.exp"); }
static tinyml_status_t lower_log(onnx_ctx_t *c) { return unary_f(c, "tosa.log"); }
static tinyml_status_t lower_reciprocal(onnx_ctx_t *c) { return unary_f(c, "tosa.reciprocal"); }
static tinyml_status_t lower_floor(onnx_ctx_t *c) { return unary_f(c, "tosa.floor"); }
static tinyml_status_t lower_ceil(onnx_ctx_t *c) { return unary_f(c, "tosa.ceil"); }
static tinyml_status_t lower_sin(onnx_ctx_t *c) { return unary_f(c, "tosa.sin"); }
static tinyml_status_t lower_cos(onnx_ctx_t *c) { return unary_f(c, "tosa.cos"); }
static tinyml_status_t lower_tanh(onnx_ctx_t *c) { return unary_f(c, "tosa.tanh"); }
static tinyml_status_t lower_sigmoid(onnx_ctx_t *c) { return unary_f(c, "tosa.sigmoid"); }
static tinyml_status_t lower_erf(onnx_ctx_t *c) { return unary_f(c, "tosa.erf"); }

static tinyml_status_t lower_tan(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  return x.id ? out_like(c, fdiv(c, un(c, "tosa.sin", x), un(c, "tosa.cos", x)), 0) : c->error;
}

static tinyml_status_t lower_abs(onnx_ctx_t *c) {
  if (!check(c, 1, T_F | T_INT, 0)) return c->error;
  if (try_fold(c, F_ABS, 1, dt(c, 0))) return c->error;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (x.type.elem == TE_F32 || x.type.elem == TE_I32) return out_like(c, un(c, "tosa.abs", x), 0);
  return out_like(c, te_select(&c->e, bin(c, "tosa.greater", ki(c, x, 0), x), neg(c, x), x), 0);
}

static tinyml_status_t lower_neg(onnx_ctx_t *c) {
  if (!check(c, 1, T_F | T_INT, 0)) return c->error;
  if (try_fold(c, F_NEG, 1, dt(c, 0))) return c->error;
  te_value_t x = onnx_in(c, 0);
  return x.id ? out_like(c, neg(c, x), 0) : c->error;
}

/* Round half to even: floor, then step up past .5, or at .5 from odd. */
static tinyml_status_t lower_round(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  return x.id ? out_like(c, te_round_half_even(&c->e, x), 0) : c->error;
}

static tinyml_status_t lower_sign(onnx_ctx_t *c) {
  if (!check(c, 1, T_F | T_INT, 0)) return c->error;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  int f = x.type.elem == TE_F32;
  te_value_t z = f ? kf(c, x, 0.0f) : ki(c, x, 0);
  te_value_t one = f ? kf(c, x, 1.0f) : ki(c, x, 1), m1 = f ? kf(c, x, -1.0f) : ki(c, x, -1);
  /* Zero and NaN pass through unchanged. */
  te_value_t y = te_select(&c->e, bin(c, "tosa.greater", z, x), m1, x);
  return out_like(c, te_select(&c->e, bin(c, "tosa.greater", x, z), one, y), 0);
}

static te_value_t exp_neg(onnx_ctx_t *c, te_value_t x) { return un(c, "tosa.exp", neg(c, x)); }

/* Where a closed form cancels near 0, |x| < 0.1 takes the odd Taylor series
 * x + x^3 (k[0] + x^2 (k[1] + ...)) instead: its next term is below f32's
 * precision there. */
static te_value_t near_zero_series(onnx_ctx_t *c, te_value_t x, te_value_t y, const float *k,
                                   int n) {
  te_value_t x2 = mul(c, x, x), poly = kf(c, x, k[n - 1]);
  for (int i = n - 2; i >= 0; i--) poly = addk(c, mul(c, poly, x2), k[i]);
  te_value_t small = add(c, x, mul(c, mul(c, x, x2), poly));
  te_value_t is_small = bin(c, "tosa.greater", kf(c, x, 0.1f), un(c, "tosa.abs", x));
  return te_select(&c->e, is_small, small, y);
}

static tinyml_status_t lower_sinh(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t big = mulk(c, sub(c, un(c, "tosa.exp", x), exp_neg(c, x)), 0.5f);
  static const float k[] = {1.0f / 6.0f, 1.0f / 120.0f};
  return out_like(c, near_zero_series(c, x, big, k, 2), 0);
}

static tinyml_status_t lower_cosh(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  return out_like(c, mulk(c, add(c, un(c, "tosa.exp", x), exp_neg(c, x)), 0.5f), 0);
}


/* Cephes' atanf: reduce |x| past tan(3pi/8) to -1/x (+pi/2), past tan(pi/8)
 * to (x-1)/(x+1) (+pi/4), then an odd polynomial; about 1e-7 relative. */
static te_value_t atan_(onnx_ctx_t *c, te_value_t x) {
  te_value_t ax = un(c, "tosa.abs", x), one = kf(c, x, 1.0f);
  te_value_t hi = bin(c, "tosa.greater", ax, kf(c, x, 2.414213562373095f));
  te_value_t mid = bin(c, "tosa.greater", ax, kf(c, x, 0.4142135623730950f));
  te_value_t t = te_select(&c->e, mid, fdiv(c, sub(c, ax, one), add(c, ax, one)), ax);
  t = te_select(&c->e, hi, neg(c, fdiv(c, one, ax)), t);
  te_value_t y0 = te_select(&c->e, mid, kf(c, x, 0.785398163397448f), kf(c, x, 0.0f));
  y0 = te_select(&c->e, hi, kf(c, x, 1.570796326794897f), y0);
  te_value_t z = mul(c, t, t);
  te_value_t p = addk(c, mulk(c, z, 8.05374449538e-2f), -1.38776856032e-1f);
  p = addk(c, mul(c, p, z), 1.99777106478e-1f);
  p = addk(c, mul(c, p, z), -3.33329491539e-1f);
  te_value_t y = add(c, y0, add(c, mul(c, mul(c, p, z), t), t));
  /* Restore the sign: atan is odd (NaN passes through the product). */
  te_value_t sgn = te_select(&c->e, bin(c, "tosa.greater", kf(c, x, 0.0f), x), kf(c, x, -1.0f), one);
  return mul(c, y, sgn);
}

static tinyml_status_t lower_atan(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  return x.id ? out_like(c, atan_(c, x), 0) : c->error;
}

/* asin x = atan(x / sqrt((1-x)(1+x))); acos x = 2 atan(sqrt((1-x)/(1+x))).
 * Both are well conditioned near |x| = 1 and NaN beyond it. */
static tinyml_status_t lower_asin(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t d = fsqrt(c, mul(c, addk(c, neg(c, x), 1.0f), addk(c, x, 1.0f)));
  return out_like(c, atan_(c, fdiv(c, x, d)), 0);
}

static tinyml_status_t lower_acos(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t r = fsqrt(c, fdiv(c, addk(c, neg(c, x), 1.0f), addk(c, x, 1.0f)));
  return out_like(c, mulk(c, atan_(c, r), 2.0f), 0);
}

/* Above 1e4 x*x would overflow first, and the dropped 1/x^2 terms are below
 * f32's precision. */
static tinyml_status_t lower_asinh(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t ax = un(c, "tosa.abs", x);
  te_value_t mid = un(c, "tosa.log", add(c, ax, fsqrt(c, addk(c, mul(c, x, x), 1.0f))));
  te_value_t big = addk(c, un(c, "tosa.log", ax), 0.693147180559945f);
  te_value_t y = te_select(&c->e, bin(c, "tosa.greater", ax, kf(c, x, 1e4f)), big, mid);
  y = te_select(&c->e, bin(c, "tosa.greater", kf(c, x, 0.0f), x), neg(c, y), y);
  static const float k[] = {-1.0f / 6.0f, 3.0f / 40.0f};
  return out_like(c, near_zero_series(c, x, y, k, 2), 0);
}

/* (x-1)(x+1) is exact where x*x-1 cancels near 1; NaN below 1. */
static tinyml_status_t lower_acosh(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t r = fsqrt(c, mul(c, addk(c, x, -1.0f), addk(c, x, 1.0f)));
  te_value_t mid = un(c, "tosa.log", add(c, x, r));
  te_value_t big = addk(c, un(c, "tosa.log", x), 0.693147180559945f);
  return out_like(c, te_select(&c->e, bin(c, "tosa.greater", x, kf(c, x, 1e4f)), big, mid), 0);
}

/* (log(1+x) - log(1-x)) / 2: infinite at +-1, NaN beyond. */
static tinyml_status_t lower_atanh(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t lp = un(c, "tosa.log", addk(c, x, 1.0f));
  te_value_t lm = un(c, "tosa.log", addk(c, neg(c, x), 1.0f));
  static const float k[] = {1.0f / 3.0f, 1.0f / 5.0f, 1.0f / 7.0f};
  return out_like(c, near_zero_series(c, x, mulk(c, sub(c, lp, lm), 0.5f), k, 3), 0);
}

/* x < -lambd: x + bias; x > lambd: x - bias; else 0 (NaN stays NaN). */
static tinyml_status_t lower_shrink(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  float lambd = onnx_attr_float(c, "lambd", 0.5f), bias = onnx_attr_float(c, "bias", 0.0f);
  te_value_t lo = bin(c, "tosa.greater", kf(c, x, -lambd), x);
  te_value_t hi = bin(c, "tosa.greater", x, kf(c, x, lambd));
  te_value_t inside = lnot(c, bin(c, "tosa.logical_or", lo, hi));
  te_value_t y = te_select(&c->e, lo, addk(c, x, bias), addk(c, x, -bias));
  te_value_t isnum = bin(c, "tosa.equal", x, x);
  inside = bin(c, "tosa.logical_and", inside, isnum);
  return out_like(c, te_select(&c->e, inside, kf(c, x, 0.0f), y), 0);
}

static tinyml_status_t lower_sqrt(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  return x.id ? out_like(c, fsqrt(c, x), 0) : c->error;
}

static tinyml_status_t lower_isnan(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  return x.id ? onnx_set_out(c, 0, lnot(c, bin(c, "tosa.equal", x, x))) : c->error;
}

static tinyml_status_t lower_isinf(onnx_ctx_t *c) {
  int64_t pos = onnx_attr_int(c, "detect_positive", 1), ng = onnx_attr_int(c, "detect_negative", 1);
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t p = bin(c, "tosa.equal", x, kf(c, x, INFINITY));
  te_value_t n = bin(c, "tosa.equal", x, kf(c, x, -INFINITY));
  te_value_t none = bin(c, "tosa.logical_and", p, n); /* never true */
  te_value_t y = pos && ng ? bin(c, "tosa.logical_or", p, n) : pos ? p : ng ? n : none;
  return onnx_set_out(c, 0, y);
}

/* ---- activations --------------------------------------------------------- */

static tinyml_status_t lower_relu(onnx_ctx_t *c) {
  if (!check(c, 1, T_F | T_SI, 0)) return c->error;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (x.type.elem == TE_F32) return out_like(c, te_clamp_f32(&c->e, x, 0.0f, INFINITY), 0);
  int64_t hi = x.type.elem == TE_I8 ? INT8_MAX : x.type.elem == TE_I16 ? INT16_MAX : INT32_MAX;
  return out_like(c, te_clamp_int(&c->e, x, 0, hi), 0);
}

/* x where x >= 0 (or > 0), else f: the shape of most activations. */
static te_value_t split0(onnx_ctx_t *c, te_value_t x, te_value_t neg_part, int strict) {
  te_value_t z = kf(c, x, 0.0f);
  te_value_t pos = bin(c, strict ? "tosa.greater" : "tosa.greater_equal", x, z);
  return te_select(&c->e, pos, x, neg_part);
}

static tinyml_status_t lower_leaky_relu(onnx_ctx_t *c) {
  float alpha = onnx_attr_float(c, "alpha", 0.01f);
  te_value_t x = float_in(c);
  return x.id ? out_like(c, split0(c, x, mulk(c, x, alpha), 0), 0) : c->error;
}

static tinyml_status_t lower_prelu(onnx_ctx_t *c) {
  if (!check(c, 2, T_F, 1)) return c->error;
  te_value_t x = onnx_in(c, 0), slope = onnx_in(c, 1);
  if (!x.id || !slope.id) return c->error;
  if (slope.type.rank > x.type.rank) return onnx_fail(c, "slope has a higher rank than X");
  return out_like(c, split0(c, x, mul(c, x, slope), 0), 0);
}

/* PRelu-6 predates numpy broadcasting: a slope of X's channel count
 * (dim 1) is per channel, as in Caffe2 and PyTorch exports. */
static tinyml_status_t lower_prelu6(onnx_ctx_t *c) {
  if (!check(c, 2, T_F, 1)) return c->error;
  te_value_t x = onnx_in(c, 0), slope = onnx_in(c, 1);
  if (!x.id || !slope.id) return c->error;
  int64_t n = te_numel(&slope.type), dims[TE_MAX_RANK];
  int same = slope.type.rank == x.type.rank &&
             memcmp(slope.type.dims, x.type.dims, x.type.rank * sizeof(int64_t)) == 0;
  if (!same && n != 1 && !(slope.type.rank == 1 && x.type.rank >= 2 && n == x.type.dims[1]))
    return onnx_fail(c, "slope shape is neither X's, 1 nor [C]");
  if (!same) {
    for (uint32_t i = 0; i < x.type.rank; ++i) dims[i] = i == 1 ? n : 1;
    if (n == 1) dims[1] = 1;
    slope = te_reshape(&c->e, slope, x.type.rank, dims);
  }
  return out_like(c, split0(c, x, mul(c, x, slope), 0), 0);
}

static tinyml_status_t lower_elu(onnx_ctx_t *c) {
  float alpha = onnx_attr_float(c, "alpha", 1.0f);
  te_value_t x = float_in(c);
  return x.id ? out_like(c, split0(c, x, mulk(c, expm1_(c, x), alpha), 1), 0) : c->error;
}

static tinyml_status_t lower_selu(onnx_ctx_t *c) {
  float alpha = onnx_attr_float(c, "alpha", 1.67326319217681884765625f);
  float gamma = onnx_attr_float(c, "gamma", 1.05070102214813232421875f);
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  return out_like(c, mulk(c, split0(c, x, mulk(c, expm1_(c, x), alpha), 1), gamma), 0);
}

static tinyml_status_t lower_celu(onnx_ctx_t *c) {
  float alpha = onnx_attr_float(c, "alpha", 1.0f);
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  if (alpha == 0.0f) return onnx_fail(c, "alpha=0 is invalid");
  return out_like(c, split0(c, x, mulk(c, expm1_(c, mulk(c, x, 1.0f / alpha)), alpha), 1), 0);
}

static tinyml_status_t lower_thresholded_relu(onnx_ctx_t *c) {
  float alpha = onnx_attr_float(c, "alpha", 1.0f);
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t keep = bin(c, "tosa.greater", x, kf(c, x, alpha));
  return out_like(c, te_select(&c->e, keep, x, kf(c, x, 0.0f)), 0);
}

/* log(1 + exp(x)) as max(x, 0) + log(1 + exp(-|x|)): no overflow. */
static te_value_t softplus(onnx_ctx_t *c, te_value_t x) {
  te_value_t t = un(c, "tosa.exp", neg(c, un(c, "tosa.abs", x)));
  return add(c, te_clamp_f32(&c->e, x, 0.0f, INFINITY), un(c, "tosa.log", addk(c, t, 1.0f)));
}

static tinyml_status_t lower_softplus(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  return x.id ? out_like(c, softplus(c, x), 0) : c->error;
}

static tinyml_status_t lower_softsign(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  return out_like(c, fdiv(c, x, addk(c, un(c, "tosa.abs", x), 1.0f)), 0);
}

static tinyml_status_t lower_hard_sigmoid(onnx_ctx_t *c) {
  float alpha = onnx_attr_float(c, "alpha", 0.2f), beta = onnx_attr_float(c, "beta", 0.5f);
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  return out_like(c, te_clamp_f32(&c->e, addk(c, mulk(c, x, alpha), beta), 0.0f, 1.0f), 0);
}

static tinyml_status_t lower_hard_swish(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t g = te_clamp_f32(&c->e, addk(c, mulk(c, x, 1.0f / 6.0f), 0.5f), 0.0f, 1.0f);
  return out_like(c, mul(c, x, g), 0);
}

static tinyml_status_t lower_mish(onnx_ctx_t *c) {
  te_value_t x = float_in(c);
  return x.id ? out_like(c, mul(c, x, un(c, "tosa.tanh", softplus(c, x))), 0) : c->error;
}

static tinyml_status_t lower_gelu(onnx_ctx_t *c) {
  char buf[16];
  const char *approx = onnx_attr_string(c, "approximate", "none", buf, sizeof buf);
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  te_value_t inner;
  if (strcmp(approx, "none") == 0) {
    inner = un(c, "tosa.erf", mulk(c, x, 0.70710678118654752f));
  } else if (strcmp(approx, "tanh") == 0) {
    te_value_t x3 = mul(c, mul(c, x, x), x);
    inner = add(c, x, mulk(c, x3, 0.044715f));
    inner = un(c, "tosa.tanh", mulk(c, inner, 0.79788456080286536f));
  } else {
    return onnx_fail(c, "approximate='%s' is not supported", approx);
  }
  return out_like(c, mul(c, mulk(c, x, 0.5f), addk(c, inner, 1.0f)), 0);
}

/* ---- Clip ---------------------------------------------------------------- */

/* min(max(x, lo), hi) as numpy clips: also right when lo > hi. */
static te_value_t clip_ops(onnx_ctx_t *c, te_value_t x, te_value_t lo, te_value_t hi) {
  if (lo.id) x = bin(c, "tosa.maximum", x, lo);
  if (hi.id) x = bin(c, "tosa.minimum", x, hi);
  return x;
}

static tinyml_status_t lower_clip6(onnx_ctx_t *c) {
  float lo = onnx_attr_float(c, "min", -INFINITY), hi = onnx_attr_float(c, "max", INFINITY);
  te_value_t x = float_in(c);
  if (!x.id) return c->error;
  if (lo <= hi) return out_like(c, te_clamp_f32(&c->e, x, lo, hi), 0);
  return out_like(c, clip_ops(c, x, kf(c, x, lo), kf(c, x, hi)), 0);
}

static tinyml_status_t lower_clip11(onnx_ctx_t *c) {
  if (!check(c, 1, T_F | T_SI, 0)) return c->error;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  int f = x.type.elem == TE_F32, runtime = 0;
  num_t b[2] = {{INT64_MIN, -INFINITY}, {INT64_MAX, INFINITY}};
  te_value_t rt[2] = {{0}, {0}};
  for (uint32_t i = 0; i < 2; ++i) {
    const onnx_value_t *v = onnx_input(c, i + 1);
    if (!v) continue;
    if (v->dtype != dt(c, 0)) return onnx_fail(c, "bound %u has another type", i + 1);
    if (numel_of(v) != 1 || v->rank > x.type.rank) return onnx_fail(c, "bounds must be scalars");
    if (v->data) b[i] = get_num(v, 0);
    else rt[i] = onnx_in(c, i + 1), runtime = 1;
  }
  if (c->error) return c->error;
  int ordered = f ? b[0].f <= b[1].f : b[0].i <= b[1].i;
  if (runtime || !ordered) {
    for (uint32_t i = 0; i < 2; ++i)
      if (!rt[i].id && onnx_input(c, i + 1)) rt[i] = f ? kf(c, x, b[i].f) : ki(c, x, b[i].i);
    return out_like(c, clip_ops(c, x, rt[0], rt[1]), 0);
  }
  if (f) return out_like(c, te_clamp_f32(&c->e, x, b[0].f, b[1].f), 0);
  int64_t lo = x.type.elem == TE_I8 ? INT8_MIN : x.type.elem == TE_I16 ? INT16_MIN : INT32_MIN;
  int64_t hi = x.type.elem == TE_I8 ? INT8_MAX : x.type.elem == TE_I16 ? INT16_MAX : INT32_MAX;
  if (b[0].i > lo) lo = b[0].i;
  if (b[1].i < hi) hi = b[1].i;
  return out_like(c, te_clamp_int(&c->e, x, lo, hi), 0);
}

const onnx_lowering_t onnx_lowerings_activation[] = {
    {"Abs", 6, 23, lower_abs},
    {"Neg", 6, 23, lower_neg},
    {"Exp", 6, 23, lower_exp},
    {"Log", 6, 23, lower_log},
    {"Sqrt", 6, 23, lower_sqrt},
    {"Reciprocal", 6, 23, lower_reciprocal},
    {"Floor", 6, 23, lower_floor},
    {"Ceil", 6, 23, lower_ceil},
    {"Round", 11, 23, lower_round},
    {"Sign", 9, 23, lower_sign},
    {"Sin", 7, 23, lower_sin},
    {"Cos", 7, 23, lower_cos},
    {"Tan", 7, 23, lower_tan},
    {"Asin", 7, 23, lower_asin},
    {"Acos", 7, 23, lower_acos},
    {"Atan", 7, 23, lower_atan},
    {"Sinh", 9, 23, lower_sinh},
    {"Cosh", 9, 23, lower_cosh},
    {"Tanh", 6, 23, lower_tanh},
    {"Sigmoid", 6, 23, lower_sigmoid},
    {"Erf", 9, 23, lower_erf},
    {"IsNaN", 9, 23, lower_isnan},
    {"IsInf", 10, 23, lower_isinf},
    {"Relu", 6, 23, lower_relu},
    {"LeakyRelu", 6, 23, lower_leaky_relu},
    {"PRelu", 1, 6, lower_prelu6},
    {"PRelu", 7, 23, lower_prelu},
    {"Elu", 6, 23, lower_elu},
    {"Selu", 6, 23, lower_selu},
    {"Celu", 12, 23, lower_celu},
    {"ThresholdedRelu", 10, 23, lower_thresholded_relu},
    {"Softplus", 1, 23, lower_softplus},
    {"Softsign", 1, 23, lower_softsign},
    {"HardSigmoid", 6, 23, lower_hard_sigmoid},
    {"HardSwish", 14, 23, lower_hard_swish},
    {"Mish", 18, 23, lower_mish},
    {"Gelu", 20, 23, lower_gelu},
    {"Clip", 6, 10, lower_clip6},
    {"Clip", 11, 23, lower_clip11},
    {"Asinh", 9, 23, lower_asinh},
    {"Acosh", 9, 23, lower_acosh},
    {"Atanh", 9, 23, lower_atanh},
    {"Shrink", 9, 23, lower_shrink},
    {NULL, 0, 0, NULL},
};
