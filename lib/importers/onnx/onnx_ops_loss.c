/* ONNX lowerings: loss family (NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss).  See onnx_lower.h for the contract.
 *
 * The target is a run-time tensor of class indices.  The class is selected
 * by comparing the target with an iota over the classes (a one-hot mask)
 * and summing the masked values over C, not by a gather: a target equal to
 * ignore_index may lie outside [0, C), and a gather would read out of
 * bounds there.  The sum adds zeros to one value, so it is exact.
 *
 * "mean" is the weighted mean of ONNX's function body: the sum of the
 * losses over the sum of the weights of the targets not ignored (1 each
 * without a weight input).  When every target is ignored that is 0 / 0, a
 * NaN, as in the ONNX reference and the function body. */
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_const_util.h"
#include "onnx_elt_util.h"
#include "onnx_lower.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_args {
  te_value_t x;       /* [N, C, d1..dk] f32 (log-probabilities for NLL) */
  te_value_t target;  /* [N, d1..dk] i32 or i64 */
  te_value_t weight;  /* [C] f32, or id 0 */
  int has_ignore;     /* ignore_index given, and representable in the target type */
  int64_t ignore;
  int reduction;
} loss_args_t;

static int parse_reduction(onnx_ctx_t *c, int *out) {
  char buf[16];
  const char *r = onnx_attr_string(c, "reduction", "mean", buf, sizeof buf);
  if (strcmp(r, "none") == 0) *out = RED_NONE;
  else if (strcmp(r, "sum") == 0) *out = RED_SUM;
  else if (strcmp(r, "mean") == 0) *out = RED_MEAN;
  else return onnx_fail(c, "reduction '%s' is not supported", r), 0;
  return 1;
}

/* A constant target must hold classes in [0, C) or ignore_index: any other
 * value is undefined in ONNX (onnxruntime rejects it), so it is refused
 * here; a run-time one cannot be checked and selects no class. */
static int check_const_target(onnx_ctx_t *c, const loss_args_t *a, int64_t classes) {
  const onnx_value_t *t = onnx_const_input(c, 1);
  if (!t) return 1;
  int64_t n = onnx_numel(t->rank, t->dims);
  for (int64_t k = 0; k < n; ++k) {
    int64_t v;
    if (t->dtype == ONNX_INT64) memcpy(&v, (const uint8_t *)t->data + 8 * k, 8);
    else { int32_t w; memcpy(&w, (const uint8_t *)t->data + 4 * k, 4); v = w; }
    if ((a->has_ignore && v == a->ignore) || (v >= 0 && v < classes)) continue;
    return onnx_fail(c, "target element %lld is %lld, outside [0, %lld)", (long long)k,
                     (long long)v, (long long)classes), 0;
  }
  return 1;
}

static int check_shapes(onnx_ctx_t *c, const onnx_value_t *x, const onnx_value_t *t,
                        const onnx_value_t *w) {
  if (x->rank < 2) return onnx_fail(c, "input must be [N, C, d1..dk], got rank %u", x->rank), 0;
  if (t->rank != x->rank - 1) return onnx_fail(c, "target must have rank %u", x->rank - 1), 0;
  for (uint32_t d = 0; d < t->rank; ++d)
    if (t->dims[d] != x->dims[d ? d + 1 : 0])
      return onnx_fail(c, "target dim %u does not match the input's", d), 0;
  if (onnx_numel(x->rank, x->dims) == 0) return onnx_fail(c, "empty inputs are not supported"), 0;
  if (w && (w->rank != 1 || w->dims[0] != x->dims[1]))
    return onnx_fail(c, "weight must be [C] = [%lld]", (long long)x->dims[1]), 0;
  return 1;
}

static int read_args(onnx_ctx_t *c, loss_args_t *a) {
  const onnx_value_t *x = onnx_input(c, 0), *t = onnx_input(c, 1), *w = onnx_input(c, 2);
  memset(a, 0, sizeof *a);
  if (!x || !t) return onnx_fail(c, "input %d is missing", x ? 1 : 0), 0;
  if (x->dtype != ONNX_FLOAT || (w && w->dtype != ONNX_FLOAT))
    return onnx_fail(c, "input type %s is not supported (FLOAT only)",
                     onnx_dtype_name(x->dtype != ONNX_FLOAT ? x->dtype : w->dtype)), 0;
  if (t->dtype != ONNX_INT64 && t->dtype != ONNX_INT32)
    return onnx_fail(c, "target type %s is not supported", onnx_dtype_name(t->dtype)), 0;
  if (!check_shapes(c, x, t, w) || !parse_reduction(c, &a->reduction)) return 0;
  a->ignore = onnx_attr_int(c, "ignore_index", 0);
  /* An int32 target never equals an ignore_index outside its range. */
  a->has_ignore = onnx_attr(c, "ignore_index") &&
                  (t->dtype == ONNX_INT64 || (a->ignore >= INT32_MIN && a->ignore <= INT32_MAX));
  if (!check_const_target(c, a, x->dims[1])) return 0;
  a->x = onnx_in(c, 0);
  a->target = onnx_in(c, 1);
  if (w) a->weight = onnx_in(c, 2);
  return a->x.id && a->target.id && (!w || a->weight.id);
}

/* ---- emit helpers ---- */

/* [C] values placed on axis 1 of a tensor of `rank`: [1, C, 1, ...]. */
static te_value_t on_class_axis(onnx_ctx_t *c, te_value_t v, uint32_t rank) {
  int64_t dims[TE_MAX_RANK];
  for (uint32_t d = 0; d < rank; ++d) dims[d] = 1;
  dims[1] = v.type.dims[0];
  return te_reshape(&c->e, v, rank, dims);
}

/* The target as [N, 1, d1..dk], so it broadcasts against the classes. */
static te_value_t target_nc(onnx_ctx_t *c, te_value_t t) {
  int64_t dims[TE_MAX_RANK];
  dims[0] = t.type.dims[0];
  dims[1] = 1;
  for (uint32_t d = 1; d < t.type.rank; ++d) dims[d + 1] = t.type.dims[d];
  return te_reshape(&c->e, t, t.type.rank + 1, dims);
}

/* i1 [N, C, d1..dk]: true where the class is the target. */
static te_value_t one_hot(onnx_ctx_t *c, te_value_t t_nc, int64_t classes) {
  te_value_t iv = onnx_iota_const(c, t_nc.type.elem, 1, &classes);
  if (!iv.id) return iv;
  return te_binary(&c->e, "tosa.equal", t_nc, on_class_axis(c, iv, t_nc.type.rank));
}

/* sum over C of (hit ? v : 0), [N, 1, d1..dk]. */
static te_value_t pick(onnx_ctx_t *c, te_value_t hit, te_value_t v) {
  te_value_t zero = kf(c, hit, 0.0f);
  return te_reduce(&c->e, "tosa.reduce_sum", te_select(&c->e, hit, v, zero), 1);
}

static te_value_t sum_all(onnx_ctx_t *c, te_value_t x) {
  for (uint32_t d = 0; d < x.type.rank; ++d) x = te_reduce(&c->e, "tosa.reduce_sum", x, (int32_t)d);
  int64_t none[1] = {1};
  return te_reshape(&c->e, x, 0, none);
}

/* ---- the loss ---- */

/* The loss of log-probabilities `logp` [N, C, d1..dk], reduced as asked. */
static te_value_t nll(onnx_ctx_t *c, const loss_args_t *a, te_value_t logp) {
  uint32_t rank = logp.type.rank;
  te_value_t t_nc = target_nc(c, a->target);
  te_value_t hit = one_hot(c, t_nc, logp.type.dims[1]);
  if (!hit.id) return hit;
  te_value_t loss = neg(c, pick(c, hit, logp)), w = {0};
  if (a->weight.id) {
    w = pick(c, hit, on_class_axis(c, a->weight, rank));
    loss = te_mul(&c->e, loss, w, 0);
  }
  if (a->has_ignore) {
    te_type_t it = ones_type(t_nc, t_nc.type.elem);
    te_value_t ii = te_splat_int(&c->e, &it, a->ignore);
    te_value_t keep = te_unary(&c->e, "tosa.logical_not", te_binary(&c->e, "tosa.equal", t_nc, ii));
    te_value_t zero = kf(c, loss, 0.0f);
    loss = te_select(&c->e, keep, loss, zero);
    w = te_select(&c->e, keep, w.id ? w : kf(c, loss, 1.0f), zero);
  }
  if (a->reduction == RED_NONE)
    return te_reshape(&c->e, loss, a->target.type.rank, a->target.type.dims);
  te_value_t total = sum_all(c, loss);
  if (a->reduction == RED_SUM) return total;
  if (!w.id) return te_divf(&c->e, total, kf(c, total, (float)te_numel(&a->target.type)));
  return te_divf(&c->e, total, sum_all(c, w));
}

static tinyml_status_t lower_nll(onnx_ctx_t *c) {
  loss_args_t a;
  if (!read_args(c, &a)) return c->error ? c->error : onnx_fail(c, "bad operands");
  te_value_t y = nll(c, &a, a.x);
  return c->error ? c->error : onnx_set_out(c, 0, y);
}

/* x - max - log(sum(exp(x - max))) over the classes, so large logits do
 * not overflow exp. */
static te_value_t log_softmax_c(onnx_ctx_t *c, te_value_t x) {
  te_value_t d = te_binary(&c->e, "tosa.sub", x, te_reduce(&c->e, "tosa.reduce_max", x, 1));
  te_value_t s = te_reduce(&c->e, "tosa.reduce_sum", te_unary(&c->e, "tosa.exp", d), 1);
  return te_binary(&c->e, "tosa.sub", d, te_unary(&c->e, "tosa.log", s));
}

static tinyml_status_t lower_sce(onnx_ctx_t *c) {
  loss_args_t a;
  if (!read_args(c, &a)) return c->error ? c->error : onnx_fail(c, "bad operands");
  te_value_t logp = log_softmax_c(c, a.x);
  te_value_t y = nll(c, &a, logp);
  if (c->error) return c->error;
  if (onnx_output_count(c) > 1 && c->node->output[1][0]) {
    tinyml_status_t s = onnx_set_out(c, 1, logp);
    if (s) return s;
  }
  return onnx_set_out(c, 0, y);
}

const onnx_lowering_t onnx_lowerings_loss[] = {
    {"NegativeLogLikelihoodLoss", 12, 23, lower_nll},
    {"SoftmaxCrossEntropyLoss", 12, 23, lower_sce},
    {NULL, 0, 0, NULL},
};
