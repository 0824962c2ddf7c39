/* ONNX lowerings: the opset-23 Attention operator, following
 * onnx/reference/ops/op_attention.py (scaled dot-product attention with
 * optional mask, causal bias, KV cache, grouped-query heads and softcap).
 * See onnx_lower.h for the contract. */
#include "onnx_nn_util.h"

/* The shapes of one Attention node, all in the 4-D [B, heads, seq, size]
 * layout. */
typedef struct attn_dims {
  int64_t batch, q_heads, kv_heads, q_len, kv_len, past, total, head, v_head;
  int three_d;
} attn_dims_t;

/* [B, S, H*D] → [B, H, S, D]. */
static te_value_t split_heads(onnx_ctx_t *c, te_value_t x, int64_t heads) {
  int64_t d[4] = {x.type.dims[0], x.type.dims[1], heads, x.type.dims[2] / heads};
  static const int32_t perm[4] = {0, 2, 1, 3};
  return te_transpose(&c->e, te_reshape(&c->e, x, 4, d), perm);
}

/* [B, H, M, K] x [B, H, K, N] → [B, H, M, N] as one batched tosa.matmul. */
static te_value_t bmm(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  int64_t n = a.type.dims[0] * a.type.dims[1];
  int64_t ad[3] = {n, a.type.dims[2], a.type.dims[3]}, bd[3] = {n, b.type.dims[2], b.type.dims[3]};
  int64_t od[3] = {n, a.type.dims[2], b.type.dims[3]};
  te_type_t t = te_type(TE_F32, 3, od);
  te_value_t ops[4] = {te_reshape(&c->e, a, 3, ad), te_reshape(&c->e, b, 3, bd), f32(c, 0.0f),
                       f32(c, 0.0f)};
  te_value_t y = te_op(&c->e, "tosa.matmul", ops, 4, NULL, &t);
  int64_t yd[4] = {a.type.dims[0], a.type.dims[1], a.type.dims[2], b.type.dims[3]};
  return te_reshape(&c->e, y, 4, yd);
}

/* Each KV head repeated r times in place ([h0, h0, h1, h1, ...]), as
 * np.repeat along the heads axis. */
static te_value_t repeat_heads(onnx_ctx_t *c, te_value_t x, int64_t r) {
  if (r == 1) return x;
  int64_t b = x.type.dims[0], h = x.type.dims[1], s = x.type.dims[2], d = x.type.dims[3];
  int64_t d4[4] = {b, h, 1, s * d}, mult[4] = {1, 1, r, 1}, tiled[4] = {b, h, r, s * d};
  te_type_t t = te_type(TE_F32, 4, tiled);
  te_value_t ops[2] = {te_reshape(&c->e, x, 4, d4), te_shape(&c->e, 4, mult)};
  te_value_t y = te_op(&c->e, "tosa.tile", ops, 2, NULL, &t);
  int64_t out[4] = {b, h * r, s, d};
  return te_reshape(&c->e, y, 4, out);
}

static int read_dims(onnx_ctx_t *c, attn_dims_t *a) {
  const onnx_value_t *q = onnx_input(c, 0), *k = onnx_input(c, 1), *v = onnx_input(c, 2);
  if (!q || !k || !v) return onnx_fail(c, "Q, K and V are required"), 0;
  for (uint32_t i = 0; i < 3; ++i) {
    const onnx_value_t *x = onnx_input(c, i);
    if (x->dtype != ONNX_FLOAT)
      return onnx_fail(c, "input %u: type %s is not supported (FLOAT only)", i,
                       onnx_dtype_name(x->dtype)), 0;
    if (x->rank != q->rank || (x->rank != 3 && x->rank != 4) || x->dims[0] != q->dims[0])
      return onnx_fail(c, "Q, K and V must all be 3-D or all 4-D with one batch"), 0;
  }
  a->three_d = q->rank == 3;
  a->batch = q->dims[0];
  if (a->three_d) {
    a->q_heads = onnx_attr_int(c, "q_num_heads", 0);
    a->kv_heads = onnx_attr_int(c, "kv_num_heads", 0);
    if (a->q_heads < 1 || a->kv_heads < 1)
      return onnx_fail(c, "3-D inputs need q_num_heads and kv_num_heads"), 0;
    if (q->dims[2] % a->q_heads || k->dims[2] % a->kv_heads || v->dims[2] % a->kv_heads)
      return onnx_fail(c, "hidden sizes must divide by the numbers of heads"), 0;
    a->q_len = q->dims[1];
    a->kv_len = k->dims[1];
    a->head = q->dims[2] / a->q_heads;
    a->v_head = v->dims[2] / a->kv_heads;
    if (k->dims[2] / a->kv_heads != a->head || v->dims[1] != a->kv_len)
      return onnx_fail(c, "K must have Q's head size and V K's sequence length"), 0;
  } else {
    a->q_heads = q->dims[1];
    a->kv_heads = k->dims[1];
    a->q_len = q->dims[2];
    a->kv_len = k->dims[2];
    a->head = q->dims[3];
    a->v_head = v->dims[3];
    if (k->dims[3] != a->head || v->dims[1] != a->kv_heads || v->dims[2] != a->kv_len)
      return onnx_fail(c, "K must have Q's head size and V K's heads and sequence length"), 0;
  }
  if (a->q_heads % a->kv_heads)
    return onnx_fail(c, "q heads (%lld) must be a multiple of kv heads (%lld)",
                     (long long)a->q_heads, (long long)a->kv_heads), 0;
  return 1;
}

/* Checks past_key / past_value ([B, kv_heads, P, size]); both or neither. */
static int read_past(onnx_ctx_t *c, attn_dims_t *a) {
  const onnx_value_t *pk = onnx_input(c, 4), *pv = onnx_input(c, 5);
  a->past = 0;
  if (!pk && !pv) return 1;
  if (!pk || !pv) return onnx_fail(c, "past_key and past_value go together"), 0;
  if (pk->dtype != ONNX_FLOAT || pv->dtype != ONNX_FLOAT || pk->rank != 4 || pv->rank != 4 ||
      pk->dims[0] != a->batch || pk->dims[1] != a->kv_heads || pk->dims[3] != a->head ||
      pv->dims[0] != a->batch || pv->dims[1] != a->kv_heads || pv->dims[3] != a->v_head ||
      pv->dims[2] != pk->dims[2])
    return onnx_fail(c, "past_key / past_value must be FLOAT [B, kv_heads, P, head size]"), 0;
  a->past = pk->dims[2];
  return 1;
}

/* Q, K or V in the 4-D layout. */
static te_value_t heads_in(onnx_ctx_t *c, uint32_t i, const attn_dims_t *a, int64_t heads) {
  te_value_t x = float_in(c, i);
  return x.id && a->three_d ? split_heads(c, x, heads) : x;
}

/* The causal bias [Sq, T]: key j is seen by query i iff j <= i + past. */
static te_value_t causal_bias(onnx_ctx_t *c, const attn_dims_t *a) {
  float *b = alloc_floats(c, a->q_len * a->total);
  if (!b) return (te_value_t){0};
  for (int64_t i = 0; i < a->q_len; ++i)
    for (int64_t j = 0; j < a->total; ++j) b[i * a->total + j] = j <= i + a->past ? 0.0f : -INFINITY;
  int64_t d[2] = {a->q_len, a->total};
  return const_floats_value(c, b, 2, d);
}

/* attn_mask as an additive bias (bool: true 0, false -inf), its last axis
 * padded with -inf up to T, broadcastable to [B, q_heads, Sq, T]. */
static te_value_t mask_bias(onnx_ctx_t *c, const attn_dims_t *a) {
  const onnx_value_t *m = onnx_input(c, 3);
  int64_t want[4] = {a->batch, a->q_heads, a->q_len, a->total};
  if (m->rank < 2 || m->rank > 4 || m->dims[m->rank - 1] > a->total || m->dims[m->rank - 1] < 1)
    return onnx_fail(c, "attn_mask must be 2-D to 4-D with at most %lld keys",
                     (long long)a->total), (te_value_t){0};
  for (uint32_t d = 0; d + 1 < m->rank; ++d) {
    int64_t w = want[4 - m->rank + d];
    if (m->dims[d] != 1 && m->dims[d] != w)
      return onnx_fail(c, "attn_mask does not broadcast to [B, heads, Sq, T]"), (te_value_t){0};
  }
  if (m->dtype != ONNX_BOOL && m->dtype != ONNX_FLOAT)
    return onnx_fail(c, "attn_mask type %s is not supported", onnx_dtype_name(m->dtype)),
           (te_value_t){0};
  te_value_t x = onnx_in(c, 3);
  if (!x.id) return x;
  if (m->dtype == ONNX_BOOL) x = te_select(&c->e, x, f32(c, 0.0f), f32(c, -INFINITY));
  int64_t pad = a->total - m->dims[m->rank - 1];
  if (pad > 0) {
    int64_t pads[2 * TE_MAX_RANK] = {0};
    pads[2 * (m->rank - 1) + 1] = pad;
    te_type_t t = x.type;
    t.dims[m->rank - 1] = a->total;
    te_value_t ops[3] = {x, te_shape(&c->e, 2 * m->rank, pads), f32(c, -INFINITY)};
    x = te_op(&c->e, "tosa.pad", ops, 3, NULL, &t);
  }
  return x;
}

/* The combined additive bias (mask and causal), or id 0 when there is
 * none; an error is recorded on failure. */
static te_value_t attn_bias(onnx_ctx_t *c, const attn_dims_t *a) {
  te_value_t bias = {0};
  if (onnx_input(c, 3)) {
    bias = mask_bias(c, a);
    if (!bias.id) return bias;
  }
  if (onnx_attr_int(c, "is_causal", 0)) {
    te_value_t cb = causal_bias(c, a);
    bias = bias.id ? add(c, bias, cb) : cb;
  }
  return bias;
}

/* Softmax along the last axis (as the reference: exp(x - max) / sum);
 * rows whose bias is all -inf come out 0, as the reference's guard makes
 * them, where the plain formula gives NaN. */
static te_value_t guarded_softmax(onnx_ctx_t *c, te_value_t x, te_value_t bias) {
  int32_t ax = (int32_t)x.type.rank - 1;
  te_value_t ex = te_unary(&c->e, "tosa.exp", sub(c, x, te_reduce(&c->e, "tosa.reduce_max", x, ax)));
  te_value_t sum = te_reduce(&c->e, "tosa.reduce_sum", ex, ax);
  te_value_t p = te_divf(&c->e, ex, sum);
  if (!bias.id) return p;
  te_value_t ninf = te_binary(&c->e, "tosa.equal", bias, f32(c, -INFINITY));
  te_value_t all = te_reduce(&c->e, "tosa.reduce_all", ninf, (int32_t)bias.type.rank - 1);
  return te_select(&c->e, all, f32(c, 0.0f), p);
}

/* The scores Q·K^T with the scale split as sqrt(scale) on each side (as
 * the reference), then softcap. */
static te_value_t scores(onnx_ctx_t *c, te_value_t q, te_value_t k, const attn_dims_t *a) {
  double scale = 1.0 / sqrt((double)a->head);
  if (onnx_attr(c, "scale")) scale = onnx_attr_float(c, "scale", 1.0f);
  te_value_t s = f32(c, (float)sqrt(scale));
  static const int32_t perm[4] = {0, 1, 3, 2};
  te_value_t qk = bmm(c, mul(c, q, s), te_transpose(&c->e, mul(c, k, s), perm));
  float cap = onnx_attr_float(c, "softcap", 0.0f);
  if (cap > 0.0f) {
    te_value_t y = te_unary(&c->e, "tosa.tanh", te_divf(&c->e, qk, f32(c, cap)));
    qk = mul(c, y, f32(c, cap));
  }
  return qk;
}

/* [B, H, Sq, Dv] back to the 3-D [B, Sq, H*Dv] when the inputs were 3-D. */
static te_value_t merge_heads(onnx_ctx_t *c, te_value_t y, const attn_dims_t *a) {
  if (!a->three_d) return y;
  static const int32_t perm[4] = {0, 2, 1, 3};
  int64_t d[3] = {a->batch, a->q_len, a->q_heads * a->v_head};
  return te_reshape(&c->e, te_transpose(&c->e, y, perm), 3, d);
}

static int check_attrs(onnx_ctx_t *c) {
  int64_t mode = onnx_attr_int(c, "qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return onnx_fail(c, "qk_matmul_output_mode %lld is invalid", (long long)mode), 0;
  if (onnx_attr(c, "softmax_precision") && onnx_attr_int(c, "softmax_precision", 1) != ONNX_FLOAT)
    return onnx_fail(c, "softmax_precision other than FLOAT is not supported"), 0;
  if (onnx_input(c, 6)) return onnx_fail(c, "nonpad_kv_seqlen is not supported"), 0;
  return 1;
}

static tinyml_status_t lower_attention(onnx_ctx_t *c) {
  attn_dims_t a;
  if (!check_attrs(c) || !read_dims(c, &a) || !read_past(c, &a)) return c->error;
  a.total = a.past + a.kv_len;
  te_value_t q = heads_in(c, 0, &a, a.q_heads), k = heads_in(c, 1, &a, a.kv_heads);
  te_value_t v = heads_in(c, 2, &a, a.kv_heads);
  if (!q.id || !k.id || !v.id) return c->error;
  if (a.past) {
    te_value_t pk[2] = {float_in(c, 4), k}, pv[2] = {float_in(c, 5), v};
    k = concat(c, pk, 2, 2);
    v = concat(c, pv, 2, 2);
  }
  te_value_t bias = attn_bias(c, &a);
  if (c->error) return c->error;
  te_value_t qk = scores(c, q, repeat_heads(c, k, a.q_heads / a.kv_heads), &a);
  te_value_t with_bias = bias.id ? add(c, qk, bias) : qk;
  te_value_t p = guarded_softmax(c, with_bias, bias);
  te_value_t y = bmm(c, p, repeat_heads(c, v, a.q_heads / a.kv_heads));
  int64_t mode = onnx_attr_int(c, "qk_matmul_output_mode", 0);
  te_value_t qk_out = mode == 2 ? with_bias : mode == 3 ? p : qk;
  if (c->error) return c->error;
  onnx_set_out(c, 0, merge_heads(c, y, &a));
  onnx_set_out(c, 1, k);
  onnx_set_out(c, 2, v);
  return onnx_set_out(c, 3, qk_out);
}

/* ---- RMSNormalization ---- */

/* x / sqrt(mean(x^2) + epsilon) * Scale over dims [axis, rank), as
 * onnx/reference/ops/op_rms_normalization.py. */
static tinyml_status_t lower_rms_norm(onnx_ctx_t *c) {
  te_value_t x = float_in(c, 0);
  const onnx_value_t *sv = onnx_input(c, 1);
  if (!x.id) return c->error;
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", -1), x.type.rank);
  if (axis < 0) return onnx_fail(c, "invalid axis");
  if (onnx_attr_int(c, "stash_type", 1) != 1) return onnx_fail(c, "stash_type must be FLOAT");
  if (!sv || sv->rank > x.type.rank - (uint32_t)axis)
    return onnx_fail(c, "Scale must broadcast onto the normalised dimensions");
  for (uint32_t d = 0; d < sv->rank; ++d) {
    int64_t want = x.type.dims[x.type.rank - sv->rank + d];
    if (sv->dims[d] != 1 && sv->dims[d] != want)
      return onnx_fail(c, "Scale must broadcast onto the normalised dimensions");
  }
  int64_t outer = 1;
  for (int32_t d = 0; d < axis; ++d) outer *= x.type.dims[d];
  int64_t fd[2] = {outer, te_numel(&x.type) / outer};
  te_value_t x2 = te_reshape(&c->e, x, 2, fd);
  te_value_t ms = mul(c, te_reduce(&c->e, "tosa.reduce_sum", mul(c, x2, x2), 1),
                      f32(c, (float)(1.0 / (double)fd[1])));
  te_value_t inv = te_unary(&c->e, "tosa.rsqrt", add(c, ms, f32(c, onnx_attr_float(c, "epsilon", 1e-5f))));
  te_value_t y = te_reshape(&c->e, mul(c, x2, inv), x.type.rank, x.type.dims);
  y = mul(c, y, float_in(c, 1));
  return c->error ? c->error : onnx_set_out(c, 0, y);
}

const onnx_lowering_t onnx_lowerings_attention[] = {
    {"Attention", 23, 24, lower_attention},
    {"RMSNormalization", 23, 24, lower_rms_norm},
    {NULL, 0, 0, NULL},
};
