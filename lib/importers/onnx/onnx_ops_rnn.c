/* ONNX lowerings: the recurrent layers LSTM, GRU and RNN (opsets 7 to 23).
 *
 * The sequence is unrolled at compile time: X·W^T for every step is one
 * matrix product up front, then each step is one or two small products with
 * R^T and elementwise gate arithmetic.  The semantics are those of the ONNX
 * reference (onnx/reference/ops/op_lstm.py, op_gru.py, op_rnn.py) and of
 * onnxruntime's CPU kernels where the reference is silent (clip, input_forget,
 * activation_alpha/beta); where the two disagree the node is refused.
 *
 * sequence_lens masks steps past each sequence's length: the state is kept
 * (so Y_h/Y_c are taken at the last valid step) and Y is 0 there.  A reverse
 * pass therefore starts at each sequence's own last step, as both peers do.
 * A length of 0 keeps initial_h/initial_c as Y_h/Y_c, as the reference does
 * (onnxruntime gives 0 there; without initial state the two agree). */
#include <ctype.h>
#include <stdio.h>

#include "onnx_elt_util.h"

/* Every step is emitted; beyond this many the module grows without bound. */
#define RNN_MAX_STEPS 1024

enum cell { CELL_RNN, CELL_GRU, CELL_LSTM };

enum act_kind { A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKY_RELU, A_THRESHOLDED_RELU,
                A_SCALED_TANH, A_HARD_SIGMOID, A_ELU, A_SOFTSIGN, A_SOFTPLUS };

typedef struct act {
  enum act_kind kind;
  float alpha, beta;
} act_t;

/* has_default: onnxruntime's default for a missing alpha/beta equals the
 * ONNX operator's of the same name; otherwise the value must be given. */
static const struct act_info {
  const char *name;
  int needs_alpha, needs_beta, has_default;
  float alpha, beta;
} kActs[] = {
    [A_SIGMOID] = {"sigmoid", 0, 0, 1, 0.0f, 0.0f},
    [A_TANH] = {"tanh", 0, 0, 1, 0.0f, 0.0f},
    [A_RELU] = {"relu", 0, 0, 1, 0.0f, 0.0f},
    [A_AFFINE] = {"affine", 1, 1, 0, 0.0f, 0.0f},
    [A_LEAKY_RELU] = {"leakyrelu", 1, 0, 1, 0.01f, 0.0f},
    [A_THRESHOLDED_RELU] = {"thresholdedrelu", 1, 0, 0, 0.0f, 0.0f},
    [A_SCALED_TANH] = {"scaledtanh", 1, 1, 0, 0.0f, 0.0f},
    [A_HARD_SIGMOID] = {"hardsigmoid", 1, 1, 1, 0.2f, 0.5f},
    [A_ELU] = {"elu", 1, 0, 1, 1.0f, 0.0f},
    [A_SOFTSIGN] = {"softsign", 0, 0, 1, 0.0f, 0.0f},
    [A_SOFTPLUS] = {"softplus", 0, 0, 1, 0.0f, 0.0f},
};

typedef struct rnn {
  enum cell cell;
  int64_t steps, batch, input, hidden, dirs, gates;
  int reverse_only, layout, linear_before_reset, input_forget, has_clip;
  float clip;
  act_t acts[6];            /* per direction: f[, g[, h]] */
  uint32_t acts_per_dir;
  int32_t *lens;            /* constant sequence_lens, or NULL */
  te_value_t lens_rt;       /* run-time sequence_lens as [batch, 1] i32, or id 0 */
} rnn_t;

/* ---- small emit helpers ------------------------------------------------ */

static te_value_t slice2(onnx_ctx_t *c, te_value_t x, int64_t r0, int64_t c0, int64_t rows,
                         int64_t cols) {
  int64_t start[2] = {r0, c0}, size[2] = {rows, cols};
  return te_slice(&c->e, x, start, size);
}

/* [m, k] x [k, n] -> [m, n] */
static te_value_t matmul2(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  int64_t m = a.type.dims[0], k = a.type.dims[1], n = b.type.dims[1];
  int64_t ad[3] = {1, m, k}, bd[3] = {1, k, n}, od[3] = {1, m, n}, yd[2] = {m, n};
  te_type_t t = te_type(TE_F32, 3, od);
  te_value_t zp = te_scalar_f32(&c->e, 0.0f);
  te_value_t ops[4] = {te_reshape(&c->e, a, 3, ad), te_reshape(&c->e, b, 3, bd), zp, zp};
  return te_reshape(&c->e, te_op(&c->e, "tosa.matmul", ops, 4, NULL, &t), 2, yd);
}

static te_value_t zeros2(onnx_ctx_t *c, int64_t rows, int64_t cols) {
  int64_t d[2] = {rows, cols};
  te_type_t t = te_type(TE_F32, 2, d);
  return te_splat_f32(&c->e, &t, 0.0f);
}

static int wanted(onnx_ctx_t *c, uint32_t i) {
  return i < c->node->n_output && c->node->output[i][0];
}

/* ---- activations ------------------------------------------------------- */

static te_value_t activate(onnx_ctx_t *c, te_value_t x, const act_t *a) {
  te_value_t zero = kf(c, x, 0.0f);
  switch (a->kind) {
    case A_SIGMOID: return un(c, "tosa.sigmoid", x);
    case A_TANH: return un(c, "tosa.tanh", x);
    case A_RELU: return te_clamp_f32(&c->e, x, 0.0f, INFINITY);
    case A_AFFINE: return addk(c, mulk(c, x, a->alpha), a->beta);
    case A_LEAKY_RELU:
      return te_select(&c->e, bin(c, "tosa.greater_equal", x, zero), x, mulk(c, x, a->alpha));
    case A_THRESHOLDED_RELU:
      return te_select(&c->e, bin(c, "tosa.greater", x, kf(c, x, a->alpha)), x, zero);
    case A_SCALED_TANH: return mulk(c, un(c, "tosa.tanh", mulk(c, x, a->beta)), a->alpha);
    case A_HARD_SIGMOID:
      return te_clamp_f32(&c->e, addk(c, mulk(c, x, a->alpha), a->beta), 0.0f, 1.0f);
    case A_ELU:
      return te_select(&c->e, bin(c, "tosa.greater_equal", x, zero), x,
                       mulk(c, expm1_(c, x), a->alpha));
    case A_SOFTSIGN: return fdiv(c, x, addk(c, un(c, "tosa.abs", x), 1.0f));
    case A_SOFTPLUS: {
      /* max(x, 0) + log(1 + exp(-|x|)): log(1 + exp(x)) without overflow. */
      te_value_t t = un(c, "tosa.exp", neg(c, un(c, "tosa.abs", x)));
      return add(c, te_clamp_f32(&c->e, x, 0.0f, INFINITY), un(c, "tosa.log", addk(c, t, 1.0f)));
    }
  }
  return (te_value_t){0};
}

/* clip bounds every activation's input; onnxruntime applies it after the
 * bias and peephole terms are added, as here. */
static te_value_t gate(onnx_ctx_t *c, const rnn_t *r, te_value_t x, const act_t *a) {
  if (r->has_clip) x = te_clamp_f32(&c->e, x, -r->clip, r->clip);
  return activate(c, x, a);
}

static int act_by_name(const char *s, size_t n) {
  for (int k = 0; k < (int)(sizeof kActs / sizeof kActs[0]); ++k) {
    size_t m = strlen(kActs[k].name), i = 0;
    if (m != n) continue;
    while (i < n && tolower((unsigned char)s[i]) == kActs[k].name[i]) ++i;
    if (i == n) return k;
  }
  return -1;
}

/* The values are consumed in the order of the activations, each by the
 * functions that take one (onnxruntime's reading of the spec). */
static int take(onnx_ctx_t *c, const Onnx__AttributeProto *a, size_t *next, int needs,
                int has_default, float def, const char *what, const char *name, float *out) {
  if (!needs) return 1;
  if (a && *next < a->n_floats) {
    *out = a->floats[(*next)++];
    return 1;
  }
  if (has_default) {
    *out = def;
    return 1;
  }
  onnx_fail(c, "activation %s needs a value in %s (its default is not agreed)", name, what);
  return 0;
}

static int read_activations(onnx_ctx_t *c, rnn_t *r) {
  static const enum act_kind defaults[3][3] = {
      [CELL_RNN] = {A_TANH}, [CELL_GRU] = {A_SIGMOID, A_TANH},
      [CELL_LSTM] = {A_SIGMOID, A_TANH, A_TANH}};
  uint32_t per = r->acts_per_dir, total = per * (uint32_t)r->dirs;
  const Onnx__AttributeProto *names = onnx_attr(c, "activations");
  const Onnx__AttributeProto *al = onnx_attr(c, "activation_alpha");
  const Onnx__AttributeProto *be = onnx_attr(c, "activation_beta");
  if (names && names->n_strings != total)
    return onnx_fail(c, "activations has %zu names, expected %u", names->n_strings, total), 0;
  size_t na = 0, nb = 0;
  for (uint32_t k = 0; k < total; ++k) {
    int kind = defaults[r->cell][k % per];
    if (names) {
      kind = act_by_name((const char *)names->strings[k].data, names->strings[k].len);
      if (kind < 0)
        return onnx_fail(c, "activation %.*s is not supported", (int)names->strings[k].len,
                         (const char *)names->strings[k].data), 0;
    }
    const struct act_info *info = &kActs[kind];
    r->acts[k] = (act_t){(enum act_kind)kind, 0.0f, 0.0f};
    if (!take(c, al, &na, info->needs_alpha, info->has_default, info->alpha, "activation_alpha",
              info->name, &r->acts[k].alpha) ||
        !take(c, be, &nb, info->needs_beta, info->has_default, info->beta, "activation_beta",
              info->name, &r->acts[k].beta))
      return 0;
  }
  if ((al && na != al->n_floats) || (be && nb != be->n_floats))
    return onnx_fail(c, "activation_alpha/activation_beta has more values than the activations use"), 0;
  return 1;
}

/* ---- operands ---------------------------------------------------------- */

static int float_operand(onnx_ctx_t *c, uint32_t i, const char *name, uint32_t rank,
                         const int64_t *dims) {
  const onnx_value_t *v = onnx_input(c, i);
  if (!v) return 1;
  if (v->dtype != ONNX_FLOAT)
    return onnx_fail(c, "%s: type %s is not supported (FLOAT only)", name,
                     onnx_dtype_name(v->dtype)), 0;
  int same = v->rank == rank;
  for (uint32_t d = 0; same && d < rank; ++d) same = v->dims[d] == dims[d];
  if (!same) {
    char want[96];
    int n = snprintf(want, sizeof want, "[");
    for (uint32_t d = 0; d < rank; ++d)
      n += snprintf(want + n, sizeof want - (size_t)n, "%s%lld", d ? ", " : "", (long long)dims[d]);
    snprintf(want + n, sizeof want - (size_t)n, "]");
    return onnx_fail(c, "%s must have the shape %s", name, want), 0;
  }
  return 1;
}

/* X, W and R fix every size; the other operands are checked against them. */
static int read_sizes(onnx_ctx_t *c, rnn_t *r) {
  const onnx_value_t *x = onnx_input(c, 0), *w = onnx_input(c, 1), *rr = onnx_input(c, 2);
  if (!x || !w || !rr) return onnx_fail(c, "X, W and R are required"), 0;
  /* Its products would all be of constants, which belong on the host: a
   * fold this lowering does not implement. */
  if (x->data) return onnx_fail(c, "a constant X is not supported"), 0;
  if (x->rank != 3 || w->rank != 3 || rr->rank != 3)
    return onnx_fail(c, "X, W and R must have rank 3"), 0;
  for (uint32_t d = 0; d < 3; ++d)
    if (x->dims[d] <= 0 || w->dims[d] <= 0 || rr->dims[d] <= 0)
      return onnx_fail(c, "X, W and R need static, non-empty shapes"), 0;
  r->steps = x->dims[r->layout ? 1 : 0];
  r->batch = x->dims[r->layout ? 0 : 1];
  r->input = x->dims[2];
  r->hidden = rr->dims[2];
  int64_t hs = onnx_attr_int(c, "hidden_size", r->hidden);
  if (hs != r->hidden) return onnx_fail(c, "hidden_size %lld differs from R's", (long long)hs), 0;
  if (r->steps > RNN_MAX_STEPS)
    return onnx_fail(c, "%lld steps: sequences longer than %d steps are not unrolled",
                     (long long)r->steps, RNN_MAX_STEPS), 0;
  /* X·W^T is the largest value: declared dims must not make it overflow. */
  int64_t gh = onnx_mul_sat(r->gates, r->hidden);
  int64_t xw = onnx_mul_sat(onnx_mul_sat(r->steps, r->batch), onnx_mul_sat(r->dirs, gh));
  if (xw > (int64_t)(c->limits.max_tensor_bytes / sizeof(float)))
    return onnx_fail(c, "the gates of all steps (%lld elements) exceed max_tensor_bytes",
                     (long long)xw), 0;
  int64_t wd[3] = {r->dirs, gh, r->input}, rd[3] = {r->dirs, gh, r->hidden};
  int64_t xd[3] = {x->dims[0], x->dims[1], x->dims[2]};
  return float_operand(c, 0, "X", 3, xd) && float_operand(c, 1, "W", 3, wd) &&
         float_operand(c, 2, "R", 3, rd);
}

/* A 0/1 attribute (0 when absent, or when the opset predates it). */
static int flag(onnx_ctx_t *c, const char *name, int exists, int *out) {
  int64_t v = exists ? onnx_attr_int(c, name, 0) : 0;
  if (v != 0 && v != 1) return onnx_fail(c, "%s = %lld is not valid", name, (long long)v), 0;
  *out = (int)v;
  return 1;
}

static int read_attrs(onnx_ctx_t *c, rnn_t *r) {
  char buf[32];
  const char *dir = onnx_attr_string(c, "direction", "forward", buf, sizeof buf);
  if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
    return onnx_fail(c, "direction '%s' is not valid", dir), 0;
  r->dirs = strcmp(dir, "bidirectional") ? 1 : 2;
  r->reverse_only = strcmp(dir, "reverse") == 0;
  if (!flag(c, "layout", c->opset >= 14, &r->layout) ||
      !flag(c, "linear_before_reset", 1, &r->linear_before_reset) ||
      !flag(c, "input_forget", 1, &r->input_forget))
    return 0;
  const Onnx__AttributeProto *clip = onnx_attr(c, "clip");
  r->has_clip = clip && clip->has_f;
  r->clip = r->has_clip ? clip->f : 0.0f;
  if (r->has_clip && !(r->clip >= 0.0f)) return onnx_fail(c, "clip must not be negative"), 0;
  return read_activations(c, r);
}

/* sequence_lens: a constant read here, or a run-time [batch] vector. */
static int read_lens(onnx_ctx_t *c, rnn_t *r) {
  const onnx_value_t *v = onnx_input(c, 4);
  if (!v) return 1;
  if (v->dtype != ONNX_INT32) return onnx_fail(c, "sequence_lens must be INT32"), 0;
  if (v->rank != 1 || v->dims[0] != r->batch)
    return onnx_fail(c, "sequence_lens must have the shape [%lld]", (long long)r->batch), 0;
  if (!v->data) {
    int64_t d[2] = {r->batch, 1};
    r->lens_rt = te_reshape(&c->e, onnx_in(c, 4), 2, d);
    return r->lens_rt.id != 0;
  }
  r->lens = tinyml__alloc(c->allocator, (size_t)r->batch * sizeof(int32_t), 16);
  if (!r->lens) return onnx_oom(c), 0;
  memcpy(r->lens, v->data, (size_t)r->batch * sizeof(int32_t));
  for (int64_t b = 0; b < r->batch; ++b) {
    if (r->lens[b] < 0 || r->lens[b] > r->steps)
      return onnx_fail(c, "sequence_lens[%lld] = %d is outside [0, %lld]", (long long)b,
                       r->lens[b], (long long)r->steps), 0;
  }
  int64_t d[2] = {r->batch, 1};
  te_type_t t = te_type(TE_I32, 2, d);
  r->lens_rt = te_const(&c->e, &t, r->lens);
  return 1;
}

static int check_optional(onnx_ctx_t *c, const rnn_t *r) {
  int64_t gh = r->gates * r->hidden;
  int64_t bd[2] = {r->dirs, 2 * gh}, pd[2] = {r->dirs, 3 * r->hidden};
  int64_t hd[3] = {r->layout ? r->batch : r->dirs, r->layout ? r->dirs : r->batch, r->hidden};
  if (!float_operand(c, 3, "B", 2, bd) || !float_operand(c, 5, "initial_h", 3, hd)) return 0;
  if (r->cell != CELL_LSTM) return 1;
  return float_operand(c, 6, "initial_c", 3, hd) && float_operand(c, 7, "P", 2, pd);
}

/* ---- per-direction operands -------------------------------------------- */

/* Direction d of a [dirs, rows, cols] input, transposed to [cols, rows]
 * (at compile time when constant, as weights nearly always are). */
static te_value_t weight_t(onnx_ctx_t *c, uint32_t i, int64_t d) {
  const onnx_value_t *v = onnx_input(c, i);
  int64_t rows = v->dims[1], cols = v->dims[2], td[2] = {cols, rows};
  if (v->data) {
    const float *src = (const float *)v->data + d * rows * cols;
    float *t = tinyml__alloc(c->allocator, (size_t)(rows * cols) * sizeof(float), 16);
    if (!t) return onnx_oom(c), (te_value_t){0};
    for (int64_t y = 0; y < rows; ++y)
      for (int64_t x = 0; x < cols; ++x) t[x * rows + y] = src[y * cols + x];
    te_type_t tt = te_type(TE_F32, 2, td);
    te_value_t out = te_const(&c->e, &tt, t);
    tinyml__free(c->allocator, t);
    return out;
  }
  int64_t start[3] = {d, 0, 0}, size[3] = {1, rows, cols}, d2[2] = {rows, cols};
  static const int32_t perm[2] = {1, 0};
  te_value_t w = te_reshape(&c->e, te_slice(&c->e, onnx_in(c, i), start, size), 2, d2);
  return te_transpose(&c->e, w, perm);
}

/* Elements [off, off + n) of row d of a [dirs, N] input, as [1, n]. */
static te_value_t row_of(onnx_ctx_t *c, uint32_t i, int64_t d, int64_t off, int64_t n) {
  return slice2(c, onnx_in(c, i), d, off, 1, n);
}

/* Direction d's initial state [batch, hidden]; zeros when absent. */
static te_value_t initial_state(onnx_ctx_t *c, const rnn_t *r, uint32_t i, int64_t d) {
  if (!onnx_input(c, i)) return zeros2(c, r->batch, r->hidden);
  te_value_t v = onnx_in(c, i);
  static const int32_t perm[3] = {1, 0, 2};
  if (r->layout) v = te_transpose(&c->e, v, perm);
  int64_t start[3] = {d, 0, 0}, size[3] = {1, r->batch, r->hidden}, d2[2] = {r->batch, r->hidden};
  return te_reshape(&c->e, te_slice(&c->e, v, start, size), 2, d2);
}

/* The per-step inputs of one direction. */
typedef struct dir_state {
  te_value_t xw;            /* [steps * batch, gates * hidden]: X·W^T + biases */
  te_value_t rt;            /* R^T [hidden, gates * hidden] */
  te_value_t rt_zr, rt_h;   /* GRU without linear_before_reset: R^T's z|r and h columns */
  te_value_t rb_h;          /* GRU with linear_before_reset: Rb_h [1, hidden] */
  te_value_t p[3];          /* LSTM peepholes i, o, f [1, hidden], or id 0 */
  te_value_t h, cs;         /* the state [batch, hidden] */
  te_value_t hr0;           /* initial h · R^T when known here, or id 0 */
  int first;                /* no step has changed h yet */
  const act_t *acts;
} dir_state_t;

/* initial_h · R^T for direction d when both are constants (zeros without
 * initial_h): the first step's product is then a constant too, and a
 * product of two constants never reaches the compiled graph. */
static te_value_t initial_product(onnx_ctx_t *c, const rnn_t *r, int64_t d) {
  const onnx_value_t *h0 = onnx_input(c, 5), *rv = onnx_const_input(c, 2);
  int64_t b = r->batch, h = r->hidden, gh = r->gates * h;
  if (!h0) return zeros2(c, b, gh);
  if (!h0->data || !rv) return (te_value_t){0};
  const float *hd = h0->data, *rd = (const float *)rv->data + d * gh * h;
  float *out = tinyml__alloc(c->allocator, (size_t)(b * gh) * sizeof(float), 16);
  if (!out) return onnx_oom(c), (te_value_t){0};
  for (int64_t i = 0; i < b; ++i) {
    const float *hrow = hd + (r->layout ? i * r->dirs + d : d * b + i) * h;
    for (int64_t j = 0; j < gh; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < h; ++k) acc += (double)hrow[k] * rd[j * h + k];
      out[i * gh + j] = (float)acc;
    }
  }
  int64_t dims[2] = {b, gh};
  te_type_t t = te_type(TE_F32, 2, dims);
  te_value_t v = te_const(&c->e, &t, out);
  tinyml__free(c->allocator, out);
  return v;
}

/* h · rt, where rt is R^T or its first columns. */
static te_value_t recur(onnx_ctx_t *c, const dir_state_t *s, te_value_t rt) {
  if (!s->first || !s->hr0.id) return matmul2(c, s->h, rt);
  return slice2(c, s->hr0, 0, 0, s->hr0.type.dims[0], rt.type.dims[1]);
}

/* Wb + Rb, except GRU's Rb_h under linear_before_reset, which the reset
 * gate scales and so is added per step. */
static te_value_t xw_bias(onnx_ctx_t *c, const rnn_t *r, int64_t d, dir_state_t *s) {
  int64_t h = r->hidden, gh = r->gates * h;
  te_value_t wb = row_of(c, 3, d, 0, gh);
  if (r->cell != CELL_GRU || !r->linear_before_reset) return add(c, wb, row_of(c, 3, d, gh, gh));
  s->rb_h = row_of(c, 3, d, gh + 2 * h, h);
  te_value_t parts[2] = {row_of(c, 3, d, gh, 2 * h), zeros2(c, 1, h)};
  return add(c, wb, te_concat(&c->e, parts, 2, 1));
}

static int prepare(onnx_ctx_t *c, const rnn_t *r, te_value_t x2, int64_t d, dir_state_t *s) {
  int64_t h = r->hidden;
  memset(s, 0, sizeof *s);
  s->acts = &r->acts[d * r->acts_per_dir];
  te_value_t wt = weight_t(c, 1, d);
  s->rt = weight_t(c, 2, d);
  if (!wt.id || !s->rt.id) return 0;
  s->xw = matmul2(c, x2, wt);
  if (onnx_input(c, 3)) s->xw = add(c, s->xw, xw_bias(c, r, d, s));
  if (r->cell == CELL_GRU && !r->linear_before_reset) {
    s->rt_zr = slice2(c, s->rt, 0, 0, h, 2 * h);
    s->rt_h = slice2(c, s->rt, 0, 2 * h, h, h);
  }
  if (r->cell == CELL_LSTM && onnx_input(c, 7))
    for (int k = 0; k < 3; ++k) s->p[k] = row_of(c, 7, d, k * h, h);
  s->h = initial_state(c, r, 5, d);
  s->hr0 = initial_product(c, r, d);
  s->first = 1;
  if (r->cell == CELL_LSTM) s->cs = initial_state(c, r, 6, d);
  return !c->error;
}

/* ---- one step ---------------------------------------------------------- */

/* Gate k's columns of a [batch, gates * hidden] value. */
static te_value_t part(onnx_ctx_t *c, const rnn_t *r, te_value_t g, int64_t k) {
  return slice2(c, g, 0, k * r->hidden, g.type.dims[0], r->hidden);
}

static te_value_t peep(onnx_ctx_t *c, te_value_t x, te_value_t p, te_value_t cs) {
  return p.id ? add(c, x, mul(c, p, cs)) : x;
}

/* Gates i, o, f, c (in W's order); f, g, h = acts[0..2]. */
static void lstm_step(onnx_ctx_t *c, const rnn_t *r, dir_state_t *s, te_value_t xw,
                      te_value_t *h, te_value_t *cs) {
  te_value_t g = add(c, xw, recur(c, s, s->rt));
  te_value_t i = gate(c, r, peep(c, part(c, r, g, 0), s->p[0], s->cs), &s->acts[0]);
  te_value_t f = r->input_forget
                     ? sub(c, kf(c, i, 1.0f), i)
                     : gate(c, r, peep(c, part(c, r, g, 2), s->p[2], s->cs), &s->acts[0]);
  te_value_t cc = gate(c, r, part(c, r, g, 3), &s->acts[1]);
  *cs = add(c, mul(c, f, s->cs), mul(c, i, cc));
  te_value_t o = gate(c, r, peep(c, part(c, r, g, 1), s->p[1], *cs), &s->acts[0]);
  /* onnxruntime does not clip the cell state before h. */
  *h = mul(c, o, activate(c, *cs, &s->acts[2]));
}

/* Gates z, r, h; f, g = acts[0..1]. */
static te_value_t gru_step(onnx_ctx_t *c, const rnn_t *r, dir_state_t *s, te_value_t xw) {
  te_value_t hr = recur(c, s, r->linear_before_reset ? s->rt : s->rt_zr), hh;
  te_value_t z = gate(c, r, add(c, part(c, r, xw, 0), part(c, r, hr, 0)), &s->acts[0]);
  te_value_t rg = gate(c, r, add(c, part(c, r, xw, 1), part(c, r, hr, 1)), &s->acts[0]);
  if (r->linear_before_reset) {
    te_value_t rh = add(c, part(c, r, hr, 2), s->rb_h.id ? s->rb_h : kf(c, hr, 0.0f));
    hh = add(c, part(c, r, xw, 2), mul(c, rg, rh));
  } else {
    hh = add(c, part(c, r, xw, 2), matmul2(c, mul(c, rg, s->h), s->rt_h));
  }
  hh = gate(c, r, hh, &s->acts[1]);
  return add(c, mul(c, sub(c, kf(c, z, 1.0f), z), hh), mul(c, z, s->h));
}

static te_value_t rnn_step(onnx_ctx_t *c, const rnn_t *r, dir_state_t *s, te_value_t xw) {
  return gate(c, r, add(c, xw, recur(c, s, s->rt)), &s->acts[0]);
}

/* Which sequences step t is inside: id 0 with *none clear when all are, id
 * 0 with *none set when none is, else an i1 [batch, 1] mask. */
static te_value_t mask_at(onnx_ctx_t *c, const rnn_t *r, int64_t t, int *none) {
  *none = 0;
  if (r->lens) {
    int64_t valid = 0;
    for (int64_t b = 0; b < r->batch; ++b) valid += r->lens[b] > t;
    if (valid == r->batch) return (te_value_t){0};
    if (valid == 0) return *none = 1, (te_value_t){0};
  } else if (!r->lens_rt.id) {
    return (te_value_t){0};
  }
  int64_t one[2] = {1, 1};
  te_type_t tt = te_type(TE_I32, 2, one);
  return bin(c, "tosa.greater", r->lens_rt, te_splat_int(&c->e, &tt, t));
}

/* Runs one direction over the sequence; ys[t] is its output at step t. */
static void run_direction(onnx_ctx_t *c, const rnn_t *r, dir_state_t *s, int reverse,
                          te_value_t *ys) {
  for (int64_t k = 0; k < r->steps && !c->error; ++k) {
    int64_t t = reverse ? r->steps - 1 - k : k;
    int none;
    te_value_t mask = mask_at(c, r, t, &none);
    if (none) {
      ys[t] = zeros2(c, r->batch, r->hidden);
      continue;
    }
    te_value_t xw = slice2(c, s->xw, t * r->batch, 0, r->batch, r->gates * r->hidden);
    te_value_t h, cs = {0};
    if (r->cell == CELL_LSTM) lstm_step(c, r, s, xw, &h, &cs);
    else if (r->cell == CELL_GRU) h = gru_step(c, r, s, xw);
    else h = rnn_step(c, r, s, xw);
    if (mask.id) {
      ys[t] = te_select(&c->e, mask, h, kf(c, h, 0.0f));
      h = te_select(&c->e, mask, h, s->h);
      if (cs.id) cs = te_select(&c->e, mask, cs, s->cs);
    } else {
      ys[t] = h;
    }
    s->h = h;
    s->first = 0;
    if (cs.id) s->cs = cs;
  }
}

/* ---- outputs ----------------------------------------------------------- */

/* Y [steps, dirs, batch, hidden] (layout 1: [batch, steps, dirs, hidden])
 * from ys[d * steps + t]. */
static te_value_t join_y(onnx_ctx_t *c, const rnn_t *r, te_value_t *ys) {
  int64_t one[4] = {1, 1, r->batch, r->hidden};
  te_value_t dirs[2];
  for (int64_t d = 0; d < r->dirs; ++d) {
    te_value_t *row = ys + d * r->steps;
    for (int64_t t = 0; t < r->steps; ++t) row[t] = te_reshape(&c->e, row[t], 4, one);
    dirs[d] = r->steps == 1 ? row[0] : te_concat(&c->e, row, (uint32_t)r->steps, 0);
  }
  te_value_t y = r->dirs == 1 ? dirs[0] : te_concat(&c->e, dirs, 2, 1);
  static const int32_t perm[4] = {2, 0, 1, 3};
  return r->layout ? te_transpose(&c->e, y, perm) : y;
}

/* Y_h or Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]). */
static te_value_t join_state(onnx_ctx_t *c, const rnn_t *r, const te_value_t *st) {
  int64_t one[3] = {1, r->batch, r->hidden};
  te_value_t parts[2];
  for (int64_t d = 0; d < r->dirs; ++d) parts[d] = te_reshape(&c->e, st[d], 3, one);
  te_value_t y = r->dirs == 1 ? parts[0] : te_concat(&c->e, parts, 2, 0);
  static const int32_t perm[3] = {1, 0, 2};
  return r->layout ? te_transpose(&c->e, y, perm) : y;
}

/* X as [steps * batch, input], time-major. */
static te_value_t x_rows(onnx_ctx_t *c, const rnn_t *r) {
  te_value_t x = onnx_in(c, 0);
  static const int32_t perm[3] = {1, 0, 2};
  if (r->layout) x = te_transpose(&c->e, x, perm);
  int64_t d2[2] = {r->steps * r->batch, r->input};
  return te_reshape(&c->e, x, 2, d2);
}

static void run_all(onnx_ctx_t *c, rnn_t *r, te_value_t *ys) {
  te_value_t x2 = x_rows(c, r), hs[2], cs[2];
  for (int64_t d = 0; d < r->dirs && !c->error; ++d) {
    dir_state_t s;
    if (!prepare(c, r, x2, d, &s)) return;
    run_direction(c, r, &s, r->reverse_only || d == 1, ys + d * r->steps);
    hs[d] = s.h;
    cs[d] = s.cs;
  }
  if (c->error) return;
  if (wanted(c, 0)) onnx_set_out(c, 0, join_y(c, r, ys));
  if (wanted(c, 1)) onnx_set_out(c, 1, join_state(c, r, hs));
  if (r->cell == CELL_LSTM && wanted(c, 2)) onnx_set_out(c, 2, join_state(c, r, cs));
}

static tinyml_status_t lower_recurrent(onnx_ctx_t *c, enum cell cell) {
  static const int64_t gates[3] = {1, 3, 4};
  rnn_t r;
  memset(&r, 0, sizeof r);
  r.cell = cell;
  r.gates = gates[cell];
  r.acts_per_dir = cell == CELL_LSTM ? 3 : cell == CELL_GRU ? 2 : 1;
  te_value_t *ys = NULL;
  if (onnx_output_count(c) > (cell == CELL_LSTM ? 3u : 2u))
    return onnx_fail(c, "too many outputs");
  if (read_attrs(c, &r) && read_sizes(c, &r) && check_optional(c, &r) && read_lens(c, &r)) {
    ys = tinyml__alloc(c->allocator, (size_t)(r.steps * r.dirs) * sizeof *ys, 16);
    if (!ys) onnx_oom(c);
    else run_all(c, &r, ys);
  }
  tinyml__free(c->allocator, ys);
  tinyml__free(c->allocator, r.lens);
  return c->error;
}

static tinyml_status_t lower_lstm(onnx_ctx_t *c) { return lower_recurrent(c, CELL_LSTM); }
static tinyml_status_t lower_gru(onnx_ctx_t *c) { return lower_recurrent(c, CELL_GRU); }
static tinyml_status_t lower_rnn(onnx_ctx_t *c) { return lower_recurrent(c, CELL_RNN); }

const onnx_lowering_t onnx_lowerings_rnn[] = {
    {"LSTM", 7, 23, lower_lstm},
    {"GRU", 7, 23, lower_gru},
    {"RNN", 7, 23, lower_rnn},
    {NULL, 0, 0, NULL},
};
