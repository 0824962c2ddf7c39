/* Float layers beyond the convolutions: PRELU, LOG_SOFTMAX and
 * L2_NORMALIZATION, each as TFLite's float reference kernel computes
 * it (BATCH_MATMUL, float and integer, is tfl_lower_batch_matmul.c).
 * Their integer forms live beside the other integer kernels (PRELU in
 * tfl_lower_q8_unary.c, L2_NORMALIZATION in tfl_lower_q8_math.c,
 * LOG_SOFTMAX in tfl_lower_log_softmax_q.c). */
#include "../../common/status.h"
#include "tfl_lower.h"

enum { OP_L2_NORMALIZATION = 11, OP_LOG_SOFTMAX = 50, OP_PRELU = 54 };

static tinyml_status_t need_float(tfl_ctx_t *c, uint32_t inputs) {
  for (uint32_t i = 0; i < inputs; ++i)
    if (!tfl_in(c, i) || tfl_in(c, i)->type != TFL_FLOAT32)
      return tfl_fail(c, "input %u: only FLOAT32 so far", i);
  if (!tfl_out(c, 0) || tfl_out(c, 0)->type != TFL_FLOAT32)
    return tfl_fail(c, "the output: only FLOAT32 so far");
  return TINYML_OK;
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
