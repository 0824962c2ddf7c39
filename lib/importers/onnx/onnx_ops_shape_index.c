/* ONNX lowerings: the index-map half of the shape family (Gather,
 * GatherElements, Compress, Pad, Range, EyeLike, Trilu), split from
 * onnx_ops_shape.c to keep files short.  See onnx_lower.h. */
#include "onnx_float_types.h"
#include "onnx_shape_util.h"

/* ---- Gather, GatherElements, Compress ------------------------------------- */

/* Gather with run-time indices: data as [outer, dim, inner] values, the
 * indices (negative ones wrapped) tiled over outer, one tosa.gather. */
static tinyml_status_t gather_runtime(onnx_ctx_t *c, int32_t axis, uint32_t r,
                                      const int64_t *dims) {
  onnx_value_t *v = onnx_input(c, 0), *iv = onnx_input(c, 1);
  int32_t dtype = v->dtype;
  int64_t dim = v->dims[axis], outer = numel((uint32_t)axis, v->dims);
  int64_t inner = numel(v->rank - (uint32_t)axis - 1, v->dims + axis + 1);
  int64_t ni = numel(iv->rank, iv->dims);
  if (iv->dtype != ONNX_INT64 && iv->dtype != ONNX_INT32)
    return onnx_fail(c, "indices must be INT32 or INT64");
  if (dim > INT32_MAX || ni == 0 || numel(r, dims) == 0 || v->dtype == ONNX_BOOL ||
      v->dtype == ONNX_INT64)
    return onnx_fail(c, "empty, BOOL, INT64 or very large gathers are not supported");
  te_value_t x = onnx_in(c, 0), idx = onnx_in(c, 1);
  if (!x.id || !idx.id) return c->error;
  idx = te_cast(&c->e, idx, TE_I32);
  te_value_t neg = te_binary(&c->e, "tosa.greater", te_scalar_int(&c->e, TE_I32, 0), idx);
  te_value_t wrapped = te_binary(&c->e, "tosa.add", idx, te_scalar_int(&c->e, TE_I32, dim));
  idx = te_select(&c->e, neg, wrapped, idx);
  return onnx_set_out_typed(c, 0, te_gather_axis(&c->e, x, outer, dim, inner, idx, r, dims), dtype);
}

static tinyml_status_t lower_gather(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  const onnx_value_t *iv = onnx_input(c, 1);
  if (!v) return c->error;
  if (!iv) return onnx_fail(c, "input 1 is missing");
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", 0), v->rank);
  uint32_t r = v->rank - 1 + iv->rank;
  if (axis < 0 || r > TE_MAX_RANK) return onnx_fail(c, "bad axis or rank");
  if (!iv->data) {
    int64_t dims[TE_MAX_RANK];
    uint32_t k = 0;
    for (int32_t d = 0; d < axis; ++d) dims[k++] = v->dims[d];
    for (uint32_t d = 0; d < iv->rank; ++d) dims[k++] = iv->dims[d];
    for (uint32_t d = (uint32_t)axis + 1; d < v->rank; ++d) dims[k++] = v->dims[d];
    return gather_runtime(c, axis, r, dims);
  }
  int64_t ni = numel(iv->rank, iv->dims), *idx = alloc_map(c, ni);
  if (!idx) return c->error;
  if (onnx_const_ints(c, 1, idx, (uint32_t)ni) != ni) {
    tinyml__free(c->allocator, idx);
    return onnx_fail(c, "indices must be INT32 or INT64");
  }
  int64_t dim = v->dims[axis], dims[TE_MAX_RANK];
  for (int64_t k = 0; k < ni; ++k) {
    if (idx[k] < 0) idx[k] += dim;
    if (idx[k] < 0 || idx[k] >= dim) {
      tinyml__free(c->allocator, idx);
      return onnx_fail(c, "index out of range");
    }
  }
  uint32_t k = 0;
  for (int32_t d = 0; d < axis; ++d) dims[k++] = v->dims[d];
  for (uint32_t d = 0; d < iv->rank; ++d) dims[k++] = iv->dims[d];
  for (uint32_t d = (uint32_t)axis + 1; d < v->rank; ++d) dims[k++] = v->dims[d];
  int64_t outer = numel((uint32_t)axis, v->dims);
  int64_t inner = numel(v->rank - (uint32_t)axis - 1, v->dims + axis + 1);
  int64_t *map = alloc_map(c, outer * ni * inner);
  if (!map) return tinyml__free(c->allocator, idx), c->error;
  for (int64_t o = 0, i = 0; o < outer; ++o)
    for (int64_t j = 0; j < ni; ++j)
      for (int64_t q = 0; q < inner; ++q) map[i++] = (o * dim + idx[j]) * inner + q;
  tinyml__free(c->allocator, idx);
  return out_gathered(c, 0, 0, r, dims, map);
}

/* GatherElements with run-time indices: flat index = base + wrapped index *
 * the axis stride, base (the other coordinates) known at compile time. */
static tinyml_status_t gather_elements_runtime(onnx_ctx_t *c, int32_t axis) {
  onnx_value_t *v = onnx_input(c, 0), *iv = onnx_input(c, 1);
  int32_t dtype = v->dtype;
  uint32_t r = iv->rank;
  int64_t n = numel(r, iv->dims), total = numel(v->rank, v->dims), s[TE_MAX_RANK], co[TE_MAX_RANK];
  if (iv->dtype != ONNX_INT64 && iv->dtype != ONNX_INT32)
    return onnx_fail(c, "indices must be INT32 or INT64");
  if (n == 0 || total > INT32_MAX || v->dtype == ONNX_BOOL || v->dtype == ONNX_INT64)
    return onnx_fail(c, "empty, BOOL, INT64 or very large gathers are not supported");
  for (uint32_t d = 0; d < r; ++d)
    if (d != (uint32_t)axis && iv->dims[d] > v->dims[d]) return onnx_fail(c, "indices too large");
  int32_t *base = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  if (!base) return onnx_oom(c);
  strides_of(v->rank, v->dims, s);
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, r, iv->dims, co);
    co[axis] = 0;
    int64_t f = 0;
    for (uint32_t d = 0; d < r; ++d) f += co[d] * s[d];
    base[i] = (int32_t)f;
  }
  te_type_t bt = te_type(TE_I32, 2, (int64_t[2]){1, n});
  te_value_t b = te_const(&c->e, &bt, base);
  tinyml__free(c->allocator, base);
  te_value_t x = onnx_in(c, 0), idx = onnx_in(c, 1);
  if (!x.id || !idx.id) return c->error;
  idx = te_reshape(&c->e, te_cast(&c->e, idx, TE_I32), 2, (int64_t[2]){1, n});
  te_value_t neg = te_binary(&c->e, "tosa.greater", te_scalar_int(&c->e, TE_I32, 0), idx);
  te_value_t dim = te_scalar_int(&c->e, TE_I32, v->dims[axis]);
  idx = te_select(&c->e, neg, te_binary(&c->e, "tosa.add", idx, dim), idx);
  idx = te_mul(&c->e, idx, te_scalar_int(&c->e, TE_I32, s[axis]), 0);
  idx = te_binary(&c->e, "tosa.add", idx, b);
  x = te_reshape(&c->e, x, 3, (int64_t[3]){1, total, 1});
  te_type_t gt = te_type(x.type.elem, 3, (int64_t[3]){1, n, 1});
  te_value_t ops[2] = {x, idx};
  te_value_t y = te_op(&c->e, "tosa.gather", ops, 2, NULL, &gt);
  return onnx_set_out_typed(c, 0, te_reshape(&c->e, y, r, iv->dims), dtype);
}

static tinyml_status_t lower_gather_elements(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  const onnx_value_t *iv = onnx_input(c, 1);
  if (!v) return c->error;
  if (!iv) return onnx_fail(c, "input 1 is missing");
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", 0), v->rank);
  if (axis < 0 || iv->rank != v->rank) return onnx_fail(c, "bad axis or rank");
  if (!iv->data) return gather_elements_runtime(c, axis);
  int64_t n = numel(iv->rank, iv->dims), s[TE_MAX_RANK], co[TE_MAX_RANK];
  int64_t *map = alloc_map(c, n);
  if (!map) return c->error;
  if (onnx_const_ints(c, 1, map, (uint32_t)n) != n) {
    tinyml__free(c->allocator, map);
    return onnx_fail(c, "indices must be INT32 or INT64");
  }
  strides_of(v->rank, v->dims, s);
  for (int64_t i = 0; i < n; ++i) {
    int64_t j = map[i] < 0 ? map[i] + v->dims[axis] : map[i];
    unravel(i, iv->rank, iv->dims, co);
    int bad = j < 0 || j >= v->dims[axis];
    for (uint32_t d = 0; d < v->rank; ++d) bad |= co[d] >= v->dims[d] && d != (uint32_t)axis;
    if (bad) {
      tinyml__free(c->allocator, map);
      return onnx_fail(c, "index out of range");
    }
    co[axis] = j;
    map[i] = 0;
    for (uint32_t d = 0; d < v->rank; ++d) map[i] += co[d] * s[d];
  }
  return out_gathered(c, 0, 0, iv->rank, iv->dims, map);
}

static tinyml_status_t lower_compress(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  const onnx_value_t *cv = onnx_const_input(c, 1);
  if (!v) return c->error;
  if (!cv || cv->dtype != ONNX_BOOL || cv->rank != 1)
    return onnx_fail(c, "the condition must be a constant 1-D BOOL tensor");
  const Onnx__AttributeProto *a = onnx_attr(c, "axis");
  int flat = !a;
  uint32_t r = flat ? 1 : v->rank;
  int64_t dims[TE_MAX_RANK], total = numel(v->rank, v->dims);
  int32_t axis = flat ? 0 : onnx_axis(a->i, v->rank);
  if (flat) dims[0] = total;
  else memcpy(dims, v->dims, sizeof dims);
  if (axis < 0 || cv->dims[0] > dims[axis]) return onnx_fail(c, "bad axis or condition length");
  const uint8_t *cond = cv->data;
  int64_t keep[1024], nk = 0;
  if (cv->dims[0] > 1024) return onnx_fail(c, "the condition is too long");
  for (int64_t i = 0; i < cv->dims[0]; ++i)
    if (cond[i]) keep[nk++] = i;
  int64_t inner = numel(r - (uint32_t)axis - 1, dims + axis + 1), dim = dims[axis];
  int64_t outer = numel((uint32_t)axis, dims);
  dims[axis] = nk;
  int64_t *map = alloc_map(c, outer * nk * inner);
  if (!map) return c->error;
  for (int64_t o = 0, i = 0; o < outer; ++o)
    for (int64_t j = 0; j < nk; ++j)
      for (int64_t q = 0; q < inner; ++q) map[i++] = (o * dim + keep[j]) * inner + q;
  return out_gathered(c, 0, 0, r, dims, map);
}

static int64_t pad_coord(int64_t i, int64_t dim, int mode) {
  if (mode == 1) return clamp64(i, 0, dim - 1); /* edge */
  if (mode == 3) return ((i % dim) + dim) % dim; /* wrap */
  int64_t period = 2 * (dim - 1);
  if (period == 0) return 0;
  i = ((i % period) + period) % period;
  return i < dim ? i : period - i; /* reflect */
}

static tinyml_status_t pad_constant(onnx_ctx_t *c, const int64_t *pads) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  uint32_t r = v->rank;
  int32_t dtype = v->dtype;
  te_value_t pv;
  const onnx_value_t *cv = c->opset >= 11 ? onnx_const_input(c, 2) : NULL;
  if (c->opset >= 11 && onnx_input(c, 2) && !cv)
    return onnx_fail(c, "the pad value must be a constant");
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (cv) {
    if (cv->dtype != dtype || numel(cv->rank, cv->dims) != 1)
      return onnx_fail(c, "the pad value must be one element of the input type");
    te_type_t one = te_type(x.type.elem, 1, (int64_t[1]){1});
    pv = te_const(&c->e, &one, cv->data);
  } else if (x.type.elem == TE_F32) {
    pv = te_scalar_f32(&c->e, c->opset < 11 ? onnx_attr_float(c, "value", 0.0f) : 0.0f);
  } else if (x.type.elem == TE_I1) {
    return onnx_fail(c, "BOOL padding is not supported");
  } else {
    pv = te_scalar_int(&c->e, x.type.elem, 0);
  }
  int64_t start[TE_MAX_RANK], size[TE_MAX_RANK], pp[2 * TE_MAX_RANK], out[TE_MAX_RANK];
  int crop = 0;
  for (uint32_t d = 0; d < r; ++d) {
    int64_t lo = pads[d], hi = pads[r + d];
    start[d] = lo < 0 ? -lo : 0;
    size[d] = x.type.dims[d] - start[d] - (hi < 0 ? -hi : 0);
    if (size[d] <= 0) return onnx_fail(c, "padding crops away the whole input");
    crop |= lo < 0 || hi < 0;
    pp[2 * d] = lo > 0 ? lo : 0;
    pp[2 * d + 1] = hi > 0 ? hi : 0;
    out[d] = size[d] + pp[2 * d] + pp[2 * d + 1];
  }
  if (crop) {
    te_type_t t = te_type(x.type.elem, r, size);
    te_value_t ops[3] = {x, te_shape(&c->e, r, start), te_shape(&c->e, r, size)};
    x = te_op(&c->e, "tosa.slice", ops, 3, NULL, &t);
  }
  te_type_t t = te_type(x.type.elem, r, out);
  te_value_t ops[3] = {x, te_shape(&c->e, 2 * r, pp), pv};
  return onnx_set_out_typed(c, 0, te_op(&c->e, "tosa.pad", ops, 3, NULL, &t), dtype);
}

static tinyml_status_t lower_pad(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  uint32_t r = v->rank;
  int64_t pads[2 * TE_MAX_RANK], axes[TE_MAX_RANK];
  int64_t n = c->opset >= 11 ? ints_operand(c, 1, NULL, pads, 2 * TE_MAX_RANK)
                             : onnx_attr_ints(c, c->opset < 2 ? "paddings" : "pads", pads,
                                              2 * TE_MAX_RANK);
  int64_t na = c->opset >= 18 ? ints_operand(c, 3, NULL, axes, TE_MAX_RANK) : -1;
  if (c->error) return c->error;
  if (na >= 0) { /* pads given for `axes` only: spread them over every axis */
    int64_t full[2 * TE_MAX_RANK] = {0};
    if (n != 2 * na) return onnx_fail(c, "pads must have two entries per axis");
    for (int64_t i = 0; i < na; ++i) {
      int32_t a = onnx_axis(axes[i], r);
      if (a < 0) return onnx_fail(c, "axis out of range");
      full[a] = pads[i];
      full[r + a] = pads[na + i];
    }
    memcpy(pads, full, sizeof full);
    n = 2 * r;
  }
  if (n != 2 * r) return onnx_fail(c, "pads must have two entries per dimension");
  char buf[16];
  const char *mode = onnx_attr_string(c, "mode", "constant", buf, sizeof buf);
  int m = strcmp(mode, "constant") == 0 ? 0 : strcmp(mode, "edge") == 0 ? 1
        : strcmp(mode, "reflect") == 0 ? 2 : strcmp(mode, "wrap") == 0 && c->opset >= 19 ? 3 : -1;
  if (m < 0) return onnx_fail(c, "mode %s is not supported", mode);
  if (m == 0) return pad_constant(c, pads);
  int64_t out[TE_MAX_RANK], s[TE_MAX_RANK], co[TE_MAX_RANK];
  for (uint32_t d = 0; d < r; ++d) {
    out[d] = v->dims[d] + pads[d] + pads[r + d];
    if (out[d] < 0 || v->dims[d] == 0) return onnx_fail(c, "invalid pads");
    if (m == 2 && (pads[d] >= v->dims[d] || pads[r + d] >= v->dims[d]))
      return onnx_fail(c, "reflect pads must be smaller than the dimension");
  }
  int64_t total = numel(r, out), *map = alloc_map(c, total);
  if (!map) return c->error;
  strides_of(r, v->dims, s);
  for (int64_t i = 0; i < total; ++i) {
    unravel(i, r, out, co);
    map[i] = 0;
    for (uint32_t d = 0; d < r; ++d) map[i] += pad_coord(co[d] - pads[d], v->dims[d], m) * s[d];
  }
  return out_gathered(c, 0, 0, r, out, map);
}

/* ---- Range, EyeLike, Trilu ------------------------------------------------ */

static int scalar_as_double(const onnx_value_t *v, double *out) {
  if (!v || numel(v->rank, v->dims) != 1) return 0;
  switch (v->dtype) {
    case ONNX_FLOAT: { float f; memcpy(&f, v->data, 4); *out = f; return 1; }
    case ONNX_INT32: { int32_t i; memcpy(&i, v->data, 4); *out = i; return 1; }
    case ONNX_INT64: { int64_t i; memcpy(&i, v->data, 8); *out = (double)i; return 1; }
    case ONNX_INT16: { int16_t i; memcpy(&i, v->data, 2); *out = i; return 1; }
    default: return 0;
  }
}

static void store_number(int32_t dtype, double x, uint8_t *p) {
  switch (dtype) {
    case ONNX_FLOAT: { float f = (float)x; memcpy(p, &f, 4); break; }
    case ONNX_INT32: { int32_t i = (int32_t)x; memcpy(p, &i, 4); break; }
    case ONNX_INT64: { int64_t i = (int64_t)x; memcpy(p, &i, 8); break; }
    case ONNX_INT16: { int16_t i = (int16_t)x; memcpy(p, &i, 2); break; }
    default: memset(p, x != 0, 1); /* int8, uint8, bool */
  }
}

/* GatherND: data as [batch, D, inner] where D spans the m indexed dims;
 * each index row (negatives wrapped) becomes one linear row number, and
 * one tosa.gather takes the rows.  Out-of-range indices are undefined in
 * ONNX, as in tosa.gather. */
static te_value_t gathernd_rows(onnx_ctx_t *c, te_value_t idx, const int64_t *dims, int64_t m,
                                int64_t batch, int64_t n) {
  int64_t stride[TE_MAX_RANK], size[TE_MAX_RANK], s = 1;
  for (int64_t j = m - 1; j >= 0; --j) stride[j] = s, size[j] = dims[j], s *= dims[j];
  int32_t st[TE_MAX_RANK], sz[TE_MAX_RANK];
  for (int64_t j = 0; j < m; ++j) st[j] = (int32_t)stride[j], sz[j] = (int32_t)size[j];
  te_type_t kt = te_type(TE_I32, 3, (int64_t[3]){1, 1, m});
  idx = te_reshape(&c->e, te_cast(&c->e, idx, TE_I32), 3, (int64_t[3]){batch, n, m});
  te_value_t neg = te_binary(&c->e, "tosa.greater", te_scalar_int(&c->e, TE_I32, 0), idx);
  idx = te_select(&c->e, neg, te_binary(&c->e, "tosa.add", idx, te_const(&c->e, &kt, sz)), idx);
  idx = te_mul(&c->e, idx, te_const(&c->e, &kt, st), 0);
  idx = te_reduce(&c->e, "tosa.reduce_sum", idx, 2);
  return te_reshape(&c->e, idx, 2, (int64_t[2]){batch, n});
}

/* All constant: copy each indexed row on the host. */
static tinyml_status_t gathernd_fold(onnx_ctx_t *c, const onnx_value_t *v, int64_t b, int64_t m,
                                     uint32_t r, const int64_t *dims) {
  const onnx_value_t *iv = onnx_input(c, 1);
  int64_t ni = numel(iv->rank, iv->dims), *idx = alloc_map(c, ni);
  if (!idx) return c->error;
  size_t es = onnx_dtype_size(v->dtype);
  int64_t rows = numel((uint32_t)m, v->dims + b), n = ni / m;
  int64_t inner = numel(v->rank - (uint32_t)(b + m), v->dims + b + m);
  int64_t per_batch = n / numel((uint32_t)b, v->dims);
  uint8_t *out = es ? tinyml__alloc(c->allocator, (size_t)(n * inner) * es + 1, 16) : NULL;
  int ok = out && onnx_const_ints(c, 1, idx, (uint32_t)ni) == ni;
  for (int64_t k = 0; ok && k < n; ++k) {
    int64_t row = 0;
    for (int64_t j = 0; j < m; ++j) {
      int64_t d = v->dims[b + j], i = idx[k * m + j] < 0 ? idx[k * m + j] + d : idx[k * m + j];
      ok = ok && i >= 0 && i < d;
      row = row * d + i;
    }
    int64_t src = ((k / per_batch) * rows + row) * inner;
    if (ok) memcpy(out + k * inner * es, (const uint8_t *)v->data + src * es, (size_t)inner * es);
  }
  tinyml_status_t st = ok ? onnx_set_out_const(c, 0, v->dtype, r, dims, out)
                          : c->error ? c->error : onnx_fail(c, "an index is out of range");
  tinyml__free(c->allocator, idx);
  tinyml__free(c->allocator, out);
  return st;
}

static tinyml_status_t lower_gather_nd(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0), *iv = onnx_input(c, 1);
  if (!v) return c->error;
  if (!iv || iv->rank < 1) return onnx_fail(c, "indices must be at least 1-D");
  int64_t b = onnx_attr_int(c, "batch_dims", 0), m = iv->dims[iv->rank - 1];
  if (b < 0 || b >= iv->rank || b + m > v->rank || m < 1)
    return onnx_fail(c, "batch_dims %lld and index depth %lld do not fit the data", (long long)b,
                     (long long)m);
  if (iv->dtype != ONNX_INT64 && iv->dtype != ONNX_INT32)
    return onnx_fail(c, "indices must be INT32 or INT64");
  for (int64_t d = 0; d < b; ++d)
    if (iv->dims[d] != v->dims[d]) return onnx_fail(c, "batch dims of data and indices differ");
  int64_t dims[TE_MAX_RANK];
  uint32_t r = 0;
  for (uint32_t d = 0; d + 1 < iv->rank; ++d) dims[r++] = iv->dims[d];
  for (uint32_t d = (uint32_t)(b + m); d < v->rank; ++d) dims[r++] = v->dims[d];
  if (r > TE_MAX_RANK) return onnx_fail(c, "the result rank is over %d", TE_MAX_RANK);
  int64_t batch = numel((uint32_t)b, v->dims), rows = numel((uint32_t)m, v->dims + b);
  int64_t inner = numel(v->rank - (uint32_t)(b + m), v->dims + b + m);
  int64_t n = numel(iv->rank - 1 - (uint32_t)b, iv->dims + b);
  if (v->data && iv->data && numel(r, dims) > 0 && numel(r, dims) <= MAX_MAP)
    return gathernd_fold(c, v, b, m, r, dims);
  if (rows > INT32_MAX || numel(r, dims) == 0 || v->dtype == ONNX_BOOL || v->dtype == ONNX_INT64)
    return onnx_fail(c, "empty, BOOL, INT64 or very large gathers are not supported");
  te_value_t x = onnx_in(c, 0), idx = onnx_in(c, 1);
  if (!x.id || !idx.id) return c->error;
  idx = gathernd_rows(c, idx, v->dims + b, m, batch, n);
  x = te_reshape(&c->e, x, 3, (int64_t[3]){batch, rows, inner});
  te_type_t gt = te_type(x.type.elem, 3, (int64_t[3]){batch, n, inner});
  te_value_t ops[2] = {x, idx};
  te_value_t y = te_op(&c->e, "tosa.gather", ops, 2, NULL, &gt);
  return onnx_set_out_typed(c, 0, te_reshape(&c->e, y, r, dims), v->dtype);
}

static tinyml_status_t lower_range(onnx_ctx_t *c) {
  double s, l, d;
  const onnx_value_t *sv = onnx_const_input(c, 0);
  if (!scalar_as_double(sv, &s) || !scalar_as_double(onnx_const_input(c, 1), &l) ||
      !scalar_as_double(onnx_const_input(c, 2), &d) || d == 0)
    return onnx_fail(c, "start, limit and delta must be constant scalars (delta nonzero)");
  int32_t dtype = sv->dtype;
  double count = ceil((l - s) / d);
  int64_t n = count > 0 ? (int64_t)count : 0;
  if (n > MAX_MAP) return onnx_fail(c, "the range is too long");
  size_t es = onnx_dtype_size(dtype);
  uint8_t *buf = tinyml__alloc(c->allocator, (size_t)n * es + 1, 16);
  if (!buf) return onnx_oom(c);
  for (int64_t i = 0; i < n; ++i) store_number(dtype, s + (double)i * d, buf + i * es);
  tinyml_status_t st = onnx_set_out_const(c, 0, dtype, 1, &n, buf);
  tinyml__free(c->allocator, buf);
  return st;
}

static tinyml_status_t lower_eye_like(onnx_ctx_t *c) {
  onnx_value_t *v = onnx_input(c, 0);
  if (!v || v->rank != 2) return onnx_fail(c, "the input must be 2-D");
  int32_t dtype = (int32_t)onnx_attr_int(c, "dtype", v->dtype);
  if (onnx_is_wide_float(dtype)) dtype = ONNX_FLOAT; /* 0 and 1 are exact in f32 */
  int64_t k = onnx_attr_int(c, "k", 0), n = numel(2, v->dims);
  size_t es = onnx_dtype_size(dtype);
  if (!es) return onnx_fail(c, "dtype %s is not supported", onnx_dtype_name(dtype));
  if (n > MAX_MAP) return onnx_fail(c, "the result is too large");
  uint8_t *buf = tinyml__calloc(c->allocator, (size_t)n + 1, es, 16);
  if (!buf) return onnx_oom(c);
  for (int64_t i = 0; i < v->dims[0]; ++i)
    if (i + k >= 0 && i + k < v->dims[1]) store_number(dtype, 1.0, buf + (i * v->dims[1] + i + k) * es);
  tinyml_status_t st = onnx_set_out_const(c, 0, dtype, 2, v->dims, buf);
  tinyml__free(c->allocator, buf);
  return st;
}

/* A k known only at run time: keep x where (j - i) >= k (upper) or
 * (j - i) <= k (lower), comparing in int64 so no k is clipped. */
static tinyml_status_t trilu_runtime_k(onnx_ctx_t *c, const onnx_value_t *v, int upper) {
  const onnx_value_t *kv = onnx_input(c, 1);
  if (kv->dtype != ONNX_INT64 || numel(kv->rank, kv->dims) != 1)
    return onnx_fail(c, "k must be a single int64");
  uint32_t r = v->rank;
  int64_t rows = v->dims[r - 2], cols = v->dims[r - 1];
  if (rows * cols > MAX_MAP) return onnx_fail(c, "the matrix is too large");
  int64_t *diff = tinyml__alloc(c->allocator, (size_t)(rows * cols) * 8 + 8, 16);
  if (!diff) return onnx_oom(c);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) diff[i * cols + j] = j - i;
  te_type_t dt2 = te_type(TE_I64, 2, (int64_t[2]){rows, cols});
  te_value_t d = te_const(&c->e, &dt2, diff);
  tinyml__free(c->allocator, diff);
  te_value_t x = onnx_in(c, 0), k = onnx_in(c, 1);
  if (!x.id || !k.id) return c->error;
  k = te_reshape(&c->e, k, 2, (int64_t[2]){1, 1});
  te_value_t m = upper ? te_binary(&c->e, "tosa.greater_equal", d, k)
                       : te_binary(&c->e, "tosa.greater_equal", k, d);
  te_type_t zt = te_type(x.type.elem, 1, (int64_t[1]){1});
  te_value_t zero = x.type.elem == TE_F32 ? te_splat_f32(&c->e, &zt, 0.0f)
                                          : te_splat_int(&c->e, &zt, 0);
  return onnx_set_out_typed(c, 0, te_select(&c->e, m, x, zero), v->dtype);
}

static tinyml_status_t lower_trilu(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t k = 0;
  if (v->rank >= 2 && onnx_input(c, 1) && !onnx_const_input(c, 1))
    return trilu_runtime_k(c, v, (int)onnx_attr_int(c, "upper", 1));
  if (onnx_input(c, 1) && onnx_const_ints(c, 1, &k, 1) != 1)
    return onnx_fail(c, "k must be a constant scalar");
  int upper = (int)onnx_attr_int(c, "upper", 1);
  uint32_t r = v->rank;
  if (r < 2) return onnx_fail(c, "the input must be at least 2-D");
  int64_t rows = v->dims[r - 2], cols = v->dims[r - 1], n = numel(r, v->dims);
  int32_t dtype = v->dtype;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  if (n == 0) return onnx_fail(c, "empty inputs are not supported");
  uint8_t *mask = tinyml__alloc(c->allocator, (size_t)(rows * cols) + 1, 16);
  if (!mask) return onnx_oom(c);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) mask[i * cols + j] = upper ? j - i >= k : j - i <= k;
  /* te_const spells booleans as a flat list, which MLIR accepts for 1-D
   * types only: reshape afterwards. */
  te_type_t mt = te_type(TE_I1, 1, (int64_t[1]){rows * cols});
  te_value_t m = te_reshape(&c->e, te_const(&c->e, &mt, mask), 2, (int64_t[2]){rows, cols});
  tinyml__free(c->allocator, mask);
  te_type_t zt = te_type(x.type.elem, 1, (int64_t[1]){1});
  te_value_t zero = x.type.elem == TE_F32 ? te_splat_f32(&c->e, &zt, 0.0f)
                                          : te_splat_int(&c->e, &zt, 0);
  return onnx_set_out_typed(c, 0, te_select(&c->e, m, x, zero), dtype);
}

const onnx_lowering_t onnx_lowerings_shape_index[] = {
    {"Gather", 1, 23, lower_gather},
    {"GatherElements", 11, 23, lower_gather_elements},
    {"Compress", 9, 23, lower_compress},
    {"Pad", 1, 23, lower_pad},
    {"Range", 11, 23, lower_range},
    {"EyeLike", 9, 23, lower_eye_like},
    {"Trilu", 14, 23, lower_trilu},
    {"GatherND", 11, 23, lower_gather_nd},
    {NULL, 0, 0, NULL},
};
