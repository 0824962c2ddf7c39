/* L2_POOL_2D, FLOOR_MOD, CUMSUM and BROADCAST_ARGS, each as TFLite's
 * reference kernel computes it (TFLite Micro's for int8 CUMSUM). */
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "tfl_lower.h"
#include "tfl_quant.h"

enum { OPT_POOL2D = 5, OPT_CUMSUM = 102 };
enum { MAX_CUMSUM_DEPTH = 2048 }; /* its [depth, depth] matrix stays <= 16 MiB */

/* ---- L2_POOL_2D -------------------------------------------------------- */

typedef struct pool {
  int same, act;
  int64_t stride[2], kernel[2], pad[4]; /* pad: top, bottom, left, right */
} pool_t;

static int read_pool(tfl_ctx_t *c, pool_t *p) {
  const tfl_table_t *o = tfl_options(c, OPT_POOL2D);
  int bad = 0;
  if (!o) return 0;
  p->same = tfl_table_i8(o, 0, 0, &bad) == 0;
  p->stride[1] = tfl_table_i32(o, 1, 1, &bad);
  p->stride[0] = tfl_table_i32(o, 2, 1, &bad);
  p->kernel[1] = tfl_table_i32(o, 3, 0, &bad);
  p->kernel[0] = tfl_table_i32(o, 4, 0, &bad);
  p->act = tfl_table_i8(o, 5, 0, &bad);
  for (int i = 0; i < 2; ++i)
    bad |= p->stride[i] < 1 || p->kernel[i] < 1 || p->stride[i] > 4096 || p->kernel[i] > 4096;
  if (bad) tfl_fail(c, "malformed options, or an invalid stride or filter size");
  return !bad;
}

/* TFLite's output size and leading padding per axis; the trailing pad
 * makes TOSA's window count exact, and a negative one becomes a slice of
 * input TFLite never reads. */
static te_value_t pool_input(tfl_ctx_t *c, pool_t *p, te_value_t x, const int64_t *odims) {
  int64_t size[4] = {x.type.dims[0], x.type.dims[1], x.type.dims[2], x.type.dims[3]};
  for (int ax = 0; ax < 2; ++ax) {
    int64_t in = x.type.dims[1 + ax], s = p->stride[ax], k = p->kernel[ax];
    int64_t want = p->same ? (in + s - 1) / s : (in - k + s) / s, out = odims[1 + ax];
    if (want != out || out < 1) {
      tfl_fail(c, "output size %lld along %s disagrees with the input, filter and stride "
                  "(expected %lld)", (long long)out, ax ? "width" : "height", (long long)want);
      return (te_value_t){0};
    }
    int64_t total = (out - 1) * s + k - in;
    p->pad[2 * ax] = p->same && total > 0 ? total / 2 : 0;
    p->pad[2 * ax + 1] = total - p->pad[2 * ax];
    if (p->pad[2 * ax + 1] < 0) size[1 + ax] += p->pad[2 * ax + 1], p->pad[2 * ax + 1] = 0;
    if (p->pad[2 * ax] >= k || p->pad[2 * ax + 1] >= k) {
      tfl_fail(c, "the padding is as large as the filter");
      return (te_value_t){0};
    }
  }
  if (size[1] == x.type.dims[1] && size[2] == x.type.dims[2]) return x;
  return te_slice(&c->e, x, (int64_t[4]){0, 0, 0, 0}, size);
}

/* sqrt(sum of squares / in-bounds count): TOSA's avg_pool2d leaves the
 * padding out of its divisor, as TFLite's count does. */
tinyml_status_t tfl_lower_l2_pool(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  pool_t p = {0};
  if (!in || !out || in->rank != 4 || out->rank != 4 || in->shape[0] != out->shape[0] ||
      in->shape[3] != out->shape[3])
    return tfl_fail(c, "expects 4-D NHWC input and output with the same batch and channels");
  if (in->type != TFL_FLOAT32 || out->type != TFL_FLOAT32)
    return tfl_fail(c, "unsupported types %s -> %s (only FLOAT32)", tfl_type_name(in->type),
                    tfl_type_name(out->type));
  if (!read_pool(c, &p)) return c->error;
  int64_t odims[4] = {out->shape[0], out->shape[1], out->shape[2], out->shape[3]};
  te_value_t x = tfl_value_in(c, 0);
  if (x.id) x = pool_input(c, &p, x, odims);
  if (!x.id) return c->error;
  char pad[96], stride[64], kernel[64], props[300];
  te_array_attr(64, p.pad, 4, pad, sizeof pad);
  te_array_attr(64, p.stride, 2, stride, sizeof stride);
  te_array_attr(64, p.kernel, 2, kernel, sizeof kernel);
  snprintf(props, sizeof props, "acc_type = f32, kernel = %s, pad = %s, stride = %s", kernel,
           pad, stride);
  te_value_t ops[3] = {te_mul(&c->e, x, x, 0), te_scalar_f32(&c->e, 0.0f),
                       te_scalar_f32(&c->e, 0.0f)};
  te_type_t t = te_type(TE_F32, 4, odims);
  te_value_t mean = te_op(&c->e, "tosa.avg_pool2d", ops, 3, props, &t);
  te_value_t y = te_unary(&c->e, "tosa.reciprocal", te_unary(&c->e, "tosa.rsqrt", mean));
  return tfl_set_out(c, 0, tfl_activation(c, y, out, p.act));
}

/* ---- FLOOR_MOD --------------------------------------------------------- */

/* r moved into b's sign when nonzero and of the other sign, as TFLite's
 * FloorMod corrects the remainder of a truncating division. */
static te_value_t floor_fix(tfl_ctx_t *c, te_value_t r, te_value_t b, te_value_t zero) {
  te_value_t rneg = te_binary(&c->e, "tosa.greater", zero, r);
  te_value_t bneg = te_binary(&c->e, "tosa.greater", zero, b);
  te_value_t nz = te_unary(&c->e, "tosa.logical_not", te_binary(&c->e, "tosa.equal", r, zero));
  te_value_t fix = te_binary(&c->e, "tosa.logical_and", nz,
                             te_binary(&c->e, "tosa.logical_xor", rneg, bneg));
  return te_select(&c->e, fix, te_binary(&c->e, "tosa.add", r, b), r);
}

/* int32: x - trunc(x / y) * y is C's %, exactly (the compiler gives a
 * division by 0, which TFLite refuses at run time, a divisor of 1).
 * float32: TFLite's fmod, as x - trunc(x / y) * y in float. */
tinyml_status_t tfl_lower_floor_mod(tfl_ctx_t *c) {
  const tfl_tensor_t *a = tfl_in(c, 0), *b = tfl_in(c, 1), *out = tfl_out(c, 0);
  if (!a || !b || !out) return tfl_fail(c, "missing operand");
  int fl = a->type == TFL_FLOAT32;
  if (a->type != b->type || a->type != out->type || (!fl && a->type != TFL_INT32) ||
      tfl_is_quantized(a))
    return tfl_fail(c, "unsupported types %s, %s -> %s (FLOAT32 and INT32 are supported)",
                    tfl_type_name(a->type), tfl_type_name(b->type), tfl_type_name(out->type));
  te_value_t x = tfl_value_in(c, 0), y = tfl_value_in(c, 1);
  if (!x.id || !y.id) return c->error;
  te_value_t zero = fl ? te_scalar_f32(&c->e, 0.0f) : te_scalar_int(&c->e, TE_I32, 0), t;
  if (fl) {
    te_value_t q = te_divf(&c->e, x, y);
    t = te_select(&c->e, te_binary(&c->e, "tosa.greater", zero, q), te_unary(&c->e, "tosa.ceil", q),
                  te_unary(&c->e, "tosa.floor", q));
  } else {
    t = te_binary(&c->e, "tosa.intdiv", x, y);
  }
  te_value_t r = te_binary(&c->e, "tosa.sub", x, te_mul(&c->e, t, y, 0));
  return tfl_set_out(c, 0, floor_fix(c, r, y, zero));
}

/* ---- CUMSUM ------------------------------------------------------------ */

/* The [1, d, d] matrix whose column j marks the elements sum j takes. */
static te_value_t sum_matrix(tfl_ctx_t *c, int64_t d, te_elem_t elem, int exclusive,
                             int reverse) {
  size_t es = te_elem_size(elem);
  uint8_t *m = tinyml__calloc(c->allocator, (size_t)(d * d), es, 16);
  if (!m) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  const float one_f = 1.0f;
  const int8_t one_i = 1;
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j) {
      int take = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
      if (take) memcpy(m + (size_t)(i * d + j) * es, elem == TE_F32 ? (const void *)&one_f
                                                                   : (const void *)&one_i, es);
    }
  te_type_t t = te_type(elem, 3, (int64_t[3]){1, d, d});
  te_value_t v = te_const(&c->e, &t, m);
  tinyml__free(c->allocator, m);
  return v;
}

/* Sums along `axis` as one matmul: x seen as [pre, d, post], moved to
 * [1, pre * post, d], times the sum matrix, and moved back.  int8 sums
 * (x - zp) in int32; floats sum in a different order than TFLite's loop,
 * within rounding. */
static te_value_t prefix_sums(tfl_ctx_t *c, te_value_t x, int32_t axis, int exclusive,
                              int reverse, int64_t zp) {
  int64_t pre = 1, d = x.type.dims[axis], post = 1;
  for (uint32_t i = 0; i < x.type.rank; ++i)
    if ((int32_t)i < axis) pre *= x.type.dims[i];
    else if ((int32_t)i > axis) post *= x.type.dims[i];
  static const int32_t swap[3] = {0, 2, 1};
  te_value_t v = te_reshape(&c->e, x, 3, (int64_t[3]){pre, d, post});
  v = te_reshape(&c->e, te_transpose(&c->e, v, swap), 3, (int64_t[3]){1, pre * post, d});
  int fl = x.type.elem == TE_F32;
  te_value_t ops[4] = {v, sum_matrix(c, d, x.type.elem, exclusive, reverse),
                       fl ? te_scalar_f32(&c->e, 0.0f) : te_scalar_int(&c->e, TE_I8, zp),
                       fl ? te_scalar_f32(&c->e, 0.0f) : te_scalar_int(&c->e, TE_I8, 0)};
  if (!ops[1].id) return ops[1];
  te_type_t st = te_type(fl ? TE_F32 : TE_I32, 3, (int64_t[3]){1, pre * post, d});
  v = te_op(&c->e, "tosa.matmul", ops, 4, NULL, &st);
  v = te_transpose(&c->e, te_reshape(&c->e, v, 3, (int64_t[3]){pre, post, d}), swap);
  return te_reshape(&c->e, v, x.type.rank, x.type.dims);
}

/* TFLite Micro's int8 CUMSUM: each (x - zp) << 20 halved exactly (its
 * input multiplier is 0.5), summed in int32 onto an accumulator that
 * starts at -zp << 19 rather than 0 (as TFLM's kernel has it), then
 * rescaled by 2 * input_scale / (2^20 * output_scale). */
static te_value_t cumsum_int8(tfl_ctx_t *c, te_value_t sums, const tfl_tensor_t *in,
                              const tfl_tensor_t *out) {
  te_value_t acc = te_binary(&c->e, "tosa.sub", sums, te_scalar_int(&c->e, TE_I32, tfl_zero_point(in)));
  acc = te_mul(&c->e, acc, te_scalar_int(&c->e, TE_I32, 1 << 19), 0);
  double real = 2.0 * (double)tfl_scale(in) / ((double)(1 << 20) * (double)tfl_scale(out));
  return tfl_requantize(c, acc, &real, 1, out);
}

tinyml_status_t tfl_lower_cumsum(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  const tfl_table_t *o = tfl_options(c, OPT_CUMSUM);
  int64_t axis = 0;
  uint32_t n = 0;
  int bad = 0;
  if (!o || !in || !out) return c->error ? c->error : tfl_fail(c, "missing operand");
  int exclusive = tfl_table_bool(o, 0, 0, &bad), reverse = tfl_table_bool(o, 1, 0, &bad);
  if (bad) return tfl_fail(c, "malformed options");
  int q = in->type == TFL_INT8 && tfl_is_quantized(in) && tfl_is_quantized(out) &&
          in->quant.scale_count == 1 && out->quant.scale_count == 1;
  if (in->type != out->type || (in->type != TFL_FLOAT32 && !q))
    return tfl_fail(c, "unsupported types %s -> %s (FLOAT32 and per-tensor INT8 are supported)",
                    tfl_type_name(in->type), tfl_type_name(out->type));
  if (!tfl_const_ints(c, 1, &axis, 1, &n)) return c->error;
  if (n != 1 || axis < -(int64_t)in->rank || axis >= (int64_t)in->rank)
    return tfl_fail(c, "the axis must be one value in [-%u, %u)", in->rank, in->rank);
  if (axis < 0) axis += in->rank;
  if (in->shape[axis] > MAX_CUMSUM_DEPTH)
    return tfl_fail(c, "axis length %lld is over %d", (long long)in->shape[axis], MAX_CUMSUM_DEPTH);
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  te_value_t y = prefix_sums(c, x, (int32_t)axis, exclusive, reverse, q ? tfl_zero_point(in) : 0);
  if (y.id && q) y = cumsum_int8(c, y, in, out);
  return y.id ? tfl_set_out(c, 0, y) : c->error;
}

/* ---- BROADCAST_ARGS ---------------------------------------------------- */

/* Both shapes constant (the usual case): the result is folded. */
static tinyml_status_t broadcast_args_const(tfl_ctx_t *c, const te_type_t *t) {
  int64_t a[TE_MAX_RANK], b[TE_MAX_RANK], r[TE_MAX_RANK];
  int32_t r32[TE_MAX_RANK];
  uint32_t na = 0, nb = 0;
  if (!tfl_const_ints(c, 0, a, TE_MAX_RANK, &na) || !tfl_const_ints(c, 1, b, TE_MAX_RANK, &nb))
    return c->error;
  uint32_t n = na > nb ? na : nb;
  if (t->dims[0] != n) return tfl_fail(c, "the output must hold %u values", n);
  for (uint32_t i = 0; i < n; ++i) {
    int64_t x = i < n - na ? 1 : a[i - (n - na)], y = i < n - nb ? 1 : b[i - (n - nb)];
    if (x != y && x != 1 && y != 1)
      return tfl_fail(c, "shapes do not broadcast: %lld against %lld at dimension %u",
                      (long long)x, (long long)y, i);
    r[i] = x == 1 ? y : x;
    r32[i] = (int32_t)r[i];
  }
  return tfl_set_out(c, 0, te_const(&c->e, t, t->elem == TE_I64 ? (const void *)r : (const void *)r32));
}

/* Shape i padded with leading 1s to n values. */
static te_value_t leading_ones(tfl_ctx_t *c, uint32_t i, int64_t n) {
  te_value_t v = tfl_value_in(c, i);
  if (!v.id || v.type.dims[0] == n) return v;
  int64_t k = n - v.type.dims[0];
  te_type_t t = te_type(v.type.elem, 1, &k);
  te_value_t parts[2] = {te_splat_int(&c->e, &t, 1), v};
  return te_concat(&c->e, parts, 2, 0);
}

/* At run time, each dimension is the other shape's where one is 1.  (Shapes
 * that do not broadcast, which TFLite refuses, give the second's.) */
tinyml_status_t tfl_lower_broadcast_args(tfl_ctx_t *c) {
  const tfl_tensor_t *a = tfl_in(c, 0), *b = tfl_in(c, 1), *out = tfl_out(c, 0);
  te_type_t t;
  if (!a || !b || !out || !tfl_te_type(out, &t)) return tfl_fail(c, "missing or unsupported operand");
  if ((a->type != TFL_INT32 && a->type != TFL_INT64) || b->type != a->type ||
      out->type != a->type || a->rank != 1 || b->rank != 1 || out->rank != 1)
    return tfl_fail(c, "shapes must be INT32 or INT64 vectors of one type, not %s, %s -> %s",
                    tfl_type_name(a->type), tfl_type_name(b->type), tfl_type_name(out->type));
  if (a->shape[0] > TE_MAX_RANK || b->shape[0] > TE_MAX_RANK)
    return tfl_fail(c, "shapes of more than %d dimensions are not supported", TE_MAX_RANK);
  if (a->data && b->data) return broadcast_args_const(c, &t);
  int64_t n = a->shape[0] > b->shape[0] ? a->shape[0] : b->shape[0];
  if (t.dims[0] != n) return tfl_fail(c, "the output must hold %lld values", (long long)n);
  te_value_t x = leading_ones(c, 0, n), y = leading_ones(c, 1, n);
  if (!x.id || !y.id) return c->error;
  te_value_t one = te_scalar_int(&c->e, x.type.elem, 1);
  return tfl_set_out(c, 0, te_select(&c->e, te_binary(&c->e, "tosa.equal", x, one), y, x));
}
