/* ONNX lowerings: selection by value (OneHot, TopK).  See onnx_lower.h for
 * the contract.  Both need a constant that decides their output's shape
 * (OneHot's depth, TopK's K); a graph input there is bound with
 * tinyml_compile_options_t.input_values.
 *
 * OneHot compares each index with two constant iotas, j and j - depth (the
 * negative form), rather than normalising the index: no
 * arithmetic on the indices, so an index of any size outside [-depth,
 * depth) matches nothing and gives all off_value, as the spec says.
 *
 * TopK ranks by comparison, not by repeated argmax with masking (a masked
 * value would tie with real ones): element i's rank along the axis is the
 * number of elements j that come before it, x_j > x_i or x_j == x_i with
 * j < i (ties keep the lower index first, as the spec says).  Output r
 * takes the element of rank r: its index is a sum of zeros and that index,
 * its value one gather at the index.  That compares every pair
 * along the axis, so large axes are refused. */
#include <math.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "onnx_lower.h"

/* Pairs TopK may compare: 16M one-byte flags is a few tens of MB. */
#define TOPK_MAX_PAIRS (1LL << 24)

/* Element k of a constant as a double (int and float types TopK/OneHot take). */
static double elem(const onnx_value_t *v, int64_t k) {
  const uint8_t *p = v->data;
  switch (v->dtype) {
    case ONNX_FLOAT: { float f; memcpy(&f, p + 4 * k, 4); return f; }
    case ONNX_INT32: { int32_t i; memcpy(&i, p + 4 * k, 4); return i; }
    case ONNX_INT64: { int64_t i; memcpy(&i, p + 8 * k, 8); return (double)i; }
    default: return 0;
  }
}

/* ---- OneHot --------------------------------------------------------------- */

typedef struct onehot {
  int64_t depth;
  int32_t axis;           /* of the output */
  uint32_t rank;          /* of the output */
  int64_t dims[TE_MAX_RANK];
  int negative;           /* indices in [-depth, 0) count from the end */
} onehot_t;

static int read_depth(onnx_ctx_t *c, int64_t *depth) {
  const onnx_value_t *d = onnx_input(c, 1);
  if (!d) return onnx_fail(c, "depth is missing"), 0;
  int64_t n = onnx_const_ints(c, 1, depth, 1);
  float f;
  if (n < 0 && onnx_const_float(c, 1, &f)) {
    if (!(f >= 1.0f && f <= 2147483648.0f) || f != floorf(f)) return onnx_fail(c, "depth %g is not supported", f), 0;
    *depth = (int64_t)f; /* ONNX casts a float depth to an integer */
    n = 1;
  }
  if (n != 1) return onnx_fail(c, "depth must be a constant scalar"), 0;
  if (*depth < 1 || *depth > (1LL << 31))
    return onnx_fail(c, "depth %lld is not supported (1 .. 2^31)", (long long)*depth), 0;
  return 1;
}

static int onehot_args(onnx_ctx_t *c, onehot_t *h) {
  const onnx_value_t *ind = onnx_input(c, 0), *val = onnx_input(c, 2);
  if (!ind || !val) return onnx_fail(c, "input %d is missing", ind ? 2 : 0), 0;
  if (ind->dtype != ONNX_FLOAT && ind->dtype != ONNX_INT32 && ind->dtype != ONNX_INT64)
    return onnx_fail(c, "indices of type %s are not supported", onnx_dtype_name(ind->dtype)), 0;
  if (onnx_numel(val->rank, val->dims) != 2 || val->rank > 1)
    return onnx_fail(c, "values must be [off_value, on_value]"), 0;
  if (ind->rank + 1 > TE_MAX_RANK) return onnx_fail(c, "indices of rank %u", ind->rank), 0;
  if (!read_depth(c, &h->depth)) return 0;
  /* Floats hold every index exactly only up to 2^24. */
  if (ind->dtype == ONNX_FLOAT && h->depth > (1LL << 24))
    return onnx_fail(c, "depth %lld with float indices", (long long)h->depth), 0;
  h->rank = ind->rank + 1;
  h->axis = onnx_axis(onnx_attr_int(c, "axis", -1), h->rank);
  if (h->axis < 0) return onnx_fail(c, "axis out of range"), 0;
  for (uint32_t d = 0, s = 0; d < h->rank; ++d)
    h->dims[d] = (int32_t)d == h->axis ? h->depth : ind->dims[s++];
  /* The result and the depth-long comparison constant are both built
   * whole: a hostile depth must not allocate before the limit says no. */
  uint64_t bytes = (uint64_t)onnx_numel(h->rank, h->dims) * 8u;
  if (h->depth > (int64_t)(c->limits.max_tensor_bytes / 8) || bytes > c->limits.max_tensor_bytes)
    return onnx_fail(c, "depth %lld makes a result larger than max_tensor_bytes",
                     (long long)h->depth), 0;
  /* Opset 9's text gives negative indices all off_value, but onnxruntime
   * and the ONNX reference count them from the end there too. */
  h->negative = 1;
  return 1;
}

/* Which of [0, depth) index `x` selects; -1 for none.  A float index
 * that is not an integer selects none, as in onnxruntime. */
static int64_t onehot_target(const onehot_t *h, double x) {
  if (h->negative && x < 0) x += (double)h->depth;
  return x >= 0 && x < (double)h->depth && x == floor(x) ? (int64_t)x : -1;
}

static tinyml_status_t onehot_fold(onnx_ctx_t *c, const onehot_t *h) {
  const onnx_value_t *ind = onnx_input(c, 0), *val = onnx_input(c, 2);
  size_t es = onnx_dtype_size(val->dtype);
  int64_t n = onnx_numel(h->rank, h->dims), inner = 1;
  if (!es || n > (1LL << 30) / (int64_t)es) return onnx_fail(c, "the result is too large");
  for (uint32_t d = (uint32_t)h->axis + 1; d < h->rank; ++d) inner *= h->dims[d];
  uint8_t *out = tinyml__alloc(c->allocator, (size_t)n * es + 1, 16);
  if (!out) return onnx_oom(c);
  const uint8_t *v = val->data;
  for (int64_t k = 0; k < n; ++k) {
    int64_t j = (k / inner) % h->depth, src = (k / inner / h->depth) * inner + k % inner;
    memcpy(out + k * es, v + (onehot_target(h, elem(ind, src)) == j ? es : 0), es);
  }
  tinyml_status_t st = onnx_set_out_const(c, 0, val->dtype, h->rank, h->dims, out);
  tinyml__free(c->allocator, out);
  return st;
}

/* A constant [1.., depth on the axis, ..1] holding j + offset. */
static te_value_t onehot_iota(onnx_ctx_t *c, const onehot_t *h, te_elem_t elem, int64_t offset) {
  int64_t dims[TE_MAX_RANK];
  for (uint32_t d = 0; d < h->rank; ++d) dims[d] = (int32_t)d == h->axis ? h->depth : 1;
  te_type_t t = te_type(elem, h->rank, dims);
  size_t es = te_elem_size(elem);
  uint8_t *data = tinyml__alloc(c->allocator, (size_t)h->depth * es, 16);
  if (!data) return onnx_oom(c), (te_value_t){0};
  for (int64_t j = 0; j < h->depth; ++j) {
    int64_t i64 = j + offset;
    int32_t i32 = (int32_t)i64;
    float f = (float)i64;
    memcpy(data + j * es, elem == TE_F32 ? (void *)&f : es == 8 ? (void *)&i64 : (void *)&i32, es);
  }
  te_value_t v = te_const(&c->e, &t, data);
  tinyml__free(c->allocator, data);
  return v;
}

static te_value_t onehot_scalar(onnx_ctx_t *c, te_value_t values, int64_t at, uint32_t rank) {
  int64_t ones[TE_MAX_RANK];
  for (uint32_t d = 0; d < TE_MAX_RANK; ++d) ones[d] = 1;
  te_value_t v = te_reshape(&c->e, values, 1, (int64_t[1]){2});
  v = te_slice(&c->e, v, (int64_t[1]){at}, (int64_t[1]){1});
  return te_reshape(&c->e, v, rank, ones);
}

static tinyml_status_t lower_onehot(onnx_ctx_t *c) {
  onehot_t h;
  if (!onehot_args(c, &h)) return c->error;
  if (onnx_const_probe(c, 0) && onnx_const_probe(c, 2)) return onehot_fold(c, &h);
  te_value_t ind = onnx_in(c, 0), val = onnx_in(c, 2);
  if (!ind.id || !val.id) return c->error;
  int64_t dims[TE_MAX_RANK];
  memcpy(dims, h.dims, sizeof dims);
  dims[h.axis] = 1;
  ind = te_reshape(&c->e, ind, h.rank, dims);
  te_value_t hit = te_binary(&c->e, "tosa.equal", ind, onehot_iota(c, &h, ind.type.elem, 0));
  if (h.negative) {
    te_value_t back = onehot_iota(c, &h, ind.type.elem, -h.depth);
    hit = te_binary(&c->e, "tosa.logical_or", hit, te_binary(&c->e, "tosa.equal", ind, back));
  }
  te_value_t off = onehot_scalar(c, val, 0, h.rank), on = onehot_scalar(c, val, 1, h.rank);
  te_value_t y = te_select(&c->e, hit, on, off);
  if (c->error) return c->error;
  return onnx_set_out_typed(c, 0, y, onnx_input(c, 2)->dtype);
}

/* ---- TopK ----------------------------------------------------------------- */

typedef struct topk {
  int64_t k, outer, n, inner;
  int32_t axis;
  int largest;
  uint32_t rank;
  int64_t dims[TE_MAX_RANK]; /* of the outputs */
} topk_t;

static int topk_args(onnx_ctx_t *c, topk_t *t) {
  const onnx_value_t *x = onnx_input(c, 0);
  if (!x) return onnx_fail(c, "input 0 is missing"), 0;
  if (x->dtype != ONNX_FLOAT && x->dtype != ONNX_INT32)
    return onnx_fail(c, "input type %s is not supported", onnx_dtype_name(x->dtype)), 0;
  t->axis = onnx_axis(onnx_attr_int(c, "axis", -1), x->rank);
  if (t->axis < 0) return onnx_fail(c, "axis out of range"), 0;
  if (c->opset < 10) t->k = onnx_attr_int(c, "k", -1);
  else if (onnx_const_ints(c, 1, &t->k, 1) != 1)
    return onnx_fail(c, "K must be a constant 1-element tensor"), 0;
  t->largest = (int)onnx_attr_int(c, "largest", 1);
  t->rank = x->rank;
  t->outer = t->inner = 1;
  for (uint32_t d = 0; d < x->rank; ++d) {
    if ((int32_t)d < t->axis) t->outer *= x->dims[d];
    if ((int32_t)d > t->axis) t->inner *= x->dims[d];
    t->dims[d] = x->dims[d];
  }
  t->n = x->dims[t->axis];
  if (t->k < 1 || t->k > t->n)
    return onnx_fail(c, "K = %lld outside 1 .. %lld (the axis size)", (long long)t->k,
                     (long long)t->n), 0;
  t->dims[t->axis] = t->k;
  int64_t pairs = onnx_mul_sat(onnx_mul_sat(t->outer * t->inner, t->n), t->n);
  if (pairs > TOPK_MAX_PAIRS)
    return onnx_fail(c, "an axis of %lld over %lld slices means %lld comparisons, more than "
                     "%lld", (long long)t->n, (long long)(t->outer * t->inner),
                     (long long)pairs, TOPK_MAX_PAIRS), 0;
  return 1;
}

/* Whether element a comes before element b of one slice.  NaN is above
 * every number, as the ONNX reference's sort has it. */
static int before(const topk_t *t, double xa, int64_t a, double xb, int64_t b) {
  int na = xa != xa, nb = xb != xb;
  if (na != nb) return t->largest ? na : nb;
  if (!na && xa != xb) return t->largest ? xa > xb : xa < xb;
  return a < b;
}

static tinyml_status_t topk_fold(onnx_ctx_t *c, const topk_t *t) {
  const onnx_value_t *x = onnx_input(c, 0);
  int64_t total = t->outer * t->k * t->inner;
  size_t es = onnx_dtype_size(x->dtype);
  uint8_t *vals = tinyml__alloc(c->allocator, (size_t)total * es + 1, 16);
  int64_t *idx = tinyml__alloc(c->allocator, (size_t)total * 8 + 1, 16);
  tinyml_status_t st = TINYML_OK;
  if (!vals || !idx) st = onnx_oom(c);
  for (int64_t s = 0; !st && s < t->outer * t->inner; ++s) {
    int64_t o = s / t->inner, in = s % t->inner, base = o * t->n * t->inner + in;
    for (int64_t i = 0; !st && i < t->n; ++i) {
      double xi = elem(x, base + i * t->inner);
      int64_t rank = 0;
      for (int64_t j = 0; j < t->n; ++j) rank += before(t, elem(x, base + j * t->inner), j, xi, i);
      if (rank >= t->k) continue;
      int64_t at = (o * t->k + rank) * t->inner + in;
      memcpy(vals + at * es, (const uint8_t *)x->data + (base + i * t->inner) * es, es);
      idx[at] = i;
    }
  }
  if (!st) st = onnx_set_out_const(c, 0, x->dtype, t->rank, t->dims, vals);
  if (!st) st = onnx_set_out_const(c, 1, ONNX_INT64, t->rank, t->dims, idx);
  tinyml__free(c->allocator, vals);
  tinyml__free(c->allocator, idx);
  return st;
}

/* A constant i32 [dims] filled by f(a, b) over its two non-1 axes p and q. */
static te_value_t grid_i32(onnx_ctx_t *c, const int64_t dims[4], int64_t rows, int64_t cols,
                           int lower) {
  te_type_t t = te_type(lower ? TE_I1 : TE_I32, 4, dims);
  size_t es = te_elem_size(t.elem);
  uint8_t *data = tinyml__calloc(c->allocator, (size_t)(rows * cols), es, 16);
  if (!data) return onnx_oom(c), (te_value_t){0};
  for (int64_t a = 0; a < rows; ++a)
    for (int64_t b = 0; b < cols; ++b) {
      int32_t v = lower ? a < b : (int32_t)(rows > 1 ? a : b);
      if (lower) data[a * cols + b] = (uint8_t)v;
      else memcpy(data + 4 * (a * cols + b), &v, 4);
    }
  te_value_t v = te_const(&c->e, &t, data);
  tinyml__free(c->allocator, data);
  return v;
}

/* NaN above every number and equal to NaN, as in before(). */
static void nan_order(onnx_ctx_t *c, const topk_t *t, te_value_t xj, te_value_t xi,
                      te_value_t *wins, te_value_t *same) {
  te_t *e = &c->e;
  te_value_t nj = te_unary(e, "tosa.logical_not", te_binary(e, "tosa.equal", xj, xj));
  te_value_t ni = te_unary(e, "tosa.logical_not", te_binary(e, "tosa.equal", xi, xi));
  te_value_t hi = t->largest ? nj : ni, lo = t->largest ? ni : nj;
  te_value_t nan_wins = te_binary(e, "tosa.logical_and", hi, te_unary(e, "tosa.logical_not", lo));
  *wins = te_binary(e, "tosa.logical_or", *wins, nan_wins);
  *same = te_binary(e, "tosa.logical_or", *same, te_binary(e, "tosa.logical_and", nj, ni));
}

/* The elements at `idx` ([outer, K, 1, inner] positions along the axis):
 * one gather from x seen flat, a copy, so -0.0, infinities and NaN come
 * through as they are. */
static te_value_t take_along(onnx_ctx_t *c, const topk_t *t, te_value_t x, te_value_t idx) {
  int64_t dims[4] = {t->outer, t->k, 1, t->inner}, count = t->outer * t->k * t->inner;
  int32_t *base = tinyml__alloc(c->allocator, (size_t)count * 4, 16);
  if (!base) return onnx_oom(c), (te_value_t){0};
  for (int64_t at = 0; at < count; ++at) /* o * n * inner + in: under 2^24 */
    base[at] = (int32_t)(at / (t->k * t->inner) * t->n * t->inner + at % t->inner);
  te_type_t bt = te_type(TE_I32, 4, dims);
  te_value_t flat = te_const(&c->e, &bt, base);
  tinyml__free(c->allocator, base);
  if (t->inner > 1) idx = te_mul(&c->e, idx, te_scalar_int(&c->e, TE_I32, t->inner), 0);
  flat = te_binary(&c->e, "tosa.add", idx, flat);
  return te_gather_axis(&c->e, x, 1, t->outer * t->n * t->inner, 1, flat, t->rank, t->dims);
}

static tinyml_status_t lower_topk(onnx_ctx_t *c) {
  topk_t t;
  if (!topk_args(c, &t)) return c->error;
  if (onnx_const_probe(c, 0)) return topk_fold(c, &t);
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  te_t *e = &c->e;
  int64_t n = t.n, k = t.k;
  te_value_t xj = te_reshape(e, x, 4, (int64_t[4]){t.outer, n, 1, t.inner});
  te_value_t xi = te_reshape(e, x, 4, (int64_t[4]){t.outer, 1, n, t.inner});
  te_value_t wins = t.largest ? te_binary(e, "tosa.greater", xj, xi)
                              : te_binary(e, "tosa.greater", xi, xj);
  te_value_t same = te_binary(e, "tosa.equal", xj, xi);
  if (x.type.elem == TE_F32) nan_order(c, &t, xj, xi, &wins, &same);
  te_value_t tie = te_binary(e, "tosa.logical_and", same,
                             grid_i32(c, (int64_t[4]){1, n, n, 1}, n, n, 1));
  te_value_t first = te_cast(e, te_binary(e, "tosa.logical_or", wins, tie), TE_I32);
  te_value_t rank = te_reduce(e, "tosa.reduce_sum", first, 1); /* [outer, 1, n, inner] */
  te_value_t pick = te_binary(e, "tosa.equal", rank, grid_i32(c, (int64_t[4]){1, k, 1, 1}, k, 1, 0));
  te_value_t pos = grid_i32(c, (int64_t[4]){1, 1, n, 1}, 1, n, 0);
  te_value_t idx = te_reduce(e, "tosa.reduce_sum", te_select(e, pick, pos, te_scalar_int(e, TE_I32, 0)), 2);
  te_value_t val = take_along(c, &t, x, idx);
  if (c->error) return c->error;
  TINYML_RETURN_IF_ERROR(onnx_set_out(c, 0, val));
  if (onnx_output_count(c) < 2) return TINYML_OK;
  return onnx_set_out(c, 1, te_cast(e, te_reshape(e, idx, t.rank, t.dims), TE_I64));
}

const onnx_lowering_t onnx_lowerings_select[] = {
    {"OneHot", 9, 23, lower_onehot},
    {"TopK", 1, 23, lower_topk},
    {NULL, 0, 0, NULL},
};
