/* Helpers shared by the shape-family lowerings (onnx_ops_shape.c,
 * onnx_ops_shape_index.c): index maps and constant folding.  Internal. */
#ifndef TINYML_IMPORTERS_ONNX_SHAPE_UTIL_H
#define TINYML_IMPORTERS_ONNX_SHAPE_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "onnx_lower.h"

/* Index maps beyond this many elements are refused (host memory). */
#define MAX_MAP (1LL << 24)

static inline int64_t numel(uint32_t rank, const int64_t *dims) {
  return onnx_numel(rank, dims);
}

static inline void strides_of(uint32_t rank, const int64_t *dims, int64_t *s) {
  int64_t n = 1;
  for (uint32_t i = rank; i-- > 0;) {
    s[i] = n;
    n *= dims[i];
  }
}

static inline void unravel(int64_t i, uint32_t rank, const int64_t *dims, int64_t *coord) {
  for (uint32_t d = rank; d-- > 0;) {
    coord[d] = dims[d] ? i % dims[d] : 0;
    i = dims[d] ? i / dims[d] : 0;
  }
}

static inline onnx_value_t *need_input(onnx_ctx_t *c, uint32_t i) {
  onnx_value_t *v = onnx_input(c, i);
  if (!v) onnx_fail(c, "input %u is missing", i);
  else if (!onnx_dtype_size(v->dtype)) {
    onnx_fail(c, "input type %s is not supported", onnx_dtype_name(v->dtype));
    v = NULL;
  }
  return v;
}

static inline int64_t *alloc_map(onnx_ctx_t *c, int64_t n) {
  if (n > MAX_MAP) {
    onnx_fail(c, "the result is too large (%lld elements)", (long long)n);
    return NULL;
  }
  int64_t *m = tinyml__alloc(c->allocator, (size_t)(n + 1) * sizeof(int64_t), 16);
  if (!m) onnx_oom(c);
  return m;
}

/* INT64 values picked by `map` as slices of their flat form, one per run
 * of consecutive indices (tosa.gather has no 64-bit form; a slice copies
 * exactly).  Id 0, with an error, past 64 runs. */
static inline te_value_t gather_i64_runs(onnx_ctx_t *c, te_value_t x, int64_t n, const int64_t *map) {
  te_value_t parts[64];
  uint32_t count = 0;
  int64_t total = te_numel(&x.type);
  x = te_reshape(&c->e, x, 1, &total);
  for (int64_t i = 0; i < n;) {
    int64_t len = 1;
    while (i + len < n && map[i + len] == map[i] + len) ++len;
    if (count == 64) {
      onnx_fail(c, "a run-time INT64 gather of more than 64 separate runs is not supported");
      return (te_value_t){0};
    }
    parts[count++] = te_slice(&c->e, x, &map[i], &len);
    i += len;
  }
  return count == 1 ? parts[0] : te_concat(&c->e, parts, count, 0);
}

/* Output `out` = input `in`'s elements picked by `map` (flat indices).
 * Frees map. */
static inline tinyml_status_t out_gathered(onnx_ctx_t *c, uint32_t in, uint32_t out, uint32_t rank,
                                    const int64_t *dims, int64_t *map) {
  onnx_value_t *v = need_input(c, in);
  int64_t n = numel(rank, dims);
  tinyml_status_t st = c->error;
  if (!v) goto done;
  size_t es = onnx_dtype_size(v->dtype);
  if (v->data) {
    uint8_t *buf = tinyml__alloc(c->allocator, (size_t)n * es + 1, 16);
    if (!buf) {
      st = onnx_oom(c);
      goto done;
    }
    for (int64_t i = 0; i < n; ++i)
      memcpy(buf + i * es, (const uint8_t *)v->data + map[i] * es, es);
    st = onnx_set_out_const(c, out, v->dtype, rank, dims, buf);
    tinyml__free(c->allocator, buf);
    goto done;
  }
  if (n == 0) {
    st = onnx_fail(c, "empty results are not supported");
    goto done;
  }
  int32_t dtype = v->dtype;
  te_value_t x = onnx_in(c, in);
  if (!x.id) goto done;
  if (dtype == ONNX_INT64) {
    te_value_t y = gather_i64_runs(c, x, n, map);
    st = y.id ? onnx_set_out_typed(c, out, te_reshape(&c->e, y, rank, dims), dtype) : c->error;
    goto done;
  }
  int is_bool = x.type.elem == TE_I1;
  if (is_bool) x = te_cast(&c->e, x, TE_I8);
  x = te_reshape(&c->e, x, 3, (int64_t[3]){1, te_numel(&x.type), 1});
  int32_t *idx = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  if (!idx) {
    st = onnx_oom(c);
    goto done;
  }
  for (int64_t i = 0; i < n; ++i) idx[i] = (int32_t)map[i];
  te_type_t it = te_type(TE_I32, 2, (int64_t[2]){1, n});
  te_value_t ops[2] = {x, te_const(&c->e, &it, idx)};
  tinyml__free(c->allocator, idx);
  te_type_t gt = te_type(x.type.elem, 3, (int64_t[3]){1, n, 1});
  te_value_t y = te_reshape(&c->e, te_op(&c->e, "tosa.gather", ops, 2, NULL, &gt), rank, dims);
  if (is_bool) y = te_cast(&c->e, y, TE_I1);
  st = onnx_set_out_typed(c, out, y, dtype);
done:
  tinyml__free(c->allocator, map);
  return st;
}

/* Output 0 = input 0 with a new shape of the same element count. */
static inline tinyml_status_t out_reshaped(onnx_ctx_t *c, uint32_t rank, const int64_t *dims) {
  onnx_value_t *v = need_input(c, 0);
  if (!v) return c->error;
  if (numel(rank, dims) != numel(v->rank, v->dims))
    return onnx_fail(c, "the new shape has a different element count");
  if (v->data) return onnx_set_out_const(c, 0, v->dtype, rank, dims, v->data);
  if (numel(rank, dims) == 0) return onnx_fail(c, "empty tensors are not supported");
  int32_t dtype = v->dtype;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  return onnx_set_out_typed(c, 0, te_reshape(&c->e, x, rank, dims), dtype);
}

/* Reads integers from input i (if present) or else attribute `attr` (if
 * non-NULL); -1 when neither is there, -2 (error recorded) when the input is
 * present but not a constant. */
static inline int64_t ints_operand(onnx_ctx_t *c, uint32_t i, const char *attr, int64_t *out,
                            uint32_t cap) {
  if (attr) return onnx_attr_ints(c, attr, out, cap);
  if (!onnx_input(c, i)) return -1;
  int64_t n = onnx_const_ints(c, i, out, cap);
  if (n < 0) {
    onnx_fail(c, "input %u must be a constant integer tensor", i);
    return -2;
  }
  return n;
}


static inline int64_t clamp64(int64_t x, int64_t lo, int64_t hi) {
  return x < lo ? lo : x > hi ? hi : x;
}

#endif
