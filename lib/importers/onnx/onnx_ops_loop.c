/* ONNX lowerings: Loop and Scan, unrolled at compile time (as the TFLite
 * importer unrolls a WHILE whose trip count folds).  Each step lowers the
 * body graph once more, its inputs bound to the previous step's results,
 * then drops the body's values (onnx_pop_values) so the next step can
 * define the same names; run-time results stay valid, being SSA values of
 * the one function.  The number of steps must be known at compile time:
 * Loop's M and condition (the body's too) must fold; Scan's come from
 * static shapes.  At most kMaxSteps steps, as the recurrent layers.
 * Scan outputs are stacked on a new axis.  See onnx_lower.h. */
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "onnx_lower.h"
#include "onnx_seq.h"

enum { kMaxSteps = 1024 };

/* Owned copies of values, kept across steps. */
typedef struct held {
  onnx_value_t *v;
  uint32_t n, cap;
} held_t;

static void held_free(onnx_ctx_t *c, held_t *h) {
  for (uint32_t k = 0; k < h->n; ++k) tinyml__free(c->allocator, h->v[k].data);
  tinyml__free(c->allocator, h->v);
  memset(h, 0, sizeof *h);
}

/* Appends a copy of x (which may live in the value table). */
static int held_add(onnx_ctx_t *c, held_t *h, const onnx_value_t *x) {
  if (h->n == h->cap) {
    uint32_t cap = h->cap ? 2 * h->cap : 8;
    onnx_value_t *n = tinyml__calloc(c->allocator, cap, sizeof *n, 8);
    if (!n) return onnx_oom(c), 0;
    if (h->n) memcpy(n, h->v, h->n * sizeof *n);
    tinyml__free(c->allocator, h->v);
    h->v = n;
    h->cap = cap;
  }
  if (!onnx_value_copy(c, &h->v[h->n], x)) return 0;
  h->n++;
  return 1;
}

static const Onnx__GraphProto *body_of(onnx_ctx_t *c) {
  const Onnx__AttributeProto *a = onnx_attr(c, "body");
  if (!a || !a->g) onnx_fail(c, "attribute 'body' (a graph) is missing");
  return a ? a->g : NULL;
}

/* Binds body input `name` to a copy of x for this step. */
static int bind_input(onnx_ctx_t *c, const char *name, const onnx_value_t *x) {
  onnx_value_t copy;
  if (!name || !name[0]) return 1;
  if (!onnx_value_copy(c, &copy, x)) return 0;
  onnx_value_t *v = onnx_push_value(c, name);
  if (!v) return tinyml__free(c->allocator, copy.data), 0;
  copy.name = name;
  *v = copy;
  return 1;
}

/* One step: binds the body's inputs to ins[], lowers it, and replaces
 * `outs` with copies of its outputs. */
static tinyml_status_t step(onnx_ctx_t *c, const Onnx__GraphProto *g, const onnx_value_t *ins,
                            held_t *outs) {
  uint32_t mark = c->value_count;
  held_free(c, outs);
  for (size_t i = 0; i < g->n_input && !c->error; ++i) bind_input(c, g->input[i]->name, &ins[i]);
  if (!c->error) onnx_lower_graph(c, g);
  for (size_t j = 0; j < g->n_output && !c->error; ++j) {
    onnx_value_t *v = g->output[j]->name ? onnx_find(c, g->output[j]->name) : NULL;
    if (!v) onnx_fail(c, "body output '%s' is never computed", g->output[j]->name);
    else held_add(c, outs, v);
  }
  onnx_pop_values(c, mark);
  return c->error;
}

/* out = xs stacked along a new axis `axis` (normalised), in order, or
 * reversed.  Owned data when constant. */
static int stack(onnx_ctx_t *c, held_t *xs, int64_t axis_attr, int reverse, onnx_value_t *out) {
  if (!xs->n) return onnx_fail(c, "a scan output would be empty (no steps run)"), 0;
  const onnx_value_t *x0 = &xs->v[0];
  int32_t axis = onnx_axis(axis_attr, x0->rank + 1);
  if (x0->dtype == ONNX_SEQUENCE || axis < 0 || x0->rank + 1 > TE_MAX_RANK)
    return onnx_fail(c, "a scan output is not a tensor, or its axis is out of range"), 0;
  onnx_value_t *vs = tinyml__calloc(c->allocator, xs->n, sizeof *vs, 8);
  if (!vs) return onnx_oom(c), 0;
  for (uint32_t k = 0; k < xs->n && !c->error; ++k) {
    vs[k] = xs->v[reverse ? xs->n - 1 - k : k];
    onnx_view_unsqueeze(c, &vs[k], axis);
  }
  int ok = !c->error && onnx_view_concat(c, vs, xs->n, axis, out);
  tinyml__free(c->allocator, vs);
  return ok;
}

/* ---- Loop ---------------------------------------------------------------- */

/* A constant scalar of input i: 1 when found, 0 when absent, -1 (error
 * recorded) when only known at run time. */
static int loop_const(onnx_ctx_t *c, uint32_t i, int64_t *out) {
  onnx_value_t *v = onnx_input(c, i);
  if (!v) return 0;
  if (onnx_numel(v->rank, v->dims) == 1 && v->dtype == ONNX_BOOL && v->data) {
    *out = ((const uint8_t *)v->data)[0] != 0;
    return 1;
  }
  if (onnx_numel(v->rank, v->dims) == 1 && onnx_const_ints(c, i, out, 1) == 1) return 1;
  onnx_fail(c, "%s is only known at run time; a Loop is unrolled at compile time",
            i == 0 ? "the trip count M" : "the condition");
  return -1;
}

/* The body's condition output, which must fold; -1 otherwise. */
static int body_cond(onnx_ctx_t *c, const onnx_value_t *v) {
  if (v->dtype != ONNX_BOOL || !v->data || onnx_numel(v->rank, v->dims) != 1) {
    onnx_fail(c, "the body's condition output is only known at run time; a Loop is "
                 "unrolled at compile time");
    return -1;
  }
  return ((const uint8_t *)v->data)[0] != 0;
}

typedef struct loop_state {
  const Onnx__GraphProto *g;
  uint32_t carried, scans;
  onnx_value_t *ins;  /* iteration, cond, carried... (owned) */
  held_t outs, *scan;
} loop_state_t;

/* Runs the steps; carried values end in s->ins[2..]. */
static tinyml_status_t loop_run(onnx_ctx_t *c, loop_state_t *s, int64_t trips, int has_m,
                                int cond) {
  for (int64_t it = 0; cond && (!has_m || it < trips); ++it) {
    if (it >= kMaxSteps)
      return onnx_fail(c, "more than %d steps; longer loops are not unrolled", kMaxSteps);
    int64_t iter = it;
    uint8_t cv = 1;
    tinyml__free(c->allocator, s->ins[0].data);
    tinyml__free(c->allocator, s->ins[1].data);
    if (!onnx_value_copy(c, &s->ins[0], &(onnx_value_t){.name = "", .dtype = ONNX_INT64, .data = &iter}) ||
        !onnx_value_copy(c, &s->ins[1], &(onnx_value_t){.name = "", .dtype = ONNX_BOOL, .data = &cv}))
      return c->error;
    TINYML_RETURN_IF_ERROR(step(c, s->g, s->ins, &s->outs));
    if ((cond = body_cond(c, &s->outs.v[0])) < 0) return c->error;
    for (uint32_t k = 0; k < s->carried; ++k) {
      tinyml__free(c->allocator, s->ins[2 + k].data);
      s->ins[2 + k] = s->outs.v[1 + k];
      s->outs.v[1 + k].data = NULL; /* moved */
    }
    for (uint32_t k = 0; k < s->scans && !c->error; ++k)
      held_add(c, &s->scan[k], &s->outs.v[1 + s->carried + k]);
  }
  return c->error;
}

static tinyml_status_t loop_outputs(onnx_ctx_t *c, loop_state_t *s) {
  for (uint32_t k = 0; k < s->carried && !c->error; ++k) onnx_bind_out(c, k, &s->ins[2 + k]);
  for (uint32_t k = 0; k < s->scans && !c->error; ++k) {
    if (s->carried + k >= onnx_output_count(c)) break;
    onnx_value_t out = {0};
    if (stack(c, &s->scan[k], 0, 0, &out)) onnx_bind_out(c, s->carried + k, &out);
    tinyml__free(c->allocator, out.data);
  }
  return c->error;
}

/* The Loop's initial carried values, copied into s->ins[2..]; an absent
 * one is an empty optional. */
static int loop_initial(onnx_ctx_t *c, loop_state_t *s) {
  for (uint32_t k = 0; k < s->carried; ++k) {
    onnx_value_t *x = onnx_input(c, 2 + k);
    if (x && !onnx_value_copy(c, &s->ins[2 + k], x)) return 0;
    if (x) continue;
    onnx_seq_hdr_t none = {.bytes = sizeof none, .none = 1};
    onnx_value_t v = {.name = "", .dtype = ONNX_SEQUENCE, .data = &none};
    if (!onnx_value_copy(c, &s->ins[2 + k], &v)) return 0;
  }
  return 1;
}

static tinyml_status_t lower_loop(onnx_ctx_t *c) {
  loop_state_t s = {.g = body_of(c)};
  if (!s.g) return c->error;
  uint32_t n_in = onnx_input_count(c);
  if (n_in < 2 || s.g->n_input != n_in || s.g->n_output < n_in - 1)
    return onnx_fail(c, "the body's inputs and outputs do not match the Loop's");
  s.carried = n_in - 2;
  s.scans = (uint32_t)s.g->n_output - 1 - s.carried;
  int64_t trips = 0, cond = 1;
  int has_m = loop_const(c, 0, &trips), has_cond = has_m < 0 ? 0 : loop_const(c, 1, &cond);
  if (has_m < 0 || has_cond < 0) return c->error;
  s.ins = tinyml__calloc(c->allocator, n_in, sizeof *s.ins, 8);
  s.scan = tinyml__calloc(c->allocator, s.scans + 1, sizeof *s.scan, 8);
  if (!s.ins || !s.scan) onnx_oom(c);
  else if (loop_initial(c, &s) && !loop_run(c, &s, trips, has_m, (int)cond))
    loop_outputs(c, &s);
  for (uint32_t k = 0; s.ins && k < n_in; ++k) tinyml__free(c->allocator, s.ins[k].data);
  for (uint32_t k = 0; s.scan && k < s.scans; ++k) held_free(c, &s.scan[k]);
  held_free(c, &s.outs);
  tinyml__free(c->allocator, s.ins);
  tinyml__free(c->allocator, s.scan);
  return c->error;
}

/* ---- Scan ---------------------------------------------------------------- */

typedef struct scan_spec {
  const Onnx__GraphProto *g;
  uint32_t states, inputs, outputs;
  int64_t in_axis[64], in_rev[64], out_axis[64], out_rev[64];
} scan_spec_t;

/* Runs the steps over scan inputs xs[] (their axes normalised): states[]
 * (owned) end as the final states, outs[k] hold scan output k's steps. */
static tinyml_status_t scan_run(onnx_ctx_t *c, const scan_spec_t *sp, onnx_value_t *ins,
                                onnx_value_t *xs, held_t *outs) {
  int64_t len = xs[0].dims[sp->in_axis[0]];
  held_t res = {0};
  for (uint32_t j = 0; j < sp->inputs; ++j)
    if (xs[j].dims[sp->in_axis[j]] != len)
      return onnx_fail(c, "the scan inputs have different lengths");
  if (len > kMaxSteps) return onnx_fail(c, "more than %d steps; longer scans are not unrolled", kMaxSteps);
  for (int64_t t = 0; t < len && !c->error; ++t) {
    for (uint32_t j = 0; j < sp->inputs && !c->error; ++j) {
      int32_t axis = (int32_t)sp->in_axis[j];
      onnx_value_t *x = &ins[sp->states + j];
      tinyml__free(c->allocator, x->data);
      if (!onnx_view_slice(c, &xs[j], axis, sp->in_rev[j] ? len - 1 - t : t, 1, x)) break;
      int64_t dims[TE_MAX_RANK];
      memcpy(dims, x->dims, sizeof dims);
      memmove(&dims[axis], &dims[axis + 1], sizeof(int64_t) * (x->rank - (uint32_t)axis - 1));
      onnx_view_reshape(c, x, x->rank - 1, dims);
    }
    if (c->error || step(c, sp->g, ins, &res)) break;
    for (uint32_t k = 0; k < sp->states; ++k) {
      tinyml__free(c->allocator, ins[k].data);
      ins[k] = res.v[k];
      res.v[k].data = NULL; /* moved */
    }
    for (uint32_t k = 0; k < sp->outputs && !c->error; ++k)
      held_add(c, &outs[k], &res.v[sp->states + k]);
  }
  held_free(c, &res);
  return c->error;
}

/* Reads an INTS attribute of `n` values (default 0 each). */
static int scan_ints(onnx_ctx_t *c, const char *name, int64_t *out, uint32_t n) {
  memset(out, 0, sizeof(int64_t) * 64);
  int64_t got = onnx_attr_ints(c, name, out, 64);
  if (got >= 0 && got != n) return onnx_fail(c, "'%s' has %lld values, not %u", name, (long long)got, n), 0;
  return !c->error;
}

static int scan_spec(onnx_ctx_t *c, scan_spec_t *sp, uint32_t first) {
  memset(sp, 0, sizeof *sp);
  sp->g = body_of(c);
  if (!sp->g) return 0;
  int64_t m = onnx_attr_int(c, "num_scan_inputs", -1);
  uint32_t n_in = onnx_input_count(c) - first;
  if (m < 1 || m > n_in || m > 64 || sp->g->n_input != n_in || sp->g->n_output < (size_t)(n_in - m) ||
      sp->g->n_output - (size_t)(n_in - m) > 64)
    return onnx_fail(c, "num_scan_inputs or the body's inputs and outputs do not match the Scan"), 0;
  sp->inputs = (uint32_t)m;
  sp->states = n_in - sp->inputs;
  sp->outputs = (uint32_t)sp->g->n_output - sp->states;
  return 1;
}

/* Binds the final states and stacked scan outputs from `first` on. */
static tinyml_status_t scan_bind(onnx_ctx_t *c, const scan_spec_t *sp, onnx_value_t *states,
                                 held_t *outs) {
  for (uint32_t k = 0; k < sp->states && !c->error; ++k) onnx_bind_out(c, k, &states[k]);
  for (uint32_t k = 0; k < sp->outputs && !c->error; ++k) {
    onnx_value_t out = {0};
    if (stack(c, &outs[k], sp->out_axis[k], (int)sp->out_rev[k], &out))
      onnx_bind_out(c, sp->states + k, &out);
    tinyml__free(c->allocator, out.data);
  }
  return c->error;
}

static void scan_free(onnx_ctx_t *c, const scan_spec_t *sp, onnx_value_t *ins, held_t *outs) {
  for (uint32_t k = 0; ins && k < sp->states + sp->inputs; ++k) tinyml__free(c->allocator, ins[k].data);
  for (uint32_t k = 0; outs && k < sp->outputs; ++k) held_free(c, &outs[k]);
  tinyml__free(c->allocator, ins);
  tinyml__free(c->allocator, outs);
}

/* Scan-9 and later: any axes and directions, no batch. */
static tinyml_status_t lower_scan9(onnx_ctx_t *c) {
  scan_spec_t sp;
  if (!scan_spec(c, &sp, 0) || !scan_ints(c, "scan_input_axes", sp.in_axis, sp.inputs) ||
      !scan_ints(c, "scan_input_directions", sp.in_rev, sp.inputs) ||
      !scan_ints(c, "scan_output_axes", sp.out_axis, sp.outputs) ||
      !scan_ints(c, "scan_output_directions", sp.out_rev, sp.outputs))
    return c->error;
  onnx_value_t *ins = tinyml__calloc(c->allocator, sp.states + sp.inputs, sizeof *ins, 8);
  onnx_value_t xs[64];
  held_t *outs = tinyml__calloc(c->allocator, sp.outputs + 1, sizeof *outs, 8);
  if (!ins || !outs) onnx_oom(c);
  for (uint32_t k = 0; !c->error && k < sp.states + sp.inputs; ++k) {
    onnx_value_t *x = onnx_input(c, k);
    if (!x || x->dtype == ONNX_SEQUENCE) onnx_fail(c, "input %u is missing or not a tensor", k);
    else if (k < sp.states) onnx_value_copy(c, &ins[k], x);
    else if ((sp.in_axis[k - sp.states] = onnx_axis(sp.in_axis[k - sp.states], x->rank)) < 0)
      onnx_fail(c, "scan input %u's axis is out of range", k - sp.states);
    else xs[k - sp.states] = *x;
  }
  if (!c->error && !scan_run(c, &sp, ins, xs, outs)) scan_bind(c, &sp, ins, outs);
  scan_free(c, &sp, ins, outs);
  return c->error;
}

/* Scan-8: every input has a batch axis first, each batch item scanned on
 * its own along axis 1; outputs in step order.  sequence_lens, if given,
 * must be the full length for every item. */
static int scan8_lens_full(onnx_ctx_t *c, int64_t batch, int64_t len) {
  if (!onnx_input(c, 0)) return 1;
  int64_t lens[kMaxSteps];
  int64_t n = onnx_const_ints(c, 0, lens, kMaxSteps);
  if (n != batch) return onnx_fail(c, "sequence_lens must be constant, one per batch item"), 0;
  for (int64_t b = 0; b < n; ++b)
    if (lens[b] != len)
      return onnx_fail(c, "sequence_lens[%lld] = %lld is not the full length %lld: partial "
                          "sequences are not supported", (long long)b, (long long)lens[b],
                       (long long)len), 0;
  return 1;
}

/* Item b of input k (after sequence_lens), without the batch axis, into v. */
static int scan8_item(onnx_ctx_t *c, uint32_t k, int64_t b, onnx_value_t *v) {
  onnx_value_t *x = onnx_input(c, 1 + k);
  if (!x || x->dtype == ONNX_SEQUENCE || x->rank < 1)
    return onnx_fail(c, "input %u is missing or not a batched tensor", 1 + k), 0;
  onnx_value_t in = *x;
  if (!onnx_view_slice(c, &in, 0, b, 1, v)) return 0;
  int64_t dims[TE_MAX_RANK];
  memcpy(dims, v->dims + 1, sizeof(int64_t) * (v->rank - 1));
  onnx_view_reshape(c, v, v->rank - 1, dims);
  return 1;
}

/* Runs batch item b; its final states and stacked outputs go to res. */
static tinyml_status_t scan8_item_run(onnx_ctx_t *c, const scan_spec_t *sp, int64_t b,
                                      held_t *res) {
  uint32_t n = sp->states + sp->inputs;
  onnx_value_t *ins = tinyml__calloc(c->allocator, n, sizeof *ins, 8), xs[64] = {{0}};
  held_t *outs = tinyml__calloc(c->allocator, sp->outputs + 1, sizeof *outs, 8);
  if (!ins || !outs) onnx_oom(c);
  for (uint32_t k = 0; k < n && !c->error; ++k)
    scan8_item(c, k, b, k < sp->states ? &ins[k] : &xs[k - sp->states]);
  if (!c->error) scan_run(c, sp, ins, xs, outs);
  for (uint32_t k = 0; k < sp->states && !c->error; ++k) held_add(c, &res[k], &ins[k]);
  for (uint32_t k = 0; k < sp->outputs && !c->error; ++k) {
    onnx_value_t out = {0};
    if (stack(c, &outs[k], 0, 0, &out)) held_add(c, &res[sp->states + k], &out);
    tinyml__free(c->allocator, out.data);
  }
  for (uint32_t k = 0; k < sp->inputs; ++k) tinyml__free(c->allocator, xs[k].data);
  scan_free(c, sp, ins, outs);
  return c->error;
}

static tinyml_status_t lower_scan8(onnx_ctx_t *c) {
  scan_spec_t sp;
  if (!scan_spec(c, &sp, 1) || !scan_ints(c, "directions", sp.in_rev, sp.inputs))
    return c->error;
  const onnx_value_t *x = onnx_input(c, 1 + sp.states);
  if (!x || x->rank < 2) return onnx_fail(c, "the scan inputs must be [batch, sequence, ...]");
  int64_t batch = x->dims[0], len = x->dims[1];
  if (batch * len > kMaxSteps)
    return onnx_fail(c, "more than %d steps; longer scans are not unrolled", kMaxSteps);
  if (!scan8_lens_full(c, batch, len)) return c->error;
  held_t *res = tinyml__calloc(c->allocator, sp.states + sp.outputs + 1, sizeof *res, 8);
  if (!res) return onnx_oom(c);
  for (int64_t b = 0; b < batch && !c->error; ++b) scan8_item_run(c, &sp, b, res);
  for (uint32_t k = 0; k < sp.states + sp.outputs && !c->error; ++k) {
    onnx_value_t out = {0};
    if (stack(c, &res[k], 0, 0, &out)) onnx_bind_out(c, k, &out);
    tinyml__free(c->allocator, out.data);
  }
  for (uint32_t k = 0; k < sp.states + sp.outputs; ++k) held_free(c, &res[k]);
  tinyml__free(c->allocator, res);
  return c->error;
}

const onnx_lowering_t onnx_lowerings_loop[] = {
    {"Loop", 1, 23, lower_loop},
    {"Scan", 9, 23, lower_scan9},
    {"Scan", 8, 8, lower_scan8},
    {NULL, 0, 0, NULL},
};
