/* IF, and the subgraph inliner IF and WHILE share.  Compiled code has no
 * branches between dispatches, so an IF is inlined: both branch subgraphs
 * are lowered on the IF's inputs and each output selects between them by
 * the condition (a constant condition lowers only the branch it takes).
 * That computes the same values as TFLite's if.cc when the branches are
 * pure, which is checked: no state, no variables, no nested control flow.
 * WHILE (tfl_lower_while.c) inlines its body once per trip. */
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "tfl_lower.h"

enum {
  IF = 118, WHILE = 119, CALL_ONCE = 129, VAR_HANDLE = 142, READ_VARIABLE = 143,
  ASSIGN_VARIABLE = 144, IF_OPTIONS = 92,
};

/* Operators whose effect outlives the branch, or that branch again. */
static int is_impure(const tfl_operator_t *op) {
  if (op->custom_code) return 0; /* refused later, as everywhere */
  switch (op->builtin_code) {
    case IF: case WHILE: case CALL_ONCE: case VAR_HANDLE: case READ_VARIABLE: case ASSIGN_VARIABLE:
      return 1;
    default:
      return 0;
  }
}

static tinyml_status_t check_branch(tfl_ctx_t *c, const tfl_model_t *b) {
  for (uint32_t j = 0; j < b->operator_count; ++j)
    if (is_impure(&b->operators[j]))
      return tfl_fail(c, "subgraph %u operator %u (%s): a branch with state or control flow "
                      "cannot be inlined", b->subgraph, j,
                      tfl_builtin_name(b->operators[j].builtin_code));
  for (uint32_t t = 0; t < b->tensor_count; ++t) {
    if (b->tensors[t].is_variable)
      return tfl_fail(c, "subgraph %u: variable tensor '%s' (state) in a branch cannot be "
                      "inlined", b->subgraph, b->tensors[t].name);
    if (tfl_tensor_bytes(&b->tensors[t]) > c->limits.max_tensor_bytes)
      return tfl_fail(c, "subgraph %u: tensor '%s' is larger than max_tensor_bytes (%llu)",
                      b->subgraph, b->tensors[t].name,
                      (unsigned long long)c->limits.max_tensor_bytes);
  }
  if (b->operator_count > c->limits.max_ops - c->model->operator_count - c->inlined_ops)
    return tfl_fail(c, "inlining subgraph %u exceeds max_ops (%llu)", b->subgraph,
                    (unsigned long long)c->limits.max_ops);
  c->inlined_ops += b->operator_count;
  return TINYML_OK;
}

/* IF's input i + 1 must have branch input i's type, quantisation and shape. */
static tinyml_status_t check_if_inputs(tfl_ctx_t *c, const tfl_model_t *b) {
  if (b->input_count != c->op->input_count - 1 || b->output_count != c->op->output_count)
    return tfl_fail(c, "subgraph %u has %u inputs and %u outputs, the IF passes %u and takes %u",
                    b->subgraph, b->input_count, b->output_count, c->op->input_count - 1,
                    c->op->output_count);
  for (uint32_t i = 0; i < b->input_count; ++i) {
    const tfl_tensor_t *outer = tfl_in(c, i + 1), *inner = &b->tensors[b->inputs[i]];
    te_type_t a, t;
    if (!outer || outer->type != inner->type || !tfl_te_type(outer, &a) ||
        !tfl_te_type(inner, &t) || a.rank != t.rank ||
        memcmp(a.dims, t.dims, sizeof(int64_t) * a.rank) != 0)
      return tfl_fail(c, "input %u does not match subgraph %u's input '%s'", i + 1, b->subgraph,
                      inner->name);
  }
  return TINYML_OK;
}

/* Binds subgraph input i to ins[i], which must have its TOSA type. */
static tinyml_status_t bind_inputs(tfl_ctx_t *c, tfl_ctx_t *sub, const te_value_t *ins) {
  const tfl_model_t *b = sub->model;
  for (uint32_t i = 0; i < b->input_count; ++i) {
    const tfl_tensor_t *inner = &b->tensors[b->inputs[i]];
    te_type_t t;
    if (!ins[i].id || !tfl_te_type(inner, &t) || t.elem != ins[i].type.elem ||
        t.rank != ins[i].type.rank || memcmp(t.dims, ins[i].type.dims, sizeof(int64_t) * t.rank))
      return tfl_fail(c, "a value does not match subgraph %u's input '%s'", b->subgraph,
                      inner->name);
    sub->values[b->inputs[i]] = ins[i];
  }
  return TINYML_OK;
}

/* A branch's error, named as the IF's: "operator 3 (IF): subgraph 2: ...". */
static tinyml_status_t branch_error(tfl_ctx_t *c, const tfl_model_t *b, tinyml_status_t st) {
  if (tinyml_status_code(st) == TINYML_STATUS_OUT_OF_MEMORY) {
    c->error = st;
    return st;
  }
  const char *msg = tinyml_status_message(st);
  if (strncmp(msg, "tflite: ", 8) == 0) msg += 8;
  tfl_fail(c, "subgraph %u: %s", b->subgraph, msg);
  tinyml_status_free(st);
  return c->error;
}

tinyml_status_t tfl_lower_subgraph(tfl_ctx_t *c, const tfl_model_t *b, const te_value_t *ins,
                                   te_value_t *outs) {
  TINYML_RETURN_IF_ERROR(check_branch(c, b));
  tfl_ctx_t sub = {.allocator = c->allocator, .model = b, .limits = c->limits, .e = c->e,
                   .bytes = c->bytes, .size = c->size};
  sub.values = tinyml__calloc(c->allocator, b->tensor_count + 1, sizeof(te_value_t), 8);
  if (!sub.values) {
    tfl_out_of_memory(c);
    return c->error;
  }
  tinyml_status_t st = bind_inputs(c, &sub, ins);
  for (uint32_t j = 0; j < b->operator_count && !st; ++j) {
    sub.op_index = j;
    sub.op = &b->operators[j];
    st = tfl_lower_operator(&sub);
  }
  c->e.next_id = sub.e.next_id; /* one emitter: ids stay unique */
  if (sub.error && sub.error != st) tinyml_status_free(sub.error);
  if (st && st != c->error) st = branch_error(c, b, st);
  for (uint32_t j = 0; j < b->output_count && !st; ++j) {
    outs[j] = sub.values[b->outputs[j]];
    if (!outs[j].id)
      st = tfl_fail(c, "subgraph %u: output '%s' is not computed by an operator", b->subgraph,
                    b->tensors[b->outputs[j]].name);
  }
  tinyml__free(c->allocator, sub.values);
  return st;
}

/* Reads subgraph `index` (another than the model's) and lowers it on the
 * IF's inputs 1.. */
static tinyml_status_t inline_subgraph(tfl_ctx_t *c, int32_t index, te_value_t *outs) {
  if (index <= 0 || (uint32_t)index >= c->model->subgraph_count)
    return tfl_fail(c, "branch subgraph %d is not another subgraph (the model has %u)", index,
                    c->model->subgraph_count);
  tfl_model_t *b = NULL;
  te_value_t *ins = NULL;
  tinyml_status_t st = tfl_read_subgraph(c->bytes, c->size, (uint32_t)index, c->allocator, &b);
  if (!st) st = check_if_inputs(c, b);
  if (!st) {
    ins = tinyml__calloc(c->allocator, b->input_count + 1, sizeof(te_value_t), 8);
    if (!ins) st = (tfl_out_of_memory(c), c->error);
  }
  for (uint32_t i = 0; !st && i < b->input_count; ++i)
    if (!(ins[i] = tfl_value_in(c, i + 1)).id) st = c->error;
  if (!st) st = tfl_lower_subgraph(c, b, ins, outs);
  tinyml__free(c->allocator, ins);
  tfl_model_free(b, c->allocator);
  return st;
}

static tinyml_status_t select_outputs(tfl_ctx_t *c, te_value_t cond, const te_value_t *then_v,
                                      const te_value_t *else_v) {
  for (uint32_t j = 0; j < c->op->output_count; ++j) {
    const te_type_t *a = &then_v[j].type, *b = &else_v[j].type;
    if (a->elem != b->elem || a->rank != b->rank ||
        memcmp(a->dims, b->dims, sizeof(int64_t) * a->rank) != 0)
      return tfl_fail(c, "output %u: the two branches give different shapes or types", j);
    TINYML_RETURN_IF_ERROR(tfl_set_out(c, j, te_select(&c->e, cond, then_v[j], else_v[j])));
  }
  return TINYML_OK;
}

static tinyml_status_t lower_if(tfl_ctx_t *c, int32_t then_index, int32_t else_index,
                                te_value_t *then_v, te_value_t *else_v) {
  const tfl_tensor_t *cond = tfl_in(c, 0);
  if (!cond || cond->type != TFL_BOOL || tfl_numel(cond) != 1)
    return tfl_fail(c, "the condition must be a single BOOL");
  if (cond->data && !cond->is_variable && cond->data_size == 1) {
    /* Known at compile time: only the branch taken exists. */
    TINYML_RETURN_IF_ERROR(inline_subgraph(c, cond->data[0] ? then_index : else_index, then_v));
    for (uint32_t j = 0; j < c->op->output_count; ++j)
      TINYML_RETURN_IF_ERROR(tfl_set_out(c, j, then_v[j]));
    return TINYML_OK;
  }
  te_value_t k = tfl_value_in(c, 0);
  if (!k.id) return c->error;
  TINYML_RETURN_IF_ERROR(inline_subgraph(c, then_index, then_v));
  TINYML_RETURN_IF_ERROR(inline_subgraph(c, else_index, else_v));
  return select_outputs(c, k, then_v, else_v);
}

tinyml_status_t tfl_lower_if(tfl_ctx_t *c) {
  const tfl_table_t *o = tfl_options(c, IF_OPTIONS);
  if (!o) return c->error;
  int bad = 0;
  int32_t then_index = tfl_table_i32(o, 0, 0, &bad), else_index = tfl_table_i32(o, 1, 0, &bad);
  if (bad) return tfl_fail(c, "malformed IfOptions");
  if (c->op->input_count < 1) return tfl_fail(c, "the condition is missing");
  uint32_t n = c->op->output_count;
  te_value_t *then_v = tinyml__calloc(c->allocator, n + 1, sizeof(te_value_t), 8);
  te_value_t *else_v = tinyml__calloc(c->allocator, n + 1, sizeof(te_value_t), 8);
  if (!then_v || !else_v) tfl_out_of_memory(c);
  tinyml_status_t st = c->error ? c->error : lower_if(c, then_index, else_index, then_v, else_v);
  tinyml__free(c->allocator, then_v);
  tinyml__free(c->allocator, else_v);
  return st;
}
