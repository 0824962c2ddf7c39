/* ONNX lowerings: ScatterElements, Scatter (its opset 9-10 name) and
 * ScatterND, with data, updates and indices known at compile time or at
 * run time.  Every form is seen as rows: data as [P, C], updates as [U, C]
 * and one target row t[u] per update row (C = 1 for ScatterElements).
 *
 * An index outside its dimension (after wrapping a negative one once) is
 * undefined in ONNX and an error in onnxruntime; here its target is -1 and
 * its update is dropped, so nothing is read or written outside a buffer.
 *
 * reduction none: for each data row, the last update row aimed at it wins
 * (the max over the update numbers that match, then one tosa.gather), which
 * is what onnxruntime's sequential loop gives for duplicates.  add, mul,
 * max and min apply the update rows one by one in their order, as
 * onnxruntime does, so float sums round exactly as there.  See
 * onnx_lower.h. */
#include "onnx_const_util.h"
#include "onnx_elt_util.h"
#include "onnx_shape_util.h"

enum { R_NONE, R_ADD, R_MUL, R_MAX, R_MIN };

/* The none form compares every data row with every update row; the
 * reductions emit one step per update row. */
#define MAX_PAIRS (1LL << 24)
#define MAX_STEPS 1024

typedef struct rows {
  int64_t p, c, u; /* data rows, row length, update rows */
  int64_t *t;      /* the targets when the indices are constant, else NULL */
  te_value_t tv;   /* else the run-time targets, [U] i32 */
} rows_t;

static int reduction_of(onnx_ctx_t *c) {
  char buf[16];
  const char *r = onnx_attr_string(c, "reduction", "none", buf, sizeof buf);
  if (strcmp(r, "none") == 0) return R_NONE;
  if (c->opset >= 16 && strcmp(r, "add") == 0) return R_ADD;
  if (c->opset >= 16 && strcmp(r, "mul") == 0) return R_MUL;
  if (c->opset >= 18 && strcmp(r, "max") == 0) return R_MAX;
  if (c->opset >= 18 && strcmp(r, "min") == 0) return R_MIN;
  onnx_fail(c, "reduction '%s' is not supported at opset %lld", r, (long long)c->opset);
  return -1;
}

/* An integer constant of `elem` (i32 or i64) with the given values. */
static te_value_t int_const(onnx_ctx_t *c, te_elem_t elem, uint32_t rank, const int64_t *dims,
                            const int64_t *v) {
  int64_t n = numel(rank, dims);
  te_type_t t = te_type(elem, rank, dims);
  if (elem == TE_I64) return te_const(&c->e, &t, v);
  int32_t *b = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  if (!b) return onnx_oom(c), (te_value_t){0};
  for (int64_t i = 0; i < n; ++i) b[i] = (int32_t)v[i];
  te_value_t k = te_const(&c->e, &t, b);
  tinyml__free(c->allocator, b);
  return k;
}

/* 0 .. n-1 as an i32 column [n, 1] or row [1, n]; n is held to MAX_MAP
 * as every index map here is. */
static te_value_t iota(onnx_ctx_t *c, int64_t n, int column) {
  if (n > MAX_MAP) {
    onnx_fail(c, "the result is too large (%lld elements)", (long long)n);
    return (te_value_t){0};
  }
  return onnx_iota_const(c, TE_I32, 2, (int64_t[2]){column ? n : 1, column ? 1 : n});
}

/* Indices `idx` (i32 or i64, last axis of length m) wrapped against
 * `size`; sets *oob (i1, same shape) where a wrapped index is outside
 * [0, size).  The comparison is in the indices' own type, so an int64
 * index is never truncated into range.  Returns the wrapped indices as
 * i32, with 0 where out of range. */
static te_value_t wrap_indices(onnx_ctx_t *c, te_value_t idx, int64_t m, const int64_t *size,
                               te_value_t *oob) {
  int64_t kd[TE_MAX_RANK];
  uint32_t r = idx.type.rank; /* at most 2 */
  for (uint32_t d = 0; d < r; ++d) kd[d] = 1;
  kd[r - 1] = m;
  te_value_t sz = int_const(c, idx.type.elem, r, kd, size);
  te_value_t zero = ki(c, idx, 0);
  te_value_t neg = te_binary(&c->e, "tosa.greater", zero, idx);
  idx = te_select(&c->e, neg, te_binary(&c->e, "tosa.add", idx, sz), idx);
  *oob = te_binary(&c->e, "tosa.logical_or", te_binary(&c->e, "tosa.greater", zero, idx),
                   te_binary(&c->e, "tosa.greater_equal", idx, sz));
  idx = te_select(&c->e, *oob, zero, idx);
  return idx.type.elem == TE_I32 ? idx : te_cast(&c->e, idx, TE_I32);
}

/* ---- the row scatter ------------------------------------------------------ */

/* reduction none: w[p] = the last u with t[u] == p, or -1. */
static te_value_t scatter_none(onnx_ctx_t *c, te_value_t x, te_value_t upd, te_value_t t,
                               const rows_t *r) {
  te_value_t rows = iota(c, r->p, 1), ids = iota(c, r->u, 0);
  if (!rows.id || !ids.id) return (te_value_t){0};
  te_type_t one = te_type(TE_I32, 2, (int64_t[2]){1, 1});
  te_value_t zero = te_splat_int(&c->e, &one, 0), none = te_splat_int(&c->e, &one, -1);
  te_value_t match = te_binary(&c->e, "tosa.equal", rows, te_reshape(&c->e, t, 2, (int64_t[2]){1, r->u}));
  te_value_t w = te_reduce(&c->e, "tosa.reduce_max", te_select(&c->e, match, ids, none), 1);
  te_value_t hit = te_binary(&c->e, "tosa.greater_equal", w, zero);
  w = te_reshape(&c->e, te_binary(&c->e, "tosa.maximum", w, zero), 2, (int64_t[2]){1, r->p});
  te_type_t gt = te_type(upd.type.elem, 3, (int64_t[3]){1, r->p, r->c});
  te_value_t ops[2] = {te_reshape(&c->e, upd, 3, (int64_t[3]){1, r->u, r->c}), w};
  te_value_t g = te_op(&c->e, "tosa.gather", ops, 2, NULL, &gt);
  return te_select(&c->e, hit, te_reshape(&c->e, g, 2, (int64_t[2]){r->p, r->c}), x);
}

static te_value_t combine(onnx_ctx_t *c, int red, te_value_t a, te_value_t b) {
  switch (red) {
    case R_ADD: return te_binary(&c->e, "tosa.add", a, b);
    case R_MUL: return te_mul(&c->e, a, b, 0);
    case R_MAX: return te_binary(&c->e, "tosa.maximum", a, b);
    case R_MIN: return te_binary(&c->e, "tosa.minimum", a, b);
    default: return b;
  }
}

/* add, mul, max, min: one masked step per update row, in order. */
static te_value_t scatter_steps(onnx_ctx_t *c, te_value_t x, te_value_t upd, te_value_t t,
                                const rows_t *r, int red) {
  te_value_t rows = iota(c, r->p, 1);
  if (!rows.id) return rows;
  t = te_reshape(&c->e, t, 2, (int64_t[2]){1, r->u});
  for (int64_t u = 0; u < r->u; ++u) {
    if (r->t && r->t[u] < 0) continue;
    te_value_t tu = te_slice(&c->e, t, (int64_t[2]){0, u}, (int64_t[2]){1, 1});
    te_value_t m = te_binary(&c->e, "tosa.equal", rows, tu);
    te_value_t uu = te_slice(&c->e, upd, (int64_t[2]){u, 0}, (int64_t[2]){1, r->c});
    x = te_select(&c->e, m, combine(c, red, x, uu), x);
  }
  return x;
}

static num_t fold_combine(int red, int is_f, num_t a, num_t b) {
  switch (red) {
    case R_ADD: return fold_one(F_ADD, is_f, a, b, b, 0);
    case R_MUL: return fold_one(F_MUL, is_f, a, b, b, 0);
    case R_MAX: return fold_one(F_MAX, is_f, a, b, b, 0);
    case R_MIN: return fold_one(F_MIN, is_f, a, b, b, 0);
    default: return b;
  }
}

/* Everything constant: the same loop on the host. */
static tinyml_status_t scatter_fold(onnx_ctx_t *c, const rows_t *r, int red) {
  const onnx_value_t *v = onnx_input(c, 0), *uv = onnx_input(c, 2);
  int64_t n = r->p * r->c;
  uint8_t *out = tinyml__alloc(c->allocator, (size_t)n * 8 + 8, 16);
  if (!out) return onnx_oom(c);
  memcpy(out, v->data, (size_t)n * onnx_dtype_size(v->dtype));
  onnx_value_t acc = *v;
  acc.data = out;
  int is_f = v->dtype == ONNX_FLOAT;
  for (int64_t u = 0; u < r->u; ++u)
    for (int64_t k = 0; r->t[u] >= 0 && k < r->c; ++k) {
      int64_t at = r->t[u] * r->c + k;
      num_t y = fold_combine(red, is_f, get_num(&acc, at), get_num(uv, u * r->c + k));
      put_num(v->dtype, out, at, y);
    }
  tinyml_status_t st = onnx_set_out_const(c, 0, v->dtype, v->rank, v->dims, out);
  tinyml__free(c->allocator, out);
  return st;
}

static tinyml_status_t scatter_rows(onnx_ctx_t *c, rows_t *r, int red) {
  const onnx_value_t *v = onnx_input(c, 0), *uv = onnx_input(c, 2);
  int32_t dtype = v->dtype;
  int64_t dims[TE_MAX_RANK];
  uint32_t rank = v->rank;
  memcpy(dims, v->dims, sizeof dims);
  if (r->t && v->data && uv->data && foldable_dtype(dtype)) return scatter_fold(c, r, red);
  if (red == R_NONE ? dtype == ONNX_INT64 : dtype != ONNX_FLOAT && dtype != ONNX_INT32)
    return onnx_fail(c, "data type %s is not supported with this reduction", onnx_dtype_name(dtype));
  if (red == R_NONE && onnx_mul_sat(r->p, r->u) > MAX_PAIRS)
    return onnx_fail(c, "%lld data rows by %lld update rows is too large", (long long)r->p,
                     (long long)r->u);
  if (red != R_NONE && (r->u > MAX_STEPS || onnx_mul_sat(r->u, r->p * r->c) > MAX_PAIRS))
    return onnx_fail(c, "a reduction over %lld update rows is too large", (long long)r->u);
  te_value_t x = onnx_in(c, 0), upd = onnx_in(c, 2);
  if (!x.id || !upd.id) return c->error;
  te_value_t t = r->t ? int_const(c, TE_I32, 1, &r->u, r->t) : r->tv;
  if (!t.id) return c->error;
  int is_bool = x.type.elem == TE_I1;
  if (is_bool) x = te_cast(&c->e, x, TE_I8), upd = te_cast(&c->e, upd, TE_I8);
  x = te_reshape(&c->e, x, 2, (int64_t[2]){r->p, r->c});
  upd = te_reshape(&c->e, upd, 2, (int64_t[2]){r->u, r->c});
  te_value_t y = red == R_NONE ? scatter_none(c, x, upd, t, r) : scatter_steps(c, x, upd, t, r, red);
  if (!y.id) return c->error;
  y = te_reshape(&c->e, y, rank, dims);
  if (is_bool) y = te_cast(&c->e, y, TE_I1);
  return onnx_set_out_typed(c, 0, y, dtype);
}

/* Checks data, indices and updates; 0 with an error recorded. */
static int check_operands(onnx_ctx_t *c, const onnx_value_t **v, const onnx_value_t **iv,
                          const onnx_value_t **uv) {
  *v = need_input(c, 0);
  *iv = onnx_input(c, 1);
  *uv = onnx_input(c, 2);
  if (!*v) return 0;
  if (!*iv || !*uv) return onnx_fail(c, "indices and updates are required"), 0;
  if ((*iv)->dtype != ONNX_INT64 && (*iv)->dtype != ONNX_INT32)
    return onnx_fail(c, "indices must be INT32 or INT64"), 0;
  if ((*uv)->dtype != (*v)->dtype) return onnx_fail(c, "updates and data types differ"), 0;
  if (numel((*v)->rank, (*v)->dims) == 0 || numel((*iv)->rank, (*iv)->dims) == 0)
    return onnx_fail(c, "empty data or indices are not supported"), 0;
  if (numel((*v)->rank, (*v)->dims) > INT32_MAX)
    return onnx_fail(c, "the data has more than 2^31 elements"), 0;
  return 1;
}

/* Reads constant indices into a new array; NULL (no error) when they are
 * not constant. */
static int64_t *const_indices(onnx_ctx_t *c, int64_t n, int *err) {
  *err = 0;
  if (!onnx_const_input(c, 1)) return NULL;
  int64_t *idx = alloc_map(c, n);
  if (idx && onnx_const_ints(c, 1, idx, (uint32_t)n) == n) return idx;
  if (idx) tinyml__free(c->allocator, idx), onnx_fail(c, "indices must be INT32 or INT64");
  *err = 1;
  return NULL;
}

/* ---- ScatterElements, Scatter --------------------------------------------- */

static tinyml_status_t elements_targets(onnx_ctx_t *c, const onnx_value_t *v,
                                        const onnx_value_t *iv, int32_t axis, rows_t *r) {
  int64_t n = r->u, s[TE_MAX_RANK], co[TE_MAX_RANK], dim = v->dims[axis];
  int64_t *base = alloc_map(c, n);
  if (!base) return c->error;
  strides_of(v->rank, v->dims, s);
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, iv->rank, iv->dims, co);
    co[axis] = 0;
    base[i] = 0;
    for (uint32_t d = 0; d < iv->rank; ++d) base[i] += co[d] * s[d];
  }
  int err;
  r->t = const_indices(c, n, &err);
  if (err) return tinyml__free(c->allocator, base), c->error;
  if (r->t) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t j = r->t[i] < 0 ? r->t[i] + dim : r->t[i];
      r->t[i] = j < 0 || j >= dim ? -1 : base[i] + j * s[axis];
    }
    tinyml__free(c->allocator, base);
    return TINYML_OK;
  }
  te_value_t b = int_const(c, TE_I32, 1, &n, base);
  tinyml__free(c->allocator, base);
  te_value_t idx = onnx_in(c, 1), oob;
  if (!b.id || !idx.id) return c->error;
  idx = wrap_indices(c, te_reshape(&c->e, idx, 1, &n), 1, &dim, &oob);
  idx = te_binary(&c->e, "tosa.add", te_mul(&c->e, idx, te_scalar_int(&c->e, TE_I32, s[axis]), 0), b);
  r->tv = te_select(&c->e, oob, te_scalar_int(&c->e, TE_I32, -1), idx);
  return TINYML_OK;
}

static tinyml_status_t lower_scatter_elements(onnx_ctx_t *c) {
  const onnx_value_t *v, *iv, *uv;
  if (!check_operands(c, &v, &iv, &uv)) return c->error;
  int red = reduction_of(c);
  if (red < 0) return c->error;
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", 0), v->rank);
  if (axis < 0 || iv->rank != v->rank || uv->rank != iv->rank ||
      memcmp(uv->dims, iv->dims, iv->rank * sizeof(int64_t)) != 0)
    return onnx_fail(c, "bad axis, or indices and updates shapes that do not match the data");
  for (uint32_t d = 0; d < iv->rank; ++d)
    if (d != (uint32_t)axis && iv->dims[d] > v->dims[d])
      return onnx_fail(c, "indices dim %u exceeds the data's", d);
  rows_t r = {numel(v->rank, v->dims), 1, numel(iv->rank, iv->dims), NULL, {0}};
  tinyml_status_t st = elements_targets(c, v, iv, axis, &r);
  if (!st) st = scatter_rows(c, &r, red);
  tinyml__free(c->allocator, r.t);
  return st;
}

/* ---- ScatterND ------------------------------------------------------------ */

static tinyml_status_t nd_targets(onnx_ctx_t *c, const onnx_value_t *v, int64_t m, rows_t *r) {
  int64_t st[TE_MAX_RANK], s = 1;
  for (int64_t j = m - 1; j >= 0; --j) st[j] = s, s *= v->dims[j];
  int err;
  int64_t *idx = const_indices(c, r->u * m, &err);
  if (err) return c->error;
  if (idx) {
    r->t = idx; /* row k's target replaces its first index, read first */
    for (int64_t k = 0; k < r->u; ++k) {
      int64_t row = 0;
      for (int64_t j = 0; j < m && row >= 0; ++j) {
        int64_t d = v->dims[j], i = idx[k * m + j] < 0 ? idx[k * m + j] + d : idx[k * m + j];
        row = i < 0 || i >= d ? -1 : row + i * st[j];
      }
      r->t[k] = row;
    }
    return TINYML_OK;
  }
  te_value_t x = onnx_in(c, 1), oob;
  if (!x.id) return c->error;
  x = wrap_indices(c, te_reshape(&c->e, x, 2, (int64_t[2]){r->u, m}), m, v->dims, &oob);
  te_value_t stv = int_const(c, TE_I32, 2, (int64_t[2]){1, m}, st);
  if (!stv.id) return c->error;
  x = te_reduce(&c->e, "tosa.reduce_sum", te_mul(&c->e, x, stv, 0), 1);
  te_value_t bad = te_reduce(&c->e, "tosa.reduce_any", oob, 1);
  x = te_select(&c->e, bad, te_scalar_int(&c->e, TE_I32, -1), x);
  r->tv = te_reshape(&c->e, x, 1, &r->u);
  return TINYML_OK;
}

static tinyml_status_t lower_scatter_nd(onnx_ctx_t *c) {
  const onnx_value_t *v, *iv, *uv;
  if (!check_operands(c, &v, &iv, &uv)) return c->error;
  int red = reduction_of(c);
  if (red < 0) return c->error;
  int64_t m = iv->rank ? iv->dims[iv->rank - 1] : 0;
  uint32_t ur = iv->rank - 1 + v->rank - (uint32_t)m;
  if (iv->rank < 1 || m < 1 || m > v->rank || uv->rank != ur)
    return onnx_fail(c, "indices of depth %lld do not fit the data", (long long)m);
  for (uint32_t d = 0; d < ur; ++d) {
    int64_t want = d + 1 < iv->rank ? iv->dims[d] : v->dims[m + d - (iv->rank - 1)];
    if (uv->dims[d] != want) return onnx_fail(c, "updates dim %u should be %lld", d, (long long)want);
  }
  rows_t r = {numel((uint32_t)m, v->dims), numel(v->rank - (uint32_t)m, v->dims + m),
              numel(iv->rank - 1, iv->dims), NULL, {0}};
  tinyml_status_t st = nd_targets(c, v, m, &r);
  if (!st) st = scatter_rows(c, &r, red);
  tinyml__free(c->allocator, r.t);
  return st;
}

const onnx_lowering_t onnx_lowerings_scatter[] = {
    {"Scatter", 9, 10, lower_scatter_elements},
    {"ScatterElements", 11, 23, lower_scatter_elements},
    {"ScatterND", 11, 23, lower_scatter_nd},
    {NULL, 0, 0, NULL},
};
