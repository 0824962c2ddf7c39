/* UNIDIRECTIONAL_SEQUENCE_LSTM with int8 activations and weights, int32
 * biases and an int16 cell state, bit for bit as TFLite Micro's reference
 * kernel (the 2023+ lstm_eval.h) computes it; and its 16x8 form, the same
 * template with int16 activations (zero point 0), int64 biases and gate
 * fully-connected layers that accumulate in int64 and scale with TFLite's
 * int64 MultiplyByQuantizedMultiplier (a 16-bit multiplier, one rounding:
 * SINGLE_ROUND, shared with tfl_lower_int16.c).  TFLite's own integer kernel
 * (EvalInteger8x8_16) rounds differently; int8 LSTMs are made for TFLM.
 * Per time step, x the step's input, h the int8 (16x8: int16) hidden
 * state, c the int16 cell state of scale 2^cpow, MBQM TFLite's
 * MultiplyByQuantizedMultiplier:
 *
 *   gate g:  a = sat16(MBQM(Wx_g (x - x_zp) + b_g, m_x[g]))     Q3.12
 *            r = sat16(MBQM(Wh_g (h - h_zp), m_h[g]))            old h
 *            p = sat16(a + r)
 *   i, f, o = Sigmoid16(p), g = Tanh16(p)                        Q0.15
 *   c = clip(sat16(MBQM(f c, 2^-15) + MBQM(i g, 2^-30 / c_scale)), qclip)
 *   h = sat8(MBQM(TanhCell(c) o, 2^-30 / h_scale) + h_zp)      16x8: sat16
 *
 * MBQM with double rounding is a DOUBLE_ROUND tosa.rescale.  Sigmoid16 and
 * Tanh16 interpolate a 256-entry table over segments tosa.table cannot
 * express (TOSA's are 128 input units, TFLM's 512/3 or 256/3), so they are
 * built from integer ops.  The two gate terms are rescaled and saturated
 * separately before their sum, so they cannot share one matmul.  Only what
 * TFLM accepts is accepted: no CIFG, peephole, projection or layer norm. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "tfl_lower.h"
#include "tfl_q16_act.h"
#include "tfl_sequence.h"
#include "tfl_quant.h"

enum { OPT_SEQUENCE_LSTM = 71 };
enum { ACT_TANH = 4 };
enum { IN_X = 0, IN_W = 1, IN_R = 5, IN_PEEP = 9, IN_BIAS = 12, IN_PROJ = 16, IN_H = 18,
       IN_C = 19, IN_LN = 20 };
enum { GATE_I, GATE_F, GATE_C, GATE_O };

/* The gates side by side in this order: the three sigmoids, then the tanh,
 * so each activation runs once on adjacent columns. */
static const int PACK[4] = {GATE_I, GATE_F, GATE_O, GATE_C};

typedef struct qmul {
  int32_t m;
  int8_t shift; /* TOSA's: 31 - TFLite's (16x8 gates: 15 - TFLite's) */
} qmul_t;

/* A rescale's multiplier and shift constants, made once for all steps. */
typedef struct scaler {
  te_value_t m, s;
} scaler_t;

typedef struct ilstm {
  int64_t batch, time, n_in, n_cell;
  int time_major;
  te_elem_t act;    /* TE_I8, or TE_I16 for 16x8: input, hidden state, output */
  int32_t x_zp, h_zp;
  int cpow;         /* log2 of the cell scale, as TFLM rounds it */
  int32_t qclip;    /* the cell clip in cell units; 0 = none */
  qmul_t x_mul[4], h_mul[4]; /* per packed gate */
  qmul_t fc_mul, ig_mul, hidden_mul;
  te_value_t rw;    /* packed recurrent weights (pack_weights) */
  scaler_t x_gates, h_gates, fc, ig, hidden;
  tfl_q16_lut_t sigmoid, tanh;
} ilstm_t;

static int failed(tfl_ctx_t *c, const char *what) {
  tfl_fail(c, "%s", what);
  return 0;
}

/* ---- checks ------------------------------------------------------------ */

/* TFLM's LstmTensors::ValidateTensorStatus: the optional parts are refused. */
static int check_variant(tfl_ctx_t *c) {
  for (int g = 0; g < 4; ++g)
    if (!tfl_in(c, IN_W + (uint32_t)g) || !tfl_in(c, IN_R + (uint32_t)g) ||
        !tfl_in(c, IN_BIAS + (uint32_t)g))
      return failed(c, "integer LSTM without the input gate (CIFG) or without a gate's "
                       "weights or bias is not supported (TFLite Micro refuses it too)");
  for (uint32_t i = 0; i < 3; ++i)
    if (tfl_in(c, IN_PEEP + i))
      return failed(c, "integer LSTM with peephole weights is not supported");
  if (tfl_in(c, IN_PROJ) || tfl_in(c, IN_PROJ + 1))
    return failed(c, "integer LSTM with a projection is not supported");
  for (uint32_t i = 0; i < 4 && c->op->input_count > IN_LN; ++i)
    if (tfl_in(c, IN_LN + i)) return failed(c, "integer LSTM with layer norm is not supported");
  return 1;
}

static int read_options(tfl_ctx_t *c, ilstm_t *l, float *cell_clip) {
  const tfl_table_t *o = tfl_options(c, OPT_SEQUENCE_LSTM);
  if (!o) return 0;
  int bad = 0;
  int act = tfl_table_i8(o, 0, 0, &bad);
  *cell_clip = tfl_table_f32(o, 1, 0.0f, &bad);
  l->time_major = tfl_table_bool(o, 3, 0, &bad);
  int diagonal = tfl_table_bool(o, 5, 0, &bad);
  if (bad) return failed(c, "malformed options");
  if (diagonal) return failed(c, "diagonal_recurrent_tensors is not supported");
  if (act != ACT_TANH) {
    tfl_fail(c, "integer LSTM with fused activation %d is not supported (only TANH)", act);
    return 0;
  }
  if (!(*cell_clip >= 0.0f)) return failed(c, "cell_clip must be 0 (none) or positive");
  return 1;
}

/* A constant, per-tensor int8 matrix with zero point 0 (TFLM misreads
 * per-channel LSTM weights, so there is no behaviour to match). */
static int check_weights(tfl_ctx_t *c, const tfl_tensor_t *w, int64_t rows, int64_t cols) {
  if (!w || w->type != TFL_INT8 || !w->data || w->rank != 2 || w->shape[0] != rows ||
      w->shape[1] != cols || w->data_size != (size_t)(rows * cols))
    return failed(c, "integer LSTM weights must be constant INT8 [n_cell, n_input] and "
                     "[n_cell, n_cell] matrices");
  if (w->quant.scale_count != 1 || tfl_zero_point(w) != 0 || !(tfl_scale(w) > 0.0f))
    return failed(c, "integer LSTM weights must be quantised per tensor with zero point 0");
  return 1;
}

/* The biases are int32 for int8 activations, int64 for int16 (TFLM's
 * BiasType). */
static int check_gates(tfl_ctx_t *c, const ilstm_t *l) {
  int32_t bias_type = l->act == TE_I8 ? TFL_INT32 : TFL_INT64;
  size_t bias_size = (size_t)l->n_cell * (l->act == TE_I8 ? 4 : 8);
  for (uint32_t g = 0; g < 4; ++g) {
    const tfl_tensor_t *b = tfl_in(c, IN_BIAS + g);
    if (!check_weights(c, tfl_in(c, IN_W + g), l->n_cell, l->n_in) ||
        !check_weights(c, tfl_in(c, IN_R + g), l->n_cell, l->n_cell))
      return 0;
    if (b->type != bias_type || !b->data || tfl_numel(b) != l->n_cell ||
        b->data_size != bias_size) {
      tfl_fail(c, "integer LSTM with %s input needs constant %s [n_cell] biases (got %s)",
               tfl_type_name(tfl_in(c, IN_X)->type), tfl_type_name(bias_type),
               tfl_type_name(b->type));
      return 0;
    }
  }
  return 1;
}

/* The output state and the output have the input's type; int16 ones are
 * symmetric, as TFLite quantises them: TFLM's int16 fully-connected kernels
 * have not always applied an input zero point, so a non-zero one has no
 * single TFLM result to match. */
static int check_io(tfl_ctx_t *c, const ilstm_t *l) {
  const tfl_tensor_t *x = tfl_in(c, IN_X), *y = tfl_out(c, 0), *h = tfl_in(c, IN_H),
                     *cs = tfl_in(c, IN_C);
  if (!h || !cs || h->type != x->type || cs->type != TFL_INT16 || !h->is_variable ||
      !cs->is_variable) {
    tfl_fail(c, "integer LSTM with %s input needs a variable %s output state and a variable "
                "INT16 cell state (got %s and %s)",
             tfl_type_name(x->type), tfl_type_name(x->type),
             h ? tfl_type_name(h->type) : "none", cs ? tfl_type_name(cs->type) : "none");
    return 0;
  }
  if (!(tfl_scale(h) > 0.0f) || !(tfl_scale(cs) > 0.0f) || !(tfl_scale(x) > 0.0f))
    return failed(c, "integer LSTM input and states must be quantised");
  if (tfl_numel(h) != l->batch * l->n_cell || tfl_numel(cs) != l->batch * l->n_cell)
    return failed(c, "output and cell state must hold batch x n_cell values");
  if (y->type != x->type || y->rank != 3 || y->shape[0] != x->shape[0] ||
      y->shape[1] != x->shape[1] || y->shape[2] != l->n_cell) {
    tfl_fail(c, "output must be %s (got %s), the input's shape with n_cell features",
             tfl_type_name(x->type), tfl_type_name(y->type));
    return 0;
  }
  if (l->act == TE_I16 && (tfl_zero_point(x) != 0 || tfl_zero_point(h) != 0)) {
    tfl_fail(c, "INT16 input and output state need zero point 0 (got %d and %d)",
             (int)tfl_zero_point(x), (int)tfl_zero_point(h));
    return 0;
  }
  return 1;
}

static int read_sizes(tfl_ctx_t *c, ilstm_t *l) {
  const tfl_tensor_t *x = tfl_in(c, IN_X), *wf = tfl_in(c, IN_W + GATE_F);
  if (c->op->input_count != 20 && c->op->input_count != 24)
    return failed(c, "expected 20 or 24 inputs");
  if (!x || !tfl_out(c, 0) || x->rank != 3 || !wf || wf->rank != 2)
    return failed(c, "input must be 3-D and the weights 2-D");
  if (x->type != TFL_INT8 && x->type != TFL_INT16) {
    tfl_fail(c, "integer LSTM with %s input is not supported", tfl_type_name(x->type));
    return 0;
  }
  l->act = x->type == TFL_INT8 ? TE_I8 : TE_I16;
  l->batch = x->shape[l->time_major ? 1 : 0];
  l->time = x->shape[l->time_major ? 0 : 1];
  l->n_in = x->shape[2];
  l->n_cell = wf->shape[0];
  if (l->batch < 1 || l->time < 1 || l->n_in < 1 || l->n_cell < 1)
    return failed(c, "every size must be positive");
  /* Each byte pass of a 16x8 layer sums taps * 255 * 128 in int32. */
  if (l->act == TE_I16 && (l->n_in > 65536 || l->n_cell > 65536))
    return failed(c, "16x8 LSTM layers of more than 65536 inputs or cells are not supported");
  return 1;
}

/* ---- parameters (TFLM's Prepare) ---------------------------------------- */

static int make_qmul(tfl_ctx_t *c, double real, qmul_t *q) {
  int s;
  if (tfl_quantize_multiplier(real, &q->m, &s) && tfl_tosa_shift(s, &q->shift)) return 1;
  tfl_fail(c, "integer LSTM scale ratio %g is out of range", real);
  return 0;
}

/* GetQuantizedConvolutionMultipler: the scales multiply in float, to the
 * gate's int16 scale 2^-12.  A 16x8 gate's int64 accumulator takes the
 * int64 MultiplyByQuantizedMultiplier's 16-bit multiplier. */
static int gate_qmul(tfl_ctx_t *c, const ilstm_t *l, const tfl_tensor_t *in,
                     const tfl_tensor_t *w, qmul_t *q) {
  float product = tfl_scale(in) * tfl_scale(w);
  double real = (double)product / 0x1p-12;
  if (l->act == TE_I8) return make_qmul(c, real, q);
  if (tfl_reduced_multiplier(real, &q->m, &q->shift)) return 1;
  tfl_fail(c, "integer LSTM scale ratio %g is out of range", real);
  return 0;
}

static int prepare(tfl_ctx_t *c, ilstm_t *l, float cell_clip) {
  const tfl_tensor_t *x = tfl_in(c, IN_X), *h = tfl_in(c, IN_H);
  double cell_scale = tfl_scale(tfl_in(c, IN_C)), h_scale = tfl_scale(h);
  l->x_zp = tfl_zero_point(x);
  l->h_zp = tfl_zero_point(h);
  /* CheckedLog2 in float; TFLM ignores whether it was a power of two. */
  l->cpow = (int)roundf(logf((float)cell_scale) * (1.0f / logf(2.0f)));
  if (l->cpow > 2 || l->cpow < -40)
    return failed(c, "integer LSTM cell state scale is out of range");
  if (cell_clip > 0.0f) {
    double q = fmin(fmax((double)cell_clip / cell_scale, -32768.0), 32767.0);
    l->qclip = (int32_t)q;
  }
  for (int k = 0; k < 4; ++k)
    if (!gate_qmul(c, l, x, tfl_in(c, IN_W + (uint32_t)PACK[k]), &l->x_mul[k]) ||
        !gate_qmul(c, l, h, tfl_in(c, IN_R + (uint32_t)PACK[k]), &l->h_mul[k]))
      return 0;
  /* CreateInterGateMulParams, in double; products are Q0.15 x Q0.15. */
  return make_qmul(c, 0x1p-15 * cell_scale / cell_scale, &l->fc_mul) &&
         make_qmul(c, 0x1p-30 / cell_scale, &l->ig_mul) &&
         make_qmul(c, 0x1p-30 / h_scale, &l->hidden_mul);
}

/* ---- constants --------------------------------------------------------- */

/* The gates' [n_cell, k] int8 matrices side by side in PACK order.  For
 * int8 activations transposed, [1, k, 4 n_cell], TOSA's matmul layout; for
 * int16 as they are, [4 n_cell, 1, 1, k], the 1x1 convolution filter the
 * 16x8 byte passes take. */
static te_value_t pack_weights(tfl_ctx_t *c, const ilstm_t *l, uint32_t first, int64_t k) {
  int64_t rows = l->n_cell, width = 4 * rows;
  int8_t *p = tinyml__alloc(c->allocator, (size_t)(k * width), 16);
  if (!p) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  int matmul_layout = l->act == TE_I8;
  for (int g = 0; g < 4; ++g) {
    const uint8_t *w = tfl_in(c, first + (uint32_t)PACK[g])->data;
    for (int64_t r = 0, col = g * rows; r < rows; ++r, ++col)
      for (int64_t j = 0; j < k; ++j)
        p[matmul_layout ? j * width + col : col * k + j] = (int8_t)w[r * k + j];
  }
  te_type_t t = matmul_layout ? te_type(TE_I8, 3, (int64_t[3]){1, k, width})
                              : te_type(TE_I8, 4, (int64_t[4]){width, 1, 1, k});
  te_value_t v = te_const(&c->e, &t, p);
  tinyml__free(c->allocator, p);
  return v;
}

/* The biases in PACK order: int32, or int64 for int16 activations. */
static te_value_t packed_bias(tfl_ctx_t *c, const ilstm_t *l) {
  int64_t width = 4 * l->n_cell;
  size_t size = l->act == TE_I8 ? 4 : 8, gate = (size_t)l->n_cell * size;
  uint8_t *p = tinyml__alloc(c->allocator, (size_t)width * size, 16);
  if (!p) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  for (int g = 0; g < 4; ++g)
    memcpy(p + (size_t)g * gate, tfl_in(c, IN_BIAS + (uint32_t)PACK[g])->data, gate);
  te_type_t t = te_type(l->act == TE_I8 ? TE_I32 : TE_I64, 1, &width);
  te_value_t v = te_const(&c->e, &t, p);
  tinyml__free(c->allocator, p);
  return v;
}

/* Per channel, [4 n_cell]: each gate's multiplier over its columns. */
static scaler_t gate_scaler(tfl_ctx_t *c, const ilstm_t *l, const qmul_t *q) {
  int64_t width = 4 * l->n_cell;
  int32_t *m = tinyml__alloc(c->allocator, (size_t)width * sizeof(int32_t), 8);
  int8_t *s = tinyml__alloc(c->allocator, (size_t)width, 8);
  scaler_t k = {{0}, {0}};
  if (m && s) {
    for (int64_t i = 0; i < width; ++i) m[i] = q[i / l->n_cell].m, s[i] = q[i / l->n_cell].shift;
    te_rescale_params(&c->e, m, s, (uint32_t)width, &k.m, &k.s);
  } else {
    tfl_out_of_memory(c);
  }
  tinyml__free(c->allocator, m);
  tinyml__free(c->allocator, s);
  return k;
}

static scaler_t scaler(tfl_ctx_t *c, const qmul_t *q) {
  scaler_t k;
  te_rescale_params(&c->e, &q->m, &q->shift, 1, &k.m, &k.s);
  return k;
}

static int make_constants(tfl_ctx_t *c, ilstm_t *l) {
  l->rw = pack_weights(c, l, IN_R, l->n_cell);
  l->x_gates = gate_scaler(c, l, l->x_mul);
  l->h_gates = gate_scaler(c, l, l->h_mul);
  l->fc = scaler(c, &l->fc_mul);
  l->ig = scaler(c, &l->ig_mul);
  l->hidden = scaler(c, &l->hidden_mul);
  l->sigmoid = tfl_q16_sigmoid_lut(c);
  l->tanh = tfl_q16_tanh_lut(c);
  return !c->error;
}

/* ---- integer helpers ---------------------------------------------------- */

static te_value_t k32(tfl_ctx_t *c, int32_t v) {
  te_type_t t = te_type(TE_I32, 2, (int64_t[2]){1, 1});
  return te_splat_int(&c->e, &t, v);
}

static te_value_t add(tfl_ctx_t *c, te_value_t a, te_value_t b) {
  return te_binary(&c->e, "tosa.add", a, b);
}

static te_value_t shr(tfl_ctx_t *c, te_value_t x, int n) {
  return te_binary_props(&c->e, "tosa.arithmetic_right_shift", x, k32(c, n), "round = false");
}

static te_value_t sat16(tfl_ctx_t *c, te_value_t x) {
  return te_clamp_int(&c->e, x, -32768, 32767);
}

/* MBQM(x, k) + zp saturated to `elem` (int16, or int8): per tensor. */
static te_value_t rescale(tfl_ctx_t *c, te_value_t x, scaler_t k, te_elem_t elem, int32_t zp) {
  return te_rescale_with(&c->e, x, elem, k.m, k.s, 0, zp, 1, 0, 0);
}

/* [rows, k] int8 (zero point zp) x packed [1, k, width] -> [rows, width] i32. */
static te_value_t matmul(tfl_ctx_t *c, te_value_t a, int32_t zp, te_value_t w) {
  int64_t k = w.type.dims[1], rows = te_numel(&a.type) / k, width = w.type.dims[2];
  te_value_t ops[4] = {te_reshape(&c->e, a, 3, (int64_t[3]){1, rows, k}), w,
                       te_scalar_int(&c->e, TE_I8, zp), te_scalar_int(&c->e, TE_I8, 0)};
  te_type_t t = te_type(TE_I32, 3, (int64_t[3]){1, rows, width});
  te_value_t y = te_op(&c->e, "tosa.matmul", ops, 4, NULL, &t);
  return te_reshape(&c->e, y, 2, (int64_t[2]){rows, width});
}

/* [rows, k] int16 x packed [width, 1, 1, k] -> [rows, width] i64, TFLM's
 * int64 accumulator exactly: a 1x1 convolution over the high and the low
 * bytes (tfl_lower_int16.c), joined as 256 * hi + lo. */
static te_value_t matmul_16x8(tfl_ctx_t *c, te_value_t a, te_value_t w) {
  static const char props[] = "acc_type = i32, dilation = array<i64: 1, 1>, "
                              "pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>";
  int64_t k = w.type.dims[3], rows = te_numel(&a.type) / k, width = w.type.dims[0];
  te_type_t at = te_type(TE_I32, 4, (int64_t[4]){rows, 1, 1, width});
  te_value_t hi, lo;
  tfl_split_passes(c, "tosa.conv2d", te_reshape(&c->e, a, 4, (int64_t[4]){rows, 1, 1, k}), w, props,
               &at, &hi, &lo);
  te_value_t acc = te_binary(&c->e, "tosa.logical_left_shift", te_cast(&c->e, hi, TE_I64),
                             te_scalar_int(&c->e, TE_I64, 8));
  acc = add(c, acc, te_cast(&c->e, lo, TE_I64));
  return te_reshape(&c->e, acc, 2, (int64_t[2]){rows, width});
}

/* The gates' fully-connected layers over [rows, k] activations a (zero
 * point zp), plus `bias` unless its id is 0: the [rows, 4 n_cell] int16
 * gate terms, in i32.  int8 accumulates in int32 and rescales with double
 * rounding; 16x8 in int64, with one rounding. */
static te_value_t gate_terms(tfl_ctx_t *c, const ilstm_t *l, te_value_t a, int32_t zp,
                             te_value_t w, te_value_t bias, scaler_t k) {
  int narrow = l->act == TE_I8;
  te_value_t acc = narrow ? matmul(c, a, zp, w) : matmul_16x8(c, a, w);
  if (bias.id) acc = add(c, acc, bias);
  te_value_t y = te_rescale_with(&c->e, acc, TE_I16, k.m, k.s, 0, 0, narrow, 0, 0);
  return te_cast(&c->e, y, TE_I32);
}

/* Packed gates [first, first + n) of a [batch, 4 n_cell] value. */
static te_value_t gates(tfl_ctx_t *c, const ilstm_t *l, te_value_t v, int first, int n) {
  return te_slice(&c->e, v, (int64_t[2]){0, first * l->n_cell}, (int64_t[2]){l->batch, n * l->n_cell});
}

/* ---- the gates' inputs to TFLM's int16 Logistic and Tanh (tfl_q16_act.h) --- */

/* The tanh input for a value of scale 2^(cpow): Tanh16's multiplier and
 * left shift from lstm_eval's Tanh(cell_state_scale_power). */
static te_value_t tanh_input(tfl_ctx_t *c, te_value_t v, int cpow) {
  int left = 12 + cpow;
  if (left >= 0) return te_mul(&c->e, v, k32(c, 3 << left), 0);
  te_value_t v3 = te_mul(&c->e, v, k32(c, 3), 0);
  return shr(c, add(c, v3, k32(c, 1 << (-left - 1))), -left);
}

/* ---- the computation --------------------------------------------------- */

/* The int16 input terms of every step, bias included, in i32 and shaped
 * like the input: [batch, time, 4 n_cell] or time major. */
static te_value_t input_terms(tfl_ctx_t *c, const ilstm_t *l) {
  te_value_t w = pack_weights(c, l, IN_W, l->n_in), x = tfl_value_in(c, IN_X);
  te_value_t bias = packed_bias(c, l);
  if (!w.id || !x.id || !bias.id) return (te_value_t){0};
  te_value_t y = gate_terms(c, l, x, l->x_zp, w, bias, l->x_gates);
  int64_t dims[3] = {x.type.dims[0], x.type.dims[1], 4 * l->n_cell};
  return c->error ? (te_value_t){0} : te_reshape(&c->e, y, 3, dims);
}

/* MulElementwise of two Q0.15 (or cell) values to int16, in i32. */
static te_value_t mul16(tfl_ctx_t *c, te_value_t a, te_value_t b, scaler_t k) {
  return te_cast(&c->e, rescale(c, te_mul(&c->e, a, b, 0), k, TE_I16, 0), TE_I32);
}

/* One time step: h ([batch, n_cell], int8 or int16) and cell (i32) become
 * the next. */
static void step(tfl_ctx_t *c, const void *layer, te_value_t terms, te_value_t *h,
                 te_value_t *cell) {
  const ilstm_t *l = layer;
  te_value_t r = gate_terms(c, l, *h, l->h_zp, l->rw, (te_value_t){0}, l->h_gates);
  te_value_t p = sat16(c, add(c, terms, r));
  te_value_t sig = tfl_q16_sigmoid(c, &l->sigmoid, te_mul(&c->e, gates(c, l, p, 0, 3), k32(c, 3), 0));
  te_value_t g = tfl_q16_tanh(c, &l->tanh, tanh_input(c, gates(c, l, p, 3, 1), -12));
  te_value_t i = gates(c, l, sig, 0, 1), f = gates(c, l, sig, 1, 1), o = gates(c, l, sig, 2, 1);
  te_value_t cn = sat16(c, add(c, mul16(c, f, *cell, l->fc), mul16(c, i, g, l->ig)));
  if (l->qclip > 0) cn = te_clamp_int(&c->e, cn, -l->qclip, l->qclip);
  te_value_t tc = tfl_q16_tanh(c, &l->tanh, tanh_input(c, cn, l->cpow));
  *h = rescale(c, te_mul(&c->e, tc, o, 0), l->hidden, l->act, l->h_zp);
  *cell = cn;
}

static int read_lstm(tfl_ctx_t *c, ilstm_t *l) {
  float cell_clip = 0.0f;
  return read_options(c, l, &cell_clip) && check_variant(c) && read_sizes(c, l) &&
         check_gates(c, l) && check_io(c, l) && prepare(c, l, cell_clip);
}

tinyml_status_t tfl_lower_sequence_lstm_int(tfl_ctx_t *c) {
  ilstm_t l;
  memset(&l, 0, sizeof l);
  if (!read_lstm(c, &l) || !make_constants(c, &l)) return c->error;
  te_value_t terms = input_terms(c, &l);
  te_value_t h = tfl_value_in(c, IN_H), cell = tfl_value_in(c, IN_C);
  if (c->error) return c->error;
  h = te_reshape(&c->e, h, 2, (int64_t[2]){l.batch, l.n_cell});
  cell = te_cast(&c->e, te_reshape(&c->e, cell, 2, (int64_t[2]){l.batch, l.n_cell}), TE_I32);
  const tfl_sequence_t seq = {l.batch, l.time, l.time_major};
  te_value_t y = tfl_sequence_unroll(c, &seq, terms, step, &l, &h, &cell);
  if (!y.id) return c->error;
  tfl_set_state(c, IN_H, h);
  tfl_set_state(c, IN_C, te_cast(&c->e, cell, TE_I16));
  return tfl_set_out(c, 0, y);
}
