/* ONNX lowerings: sequences and optionals, as compile-time lists of
 * tensors (onnx_seq.h).  Compiled code has no sequence type, so every
 * position must fold to a constant; one known only at run time is
 * refused.  The elements themselves may be run-time tensors.  See
 * onnx_lower.h. */
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "onnx_lower.h"
#include "onnx_seq.h"

/* Input i, which must be a sequence. */
static onnx_value_t *seq_input(onnx_ctx_t *c, uint32_t i) {
  onnx_value_t *s = onnx_input(c, i);
  if (!onnx_is_seq(s) || onnx_seq_hdr(s)->none) {
    onnx_fail(c, "input %u is not a sequence", i);
    return NULL;
  }
  return s;
}

/* Input i, which must be a tensor (constant or run-time). */
static onnx_value_t *tensor_input(onnx_ctx_t *c, uint32_t i) {
  onnx_value_t *x = onnx_input(c, i);
  if (!x || x->dtype == ONNX_SEQUENCE || (!x->data && !x->v.id)) {
    onnx_fail(c, "input %u is missing or not a tensor", i);
    return NULL;
  }
  return x;
}

/* The constant position of input i (default `def` when absent), checked
 * against [-count, count + extra - 1] and made non-negative; -1 on error. */
static int64_t position(onnx_ctx_t *c, uint32_t i, uint32_t count, uint32_t extra, int64_t def) {
  int64_t p = def;
  if (onnx_input(c, i)) {
    const onnx_value_t *v = onnx_input(c, i);
    if (onnx_numel(v->rank, v->dims) != 1 || v->rank > 1 ||
        onnx_const_ints(c, i, &p, 1) != 1) {
      onnx_fail(c, "the position is not a constant integer scalar (a position known only at "
                   "run time cannot index a compile-time sequence)");
      return -1;
    }
  }
  int64_t lo = -(int64_t)count, hi = (int64_t)count + extra - 1;
  if (p < lo || p > hi) {
    onnx_fail(c, "position %lld is outside [%lld, %lld]", (long long)p, (long long)lo,
              (long long)hi);
    return -1;
  }
  return p < 0 ? p + count : p;
}

static tinyml_status_t lower_construct(onnx_ctx_t *c) {
  onnx_seq_build_t b = {0};
  for (uint32_t i = 0; i < onnx_input_count(c); ++i) {
    onnx_value_t *x = tensor_input(c, i);
    if (!x || !onnx_seq_insert(c, &b, i, x)) return onnx_seq_build_free(c, &b), c->error;
  }
  return onnx_seq_set_out(c, 0, &b);
}

static tinyml_status_t lower_empty(onnx_ctx_t *c) {
  onnx_seq_build_t b = {.elem_dtype = (int32_t)onnx_attr_int(c, "dtype", ONNX_FLOAT)};
  return onnx_seq_set_out(c, 0, &b);
}

static tinyml_status_t lower_at(onnx_ctx_t *c) {
  onnx_value_t *s = seq_input(c, 0);
  if (!s) return c->error;
  int64_t p = position(c, 1, onnx_seq_hdr(s)->count, 0, 0);
  if (p < 0) return c->error;
  onnx_value_t x = onnx_seq_item(s, (uint32_t)p);
  return onnx_bind_out(c, 0, &x);
}

static tinyml_status_t lower_insert(onnx_ctx_t *c) {
  onnx_value_t *s = seq_input(c, 0), *x = s ? tensor_input(c, 1) : NULL;
  if (!x) return c->error;
  uint32_t n = onnx_seq_hdr(s)->count;
  int64_t p = position(c, 2, n, 1, n);
  onnx_seq_build_t b;
  if (p < 0 || !onnx_seq_start(c, &b, s)) return c->error;
  if (!onnx_seq_insert(c, &b, (uint32_t)p, x)) return onnx_seq_build_free(c, &b), c->error;
  return onnx_seq_set_out(c, 0, &b);
}

static tinyml_status_t lower_erase(onnx_ctx_t *c) {
  onnx_value_t *s = seq_input(c, 0);
  if (!s) return c->error;
  uint32_t n = onnx_seq_hdr(s)->count;
  int64_t p = position(c, 1, n, 0, (int64_t)n - 1);
  onnx_seq_build_t b;
  if (p < 0 || !onnx_seq_start(c, &b, s)) return c->error;
  onnx_seq_erase(c, &b, (uint32_t)p);
  return onnx_seq_set_out(c, 0, &b);
}

static tinyml_status_t lower_length(onnx_ctx_t *c) {
  onnx_value_t *s = seq_input(c, 0);
  if (!s) return c->error;
  int64_t n = onnx_seq_hdr(s)->count;
  return onnx_set_out_const(c, 0, ONNX_INT64, 0, NULL, &n);
}

static tinyml_status_t lower_concat(onnx_ctx_t *c) {
  onnx_value_t *s = seq_input(c, 0);
  if (!s) return c->error;
  uint32_t n = onnx_seq_hdr(s)->count;
  if (!n) return onnx_fail(c, "the sequence is empty");
  int new_axis = onnx_attr_int(c, "new_axis", 0) != 0;
  onnx_value_t *xs = tinyml__calloc(c->allocator, n, sizeof *xs, 8);
  if (!xs) return onnx_oom(c);
  for (uint32_t k = 0; k < n; ++k) xs[k] = onnx_seq_item(s, k);
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", 0), xs[0].rank + (uint32_t)new_axis);
  onnx_value_t out = {0};
  if (axis < 0 || xs[0].rank + new_axis > TE_MAX_RANK) {
    onnx_fail(c, "axis is out of range");
  } else {
    for (uint32_t k = 0; new_axis && k < n && !c->error; ++k) onnx_view_unsqueeze(c, &xs[k], axis);
    if (!c->error && onnx_view_concat(c, xs, n, axis, &out)) onnx_bind_out(c, 0, &out);
  }
  tinyml__free(c->allocator, out.data);
  tinyml__free(c->allocator, xs);
  return c->error;
}

/* The chunk sizes along the axis of length `len`: the split input (a
 * scalar chunk size or a list), or ones.  Count, or -1 on error. */
static int64_t split_sizes(onnx_ctx_t *c, int64_t len, int64_t *sizes, uint32_t cap) {
  const onnx_value_t *sp = onnx_input(c, 1);
  if (!sp) {
    if (len > cap) return onnx_fail(c, "more than %u chunks", cap), -1;
    for (int64_t k = 0; k < len; ++k) sizes[k] = 1;
    return len;
  }
  int64_t n = onnx_const_ints(c, 1, sizes, cap);
  if (n < 0 || sp->rank > 1)
    return onnx_fail(c, "'split' is not constant integers: the sequence's length would be "
                        "known only at run time"), -1;
  if (sp->rank == 0) {
    int64_t each = sizes[0];
    if (each <= 0) return onnx_fail(c, "'split' must be positive"), -1;
    n = (len + each - 1) / each;
    if (n > cap) return onnx_fail(c, "more than %u chunks", cap), -1;
    for (int64_t k = 0; k < n; ++k) sizes[k] = k + 1 < n ? each : len - each * (n - 1);
    return n;
  }
  int64_t sum = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (sizes[k] < 0) return onnx_fail(c, "'split' has a negative size"), -1;
    sum += sizes[k];
  }
  if (sum != len) return onnx_fail(c, "'split' sums to %lld, not %lld", (long long)sum, (long long)len), -1;
  return n;
}

static tinyml_status_t lower_split(onnx_ctx_t *c) {
  onnx_value_t *x = tensor_input(c, 0);
  if (!x) return c->error;
  onnx_value_t in = *x;
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", 0), in.rank);
  if (axis < 0) return onnx_fail(c, "axis is out of range");
  int64_t sizes[1024];
  int64_t n = split_sizes(c, in.dims[axis], sizes, 1024);
  if (n < 0) return c->error;
  int squeeze = !onnx_input(c, 1) && onnx_attr_int(c, "keepdims", 1) == 0;
  onnx_seq_build_t b = {.elem_dtype = in.dtype};
  int64_t at = 0;
  for (int64_t k = 0; k < n && !c->error; at += sizes[k++]) {
    onnx_value_t part;
    if (!onnx_view_slice(c, &in, axis, at, sizes[k], &part)) break;
    if (squeeze) {
      int64_t dims[TE_MAX_RANK];
      memcpy(dims, part.dims, sizeof dims);
      memmove(&dims[axis], &dims[axis + 1], sizeof(int64_t) * (part.rank - (uint32_t)axis - 1));
      onnx_view_reshape(c, &part, part.rank - 1, dims);
    }
    onnx_seq_insert(c, &b, (uint32_t)k, &part);
    tinyml__free(c->allocator, part.data);
  }
  if (c->error) return onnx_seq_build_free(c, &b), c->error;
  return onnx_seq_set_out(c, 0, &b);
}

/* ---- Optional ----------------------------------------------------------- */

static tinyml_status_t lower_optional(onnx_ctx_t *c) {
  onnx_value_t *x = onnx_input(c, 0);
  if (x) return onnx_bind_out(c, 0, x); /* present: the element itself */
  onnx_seq_build_t b = {.none = 1};
  return onnx_seq_set_out(c, 0, &b);
}

static int is_none(const onnx_value_t *x) {
  return !x || (onnx_is_seq(x) && onnx_seq_hdr(x)->none);
}

static tinyml_status_t lower_has_element(onnx_ctx_t *c) {
  uint8_t has = !is_none(onnx_input(c, 0));
  return onnx_set_out_const(c, 0, ONNX_BOOL, 0, NULL, &has);
}

static tinyml_status_t lower_get_element(onnx_ctx_t *c) {
  onnx_value_t *x = onnx_input(c, 0);
  if (is_none(x)) return onnx_fail(c, "the optional is empty");
  return onnx_bind_out(c, 0, x);
}

const onnx_lowering_t onnx_lowerings_sequence[] = {
    {"SequenceConstruct", 11, 23, lower_construct},
    {"SequenceEmpty", 11, 23, lower_empty},
    {"SequenceAt", 11, 23, lower_at},
    {"SequenceInsert", 11, 23, lower_insert},
    {"SequenceErase", 11, 23, lower_erase},
    {"SequenceLength", 11, 23, lower_length},
    {"ConcatFromSequence", 11, 23, lower_concat},
    {"SplitToSequence", 11, 23, lower_split},
    {"Optional", 15, 23, lower_optional},
    {"OptionalHasElement", 15, 23, lower_has_element},
    {"OptionalGetElement", 15, 23, lower_get_element},
    {NULL, 0, 0, NULL},
};
