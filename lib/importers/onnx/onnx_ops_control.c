/* ONNX lowerings: control flow (If).  Compiled code has no branches
 * between dispatches, so an If is inlined.  A condition known at compile
 * time (folded from shapes or constants) keeps only the branch taken.  A
 * run-time condition lowers both branches and each output selects between
 * them, which is exact: both are computed, one is chosen, and neither can
 * fail or trap.  That needs both branches to give each output one type and
 * shape; where they differ the If is refused.  As the TFLite importer's IF
 * (tfl_lower_if.c).  See onnx_lower.h. */
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "onnx_lower.h"

static const Onnx__GraphProto *branch(onnx_ctx_t *c, const char *name) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  if (!a || !a->g) {
    onnx_fail(c, "attribute '%s' (a graph) is missing", name);
    return NULL;
  }
  if (a->g->n_output != onnx_output_count(c)) {
    onnx_fail(c, "%s has %zu outputs, the If %u", name, a->g->n_output, onnx_output_count(c));
    return NULL;
  }
  return a->g;
}

/* Output j of a lowered branch. */
static onnx_value_t *branch_out(onnx_ctx_t *c, const Onnx__GraphProto *g, uint32_t j) {
  onnx_value_t *v = g->output[j]->name ? onnx_find(c, g->output[j]->name) : NULL;
  if (!v) onnx_fail(c, "branch output '%s' is never computed", g->output[j]->name);
  return v;
}

/* The If's output j is the branch's, constant or not. */
static tinyml_status_t forward(onnx_ctx_t *c, uint32_t j, onnx_value_t *v) {
  /* Binding the output may move the value table: copy the dims first. */
  int64_t dims[TE_MAX_RANK];
  memcpy(dims, v->dims, sizeof dims);
  if (v->data && !v->v.id) return onnx_set_out_const(c, j, v->dtype, v->rank, dims, v->data);
  return onnx_set_out_typed(c, j, v->v, v->dtype);
}

static tinyml_status_t select_out(onnx_ctx_t *c, uint32_t j, te_value_t cond, onnx_value_t *a,
                                  onnx_value_t *b) {
  if (a->dtype != b->dtype || a->rank != b->rank ||
      memcmp(a->dims, b->dims, sizeof(int64_t) * a->rank) != 0)
    return onnx_fail(c, "output %u: the branches give different types or shapes, and the "
                        "condition is only known at run time", j);
  te_value_t x = onnx_runtime(c, a), y = onnx_runtime(c, b);
  if (!x.id || !y.id) return c->error;
  /* The condition at the outputs' rank, so select broadcasts it alone. */
  int64_t ones[TE_MAX_RANK];
  for (uint32_t d = 0; d < a->rank; ++d) ones[d] = 1;
  te_value_t k = te_reshape(&c->e, cond, a->rank, ones);
  return onnx_set_out_typed(c, j, te_select(&c->e, k, x, y), a->dtype);
}

static tinyml_status_t lower_if(onnx_ctx_t *c) {
  const Onnx__GraphProto *then_g = branch(c, "then_branch"), *else_g = branch(c, "else_branch");
  onnx_value_t *cond = onnx_input(c, 0);
  if (!then_g || !else_g) return c->error;
  if (!cond || cond->dtype != ONNX_BOOL || onnx_numel(cond->rank, cond->dims) != 1)
    return onnx_fail(c, "the condition must be a single BOOL");
  uint32_t n = onnx_output_count(c);
  if (cond->data) {
    const Onnx__GraphProto *g = ((const uint8_t *)cond->data)[0] ? then_g : else_g;
    TINYML_RETURN_IF_ERROR(onnx_lower_graph(c, g));
    for (uint32_t j = 0; j < n; ++j) {
      onnx_value_t *v = branch_out(c, g, j);
      if (!v) return c->error;
      TINYML_RETURN_IF_ERROR(forward(c, j, v));
    }
    return TINYML_OK;
  }
  te_value_t k = onnx_in(c, 0);
  if (!k.id) return c->error;
  TINYML_RETURN_IF_ERROR(onnx_lower_graph(c, then_g));
  TINYML_RETURN_IF_ERROR(onnx_lower_graph(c, else_g));
  for (uint32_t j = 0; j < n; ++j) {
    onnx_value_t *a = branch_out(c, then_g, j), *b = a ? branch_out(c, else_g, j) : NULL;
    if (!b) return c->error;
    /* Both the same constant: no select needed (and it stays foldable). */
    if (a->data && b->data && !a->v.id && !b->v.id && a->dtype == b->dtype &&
        a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(int64_t) * a->rank) &&
        !memcmp(a->data, b->data, (size_t)onnx_numel(a->rank, a->dims) * onnx_dtype_size(a->dtype))) {
      TINYML_RETURN_IF_ERROR(forward(c, j, a));
      continue;
    }
    TINYML_RETURN_IF_ERROR(select_out(c, j, k, a, b));
  }
  return TINYML_OK;
}

const onnx_lowering_t onnx_lowerings_control[] = {
    {"If", 1, 23, lower_if},
    {NULL, 0, 0, NULL},
};
