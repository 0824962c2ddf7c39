/* UNIDIRECTIONAL_SEQUENCE_LSTM in float32, as TFLite's float kernel
 * (lstm_eval.cc) computes it.  Per time step, with x the step's input, h
 * the output state and c the cell state:
 *
 *   i = sigmoid(Wi x + Ri h + pi * c + bi)      CIFG (no Wi): i = 1 - f
 *   f = sigmoid(Wf x + Rf h + pf * c + bf)
 *   g = act(Wc x + Rc h + bc)
 *   c = clip(f * c + i * g, cell_clip)
 *   o = sigmoid(Wo x + Ro h + po * c + bo)      c: the new cell state
 *   h = clip(P (o * act(c)) + pb, proj_clip)    no P: h = o * act(c)
 *
 * The peephole terms (p*) are optional.  With layer norm, each gate's sum
 * without its bias is normalised over the cells, scaled by the gate's
 * coefficients and then biased.
 *
 * The input terms of all steps come from one matmul, as the sequence is
 * known in full; the time loop is unrolled (its length is static), one
 * matmul for all four recurrent terms per step.  h and c are variable
 * tensors: the model's state (tfl_set_state), zeros after a reset as in
 * TFLite.  Int8 and int16 (16x8) input go to the integer kernel
 * (tfl_lower_lstm_int.c); the hybrid kernel (int8 weights with float input)
 * is refused by name. */
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "tfl_lower.h"
#include "tfl_sequence.h"

enum { OPT_SEQUENCE_LSTM = 71 };
enum { ACT_NONE = 0, ACT_TANH = 4 };
enum {
  IN_X = 0, IN_W = 1,           /* input-to-{i,f,c,o} weights: 1..4 */
  IN_R = 5,                     /* recurrent-to-{i,f,c,o} weights: 5..8 */
  IN_PEEP = 9,                  /* cell-to-{i,f,o} (peephole): 9..11 */
  IN_BIAS = 12,                 /* {i,f,c,o} gate bias: 12..15 */
  IN_PROJ_W = 16, IN_PROJ_B = 17,
  IN_H = 18, IN_C = 19,         /* output state, cell state (variables) */
  IN_LN = 20,                   /* {i,f,c,o} layer norm coefficients: 20..23 */
  IN_COUNT = 24
};
enum { GATE_I, GATE_F, GATE_C, GATE_O };

typedef struct lstm {
  int64_t batch, time, n_in, n_cell, n_out;
  int time_major, act, cifg, peephole, layer_norm, projection;
  float cell_clip, proj_clip;
  /* Values every step uses, made once. */
  te_value_t rw;                /* [1, n_out, gates * n_cell] */
  te_value_t peep[4], ln[4], bias[4]; /* [1, n_cell]; no peephole for GATE_C */
  te_value_t pw, pb;            /* [1, n_cell, n_out], [1, n_out] */
  te_value_t zero, one, inv_cells, epsilon; /* f32 scalars */
} lstm_t;

/* The column block of gate g in the packed weights (CIFG has no GATE_I). */
static int64_t gate_col(const lstm_t *l, int g) { return (int64_t)(g - l->cifg) * l->n_cell; }

static int peep_input(int g) { return g == GATE_O ? IN_PEEP + 2 : IN_PEEP + g; }

static int present(tfl_ctx_t *c, uint32_t i) { return tfl_in(c, i) != NULL; }

static int failed(tfl_ctx_t *c, const char *what) {
  tfl_fail(c, "%s", what);
  return 0;
}

/* ---- checks ------------------------------------------------------------ */

static int read_options(tfl_ctx_t *c, lstm_t *l) {
  const tfl_table_t *o = tfl_options(c, OPT_SEQUENCE_LSTM);
  if (!o) return 0;
  int bad = 0;
  l->act = tfl_table_i8(o, 0, ACT_NONE, &bad);
  l->cell_clip = tfl_table_f32(o, 1, 0.0f, &bad);
  l->proj_clip = tfl_table_f32(o, 2, 0.0f, &bad);
  l->time_major = tfl_table_bool(o, 3, 0, &bad);
  int diagonal = tfl_table_bool(o, 5, 0, &bad);
  if (bad) return failed(c, "malformed options");
  if (diagonal) return failed(c, "diagonal_recurrent_tensors is not supported");
  if (l->act < ACT_NONE || l->act > ACT_TANH) {
    tfl_fail(c, "fused activation %d is not supported (NONE, RELU, RELU_N1_TO_1, RELU6 and "
                "TANH are)", l->act);
    return 0;
  }
  if (!(l->cell_clip >= 0.0f) || !(l->proj_clip >= 0.0f))
    return failed(c, "cell_clip and proj_clip must be 0 (none) or positive");
  return 1;
}

/* Float in, float out, float constants (integer input went to
 * tfl_lower_lstm_int.c). */
static int check_types(tfl_ctx_t *c) {
  const tfl_tensor_t *x = tfl_in(c, IN_X), *y = tfl_out(c, 0), *wf = tfl_in(c, IN_W + GATE_F);
  if (c->op->input_count != 20 && c->op->input_count != IN_COUNT)
    return failed(c, "expected 20 or 24 inputs");
  if (!x || !y || !wf) return failed(c, "missing input, output or input-to-forget weights");
  if (x->type != TFL_FLOAT32 || y->type != TFL_FLOAT32) {
    tfl_fail(c, "unsupported types %s -> %s (only FLOAT32 so far)", tfl_type_name(x->type),
             tfl_type_name(y->type));
    return 0;
  }
  if (wf->type != TFL_FLOAT32) {
    tfl_fail(c, "hybrid LSTM (%s weights, FLOAT32 input) is not supported yet",
             tfl_type_name(wf->type));
    return 0;
  }
  for (uint32_t i = 1; i < c->op->input_count; ++i) {
    const tfl_tensor_t *t = tfl_in(c, i);
    int state = i == IN_H || i == IN_C;
    if (!t || (t->type == TFL_FLOAT32 && (state ? t->is_variable : t->data != NULL))) continue;
    tfl_fail(c, "input %u ('%s') must be a %s FLOAT32 tensor", i, t->name,
             state ? "variable" : "constant");
    return 0;
  }
  return 1;
}

static int is_matrix(const tfl_tensor_t *t, int64_t rows, int64_t cols) {
  return t && t->rank == 2 && t->shape[0] == rows && t->shape[1] == cols;
}

static int is_vector(const tfl_tensor_t *t, int64_t n) {
  return t && t->rank == 1 && t->shape[0] == n;
}

/* Which optional parts the model has: TFLite's rule is all or none of
 * each group (the input gate's, the peepholes, the layer norms). */
static int read_variant(tfl_ctx_t *c, lstm_t *l) {
  uint32_t n = c->op->input_count;
  l->cifg = !present(c, IN_W + GATE_I);
  if (present(c, IN_R + GATE_I) == l->cifg || present(c, IN_BIAS + GATE_I) == l->cifg)
    return failed(c, "input-to-input weights, recurrent-to-input weights and the input gate "
                     "bias must all be given or all be omitted (CIFG)");
  l->peephole = present(c, IN_PEEP + 2);
  if (present(c, IN_PEEP + 1) != l->peephole || (!l->cifg && present(c, IN_PEEP) != l->peephole))
    return failed(c, "the peephole (cell-to-gate) weights must all be given or all be omitted");
  l->layer_norm = n == IN_COUNT && present(c, IN_LN + GATE_F);
  for (uint32_t g = l->cifg; g < 4 && n == IN_COUNT; ++g)
    if (present(c, IN_LN + g) != l->layer_norm)
      return failed(c, "the layer norm coefficients must all be given or all be omitted");
  l->projection = present(c, IN_PROJ_W);
  if (!l->projection && present(c, IN_PROJ_B))
    return failed(c, "a projection bias needs projection weights");
  return 1;
}

static int read_sizes(tfl_ctx_t *c, lstm_t *l) {
  const tfl_tensor_t *x = tfl_in(c, IN_X), *wf = tfl_in(c, IN_W + GATE_F),
                     *rf = tfl_in(c, IN_R + GATE_F), *pw = tfl_in(c, IN_PROJ_W);
  if (x->rank != 3 || wf->rank != 2 || !rf || rf->rank != 2)
    return failed(c, "input must be 3-D and the weights 2-D");
  l->batch = x->shape[l->time_major ? 1 : 0];
  l->time = x->shape[l->time_major ? 0 : 1];
  l->n_in = x->shape[2];
  l->n_cell = wf->shape[0];
  l->n_out = rf->shape[1];
  if (l->batch < 1 || l->time < 1 || l->n_in < 1 || l->n_cell < 1 || l->n_out < 1)
    return failed(c, "every size must be positive");
  if (l->projection ? !is_matrix(pw, l->n_out, l->n_cell) : l->n_out != l->n_cell)
    return failed(c, "projection weights must be [n_output, n_cell] (without them, n_output "
                     "must equal n_cell)");
  return 1;
}

static int check_shapes(tfl_ctx_t *c, const lstm_t *l) {
  for (int g = l->cifg; g < 4; ++g) {
    if (!is_matrix(tfl_in(c, IN_W + g), l->n_cell, l->n_in) ||
        !is_matrix(tfl_in(c, IN_R + g), l->n_cell, l->n_out))
      return failed(c, "gate weights must be [n_cell, n_input] and [n_cell, n_output]");
    if (!is_vector(tfl_in(c, IN_BIAS + g), l->n_cell) ||
        (l->peephole && g != GATE_C && !is_vector(tfl_in(c, peep_input(g)), l->n_cell)) ||
        (l->layer_norm && !is_vector(tfl_in(c, IN_LN + g), l->n_cell)))
      return failed(c, "gate biases, peephole weights and layer norm coefficients must be "
                       "[n_cell] vectors");
  }
  const tfl_tensor_t *pb = tfl_in(c, IN_PROJ_B), *h = tfl_in(c, IN_H), *cs = tfl_in(c, IN_C),
                     *y = tfl_out(c, 0);
  if (pb && !is_vector(pb, l->n_out)) return failed(c, "projection bias must be [n_output]");
  if (!h || !cs || tfl_numel(h) != l->batch * l->n_out || tfl_numel(cs) != l->batch * l->n_cell)
    return failed(c, "output state must be [batch, n_output] and cell state [batch, n_cell]");
  const tfl_tensor_t *x = tfl_in(c, IN_X);
  if (y->rank != 3 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1] ||
      y->shape[2] != l->n_out)
    return failed(c, "output shape must be the input's with n_output features");
  /* The reader skips this check for shapes with a -1 signature; the
   * constants are read directly below. */
  for (uint32_t i = 1; i < c->op->input_count; ++i) {
    const tfl_tensor_t *t = tfl_in(c, i);
    if (t && t->data && (int64_t)t->data_size != tfl_numel(t) * (int64_t)sizeof(float)) {
      tfl_fail(c, "constant '%s' holds %zu bytes, its shape needs %lld", t->name, t->data_size,
               (long long)(tfl_numel(t) * (int64_t)sizeof(float)));
      return 0;
    }
  }
  return 1;
}

static int read_lstm(tfl_ctx_t *c, lstm_t *l) {
  return check_types(c) && read_options(c, l) && read_variant(c, l) && read_sizes(c, l) &&
         check_shapes(c, l);
}

/* ---- constants --------------------------------------------------------- */

/* The [rows, k] matrices of inputs in[0..n) transposed and side by side:
 * [1, k, n * rows], the layout of TOSA's matmul, made at compile time. */
static te_value_t pack_weights(tfl_ctx_t *c, const uint32_t *in, int n, int64_t rows, int64_t k) {
  int64_t width = n * rows;
  float *p = tinyml__alloc(c->allocator, (size_t)(k * width) * sizeof(float), 16);
  if (!p) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  for (int g = 0; g < n; ++g) {
    const uint8_t *w = tfl_in(c, in[g])->data;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < k; ++j)
        memcpy(&p[j * width + g * rows + r], w + (size_t)(r * k + j) * sizeof(float), sizeof(float));
  }
  te_type_t t = te_type(TE_F32, 3, (int64_t[3]){1, k, width});
  te_value_t v = te_const(&c->e, &t, p);
  tinyml__free(c->allocator, p);
  return v;
}

/* The inputs of the gates present, first + GATE_I .. first + GATE_O. */
static int gate_inputs(const lstm_t *l, uint32_t first, uint32_t *out) {
  int n = 0;
  for (int g = l->cifg; g < 4; ++g) out[n++] = first + (uint32_t)g;
  return n;
}

/* All gate biases side by side, [gates * n_cell]: added to the input
 * terms once when there is no layer norm (which adds them later). */
static te_value_t packed_bias(tfl_ctx_t *c, const lstm_t *l) {
  uint32_t in[4];
  int n = gate_inputs(l, IN_BIAS, in);
  int64_t width = n * l->n_cell;
  float *p = tinyml__alloc(c->allocator, (size_t)width * sizeof(float), 16);
  if (!p) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  for (int g = 0; g < n; ++g)
    memcpy(p + g * l->n_cell, tfl_in(c, in[g])->data, (size_t)l->n_cell * sizeof(float));
  te_type_t t = te_type(TE_F32, 1, &width);
  te_value_t v = te_const(&c->e, &t, p);
  tinyml__free(c->allocator, p);
  return v;
}

/* A constant vector input as a [1, n] row, the rank of the per-step
 * values, so no step has to reshape it to broadcast. */
static te_value_t row(tfl_ctx_t *c, uint32_t input, int64_t n) {
  te_value_t v = tfl_value_in(c, input);
  return v.id ? te_reshape(&c->e, v, 2, (int64_t[2]){1, n}) : v;
}

static int make_constants(tfl_ctx_t *c, lstm_t *l) {
  uint32_t in[4];
  int n = gate_inputs(l, IN_R, in);
  l->rw = pack_weights(c, in, n, l->n_cell, l->n_out);
  for (int g = l->cifg; g < 4; ++g) {
    if (l->peephole && g != GATE_C) l->peep[g] = row(c, (uint32_t)peep_input(g), l->n_cell);
    if (l->layer_norm) l->ln[g] = row(c, IN_LN + (uint32_t)g, l->n_cell);
    if (l->layer_norm) l->bias[g] = row(c, IN_BIAS + (uint32_t)g, l->n_cell);
  }
  if (l->projection) {
    uint32_t pw = IN_PROJ_W;
    l->pw = pack_weights(c, &pw, 1, l->n_out, l->n_cell);
    if (present(c, IN_PROJ_B)) l->pb = row(c, IN_PROJ_B, l->n_out);
  }
  te_type_t scalar = te_type(TE_F32, 2, (int64_t[2]){1, 1});
  l->zero = te_scalar_f32(&c->e, 0.0f);
  l->one = te_splat_f32(&c->e, &scalar, 1.0f);
  l->inv_cells = te_splat_f32(&c->e, &scalar, 1.0f / (float)l->n_cell);
  l->epsilon = te_splat_f32(&c->e, &scalar, 1e-8f);
  return !c->error;
}

/* ---- the computation --------------------------------------------------- */

/* [rows, k] x packed [1, k, width] -> [rows, width]. */
static te_value_t matmul(tfl_ctx_t *c, const lstm_t *l, te_value_t a, te_value_t w) {
  int64_t rows = te_numel(&a.type) / w.type.dims[1], width = w.type.dims[2];
  te_value_t ops[4] = {te_reshape(&c->e, a, 3, (int64_t[3]){1, rows, w.type.dims[1]}), w,
                       l->zero, l->zero};
  te_type_t t = te_type(TE_F32, 3, (int64_t[3]){1, rows, width});
  te_value_t y = te_op(&c->e, "tosa.matmul", ops, 4, NULL, &t);
  return te_reshape(&c->e, y, 2, (int64_t[2]){rows, width});
}

/* W x (+ the biases without layer norm) for every step at once, shaped
 * like the input: [batch, time, width] or, time major, [time, batch, width]. */
static te_value_t input_terms(tfl_ctx_t *c, const lstm_t *l) {
  uint32_t in[4];
  int n = gate_inputs(l, IN_W, in);
  te_value_t w = pack_weights(c, in, n, l->n_cell, l->n_in), x = tfl_value_in(c, IN_X);
  if (!w.id || !x.id) return (te_value_t){0};
  te_value_t y = matmul(c, l, x, w);
  if (!l->layer_norm) y = te_binary(&c->e, "tosa.add", y, packed_bias(c, l));
  int64_t dims[3] = {x.type.dims[0], x.type.dims[1], w.type.dims[2]};
  return c->error ? (te_value_t){0} : te_reshape(&c->e, y, 3, dims);
}

/* TFLite's MeanStddevNormalization over each row's cells:
 * (v - mean) / sqrt(variance + 1e-8). */
static te_value_t normalise(tfl_ctx_t *c, const lstm_t *l, te_value_t v) {
  te_value_t mean = te_mul(&c->e, te_reduce(&c->e, "tosa.reduce_sum", v, 1), l->inv_cells, 0);
  te_value_t d = te_binary(&c->e, "tosa.sub", v, mean);
  te_value_t var = te_mul(&c->e, te_reduce(&c->e, "tosa.reduce_sum", te_mul(&c->e, d, d, 0), 1),
                          l->inv_cells, 0);
  te_value_t sum = te_binary(&c->e, "tosa.add", var, l->epsilon);
  return te_mul(&c->e, d, te_unary(&c->e, "tosa.rsqrt", sum), 0);
}

/* Gate g's sum before its activation; `cell` is the state its peephole
 * sees (the new cell state for the output gate). */
static te_value_t gate_sum(tfl_ctx_t *c, const lstm_t *l, te_value_t z, int g, te_value_t cell) {
  int64_t start[2] = {0, gate_col(l, g)}, size[2] = {l->batch, l->n_cell};
  te_value_t v = te_slice(&c->e, z, start, size);
  if (l->peephole && g != GATE_C)
    v = te_binary(&c->e, "tosa.add", v, te_mul(&c->e, l->peep[g], cell, 0));
  if (l->layer_norm)
    v = te_binary(&c->e, "tosa.add", te_mul(&c->e, normalise(c, l, v), l->ln[g], 0), l->bias[g]);
  return v;
}

/* TFLite's ApplyActivationToVector for the fused activation. */
static te_value_t activation(tfl_ctx_t *c, const lstm_t *l, te_value_t v) {
  if (l->act == ACT_TANH) return te_unary(&c->e, "tosa.tanh", v);
  return tfl_activation(c, v, tfl_out(c, 0), l->act);
}

static te_value_t sigmoid(tfl_ctx_t *c, te_value_t v) { return te_unary(&c->e, "tosa.sigmoid", v); }

static te_value_t clip(tfl_ctx_t *c, te_value_t v, float limit) {
  return limit > 0.0f ? te_clamp_f32(&c->e, v, -limit, limit) : v;
}

static te_value_t project(tfl_ctx_t *c, const lstm_t *l, te_value_t v) {
  v = matmul(c, l, v, l->pw);
  if (l->pb.id) v = te_binary(&c->e, "tosa.add", v, l->pb);
  return clip(c, v, l->proj_clip);
}

/* One time step: updates *h and *cell from the step's input terms. */
static void step(tfl_ctx_t *c, const void *layer, te_value_t terms, te_value_t *h,
                 te_value_t *cell) {
  const lstm_t *l = layer;
  te_value_t z = te_binary(&c->e, "tosa.add", terms, matmul(c, l, *h, l->rw));
  te_value_t f = sigmoid(c, gate_sum(c, l, z, GATE_F, *cell));
  te_value_t i = l->cifg ? te_binary(&c->e, "tosa.sub", l->one, f)
                         : sigmoid(c, gate_sum(c, l, z, GATE_I, *cell));
  te_value_t g = activation(c, l, gate_sum(c, l, z, GATE_C, *cell));
  te_value_t cn = te_binary(&c->e, "tosa.add", te_mul(&c->e, f, *cell, 0), te_mul(&c->e, i, g, 0));
  cn = clip(c, cn, l->cell_clip);
  te_value_t o = sigmoid(c, gate_sum(c, l, z, GATE_O, cn));
  te_value_t out = te_mul(&c->e, o, activation(c, l, cn), 0);
  *h = l->projection ? project(c, l, out) : out;
  *cell = cn;
}

tinyml_status_t tfl_lower_sequence_lstm(tfl_ctx_t *c) {
  const tfl_tensor_t *x = tfl_in(c, IN_X);
  if (x && (x->type == TFL_INT8 || x->type == TFL_INT16)) return tfl_lower_sequence_lstm_int(c);
  lstm_t l;
  memset(&l, 0, sizeof l);
  if (!read_lstm(c, &l) || !make_constants(c, &l)) return c->error;
  te_value_t terms = input_terms(c, &l);
  te_value_t h = tfl_value_in(c, IN_H), cell = tfl_value_in(c, IN_C);
  if (c->error) return c->error;
  h = te_reshape(&c->e, h, 2, (int64_t[2]){l.batch, l.n_out});
  cell = te_reshape(&c->e, cell, 2, (int64_t[2]){l.batch, l.n_cell});
  const tfl_sequence_t seq = {l.batch, l.time, l.time_major};
  te_value_t y = tfl_sequence_unroll(c, &seq, terms, step, &l, &h, &cell);
  if (!y.id) return c->error;
  tfl_set_state(c, IN_H, h);
  tfl_set_state(c, IN_C, cell);
  return tfl_set_out(c, 0, y);
}
