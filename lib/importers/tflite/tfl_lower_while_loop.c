/* WHILE as a run-time loop: one tosa.while_loop, for the loops whose trip
 * count the unroller (tfl_lower_while.c) cannot know, because the
 * condition reads model inputs or data.  The condition and body subgraphs
 * are inlined into its two regions by the IF inliner, so the same checks
 * hold (no state, no nested control flow, only lowered operators).  As
 * TFLite's while.cc and TFLM, the loop runs until its condition is false:
 * there is no trip limit (a model that never stops never returns).
 *
 * The emitter writes text in order, so the op is written around the
 * inlined subgraphs in MLIR's generic form:
 *   %r0, %r1 = "tosa.while_loop"(%a, %b) ({
 *   ^bb0(%c0: T0, %c1: T1):  <cond>  "tosa.yield"(%go) : (tensor<i1>) -> ()
 *   }, {
 *   ^bb0(%b0: T0, %b1: T1):  <body>  "tosa.yield"(%n0, %n1) : (T0, T1) -> ()
 *   }) : (T0, T1) -> (T0, T1) */
#include "../../common/alloc.h"
#include "../../common/status.h"
#include "tfl_lower.h"

static void put_types(te_t *e, const te_value_t *v, uint32_t n) {
  strbuf_append(e->sb, "(");
  for (uint32_t i = 0; i < n; ++i) {
    if (i) strbuf_append(e->sb, ", ");
    te_print_type(e, &v[i].type);
  }
  strbuf_append(e->sb, ")");
}

static void put_ids(te_t *e, const te_value_t *v, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) strbuf_printf(e->sb, "%s%%v%u", i ? ", " : "", v[i].id);
}

/* A region's block header: fresh values of the loop types as its arguments. */
static void open_region(te_t *e, const te_value_t *init, uint32_t n, te_value_t *args) {
  strbuf_append(e->sb, "^bb0(");
  for (uint32_t i = 0; i < n; ++i) {
    args[i] = init[i];
    args[i].id = ++e->next_id;
    strbuf_printf(e->sb, "%s%%v%u: ", i ? ", " : "", args[i].id);
    te_print_type(e, &args[i].type);
  }
  strbuf_append(e->sb, "):\n");
}

static void yield(te_t *e, const te_value_t *v, uint32_t n) {
  strbuf_append(e->sb, "    \"tosa.yield\"(");
  put_ids(e, v, n);
  strbuf_append(e->sb, ") : ");
  put_types(e, v, n);
  strbuf_append(e->sb, " -> ()\n");
}

/* The condition's single BOOL as the tensor<i1> tosa.yield takes. */
static te_value_t scalar_condition(tfl_ctx_t *c, te_value_t go) {
  if (go.type.rank == 0) return go;
  return te_reshape(&c->e, go, 0, NULL);
}

typedef struct loop_values {
  te_value_t *init, *results, *args, *next;
} loop_values_t;

static tinyml_status_t emit_loop(tfl_ctx_t *c, const tfl_model_t *cond, const tfl_model_t *body,
                                 loop_values_t *v) {
  uint32_t n = c->op->input_count;
  te_t *e = &c->e;
  for (uint32_t i = 0; i < n; ++i)
    if (!(v->init[i] = tfl_value_in(c, i)).id) return c->error;
  for (uint32_t i = 0; i < n; ++i) {
    v->results[i] = v->init[i];
    v->results[i].id = ++e->next_id;
  }
  strbuf_append(e->sb, "    ");
  put_ids(e, v->results, n);
  strbuf_append(e->sb, " = \"tosa.while_loop\"(");
  put_ids(e, v->init, n);
  strbuf_append(e->sb, ") ({\n");
  open_region(e, v->init, n, v->args);
  te_value_t go;
  TINYML_RETURN_IF_ERROR(tfl_lower_subgraph(c, cond, v->args, &go));
  go = scalar_condition(c, go);
  yield(e, &go, 1);
  strbuf_append(e->sb, "  }, {\n");
  open_region(e, v->init, n, v->args);
  TINYML_RETURN_IF_ERROR(tfl_lower_subgraph(c, body, v->args, v->next));
  yield(e, v->next, n);
  strbuf_append(e->sb, "  }) : ");
  put_types(e, v->init, n);
  strbuf_append(e->sb, " -> ");
  put_types(e, v->results, n);
  strbuf_append(e->sb, "\n");
  for (uint32_t i = 0; i < n; ++i) TINYML_RETURN_IF_ERROR(tfl_set_out(c, i, v->results[i]));
  return TINYML_OK;
}

tinyml_status_t tfl_lower_while_loop(tfl_ctx_t *c, const tfl_model_t *cond,
                                     const tfl_model_t *body) {
  uint32_t n = c->op->input_count;
  loop_values_t v;
  v.init = tinyml__calloc(c->allocator, 4 * (size_t)n, sizeof(te_value_t), 8);
  if (!v.init) {
    tfl_out_of_memory(c);
    return c->error;
  }
  v.results = v.init + n;
  v.args = v.results + n;
  v.next = v.args + n;
  tinyml_status_t st = emit_loop(c, cond, body, &v);
  tinyml__free(c->allocator, v.init);
  return st;
}
