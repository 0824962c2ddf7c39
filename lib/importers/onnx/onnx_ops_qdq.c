/* The QDQ form: DequantizeLinear -> Conv / MatMul / Gemm [-> Relu / Clip]
 * -> QuantizeLinear computed on the int8 kernels, as onnxruntime fuses it
 * into QLinearConv / QLinearMatMul.  The chain is recognised when the
 * QuantizeLinear is lowered; the float ops lowered before stay for any
 * other reader and are dropped as dead code otherwise.
 *
 * Quantisation is monotonic, so Q(Relu(v)) = max(Q(v), y_zp) and
 * Q(Clip(v, a, b)) = clamp(Q(v), Q(a), Q(b)) exactly: the activation is a
 * clamp on the int8 result.  Anything else (other ops, run-time or
 * per-tensor-mismatched parameters, a bias whose scale is not
 * x_scale * w_scale) keeps the float computation, which is what QDQ means. */
#include <math.h>
#include <string.h>

#include "onnx_elt_util.h"
#include "onnx_graph_util.h"
#include "onnx_quant_util.h"

static int is_default_domain(const Onnx__NodeProto *n) {
  return !n->domain || !n->domain[0] || strcmp(n->domain, "ai.onnx") == 0;
}

/* The node before c->node in this graph whose first output is `name`. */
static const Onnx__NodeProto *producer(onnx_ctx_t *c, const char *name, const char *op) {
  const Onnx__NodeProto *n = onnx_producer(c->graph, name, c->node_index);
  if (!n || strcmp(n->output[0], name) != 0) return NULL;
  return is_default_domain(n) && n->op_type && strcmp(n->op_type, op) == 0 ? n : NULL;
}

static const Onnx__NodeProto *producer_any(onnx_ctx_t *c, const char *name) {
  static const char *const ops[] = {"Conv", "MatMul", "Gemm", "Relu", "Clip"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i) {
    const Onnx__NodeProto *n = producer(c, name, ops[i]);
    if (n) return n;
  }
  return NULL;
}

static onnx_value_t *node_in(onnx_ctx_t *c, const Onnx__NodeProto *n, size_t i) {
  return i < n->n_input && n->input[i][0] ? onnx_find(c, n->input[i]) : NULL;
}

/* The onnx_attr helpers read c->node: another node's attributes are read
 * with c->node pointing at it for the call. */
static int64_t attr_int(onnx_ctx_t *c, const Onnx__NodeProto *n, const char *name, int64_t def) {
  const Onnx__NodeProto *self = c->node;
  c->node = n;
  int64_t v = onnx_attr_int(c, name, def);
  c->node = self;
  return v;
}

static float attr_float(onnx_ctx_t *c, const Onnx__NodeProto *n, const char *name, float def) {
  const Onnx__NodeProto *self = c->node;
  c->node = n;
  float v = onnx_attr_float(c, name, def);
  c->node = self;
  return v;
}

/* A DequantizeLinear producing `name`, with constant parameters. */
typedef struct dq {
  onnx_value_t *q;
  const onnx_value_t *scale, *zp;
  int64_t axis; /* normalised against q's rank */
} dq_t;

static int read_dq(onnx_ctx_t *c, const char *name, dq_t *d) {
  const Onnx__NodeProto *n = producer(c, name, "DequantizeLinear");
  if (!n) return 0;
  d->q = node_in(c, n, 0);
  d->scale = node_in(c, n, 1);
  d->zp = node_in(c, n, 2);
  if (!d->q || !d->scale || !d->scale->data || d->scale->dtype != ONNX_FLOAT ||
      (d->zp && (!d->zp->data || d->zp->dtype != d->q->dtype)) ||
      attr_int(c, n, "block_size", 0) != 0)
    return 0;
  d->axis = onnx_axis(attr_int(c, n, "axis", 1), d->q->rank);
  return 1;
}

static int per_tensor(const dq_t *d) {
  return numel_of(d->scale) == 1 && (!d->zp || numel_of(d->zp) == 1);
}

/* The activation input (per tensor, int8 / uint8) and constant weights,
 * per tensor or along `w_axis`. */
static int read_inputs(onnx_ctx_t *c, const Onnx__NodeProto *op, int64_t w_axis, onnx_qconv_t *q) {
  dq_t x, w;
  if (!read_dq(c, op->n_input > 0 ? op->input[0] : NULL, &x) ||
      !read_dq(c, op->n_input > 1 ? op->input[1] : NULL, &w) || !per_tensor(&x) ||
      (x.q->dtype != ONNX_INT8 && x.q->dtype != ONNX_UINT8) || !w.q->data ||
      (!per_tensor(&w) && w.axis != w_axis))
    return 0;
  q->x = x.q;
  q->x_scale = *(const float *)x.scale->data;
  if (x.zp) onnx_qval_int(x.zp, 0, &q->x_zp);
  q->w = w.q;
  q->w_scale = w.scale->data;
  q->w_count = numel_of(w.scale);
  q->w_zp = w.zp;
  return 1;
}

/* An INT32 bias dequantised with x_scale * w_scale (to float rounding),
 * zero point 0: its integers join the accumulator as QLinearConv's B. */
static int read_bias(onnx_ctx_t *c, const char *name, int64_t oc, onnx_qconv_t *q) {
  dq_t b;
  if (!name || !name[0]) return 1;
  if (!read_dq(c, name, &b) || b.q->dtype != ONNX_INT32 || !b.q->data || numel_of(b.q) != oc)
    return 0;
  int64_t ns = numel_of(b.scale);
  if ((ns != 1 && ns != oc) || (b.zp && numel_of(b.zp) != 1 && numel_of(b.zp) != oc)) return 0;
  for (int64_t k = 0; k < oc; ++k) {
    int32_t zp = 0;
    if (b.zp) onnx_qval_int(b.zp, numel_of(b.zp) == 1 ? 0 : k, &zp);
    float want = q->x_scale * q->w_scale[q->w_count == 1 ? 0 : k];
    float have = ((const float *)b.scale->data)[ns == 1 ? 0 : k];
    if (zp != 0 || fabsf(have - want) > 1e-6f * want) return 0;
  }
  q->bias = b.q->data;
  return 1;
}

/* Q's value of a float bound (saturating), as QuantizeLinear computes it. */
static int32_t quantise_bound(const onnx_qconv_t *q, float v) {
  float r = nearbyintf(v / q->y_scale) + (float)q->y_zp;
  return r < (float)q->act_lo ? q->act_lo : r > (float)q->act_hi ? q->act_hi : (int32_t)r;
}

/* Relu / Clip between the op and Q as a clamp; the op's node, or NULL. */
static const Onnx__NodeProto *read_activation(onnx_ctx_t *c, const Onnx__NodeProto *n,
                                              onnx_qconv_t *q) {
  int relu = strcmp(n->op_type, "Relu") == 0, clip = strcmp(n->op_type, "Clip") == 0;
  if (!relu && !clip) return n;
  float lo = relu ? 0.0f : -INFINITY, hi = INFINITY;
  if (clip && c->opset < 11) {
    lo = attr_float(c, n, "min", -INFINITY);
    hi = attr_float(c, n, "max", INFINITY);
  } else if (clip) {
    const onnx_value_t *a = node_in(c, n, 1), *b = node_in(c, n, 2);
    if ((a && !onnx_qval_float(a, 0, &lo)) || (b && !onnx_qval_float(b, 0, &hi))) return NULL;
  }
  if (isfinite(lo)) q->act_lo = quantise_bound(q, lo);
  if (isfinite(hi)) q->act_hi = quantise_bound(q, hi);
  n = producer_any(c, n->n_input ? n->input[0] : NULL);
  return n && strcmp(n->op_type, "Relu") && strcmp(n->op_type, "Clip") ? n : NULL;
}

/* The op's own inputs and attributes into q; which kernel in *matmul. */
static int read_op(onnx_ctx_t *c, const Onnx__NodeProto *n, onnx_qconv_t *q, int *matmul) {
  *matmul = strcmp(n->op_type, "Conv") != 0;
  if (!*matmul) {
    if (!read_inputs(c, n, 0, q) || q->w->rank < 1) return 0;
    return read_bias(c, n->n_input > 2 ? n->input[2] : NULL, q->w->dims[0], q);
  }
  int gemm = strcmp(n->op_type, "Gemm") == 0;
  q->transpose_w = gemm && attr_int(c, n, "transB", 0) != 0;
  if (gemm && (attr_int(c, n, "transA", 0) != 0 || attr_float(c, n, "alpha", 1.0f) != 1.0f ||
               (n->n_input > 2 && attr_float(c, n, "beta", 1.0f) != 1.0f)))
    return 0;
  if (!read_inputs(c, n, q->transpose_w ? 0 : 1, q) || q->w->rank != 2) return 0;
  if (gemm && q->x->rank != 2) return 0;
  int64_t oc = q->w->dims[q->transpose_w ? 0 : 1];
  return read_bias(c, gemm && n->n_input > 2 ? n->input[2] : NULL, oc, q);
}

/* c->node's (QuantizeLinear's) own parameters: constant, per tensor. */
static int read_quantize(onnx_ctx_t *c, onnx_qconv_t *q) {
  const onnx_value_t *s = onnx_const_input(c, 1), *z = onnx_input(c, 2);
  if (!s || s->dtype != ONNX_FLOAT || numel_of(s) != 1 || (z && (!z->data || numel_of(z) != 1)))
    return 0;
  q->y_scale = *(const float *)s->data;
  q->y_dtype = z ? z->dtype : ONNX_UINT8;
  if (z) onnx_qval_int(z, 0, &q->y_zp);
  if (q->y_dtype != ONNX_INT8 && q->y_dtype != ONNX_UINT8) return 0;
  int64_t odt = onnx_attr_int(c, "output_dtype", 0);
  q->act_lo = q->y_dtype == ONNX_UINT8 ? 0 : -128;
  q->act_hi = q->y_dtype == ONNX_UINT8 ? 255 : 127;
  return odt == 0 || odt == q->y_dtype;
}

/* As onnx_import.c locates a node's ops: its name, else its first output's. */
static const char *node_name(const Onnx__NodeProto *n) {
  return n->name && n->name[0] ? n->name : n->n_output ? n->output[0] : NULL;
}

int onnx_qdq_fuse(onnx_ctx_t *c) {
  onnx_qconv_t q;
  memset(&q, 0, sizeof q);
  if (!read_quantize(c, &q) || !(q.y_scale > 0.0f)) return 0;
  const Onnx__NodeProto *n = producer_any(c, c->node->n_input ? c->node->input[0] : NULL);
  if (n) n = read_activation(c, n, &q);
  int matmul;
  if (!n || q.act_lo > q.act_hi || !read_op(c, n, &q, &matmul)) return 0;
  const Onnx__NodeProto *self = c->node;
  te_value_t y;
  c->node = n; /* the window attributes are the Conv's */
  te_set_loc(&c->e, n->op_type, node_name(n)); /* profiles name the Conv */
  int ok = matmul ? onnx_qmatmul_s8(c, &q, &y) : onnx_qconv_s8(c, &q, &y);
  te_set_loc(&c->e, self->op_type, node_name(self));
  c->node = self;
  if (ok) onnx_set_out_typed(c, 0, y, q.y_dtype);
  return ok;
}
