/* ONNX lowerings: quantisation family.  Scales and zero points may be
 * constants or run-time tensors, per tensor or per axis.  ONNX rounds half
 * to even, which is what TOSA's float-to-int cast does. */
#include <string.h>

#include "onnx_lower.h"
#include "onnx_nn_util.h"
#include "onnx_quant_util.h"

/* Input i ([1] or [n]) reshaped to broadcast along `axis` of `rank`. */
static te_value_t along_axis(onnx_ctx_t *c, uint32_t i, uint32_t rank, int32_t axis) {
  te_value_t v = onnx_in(c, i);
  if (!v.id) return v;
  int64_t n = te_numel(&v.type), dims[TE_MAX_RANK];
  if (v.type.rank > 1 || rank == 0) {
    onnx_fail(c, "quantisation parameters must be scalars or 1-D");
    return (te_value_t){0};
  }
  for (uint32_t d = 0; d < rank; ++d) dims[d] = n > 1 && (int32_t)d == axis ? n : 1;
  return te_reshape(&c->e, v, rank, dims);
}

static int quant_axis(onnx_ctx_t *c, te_value_t x, int32_t *axis) {
  te_value_t s = onnx_in(c, 1);
  if (!s.id) return 0;
  int64_t n = te_numel(&s.type);
  *axis = onnx_axis(onnx_attr_int(c, "axis", 1), x.type.rank);
  if (onnx_attr_int(c, "block_size", 0) != 0) {
    onnx_fail(c, "blocked quantisation is not supported");
    return 0;
  }
  if (n > 1 && (*axis < 0 || x.type.dims[*axis] != n)) {
    onnx_fail(c, "per-axis parameters do not match the axis");
    return 0;
  }
  return 1;
}

/* An i8-carried uint8/int8 or an int32 tensor, widened to i32 values. */
static te_value_t widen(onnx_ctx_t *c, te_value_t x, int32_t dtype) {
  te_value_t w = te_cast(&c->e, x, TE_I32);
  if (dtype == ONNX_UINT8)
    w = te_binary(&c->e, "tosa.bitwise_and", w, te_scalar_int(&c->e, TE_I32, 255));
  return w;
}

static int32_t zero_point_dtype(onnx_ctx_t *c) {
  const onnx_value_t *z = onnx_input(c, 2);
  return z ? z->dtype : ONNX_UINT8; /* the spec's default */
}

static te_value_t zero_point(onnx_ctx_t *c, uint32_t rank, int32_t axis) {
  if (!onnx_input(c, 2)) return te_scalar_int(&c->e, TE_I32, 0);
  te_value_t z = along_axis(c, 2, rank, axis);
  return z.id ? widen(c, z, zero_point_dtype(c)) : z;
}

/* i32 values saturated to `out` (UINT8 or INT8) and bound to output 0; the
 * i8 carries 128..255 as their wrapped bits. */
static tinyml_status_t saturate_out(onnx_ctx_t *c, te_value_t r, int32_t out) {
  int lo = out == ONNX_UINT8 ? 0 : -128, hi = out == ONNX_UINT8 ? 255 : 127;
  return onnx_set_out_typed(c, 0, te_cast(&c->e, te_clamp_int(&c->e, r, lo, hi), TE_I8), out);
}

static tinyml_status_t lower_quantize(onnx_ctx_t *c) {
  if (onnx_qdq_fuse(c) || c->error) return c->error;
  if (onnx_qdq_pool_fuse(c) || c->error) return c->error;
  te_value_t x = onnx_in(c, 0);
  int32_t axis, out = zero_point_dtype(c);
  if (!x.id || !quant_axis(c, x, &axis)) return c->error;
  if (x.type.elem != TE_F32) return onnx_fail(c, "only FLOAT input is supported");
  int64_t odt = onnx_attr_int(c, "output_dtype", 0);
  if (odt != 0 && odt != out) return onnx_fail(c, "output_dtype must match the zero point");
  if (out != ONNX_UINT8 && out != ONNX_INT8)
    return onnx_fail(c, "output type %s is not supported", onnx_dtype_name(out));
  te_value_t s = along_axis(c, 1, x.type.rank, axis);
  if (!s.id || onnx_input(c, 1)->dtype != ONNX_FLOAT) return onnx_fail(c, "the scale must be FLOAT");
  te_value_t scaled = te_divf(&c->e, x, s);
  te_value_t r = te_cast(&c->e, scaled, TE_I32);
  r = te_binary(&c->e, "tosa.add", r, zero_point(c, x.type.rank, axis));
  return saturate_out(c, r, out);
}

static tinyml_status_t lower_dequantize(onnx_ctx_t *c) {
  const onnx_value_t *xin = onnx_input(c, 0);
  te_value_t x = onnx_in(c, 0);
  int32_t axis;
  if (!x.id || !quant_axis(c, x, &axis)) return c->error;
  int32_t dt = xin->dtype;
  if (dt != ONNX_UINT8 && dt != ONNX_INT8 && dt != ONNX_INT32)
    return onnx_fail(c, "input type %s is not supported", onnx_dtype_name(dt));
  if (!onnx_zero_point_ok(c, 2, dt)) return c->error;
  te_value_t s = along_axis(c, 1, x.type.rank, axis);
  if (!s.id || onnx_input(c, 1)->dtype != ONNX_FLOAT) return onnx_fail(c, "the scale must be FLOAT");
  te_value_t v = te_binary(&c->e, "tosa.sub", widen(c, x, dt), zero_point(c, x.type.rank, axis));
  return onnx_set_out(c, 0, te_mul(&c->e, te_cast(&c->e, v, TE_F32), s, 0));
}

/* ---- integer matrix products ------------------------------------------- */

/* (x - zp) as exact f32 values: |value| <= 255 for 8-bit data. */
static te_value_t centred_f32(onnx_ctx_t *c, uint32_t x_in, uint32_t zp_in) {
  const onnx_value_t *xv = onnx_input(c, x_in);
  te_value_t x = onnx_in(c, x_in);
  if (!x.id) return x;
  if (xv->dtype != ONNX_UINT8 && xv->dtype != ONNX_INT8) {
    onnx_fail(c, "input %u: type %s is not supported", x_in, onnx_dtype_name(xv->dtype));
    return (te_value_t){0};
  }
  te_value_t w = widen(c, x, xv->dtype);
  const onnx_value_t *zv = onnx_input(c, zp_in);
  if (zv) {
    te_value_t z = onnx_in(c, zp_in);
    if (!z.id) return z;
    if (!onnx_zero_point_ok(c, zp_in, xv->dtype)) return (te_value_t){0};
    if (te_numel(&z.type) != 1) {
      onnx_fail(c, "only a per-tensor zero point is supported");
      return (te_value_t){0};
    }
    w = te_binary(&c->e, "tosa.sub", w, te_reshape(&c->e, widen(c, z, zv->dtype), 1, (int64_t[1]){1}));
  }
  return te_cast(&c->e, w, TE_F32);
}

/* a [.., M, K] x b [.., K, N] on exact f32 integers: every product is at
 * most 255 * 255, so sums of up to 258 terms stay below 2^24 and exact. */
static te_value_t integer_matmul(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  uint32_t ra = a.type.rank, rb = b.type.rank;
  if (ra < 2 || rb < 2 || a.type.dims[ra - 1] != b.type.dims[rb - 2]) {
    onnx_fail(c, "operands must be at least 2-D with matching inner dimensions");
    return (te_value_t){0};
  }
  int64_t m = a.type.dims[ra - 2], k = a.type.dims[ra - 1], n = b.type.dims[rb - 1];
  if (k > 258) {
    onnx_fail(c, "inner dimension %lld is above 258, where f32 sums stop being exact", (long long)k);
    return (te_value_t){0};
  }
  int64_t ba = te_numel(&a.type) / (m * k), bb = te_numel(&b.type) / (k * n);
  int64_t odims[TE_MAX_RANK];
  uint32_t orank = ra >= rb ? ra : rb;
  const te_type_t *big = ra >= rb ? &a.type : &b.type;
  for (uint32_t d = 0; d + 2 < orank; ++d) odims[d] = big->dims[d];
  odims[orank - 2] = m;
  odims[orank - 1] = n;
  te_value_t x, y;
  if (bb == 1) { /* b shared by every batch of a: one tall product */
    x = te_reshape(&c->e, a, 3, (int64_t[3]){1, ba * m, k});
    y = te_reshape(&c->e, b, 3, (int64_t[3]){1, k, n});
  } else if (ba == bb && ra == rb &&
             memcmp(a.type.dims, b.type.dims, sizeof(int64_t) * (ra - 2)) == 0) {
    x = te_reshape(&c->e, a, 3, (int64_t[3]){ba, m, k});
    y = te_reshape(&c->e, b, 3, (int64_t[3]){bb, k, n});
  } else {
    onnx_fail(c, "this batch broadcasting is not supported");
    return (te_value_t){0};
  }
  te_value_t ops[4] = {x, y, te_scalar_f32(&c->e, 0.0f), te_scalar_f32(&c->e, 0.0f)};
  te_type_t t = te_type(TE_F32, 3, (int64_t[3]){bb == 1 ? 1 : ba, bb == 1 ? ba * m : m, n});
  te_value_t r = te_op(&c->e, "tosa.matmul", ops, 4, NULL, &t);
  return te_reshape(&c->e, r, orank, odims);
}

static tinyml_status_t lower_matmul_integer(onnx_ctx_t *c) {
  te_value_t a = centred_f32(c, 0, 2), b = centred_f32(c, 1, 3);
  if (!a.id || !b.id) return c->error;
  te_value_t r = integer_matmul(c, a, b);
  return r.id ? onnx_set_out(c, 0, te_cast(&c->e, r, TE_I32)) : c->error;
}

/* A per-tensor run-time scale as a [1] f32 value. */
static te_value_t scalar_scale(onnx_ctx_t *c, uint32_t i) {
  const onnx_value_t *v = onnx_input(c, i);
  te_value_t s = onnx_in(c, i);
  if (!s.id) return s;
  if (v->dtype != ONNX_FLOAT || te_numel(&s.type) != 1) {
    onnx_fail(c, "only per-tensor FLOAT scales are supported");
    return (te_value_t){0};
  }
  return te_reshape(&c->e, s, 1, (int64_t[1]){1});
}

/* ---- the int8 kernels ---------------------------------------------------- */

static int const_zero_point(onnx_ctx_t *c, uint32_t i, int32_t *zp) {
  const onnx_value_t *v = onnx_input(c, i);
  *zp = 0;
  if (!v) return 1;
  const onnx_value_t *k = onnx_const_input(c, i);
  return k && onnx_numel(k->rank, k->dims) == 1 && onnx_qval_int(k, 0, zp);
}

/* QLinearConv / QLinearMatMul operands (x, x_scale, x_zp, w, w_scale,
 * w_zp, y_scale, y_zp[, B]) as the int8 kernel's parameters; 0 unless all
 * but x are constants and all but w's per tensor. */
static int qlinear_operands(onnx_ctx_t *c, int64_t oc_dim, onnx_qconv_t *q) {
  memset(q, 0, sizeof *q);
  const onnx_value_t *ws = onnx_const_input(c, 4), *yz = onnx_input(c, 7), *b = onnx_input(c, 8);
  const onnx_value_t *wz = onnx_input(c, 5);
  q->x = onnx_input(c, 0);
  q->w = onnx_const_input(c, 3);
  if (!q->x || !q->w || !ws || ws->dtype != ONNX_FLOAT || !onnx_const_float(c, 1, &q->x_scale) ||
      !onnx_const_float(c, 6, &q->y_scale) || !const_zero_point(c, 2, &q->x_zp) ||
      !const_zero_point(c, 7, &q->y_zp) || (wz && !onnx_const_input(c, 5)))
    return 0;
  q->y_dtype = yz ? yz->dtype : ONNX_UINT8;
  q->act_lo = q->y_dtype == ONNX_UINT8 ? 0 : -128;
  q->act_hi = q->y_dtype == ONNX_UINT8 ? 255 : 127;
  q->w_scale = ws->data;
  q->w_count = onnx_numel(ws->rank, ws->dims);
  q->w_zp = wz;
  if (b) {
    const onnx_value_t *bk = onnx_const_input(c, 8);
    if (!bk || bk->dtype != ONNX_INT32 || q->w->rank < 2 ||
        onnx_numel(bk->rank, bk->dims) != q->w->dims[oc_dim])
      return 0;
    q->bias = bk->data;
  }
  return 1;
}

/* 1 when the node ran on the int8 kernel (output bound), 0 to compute it
 * on exact f32 values instead; c->error on failure. */
static int qlinear_on_kernel(onnx_ctx_t *c, int matmul) {
  onnx_qconv_t q;
  te_value_t y;
  const onnx_value_t *x = onnx_input(c, 0), *w = onnx_input(c, 3);
  if ((x && !onnx_zero_point_ok(c, 2, x->dtype)) || (w && !onnx_zero_point_ok(c, 5, w->dtype)))
    return 0;
  if (!qlinear_operands(c, matmul ? 1 : 0, &q)) return 0;
  if (!(matmul ? onnx_qmatmul_s8(c, &q, &y) : onnx_qconv_s8(c, &q, &y))) return 0;
  onnx_set_out_typed(c, 0, y, q.y_dtype);
  return 1;
}

/* An exact f32 accumulator times the requantising scale m, rounded half to
 * even, plus the output zero point (input 7, per tensor), saturated to
 * `out` and bound to output 0. */
static tinyml_status_t requantise_out(onnx_ctx_t *c, te_value_t acc, te_value_t m, int32_t out) {
  te_value_t r = te_cast(&c->e, te_mul(&c->e, acc, m, 0), TE_I32);
  if (onnx_input(c, 7)) {
    te_value_t z = onnx_in(c, 7);
    if (!z.id) return c->error;
    r = te_binary(&c->e, "tosa.add", r, te_reshape(&c->e, widen(c, z, out), 1, (int64_t[1]){1}));
  }
  return saturate_out(c, r, out);
}

static tinyml_status_t lower_qlinear_matmul(onnx_ctx_t *c) {
  if (qlinear_on_kernel(c, 1) || c->error) return c->error;
  te_value_t a = centred_f32(c, 0, 2), b = centred_f32(c, 3, 5);
  te_value_t as = scalar_scale(c, 1), bs = scalar_scale(c, 4), ys = scalar_scale(c, 6);
  const onnx_value_t *yz = onnx_input(c, 7);
  if (!a.id || !b.id || !as.id || !bs.id || !ys.id) return c->error;
  int32_t out = yz ? yz->dtype : ONNX_UINT8;
  if (out != ONNX_UINT8 && out != ONNX_INT8)
    return onnx_fail(c, "output type %s is not supported", onnx_dtype_name(out));
  te_value_t acc = integer_matmul(c, a, b);
  if (!acc.id) return c->error;
  te_value_t m = te_mul(&c->e, te_mul(&c->e, as, bs, 0), te_unary(&c->e, "tosa.reciprocal", ys), 0);
  return requantise_out(c, acc, m, out);
}

/* DynamicQuantizeLinear: uint8 with a range that always includes 0. */
static tinyml_status_t lower_dynamic_quantize(onnx_ctx_t *c) {
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (x.type.elem != TE_F32) return onnx_fail(c, "only FLOAT input is supported");
  int64_t n = te_numel(&x.type), one[1] = {1};
  te_value_t flat = te_reshape(&c->e, x, 2, (int64_t[2]){1, n});
  te_value_t zero = te_scalar_f32(&c->e, 0.0f);
  te_value_t hi = te_binary(&c->e, "tosa.maximum", te_reshape(&c->e, te_reduce(&c->e, "tosa.reduce_max", flat, 1), 1, one), zero);
  te_value_t lo = te_binary(&c->e, "tosa.minimum", te_reshape(&c->e, te_reduce(&c->e, "tosa.reduce_min", flat, 1), 1, one), zero);
  te_value_t scale = te_divf(&c->e, te_binary(&c->e, "tosa.sub", hi, lo), te_scalar_f32(&c->e, 255.0f));
  te_value_t zpf = te_binary(&c->e, "tosa.sub", zero, te_divf(&c->e, lo, scale));
  te_value_t zp = te_cast(&c->e, te_clamp_f32(&c->e, zpf, 0.0f, 255.0f), TE_I32);
  te_value_t q = te_binary(&c->e, "tosa.add", te_cast(&c->e, te_divf(&c->e, x, scale), TE_I32), zp);
  q = te_cast(&c->e, te_clamp_int(&c->e, q, 0, 255), TE_I8);
  onnx_set_out_typed(c, 0, q, ONNX_UINT8);
  onnx_set_out(c, 1, te_reshape(&c->e, scale, 0, one));
  return onnx_set_out_typed(c, 2, te_reshape(&c->e, te_cast(&c->e, zp, TE_I8), 0, one), ONNX_UINT8);
}

/* ---- integer convolutions ------------------------------------------------ */

/* Conv on exact f32 integers: each product is at most 255 * 255, so a
 * window of up to 258 taps sums exactly. */
static te_value_t integer_conv(onnx_ctx_t *c, uint32_t x_in, uint32_t x_zp, uint32_t w_in,
                               uint32_t w_zp, te_value_t bias) {
  const onnx_value_t *xv = onnx_input(c, x_in), *wv = onnx_input(c, w_in);
  if (!xv || !wv || wv->rank < 3) {
    onnx_fail(c, "X and W are required");
    return (te_value_t){0};
  }
  int64_t taps = 1;
  for (uint32_t d = 1; d < wv->rank; ++d) taps *= wv->dims[d];
  if (taps > 258) {
    onnx_fail(c, "%lld taps per output exceed 258, where f32 sums stop being exact",
              (long long)taps);
    return (te_value_t){0};
  }
  conv_w_t w = {NULL, centred_f32(c, w_in, w_zp)};
  te_value_t x = centred_f32(c, x_in, x_zp);
  if (!w.rt.id || !x.id) return (te_value_t){0};
  if (!bias.id) {
    int64_t oc = wv->dims[0];
    te_type_t bt = te_type(TE_F32, 1, &oc);
    bias = te_splat_f32(&c->e, &bt, 0.0f);
  }
  return onnx_conv_f32(c, xv, wv, x, &w, bias);
}

static tinyml_status_t lower_conv_integer(onnx_ctx_t *c) {
  te_value_t y = integer_conv(c, 0, 2, 1, 3, (te_value_t){0});
  return y.id ? onnx_set_out(c, 0, te_cast(&c->e, y, TE_I32)) : c->error;
}

/* QLinearConv: the int32 bias joins the exact sum, then the result is
 * requantised with x_scale * w_scale / y_scale, rounding half to even. */
static tinyml_status_t lower_qlinear_conv(onnx_ctx_t *c) {
  if (qlinear_on_kernel(c, 0) || c->error) return c->error;
  te_value_t xs = scalar_scale(c, 1), ws = scalar_scale(c, 4), ys = scalar_scale(c, 6);
  const onnx_value_t *yz = onnx_input(c, 7), *bv = onnx_input(c, 8);
  if (!xs.id || !ws.id || !ys.id) return c->error;
  te_value_t bias = {0};
  if (bv) {
    if (bv->dtype != ONNX_INT32) return onnx_fail(c, "the bias must be INT32");
    te_value_t b = onnx_in(c, 8);
    if (!b.id) return c->error;
    bias = te_cast(&c->e, b, TE_F32); /* exact below 2^24 */
  }
  int32_t out = yz ? yz->dtype : ONNX_UINT8;
  if (out != ONNX_UINT8 && out != ONNX_INT8)
    return onnx_fail(c, "output type %s is not supported", onnx_dtype_name(out));
  te_value_t acc = integer_conv(c, 0, 2, 3, 5, bias);
  if (!acc.id) return c->error;
  return requantise_out(c, acc, te_divf(&c->e, te_mul(&c->e, xs, ws, 0), ys), out);
}

const onnx_lowering_t onnx_lowerings_quant[] = {
    {"ConvInteger", 10, 23, lower_conv_integer},
    {"QLinearConv", 10, 23, lower_qlinear_conv},
    {"DynamicQuantizeLinear", 11, 23, lower_dynamic_quantize},
    {"MatMulInteger", 10, 23, lower_matmul_integer},
    {"QLinearMatMul", 10, 23, lower_qlinear_matmul},
    {"QuantizeLinear", 10, 23, lower_quantize},
    {"DequantizeLinear", 10, 23, lower_dequantize},
    {NULL, 0, 0, NULL},
};
