/* onnxruntime's quantised operators of domain com.microsoft (the
 * QOperator form): QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
 * QLinearSigmoid, QLinearLeakyRelu and QGemm.  Their scales and zero
 * points must be constants (per tensor).  The arithmetic follows
 * onnxruntime's CPU kernels: float ratios of the scales computed once,
 * results rounded half to even (TOSA's float-to-int cast) and saturated;
 * Sigmoid and LeakyRelu are 256-entry tables, as ORT builds them
 * (dequantise each value, apply the function in float, quantise). */
#include <math.h>
#include <string.h>

#include "onnx_nn_util.h"
#include "onnx_quant_util.h"

static int ms_domain(onnx_ctx_t *c) {
  const char *d = c->node->domain;
  if (d && strcmp(d, "com.microsoft") == 0) return 1;
  onnx_fail(c, "this operator exists only in domain com.microsoft");
  return 0;
}

/* A per-tensor quantisation: constant scale input i, zero point i + 1. */
typedef struct qp {
  float scale;
  int32_t zp, dtype;
} qp_t;

static int read_qp(onnx_ctx_t *c, uint32_t i, int32_t dtype, qp_t *p) {
  const onnx_value_t *s = onnx_const_input(c, i), *z = onnx_input(c, i + 1);
  const onnx_value_t *zk = onnx_const_input(c, i + 1);
  p->zp = 0;
  p->dtype = z ? z->dtype : dtype;
  if (!s || !onnx_qval_float(s, 0, &p->scale) || onnx_numel(s->rank, s->dims) != 1 ||
      (z && (!zk || onnx_numel(zk->rank, zk->dims) != 1 || !onnx_qval_int(zk, 0, &p->zp))) ||
      !(p->scale > 0.0f)) {
    onnx_fail(c, "inputs %u and %u: only constant per-tensor scales and zero points are "
                 "supported", i, i + 1);
    return 0;
  }
  if ((p->dtype != ONNX_INT8 && p->dtype != ONNX_UINT8) || p->dtype != dtype) {
    onnx_fail(c, "input %u: zero point type %s does not match the data", i + 1,
              onnx_dtype_name(p->dtype));
    return 0;
  }
  return 1;
}

/* Input i (INT8 / UINT8) as exact f32 values. */
static te_value_t q_in_f32(onnx_ctx_t *c, uint32_t i, int32_t *dtype) {
  const onnx_value_t *v = onnx_input(c, i);
  te_value_t x = onnx_in(c, i);
  if (!x.id) return x;
  *dtype = v->dtype;
  if (*dtype != ONNX_INT8 && *dtype != ONNX_UINT8) {
    onnx_fail(c, "input %u: type %s is not supported", i, onnx_dtype_name(*dtype));
    return (te_value_t){0};
  }
  te_value_t w = te_cast(&c->e, x, TE_I32);
  if (*dtype == ONNX_UINT8)
    w = te_binary(&c->e, "tosa.bitwise_and", w, te_scalar_int(&c->e, TE_I32, 255));
  return te_cast(&c->e, w, TE_F32);
}

static int32_t q_lo(const qp_t *p) { return p->dtype == ONNX_UINT8 ? 0 : -128; }
static int32_t q_hi(const qp_t *p) { return p->dtype == ONNX_UINT8 ? 255 : 127; }

/* Saturates i32 values to p's type and binds them to output 0. */
static tinyml_status_t q_bind(onnx_ctx_t *c, te_value_t r, const qp_t *p) {
  te_value_t y = te_cast(&c->e, te_clamp_int(&c->e, r, q_lo(p), q_hi(p)), TE_I8);
  return onnx_set_out_typed(c, 0, y, p->dtype);
}

/* Rounds a float result half to even, saturates to p's type, binds output 0. */
static tinyml_status_t q_out(onnx_ctx_t *c, te_value_t v, const qp_t *p) {
  return q_bind(c, te_cast(&c->e, v, TE_I32), p);
}

/* QLinearAdd / QLinearMul's (a, a_scale, a_zp, b, b_scale, b_zp, c_scale,
 * c_zp): a and b as exact f32 values and the three quantisations (c's of
 * a's type); 0 with the error recorded. */
static int binary_operands(onnx_ctx_t *c, te_value_t *a, te_value_t *b, qp_t *pa, qp_t *pb,
                           qp_t *pc) {
  int32_t da = 0, db = 0;
  if (!ms_domain(c)) return 0;
  *a = q_in_f32(c, 0, &da);
  *b = q_in_f32(c, 3, &db);
  return a->id && b->id && read_qp(c, 1, da, pa) && read_qp(c, 4, db, pb) &&
         read_qp(c, 6, da, pc);
}

/* MLAS's reference (its vector kernels use 22-bit fixed-point ratios of
 * the scales; within one step of this):
 * c = nearbyint((sa (a - za) + sb (b - zb)) / sc) + zc. */
static tinyml_status_t lower_qlinear_add(onnx_ctx_t *c) {
  te_value_t a, b;
  qp_t pa, pb, pc;
  if (!binary_operands(c, &a, &b, &pa, &pb, &pc)) return c->error;
  te_value_t va = te_mul(&c->e, te_binary(&c->e, "tosa.sub", a, f32(c, (float)pa.zp)), f32(c, pa.scale), 0);
  te_value_t vb = te_mul(&c->e, te_binary(&c->e, "tosa.sub", b, f32(c, (float)pb.zp)), f32(c, pb.scale), 0);
  te_value_t v = te_divf(&c->e, te_binary(&c->e, "tosa.add", va, vb), f32(c, pc.scale));
  /* The zero point joins after the rounding, as in MLAS. */
  te_value_t r = te_cast(&c->e, v, TE_I32);
  return q_bind(c, te_binary(&c->e, "tosa.add", r, te_scalar_int(&c->e, TE_I32, pc.zp)), &pc);
}

/* MLAS: c = (a - za) * (b - zb) * (sa * sb / sc) + zc; the integer product
 * is exact in f32 (|value| <= 255 * 255). */
static tinyml_status_t lower_qlinear_mul(onnx_ctx_t *c) {
  te_value_t a, b;
  qp_t pa, pb, pc;
  if (!binary_operands(c, &a, &b, &pa, &pb, &pc)) return c->error;
  te_value_t ca = te_binary(&c->e, "tosa.sub", a, f32(c, (float)pa.zp));
  te_value_t cb = te_binary(&c->e, "tosa.sub", b, f32(c, (float)pb.zp));
  te_value_t prod = te_mul(&c->e, te_mul(&c->e, ca, cb, 0), f32(c, pa.scale * pb.scale / pc.scale), 0);
  return q_out(c, te_binary(&c->e, "tosa.add", prod, f32(c, (float)pc.zp)), &pc);
}

/* MLAS sums each channel's integers, then scales (sum - zx * n) by
 * sx / (sy * n) in float; the sum is exact in f32 below 2^24. */
static tinyml_status_t lower_qlinear_global_average_pool(onnx_ctx_t *c) {
  int32_t dx = 0;
  if (!ms_domain(c)) return c->error;
  if (onnx_attr_int(c, "channels_last", 0) != 0)
    return onnx_fail(c, "channels_last is not supported");
  te_value_t x = q_in_f32(c, 0, &dx);
  qp_t px, py;
  if (!x.id || !read_qp(c, 1, dx, &px) || !read_qp(c, 3, dx, &py)) return c->error;
  uint32_t r = x.type.rank;
  if (r < 3) return onnx_fail(c, "the input must be [N, C, spatial...]");
  int64_t n = 1, od[TE_MAX_RANK];
  for (uint32_t d = 2; d < r; ++d) n *= x.type.dims[d];
  if (n < 1 || n > 65793) return onnx_fail(c, "%lld pixels: the sum would not be exact", (long long)n);
  te_value_t flat = te_reshape(&c->e, x, 3, (int64_t[3]){x.type.dims[0], x.type.dims[1], n});
  te_value_t sum = te_reduce(&c->e, "tosa.reduce_sum", flat, 2);
  sum = te_binary(&c->e, "tosa.sub", sum, f32(c, (float)px.zp * (float)n));
  float scale = px.scale / (py.scale * (float)n);
  te_value_t y = te_binary(&c->e, "tosa.add", te_mul(&c->e, sum, f32(c, scale), 0), f32(c, (float)py.zp));
  for (uint32_t d = 0; d < r; ++d) od[d] = d < 2 ? x.type.dims[d] : 1;
  return q_out(c, te_reshape(&c->e, y, r, od), &py);
}

/* A 256-entry table of f over the input's values, indexed by the carried
 * int8 bits + 128 (tosa.table). */
static tinyml_status_t lower_table(onnx_ctx_t *c, int sigmoid) {
  const onnx_value_t *xv = onnx_input(c, 0);
  if (!ms_domain(c)) return c->error;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  qp_t px, py;
  if (xv->dtype != ONNX_INT8 && xv->dtype != ONNX_UINT8)
    return onnx_fail(c, "input 0: type %s is not supported", onnx_dtype_name(xv->dtype));
  if (!read_qp(c, 1, xv->dtype, &px) || !read_qp(c, 3, xv->dtype, &py)) return c->error;
  float alpha = onnx_attr_float(c, "alpha", 0.01f);
  int lo = q_lo(&py), hi = q_hi(&py);
  int8_t table[256];
  for (int t = 0; t < 256; ++t) {
    int v = t - 128, q = xv->dtype == ONNX_UINT8 ? (v & 255) : v;
    float f = (float)(q - px.zp) * px.scale;
    float y = sigmoid ? 1.0f / (1.0f + expf(-f)) : (f >= 0.0f ? f : f * alpha);
    float r = nearbyintf(y / py.scale) + (float)py.zp;
    int o = r < (float)lo ? lo : r > (float)hi ? hi : (int)r;
    table[t] = (int8_t)(o > 127 ? o - 256 : o);
  }
  int64_t n = 256;
  te_type_t tt = te_type(TE_I8, 1, &n);
  te_value_t ops[2] = {x, te_const(&c->e, &tt, table)};
  return onnx_set_out_typed(c, 0, te_op(&c->e, "tosa.table", ops, 2, NULL, &x.type), py.dtype);
}

static tinyml_status_t lower_qlinear_sigmoid(onnx_ctx_t *c) { return lower_table(c, 1); }
static tinyml_status_t lower_qlinear_leaky_relu(onnx_ctx_t *c) { return lower_table(c, 0); }

/* QGemm (A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp) with a
 * quantised output, on the int8 kernel: constant B and parameters. */
static tinyml_status_t lower_qgemm(onnx_ctx_t *c) {
  if (!ms_domain(c)) return c->error;
  const onnx_value_t *bs = onnx_const_input(c, 4), *bz = onnx_input(c, 5), *ys = onnx_input(c, 7);
  const onnx_value_t *cb = onnx_input(c, 6), *yz = onnx_input(c, 8);
  onnx_qconv_t q;
  memset(&q, 0, sizeof q);
  q.x = onnx_input(c, 0);
  q.w = onnx_const_input(c, 3);
  q.transpose_w = onnx_attr_int(c, "transB", 0) != 0;
  if (!ys) return onnx_fail(c, "a float output (no y_scale) is not supported");
  if (onnx_attr_int(c, "transA", 0) != 0 || onnx_attr_float(c, "alpha", 1.0f) != 1.0f)
    return onnx_fail(c, "transA and alpha other than 1 are not supported");
  if (!q.x || q.x->rank != 2 || !q.w || q.w->rank != 2 || !bs || bs->dtype != ONNX_FLOAT ||
      (bz && !onnx_const_input(c, 5)))
    return onnx_fail(c, "B and its parameters must be 2-D constants and A 2-D");
  if (!onnx_zero_point_ok(c, 5, q.w->dtype)) return c->error;
  int64_t n = q.w->dims[q.transpose_w ? 0 : 1];
  qp_t pa, py;
  if (!read_qp(c, 1, q.x->dtype, &pa) || !read_qp(c, 7, yz ? yz->dtype : ONNX_UINT8, &py))
    return c->error;
  if (cb) {
    const onnx_value_t *k = onnx_const_input(c, 6);
    if (!k || k->dtype != ONNX_INT32 || onnx_numel(k->rank, k->dims) != n)
      return onnx_fail(c, "C must be a constant INT32 vector of %lld", (long long)n);
    q.bias = k->data;
  }
  q.x_scale = pa.scale, q.x_zp = pa.zp, q.y_scale = py.scale, q.y_zp = py.zp;
  q.y_dtype = py.dtype;
  q.act_lo = q_lo(&py);
  q.act_hi = q_hi(&py);
  q.w_scale = bs->data;
  q.w_count = onnx_numel(bs->rank, bs->dims);
  q.w_zp = bz;
  te_value_t y;
  if (!onnx_qmatmul_s8(c, &q, &y))
    return c->error ? c->error
                    : onnx_fail(c, "the weights' zero points or the scales have no int8 form");
  return onnx_set_out_typed(c, 0, y, q.y_dtype);
}

const onnx_lowering_t onnx_lowerings_qms[] = {
    {"QLinearAdd", 1, 23, lower_qlinear_add},
    {"QLinearMul", 1, 23, lower_qlinear_mul},
    {"QLinearGlobalAveragePool", 1, 23, lower_qlinear_global_average_pool},
    {"QLinearSigmoid", 1, 23, lower_qlinear_sigmoid},
    {"QLinearLeakyRelu", 1, 23, lower_qlinear_leaky_relu},
    {"QGemm", 1, 23, lower_qgemm},
    {NULL, 0, 0, NULL},
};

int onnx_qms_op(const char *op) {
  for (const onnx_lowering_t *l = onnx_lowerings_qms; op && l->op_type; ++l)
    if (strcmp(op, l->op_type) == 0) return 1;
  return 0;
}
