/* ONNX lowerings: Det and ReverseSequence, operators of no larger family.
 * See onnx_lower.h for the contract. */
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_const_util.h"
#include "onnx_elt_util.h"

/* ---- Det ---- */

/* Column j of a batch of rows ([B, n]), as [B, 1]. */
static te_value_t col(onnx_ctx_t *c, te_value_t row, int64_t j) {
  int64_t start[2] = {0, j}, size[2] = {row.type.dims[0], 1};
  return te_slice(&c->e, row, start, size);
}

/* Step k of the LU factorisation with partial pivoting, as Eigen's
 * PartialPivLU (onnxruntime's Det) does it: the first row of largest
 * |a_ik| becomes the pivot row (a swap flips *sign), then every row below
 * loses l_i = a_ik / a_kk times it.  A zero pivot column is left as is.
 * Whole rows are updated: the columns before k are never read again. */
static void lu_step(onnx_ctx_t *c, te_value_t *rows, int64_t n, int64_t k, te_value_t *sign) {
  te_value_t best = rows[k], big = un(c, "tosa.abs", col(c, rows[k], k)), pick[8];
  for (int64_t i = k + 1; i < n; ++i) {
    te_value_t a = un(c, "tosa.abs", col(c, rows[i], k));
    pick[i] = bin(c, "tosa.greater", a, big);
    best = te_select(&c->e, pick[i], rows[i], best);
    big = te_select(&c->e, pick[i], a, big);
  }
  /* Only the last row that beat the running maximum is the pivot. */
  te_value_t later = {0};
  for (int64_t i = n - 1; i > k; --i) {
    te_value_t is = later.id ? bin(c, "tosa.logical_and", pick[i], lnot(c, later)) : pick[i];
    later = later.id ? bin(c, "tosa.logical_or", later, pick[i]) : pick[i];
    rows[i] = te_select(&c->e, is, rows[k], rows[i]);
  }
  if (later.id) *sign = te_select(&c->e, later, neg(c, *sign), *sign);
  rows[k] = best;
  te_value_t piv = col(c, best, k), zero = bin(c, "tosa.equal", piv, kf(c, piv, 0.0f));
  for (int64_t i = k + 1; i < n; ++i) {
    te_value_t a = col(c, rows[i], k), l = te_select(&c->e, zero, a, fdiv(c, a, piv));
    rows[i] = sub(c, rows[i], mul(c, l, best));
  }
}

/* sign * u_00 * u_11 * ..., multiplied left to right as Eigen does. */
static te_value_t det_lu(onnx_ctx_t *c, te_value_t x, int64_t n) {
  te_value_t rows[8];
  int64_t b = x.type.dims[0];
  for (int64_t i = 0; i < n; ++i)
    rows[i] = te_slice(&c->e, x, (int64_t[2]){0, i * n}, (int64_t[2]){b, n});
  te_value_t sign = kf(c, rows[0], 1.0f);
  for (int64_t k = 0; k + 1 < n; ++k) lu_step(c, rows, n, k, &sign);
  te_value_t d = col(c, rows[0], 0);
  for (int64_t k = 1; k < n; ++k) d = mul(c, d, col(c, rows[k], k));
  return mul(c, sign, d);
}

/* Unrolled at compile time, so the matrices are kept small. */
static tinyml_status_t lower_det(onnx_ctx_t *c) {
  const onnx_value_t *v = onnx_input(c, 0);
  if (!v || v->dtype != ONNX_FLOAT) return onnx_fail(c, "the input must be a float tensor");
  if (v->rank < 2 || v->dims[v->rank - 1] != v->dims[v->rank - 2])
    return onnx_fail(c, "the input must be [..., M, M]");
  int64_t n = v->dims[v->rank - 1], batch = 1;
  if (n < 1 || n > 8) return onnx_fail(c, "%lldx%lld matrices are not supported (at most 8x8)",
                                       (long long)n, (long long)n);
  for (uint32_t d = 0; d + 2 < v->rank; ++d) batch *= v->dims[d];
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  x = te_reshape(&c->e, x, 2, (int64_t[2]){batch, n * n});
  return onnx_set_out(c, 0, te_reshape(&c->e, det_lu(c, x, n), v->rank - 2, v->dims));
}

/* ---- ReverseSequence ---- */

/* The time index each output row reads: L-1-t for t < L, else t, as an
 * i32 [B, T] map from the run-time lengths L ([B]). */
static te_value_t reverse_map(onnx_ctx_t *c, int64_t b, int64_t t) {
  te_value_t lens = onnx_in(c, 1);
  if (!lens.id) return lens;
  lens = te_clamp_int(&c->e, lens, 0, t);
  if (lens.type.elem != TE_I32) lens = te_cast(&c->e, lens, TE_I32);
  lens = te_reshape(&c->e, lens, 2, (int64_t[2]){b, 1});
  te_value_t steps = onnx_iota_const(c, TE_I32, 2, (int64_t[2]){1, t});
  if (!steps.id) return steps;
  te_value_t steps_b = sub(c, add(c, steps, lens), lens);
  te_value_t back = sub(c, sub(c, lens, ki(c, lens, 1)), steps);
  return te_select(&c->e, bin(c, "tosa.greater", lens, steps), back, steps_b);
}

static tinyml_status_t lower_reverse_sequence(onnx_ctx_t *c) {
  const onnx_value_t *v = onnx_input(c, 0), *l = onnx_input(c, 1);
  if (!v || !l) return onnx_fail(c, "input and sequence_lens are required");
  int32_t ba = (int32_t)onnx_attr_int(c, "batch_axis", 1);
  int32_t ta = (int32_t)onnx_attr_int(c, "time_axis", 0);
  if (v->rank < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
    return onnx_fail(c, "batch_axis and time_axis must be 0 and 1 in either order");
  int64_t b = v->dims[ba], t = v->dims[ta];
  if (b * t == 0) return onnx_fail(c, "empty tensors are not supported");
  int64_t inner = onnx_numel(v->rank, v->dims) / (b * t);
  if (l->rank != 1 || l->dims[0] != b || (l->dtype != ONNX_INT64 && l->dtype != ONNX_INT32))
    return onnx_fail(c, "sequence_lens must be an integer vector of the batch size");
  if (t > INT32_MAX) return onnx_fail(c, "the time axis is too long");
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  int32_t perm[TE_MAX_RANK];
  for (uint32_t d = 0; d < v->rank; ++d) perm[d] = (int32_t)d;
  perm[0] = ba, perm[1] = ta;
  if (ba) x = te_transpose(&c->e, x, perm);
  te_value_t idx = reverse_map(c, b, t);
  if (!idx.id) return c->error;
  te_value_t xs = te_reshape(&c->e, x, 3, (int64_t[3]){b, t, inner});
  te_type_t gt = te_type(x.type.elem, 3, (int64_t[3]){b, t, inner});
  te_value_t ops[2] = {xs, idx};
  te_value_t y = te_reshape(&c->e, te_op(&c->e, "tosa.gather", ops, 2, NULL, &gt), x.type.rank,
                            x.type.dims);
  if (ba) y = te_transpose(&c->e, y, perm); /* swapping two axes is its own inverse */
  return onnx_set_out_typed(c, 0, y, v->dtype);
}

const onnx_lowering_t onnx_lowerings_misc[] = {
    {"Det", 11, 23, lower_det},
    {"ReverseSequence", 10, 23, lower_reverse_sequence},
    {NULL, 0, 0, NULL},
};
