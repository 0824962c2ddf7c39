/* WHILE, unrolled.  Compiled code runs a fixed schedule with no loops
 * between dispatches, so a WHILE is lowered as its body inlined once per
 * trip, which needs the trip count at compile time.  Converted loops
 * (tf.while_loop, Keras RNNs) count: `i < N`, often `&& step < max`, each
 * counter advanced by a constant.  So the trip count is found by running
 * the loop at import time on the values a small evaluator can compute
 * (scalar-sized INT32/INT64/FLOAT32/BOOL constants through ADD, SUB, MUL,
 * comparisons, logical ops, casts and reshapes); data-carrying values stay
 * unknown and the body's operators on them are inlined, not evaluated.
 * A condition that depends on an unknown value (a model input, data) is
 * not unrolled but kept a loop (tfl_lower_while_loop.c).  Refused by name:
 * more than TFL_WHILE_MAX_TRIPS trips, and a body the inliner cannot take
 * (state, nested control flow, an unsupported operator). */
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "tfl_lower.h"

/* The body is lowered once per trip: a model must not make the compiler
 * unroll without bound (max_ops bounds the inlined operators as well). */
#define TFL_WHILE_MAX_TRIPS 1024
/* Elements of a value the evaluator computes: counters and bounds are
 * scalars; anything larger is data and stays unknown. */
#define EV_MAX 16
/* run_trips' answer when the condition reads data: the loop stays a loop. */
#define TRIPS_AT_RUN_TIME UINT32_MAX

enum {
  ADD = 0, MUL = 18, RESHAPE = 22, SUB = 41, SQUEEZE = 43, CAST = 53, LESS = 58,
  GREATER = 61, GREATER_EQUAL = 62, LESS_EQUAL = 63, EXPAND_DIMS = 70, EQUAL = 71,
  NOT_EQUAL = 72, LOGICAL_OR = 84, LOGICAL_AND = 86, LOGICAL_NOT = 87, WHILE_OPTIONS = 93,
};

/* A value known at compile time (known = 0: data, or not computable). */
typedef struct ev {
  uint8_t known;
  int32_t type;      /* TFL_INT32, TFL_INT64, TFL_FLOAT32 or TFL_BOOL */
  uint32_t n;
  int64_t i[EV_MAX]; /* INT32, INT64, BOOL (0 or 1) */
  float f[EV_MAX];   /* FLOAT32 */
} ev_t;

static uint32_t ev_elem_size(int32_t type) {
  switch (type) {
    case TFL_INT32: case TFL_FLOAT32: return 4;
    case TFL_INT64: return 8;
    case TFL_BOOL: return 1;
    default: return 0;
  }
}

/* A constant tensor's value, if small and of a type the evaluator takes. */
static void ev_const(const tfl_tensor_t *t, ev_t *v) {
  uint32_t size = ev_elem_size(t->type);
  int64_t n = tfl_numel(t);
  v->known = 0;
  if (!t->data || t->is_variable || !size || n < 1 || n > EV_MAX ||
      t->data_size != (size_t)n * size)
    return;
  v->type = t->type;
  v->n = (uint32_t)n;
  for (uint32_t k = 0; k < v->n; ++k) {
    const uint8_t *p = t->data + (size_t)k * size;
    int32_t i32;
    switch (t->type) {
      case TFL_INT32: memcpy(&i32, p, 4); v->i[k] = i32; break;
      case TFL_INT64: memcpy(&v->i[k], p, 8); break;
      case TFL_BOOL: v->i[k] = p[0] != 0; break;
      default: memcpy(&v->f[k], p, 4); break;
    }
  }
  v->known = 1;
}

/* Integer arithmetic wraps as TFLite's int32/int64 kernels do. */
static int64_t ev_wrap(int32_t type, uint64_t r) {
  return type == TFL_INT32 ? (int64_t)(int32_t)(uint32_t)r : (int64_t)r;
}

static int ev_arith(int code, const ev_t *a, uint32_t ka, const ev_t *b, uint32_t kb,
                    ev_t *out, uint32_t k) {
  if (a->type == TFL_BOOL) return 0;
  if (a->type == TFL_FLOAT32) {
    float x = a->f[ka], y = b->f[kb];
    out->f[k] = code == ADD ? x + y : code == SUB ? x - y : x * y;
  } else {
    uint64_t x = (uint64_t)a->i[ka], y = (uint64_t)b->i[kb];
    out->i[k] = ev_wrap(a->type, code == ADD ? x + y : code == SUB ? x - y : x * y);
  }
  return 1;
}

static int ev_compare(int code, const ev_t *a, uint32_t ka, const ev_t *b, uint32_t kb) {
  int lt, eq;
  if (a->type == TFL_FLOAT32) {
    lt = a->f[ka] < b->f[kb];
    eq = a->f[ka] == b->f[kb];
  } else {
    lt = a->i[ka] < b->i[kb];
    eq = a->i[ka] == b->i[kb];
  }
  switch (code) {
    case LESS: return lt;
    case LESS_EQUAL: return lt || eq;
    case GREATER: return a->type == TFL_FLOAT32 ? a->f[ka] > b->f[kb] : !lt && !eq;
    case GREATER_EQUAL: return a->type == TFL_FLOAT32 ? a->f[ka] >= b->f[kb] : !lt;
    case EQUAL: return eq;
    default: return !eq; /* NOT_EQUAL */
  }
}

/* out = a <code> b with TFLite's broadcast of a single element; 0 if the
 * operator or its types are not the evaluator's. */
static int ev_binary(int code, const ev_t *a, const ev_t *b, int32_t out_type, ev_t *out) {
  uint32_t n = a->n > b->n ? a->n : b->n;
  if (a->type != b->type || (a->n != n && a->n != 1) || (b->n != n && b->n != 1)) return 0;
  int arith = code == ADD || code == SUB || code == MUL;
  int logical = code == LOGICAL_AND || code == LOGICAL_OR;
  if (arith ? out_type != a->type : out_type != TFL_BOOL) return 0;
  if (logical && a->type != TFL_BOOL) return 0;
  out->type = out_type;
  out->n = n;
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t ka = a->n == 1 ? 0 : k, kb = b->n == 1 ? 0 : k;
    if (arith) {
      if (!ev_arith(code, a, ka, b, kb, out, k)) return 0;
    } else if (logical) {
      out->i[k] = code == LOGICAL_AND ? a->i[ka] && b->i[kb] : a->i[ka] || b->i[kb];
    } else {
      out->i[k] = ev_compare(code, a, ka, b, kb);
    }
  }
  return 1;
}

/* CAST as TFLite's static_cast: float to integer truncates (an
 * out-of-range float is left unknown rather than guessed). */
static int ev_cast(const ev_t *a, int32_t out_type, ev_t *out) {
  if (!ev_elem_size(out_type)) return 0;
  out->type = out_type;
  out->n = a->n;
  for (uint32_t k = 0; k < a->n; ++k) {
    if (a->type == TFL_FLOAT32 && out_type == TFL_FLOAT32) {
      out->f[k] = a->f[k];
    } else if (a->type == TFL_FLOAT32) {
      float x = a->f[k];
      if (out_type == TFL_BOOL) {
        out->i[k] = x != 0.0f;
        continue;
      }
      float lim = out_type == TFL_INT32 ? 2147483648.0f : 9223372036854775808.0f;
      if (!(x > -lim - 1.0f && x < lim)) return 0;
      out->i[k] = (int64_t)x;
    } else if (out_type == TFL_FLOAT32) {
      out->f[k] = (float)a->i[k];
    } else {
      out->i[k] = out_type == TFL_BOOL ? a->i[k] != 0 : ev_wrap(out_type, (uint64_t)a->i[k]);
    }
  }
  return 1;
}

static int ev_unary(int code, const ev_t *a, int32_t out_type, ev_t *out) {
  switch (code) {
    case LOGICAL_NOT:
      if (a->type != TFL_BOOL || out_type != TFL_BOOL) return 0;
      *out = *a;
      for (uint32_t k = 0; k < a->n; ++k) out->i[k] = !a->i[k];
      return 1;
    case RESHAPE: case SQUEEZE: case EXPAND_DIMS: /* the values pass through */
      if (a->type != out_type) return 0;
      *out = *a;
      return 1;
    case CAST:
      return ev_cast(a, out_type, out);
    default:
      return 0;
  }
}

static int is_binary(int code) {
  switch (code) {
    case ADD: case SUB: case MUL: case LESS: case LESS_EQUAL: case GREATER: case GREATER_EQUAL:
    case EQUAL: case NOT_EQUAL: case LOGICAL_AND: case LOGICAL_OR:
      return 1;
    default:
      return 0;
  }
}

/* Evaluates operator op of g if all the inputs it reads are known. */
static void ev_operator(const tfl_model_t *g, const tfl_operator_t *op, ev_t *vals) {
  int code = op->builtin_code, binary = is_binary(code);
  uint32_t reads = binary ? 2 : 1;
  if (op->custom_code || op->output_count != 1 || op->input_count < reads) return;
  for (uint32_t k = 0; k < reads; ++k)
    if (op->inputs[k] < 0 || !vals[op->inputs[k]].known) return;
  int bad = 0;
  if ((code == ADD || code == SUB || code == MUL) &&
      tfl_table_i8(&op->options, 0, 0, &bad) != 0)
    return; /* a fused activation: not a counter */
  const tfl_tensor_t *t = &g->tensors[op->outputs[0]];
  ev_t r = {0};
  const ev_t *a = &vals[op->inputs[0]];
  int ok = binary ? ev_binary(code, a, &vals[op->inputs[1]], t->type, &r)
                  : ev_unary(code, a, t->type, &r);
  if (ok && !bad && tfl_numel(t) == (int64_t)r.n) {
    r.known = 1;
    vals[op->outputs[0]] = r;
  }
}

/* Runs subgraph g on `ins` (one per input): vals[t] is what is known of
 * tensor t afterwards. */
static void ev_subgraph(const tfl_model_t *g, const ev_t *ins, ev_t *vals) {
  for (uint32_t t = 0; t < g->tensor_count; ++t) ev_const(&g->tensors[t], &vals[t]);
  for (uint32_t i = 0; i < g->input_count; ++i) vals[g->inputs[i]] = ins[i];
  for (uint32_t j = 0; j < g->operator_count; ++j) {
    const tfl_operator_t *op = &g->operators[j];
    for (uint32_t k = 0; k < op->output_count; ++k) vals[op->outputs[k]].known = 0;
    ev_operator(g, op, vals);
  }
}

/* Runs the loop on what is known until the condition is false. */
static tinyml_status_t run_trips(tfl_ctx_t *c, const tfl_model_t *cond, const tfl_model_t *body,
                                 ev_t *state, ev_t *cv, ev_t *bv, uint32_t *out_trips) {
  for (uint32_t trips = 0;; ++trips) {
    ev_subgraph(cond, state, cv);
    const ev_t *go = &cv[cond->outputs[0]];
    if (!go->known) {
      *out_trips = TRIPS_AT_RUN_TIME;
      return TINYML_OK;
    }
    if (!go->i[0]) {
      *out_trips = trips;
      return TINYML_OK;
    }
    if (trips == TFL_WHILE_MAX_TRIPS)
      return tfl_fail(c, "the loop runs more than %d trips, the most unrolled (its body is "
                      "inlined once per trip)", TFL_WHILE_MAX_TRIPS);
    ev_subgraph(body, state, bv);
    for (uint32_t i = 0; i < body->output_count; ++i) state[i] = bv[body->outputs[i]];
  }
}

static tinyml_status_t trip_count(tfl_ctx_t *c, const tfl_model_t *cond, const tfl_model_t *body,
                                  uint32_t *out_trips) {
  uint32_t n = c->op->input_count;
  ev_t *state = tinyml__calloc(c->allocator, n, sizeof(ev_t), 8);
  ev_t *cv = tinyml__calloc(c->allocator, cond->tensor_count + 1, sizeof(ev_t), 8);
  ev_t *bv = tinyml__calloc(c->allocator, body->tensor_count + 1, sizeof(ev_t), 8);
  tinyml_status_t st = TINYML_OK;
  if (!state || !cv || !bv) {
    tfl_out_of_memory(c);
    st = c->error;
  }
  for (uint32_t i = 0; !st && i < n; ++i) ev_const(tfl_in(c, i), &state[i]);
  if (!st) st = run_trips(c, cond, body, state, cv, bv, out_trips);
  tinyml__free(c->allocator, state);
  tinyml__free(c->allocator, cv);
  tinyml__free(c->allocator, bv);
  return st;
}

static int same_tensor_type(const tfl_tensor_t *a, const tfl_tensor_t *b) {
  return a && b && a->type == b->type && a->rank == b->rank &&
         memcmp(a->shape, b->shape, sizeof(int32_t) * a->rank) == 0 && tfl_quant_matches(a, b);
}

/* TFLite's while.cc lets shapes change across trips; an unrolled loop
 * needs every loop value to keep one type, quantisation and shape. */
static tinyml_status_t check_signature(tfl_ctx_t *c, const tfl_model_t *cond,
                                       const tfl_model_t *body) {
  uint32_t n = c->op->input_count;
  if (n == 0 || c->op->output_count != n || cond->input_count != n || body->input_count != n ||
      body->output_count != n || cond->output_count != 1)
    return tfl_fail(c, "%u inputs and %u outputs, condition subgraph %u has %u and %u, body "
                    "subgraph %u has %u and %u: they must agree (and the condition give one "
                    "value)", n, c->op->output_count, cond->subgraph, cond->input_count,
                    cond->output_count, body->subgraph, body->input_count, body->output_count);
  const tfl_tensor_t *go = &cond->tensors[cond->outputs[0]];
  if (go->type != TFL_BOOL || tfl_numel(go) != 1)
    return tfl_fail(c, "condition subgraph %u must give a single BOOL", cond->subgraph);
  for (uint32_t i = 0; i < n; ++i) {
    const tfl_tensor_t *in = tfl_in(c, i);
    if (!same_tensor_type(in, tfl_out(c, i)) ||
        !same_tensor_type(in, &cond->tensors[cond->inputs[i]]) ||
        !same_tensor_type(in, &body->tensors[body->inputs[i]]) ||
        !same_tensor_type(in, &body->tensors[body->outputs[i]]))
      return tfl_fail(c, "loop value %u changes type, quantisation or shape between the WHILE "
                      "and its subgraphs %u and %u", i, cond->subgraph, body->subgraph);
  }
  return TINYML_OK;
}

/* The body lowered `trips` times, each trip on the last one's outputs. */
static tinyml_status_t unroll(tfl_ctx_t *c, const tfl_model_t *body, uint32_t trips) {
  uint32_t n = c->op->input_count;
  te_value_t *cur = tinyml__calloc(c->allocator, n, sizeof(te_value_t), 8);
  te_value_t *next = tinyml__calloc(c->allocator, n, sizeof(te_value_t), 8);
  tinyml_status_t st = TINYML_OK;
  if (!cur || !next) {
    tfl_out_of_memory(c);
    st = c->error;
  }
  for (uint32_t i = 0; !st && i < n; ++i)
    if (!(cur[i] = tfl_value_in(c, i)).id) st = c->error;
  for (uint32_t t = 0; !st && t < trips; ++t) {
    st = tfl_lower_subgraph(c, body, cur, next);
    te_value_t *swap = cur;
    cur = next;
    next = swap;
  }
  for (uint32_t i = 0; !st && i < n; ++i) st = tfl_set_out(c, i, cur[i]);
  tinyml__free(c->allocator, cur);
  tinyml__free(c->allocator, next);
  return st;
}

static tinyml_status_t read_sub(tfl_ctx_t *c, int32_t index, const char *what,
                                tfl_model_t **out) {
  if (index <= 0 || (uint32_t)index >= c->model->subgraph_count)
    return tfl_fail(c, "%s_subgraph_index %d is not another subgraph (the model has %u)", what,
                    index, c->model->subgraph_count);
  return tfl_read_subgraph(c->bytes, c->size, (uint32_t)index, c->allocator, out);
}

tinyml_status_t tfl_lower_while(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, WHILE_OPTIONS);
  if (!o) return c->error;
  int bad = 0;
  int32_t cond_index = tfl_table_i32(o, 0, 0, &bad), body_index = tfl_table_i32(o, 1, 0, &bad);
  if (bad) return tfl_fail(c, "malformed WhileOptions");
  tfl_model_t *cond = NULL, *body = NULL;
  uint32_t trips = 0;
  tinyml_status_t st = read_sub(c, cond_index, "cond", &cond);
  if (!st) st = read_sub(c, body_index, "body", &body);
  if (!st) st = check_signature(c, cond, body);
  if (!st) st = trip_count(c, cond, body, &trips);
  if (!st && trips == TRIPS_AT_RUN_TIME) st = tfl_lower_while_loop(c, cond, body);
  else if (!st) st = unroll(c, body, trips);
  tfl_model_free(cond, c->allocator);
  tfl_model_free(body, c->allocator);
  return st;
}
