/* Resource variables as model state (tfl_variables.h), following TFLite's
 * var_handle, read_variable, assign_variable and call_once kernels: a
 * handle names a variable, reads and assigns run in operator order, and
 * the initialiser runs once, before the first invoke's first operator. */
#include "tfl_variables.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"

enum {
  CALL_ONCE = 129, VAR_HANDLE = 142, READ_VARIABLE = 143, ASSIGN_VARIABLE = 144,
  CALL_ONCE_OPTIONS = 103, VAR_HANDLE_OPTIONS = 111, /* BuiltinOptions tags */
  NAME_MAX_BYTES = 256,
};

typedef struct var {
  char container[NAME_MAX_BYTES], name[NAME_MAX_BYTES];
  const tfl_tensor_t *like; /* the first main-graph tensor it is read into or assigned from */
  te_type_t type;
  int assigned;             /* by the main graph */
  const uint8_t *init;      /* CALL_ONCE's constant: borrowed from the file */
  te_value_t value;
} var_t;

struct tfl_vars {
  var_t *vars;
  uint32_t count;
  uint32_t *of_tensor; /* main-graph handle tensor -> variable index + 1, else 0 */
};

int tfl_has_side_effect(const tfl_operator_t *op) {
  return !op->custom_code && op->builtin_code == ASSIGN_VARIABLE;
}

uint32_t tfl_vars_count(const tfl_ctx_t *c) { return c->vars ? c->vars->count : 0; }

te_value_t tfl_vars_value(const tfl_ctx_t *c, uint32_t k) { return c->vars->vars[k].value; }

void tfl_vars_free(tfl_ctx_t *c) {
  if (!c->vars) return;
  tinyml__free(c->allocator, c->vars->vars);
  tinyml__free(c->allocator, c->vars->of_tensor);
  tinyml__free(c->allocator, c->vars);
  c->vars = NULL;
}

static int is_op(const tfl_operator_t *op, int32_t code) {
  return !op->custom_code && op->builtin_code == code;
}

/* TFLite Micro's FindId: the same shared_name, and the same container
 * unless either leaves it empty. */
static int same_variable(const var_t *v, const char *container, const char *name) {
  return strcmp(v->name, name) == 0 &&
         (!*container || !*v->container || strcmp(v->container, container) == 0);
}

/* The variable the VAR_HANDLE operator `op` names: its index, a new one if
 * `add` (else -1 when unknown); -2 after recording an error. */
static int32_t handle_variable(tfl_ctx_t *c, const tfl_operator_t *op, int add) {
  struct tfl_vars *vs = c->vars;
  const tfl_table_t *o = op->options_type == VAR_HANDLE_OPTIONS ? &op->options : NULL;
  char container[NAME_MAX_BYTES], name[NAME_MAX_BYTES];
  int bad = 0;
  uint32_t nc = tfl_table_string(o, 0, container, sizeof container, &bad);
  uint32_t nn = tfl_table_string(o, 1, name, sizeof name, &bad);
  if (bad || (op->options_type && !o) || op->output_count != 1) {
    tfl_fail(c, "malformed VarHandleOptions or outputs");
    return -2;
  }
  if (nc >= sizeof container || nn >= sizeof name) {
    tfl_fail(c, "variable name longer than %d bytes", NAME_MAX_BYTES - 1);
    return -2;
  }
  for (uint32_t k = 0; k < vs->count; ++k)
    if (same_variable(&vs->vars[k], container, name)) return (int32_t)k;
  if (!add) return -1;
  var_t *v = &vs->vars[vs->count];
  memcpy(v->container, container, nc + 1);
  memcpy(v->name, name, nn + 1);
  return (int32_t)vs->count++;
}

/* Variables hold what TFLite Micro keeps in a resource buffer: the types
 * the runtime's state can carry as raw bytes.  uint8 is carried as int8
 * inside the graph, so its bytes would differ from TFLite's. */
static int variable_type(const tfl_tensor_t *t, te_type_t *ty) {
  return (t->type == TFL_FLOAT32 || t->type == TFL_INT8 || t->type == TFL_INT16 ||
          t->type == TFL_INT32) && tfl_te_type(t, ty);
}

static int same_te_type(const te_type_t *a, const te_type_t *b) {
  return a->elem == b->elem && a->rank == b->rank &&
         memcmp(a->dims, b->dims, sizeof(int64_t) * a->rank) == 0;
}

/* Records that variable v is read into or assigned from tensor t. */
static tinyml_status_t note_use(tfl_ctx_t *c, var_t *v, const tfl_tensor_t *t) {
  te_type_t ty;
  if (!t || !variable_type(t, &ty))
    return tfl_fail(c, "variable '%s' holds %s values (supported: FLOAT32, INT8, INT16, INT32)",
                    v->name, t ? tfl_type_name(t->type) : "no");
  if (!v->like) {
    v->like = t;
    v->type = ty;
  } else if (!same_te_type(&ty, &v->type)) {
    return tfl_fail(c, "variable '%s' is used with tensors of different shapes or types "
                    "('%s' and '%s')", v->name, v->like->name, t->name);
  }
  return TINYML_OK;
}

/* The variable a READ_VARIABLE or ASSIGN_VARIABLE operates on. */
static var_t *operand_variable(tfl_ctx_t *c) {
  int32_t h = c->op->input_count ? c->op->inputs[0] : -1;
  uint32_t k = h >= 0 ? c->vars->of_tensor[h] : 0;
  if (!k) {
    tfl_fail(c, "input 0 is not the result of a VAR_HANDLE");
    return NULL;
  }
  return &c->vars->vars[k - 1];
}

/* A live operator's use of variables: handles go only to the variable
 * operators, which must agree on each variable's type. */
static tinyml_status_t check_use(tfl_ctx_t *c) {
  const tfl_operator_t *op = c->op;
  if (is_op(op, READ_VARIABLE) || is_op(op, ASSIGN_VARIABLE)) {
    var_t *v = operand_variable(c);
    if (!v) return c->error;
    if (is_op(op, READ_VARIABLE)) return note_use(c, v, tfl_out(c, 0));
    if (op->input_count != 2) return tfl_fail(c, "needs a handle and a value");
    v->assigned = 1;
    return note_use(c, v, tfl_in(c, 1));
  }
  for (uint32_t j = 0; j < op->input_count; ++j)
    if (op->inputs[j] >= 0 && c->vars->of_tensor[op->inputs[j]])
      return tfl_fail(c, "input %u is a variable handle, which only READ_VARIABLE and "
                      "ASSIGN_VARIABLE take", j);
  return TINYML_OK;
}

/* ASSIGN_VARIABLE operator j of the initialiser `init`, whose handles map
 * to variables by `of`: the constant it assigns becomes the initial value. */
static tinyml_status_t fold_assign(tfl_ctx_t *c, const tfl_model_t *init, uint32_t j,
                                   const int32_t *of) {
  const tfl_operator_t *op = &init->operators[j];
  int32_t h = op->input_count == 2 ? op->inputs[0] : -1;
  int32_t x = op->input_count == 2 ? op->inputs[1] : -1;
  if (h < 0 || x < 0 || !of[h])
    return tfl_fail(c, "subgraph %u operator %u (ASSIGN_VARIABLE): needs a VAR_HANDLE "
                    "result and a value", init->subgraph, j);
  const tfl_tensor_t *t = &init->tensors[x];
  if (!t->data || t->is_variable)
    return tfl_fail(c, "subgraph %u operator %u (ASSIGN_VARIABLE): the value '%s' is not a "
                    "constant, so the initial value cannot be folded at compile time",
                    init->subgraph, j, t->name);
  if (of[h] < 0) return TINYML_OK; /* a variable the model never uses */
  var_t *v = &c->vars->vars[of[h] - 1];
  te_type_t ty;
  if (!variable_type(t, &ty) || !same_te_type(&ty, &v->type) ||
      (int64_t)t->data_size != te_numel(&ty) * (int64_t)te_elem_size(ty.elem))
    return tfl_fail(c, "subgraph %u: the initial value '%s' of variable '%s' has another "
                    "shape or type than the model uses", init->subgraph, t->name, v->name);
  v->init = t->data;
  return TINYML_OK;
}

/* Runs the initialiser subgraph at compile time: it may only name
 * variables and assign constants to them, as TensorFlow's converter writes
 * tf.Variable initial values. */
static tinyml_status_t fold_subgraph(tfl_ctx_t *c, const tfl_model_t *init) {
  int32_t *of = tinyml__calloc(c->allocator, init->tensor_count + 1, sizeof(int32_t), 4);
  if (!of) {
    tfl_out_of_memory(c);
    return c->error;
  }
  tinyml_status_t st = TINYML_OK;
  for (uint32_t j = 0; j < init->operator_count && !st; ++j) {
    const tfl_operator_t *op = &init->operators[j];
    if (is_op(op, VAR_HANDLE)) {
      int32_t k = handle_variable(c, op, 0);
      if (k == -2) st = c->error;
      else if (op->output_count == 1) of[op->outputs[0]] = k < 0 ? -1 : k + 1;
    } else if (is_op(op, ASSIGN_VARIABLE)) {
      st = fold_assign(c, init, j, of);
    } else {
      st = tfl_fail(c, "subgraph %u operator %u (%s) cannot be folded at compile time: an "
                    "initialiser may only hold VAR_HANDLE and ASSIGN_VARIABLE of constants",
                    init->subgraph, j,
                    op->custom_code ? op->custom_code : tfl_builtin_name(op->builtin_code));
    }
  }
  tinyml__free(c->allocator, of);
  return st;
}

/* CALL_ONCE operator k: its initialiser runs before any variable is used. */
static tinyml_status_t fold_call_once(tfl_ctx_t *c, uint32_t first_use) {
  const tfl_table_t *o = tfl_options(c, CALL_ONCE_OPTIONS);
  if (!o) return c->error;
  int bad = 0;
  int32_t index = tfl_table_i32(o, 0, 0, &bad);
  if (bad) return tfl_fail(c, "malformed CallOnceOptions");
  if (index <= 0 || (uint32_t)index >= c->model->subgraph_count)
    return tfl_fail(c, "init_subgraph_index %d is not another subgraph (the model has %u)",
                    index, c->model->subgraph_count);
  if (c->op_index > first_use)
    return tfl_fail(c, "comes after operator %u, which already uses a variable", first_use);
  tfl_model_t *init = NULL;
  tinyml_status_t st = tfl_read_subgraph(c->bytes, c->size, (uint32_t)index, c->allocator, &init);
  if (st) return st;
  st = fold_subgraph(c, init);
  tfl_model_free(init, c->allocator);
  return st;
}

static tinyml_status_t alloc_vars(tfl_ctx_t *c) {
  const tfl_model_t *m = c->model;
  c->vars = tinyml__calloc(c->allocator, 1, sizeof(struct tfl_vars), 8);
  if (!c->vars) {
    tfl_out_of_memory(c);
    return c->error;
  }
  c->vars->vars = tinyml__calloc(c->allocator, m->operator_count + 1, sizeof(var_t), 8);
  c->vars->of_tensor = tinyml__calloc(c->allocator, m->tensor_count + 1, sizeof(uint32_t), 4);
  if (!c->vars->vars || !c->vars->of_tensor) tfl_out_of_memory(c);
  return c->error;
}

/* Every live VAR_HANDLE names its variable. */
static tinyml_status_t find_handles(tfl_ctx_t *c, const uint8_t *live) {
  const tfl_model_t *m = c->model;
  for (uint32_t k = 0; k < m->operator_count; ++k) {
    if (!live[k] || !is_op(&m->operators[k], VAR_HANDLE)) continue;
    c->op_index = k;
    c->op = &m->operators[k];
    int32_t v = handle_variable(c, c->op, 1);
    if (v < 0) return c->error;
    c->vars->of_tensor[c->op->outputs[0]] = (uint32_t)v + 1;
  }
  return TINYML_OK;
}

static tinyml_status_t find_all(tfl_ctx_t *c, const uint8_t *live) {
  const tfl_model_t *m = c->model;
  TINYML_RETURN_IF_ERROR(alloc_vars(c));
  TINYML_RETURN_IF_ERROR(find_handles(c, live));
  uint32_t first_use = m->operator_count;
  for (uint32_t k = 0; k < m->operator_count; ++k) {
    if (!live[k]) continue;
    c->op_index = k;
    c->op = &m->operators[k];
    if (first_use == m->operator_count &&
        (is_op(c->op, READ_VARIABLE) || is_op(c->op, ASSIGN_VARIABLE)))
      first_use = k;
    TINYML_RETURN_IF_ERROR(check_use(c));
  }
  /* CALL_ONCE has no outputs, so it is never live: look at them all. */
  for (uint32_t k = 0; k < m->operator_count; ++k) {
    if (!is_op(&m->operators[k], CALL_ONCE)) continue;
    c->op_index = k;
    c->op = &m->operators[k];
    TINYML_RETURN_IF_ERROR(fold_call_once(c, first_use));
  }
  c->op = NULL;
  for (uint32_t k = 0; k < c->vars->count; ++k)
    if (!c->vars->vars[k].assigned && !c->vars->vars[k].init)
      return tfl_fail(c, "variable '%s' is read but never assigned (TFLite has no value for it)",
                      c->vars->vars[k].name);
  return TINYML_OK;
}

tinyml_status_t tfl_vars_find(tfl_ctx_t *c, const uint8_t *live) {
  tinyml_status_t st = find_all(c, live);
  c->op = NULL;
  return st;
}

/* TFLite Micro's default value, for a variable the initialiser leaves:
 * every byte the first tensor's zero point (truncated as TFLM does), else 0. */
static unsigned default_fill(const var_t *v) {
  if (!tfl_is_quantized(v->like) || !v->like->quant.zero_point_count) return 0;
  return (unsigned)((uint64_t)v->like->quant.zero_point[0] & 0xFF);
}

static void put_name(tfl_ctx_t *c, uint32_t k) {
  const var_t *v = &c->vars->vars[k];
  char fallback[32];
  snprintf(fallback, sizeof fallback, "variable_%" PRIu32, k);
  strbuf_append(c->e.sb, " {tinyml.name = ");
  strbuf_mlir_string(c->e.sb, *v->name ? v->name : fallback);
  strbuf_append(c->e.sb, ", tinyml.state");
}

tinyml_status_t tfl_vars_write_args(tfl_ctx_t *c, int after) {
  for (uint32_t k = 0; k < tfl_vars_count(c); ++k) {
    var_t *v = &c->vars->vars[k];
    v->value = (te_value_t){++c->e.next_id, v->type};
    strbuf_printf(c->e.sb, "%s%%v%u: ", after || k ? ", " : "", v->value.id);
    te_print_type(&c->e, &v->type);
    put_name(c, k);
    if (v->init) {
      strbuf_append(c->e.sb, ", tinyml.state_init = dense<\"0x");
      strbuf_hex(c->e.sb, v->init, (size_t)te_numel(&v->type) * te_elem_size(v->type.elem));
      strbuf_append(c->e.sb, "\"> : ");
      te_print_type(&c->e, &v->type);
    } else {
      strbuf_printf(c->e.sb, ", tinyml.state_fill = %u : i64", default_fill(v));
    }
    strbuf_append(c->e.sb, "}");
  }
  return TINYML_OK;
}

tinyml_status_t tfl_vars_write_results(tfl_ctx_t *c, int after) {
  for (uint32_t k = 0; k < tfl_vars_count(c); ++k) {
    if (after || k) strbuf_append(c->e.sb, ", ");
    te_print_type(&c->e, &c->vars->vars[k].type);
    put_name(c, k);
    strbuf_append(c->e.sb, "}");
  }
  return TINYML_OK;
}

/* ---- the lowerings ------------------------------------------------------ */

/* The handle has no value of its own; marking it produced lets the
 * variable operators that take it run (check_use kept it from the rest). */
tinyml_status_t tfl_lower_var_handle(tfl_ctx_t *c) {
  uint32_t k = c->vars->of_tensor[c->op->outputs[0]];
  c->values[c->op->outputs[0]] = c->vars->vars[k - 1].value;
  return TINYML_OK;
}

tinyml_status_t tfl_lower_read_variable(tfl_ctx_t *c) {
  var_t *v = operand_variable(c);
  if (!v) return c->error;
  if (!c->values[c->op->inputs[0]].id)
    return tfl_fail(c, "the handle is not made by an earlier VAR_HANDLE");
  return tfl_set_out(c, 0, v->value);
}

/* Later reads, and the state result, see the new value. */
tinyml_status_t tfl_lower_assign_variable(tfl_ctx_t *c) {
  var_t *v = operand_variable(c);
  if (!v) return c->error;
  if (!c->values[c->op->inputs[0]].id)
    return tfl_fail(c, "the handle is not made by an earlier VAR_HANDLE");
  te_value_t x = tfl_value_in(c, 1);
  if (!x.id) return c->error;
  v->value = x;
  return TINYML_OK;
}
