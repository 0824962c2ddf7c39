/* Float layers beyond the convolutions: BATCH_MATMUL, PRELU, LOG_SOFTMAX
 * and L2_NORMALIZATION, each as TFLite's float reference kernel computes
 * it.  int8 PRELU is in tfl_lower_q8_unary.c; the other quantised forms
 * are refused by name until they get TFLite's integer kernels. */
#include "../../common/status.h"
#include "tfl_lower.h"

enum { OP_L2_NORMALIZATION = 11, OP_LOG_SOFTMAX = 50, OP_PRELU = 54, OP_BATCH_MATMUL = 126 };
enum { OPT_BATCH_MATMUL = 101 };

static tinyml_status_t need_float(tfl_ctx_t *c, uint32_t inputs) {
  for (uint32_t i = 0; i < inputs; ++i)
    if (!tfl_in(c, i) || tfl_in(c, i)->type != TFL_FLOAT32)
      return tfl_fail(c, "input %u: only FLOAT32 so far", i);
  if (!tfl_out(c, 0) || tfl_out(c, 0)->type != TFL_FLOAT32)
    return tfl_fail(c, "the output: only FLOAT32 so far");
  return TINYML_OK;
}

/* The last two axes of x swapped. */
static te_value_t swap_last(tfl_ctx_t *c, te_value_t x) {
  int32_t perm[TE_MAX_RANK];
  for (uint32_t d = 0; d < x.type.rank; ++d) perm[d] = (int32_t)d;
  perm[x.type.rank - 2] = (int32_t)x.type.rank - 1;
  perm[x.type.rank - 1] = (int32_t)x.type.rank - 2;
  return te_transpose(&c->e, x, perm);
}

/* x's batch axes broadcast to `batch` and folded into one: [B, rows, cols]. */
static te_value_t as_batches(tfl_ctx_t *c, te_value_t x, const int64_t *batch, uint32_t nb,
                             int64_t b) {
  int64_t dims[TE_MAX_RANK];
  for (uint32_t d = 0; d < nb; ++d) dims[d] = batch[d];
  dims[nb] = x.type.dims[x.type.rank - 2];
  dims[nb + 1] = x.type.dims[x.type.rank - 1];
  te_type_t full = te_type(TE_F32, nb + 2, dims);
  if (te_numel(&x.type) != te_numel(&full)) /* adding zeros broadcasts the batch axes */
    x = te_binary(&c->e, "tosa.add", x, te_splat_f32(&c->e, &full, 0.0f));
  return te_reshape(&c->e, x, 3, (int64_t[3]){b, dims[nb], dims[nb + 1]});
}

tinyml_status_t tfl_lower_batch_matmul(tfl_ctx_t *c) {
  if (tfl_in(c, 0) && tfl_in(c, 0)->type != TFL_FLOAT32) return tfl_lower_batch_matmul_q(c);
  TINYML_RETURN_IF_ERROR(need_float(c, 2));
  const tfl_table_t *o = tfl_options(c, OPT_BATCH_MATMUL);
  const tfl_tensor_t *out = tfl_out(c, 0);
  int bad = 0;
  if (!o) return c->error;
  int adj_x = tfl_table_bool(o, 0, 0, &bad), adj_y = tfl_table_bool(o, 1, 0, &bad);
  te_type_t t;
  if (bad || !tfl_te_type(out, &t) || t.rank < 2) return tfl_fail(c, "malformed options or output");
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  if (x.type.rank < 2 || y.type.rank < 2) return tfl_fail(c, "inputs need rank 2 or more");
  if (adj_x) x = swap_last(c, x);
  if (adj_y) y = swap_last(c, y);
  uint32_t nb = t.rank - 2;
  int64_t b = 1, m = t.dims[nb], n = t.dims[nb + 1], k = x.type.dims[x.type.rank - 1];
  for (uint32_t d = 0; d < nb; ++d) b *= t.dims[d];
  if (x.type.dims[x.type.rank - 2] != m || y.type.dims[y.type.rank - 1] != n ||
      y.type.dims[y.type.rank - 2] != k || x.type.rank > t.rank || y.type.rank > t.rank)
    return tfl_fail(c, "the inputs' shapes do not multiply to the output's");
  te_value_t zero = te_scalar_f32(&c->e, 0.0f);
  te_value_t ops[4] = {as_batches(c, x, t.dims, nb, b), as_batches(c, y, t.dims, nb, b), zero,
                       zero};
  te_type_t r = te_type(TE_F32, 3, (int64_t[3]){b, m, n});
  return tfl_set_out(c, 0, te_reshape(&c->e, te_op(&c->e, "tosa.matmul", ops, 4, NULL, &r),
                                      t.rank, t.dims));
}

tinyml_status_t tfl_lower_prelu(tfl_ctx_t *c) {
  if (tfl_in(c, 0) && tfl_in(c, 0)->type != TFL_FLOAT32) return tfl_lower_prelu_q8(c);
  TINYML_RETURN_IF_ERROR(need_float(c, 2));
  te_value_t x = tfl_value_in(c, 0), alpha = tfl_value_in(c, 1);
  if (!x.id || !alpha.id) return c->error;
  te_value_t pos = te_binary(&c->e, "tosa.greater_equal", x, te_scalar_f32(&c->e, 0.0f));
  return tfl_set_out(c, 0, te_select(&c->e, pos, x, te_mul(&c->e, x, alpha, 0)));
}

/* Over the last axis: TFLite's LogSoftmax (x - max - log(sum(exp(x -
 * max)))) and L2Normalization (x / max(sqrt(sum(x^2)), 1e-6)). */
tinyml_status_t tfl_lower_last_axis_norm(tfl_ctx_t *c) {
  if (c->op->builtin_code == OP_L2_NORMALIZATION && tfl_out(c, 0) && tfl_out(c, 0)->type == TFL_INT8)
    return tfl_lower_l2norm_q8(c); /* tfl_lower_q8_math.c */
  if (c->op->builtin_code == OP_LOG_SOFTMAX && tfl_in(c, 0) && tfl_in(c, 0)->type == TFL_INT8)
    return tfl_lower_log_softmax_q8(c); /* tfl_lower_log_softmax_q.c */
  TINYML_RETURN_IF_ERROR(need_float(c, 1));
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  if (x.type.rank < 1) return tfl_fail(c, "the input needs rank 1 or more");
  int32_t last = (int32_t)x.type.rank - 1;
  te_t *e = &c->e;
  if (c->op->builtin_code == OP_LOG_SOFTMAX) {
    te_value_t d = te_binary(e, "tosa.sub", x, te_reduce(e, "tosa.reduce_max", x, last));
    te_value_t s = te_reduce(e, "tosa.reduce_sum", te_unary(e, "tosa.exp", d), last);
    return tfl_set_out(c, 0, te_binary(e, "tosa.sub", d, te_unary(e, "tosa.log", s)));
  }
  te_value_t s = te_reduce(e, "tosa.reduce_sum", te_mul(e, x, x, 0), last);
  te_value_t norm = te_binary(e, "tosa.maximum", te_unary(e, "tosa.reciprocal",
                                                          te_unary(e, "tosa.rsqrt", s)),
                              te_scalar_f32(e, 1e-6f));
  return tfl_set_out(c, 0, te_divf(e, x, norm));
}
