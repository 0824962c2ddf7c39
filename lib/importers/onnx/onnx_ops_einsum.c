/* ONNX lowering: Einsum (opset 12+), with numpy.einsum's semantics.
 *
 * The equation becomes one label per axis: letters 'A'..'Z' are labels
 * 0..25 and 'a'..'z' 26..51 (so label order is ASCII order, which numpy's
 * implicit output follows), and the axes an ellipsis stands for are labels
 * 52.., right-aligned across the operands as numpy broadcasts them.
 * A label repeated within one operand takes its diagonal (a gather); the
 * operands are then contracted pairwise, left to right, each pair as one
 * batched tosa.matmul (float) or a multiply and reduce_sum (int32), with
 * the labels no later operand nor the output needs summed out first.
 * All-constant operands are folded on the host.  See onnx_lower.h. */
#include "onnx_elt_util.h"
#include "onnx_shape_util.h"

#define EQ_MAX 256
#define MAX_OPERANDS 8
#define LETTERS 52
#define LABELS (LETTERS + TE_MAX_RANK)
/* The host fold visits every combination of label values. */
#define FOLD_MAX (1LL << 24)

typedef struct term {
  uint32_t n;
  uint8_t lab[TE_MAX_RANK];
} term_t;

typedef struct spec {
  char eq[EQ_MAX];  /* the equation without blanks, for messages */
  uint32_t nin;
  term_t in[MAX_OPERANDS];
  term_t out;
  int64_t size[LABELS]; /* each label's size, 1 broadcast against n */
  uint32_t ell;         /* axes the widest ellipsis stands for */
} spec_t;

static int letter_label(char ch) {
  if (ch >= 'A' && ch <= 'Z') return ch - 'A';
  if (ch >= 'a' && ch <= 'z') return 26 + ch - 'a';
  return -1;
}

static int has_label(const term_t *t, uint32_t lab) {
  for (uint32_t i = 0; i < t->n; ++i)
    if (t->lab[i] == lab) return 1;
  return 0;
}

/* Letters of one term; *dots set where it holds "...".  -1 if malformed. */
static int count_letters(const char *s, const char *end, int *dots) {
  int n = 0;
  *dots = 0;
  for (const char *p = s; p < end; ++p) {
    if (*p == '.') {
      if (*dots || end - p < 3 || p[1] != '.' || p[2] != '.') return -1;
      *dots = 1;
      p += 2;
    } else if (letter_label(*p) < 0) {
      return -1;
    } else {
      ++n;
    }
  }
  return n;
}

/* Fills `t` from term [s, end) whose ellipsis stands for `ell` axes. */
static void read_term(spec_t *sp, const char *s, const char *end, uint32_t ell, term_t *t) {
  t->n = 0;
  for (const char *p = s; p < end; ++p) {
    if (*p != '.') {
      t->lab[t->n++] = (uint8_t)letter_label(*p);
      continue;
    }
    for (uint32_t k = 0; k < ell; ++k) t->lab[t->n++] = (uint8_t)(LETTERS + sp->ell - ell + k);
    p += 2;
  }
}

static int bad(onnx_ctx_t *c, const spec_t *sp, const char *why) {
  onnx_fail(c, "equation '%s': %s", sp->eq, why);
  return 0;
}

/* numpy's implicit output: the ellipsis axes, then the letters used once. */
static int implicit_output(onnx_ctx_t *c, spec_t *sp) {
  int uses[LETTERS] = {0};
  term_t *o = &sp->out;
  o->n = 0;
  for (uint32_t k = 0; k < sp->ell; ++k) o->lab[o->n++] = (uint8_t)(LETTERS + k);
  for (uint32_t i = 0; i < sp->nin; ++i)
    for (uint32_t a = 0; a < sp->in[i].n; ++a)
      if (sp->in[i].lab[a] < LETTERS) uses[sp->in[i].lab[a]]++;
  for (int l = 0; l < LETTERS; ++l) {
    if (uses[l] != 1) continue;
    if (o->n == TE_MAX_RANK) return bad(c, sp, "the implicit output's rank exceeds 8");
    o->lab[o->n++] = (uint8_t)l;
  }
  return 1;
}

/* Splits the input terms and reads them against the operands' ranks. */
static int parse_inputs(onnx_ctx_t *c, spec_t *sp, const char *lhs, const char *lhs_end) {
  const char *start[MAX_OPERANDS], *end[MAX_OPERANDS];
  uint32_t n = 0;
  for (const char *p = lhs;; ++p) {
    if (p == lhs_end || *p == ',') {
      if (n == MAX_OPERANDS) return bad(c, sp, "more than 8 operands are not supported");
      start[n] = n ? end[n - 1] + 1 : lhs;
      end[n++] = p;
      if (p == lhs_end) break;
    }
  }
  if (n != onnx_input_count(c)) return bad(c, sp, "the term count differs from the input count");
  sp->nin = n;
  int letters[MAX_OPERANDS], dots[MAX_OPERANDS];
  for (uint32_t i = 0; i < n; ++i) {
    const onnx_value_t *v = onnx_input(c, i);
    if (!v) return bad(c, sp, "an input is missing");
    letters[i] = count_letters(start[i], end[i], &dots[i]);
    if (letters[i] < 0) return bad(c, sp, "a term is malformed");
    if ((uint32_t)letters[i] > v->rank || (!dots[i] && (uint32_t)letters[i] != v->rank))
      return bad(c, sp, "a term's letters do not match its operand's rank");
    if (dots[i] && v->rank - (uint32_t)letters[i] > sp->ell) sp->ell = v->rank - (uint32_t)letters[i];
  }
  for (uint32_t i = 0; i < n; ++i)
    read_term(sp, start[i], end[i], dots[i] ? onnx_input(c, i)->rank - (uint32_t)letters[i] : 0,
              &sp->in[i]);
  return 1;
}

static int parse_output(onnx_ctx_t *c, spec_t *sp, const char *s) {
  int dots, n = count_letters(s, s + strlen(s), &dots);
  if (n < 0) return bad(c, sp, "the output term is malformed");
  if (sp->ell && !dots) return bad(c, sp, "the output omits '...' that the inputs use");
  if ((uint32_t)n + (dots ? sp->ell : 0) > TE_MAX_RANK) return bad(c, sp, "the output rank exceeds 8");
  read_term(sp, s, s + strlen(s), dots ? sp->ell : 0, &sp->out);
  for (uint32_t a = 0; a < sp->out.n; ++a) {
    int found = 0;
    for (uint32_t i = 0; i < sp->nin; ++i) found |= has_label(&sp->in[i], sp->out.lab[a]);
    if (!found) return bad(c, sp, "an output letter is in no input");
    for (uint32_t b = 0; b < a; ++b)
      if (sp->out.lab[b] == sp->out.lab[a]) return bad(c, sp, "an output letter repeats");
  }
  return 1;
}

/* Each label's size: equal wherever it appears, except that an ellipsis
 * axis of size 1 broadcasts. */
static int label_sizes(onnx_ctx_t *c, spec_t *sp) {
  for (uint32_t l = 0; l < LABELS; ++l) sp->size[l] = -1;
  for (uint32_t i = 0; i < sp->nin; ++i) {
    const onnx_value_t *v = onnx_input(c, i);
    for (uint32_t a = 0; a < sp->in[i].n; ++a) {
      uint32_t l = sp->in[i].lab[a];
      int64_t d = v->dims[a];
      if (sp->size[l] < 0 || sp->size[l] == d) sp->size[l] = d;
      else if (l >= LETTERS && (sp->size[l] == 1 || d == 1)) sp->size[l] = d == 1 ? sp->size[l] : d;
      else return bad(c, sp, "a letter's dimensions differ between its axes");
    }
  }
  for (uint32_t i = 0; i < sp->nin; ++i)
    for (uint32_t a = 0; a < sp->in[i].n; ++a)
      for (uint32_t b = 0; b < a; ++b)
        if (sp->in[i].lab[a] == sp->in[i].lab[b] &&
            onnx_input(c, i)->dims[a] != onnx_input(c, i)->dims[b])
          return bad(c, sp, "a repeated letter's dimensions differ");
  return 1;
}

static int parse(onnx_ctx_t *c, spec_t *sp) {
  char raw[EQ_MAX];
  memset(sp, 0, sizeof *sp);
  if (!onnx_attr(c, "equation")) return onnx_fail(c, "attribute 'equation' is missing"), 0;
  onnx_attr_string(c, "equation", "", raw, sizeof raw);
  uint32_t n = 0;
  for (const char *p = raw; *p && n + 1 < EQ_MAX; ++p)
    if (*p != ' ') sp->eq[n++] = *p;
  sp->eq[n] = 0;
  if (strlen(raw) + 1 >= EQ_MAX) return bad(c, sp, "the equation is too long");
  char *arrow = strstr(sp->eq, "->");
  const char *lhs_end = arrow ? arrow : sp->eq + n;
  if (!parse_inputs(c, sp, sp->eq, lhs_end)) return 0;
  if (arrow && !parse_output(c, sp, arrow + 2)) return 0;
  if (!arrow && !implicit_output(c, sp)) return 0;
  return label_sizes(c, sp);
}

/* ---- constant folding ---------------------------------------------------- */

/* Visits every combination of the labels' values, accumulating each
 * product into its output element (double for floats, wrapping int64 for
 * integers). */
static tinyml_status_t fold(onnx_ctx_t *c, const spec_t *sp, int32_t dtype) {
  uint32_t labs[LABELS], nl = 0;
  int64_t total = 1, out_n = 1, odims[TE_MAX_RANK];
  for (uint32_t l = 0; l < LABELS; ++l)
    if (sp->size[l] >= 0) labs[nl++] = l, total = onnx_mul_sat(total, sp->size[l]);
  for (uint32_t a = 0; a < sp->out.n; ++a) out_n *= (odims[a] = sp->size[sp->out.lab[a]]);
  double *acc = tinyml__calloc(c->allocator, (size_t)out_n + 1, sizeof(double), 16);
  int64_t *iacc = tinyml__calloc(c->allocator, (size_t)out_n + 1, sizeof(int64_t), 16);
  void *buf = tinyml__alloc(c->allocator, (size_t)out_n * 8 + 8, 16);
  if (!acc || !iacc || !buf) {
    tinyml__free(c->allocator, acc), tinyml__free(c->allocator, iacc);
    tinyml__free(c->allocator, buf);
    return onnx_oom(c);
  }
  int64_t at[LABELS] = {0};
  for (int64_t k = 0; k < total; ++k) {
    int64_t rest = k;
    for (uint32_t j = nl; j-- > 0;) at[labs[j]] = rest % sp->size[labs[j]], rest /= sp->size[labs[j]];
    double p = 1.0;
    int64_t ip = 1;
    for (uint32_t i = 0; i < sp->nin; ++i) {
      const onnx_value_t *v = onnx_input(c, i);
      int64_t idx = 0;
      for (uint32_t a = 0; a < v->rank; ++a) idx = idx * v->dims[a] + (v->dims[a] == 1 ? 0 : at[sp->in[i].lab[a]]);
      num_t x = get_num(v, idx);
      p *= x.f, ip = (int64_t)((uint64_t)ip * (uint64_t)x.i);
    }
    int64_t o = 0;
    for (uint32_t a = 0; a < sp->out.n; ++a) o = o * odims[a] + at[sp->out.lab[a]];
    acc[o] += p, iacc[o] = (int64_t)((uint64_t)iacc[o] + (uint64_t)ip);
  }
  for (int64_t o = 0; o < out_n; ++o) {
    num_t r = {iacc[o], (float)acc[o]};
    put_num(dtype, buf, o, r);
  }
  tinyml_status_t st = onnx_set_out_const(c, 0, dtype, sp->out.n, odims, buf);
  tinyml__free(c->allocator, acc), tinyml__free(c->allocator, iacc);
  tinyml__free(c->allocator, buf);
  return st;
}

static int all_constant(onnx_ctx_t *c, const spec_t *sp) {
  int64_t total = 1;
  for (uint32_t i = 0; i < sp->nin; ++i)
    if (!onnx_const_probe(c, i)) return 0;
  for (uint32_t l = 0; l < LABELS; ++l)
    if (sp->size[l] >= 0) total = onnx_mul_sat(total, sp->size[l]);
  return total <= FOLD_MAX;
}

/* ---- run-time lowering --------------------------------------------------- */

typedef struct operand {
  te_value_t v;
  term_t t; /* one label per axis of v, each once */
} operand_t;

/* x's elements at the flat indices `map` (n of them), as `rank`/`dims`. */
static te_value_t gather_flat(onnx_ctx_t *c, te_value_t x, const int64_t *map, int64_t n,
                              uint32_t rank, const int64_t *dims) {
  int32_t *idx = tinyml__alloc(c->allocator, (size_t)n * 4 + 4, 16);
  if (!idx) return onnx_oom(c), (te_value_t){0};
  for (int64_t i = 0; i < n; ++i) idx[i] = (int32_t)map[i];
  x = te_reshape(&c->e, x, 3, (int64_t[3]){1, te_numel(&x.type), 1});
  te_type_t it = te_type(TE_I32, 2, (int64_t[2]){1, n});
  te_value_t ops[2] = {x, te_const(&c->e, &it, idx)};
  tinyml__free(c->allocator, idx);
  te_type_t gt = te_type(x.type.elem, 3, (int64_t[3]){1, n, 1});
  return te_reshape(&c->e, te_op(&c->e, "tosa.gather", ops, 2, NULL, &gt), rank, dims);
}

/* Takes the diagonal of every label repeated in `t`: the result keeps
 * each label once, at its first axis. */
static int diagonal(onnx_ctx_t *c, operand_t *o, const term_t *t) {
  term_t u = {0, {0}};
  int64_t dims[TE_MAX_RANK], strides[TE_MAX_RANK], step[TE_MAX_RANK] = {0};
  strides_of(t->n, o->v.type.dims, strides);
  for (uint32_t a = 0; a < t->n; ++a) {
    uint32_t k = 0;
    while (k < u.n && u.lab[k] != t->lab[a]) ++k;
    if (k == u.n) u.lab[u.n] = t->lab[a], dims[u.n++] = o->v.type.dims[a];
    step[k] += strides[a];
  }
  o->t = u;
  if (u.n == t->n) return 1;
  int64_t n = numel(u.n, dims), coord[TE_MAX_RANK];
  int64_t *map = alloc_map(c, n);
  if (!map) return 0;
  for (int64_t i = 0; i < n; ++i) {
    unravel(i, u.n, dims, coord);
    map[i] = 0;
    for (uint32_t k = 0; k < u.n; ++k) map[i] += coord[k] * step[k];
  }
  o->v = gather_flat(c, o->v, map, n, u.n, dims);
  tinyml__free(c->allocator, map);
  return o->v.id != 0;
}

/* Drops axis a of o: summed, or (size 1) reshaped away. */
static void drop_axis(onnx_ctx_t *c, operand_t *o, uint32_t a) {
  int64_t dims[TE_MAX_RANK];
  uint32_t r = 0;
  if (o->v.type.dims[a] != 1) o->v = te_reduce(&c->e, "tosa.reduce_sum", o->v, (int32_t)a);
  for (uint32_t k = 0; k < o->t.n; ++k)
    if (k != a) dims[r] = o->v.type.dims[k], o->t.lab[r++] = o->t.lab[k];
  o->t.n = r;
  o->v = te_reshape(&c->e, o->v, r, dims);
}

/* Sums out the labels of o outside `keep` (and `other`'s labels). */
static void sum_unneeded(onnx_ctx_t *c, operand_t *o, const uint8_t *keep, const term_t *other) {
  for (uint32_t a = o->t.n; a-- > 0;)
    if (!keep[o->t.lab[a]] && !(other && has_label(other, o->t.lab[a]))) drop_axis(c, o, a);
}

/* An ellipsis axis of size 1 facing a wider one broadcasts: dropping it
 * leaves the label to the other operand alone, which is the same sum. */
static void drop_broadcast(onnx_ctx_t *c, operand_t *o, const operand_t *other) {
  for (uint32_t a = o->t.n; a-- > 0;)
    for (uint32_t b = 0; b < other->t.n; ++b)
      if (other->t.lab[b] == o->t.lab[a] && o->v.type.dims[a] == 1 && other->v.type.dims[b] != 1)
        drop_axis(c, o, a);
}

/* Transposes o to the label order `want` (a permutation of its labels) and
 * reshapes it to `rank`/`dims`. */
static te_value_t arrange(onnx_ctx_t *c, const operand_t *o, const term_t *want, uint32_t rank,
                          const int64_t *dims) {
  int32_t perm[TE_MAX_RANK];
  int moved = 0;
  for (uint32_t k = 0; k < want->n; ++k) {
    for (uint32_t a = 0; a < o->t.n; ++a)
      if (o->t.lab[a] == want->lab[k]) perm[k] = (int32_t)a;
    moved |= perm[k] != (int32_t)k;
  }
  te_value_t x = moved ? te_transpose(&c->e, o->v, perm) : o->v;
  return te_reshape(&c->e, x, rank, dims);
}

static int64_t dims_product(const operand_t *o, const term_t *t, uint32_t from, uint32_t to) {
  int64_t n = 1;
  for (uint32_t k = from; k < to; ++k)
    for (uint32_t a = 0; a < o->t.n; ++a)
      if (o->t.lab[a] == t->lab[k]) n *= o->v.type.dims[a];
  return n;
}

/* a·b over their shared labels outside `keep`; the result's labels are
 * the shared kept ones (batch), then a's own, then b's own. */
static int contract(onnx_ctx_t *c, operand_t *a, operand_t *b, const uint8_t *keep) {
  drop_broadcast(c, a, b), drop_broadcast(c, b, a);
  sum_unneeded(c, a, keep, &b->t), sum_unneeded(c, b, keep, &a->t);
  term_t ta = {0, {0}}, tb = {0, {0}}, r = {0, {0}};
  uint32_t nb = 0, nk = 0;
  for (uint32_t k = 0; k < a->t.n; ++k)
    if (has_label(&b->t, a->t.lab[k]) && keep[a->t.lab[k]]) r.lab[r.n++] = a->t.lab[k], ++nb;
  ta = r, tb = r;
  for (uint32_t k = 0; k < a->t.n; ++k)
    if (!has_label(&b->t, a->t.lab[k])) ta.lab[ta.n++] = a->t.lab[k], r.lab[r.n++] = a->t.lab[k];
  uint32_t na = ta.n;
  for (uint32_t k = 0; k < b->t.n; ++k)
    if (!has_label(&a->t, b->t.lab[k])) r.lab[r.n++] = b->t.lab[k];
  for (uint32_t k = 0; k < a->t.n; ++k)
    if (has_label(&b->t, a->t.lab[k]) && !keep[a->t.lab[k]]) ta.lab[ta.n++] = a->t.lab[k], ++nk;
  for (uint32_t k = na; k < ta.n; ++k) tb.lab[tb.n++] = ta.lab[k];
  for (uint32_t k = 0; k < b->t.n; ++k)
    if (!has_label(&a->t, b->t.lab[k])) tb.lab[tb.n++] = b->t.lab[k];
  int64_t B = dims_product(a, &ta, 0, nb), M = dims_product(a, &ta, nb, na);
  int64_t K = dims_product(a, &ta, na, ta.n), N = dims_product(b, &tb, nb + nk, tb.n);
  int64_t rd[TE_MAX_RANK];
  for (uint32_t k = 0; k < r.n; ++k)
    rd[k] = dims_product(k < na ? a : b, &r, k, k + 1);
  te_value_t y;
  if (a->v.type.elem == TE_F32) {
    te_value_t ops[4] = {arrange(c, a, &ta, 3, (int64_t[3]){B, M, K}),
                         arrange(c, b, &tb, 3, (int64_t[3]){B, K, N}),
                         te_scalar_f32(&c->e, 0.0f), te_scalar_f32(&c->e, 0.0f)};
    te_type_t t = te_type(TE_F32, 3, (int64_t[3]){B, M, N});
    y = te_op(&c->e, "tosa.matmul", ops, 4, NULL, &t);
  } else { /* int32: tosa.matmul has no i32 x i32 form */
    term_t tbt = tb;
    for (uint32_t k = nb; k < tb.n; ++k)
      tbt.lab[k] = k < nb + (tb.n - nb - nk) ? tb.lab[k + nk] : tb.lab[k - (tb.n - nb - nk)];
    te_value_t x = arrange(c, a, &ta, 4, (int64_t[4]){B, M, 1, K});
    te_value_t w = arrange(c, b, &tbt, 4, (int64_t[4]){B, 1, N, K});
    y = te_reduce(&c->e, "tosa.reduce_sum", te_mul(&c->e, x, w, 0), 3);
  }
  a->v = te_reshape(&c->e, y, r.n, rd);
  a->t = r;
  return a->v.id != 0;
}

static int rank_ok(onnx_ctx_t *c, const spec_t *sp, const uint8_t *keep, const operand_t *a,
                   const operand_t *b) {
  uint32_t n = 0;
  for (uint32_t l = 0; l < LABELS; ++l)
    n += (has_label(&a->t, l) || has_label(&b->t, l)) && keep[l];
  return n <= TE_MAX_RANK || bad(c, sp, "an intermediate result would exceed rank 8");
}

static tinyml_status_t lower_runtime(onnx_ctx_t *c, const spec_t *sp, int32_t dtype) {
  operand_t acc, next;
  for (uint32_t l = 0; l < LABELS; ++l)
    if (sp->size[l] == 0) return bad(c, sp, "empty operands are not supported"), c->error;
  acc.v = onnx_in(c, 0);
  if (!acc.v.id || !diagonal(c, &acc, &sp->in[0])) return c->error;
  for (uint32_t i = 1; i < sp->nin; ++i) {
    uint8_t keep[LABELS] = {0};
    for (uint32_t k = 0; k < sp->out.n; ++k) keep[sp->out.lab[k]] = 1;
    for (uint32_t j = i + 1; j < sp->nin; ++j)
      for (uint32_t k = 0; k < sp->in[j].n; ++k) keep[sp->in[j].lab[k]] = 1;
    next.v = onnx_in(c, i);
    if (!next.v.id || !diagonal(c, &next, &sp->in[i])) return c->error;
    if (!rank_ok(c, sp, keep, &acc, &next) || !contract(c, &acc, &next, keep)) return c->error;
  }
  uint8_t keep[LABELS] = {0};
  for (uint32_t k = 0; k < sp->out.n; ++k) keep[sp->out.lab[k]] = 1;
  sum_unneeded(c, &acc, keep, NULL);
  int64_t od[TE_MAX_RANK];
  for (uint32_t k = 0; k < sp->out.n; ++k) od[k] = dims_product(&acc, &sp->out, k, k + 1);
  te_value_t y = arrange(c, &acc, &sp->out, sp->out.n, od);
  return y.id ? onnx_set_out_typed(c, 0, y, dtype) : c->error;
}

static tinyml_status_t lower_einsum(onnx_ctx_t *c) {
  spec_t sp;
  if (!parse(c, &sp)) return c->error;
  int32_t dtype = dt(c, 0);
  for (uint32_t i = 1; i < sp.nin; ++i)
    if (dt(c, i) != dtype) return bad(c, &sp, "the operand types differ"), c->error;
  if (all_constant(c, &sp) && foldable_dtype(dtype) && dtype != ONNX_BOOL)
    return fold(c, &sp, dtype);
  if (dtype != ONNX_FLOAT && dtype != ONNX_INT32) {
    char why[96];
    snprintf(why, sizeof why, "run-time %s operands are not supported (FLOAT and INT32 are)",
             onnx_dtype_name(dtype));
    return bad(c, &sp, why), c->error;
  }
  return lower_runtime(c, &sp, dtype);
}

const onnx_lowering_t onnx_lowerings_einsum[] = {
    {"Einsum", 12, 23, lower_einsum},
    {NULL, 0, 0, NULL},
};
