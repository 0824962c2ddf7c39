/* Model inputs bound to values at compile time (tinyml_compile_options_t
 * input_values, --input-value): each becomes a constant, so what the graph
 * computes from it folds like an initializer, and it leaves the module's
 * signature.  Also the refusal that tells a user which graph input to bind
 * when an operator needs a constant it cannot have. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "onnx_graph_util.h"
#include "onnx_input_values.h"

const tinyml_input_value_t *onnx_input_value(const onnx_ctx_t *c, const char *name) {
  const te_bindings_t *b = c->bindings;
  for (size_t i = 0; b && name && i < b->input_value_count; ++i)
    if (b->input_values[i].input && strcmp(b->input_values[i].input, name) == 0)
      return &b->input_values[i];
  return NULL;
}

static tinyml_status_t invalid(onnx_ctx_t *c, const char *fmt, const char *name, const char *more) {
  if (!c->error)
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_INVALID_ARGUMENT, fmt,
                                   name ? name : "(null)", more ? more : "");
  return c->error;
}

static int is_true_input(const Onnx__GraphProto *g, const char *name) {
  int found = 0;
  for (size_t i = 0; i < g->n_input && !found; ++i)
    found = g->input[i]->name && strcmp(g->input[i]->name, name) == 0;
  for (size_t i = 0; i < g->n_initializer && found; ++i)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return 0;
  return found;
}

tinyml_status_t onnx_check_input_values(onnx_ctx_t *c, const Onnx__GraphProto *g) {
  const te_bindings_t *b = c->bindings;
  for (size_t i = 0; b && i < b->input_value_count; ++i) {
    const tinyml_input_value_t *v = &b->input_values[i];
    if (!v->input || !is_true_input(g, v->input))
      return invalid(c, "onnx: input_values (--input-value) names no input of the model: '%s'%s",
                     v->input, NULL);
    if (onnx_input_value(c, v->input) != v)
      return invalid(c, "onnx: input_values (--input-value) binds input '%s' twice%s", v->input,
                     NULL);
    if (!v->text && v->byte_size && !v->data)
      return invalid(c, "onnx: input_values (--input-value) for input '%s' has no data%s",
                     v->input, NULL);
  }
  return TINYML_OK;
}

/* The tinyml dtype that carries ONNX dtype `t`; INVALID if none does. */
static tinyml_dtype_t api_dtype(int32_t t) {
  switch (t) {
    case ONNX_FLOAT: return TINYML_DTYPE_FLOAT32;
    case ONNX_UINT8: return TINYML_DTYPE_UINT8;
    case ONNX_INT8: return TINYML_DTYPE_INT8;
    case ONNX_INT16: return TINYML_DTYPE_INT16;
    case ONNX_INT32: return TINYML_DTYPE_INT32;
    case ONNX_INT64: return TINYML_DTYPE_INT64;
    case ONNX_BOOL: return TINYML_DTYPE_BOOL;
    default: return TINYML_DTYPE_INVALID;
  }
}

static int64_t count_items(const char *text) {
  int64_t n = 1;
  for (const char *p = text; *p; ++p) n += *p == ',';
  return n;
}

/* One decimal element of type `t` at *p into out; 0 if it does not read as
 * one (or is out of the type's range). */
static int read_item(const char **p, int32_t t, void *out) {
  char *end;
  errno = 0;
  if (t == ONNX_FLOAT) {
    float f = strtof(*p, &end);
    if (end == *p || (errno == ERANGE && isinf(f))) return 0;
    memcpy(out, &f, 4);
  } else if (t == ONNX_BOOL && (strncmp(*p, "true", 4) == 0 || strncmp(*p, "false", 5) == 0)) {
    *(uint8_t *)out = (*p)[0] == 't';
    end = (char *)*p + ((*p)[0] == 't' ? 4 : 5);
  } else {
    long long x = strtoll(*p, &end, 10);
    static const long long lo[] = {[ONNX_UINT8] = 0, [ONNX_INT8] = -128, [ONNX_INT16] = -32768,
                                   [ONNX_INT32] = INT32_MIN, [ONNX_INT64] = INT64_MIN,
                                   [ONNX_BOOL] = 0};
    static const long long hi[] = {[ONNX_UINT8] = 255, [ONNX_INT8] = 127, [ONNX_INT16] = 32767,
                                   [ONNX_INT32] = INT32_MAX, [ONNX_INT64] = INT64_MAX,
                                   [ONNX_BOOL] = 1};
    if (end == *p || errno || x < lo[t] || x > hi[t]) return 0;
    memcpy(out, &x, onnx_dtype_size(t)); /* little-endian hosts: the low bytes */
  }
  *p = end;
  return 1;
}

static int parse_text(const char *text, int32_t t, uint8_t *out, int64_t n) {
  const char *p = text;
  size_t es = onnx_dtype_size(t);
  for (int64_t k = 0; k < n; ++k) {
    if (!read_item(&p, t, out + k * es) || *p != (k + 1 < n ? ',' : '\0')) return 0;
    if (*p) ++p;
  }
  return 1;
}

/* Whether `vi` is 1-D with a dimension nothing else sizes: then the
 * value's length is its size. */
static int length_from_value(const onnx_ctx_t *c, const Onnx__ValueInfoProto *vi) {
  const Onnx__TensorShapeProto *s = vi->type->tensor_type->shape;
  if (!s || s->n_dim != 1) return 0;
  const Onnx__TensorShapeProto__Dimension *d = s->dim[0];
  if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0)
    return 0;
  const te_bindings_t *b = c->bindings;
  for (size_t i = 0; i < b->input_shape_count; ++i)
    if (b->input_shapes[i].input && strcmp(b->input_shapes[i].input, vi->name) == 0) return 0;
  int named = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param;
  for (size_t i = 0; named && i < b->dim_count; ++i)
    if (b->dims[i].name && strcmp(b->dims[i].name, d->dim_param) == 0) return 0;
  return 1;
}

tinyml_status_t onnx_bind_input_value(onnx_ctx_t *c, const Onnx__ValueInfoProto *vi,
                                      const tinyml_input_value_t *b, onnx_value_t *v) {
  size_t es = onnx_dtype_size(v->dtype);
  tinyml_dtype_t want = api_dtype(v->dtype);
  if (!es || want == TINYML_DTYPE_INVALID)
    return invalid(c, "onnx: input_values (--input-value): input '%s' has type %s, which "
                   "cannot be bound", vi->name, onnx_dtype_name(v->dtype));
  if (!b->text && b->dtype != want)
    return invalid(c, "onnx: input_values (--input-value): input '%s' has element type %s",
                   vi->name, tinyml_dtype_name(want));
  int64_t n = b->text ? count_items(b->text) : (int64_t)(b->byte_size / es);
  if (!b->text && b->byte_size % es) n = -1;
  if (n > 0 && length_from_value(c, vi)) v->dims[0] = n;
  if (n != onnx_numel(v->rank, v->dims))
    return invalid(c, "onnx: input_values (--input-value): the value of input '%s' has another "
                   "element count than the input's shape%s", vi->name, NULL);
  if (!onnx_check_constant(c, vi->name, (uint64_t)n * es)) return c->error;
  v->data = tinyml__calloc(c->allocator, (size_t)n + 1, es, 16);
  if (!v->data) return onnx_oom(c);
  if (!b->text) {
    memcpy(v->data, b->data, (size_t)n * es);
    for (int64_t k = 0; v->dtype == ONNX_BOOL && k < n; ++k)
      ((uint8_t *)v->data)[k] = ((uint8_t *)v->data)[k] != 0;
  } else if (!parse_text(b->text, v->dtype, v->data, n)) {
    return invalid(c, "onnx: input_values (--input-value): '%s' does not read as values of "
                   "type %s", b->text, onnx_dtype_name(v->dtype));
  }
  return TINYML_OK;
}

/* ---- which graph inputs a value derives from ------------------------------ */

typedef struct trace {
  const char *names[8]; /* the graph inputs found */
  int count;
  int budget;           /* values still to visit: a DAG can fan out */
} trace_t;

static int has_subgraph(const Onnx__NodeProto *n) {
  for (size_t i = 0; i < n->n_attribute; ++i)
    if (n->attribute[i]->g || n->attribute[i]->n_graphs) return 1;
  return 0;
}

static int add_name(trace_t *t, const char *name) {
  for (int i = 0; i < t->count; ++i)
    if (strcmp(t->names[i], name) == 0) return 1;
  if (t->count == 8) return 0;
  t->names[t->count++] = name;
  return 1;
}

/* Whether `name` is computed from graph inputs and constants alone
 * (collecting those inputs); 0 for anything else, e.g. a value of a
 * subgraph, whose outer reads are not listed. */
static int derive(onnx_ctx_t *c, trace_t *t, const char *name) {
  if (--t->budget < 0) return 0;
  onnx_value_t *v = onnx_find(c, name);
  if (v && v->data) return 1;
  if (is_true_input(c->graph, name)) return add_name(t, name);
  const Onnx__NodeProto *n = onnx_producer(c->graph, name, c->graph->n_node);
  if (!n || has_subgraph(n)) return 0;
  for (size_t i = 0; i < n->n_input; ++i)
    if (n->input[i][0] && !derive(c, t, n->input[i])) return 0;
  return 1;
}

int onnx_bind_hint(onnx_ctx_t *c, const char *reason, char *out, size_t cap) {
  if (!c->graph || !c->node || !c->wanted_const || !strstr(reason, "constant")) return 0;
  uint32_t i = c->wanted_const - 1;
  if (i >= c->node->n_input || !c->node->input[i][0]) return 0;
  trace_t t = {.budget = 4096};
  if (!derive(c, &t, c->node->input[i]) || !t.count) return 0;
  size_t len = (size_t)snprintf(out, cap, "input%s", t.count > 1 ? "s" : "");
  for (int k = 0; k < t.count && len < cap; ++k)
    len += (size_t)snprintf(out + len, cap - len, "%s'%s'", k ? ", " : " ", t.names[k]);
  if (len < cap)
    len += (size_t)snprintf(out + len, cap - len, " of the graph decide%s what this node "
                            "computes (%s); bind %s at compile time (", t.count > 1 ? "" : "s",
                            reason, t.count > 1 ? "their values" : "its value");
  for (int k = 0; k < t.count && len < cap; ++k)
    len += (size_t)snprintf(out + len, cap - len, "%s--input-value %s=...", k ? " " : "",
                            t.names[k]);
  if (len < cap) snprintf(out + len, cap - len, ")");
  return 1;
}
