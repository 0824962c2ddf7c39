/* ONNX lowerings: normalisations, Softmax/LogSoftmax/Hardmax and Dropout
 * (split from onnx_ops_nn.c to keep files short).  See onnx_lower.h. */
#include "onnx_const_util.h"
#include "onnx_nn_util.h"

/* ---- normalisations ---- */

static te_value_t rsqrt_eps(onnx_ctx_t *c, te_value_t var, float eps) {
  return te_unary(&c->e, "tosa.rsqrt", add(c, var, f32(c, eps)));
}

/* Mean over axis 1 of [outer, n, inner]-shaped x, kept as 1. */
static te_value_t mean1(onnx_ctx_t *c, te_value_t x) {
  te_value_t s = te_reduce(&c->e, "tosa.reduce_sum", x, 1);
  return mul(c, s, f32(c, (float)(1.0 / (double)x.type.dims[1])));
}

/* A per-channel [C] FLOAT parameter shaped to broadcast over `rank`. */
static te_value_t channel_param(onnx_ctx_t *c, uint32_t i, int64_t ch, uint32_t rank) {
  const onnx_value_t *v = onnx_input(c, i);
  if (!v || v->rank != 1 || v->dims[0] != ch) {
    onnx_fail(c, "input %u must be a vector of %lld", i, (long long)ch);
    return (te_value_t){0};
  }
  te_value_t p = float_in(c, i);
  return p.id ? along(c, p, rank, 1) : p;
}

static int extra_outputs_unused(onnx_ctx_t *c) {
  for (uint32_t i = 1; i < onnx_output_count(c); ++i)
    if (c->node->output[i][0]) {
      onnx_fail(c, "training outputs are not supported");
      return 0;
    }
  return 1;
}

/* Constant parameters fold into one multiplier and one offset per channel. */
static int batchnorm_fold(onnx_ctx_t *c, int64_t ch, float eps, uint32_t rank, te_value_t *a,
                          te_value_t *b) {
  const float *s = const_floats(c, 1), *bias = const_floats(c, 2);
  const float *mean = const_floats(c, 3), *var = const_floats(c, 4);
  if (!s || !bias || !mean || !var) return 0;
  float *av = alloc_floats(c, ch), *bv = alloc_floats(c, ch);
  if (!av || !bv) {
    tinyml__free(c->allocator, av);
    tinyml__free(c->allocator, bv);
    return 0;
  }
  for (int64_t k = 0; k < ch; ++k) {
    double m = (double)s[k] / sqrt((double)var[k] + (double)eps);
    av[k] = (float)m;
    bv[k] = (float)((double)bias[k] - (double)mean[k] * m);
  }
  int64_t dims[TE_MAX_RANK];
  for (uint32_t d = 0; d < rank; ++d) dims[d] = d == 1 ? ch : 1;
  *a = const_floats_value(c, av, rank, dims);
  *b = const_floats_value(c, bv, rank, dims);
  return 1;
}

/* Mean of x over every axis but 1, kept as 1 ([1, C, 1, ...]). */
static te_value_t mean_but1(onnx_ctx_t *c, te_value_t x) {
  te_value_t s = x;
  for (uint32_t d = 0; d < x.type.rank; ++d)
    if (d != 1) s = te_reduce(&c->e, "tosa.reduce_sum", s, (int32_t)d);
  return mul(c, s, f32(c, (float)((double)x.type.dims[1] / (double)te_numel(&x.type))));
}

/* training_mode = 1 (opset 14 on), as onnx's reference: Y normalises with
 * the batch's own mean and (population) variance; the running statistics
 * come out as mean * momentum + batch * (1 - momentum). */
static tinyml_status_t batchnorm_training(onnx_ctx_t *c, te_value_t x, int64_t ch, float eps) {
  uint32_t r = x.type.rank;
  float momentum = onnx_attr_float(c, "momentum", 0.9f);
  te_value_t mean = mean_but1(c, x), d = sub(c, x, mean);
  te_value_t var = mean_but1(c, mul(c, d, d));
  te_value_t scale = channel_param(c, 1, ch, r), bias = channel_param(c, 2, ch, r);
  te_value_t rmean = channel_param(c, 3, ch, r), rvar = channel_param(c, 4, ch, r);
  if (c->error) return c->error;
  te_value_t y = add(c, mul(c, mul(c, d, rsqrt_eps(c, var, eps)), scale), bias);
  if (onnx_set_out(c, 0, y)) return c->error;
  te_value_t keep = f32(c, momentum), take = f32(c, 1.0f - momentum);
  te_value_t outs[2] = {add(c, mul(c, rmean, keep), mul(c, mean, take)),
                        add(c, mul(c, rvar, keep), mul(c, var, take))};
  for (uint32_t i = 0; i < 2 && i + 1 < onnx_output_count(c); ++i)
    if (c->node->output[i + 1][0] && onnx_set_out(c, i + 1, te_reshape(&c->e, outs[i], 1, &ch)))
      return c->error;
  return c->error;
}

static tinyml_status_t lower_batchnorm(onnx_ctx_t *c) {
  if (c->opset < 7 && onnx_attr_int(c, "is_test", 0) == 0)
    return onnx_fail(c, "is_test = 0 (training) is not supported");
  if (c->opset < 9 && onnx_attr_int(c, "spatial", 1) != 1)
    return onnx_fail(c, "spatial = 0 is not supported");
  int training = onnx_attr_int(c, "training_mode", 0) != 0;
  if (training && c->opset < 14)
    return onnx_fail(c, "training_mode = 1 before opset 14 is invalid");
  te_value_t x = float_in(c, 0);
  if (!x.id || (!training && !extra_outputs_unused(c))) return c->error;
  if (x.type.rank < 2) return onnx_fail(c, "the input must be [N, C, ...]");
  int64_t ch = x.type.dims[1];
  uint32_t r = x.type.rank;
  float eps = onnx_attr_float(c, "epsilon", 1e-5f);
  for (uint32_t i = 1; i <= 4; ++i) {
    const onnx_value_t *v = onnx_input(c, i);
    if (!v || v->rank != 1 || v->dims[0] != ch || v->dtype != ONNX_FLOAT)
      return onnx_fail(c, "input %u must be a FLOAT vector of %lld", i, (long long)ch);
  }
  if (training) return batchnorm_training(c, x, ch, eps);
  te_value_t a, b;
  if (!batchnorm_fold(c, ch, eps, r, &a, &b)) {
    if (c->error) return c->error;
    a = mul(c, channel_param(c, 1, ch, r), rsqrt_eps(c, channel_param(c, 4, ch, r), eps));
    b = sub(c, channel_param(c, 2, ch, r), mul(c, channel_param(c, 3, ch, r), a));
  }
  if (c->error) return c->error;
  return onnx_set_out(c, 0, add(c, mul(c, x, a), b));
}

/* (x - mean) / sqrt(var + eps) over axis 1 of [outer, n, inner] x; the
 * reciprocal deviation is returned through *inv when asked. */
static te_value_t normalise(onnx_ctx_t *c, te_value_t x, float eps, te_value_t *mean,
                            te_value_t *inv) {
  *mean = mean1(c, x);
  te_value_t d = sub(c, x, *mean);
  *inv = rsqrt_eps(c, mean1(c, mul(c, d, d)), eps);
  return mul(c, d, *inv);
}

static tinyml_status_t lower_instancenorm(onnx_ctx_t *c) {
  te_value_t x = float_in(c, 0), mean, inv;
  if (!spatial_input(c, x)) return c->error;
  int64_t n = x.type.dims[0], ch = x.type.dims[1];
  int64_t fd[3] = {n * ch, te_numel(&x.type) / (n * ch), 1};
  te_value_t y = normalise(c, te_reshape(&c->e, x, 3, fd), onnx_attr_float(c, "epsilon", 1e-5f),
                           &mean, &inv);
  y = te_reshape(&c->e, y, x.type.rank, x.type.dims);
  y = add(c, mul(c, y, channel_param(c, 1, ch, x.type.rank)), channel_param(c, 2, ch, x.type.rank));
  return c->error ? c->error : onnx_set_out(c, 0, y);
}

/* Whether p (Scale or B) broadcasts one way onto dims [axis, rank) of x. */
static int broadcasts_onto(const onnx_value_t *p, te_value_t x, int32_t axis) {
  if (p->rank > x.type.rank - (uint32_t)axis) return 0;
  for (uint32_t d = 0; d < p->rank; ++d) {
    int64_t want = x.type.dims[x.type.rank - p->rank + d];
    if (p->dims[d] != 1 && p->dims[d] != want) return 0;
  }
  return 1;
}

static tinyml_status_t lower_layernorm(onnx_ctx_t *c) {
  te_value_t x = float_in(c, 0), mean, inv;
  if (!x.id) return c->error;
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", -1), x.type.rank);
  if (axis < 0) return onnx_fail(c, "invalid axis");
  if (onnx_attr_int(c, "stash_type", 1) != 1) return onnx_fail(c, "stash_type must be FLOAT");
  const onnx_value_t *sv = onnx_input(c, 1), *bv = onnx_input(c, 2);
  if (!sv || !broadcasts_onto(sv, x, axis) || (bv && !broadcasts_onto(bv, x, axis)))
    return onnx_fail(c, "Scale and B must broadcast onto the normalised dimensions");
  int64_t outer = 1, kept[TE_MAX_RANK];
  for (uint32_t d = 0; d < x.type.rank; ++d) {
    if (d < (uint32_t)axis) outer *= x.type.dims[d];
    kept[d] = d < (uint32_t)axis ? x.type.dims[d] : 1;
  }
  int64_t fd[3] = {outer, te_numel(&x.type) / outer, 1};
  te_value_t y = normalise(c, te_reshape(&c->e, x, 3, fd), onnx_attr_float(c, "epsilon", 1e-5f),
                           &mean, &inv);
  y = mul(c, te_reshape(&c->e, y, x.type.rank, x.type.dims), float_in(c, 1));
  if (bv) y = add(c, y, float_in(c, 2));
  if (c->error) return c->error;
  onnx_set_out(c, 0, y);
  onnx_set_out(c, 1, te_reshape(&c->e, mean, x.type.rank, kept));
  return onnx_set_out(c, 2, te_reshape(&c->e, inv, x.type.rank, kept));
}

static tinyml_status_t lower_lrn(onnx_ctx_t *c) {
  te_value_t x = float_in(c, 0);
  int64_t size = onnx_attr_int(c, "size", 0);
  if (!x.id) return c->error;
  if (x.type.rank < 3 || size < 1 || size > 64) return onnx_fail(c, "needs [N, C, ...] and size in 1..64");
  float alpha = onnx_attr_float(c, "alpha", 1e-4f), beta = onnx_attr_float(c, "beta", 0.75f);
  float bias = onnx_attr_float(c, "bias", 1.0f);
  /* Sum of squares over channels c - floor((size-1)/2) .. c + ceil((size-1)/2). */
  int64_t pads[2 * TE_MAX_RANK] = {0}, start[TE_MAX_RANK] = {0};
  pads[2] = (size - 1) / 2;
  pads[3] = size - 1 - pads[2];
  te_value_t sq = mul(c, x, x);
  te_type_t pt = sq.type;
  pt.dims[1] += size - 1;
  te_value_t ops[3] = {sq, te_shape(&c->e, 2 * sq.type.rank, pads), f32(c, 0.0f)};
  te_value_t padded = te_op(&c->e, "tosa.pad", ops, 3, NULL, &pt), sum = {0};
  for (int64_t k = 0; k < size; ++k) {
    start[1] = k;
    te_value_t part = slice(c, padded, start, x.type.dims);
    sum = k ? add(c, sum, part) : part;
  }
  te_value_t base = add(c, mul(c, sum, f32(c, alpha / (float)size)), f32(c, bias));
  te_value_t den = te_binary(&c->e, "tosa.pow", base, f32(c, -beta));
  return onnx_set_out(c, 0, mul(c, x, den));
}

static tinyml_status_t lower_lpnorm(onnx_ctx_t *c) {
  te_value_t x = float_in(c, 0);
  if (!x.id) return c->error;
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", -1), x.type.rank);
  int64_t p = onnx_attr_int(c, "p", 2);
  if (axis < 0) return onnx_fail(c, "invalid axis");
  if (p != 1 && p != 2) return onnx_fail(c, "p = %lld is not supported", (long long)p);
  te_value_t sum = te_reduce(&c->e, "tosa.reduce_sum",
                             p == 1 ? te_unary(&c->e, "tosa.abs", x) : mul(c, x, x), axis);
  /* TOSA has no square root: 1 / sqrt(sum) is its rsqrt. */
  te_value_t inv = te_unary(&c->e, p == 1 ? "tosa.reciprocal" : "tosa.rsqrt", sum);
  /* onnxruntime gives 0 for a zero norm; 0 * inf would be NaN. */
  te_value_t zero_norm = te_binary(&c->e, "tosa.equal", sum, f32(c, 0.0f));
  te_value_t zero = te_splat_f32(&c->e, &x.type, 0.0f);
  return onnx_set_out(c, 0, te_select(&c->e, zero_norm, zero, mul(c, x, inv)));
}

/* ---- Softmax, LogSoftmax, Hardmax ---- */

enum { SOFTMAX, LOG_SOFTMAX, HARDMAX };

static te_value_t hardmax(onnx_ctx_t *c, te_value_t x, int32_t axis) {
  char props[32];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  te_type_t at = te_type(TE_I32, 0, NULL);
  for (uint32_t d = 0; d < x.type.rank; ++d)
    if (d != (uint32_t)axis) at.dims[at.rank++] = x.type.dims[d];
  te_value_t idx = te_op(&c->e, "tosa.argmax", &x, 1, props, &at);
  te_type_t kt = x.type;
  kt.elem = TE_I32;
  kt.dims[axis] = 1;
  idx = te_reshape(&c->e, idx, kt.rank, kt.dims);
  int64_t n = x.type.dims[axis];
  te_value_t iv = onnx_iota_const(c, TE_I32, 1, &n);
  if (!iv.id) return iv;
  iv = along(c, iv, x.type.rank, (uint32_t)axis);
  te_value_t hit = te_binary(&c->e, "tosa.equal", idx, iv);
  return te_select(&c->e, hit, f32(c, 1.0f), f32(c, 0.0f));
}

static te_value_t softmax_axis(onnx_ctx_t *c, te_value_t x, int32_t axis, int kind) {
  if (kind == HARDMAX) return hardmax(c, x, axis);
  te_value_t d = sub(c, x, te_reduce(&c->e, "tosa.reduce_max", x, axis));
  te_value_t ex = te_unary(&c->e, "tosa.exp", d);
  te_value_t sum = te_reduce(&c->e, "tosa.reduce_sum", ex, axis);
  if (kind == LOG_SOFTMAX) return sub(c, d, te_unary(&c->e, "tosa.log", sum));
  return mul(c, ex, te_unary(&c->e, "tosa.reciprocal", sum));
}

/* Before opset 13 the input is coerced to 2-D at `axis` (default 1); from
 * 13 the op runs along `axis` (default -1) alone. */
static tinyml_status_t lower_softmax_kind(onnx_ctx_t *c, int kind) {
  te_value_t x = float_in(c, 0);
  if (!x.id) return c->error;
  if (x.type.rank < 1) return onnx_fail(c, "scalar input is not supported");
  int old = c->opset < 13;
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", old ? 1 : -1), x.type.rank);
  if (axis < 0) return onnx_fail(c, "invalid axis");
  if (!old) return onnx_set_out(c, 0, softmax_axis(c, x, axis, kind));
  int64_t rows = 1;
  for (int32_t d = 0; d < axis; ++d) rows *= x.type.dims[d];
  int64_t fd[2] = {rows, te_numel(&x.type) / rows};
  te_value_t y = softmax_axis(c, te_reshape(&c->e, x, 2, fd), 1, kind);
  return c->error ? c->error : onnx_set_out(c, 0, te_reshape(&c->e, y, x.type.rank, x.type.dims));
}

static tinyml_status_t lower_softmax(onnx_ctx_t *c) { return lower_softmax_kind(c, SOFTMAX); }
static tinyml_status_t lower_log_softmax(onnx_ctx_t *c) { return lower_softmax_kind(c, LOG_SOFTMAX); }
static tinyml_status_t lower_hardmax(onnx_ctx_t *c) { return lower_softmax_kind(c, HARDMAX); }

/* ---- Dropout (inference: the identity) ---- */

static tinyml_status_t lower_dropout(onnx_ctx_t *c) {
  if (c->opset < 7 && onnx_attr_int(c, "is_test", 0) == 0)
    return onnx_fail(c, "is_test = 0 (training) is not supported");
  if (c->opset >= 12 && onnx_input(c, 2)) {
    const onnx_value_t *t = onnx_const_input(c, 2);
    float ratio = 0.5f;
    if (t && t->dtype == ONNX_BOOL && ((const uint8_t *)t->data)[0] && onnx_input(c, 1) &&
        onnx_const_float(c, 1, &ratio) && ratio == 0.0f)
      t = NULL; /* training with ratio 0 keeps every element: the identity */
    else if (!t || t->dtype != ONNX_BOOL || ((const uint8_t *)t->data)[0])
      return onnx_fail(c, "training_mode must be a constant false, or true with a constant ratio "
                          "0: a random dropout mask cannot be reproduced");
  }
  const onnx_value_t *xv = onnx_input(c, 0);
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (onnx_output_count(c) > 1 && c->node->output[1][0]) {
    if (c->opset < 10) return onnx_fail(c, "the mask output before opset 10 is not supported");
    /* An all-true mask, tiled from one element (a constant i1 tensor of
     * rank > 1 would need a nested literal). */
    int64_t one[TE_MAX_RANK];
    for (uint32_t d = 0; d < x.type.rank; ++d) one[d] = 1;
    te_value_t t = te_reshape(&c->e, te_scalar_int(&c->e, TE_I1, 1), x.type.rank, one);
    te_type_t mt = te_type(TE_I1, x.type.rank, x.type.dims);
    te_value_t ops[2] = {t, te_shape(&c->e, x.type.rank, x.type.dims)};
    onnx_set_out(c, 1, te_op(&c->e, "tosa.tile", ops, 2, NULL, &mt));
  }
  return onnx_set_out_typed(c, 0, x, xv->dtype);
}

/* Sum of x over each listed axis, kept as 1. */
static te_value_t sum_axes(onnx_ctx_t *c, te_value_t x, const int64_t *axes, int64_t n) {
  for (int64_t k = 0; k < n; ++k) x = te_reduce(&c->e, "tosa.reduce_sum", x, (int32_t)axes[k]);
  return x;
}

/* As onnx's reference: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), the
 * variance kept at 0 or above where the difference rounds below it. */
static tinyml_status_t lower_mvn(onnx_ctx_t *c) {
  te_value_t x = float_in(c, 0);
  if (!x.id) return c->error;
  int64_t axes[TE_MAX_RANK] = {0, 2, 3}, n = onnx_attr_ints(c, "axes", axes, TE_MAX_RANK);
  if (c->error) return c->error;
  if (n < 0) n = 3;
  uint32_t seen = 0;
  double count = 1;
  for (int64_t k = 0; k < n; ++k) {
    int32_t a = onnx_axis(axes[k], x.type.rank);
    if (a < 0 || (seen >> a & 1)) return onnx_fail(c, "axis %lld is invalid or repeated", (long long)axes[k]);
    seen |= 1u << a;
    axes[k] = a;
    count *= (double)x.type.dims[a];
  }
  te_value_t inv = f32(c, (float)(1.0 / count));
  te_value_t mean = mul(c, sum_axes(c, x, axes, n), inv);
  te_value_t msq = mul(c, sum_axes(c, mul(c, x, x), axes, n), inv);
  te_value_t var = te_clamp_f32(&c->e, sub(c, msq, mul(c, mean, mean)), 0.0f, INFINITY);
  te_value_t sd = te_unary(&c->e, "tosa.reciprocal", te_unary(&c->e, "tosa.rsqrt", var));
  return onnx_set_out(c, 0, te_divf(&c->e, sub(c, x, mean), add(c, sd, f32(c, 1e-9f))));
}

const onnx_lowering_t onnx_lowerings_norm[] = {
    {"BatchNormalization", 1, 23, lower_batchnorm},
    {"InstanceNormalization", 1, 23, lower_instancenorm},
    {"LayerNormalization", 17, 23, lower_layernorm},
    {"LRN", 1, 23, lower_lrn},
    {"LpNormalization", 1, 23, lower_lpnorm},
    {"Softmax", 1, 23, lower_softmax},
    {"LogSoftmax", 1, 23, lower_log_softmax},
    {"Hardmax", 1, 23, lower_hardmax},
    {"Dropout", 1, 23, lower_dropout},
    {"MeanVarianceNormalization", 9, 23, lower_mvn},
    {NULL, 0, 0, NULL},
};
