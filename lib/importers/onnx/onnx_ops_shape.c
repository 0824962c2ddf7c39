/* ONNX lowerings: shape family (data movement and shape arithmetic).  See
 * onnx_lower.h for the contract.
 *
 * Shapes are static, so every op whose inputs are all constants is folded on
 * the host: pytorch exports compute shapes with Shape→Gather→Concat chains
 * that must reach Reshape as constants.  Ops that only pick elements
 * (Gather, Slice with steps, Pad reflect/edge, ...) are described by an index
 * map, output element i = input element map[i], which both folds constants
 * and lowers to one tosa.gather at run time.  Gather, Pad, Range, EyeLike
 * and Trilu live in onnx_ops_shape_index.c. */
#include "onnx_shape_util.h"

/* ---- Constant, ConstantOfShape, Identity, Shape, Size ------------------- */

/* Decodes a TensorProto attribute into an allocated host-order buffer. */
static tinyml_status_t set_tensor_attr(onnx_ctx_t *c, const Onnx__TensorProto *t) {
  onnx_value_t v = {0};
  if (!onnx_decode_tensor(c, t, &v)) return c->error;
  tinyml_status_t st = onnx_set_out_const(c, 0, v.dtype, v.rank, v.dims, v.data);
  tinyml__free(c->allocator, v.data);
  return st;
}

static tinyml_status_t lower_constant(onnx_ctx_t *c) {
  const Onnx__AttributeProto *a;
  if ((a = onnx_attr(c, "value")) && a->t) return set_tensor_attr(c, a->t);
  if ((a = onnx_attr(c, "value_float")) && a->has_f)
    return onnx_set_out_const(c, 0, ONNX_FLOAT, 0, NULL, &a->f);
  if ((a = onnx_attr(c, "value_int")) && a->has_i)
    return onnx_set_out_const(c, 0, ONNX_INT64, 0, NULL, &a->i);
  if ((a = onnx_attr(c, "value_floats"))) {
    int64_t n = (int64_t)a->n_floats;
    return onnx_set_out_const(c, 0, ONNX_FLOAT, 1, &n, n ? (const void *)a->floats : "");
  }
  if ((a = onnx_attr(c, "value_ints"))) {
    int64_t n = (int64_t)a->n_ints;
    return onnx_set_out_const(c, 0, ONNX_INT64, 1, &n, n ? (const void *)a->ints : "");
  }
  return onnx_fail(c, "only value, value_float(s) and value_int(s) constants are supported");
}

static tinyml_status_t lower_constant_of_shape(onnx_ctx_t *c) {
  int64_t dims[TE_MAX_RANK];
  int64_t r = onnx_const_ints(c, 0, dims, TE_MAX_RANK);
  if (r < 0) return onnx_fail(c, "the shape must be a constant of rank at most %d", TE_MAX_RANK);
  for (int64_t i = 0; i < r; ++i)
    if (dims[i] < 0) return onnx_fail(c, "negative dimension");
  int64_t n = numel((uint32_t)r, dims);
  if (n > MAX_MAP)
    return onnx_fail(c, "the result is too large (%lld elements%s, at most %lld)",
                     (long long)n, n == INT64_MAX ? " or more" : "", (long long)MAX_MAP);
  int32_t dtype = ONNX_FLOAT;
  uint8_t value[8] = {0};
  const Onnx__AttributeProto *a = onnx_attr(c, "value");
  if (a && a->t) {
    onnx_value_t v = {0};
    if (!onnx_decode_tensor(c, a->t, &v)) return c->error;
    if (numel(v.rank, v.dims) != 1) {
      tinyml__free(c->allocator, v.data);
      return onnx_fail(c, "value must hold one element");
    }
    dtype = v.dtype;
    memcpy(value, v.data, onnx_dtype_size(dtype));
    tinyml__free(c->allocator, v.data);
  }
  size_t es = onnx_dtype_size(dtype);
  uint8_t *buf = tinyml__alloc(c->allocator, (size_t)n * es + 1, 16);
  if (!buf) return onnx_oom(c);
  for (int64_t i = 0; i < n; ++i) memcpy(buf + i * es, value, es);
  tinyml_status_t st = onnx_set_out_const(c, 0, dtype, (uint32_t)r, dims, buf);
  tinyml__free(c->allocator, buf);
  return st;
}

static tinyml_status_t lower_identity(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  return v ? out_reshaped(c, v->rank, v->dims) : c->error;
}


static tinyml_status_t lower_shape(onnx_ctx_t *c) {
  onnx_value_t *v = onnx_input(c, 0);
  if (!v) return onnx_fail(c, "input 0 is missing");
  int64_t r = v->rank;
  int64_t start = onnx_attr_int(c, "start", 0), end = onnx_attr_int(c, "end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = clamp64(start, 0, r);
  end = clamp64(end, 0, r);
  int64_t n = end > start ? end - start : 0;
  return onnx_set_out_const(c, 0, ONNX_INT64, 1, &n, n ? (const void *)(v->dims + start) : "");
}

static tinyml_status_t lower_size(onnx_ctx_t *c) {
  onnx_value_t *v = onnx_input(c, 0);
  if (!v) return onnx_fail(c, "input 0 is missing");
  int64_t n = numel(v->rank, v->dims);
  return onnx_set_out_const(c, 0, ONNX_INT64, 0, NULL, &n);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze -------------------------------- */

static tinyml_status_t lower_reshape(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t dims[TE_MAX_RANK];
  int64_t r = onnx_const_ints(c, 1, dims, TE_MAX_RANK);
  if (r < 0) return onnx_fail(c, "the shape must be a constant of rank at most %d", TE_MAX_RANK);
  int allowzero = (int)onnx_attr_int(c, "allowzero", 0);
  int64_t known = 1, infer = -1;
  for (int64_t i = 0; i < r; ++i) {
    if (dims[i] == 0 && !allowzero) {
      if (i >= v->rank) return onnx_fail(c, "a 0 entry past the input rank");
      dims[i] = v->dims[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) return onnx_fail(c, "more than one -1 entry");
      infer = i;
    } else if (dims[i] < 0) {
      return onnx_fail(c, "invalid shape entry %lld", (long long)dims[i]);
    } else {
      known = onnx_mul_sat(known, dims[i]);
    }
  }
  if (infer >= 0) {
    int64_t total = numel(v->rank, v->dims);
    if (known == 0 || total % known) return onnx_fail(c, "cannot infer the -1 dimension");
    dims[infer] = total / known;
  }
  return out_reshaped(c, (uint32_t)r, dims);
}

static tinyml_status_t lower_flatten(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t axis = onnx_attr_int(c, "axis", 1);
  if (axis < 0) axis += v->rank;
  if (axis < 0 || axis > v->rank) return onnx_fail(c, "axis out of range");
  int64_t dims[2] = {numel((uint32_t)axis, v->dims),
                     numel(v->rank - (uint32_t)axis, v->dims + axis)};
  return out_reshaped(c, 2, dims);
}

/* Reads Squeeze/Unsqueeze axes: an attribute before opset 13, then input 1. */
static int64_t axes_operand(onnx_ctx_t *c, int64_t *axes) {
  return ints_operand(c, 1, c->opset < 13 ? "axes" : NULL, axes, TE_MAX_RANK);
}

static tinyml_status_t lower_squeeze(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t axes[TE_MAX_RANK], dims[TE_MAX_RANK];
  int64_t n = axes_operand(c, axes);
  if (n == -2 || c->error) return c->error;
  uint32_t drop = 0, r = 0;
  for (int64_t i = 0; i < n; ++i) {
    int32_t a = onnx_axis(axes[i], v->rank);
    if (a < 0 || v->dims[a] != 1) return onnx_fail(c, "cannot squeeze axis %lld", (long long)axes[i]);
    drop |= 1u << a;
  }
  for (uint32_t d = 0; d < v->rank; ++d)
    if (n > 0 ? !((drop >> d) & 1) : v->dims[d] != 1) dims[r++] = v->dims[d];
  return out_reshaped(c, r, dims);
}

static tinyml_status_t lower_unsqueeze(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t axes[TE_MAX_RANK], dims[TE_MAX_RANK];
  int64_t n = axes_operand(c, axes);
  if (n < 0) return c->error ? c->error : onnx_fail(c, "axes are required");
  uint32_t r = v->rank + (uint32_t)n, add = 0;
  if (r > TE_MAX_RANK) return onnx_fail(c, "rank %u is too large", r);
  for (int64_t i = 0; i < n; ++i) {
    int32_t a = onnx_axis(axes[i], r);
    if (a < 0 || (add >> a) & 1) return onnx_fail(c, "invalid axis %lld", (long long)axes[i]);
    add |= 1u << a;
  }
  for (uint32_t d = 0, k = 0; d < r; ++d) dims[d] = (add >> d) & 1 ? 1 : v->dims[k++];
  return out_reshaped(c, r, dims);
}

/* ---- Transpose, DepthToSpace, SpaceToDepth ------------------------------- */

/* Output = reshape(transpose(reshape(input, d1), perm), d2). */
static tinyml_status_t out_permuted(onnx_ctx_t *c, uint32_t r1, const int64_t *d1,
                                    const int32_t *perm, uint32_t r2, const int64_t *d2) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  if (v->data) {
    int64_t n = numel(r1, d1), s[TE_MAX_RANK], od[TE_MAX_RANK], co[TE_MAX_RANK];
    strides_of(r1, d1, s);
    for (uint32_t i = 0; i < r1; ++i) od[i] = d1[perm[i]];
    int64_t *map = alloc_map(c, n);
    if (!map) return c->error;
    for (int64_t i = 0; i < n; ++i) {
      unravel(i, r1, od, co);
      map[i] = 0;
      for (uint32_t k = 0; k < r1; ++k) map[i] += co[k] * s[perm[k]];
    }
    return out_gathered(c, 0, 0, r2, d2, map);
  }
  int32_t dtype = v->dtype;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  x = te_transpose(&c->e, te_reshape(&c->e, x, r1, d1), perm);
  return onnx_set_out_typed(c, 0, te_reshape(&c->e, x, r2, d2), dtype);
}

static tinyml_status_t lower_transpose(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t p[TE_MAX_RANK], od[TE_MAX_RANK];
  int32_t perm[TE_MAX_RANK];
  int64_t n = onnx_attr_ints(c, "perm", p, TE_MAX_RANK);
  if (c->error) return c->error;
  uint32_t seen = 0;
  for (uint32_t i = 0; i < v->rank; ++i) {
    perm[i] = n < 0 ? (int32_t)(v->rank - 1 - i) : (int32_t)p[i];
    if (perm[i] < 0 || perm[i] >= (int32_t)v->rank || (seen >> perm[i]) & 1)
      return onnx_fail(c, "invalid permutation");
    seen |= 1u << perm[i];
    od[i] = v->dims[perm[i]];
  }
  if (n >= 0 && n != v->rank) return onnx_fail(c, "perm length differs from the rank");
  return out_permuted(c, v->rank, v->dims, perm, v->rank, od);
}

static tinyml_status_t lower_depth_to_space(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t b = onnx_attr_int(c, "blocksize", 0);
  char buf[16];
  const char *mode = onnx_attr_string(c, "mode", "DCR", buf, sizeof buf);
  int crd = strcmp(mode, "CRD") == 0;
  if (!crd && strcmp(mode, "DCR") != 0) return onnx_fail(c, "mode %s is not supported", mode);
  if (v->rank != 4 || b <= 0 || v->dims[1] % (b * b))
    return onnx_fail(c, "needs a 4-D input with channels divisible by blocksize^2");
  int64_t n = v->dims[0], ch = v->dims[1] / (b * b), h = v->dims[2], w = v->dims[3];
  int64_t dcr[6] = {n, b, b, ch, h, w}, crdd[6] = {n, ch, b, b, h, w};
  static const int32_t pd[6] = {0, 3, 4, 1, 5, 2}, pc[6] = {0, 1, 4, 2, 5, 3};
  int64_t out[4] = {n, ch, h * b, w * b};
  return out_permuted(c, 6, crd ? crdd : dcr, crd ? pc : pd, 4, out);
}

static tinyml_status_t lower_space_to_depth(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t b = onnx_attr_int(c, "blocksize", 0);
  if (v->rank != 4 || b <= 0 || v->dims[2] % b || v->dims[3] % b)
    return onnx_fail(c, "needs a 4-D input with height and width divisible by blocksize");
  int64_t n = v->dims[0], ch = v->dims[1], h = v->dims[2] / b, w = v->dims[3] / b;
  int64_t d1[6] = {n, ch, h, b, w, b}, out[4] = {n, ch * b * b, h, w};
  static const int32_t perm[6] = {0, 3, 5, 1, 2, 4};
  return out_permuted(c, 6, d1, perm, 4, out);
}

/* ---- Concat, Split -------------------------------------------------------- */

static tinyml_status_t concat_const(onnx_ctx_t *c, uint32_t axis, const int64_t *dims,
                                    int32_t dtype) {
  uint32_t rank = onnx_input(c, 0)->rank, n_in = onnx_input_count(c);
  size_t es = onnx_dtype_size(dtype);
  int64_t outer = numel(axis, dims), total = numel(rank, dims);
  uint8_t *buf = tinyml__alloc(c->allocator, (size_t)total * es + 1, 16), *p = buf;
  if (!buf) return onnx_oom(c);
  for (int64_t o = 0; o < outer; ++o)
    for (uint32_t i = 0; i < n_in; ++i) {
      const onnx_value_t *v = onnx_input(c, i);
      size_t chunk = (size_t)numel(rank - axis, v->dims + axis) * es;
      memcpy(p, (const uint8_t *)v->data + o * chunk, chunk);
      p += chunk;
    }
  tinyml_status_t st = onnx_set_out_const(c, 0, dtype, rank, dims, buf);
  tinyml__free(c->allocator, buf);
  return st;
}

static tinyml_status_t lower_concat(onnx_ctx_t *c) {
  uint32_t n_in = onnx_input_count(c);
  onnx_value_t *v0 = need_input(c, 0);
  if (!v0 || n_in > 64) return c->error ? c->error : onnx_fail(c, "too many inputs");
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", 0), v0->rank);
  if (axis < 0) return onnx_fail(c, "axis out of range");
  int64_t dims[TE_MAX_RANK];
  memcpy(dims, v0->dims, sizeof dims);
  dims[axis] = 0;
  int all_const = 1;
  for (uint32_t i = 0; i < n_in; ++i) {
    onnx_value_t *v = need_input(c, i);
    if (!v) return c->error;
    if (v->rank != v0->rank || v->dtype != v0->dtype) return onnx_fail(c, "inputs disagree");
    for (uint32_t d = 0; d < v->rank; ++d)
      if (d != (uint32_t)axis && v->dims[d] != v0->dims[d]) return onnx_fail(c, "shapes disagree");
    dims[axis] += v->dims[axis];
    all_const &= v->data != NULL;
  }
  int32_t dtype = v0->dtype;
  if (all_const) return concat_const(c, (uint32_t)axis, dims, dtype);
  te_value_t ops[64];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n_in; ++i) {
    if (onnx_input(c, i)->dims[axis] == 0) continue; /* empty inputs add nothing */
    ops[k] = onnx_in(c, i);
    if (!ops[k++].id) return c->error;
  }
  if (k == 1) return onnx_set_out_typed(c, 0, ops[0], dtype);
  char props[32];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  te_type_t t = te_type(ops[0].type.elem, v0->rank, dims);
  return onnx_set_out_typed(c, 0, te_op(&c->e, "tosa.concat", ops, k, props, &t), dtype);
}

/* Output `out` = input 0 sliced to [start, start+size) with steps. */
static tinyml_status_t out_sliced(onnx_ctx_t *c, uint32_t out, const int64_t *start,
                                  const int64_t *size, const int64_t *step) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  uint32_t r = v->rank;
  int unit = 1;
  for (uint32_t d = 0; d < r; ++d) unit &= step[d] == 1;
  if (!v->data && unit && numel(r, size) > 0) {
    int32_t dtype = v->dtype;
    te_value_t x = onnx_in(c, 0);
    if (!x.id) return c->error;
    te_type_t t = te_type(x.type.elem, r, size);
    te_value_t ops[3] = {x, te_shape(&c->e, r, start), te_shape(&c->e, r, size)};
    return onnx_set_out_typed(c, out, te_op(&c->e, "tosa.slice", ops, 3, NULL, &t), dtype);
  }
  int64_t n = numel(r, size), s[TE_MAX_RANK], co[TE_MAX_RANK];
  strides_of(r, v->dims, s);
  int64_t *map = alloc_map(c, n);
  if (!map) return c->error;
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, r, size, co);
    map[i] = 0;
    for (uint32_t d = 0; d < r; ++d) map[i] += (start[d] + co[d] * step[d]) * s[d];
  }
  return out_gathered(c, 0, out, r, size, map);
}

static tinyml_status_t lower_split(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", 0), v->rank);
  if (axis < 0) return onnx_fail(c, "axis out of range");
  uint32_t n_out = onnx_output_count(c);
  int64_t split[64], dim = v->dims[axis];
  if (n_out == 0 || n_out > 64) return onnx_fail(c, "bad output count");
  int64_t n = ints_operand(c, 1, c->opset < 13 ? "split" : NULL, split, 64);
  if (n == -2 || c->error) return c->error;
  if (n < 0) {
    int64_t parts = c->opset >= 18 ? onnx_attr_int(c, "num_outputs", n_out) : n_out;
    if (parts != n_out) return onnx_fail(c, "num_outputs differs from the output count");
    if (c->opset < 18 && dim % parts) return onnx_fail(c, "the axis does not split evenly");
    int64_t chunk = (dim + parts - 1) / parts;
    for (uint32_t i = 0; i < n_out; ++i) {
      int64_t left = dim - chunk * i;
      split[i] = left < 0 ? 0 : left < chunk ? left : chunk;
    }
    n = n_out;
  }
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (split[i] < 0 || split[i] > dim) return onnx_fail(c, "split size %lld is out of range",
                                                         (long long)split[i]);
    sum += split[i];
  }
  if (n != n_out || sum != dim) return onnx_fail(c, "split sizes disagree with the input");
  int64_t start[TE_MAX_RANK] = {0}, size[TE_MAX_RANK], step[TE_MAX_RANK];
  memcpy(size, v->dims, sizeof size);
  for (uint32_t d = 0; d < TE_MAX_RANK; ++d) step[d] = 1;
  for (uint32_t i = 0; i < n_out; ++i) {
    size[axis] = split[i];
    TINYML_RETURN_IF_ERROR(out_sliced(c, i, start, size, step));
    start[axis] += split[i];
  }
  return TINYML_OK;
}

/* ---- Slice ---------------------------------------------------------------- */

/* ONNX's clamping of one axis's start/end for a step (opset 10+ rules). */
static void slice_axis(int64_t dim, int64_t b, int64_t e, int64_t step, int64_t *start,
                       int64_t *size) {
  if (b < 0) b += dim;
  if (e < 0) e += dim;
  if (step > 0) {
    b = clamp64(b, 0, dim);
    e = clamp64(e, 0, dim);
  } else {
    b = clamp64(b, 0, dim - 1);
    e = clamp64(e, -1, dim - 1);
  }
  int64_t n = step > 0 ? (e - b + step - 1) / step : (b - e + (-step) - 1) / (-step);
  *start = b;
  *size = n > 0 ? n : 0;
}

static tinyml_status_t lower_slice(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int old = c->opset < 10;
  int64_t b[TE_MAX_RANK], e[TE_MAX_RANK], ax[TE_MAX_RANK], st[TE_MAX_RANK];
  int64_t nb = ints_operand(c, 1, old ? "starts" : NULL, b, TE_MAX_RANK);
  int64_t ne = ints_operand(c, 2, old ? "ends" : NULL, e, TE_MAX_RANK);
  int64_t na = ints_operand(c, 3, old ? "axes" : NULL, ax, TE_MAX_RANK);
  int64_t ns = old ? -1 : ints_operand(c, 4, NULL, st, TE_MAX_RANK);
  if (c->error) return c->error;
  if (nb < 0 || nb != ne) return onnx_fail(c, "starts and ends must be constants of one length");
  if ((na >= 0 && na != nb) || (ns >= 0 && ns != nb))
    return onnx_fail(c, "axes and steps must match starts");
  int64_t start[TE_MAX_RANK] = {0}, size[TE_MAX_RANK], step[TE_MAX_RANK];
  uint32_t seen = 0;
  for (uint32_t d = 0; d < v->rank; ++d) {
    size[d] = v->dims[d];
    step[d] = 1;
  }
  for (int64_t i = 0; i < nb; ++i) {
    int32_t a = onnx_axis(na >= 0 ? ax[i] : i, v->rank);
    int64_t s = ns >= 0 ? st[i] : 1;
    if (a < 0 || (seen >> a) & 1 || s == 0) return onnx_fail(c, "invalid axes or steps");
    seen |= 1u << a;
    slice_axis(v->dims[a], b[i], e[i], s, &start[a], &size[a]);
    step[a] = s;
  }
  return out_sliced(c, 0, start, size, step);
}

/* ---- Expand, Tile, Pad ---------------------------------------------------- */

/* Output = input tiled `mult` times (input lifted to `rank` first). */
static tinyml_status_t out_tiled(onnx_ctx_t *c, uint32_t rank, const int64_t *mult) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t in[TE_MAX_RANK], out[TE_MAX_RANK];
  uint32_t lift = rank - v->rank;
  for (uint32_t d = 0; d < rank; ++d) {
    if (mult[d] < 0) return onnx_fail(c, "negative repeat or shape entry");
    in[d] = d < lift ? 1 : v->dims[d - lift];
    out[d] = onnx_mul_sat(in[d], mult[d]);
  }
  int64_t n = numel(rank, out);
  if (v->data || n == 0) {
    int64_t s[TE_MAX_RANK], co[TE_MAX_RANK], *map = alloc_map(c, n);
    if (!map) return c->error;
    strides_of(rank, in, s);
    for (int64_t i = 0; i < n; ++i) {
      unravel(i, rank, out, co);
      map[i] = 0;
      for (uint32_t d = 0; d < rank; ++d) map[i] += (co[d] % in[d]) * s[d];
    }
    return out_gathered(c, 0, 0, rank, out, map);
  }
  int32_t dtype = v->dtype;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  x = te_reshape(&c->e, x, rank, in);
  te_type_t t = te_type(x.type.elem, rank, out);
  te_value_t ops[2] = {x, te_shape(&c->e, rank, mult)};
  return onnx_set_out_typed(c, 0, te_op(&c->e, "tosa.tile", ops, 2, NULL, &t), dtype);
}

static tinyml_status_t lower_expand(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t shape[TE_MAX_RANK], mult[TE_MAX_RANK];
  int64_t n = onnx_const_ints(c, 1, shape, TE_MAX_RANK);
  if (n < 0) return onnx_fail(c, "the shape must be a constant of rank at most %d", TE_MAX_RANK);
  uint32_t r = (uint32_t)n > v->rank ? (uint32_t)n : v->rank;
  for (uint32_t d = 0; d < r; ++d) {
    int64_t a = d + v->rank >= r ? v->dims[d + v->rank - r] : 1;
    int64_t b = d + (uint32_t)n >= r ? shape[d + n - r] : 1;
    if (a != b && a != 1 && b != 1) return onnx_fail(c, "shapes do not broadcast");
    mult[d] = a == 1 ? b : 1;
  }
  return out_tiled(c, r, mult);
}

static tinyml_status_t lower_tile(onnx_ctx_t *c) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  int64_t mult[TE_MAX_RANK];
  if (onnx_const_ints(c, 1, mult, TE_MAX_RANK) != v->rank)
    return onnx_fail(c, "repeats must be a constant with one entry per dimension");
  for (uint32_t d = 0; d < v->rank; ++d)
    if (mult[d] < 0) return onnx_fail(c, "negative repeats");
  return out_tiled(c, v->rank, mult);
}

/* Maps an out-of-range coordinate back inside [0, dim) for a pad mode. */
const onnx_lowering_t onnx_lowerings_shape[] = {
    {"Constant", 1, 23, lower_constant},
    {"ConstantOfShape", 9, 23, lower_constant_of_shape},
    {"Identity", 1, 23, lower_identity},
    {"Shape", 1, 23, lower_shape},
    {"Size", 1, 23, lower_size},
    {"Reshape", 5, 23, lower_reshape},
    {"Flatten", 1, 23, lower_flatten},
    {"Squeeze", 1, 23, lower_squeeze},
    {"Unsqueeze", 1, 23, lower_unsqueeze},
    {"Transpose", 1, 23, lower_transpose},
    {"DepthToSpace", 1, 23, lower_depth_to_space},
    {"SpaceToDepth", 1, 23, lower_space_to_depth},
    {"Concat", 4, 23, lower_concat},
    {"Split", 2, 23, lower_split},
    {"Slice", 1, 23, lower_slice},
    {"Expand", 8, 23, lower_expand},
    {"Tile", 6, 23, lower_tile},
    {NULL, 0, 0, NULL},
};
