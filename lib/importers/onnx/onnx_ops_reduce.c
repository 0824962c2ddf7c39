/* ONNX lowerings: reduce family (Reduce*, ArgMax/ArgMin, CumSum).  See
 * onnx_lower.h for the contract.  Axes must be constants; tosa.reduce_*
 * reduce one axis at a time and keep it as 1, so keepdims=0 is a final
 * reshape. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_lower.h"

typedef enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LOGSUMEXP,
               R_SUMSQUARE } reduce_kind_t;

/* Which axes to reduce, as a bit set; 0 with *noop set means identity. */
static int reduce_axes(onnx_ctx_t *c, uint32_t rank, int axes_from_input, uint32_t *mask,
                       int *noop) {
  int64_t axes[TE_MAX_RANK];
  int64_t n;
  *noop = 0;
  if (axes_from_input) {
    n = onnx_input(c, 1) ? onnx_const_ints(c, 1, axes, TE_MAX_RANK) : 0;
    if (n < 0) return onnx_fail(c, "axes must be a constant"), 0;
  } else {
    n = onnx_attr_ints(c, "axes", axes, TE_MAX_RANK);
    if (c->error) return 0;
  }
  *mask = 0;
  if (n <= 0) {
    if (axes_from_input && onnx_attr_int(c, "noop_with_empty_axes", 0)) *noop = 1;
    else *mask = rank ? (1u << rank) - 1 : 0;
    return 1;
  }
  for (int64_t i = 0; i < n; ++i) {
    int32_t a = onnx_axis(axes[i], rank);
    if (a < 0) return onnx_fail(c, "axis %lld out of range", (long long)axes[i]), 0;
    *mask |= 1u << a;
  }
  return 1;
}

static te_value_t reduce_all(onnx_ctx_t *c, const char *op, te_value_t x, uint32_t mask) {
  for (uint32_t d = 0; d < x.type.rank; ++d)
    if ((mask >> d) & 1) x = te_reduce(&c->e, op, x, (int32_t)d);
  return x;
}

static te_value_t f32_const(onnx_ctx_t *c, float v) { return te_scalar_f32(&c->e, v); }

/* tosa.reduce_max starts from -FLT_MAX (reduce_min from FLT_MAX), so a
 * float row all -inf (all +inf) would give -FLT_MAX: the row's own
 * infinity is put back, as numpy's max gives it.  A NaN fails the test
 * and keeps the propagated NaN. */
static te_value_t reduce_extreme(onnx_ctx_t *c, te_value_t x, uint32_t mask, int is_min) {
  te_value_t y = reduce_all(c, is_min ? "tosa.reduce_min" : "tosa.reduce_max", x, mask);
  if (x.type.elem != TE_F32) return y;
  te_value_t inf = f32_const(c, is_min ? INFINITY : -INFINITY);
  te_value_t all = reduce_all(c, "tosa.reduce_all", te_binary(&c->e, "tosa.equal", x, inf), mask);
  return te_select(&c->e, all, inf, y);
}

/* log(sum(exp(x))) computed as m + log(sum(exp(x - m))), m the maximum, so
 * large inputs do not overflow.  As the reference, a non-finite maximum
 * shifts by 0: a row with +inf gives +inf, where inf - inf would be NaN. */
static te_value_t log_sum_exp(onnx_ctx_t *c, te_value_t x, uint32_t mask) {
  te_value_t m = reduce_all(c, "tosa.reduce_max", x, mask);
  te_value_t finite = te_binary(&c->e, "tosa.equal", te_binary(&c->e, "tosa.sub", m, m), f32_const(c, 0.0f));
  m = te_select(&c->e, finite, m, f32_const(c, 0.0f));
  te_value_t e = te_unary(&c->e, "tosa.exp", te_binary(&c->e, "tosa.sub", x, m));
  te_value_t s = te_unary(&c->e, "tosa.log", reduce_all(c, "tosa.reduce_sum", e, mask));
  return te_binary(&c->e, "tosa.add", s, m);
}

static int kind_allows_int(reduce_kind_t k) {
  return k == R_SUM || k == R_MAX || k == R_MIN || k == R_PROD || k == R_L1 || k == R_SUMSQUARE;
}

static tinyml_status_t lower_reduce(onnx_ctx_t *c, reduce_kind_t k, int input_axes_from) {
  onnx_value_t *v = onnx_input(c, 0);
  if (!v) return onnx_fail(c, "input 0 is missing");
  int32_t dtype = v->dtype;
  uint32_t rank = v->rank, mask;
  int noop;
  if (!reduce_axes(c, rank, c->opset >= input_axes_from, &mask, &noop)) return c->error;
  int is_int = dtype == ONNX_INT32 || dtype == ONNX_INT8 || dtype == ONNX_INT16;
  if (dtype != ONNX_FLOAT && !(is_int && kind_allows_int(k)))
    return onnx_fail(c, "input type %s is not supported", onnx_dtype_name(dtype));
  if (dtype == ONNX_INT8 && k != R_MAX && k != R_MIN)
    return onnx_fail(c, "INT8 is supported for ReduceMax and ReduceMin only");
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (noop) {
    if (k != R_SUM && k != R_MEAN && k != R_MAX && k != R_MIN && k != R_PROD)
      return onnx_fail(c, "noop_with_empty_axes is not supported for this reduction");
    return onnx_set_out_typed(c, 0, x, dtype);
  }
  int64_t count = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    if (x.type.dims[d] == 0) return onnx_fail(c, "empty inputs are not supported");
    if ((mask >> d) & 1) count *= x.type.dims[d];
  }
  te_value_t y;
  switch (k) {
    case R_MAX: y = reduce_extreme(c, x, mask, 0); break;
    case R_MIN: y = reduce_extreme(c, x, mask, 1); break;
    case R_PROD: y = reduce_all(c, "tosa.reduce_product", x, mask); break;
    case R_LOGSUMEXP: y = log_sum_exp(c, x, mask); break;
    case R_L1: y = reduce_all(c, "tosa.reduce_sum", te_unary(&c->e, "tosa.abs", x), mask); break;
    case R_L2: case R_SUMSQUARE:
      y = reduce_all(c, "tosa.reduce_sum", te_mul(&c->e, x, x, 0), mask);
      if (k == R_L2) y = te_binary(&c->e, "tosa.pow", y, f32_const(c, 0.5f));
      break;
    default:
      y = reduce_all(c, "tosa.reduce_sum", x, mask);
      if (k == R_MEAN) y = te_mul(&c->e, y, f32_const(c, 1.0f / (float)count), 0);
      if (k == R_LOGSUM) y = te_unary(&c->e, "tosa.log", y);
  }
  if (!onnx_attr_int(c, "keepdims", 1)) {
    int64_t dims[TE_MAX_RANK];
    uint32_t r = 0;
    for (uint32_t d = 0; d < rank; ++d)
      if (!((mask >> d) & 1)) dims[r++] = x.type.dims[d];
    y = te_reshape(&c->e, y, r, dims);
  }
  return onnx_set_out_typed(c, 0, y, dtype);
}

#define REDUCE(fn, kind, from)                                                  \
  static tinyml_status_t fn(onnx_ctx_t *c) { return lower_reduce(c, kind, from); }
REDUCE(lower_reduce_sum, R_SUM, 13)
REDUCE(lower_reduce_mean, R_MEAN, 18)
REDUCE(lower_reduce_max, R_MAX, 18)
REDUCE(lower_reduce_min, R_MIN, 18)
REDUCE(lower_reduce_prod, R_PROD, 18)
REDUCE(lower_reduce_l1, R_L1, 18)
REDUCE(lower_reduce_l2, R_L2, 18)
REDUCE(lower_reduce_log_sum, R_LOGSUM, 18)
REDUCE(lower_reduce_log_sum_exp, R_LOGSUMEXP, 18)
REDUCE(lower_reduce_sum_square, R_SUMSQUARE, 18)

/* ---- ArgMax, ArgMin ------------------------------------------------------- */

static te_value_t reverse(onnx_ctx_t *c, te_value_t x, int32_t axis) {
  char props[32];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  return te_op(&c->e, "tosa.reverse", &x, 1, props, &x.type);
}

/* The first (or last) index along `axis` of a float x's maximum, as
 * numpy's argmax: the first NaN when there is one, and index 0 of a row all
 * -inf.  tosa.argmax compares from -FLT_MAX, so it would skip a -FLT_MAX
 * after a leading -inf: the index is instead the least (greatest) position
 * holding the row's maximum, or a NaN. */
static te_value_t argmax_f32(onnx_ctx_t *c, te_value_t x, int32_t axis, int last) {
  int64_t n = x.type.dims[axis];
  te_value_t m = reduce_extreme(c, x, 1u << axis, 0);
  te_value_t hit = te_binary(&c->e, "tosa.logical_or", te_binary(&c->e, "tosa.equal", x, m),
                             te_unary(&c->e, "tosa.logical_not", te_binary(&c->e, "tosa.equal", x, x)));
  int32_t *iota = tinyml__calloc(c->allocator, (size_t)n + 1, 4, 4);
  if (!iota) return onnx_oom(c), (te_value_t){0};
  for (int64_t i = 0; i < n; ++i) iota[i] = (int32_t)i;
  int64_t d[TE_MAX_RANK];
  for (uint32_t k = 0; k < x.type.rank; ++k) d[k] = k == (uint32_t)axis ? n : 1;
  te_type_t it = te_type(TE_I32, x.type.rank, d);
  te_value_t pos = te_const(&c->e, &it, iota);
  tinyml__free(c->allocator, iota);
  te_value_t none = te_scalar_int(&c->e, TE_I32, last ? -1 : n);
  te_value_t y = te_reduce(&c->e, last ? "tosa.reduce_max" : "tosa.reduce_min",
                           te_select(&c->e, hit, pos, none), axis);
  int64_t od[TE_MAX_RANK];
  uint32_t r = 0;
  for (uint32_t k = 0; k < x.type.rank; ++k)
    if (k != (uint32_t)axis) od[r++] = x.type.dims[k];
  return te_reshape(&c->e, y, r, od);
}

/* tosa.argmax keeps the first of equal maxima, as ONNX does by default;
 * the last one is the first of the reversed axis. */
static tinyml_status_t lower_arg(onnx_ctx_t *c, int is_min) {
  onnx_value_t *v = onnx_input(c, 0);
  if (!v) return onnx_fail(c, "input 0 is missing");
  if (v->dtype != ONNX_FLOAT && v->dtype != ONNX_INT32 && v->dtype != ONNX_INT8)
    return onnx_fail(c, "input type %s is not supported", onnx_dtype_name(v->dtype));
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", 0), v->rank);
  if (axis < 0) return onnx_fail(c, "axis out of range");
  int last = (int)onnx_attr_int(c, "select_last_index", 0);
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  int64_t n = x.type.dims[axis];
  if (n == 0) return onnx_fail(c, "empty inputs are not supported");
  if (is_min) /* order-reversing and exact: -x for floats, ~x = -x-1 for ints */
    x = x.type.elem == TE_F32 ? te_mul(&c->e, x, f32_const(c, -1.0f), 0)
                              : te_unary(&c->e, "tosa.bitwise_not", x);
  te_value_t y;
  if (x.type.elem == TE_F32) {
    y = argmax_f32(c, x, axis, last);
    if (!y.id) return c->error;
  } else {
    if (last) x = reverse(c, x, axis);
    y = te_argmax(&c->e, x, axis);
    if (last) y = te_binary(&c->e, "tosa.sub", te_scalar_int(&c->e, TE_I32, n - 1), y);
  }
  if (onnx_attr_int(c, "keepdims", 1)) {
    int64_t dims[TE_MAX_RANK];
    memcpy(dims, x.type.dims, sizeof dims);
    dims[axis] = 1;
    y = te_reshape(&c->e, y, x.type.rank, dims);
  }
  return onnx_set_out(c, 0, te_cast(&c->e, y, TE_I64));
}

static tinyml_status_t lower_argmax(onnx_ctx_t *c) { return lower_arg(c, 0); }
static tinyml_status_t lower_argmin(onnx_ctx_t *c) { return lower_arg(c, 1); }

/* ---- CumSum --------------------------------------------------------------- */

/* x shifted by s along axis, zeros entering at the front. */
static te_value_t shift(onnx_ctx_t *c, te_value_t x, int32_t axis, int64_t s) {
  uint32_t r = x.type.rank;
  int64_t start[TE_MAX_RANK] = {0}, pads[2 * TE_MAX_RANK] = {0};
  te_type_t t = x.type;
  t.dims[axis] -= s;
  te_value_t ops[3] = {x, te_shape(&c->e, r, start), te_shape(&c->e, r, t.dims)};
  te_value_t y = te_op(&c->e, "tosa.slice", ops, 3, NULL, &t);
  pads[2 * axis] = s;
  te_value_t zero = x.type.elem == TE_F32 ? f32_const(c, 0.0f) : te_scalar_int(&c->e, x.type.elem, 0);
  te_value_t pops[3] = {y, te_shape(&c->e, 2 * r, pads), zero};
  return te_op(&c->e, "tosa.pad", pops, 3, NULL, &x.type);
}

/* Inclusive prefix sums by doubling: log2(n) shifted adds. */
static tinyml_status_t lower_cumsum(onnx_ctx_t *c) {
  onnx_value_t *v = onnx_input(c, 0);
  if (!v) return onnx_fail(c, "input 0 is missing");
  if (v->dtype != ONNX_FLOAT && v->dtype != ONNX_INT32)
    return onnx_fail(c, "input type %s is not supported", onnx_dtype_name(v->dtype));
  int64_t a;
  if (onnx_const_ints(c, 1, &a, 1) != 1) return onnx_fail(c, "axis must be a constant scalar");
  int32_t axis = onnx_axis(a, v->rank);
  if (axis < 0) return onnx_fail(c, "axis out of range");
  int rev = (int)onnx_attr_int(c, "reverse", 0), excl = (int)onnx_attr_int(c, "exclusive", 0);
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  int64_t n = x.type.dims[axis];
  if (te_numel(&x.type) == 0) return onnx_fail(c, "empty inputs are not supported");
  if (rev) x = reverse(c, x, axis);
  if (excl && n > 1) x = shift(c, x, axis, 1);
  else if (excl) x = te_binary(&c->e, "tosa.sub", x, x);
  for (int64_t s = 1; s < n; s *= 2) x = te_binary(&c->e, "tosa.add", x, shift(c, x, axis, s));
  if (rev) x = reverse(c, x, axis);
  return onnx_set_out(c, 0, x);
}

const onnx_lowering_t onnx_lowerings_reduce[] = {
    {"ReduceSum", 1, 23, lower_reduce_sum},
    {"ReduceMean", 1, 23, lower_reduce_mean},
    {"ReduceMax", 1, 23, lower_reduce_max},
    {"ReduceMin", 1, 23, lower_reduce_min},
    {"ReduceProd", 1, 23, lower_reduce_prod},
    {"ReduceL1", 1, 23, lower_reduce_l1},
    {"ReduceL2", 1, 23, lower_reduce_l2},
    {"ReduceLogSum", 1, 23, lower_reduce_log_sum},
    {"ReduceLogSumExp", 1, 23, lower_reduce_log_sum_exp},
    {"ReduceSumSquare", 1, 23, lower_reduce_sum_square},
    {"ArgMax", 1, 23, lower_argmax},
    {"ArgMin", 1, 23, lower_argmin},
    {"CumSum", 11, 23, lower_cumsum},
    {NULL, 0, 0, NULL},
};
