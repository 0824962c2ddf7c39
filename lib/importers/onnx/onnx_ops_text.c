/* ONNX lowering: TfIdfVectorizer (opset 9+) on integer tokens, as onnx's
 * reference (onnx/reference/ops/op_tfidf_vectorizer.py) computes it.
 *
 * The pool's n-grams get ids in pool order, sizes outside [min_gram_length,
 * max_gram_length] skipped but counted, and id k counts into column
 * ngram_indexes[k - 1].  An n-gram of
 * size s >= 2 is matched at every skip distance 1..max_skip_count + 1, a
 * unigram only once (the reference stops counting unigrams after the
 * first distance).  At run time each (size, distance) pair compares
 * shifted windows of the input with all n-grams of that size at once
 * (tosa.equal, logical_and over the n-gram's items) and sums the matches;
 * a matmul with a 0/1 matrix adds the n-grams' counts into their columns
 * (exact: counts stay far below 2^24).  pool_strings is refused: there is
 * no STRING type.  See onnx_lower.h. */
#include "onnx_elt_util.h"

#define MAX_GRAMS 8192
/* Elements of one [rows, n-grams, windows] comparison. */
#define MAX_COMPARE (1LL << 26)

enum { M_TF, M_IDF, M_TFIDF };

typedef struct gram {
  int64_t size, col;
  const int64_t *vals; /* borrowed from the pool attribute */
} gram_t;

typedef struct tfidf {
  int mode;
  int64_t max_skip, out_size, rows, len; /* len: tokens per row */
  gram_t *grams;
  uint32_t count;
  const float *weights; /* NULL when absent or unused */
} tfidf_t;

static const Onnx__AttributeProto *need_attr(onnx_ctx_t *c, const char *name) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  if (!a) onnx_fail(c, "attribute '%s' is missing", name);
  return a;
}

static int read_mode(onnx_ctx_t *c, tfidf_t *t) {
  char buf[16];
  if (!need_attr(c, "mode")) return 0;
  const char *m = onnx_attr_string(c, "mode", "", buf, sizeof buf);
  t->mode = strcmp(m, "TF") == 0 ? M_TF : strcmp(m, "IDF") == 0 ? M_IDF
          : strcmp(m, "TFIDF") == 0 ? M_TFIDF : -1;
  if (t->mode < 0) return onnx_fail(c, "mode '%s' is not TF, IDF or TFIDF", m), 0;
  return 1;
}

/* Adds an n-gram.  One listed twice is refused: onnxruntime rejects it,
 * where onnx's reference counts it in the later one's column only. */
static int add_gram(onnx_ctx_t *c, tfidf_t *t, int64_t size, const int64_t *vals, int64_t col) {
  for (uint32_t k = 0; k < t->count; ++k)
    if (t->grams[k].size == size && memcmp(t->grams[k].vals, vals, (size_t)size * 8) == 0)
      return onnx_fail(c, "pool_int64s lists an n-gram of size %lld twice", (long long)size), 0;
  t->grams[t->count++] = (gram_t){size, col, vals};
  return 1;
}

/* The pool's n-grams within the gram lengths, each with its column. */
static int read_grams(onnx_ctx_t *c, tfidf_t *t, int64_t min_len, int64_t max_len) {
  const Onnx__AttributeProto *counts = need_attr(c, "ngram_counts");
  const Onnx__AttributeProto *idx = need_attr(c, "ngram_indexes");
  const Onnx__AttributeProto *pool = onnx_attr(c, "pool_int64s");
  if (!counts || !idx) return 0;
  if (onnx_attr(c, "pool_strings")) return onnx_fail(c, "pool_strings is not supported (no STRING type)"), 0;
  if (!pool) return onnx_fail(c, "attribute 'pool_int64s' is missing"), 0;
  if (idx->n_ints == 0) return onnx_fail(c, "ngram_indexes is empty"), 0;
  t->out_size = 0;
  for (size_t k = 0; k < idx->n_ints; ++k) {
    if (idx->ints[k] < 0 || idx->ints[k] >= (1 << 24)) return onnx_fail(c, "ngram_indexes holds %lld", (long long)idx->ints[k]), 0;
    if (idx->ints[k] + 1 > t->out_size) t->out_size = idx->ints[k] + 1;
  }
  int64_t total = (int64_t)pool->n_ints, id = 0;
  t->grams = tinyml__alloc(c->allocator, (size_t)(total + 1) * sizeof(gram_t), 16);
  if (!t->grams) return onnx_oom(c), 0;
  for (size_t i = 0; i < counts->n_ints; ++i) {
    int64_t start = counts->ints[i], end = i + 1 < counts->n_ints ? counts->ints[i + 1] : total;
    int64_t size = (int64_t)i + 1;
    if (start < 0 || end < start || end > total) return onnx_fail(c, "ngram_counts is not a non-decreasing list of pool offsets"), 0;
    int64_t n = (end - start) / size;
    int keep = size >= min_len && size <= max_len;
    for (int64_t g = 0; g < n; ++g, ++id) {
      if (!keep) continue;
      if (id >= (int64_t)idx->n_ints) return onnx_fail(c, "ngram_indexes has fewer entries than the pool's n-grams"), 0;
      if (t->count == MAX_GRAMS) return onnx_fail(c, "more than %d n-grams are not supported", MAX_GRAMS), 0;
      if (!add_gram(c, t, size, pool->ints + start + g * size, idx->ints[id])) return 0;
    }
  }
  return 1;
}

static int read_weights(onnx_ctx_t *c, tfidf_t *t) {
  const Onnx__AttributeProto *w = onnx_attr(c, "weights");
  t->weights = NULL;
  if (!w || t->mode == M_TF || w->n_floats == 0) return 1;
  if ((int64_t)w->n_floats < t->out_size) return onnx_fail(c, "weights is shorter than the output row"), 0;
  const Onnx__AttributeProto *idx = onnx_attr(c, "ngram_indexes");
  for (size_t k = 0; k < idx->n_ints; ++k)
    if (idx->ints[k] != (int64_t)k)
      return onnx_fail(c, "weights with ngram_indexes other than 0, 1, 2, ... are not supported "
                       "(onnx's reference weighs each output column, onnxruntime each n-gram)"), 0;
  t->weights = w->floats;
  return 1;
}

static int read_spec(onnx_ctx_t *c, tfidf_t *t) {
  memset(t, 0, sizeof *t);
  const onnx_value_t *x = onnx_input(c, 0);
  if (!x) return onnx_fail(c, "input 0 is missing"), 0;
  if (x->dtype != ONNX_INT32 && x->dtype != ONNX_INT64)
    return onnx_fail(c, "input type %s is not supported (INT32 and INT64 are)", onnx_dtype_name(x->dtype)), 0;
  if (x->rank != 1 && x->rank != 2) return onnx_fail(c, "the input must be [C] or [N, C]"), 0;
  t->rows = x->rank == 2 ? x->dims[0] : 1;
  t->len = x->dims[x->rank - 1];
  if (t->rows < 1 || t->len < 0) return onnx_fail(c, "the input has no rows or a dynamic length"), 0;
  if (!need_attr(c, "min_gram_length") || !need_attr(c, "max_gram_length") || !need_attr(c, "max_skip_count"))
    return 0;
  int64_t min_len = onnx_attr_int(c, "min_gram_length", 1), max_len = onnx_attr_int(c, "max_gram_length", 1);
  t->max_skip = onnx_attr_int(c, "max_skip_count", 0);
  if (min_len < 1 || t->max_skip < 0)
    return onnx_fail(c, "min_gram_length %lld or max_skip_count %lld is below its range",
                     (long long)min_len, (long long)t->max_skip), 0;
  /* A gap of len or more never fits a window: clamping keeps every result
   * and bounds the loops (and d * (size - 1)) for any attribute value. */
  if (t->max_skip > t->len) t->max_skip = t->len;
  return read_mode(c, t) && read_grams(c, t, min_len, max_len) && read_weights(c, t);
}

/* The skip distances an n-gram of `size` is matched at: 1..max_skip + 1,
 * a unigram at distance 1 only. */
static int64_t skips_of(const tfidf_t *t, int64_t size) { return size == 1 ? 1 : t->max_skip + 1; }

/* ---- output weighting, shared by the fold and the run-time form --------- */

static float weigh(const tfidf_t *t, int64_t col, float f) {
  float w = t->weights ? t->weights[col] : 1.0f;
  if (t->mode == M_IDF) return f > 0.0f ? w : 0.0f;
  return t->mode == M_TFIDF ? w * f : f;
}

static tinyml_status_t set_out_const(onnx_ctx_t *c, const tfidf_t *t, float *y) {
  int64_t dims[2] = {t->rows, t->out_size};
  uint32_t rank = onnx_input(c, 0)->rank;
  return onnx_set_out_const(c, 0, ONNX_FLOAT, rank, rank == 2 ? dims : dims + 1, y);
}

/* ---- folding --------------------------------------------------------------- */

static tinyml_status_t fold(onnx_ctx_t *c, const tfidf_t *t, const onnx_value_t *x) {
  int64_t n = t->rows * t->out_size;
  float *y = tinyml__calloc(c->allocator, (size_t)n + 1, sizeof(float), 16);
  if (!y) return onnx_oom(c);
  for (int64_t r = 0; r < t->rows; ++r)
    for (uint32_t g = 0; g < t->count; ++g) {
      const gram_t *q = &t->grams[g];
      for (int64_t d = 1; d <= skips_of(t, q->size); ++d)
        for (int64_t s = 0; s + d * (q->size - 1) < t->len; ++s) {
          int64_t j = 0;
          while (j < q->size && get_num(x, r * t->len + s + j * d).i == q->vals[j]) ++j;
          y[r * t->out_size + q->col] += j == q->size;
        }
    }
  for (int64_t k = 0; k < n; ++k) y[k] = weigh(t, k % t->out_size, y[k]);
  tinyml_status_t st = set_out_const(c, t, y);
  tinyml__free(c->allocator, y);
  return st;
}

/* ---- run time ---------------------------------------------------------------- */

/* Whether the n-gram can match tokens of `elem` (int32 tokens never equal
 * a pool value outside their range). */
static int representable(const gram_t *q, te_elem_t elem) {
  for (int64_t j = 0; j < q->size; ++j)
    if (elem == TE_I32 && (q->vals[j] < INT32_MIN || q->vals[j] > INT32_MAX)) return 0;
  return 1;
}

/* Item j of each n-gram in `pick` as a [1, G, 1] constant of x's type. */
static te_value_t items_const(onnx_ctx_t *c, const tfidf_t *t, const uint32_t *pick, uint32_t n,
                              int64_t j, te_elem_t elem) {
  int64_t *v = tinyml__alloc(c->allocator, (size_t)n * 8 + 8, 16);
  if (!v) return onnx_oom(c), (te_value_t){0};
  int32_t *v32 = (int32_t *)v;
  for (uint32_t k = 0; k < n; ++k) {
    if (elem == TE_I64) v[k] = t->grams[pick[k]].vals[j];
    else v32[k] = (int32_t)t->grams[pick[k]].vals[j];
  }
  te_type_t ty = te_type(elem, 3, (int64_t[3]){1, n, 1});
  te_value_t k = te_const(&c->e, &ty, v);
  tinyml__free(c->allocator, v);
  return k;
}

/* [N, G, 1] i32 matches of the `pick`ed n-grams of `size` at distance d. */
static te_value_t count_at(onnx_ctx_t *c, const tfidf_t *t, te_value_t x, const uint32_t *pick,
                           uint32_t n, int64_t size, int64_t d) {
  int64_t windows = t->len - d * (size - 1);
  te_value_t match = {0};
  for (int64_t j = 0; j < size; ++j) {
    te_value_t w = te_slice(&c->e, x, (int64_t[2]){0, j * d}, (int64_t[2]){t->rows, windows});
    w = te_reshape(&c->e, w, 3, (int64_t[3]){t->rows, 1, windows});
    te_value_t eq = te_binary(&c->e, "tosa.equal", w, items_const(c, t, pick, n, j, x.type.elem));
    match = j ? te_binary(&c->e, "tosa.logical_and", match, eq) : eq;
  }
  return te_reduce(&c->e, "tosa.reduce_sum", te_cast(&c->e, match, TE_I32), 2);
}

/* [N, G] f32 counts of the n-grams of `size` (their indices into *pick). */
static te_value_t count_size(onnx_ctx_t *c, const tfidf_t *t, te_value_t x, int64_t size,
                             uint32_t *pick, uint32_t *n) {
  *n = 0;
  for (uint32_t g = 0; g < t->count; ++g)
    if (t->grams[g].size == size && representable(&t->grams[g], x.type.elem)) pick[(*n)++] = g;
  te_value_t sum = {0};
  if (!*n) return sum;
  if (onnx_mul_sat(t->rows, onnx_mul_sat(*n, t->len)) > MAX_COMPARE)
    return onnx_fail(c, "the comparison of %u n-grams of size %lld is too large", *n, (long long)size), sum;
  for (int64_t d = 1; d <= skips_of(t, size) && t->len - d * (size - 1) > 0; ++d) {
    te_value_t k = count_at(c, t, x, pick, *n, size, d);
    sum = sum.id ? te_binary(&c->e, "tosa.add", sum, k) : k;
  }
  if (!sum.id) { /* no window fits: zero counts */
    te_type_t zt = te_type(TE_F32, 2, (int64_t[2]){t->rows, *n});
    return te_splat_f32(&c->e, &zt, 0.0f);
  }
  return te_reshape(&c->e, te_cast(&c->e, sum, TE_F32), 2, (int64_t[2]){t->rows, *n});
}

/* y[N, out] = counts[N, G] x onehot[G, out] as one tosa.matmul. */
static te_value_t to_columns(onnx_ctx_t *c, const tfidf_t *t, te_value_t counts, const uint32_t *pick,
                             uint32_t n) {
  if (!onnx_check_constant(c, "the n-gram to column matrix",
                           (uint64_t)onnx_mul_sat(n, onnx_mul_sat(t->out_size, 4))))
    return (te_value_t){0};
  float *m = tinyml__calloc(c->allocator, (size_t)n * (size_t)t->out_size + 1, sizeof(float), 16);
  if (!m) return onnx_oom(c), (te_value_t){0};
  for (uint32_t k = 0; k < n; ++k) m[(int64_t)k * t->out_size + t->grams[pick[k]].col] = 1.0f;
  te_type_t mt = te_type(TE_F32, 3, (int64_t[3]){1, n, t->out_size});
  te_value_t ops[4] = {te_reshape(&c->e, counts, 3, (int64_t[3]){1, t->rows, n}), te_const(&c->e, &mt, m),
                       te_scalar_f32(&c->e, 0.0f), te_scalar_f32(&c->e, 0.0f)};
  tinyml__free(c->allocator, m);
  te_type_t yt = te_type(TE_F32, 3, (int64_t[3]){1, t->rows, t->out_size});
  return te_reshape(&c->e, te_op(&c->e, "tosa.matmul", ops, 4, NULL, &yt), 2,
                    (int64_t[2]){t->rows, t->out_size});
}

static te_value_t weigh_runtime(onnx_ctx_t *c, const tfidf_t *t, te_value_t y) {
  if (t->mode == M_TF || (t->mode == M_TFIDF && !t->weights)) return y;
  te_type_t wt = te_type(TE_F32, 2, (int64_t[2]){1, t->out_size});
  te_value_t w = t->weights ? te_const(&c->e, &wt, t->weights) : te_splat_f32(&c->e, &wt, 1.0f);
  if (t->mode == M_TFIDF) return te_mul(&c->e, y, w, 0);
  te_value_t zero = te_scalar_f32(&c->e, 0.0f);
  return te_select(&c->e, te_binary(&c->e, "tosa.greater", y, zero), w, zero);
}

static tinyml_status_t lower_runtime(onnx_ctx_t *c, const tfidf_t *t) {
  te_value_t x = onnx_in(c, 0), parts[16];
  if (!x.id) return c->error;
  x = te_reshape(&c->e, x, 2, (int64_t[2]){t->rows, t->len});
  uint32_t *pick = tinyml__alloc(c->allocator, (size_t)t->count * 8 + 8, 16), n_all = 0, n_parts = 0;
  if (!pick) return onnx_oom(c);
  int64_t max_size = 0;
  for (uint32_t g = 0; g < t->count; ++g)
    if (t->grams[g].size > max_size) max_size = t->grams[g].size;
  if (max_size > 16) {
    tinyml__free(c->allocator, pick);
    return onnx_fail(c, "n-grams longer than 16 are not supported");
  }
  for (int64_t s = 1; s <= max_size && !c->error; ++s) {
    uint32_t n;
    te_value_t k = count_size(c, t, x, s, pick + n_all, &n);
    if (k.id) parts[n_parts++] = k, n_all += n;
  }
  te_value_t y;
  if (!c->error && n_all) {
    te_value_t counts = n_parts == 1 ? parts[0] : te_concat(&c->e, parts, n_parts, 1);
    te_value_t cols = to_columns(c, t, counts, pick, n_all);
    y = cols.id ? weigh_runtime(c, t, cols) : cols;
  } else {
    te_type_t zt = te_type(TE_F32, 2, (int64_t[2]){t->rows, t->out_size});
    y = te_splat_f32(&c->e, &zt, 0.0f); /* no n-gram can match: every weighting gives 0 */
  }
  tinyml__free(c->allocator, pick);
  if (c->error || !y.id) return c->error;
  if (onnx_input(c, 0)->rank == 1) y = te_reshape(&c->e, y, 1, &t->out_size);
  return onnx_set_out(c, 0, y);
}

static tinyml_status_t lower_tfidf(onnx_ctx_t *c) {
  tfidf_t t;
  tinyml_status_t st;
  if (!read_spec(c, &t)) st = c->error;
  else if (onnx_const_input(c, 0) || t.len == 0) st = fold(c, &t, onnx_input(c, 0));
  else st = lower_runtime(c, &t);
  tinyml__free(c->allocator, t.grams);
  return st;
}

const onnx_lowering_t onnx_lowerings_text[] = {
    {"TfIdfVectorizer", 9, 23, lower_tfidf},
    {NULL, 0, 0, NULL},
};
