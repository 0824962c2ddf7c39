/* SVDF: TFLite Micro's EvalIntegerSvdfReference step by step, and its
 * float form (EvalFloatSvdfReference: the same steps without the zero
 * points and rescales, and with the fused activation applied).
 *
 * Inputs: x [B, I] int8, weights_feature [F, I] int8, weights_time [F, M]
 * int16 or int8, bias [F / rank] int32, and the state [B, F * M], a variable
 * tensor of weights_time's type (TFLM reads both through one template type).
 * Each invoke shifts every state row left by one, writes the new column
 *   clamp(MBQM(WF . (x - x_zp), m1, s1) + state_zp)
 * at the end, then out = MBQM(bias + sum over rank of WT . (state - state_zp),
 * m2, s2) + out_zp.  The order "add the zero point, then clamp" is upstream's
 * fixed one (tflite-micro PR 3627); the older kernel clamps first and wraps
 * the int8 store.  The zoo's reference outputs cannot tell the two apart.
 * TFLM's integer path ignores the fused activation, and so do we. */
#include <math.h>

#include "../../common/status.h"
#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OPT_SVDF = 6, IN_X = 0, IN_WF = 1, IN_WT = 2, IN_BIAS = 3, IN_STATE = 4 };

typedef struct svdf {
  int64_t batch, inputs, filters, memory, rank, units;
  int activation; /* float only: TFLM's integer path ignores it */
  te_elem_t state_elem;
  int32_t state_min, state_max;
} svdf_t;

static int is_int8_q(const tfl_tensor_t *t) {
  return t && t->type == TFL_INT8 && t->quant.scale_count == 1;
}

static int svdf_shapes(tfl_ctx_t *c, svdf_t *s);

/* The shapes and types TFLM's Prepare accepts, and the sizes they give. */
static int read_svdf(tfl_ctx_t *c, svdf_t *s) {
  const tfl_table_t *o = tfl_options(c, OPT_SVDF);
  const tfl_tensor_t *x = tfl_in(c, IN_X), *wf = tfl_in(c, IN_WF), *wt = tfl_in(c, IN_WT);
  const tfl_tensor_t *st = tfl_in(c, IN_STATE), *b = tfl_in(c, IN_BIAS), *out = tfl_out(c, 0);
  if (!o) return 0;
  int bad = 0;
  s->rank = tfl_table_i32(o, 0, 0, &bad);
  if (bad || !x || !wf || !wt || !st || !out || x->rank != 2 || wf->rank != 2 || wt->rank != 2 ||
      st->rank != 2 || out->rank != 2) {
    tfl_fail(c, "malformed operands or options");
    return 0;
  }
  s->activation = tfl_table_i8(o, 1, 0, &bad);
  if (x->type == TFL_FLOAT32) {
    if (wf->type != TFL_FLOAT32 || wt->type != TFL_FLOAT32 || st->type != TFL_FLOAT32 ||
        out->type != TFL_FLOAT32 || (b && b->type != TFL_FLOAT32)) {
      tfl_fail(c, "hybrid SVDF (FLOAT32 input with %s weights_feature, %s weights_time) is not "
               "supported: TFLite Micro has none", tfl_type_name(wf->type),
               tfl_type_name(wt->type));
      return 0;
    }
    s->state_elem = TE_F32;
    return svdf_shapes(c, s);
  }
  int t16 = wt->type == TFL_INT16 && st->type == TFL_INT16;
  int t8 = wt->type == TFL_INT8 && st->type == TFL_INT8;
  if (!is_int8_q(x) || !is_int8_q(wf) || !is_int8_q(out) || !(t16 || t8) ||
      !tfl_is_quantized(wt) || !tfl_is_quantized(st) || (b && b->type != TFL_INT32)) {
    tfl_fail(c, "unsupported types %s, %s, %s, state %s -> %s (need int8 input, weights_feature "
             "and output, int32 bias, and int16 or int8 weights_time and state alike)",
             tfl_type_name(x->type), tfl_type_name(wf->type), tfl_type_name(wt->type),
             tfl_type_name(st->type), tfl_type_name(out->type));
    return 0;
  }
  s->state_elem = t16 ? TE_I16 : TE_I8;
  tfl_qrange(st, &s->state_min, &s->state_max);
  return svdf_shapes(c, s);
}

static int svdf_shapes(tfl_ctx_t *c, svdf_t *s) {
  const tfl_tensor_t *x = tfl_in(c, IN_X), *wf = tfl_in(c, IN_WF), *wt = tfl_in(c, IN_WT);
  const tfl_tensor_t *st = tfl_in(c, IN_STATE), *b = tfl_in(c, IN_BIAS), *out = tfl_out(c, 0);
  s->batch = x->shape[0];
  s->inputs = x->shape[1];
  s->filters = wf->shape[0];
  s->memory = wt->shape[1];
  s->units = s->rank > 0 ? s->filters / s->rank : 0;
  if (s->rank < 1 || s->filters % s->rank || wf->shape[1] != s->inputs ||
      wt->shape[0] != s->filters || s->memory < 1 || st->shape[0] != s->batch ||
      st->shape[1] != s->filters * s->memory || out->shape[0] != s->batch ||
      out->shape[1] != s->units || (b && (b->rank != 1 || b->shape[0] != s->units))) {
    tfl_fail(c, "inconsistent shapes (rank %lld)", (long long)s->rank);
    return 0;
  }
  return 1;
}

/* TFLM's Prepare computes both effective scales in float, then widens. */
static int multipliers(tfl_ctx_t *c, int32_t m[2], int8_t shift[2]) {
  float in = tfl_scale(tfl_in(c, IN_X)), wf = tfl_scale(tfl_in(c, IN_WF));
  float wt = tfl_scale(tfl_in(c, IN_WT)), st = tfl_scale(tfl_in(c, IN_STATE));
  float out = tfl_scale(tfl_out(c, 0));
  float p1 = in * wf, p2 = st * wt;
  float e[2] = {p1 / st, p2 / out};
  const tfl_tensor_t *b = tfl_in(c, IN_BIAS);
  if (b && fabs((double)tfl_scale(b) - (double)p2) >= 1e-5) {
    tfl_fail(c, "bias scale %g is not state scale * weights_time scale %g", (double)tfl_scale(b),
             (double)p2);
    return 0;
  }
  for (int k = 0; k < 2; ++k) {
    int s;
    if (!tfl_quantize_multiplier((double)e[k], &m[k], &s) || !tfl_tosa_shift(s, &shift[k])) {
      tfl_fail(c, "effective scale %g is out of range", (double)e[k]);
      return 0;
    }
  }
  return 1;
}

/* The new state column: [B, F, 1] of the state type, zero point added
 * before the clamp. */
static te_value_t feature_column(tfl_ctx_t *c, const svdf_t *s, int32_t m, int8_t shift) {
  te_value_t x = tfl_value_in(c, IN_X), wf = tfl_value_in(c, IN_WF);
  if (!x.id || !wf.id) return (te_value_t){0};
  int64_t xd[3] = {1, s->batch, s->inputs}, wd[3] = {1, s->filters, s->inputs};
  int64_t ad[3] = {1, s->batch, s->filters}, cd[3] = {s->batch, s->filters, 1};
  static const int32_t to_cin[3] = {0, 2, 1};
  te_value_t ops[4] = {te_reshape(&c->e, x, 3, xd),
                       te_transpose(&c->e, te_reshape(&c->e, wf, 3, wd), to_cin),
                       te_scalar_int(&c->e, TE_I8, tfl_zero_point(tfl_in(c, IN_X))),
                       te_scalar_int(&c->e, TE_I8, 0)};
  te_type_t at = te_type(TE_I32, 3, ad);
  te_value_t acc = te_op(&c->e, "tosa.matmul", ops, 4, NULL, &at);
  acc = te_rescale(&c->e, acc, TE_I32, &m, &shift, 1, 0, 0, 1, 0, 0);
  acc = te_binary(&c->e, "tosa.add", acc,
                  te_scalar_int(&c->e, TE_I32, tfl_zero_point(tfl_in(c, IN_STATE))));
  acc = te_clamp_int(&c->e, acc, s->state_min, s->state_max);
  return te_reshape(&c->e, te_cast(&c->e, acc, s->state_elem), 3, cd);
}

/* The float form of the new column: WF . x. */
static te_value_t feature_column_f32(tfl_ctx_t *c, const svdf_t *s) {
  te_value_t x = tfl_value_in(c, IN_X), wf = tfl_value_in(c, IN_WF);
  if (!x.id || !wf.id) return (te_value_t){0};
  int64_t xd[3] = {1, s->batch, s->inputs}, wd[3] = {1, s->filters, s->inputs};
  int64_t ad[3] = {1, s->batch, s->filters}, cd[3] = {s->batch, s->filters, 1};
  static const int32_t to_cin[3] = {0, 2, 1};
  te_value_t zero = te_scalar_f32(&c->e, 0.0f);
  te_value_t ops[4] = {te_reshape(&c->e, x, 3, xd),
                       te_transpose(&c->e, te_reshape(&c->e, wf, 3, wd), to_cin), zero, zero};
  te_type_t at = te_type(TE_F32, 3, ad);
  return te_reshape(&c->e, te_op(&c->e, "tosa.matmul", ops, 4, NULL, &at), 3, cd);
}

/* The state after this invoke, [B, F, M]: drop the oldest column, append
 * the new one. */
static te_value_t shifted_state(tfl_ctx_t *c, const svdf_t *s, te_value_t column) {
  te_value_t st = tfl_value_in(c, IN_STATE);
  if (!st.id || !column.id) return (te_value_t){0};
  int64_t sd[3] = {s->batch, s->filters, s->memory};
  st = te_reshape(&c->e, st, 3, sd);
  if (s->memory == 1) return column;
  int64_t start[3] = {0, 0, 1}, size[3] = {s->batch, s->filters, s->memory - 1};
  te_type_t kt = te_type(s->state_elem, 3, size);
  te_value_t sl[3] = {st, te_shape(&c->e, 3, start), te_shape(&c->e, 3, size)};
  te_value_t ops[2] = {te_op(&c->e, "tosa.slice", sl, 3, NULL, &kt), column};
  te_type_t t = te_type(s->state_elem, 3, sd);
  return te_op(&c->e, "tosa.concat", ops, 2, "axis = 2 : i32", &t);
}

/* WT . (state - zp) per filter, then summed over each unit's rank filters
 * and the bias added: the i32 accumulator [B, U]. */
static te_value_t time_and_rank(tfl_ctx_t *c, const svdf_t *s, te_value_t state) {
  te_value_t wt = tfl_value_in(c, IN_WT);
  if (!wt.id) return (te_value_t){0};
  int64_t wd[3] = {1, s->filters, s->memory};
  te_value_t w = te_reshape(&c->e, wt, 3, wd), v = state;
  if (s->state_elem != TE_F32) {
    w = te_cast(&c->e, w, TE_I32);
    v = te_binary(&c->e, "tosa.sub", te_cast(&c->e, state, TE_I32),
                  te_scalar_int(&c->e, TE_I32, tfl_zero_point(tfl_in(c, IN_STATE))));
  }
  te_value_t per_filter = te_reduce(&c->e, "tosa.reduce_sum", te_mul(&c->e, v, w, 0), 2);
  int64_t rd[3] = {s->batch, s->units, s->rank}, od[2] = {s->batch, s->units};
  te_value_t acc = te_reduce(&c->e, "tosa.reduce_sum", te_reshape(&c->e, per_filter, 3, rd), 2);
  acc = te_reshape(&c->e, acc, 2, od);
  if (!tfl_in(c, IN_BIAS)) return acc;  /* TFLM needs a bias; TFLite adds none */
  te_value_t bias = tfl_value_in(c, IN_BIAS);
  return bias.id ? te_binary(&c->e, "tosa.add", acc, bias) : bias;
}

/* TFLM's ActivationValFloat: the clamps, TANH and SIGMOID (SIGN_BIT, which
 * no converter emits, is refused). */
static te_value_t activation_f32(tfl_ctx_t *c, const svdf_t *s, te_value_t y) {
  if (s->activation == 4) return te_unary(&c->e, "tosa.tanh", y);
  if (s->activation == 6) return te_unary(&c->e, "tosa.sigmoid", y);
  return tfl_activation(c, y, tfl_out(c, 0), s->activation);
}

static tinyml_status_t lower_svdf_f32(tfl_ctx_t *c, const svdf_t *s) {
  te_value_t state = shifted_state(c, s, feature_column_f32(c, s));
  te_value_t acc = state.id ? time_and_rank(c, s, state) : state;
  te_value_t y = acc.id ? activation_f32(c, s, acc) : acc;
  if (!y.id) return c->error;
  TINYML_RETURN_IF_ERROR(tfl_set_state(c, IN_STATE, state));
  return tfl_set_out(c, 0, y);
}

tinyml_status_t tfl_lower_svdf(tfl_ctx_t *c) {
  svdf_t s;
  int32_t m[2];
  int8_t shift[2];
  if (!read_svdf(c, &s)) return c->error;
  if (s.state_elem == TE_F32) return lower_svdf_f32(c, &s);
  if (!multipliers(c, m, shift)) return c->error;
  te_value_t state = shifted_state(c, &s, feature_column(c, &s, m[0], shift[0]));
  if (!state.id) return c->error;
  te_value_t acc = time_and_rank(c, &s, state);
  if (!acc.id) return c->error;
  te_value_t y = te_rescale(&c->e, acc, TE_I8, &m[1], &shift[1], 1, 0,
                            tfl_zero_point(tfl_out(c, 0)), 1, 0, 0);
  TINYML_RETURN_IF_ERROR(tfl_set_state(c, IN_STATE, state));
  return tfl_set_out(c, 0, y);
}
