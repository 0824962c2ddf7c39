/* com.microsoft's QLinearAveragePool (the QOperator form of a quantised
 * AveragePool), computed as onnxruntime's CPU kernel does: each input
 * dequantised in float (x_scale * (x - x_zp)), averaged in float by the
 * AveragePool lowering (a float sum in window order, divided by the count
 * of the window's input elements, or of its whole kernel with
 * count_include_pad), then y / y_scale + y_zp rounded half to even and
 * saturated.  A kernel covering the whole unpadded image takes onnxruntime's
 * global-pool path instead: an integer sum scaled in float (MLAS).
 * Scales and zero points must be constant and per tensor.
 *
 * The QDQ form DequantizeLinear -> AveragePool -> QuantizeLinear (per-tensor
 * constant parameters, one 8-bit type) is recognised when the
 * QuantizeLinear is lowered and computed the same way, as onnxruntime fuses
 * it into QLinearAveragePool; the float ops lowered before are dead code
 * unless something else reads them. */
#include <string.h>

#include "onnx_window.h"

int onnx_qpool_op(const char *op) { return op && strcmp(op, "QLinearAveragePool") == 0; }

typedef struct qpool {
  float x_scale, y_scale;
  int32_t x_zp, y_zp, dtype;
  int channels_last;
} qpool_t;

/* A constant scalar (or 1-element) scale at i and optional zero point at
 * i + 1 of the data's type. */
static int read_scale_zp(onnx_ctx_t *c, uint32_t i, int32_t dtype, float *scale, int32_t *zp) {
  const onnx_value_t *s = onnx_const_input(c, i), *z = onnx_input(c, i + 1);
  const onnx_value_t *zk = onnx_const_input(c, i + 1);
  *zp = 0;
  if (!s || s->dtype != ONNX_FLOAT || onnx_numel(s->rank, s->dims) != 1 ||
      (z && (!zk || onnx_numel(zk->rank, zk->dims) != 1))) {
    onnx_fail(c, "inputs %u and %u: only constant per-tensor scales and zero points are "
                 "supported", i, i + 1);
    return 0;
  }
  *scale = *(const float *)s->data;
  if (z && z->dtype != dtype) {
    onnx_fail(c, "input %u: zero point type %s does not match the data", i + 1,
              onnx_dtype_name(z->dtype));
    return 0;
  }
  if (z) *zp = dtype == ONNX_UINT8 ? ((const uint8_t *)zk->data)[0] : ((const int8_t *)zk->data)[0];
  if (!(*scale > 0.0f) || *scale > 3.4e38f) {
    onnx_fail(c, "input %u: the scale must be positive and finite", i);
    return 0;
  }
  return 1;
}

static int read_qpool(onnx_ctx_t *c, const onnx_value_t *xv, qpool_t *q) {
  const char *d = c->node->domain;
  if (!d || strcmp(d, "com.microsoft") != 0) {
    onnx_fail(c, "this operator exists only in domain com.microsoft");
    return 0;
  }
  if (!xv) {
    onnx_fail(c, "X is required");
    return 0;
  }
  q->dtype = xv->dtype;
  if (q->dtype != ONNX_INT8 && q->dtype != ONNX_UINT8) {
    onnx_fail(c, "input 0: type %s is not supported (INT8 and UINT8 are)",
              onnx_dtype_name(q->dtype));
    return 0;
  }
  if (xv->rank != 3 && xv->rank != 4) {
    onnx_fail(c, "only 1-D and 2-D pooling is supported (rank %u)", xv->rank);
    return 0;
  }
  q->channels_last = onnx_attr_int(c, "channels_last", 0) != 0;
  return read_scale_zp(c, 1, q->dtype, &q->x_scale, &q->x_zp) &&
         read_scale_zp(c, 3, q->dtype, &q->y_scale, &q->y_zp);
}

static te_value_t fk(onnx_ctx_t *c, float v) { return te_scalar_f32(&c->e, v); }

/* The carried i8 bits as exact f32 values of the ONNX type. */
static te_value_t exact_f32(onnx_ctx_t *c, te_value_t x, int32_t dtype) {
  te_value_t w = te_cast(&c->e, x, TE_I32);
  if (dtype == ONNX_UINT8) w = te_binary(&c->e, "tosa.bitwise_and", w, te_scalar_int(&c->e, TE_I32, 255));
  return te_cast(&c->e, w, TE_F32);
}

/* v (already y / y_scale + y_zp in float) rounded half to even and
 * saturated to the type; clamped first so the cast cannot overflow. */
static te_value_t requantise(onnx_ctx_t *c, te_value_t v, int32_t dtype) {
  float lo = dtype == ONNX_UINT8 ? 0.0f : -128.0f, hi = dtype == ONNX_UINT8 ? 255.0f : 127.0f;
  te_value_t r = te_cast(&c->e, te_clamp_f32(&c->e, v, lo, hi), TE_I32);
  return te_cast(&c->e, r, TE_I8);
}

/* MLAS's global average: (sum - x_zp * n) * (x_scale / (y_scale * n)) +
 * y_zp, the integer sum exact in f32 below 2^24. */
static te_value_t global_avg(onnx_ctx_t *c, te_value_t xi, const qpool_t *q) {
  int64_t n = xi.type.dims[1] * xi.type.dims[2], ch = xi.type.dims[3];
  float scale = q->x_scale / (q->y_scale * (float)n);
  if (n > 65793 || !(scale >= 0x1.0p-32f && scale < 256.0f)) {
    onnx_fail(c, "a whole-image window of %lld pixels with this scale ratio is not supported",
              (long long)n);
    return (te_value_t){0};
  }
  te_value_t flat = te_reshape(&c->e, xi, 3, (int64_t[3]){xi.type.dims[0], n, ch});
  te_value_t sum = te_reduce(&c->e, "tosa.reduce_sum", flat, 1);
  sum = te_binary(&c->e, "tosa.sub", sum, fk(c, (float)q->x_zp * (float)n));
  te_value_t y = te_binary(&c->e, "tosa.add", te_mul(&c->e, sum, fk(c, scale), 0), fk(c, (float)q->y_zp));
  return te_reshape(&c->e, y, 4, (int64_t[4]){xi.type.dims[0], 1, 1, ch});
}

/* onnxruntime falls back to its global pool when the kernel is the whole
 * image and no pad is set (auto_pad's included). */
static int whole_image(const win_t *w) {
  for (int i = 0; i < 2; ++i)
    if (w->k[i] != w->in[i] || w->pb[i] || w->pe[i]) return 0;
  return 1;
}

/* X as NHWC (1-D: a unit height) and its NCHW-ordered dims. */
static te_value_t nhwc_input(onnx_ctx_t *c, te_value_t x, const onnx_value_t *xv,
                             const qpool_t *q, int64_t *xd) {
  uint32_t r = xv->rank;
  xd[0] = xv->dims[0];
  xd[1] = q->channels_last ? xv->dims[r - 1] : xv->dims[1];
  for (uint32_t i = 2; i < r; ++i) xd[i] = xv->dims[q->channels_last ? i - 1 : i];
  if (!x.id) return x;
  if (!q->channels_last) return onnx_to_nhwc(c, x);
  if (r == 4) return x;
  return te_reshape(&c->e, x, 4, (int64_t[4]){xd[0], 1, xd[2], xd[1]});
}

static te_value_t nhwc_output(onnx_ctx_t *c, te_value_t y, const qpool_t *q, uint32_t rank) {
  if (!q->channels_last) return onnx_from_nhwc(c, y, rank);
  if (rank == 4) return y;
  return te_reshape(&c->e, y, 3, (int64_t[3]){y.type.dims[0], y.type.dims[2], y.type.dims[3]});
}

/* The average of xv's tensor x (its carried i8 bits), with c->node's
 * window attributes, quantised to q; id 0 with an error recorded when the
 * window is not supported. */
static te_value_t qavg(onnx_ctx_t *c, const onnx_value_t *xv, te_value_t x, const qpool_t *q) {
  int64_t k[2], xd[4];
  if (onnx_attr_ints(c, "kernel_shape", k, 2) != xv->rank - 2) {
    if (!c->error) onnx_fail(c, "kernel_shape does not match the input rank");
    return (te_value_t){0};
  }
  int cip = onnx_attr_int(c, "count_include_pad", 0) != 0;
  x = nhwc_input(c, x, xv, q, xd);
  win_t w;
  if (!x.id || !onnx_read_window(c, xd, xv->rank, k, (int)onnx_attr_int(c, "ceil_mode", 0), &w))
    return (te_value_t){0};
  te_value_t xi = exact_f32(c, x, q->dtype), y;
  if (whole_image(&w)) {
    y = global_avg(c, xi, q);
  } else {
    te_value_t xf = te_mul(&c->e, te_binary(&c->e, "tosa.sub", xi, fk(c, (float)q->x_zp)),
                           fk(c, q->x_scale), 0);
    y = onnx_pool_nhwc(c, xf, &w, 0, cip, ONNX_FLOAT);
    if (y.id) y = te_binary(&c->e, "tosa.add", te_divf(&c->e, y, fk(c, q->y_scale)), fk(c, (float)q->y_zp));
  }
  return y.id ? nhwc_output(c, requantise(c, y, q->dtype), q, xv->rank) : y;
}

static tinyml_status_t lower_qlinear_average_pool(onnx_ctx_t *c) {
  const onnx_value_t *xv = onnx_input(c, 0);
  qpool_t q;
  if (!read_qpool(c, xv, &q)) return c->error;
  te_value_t y = qavg(c, xv, onnx_in(c, 0), &q);
  return y.id ? onnx_set_out_typed(c, 0, y, q.dtype) : c->error;
}

/* ---- the QDQ form: DequantizeLinear -> AveragePool -> QuantizeLinear ---- */

/* The node before c->node in this graph whose first output is `name`, if
 * it is default-domain `op`. */
static const Onnx__NodeProto *producer(onnx_ctx_t *c, const char *name, const char *op) {
  const Onnx__GraphProto *g = c->graph;
  if (!g || !name || !name[0] || c->node_index > g->n_node) return NULL;
  for (size_t k = c->node_index; k-- > 0;) {
    const Onnx__NodeProto *n = g->node[k];
    if (n->n_output < 1 || strcmp(n->output[0], name) != 0) continue;
    int dflt = !n->domain || !n->domain[0] || strcmp(n->domain, "ai.onnx") == 0;
    return dflt && n->op_type && strcmp(n->op_type, op) == 0 ? n : NULL;
  }
  return NULL;
}

static const onnx_value_t *node_const(onnx_ctx_t *c, const Onnx__NodeProto *n, size_t i) {
  const onnx_value_t *v = i < n->n_input && n->input[i][0] ? onnx_find(c, n->input[i]) : NULL;
  return v && v->data ? v : NULL;
}

static int64_t node_int(const Onnx__NodeProto *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; ++i)
    if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0) return n->attribute[i]->i;
  return 0;
}

/* n's constant per-tensor scale (input 1) and zero point (input 2, of type
 * dt; absent means 0 of UINT8, the spec's default). */
static int node_qparams(onnx_ctx_t *c, const Onnx__NodeProto *n, int32_t dt, float *scale,
                        int32_t *zp) {
  const onnx_value_t *s = node_const(c, n, 1), *z = node_const(c, n, 2);
  int has_z = n->n_input > 2 && n->input[2][0];
  if (!s || s->dtype != ONNX_FLOAT || onnx_numel(s->rank, s->dims) != 1 || (has_z && !z) ||
      (z ? z->dtype != dt || onnx_numel(z->rank, z->dims) != 1 : dt != ONNX_UINT8) ||
      node_int(n, "block_size") != 0)
    return 0;
  *scale = *(const float *)s->data;
  *zp = !z ? 0 : dt == ONNX_UINT8 ? ((const uint8_t *)z->data)[0] : ((const int8_t *)z->data)[0];
  return *scale > 0.0f && *scale <= 3.4e38f;
}

int onnx_qdq_pool_fuse(onnx_ctx_t *c) {
  const Onnx__NodeProto *qn = c->node;
  const Onnx__NodeProto *pool = producer(c, qn->n_input ? qn->input[0] : NULL, "AveragePool");
  const Onnx__NodeProto *dq = pool && pool->n_input ? producer(c, pool->input[0], "DequantizeLinear") : NULL;
  onnx_value_t *xv = dq && dq->n_input ? onnx_find(c, dq->input[0]) : NULL;
  if (!xv || (xv->dtype != ONNX_INT8 && xv->dtype != ONNX_UINT8) || (xv->rank != 3 && xv->rank != 4))
    return 0;
  qpool_t q = {.dtype = xv->dtype};
  int64_t odt = node_int(qn, "output_dtype");
  if (!node_qparams(c, dq, q.dtype, &q.x_scale, &q.x_zp) ||
      !node_qparams(c, qn, q.dtype, &q.y_scale, &q.y_zp) || (odt != 0 && odt != q.dtype))
    return 0;
  /* The AveragePool was lowered: its window is supported, but the integer
   * global path has limits of its own; past them the float chain stays. */
  int64_t n = 1;
  for (uint32_t d = 2; d < xv->rank; ++d) n *= xv->dims[d];
  float ratio = q.x_scale / (q.y_scale * (float)n);
  if (n > 65793 || !(ratio >= 0x1.0p-32f && ratio < 256.0f)) return 0;
  c->node = pool; /* the window attributes are the AveragePool's */
  te_value_t y = qavg(c, xv, onnx_runtime(c, xv), &q);
  c->node = qn;
  if (y.id) onnx_set_out_typed(c, 0, y, q.dtype);
  return y.id != 0;
}

const onnx_lowering_t onnx_lowerings_qpool[] = {
    {"QLinearAveragePool", 1, 23, lower_qlinear_average_pool},
    {NULL, 0, 0, NULL},
};
