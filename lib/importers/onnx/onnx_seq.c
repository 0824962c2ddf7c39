/* Compile-time sequences and the value helpers Loop and Scan share; see
 * onnx_seq.h. */
#include "onnx_seq.h"

#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"

#define ALIGN16(n) (((n) + 15u) & ~(uint64_t)15u)

int onnx_is_seq(const onnx_value_t *v) { return v && v->dtype == ONNX_SEQUENCE && v->data; }

const onnx_seq_hdr_t *onnx_seq_hdr(const onnx_value_t *v) { return v->data; }

static const onnx_seq_item_t *items_of(const onnx_value_t *s) {
  return (const onnx_seq_item_t *)((const uint8_t *)s->data + sizeof(onnx_seq_hdr_t));
}

onnx_value_t onnx_seq_item(const onnx_value_t *s, uint32_t k) {
  const onnx_seq_item_t *it = &items_of(s)[k];
  onnx_value_t x = {.name = s->name, .dtype = it->dtype, .v = it->v, .rank = it->rank};
  memcpy(x.dims, it->dims, sizeof x.dims);
  if (it->off) x.data = (uint8_t *)s->data + it->off;
  return x;
}

size_t onnx_value_bytes(const onnx_value_t *v) {
  if (v->dtype == ONNX_SEQUENCE) return v->data ? (size_t)onnx_seq_hdr(v)->bytes : 0;
  return (size_t)onnx_numel(v->rank, v->dims) * onnx_dtype_size(v->dtype);
}

int onnx_value_copy(onnx_ctx_t *c, onnx_value_t *dst, const onnx_value_t *src) {
  *dst = *src;
  dst->data = NULL;
  if (!src->data) return 1;
  size_t n = onnx_value_bytes(src);
  dst->data = tinyml__alloc(c->allocator, n + 1, 16);
  if (!dst->data) return onnx_oom(c), 0;
  if (n) memcpy(dst->data, src->data, n);
  return 1;
}

void onnx_seq_build_free(onnx_ctx_t *c, onnx_seq_build_t *b) {
  for (uint32_t k = 0; k < b->count; ++k) tinyml__free(c->allocator, b->items[k].data);
  tinyml__free(c->allocator, b->items);
  memset(b, 0, sizeof *b);
}

int onnx_seq_insert(onnx_ctx_t *c, onnx_seq_build_t *b, uint32_t pos, const onnx_value_t *x) {
  if (x->dtype == ONNX_SEQUENCE) {
    onnx_fail(c, "'%s': sequences of sequences are not supported", x->name);
    return 0;
  }
  if (b->elem_dtype && x->dtype != b->elem_dtype) {
    onnx_fail(c, "'%s' is %s, the sequence holds %s", x->name, onnx_dtype_name(x->dtype),
              onnx_dtype_name(b->elem_dtype));
    return 0;
  }
  if (b->count == b->cap) {
    uint32_t cap = b->cap ? 2 * b->cap : 8;
    onnx_value_t *n = tinyml__calloc(c->allocator, cap, sizeof *n, 8);
    if (!n) return onnx_oom(c), 0;
    if (b->count) memcpy(n, b->items, b->count * sizeof *n);
    tinyml__free(c->allocator, b->items);
    b->items = n;
    b->cap = cap;
  }
  onnx_value_t copy;
  if (!onnx_value_copy(c, &copy, x)) return 0;
  memmove(&b->items[pos + 1], &b->items[pos], (b->count - pos) * sizeof *b->items);
  b->items[pos] = copy;
  b->count++;
  b->elem_dtype = x->dtype;
  return 1;
}

void onnx_seq_erase(onnx_ctx_t *c, onnx_seq_build_t *b, uint32_t pos) {
  tinyml__free(c->allocator, b->items[pos].data);
  memmove(&b->items[pos], &b->items[pos + 1], (b->count - pos - 1) * sizeof *b->items);
  b->count--;
}

int onnx_seq_start(onnx_ctx_t *c, onnx_seq_build_t *b, const onnx_value_t *s) {
  memset(b, 0, sizeof *b);
  if (!s) return 1;
  const onnx_seq_hdr_t *h = onnx_seq_hdr(s);
  b->elem_dtype = h->elem_dtype;
  for (uint32_t k = 0; k < h->count; ++k) {
    onnx_value_t x = onnx_seq_item(s, k);
    if (!onnx_seq_insert(c, b, k, &x)) return onnx_seq_build_free(c, b), 0;
  }
  return 1;
}

static void *pack(onnx_ctx_t *c, const onnx_seq_build_t *b) {
  uint64_t bytes = sizeof(onnx_seq_hdr_t) + (uint64_t)b->count * sizeof(onnx_seq_item_t);
  for (uint32_t k = 0; k < b->count; ++k)
    if (b->items[k].data) bytes = ALIGN16(bytes) + onnx_value_bytes(&b->items[k]);
  uint8_t *blk = tinyml__calloc(c->allocator, (size_t)bytes + 1, 1, 16);
  if (!blk) return onnx_oom(c), NULL;
  onnx_seq_hdr_t h = {.bytes = bytes, .count = b->count, .elem_dtype = b->elem_dtype,
                      .none = b->none != 0};
  memcpy(blk, &h, sizeof h);
  onnx_seq_item_t *it = (onnx_seq_item_t *)(blk + sizeof h);
  uint64_t at = sizeof h + (uint64_t)b->count * sizeof *it;
  for (uint32_t k = 0; k < b->count; ++k) {
    const onnx_value_t *x = &b->items[k];
    it[k] = (onnx_seq_item_t){.dtype = x->dtype, .rank = x->rank, .v = x->v};
    memcpy(it[k].dims, x->dims, sizeof it[k].dims);
    if (!x->data) continue;
    at = ALIGN16(at);
    it[k].off = at;
    memcpy(blk + at, x->data, onnx_value_bytes(x));
    at += onnx_value_bytes(x);
  }
  return blk;
}

/* Binds output i to a block (copied). */
static tinyml_status_t bind_block(onnx_ctx_t *c, uint32_t i, const void *blk) {
  const onnx_seq_hdr_t *h = blk;
  if (i >= onnx_output_count(c) || !c->node->output[i][0]) return TINYML_OK;
  if (!onnx_check_constant(c, c->node->output[i], h->bytes)) return c->error;
  void *copy = tinyml__alloc(c->allocator, (size_t)h->bytes + 1, 16);
  if (!copy) return onnx_oom(c);
  memcpy(copy, blk, (size_t)h->bytes);
  onnx_value_t *v = onnx_out_slot(c, i);
  if (!v) {
    tinyml__free(c->allocator, copy);
    return c->error ? c->error : onnx_oom(c);
  }
  v->dtype = ONNX_SEQUENCE;
  v->data = copy;
  return TINYML_OK;
}

tinyml_status_t onnx_seq_set_out(onnx_ctx_t *c, uint32_t i, onnx_seq_build_t *b) {
  void *blk = pack(c, b);
  onnx_seq_build_free(c, b);
  if (!blk) return c->error;
  tinyml_status_t st = bind_block(c, i, blk);
  tinyml__free(c->allocator, blk);
  return st;
}

tinyml_status_t onnx_bind_out(onnx_ctx_t *c, uint32_t i, const onnx_value_t *x) {
  /* Binding may move the value table, where x may live. */
  onnx_value_t v = *x;
  if (v.dtype == ONNX_SEQUENCE) return bind_block(c, i, v.data);
  if (v.data) return onnx_set_out_const(c, i, v.dtype, v.rank, v.dims, v.data);
  return onnx_set_out_typed(c, i, v.v, v.dtype);
}

te_value_t onnx_view_runtime(onnx_ctx_t *c, onnx_value_t *x) {
  if (x->v.id) return x->v;
  te_elem_t elem;
  if (x->dtype == ONNX_SEQUENCE || !onnx_te_elem(x->dtype, &elem) || !x->data) {
    onnx_fail(c, "'%s' (%s) has no tensor form", x->name, onnx_dtype_name(x->dtype));
    return (te_value_t){0};
  }
  te_type_t t = te_type(elem, x->rank, x->dims);
  if (te_numel(&t) == 0) {
    onnx_fail(c, "'%s' has no elements; empty tensors are not supported", x->name);
    return (te_value_t){0};
  }
  x->v = te_const(&c->e, &t, x->data);
  return x->v;
}

void onnx_view_reshape(onnx_ctx_t *c, onnx_value_t *x, uint32_t rank, const int64_t *dims) {
  if (x->v.id) x->v = te_reshape(&c->e, x->v, rank, dims);
  x->rank = rank;
  memcpy(x->dims, dims, sizeof(int64_t) * rank);
}

/* Elements before `axis` and bytes from it on, per element of dim `axis`. */
static void split_at(const onnx_value_t *x, int32_t axis, int64_t *outer, int64_t *inner) {
  *outer = 1;
  *inner = (int64_t)onnx_dtype_size(x->dtype);
  for (int32_t d = 0; d < axis; ++d) *outer *= x->dims[d];
  for (uint32_t d = (uint32_t)axis + 1; d < x->rank; ++d) *inner *= x->dims[d];
}

static int concat_const(onnx_ctx_t *c, const onnx_value_t *xs, uint32_t n, int32_t axis,
                        onnx_value_t *out) {
  int64_t outer, inner;
  split_at(out, axis, &outer, &inner);
  size_t bytes = onnx_value_bytes(out);
  if (!onnx_check_constant(c, out->name, bytes)) return 0;
  uint8_t *d = tinyml__alloc(c->allocator, bytes + 1, 16);
  if (!d) return onnx_oom(c), 0;
  out->data = d;
  for (int64_t o = 0; o < outer; ++o)
    for (uint32_t k = 0; k < n; ++k) {
      size_t chunk = (size_t)(xs[k].dims[axis] * inner);
      memcpy(d, (const uint8_t *)xs[k].data + o * chunk, chunk);
      d += chunk;
    }
  return 1;
}

int onnx_view_concat(onnx_ctx_t *c, onnx_value_t *xs, uint32_t n, int32_t axis,
                     onnx_value_t *out) {
  *out = xs[0];
  out->data = NULL;
  out->v = (te_value_t){0};
  out->dims[axis] = 0;
  int all_const = 1;
  for (uint32_t k = 0; k < n; ++k) {
    const onnx_value_t *x = &xs[k];
    int same = x->dtype == xs[0].dtype && x->rank == xs[0].rank;
    for (uint32_t d = 0; same && d < x->rank; ++d) same = (int32_t)d == axis || x->dims[d] == xs[0].dims[d];
    if (!same) return onnx_fail(c, "'%s': element %u's type or shape does not match", x->name, k), 0;
    out->dims[axis] += x->dims[axis];
    all_const &= x->data != NULL;
  }
  if (all_const) return concat_const(c, xs, n, axis, out);
  te_value_t *vs = tinyml__calloc(c->allocator, n, sizeof *vs, 8);
  if (!vs) return onnx_oom(c), 0;
  for (uint32_t k = 0; k < n && !c->error; ++k) vs[k] = onnx_view_runtime(c, &xs[k]);
  if (!c->error) out->v = n == 1 ? vs[0] : te_concat(&c->e, vs, n, axis);
  tinyml__free(c->allocator, vs);
  return !c->error;
}

int onnx_view_unsqueeze(onnx_ctx_t *c, onnx_value_t *x, int32_t axis) {
  if (x->dtype == ONNX_SEQUENCE || axis < 0 || (uint32_t)axis > x->rank || x->rank + 1 > TE_MAX_RANK)
    return onnx_fail(c, "items to stack differ in rank, or the axis is out of range"), 0;
  int64_t dims[TE_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * x->rank);
  memmove(&dims[axis + 1], &dims[axis], sizeof(int64_t) * (x->rank - (uint32_t)axis));
  dims[axis] = 1;
  onnx_view_reshape(c, x, x->rank + 1, dims);
  return !c->error;
}

int onnx_view_slice(onnx_ctx_t *c, onnx_value_t *x, int32_t axis, int64_t start, int64_t len,
                    onnx_value_t *out) {
  if (axis < 0 || (uint32_t)axis >= x->rank || start < 0 || len < 0 || start > x->dims[axis] ||
      len > x->dims[axis] - start)
    return onnx_fail(c, "a slice [%lld, +%lld) is outside its axis", (long long)start, (long long)len), 0;
  *out = *x;
  out->data = NULL;
  out->v = (te_value_t){0};
  out->dims[axis] = len;
  if (x->data) {
    int64_t outer, inner;
    split_at(x, axis, &outer, &inner);
    size_t bytes = onnx_value_bytes(out);
    if (!onnx_check_constant(c, out->name, bytes)) return 0;
    uint8_t *d = tinyml__alloc(c->allocator, bytes + 1, 16);
    if (!d) return onnx_oom(c), 0;
    out->data = d;
    for (int64_t o = 0; o < outer; ++o)
      memcpy(d + o * len * inner, (const uint8_t *)x->data + (o * x->dims[axis] + start) * inner,
             (size_t)(len * inner));
    return 1;
  }
  int64_t begin[TE_MAX_RANK] = {0}, size[TE_MAX_RANK];
  memcpy(size, x->dims, sizeof(int64_t) * x->rank);
  begin[axis] = start;
  size[axis] = len;
  out->v = te_slice(&c->e, x->v, begin, size);
  return 1;
}
