/* The graph inputs' shapes: the declared type, with its dynamic dimensions
 * bound by the caller (tinyml_compile_options_t dims / input_shapes) or,
 * for an unbound first dimension (the batch), compiled as 1 with a note.
 * Everything unbound is reported at once, so a user fixes a model in one
 * try rather than one dimension per compile. */
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../../common/strbuf.h"
#include "onnx_inputs.h"
#include "onnx_input_values.h"

typedef const Onnx__TensorShapeProto__Dimension dim_t;

/* The dim_param a binding can name; NULL for a static or unnamed dimension.
 * Exporters write "None" for a dimension they know nothing of: it names
 * no dimension in particular, so it cannot be bound by name. */
static const char *dim_name(dim_t *d) {
  if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM || !d->dim_param ||
      !d->dim_param[0] || strcmp(d->dim_param, "None") == 0)
    return NULL;
  return d->dim_param;
}

static int dim_static(dim_t *d) {
  return d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && d->dim_value >= 0;
}

static const Onnx__TensorShapeProto *shape_of(const Onnx__ValueInfoProto *vi) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return NULL;
  return tp->tensor_type->shape;
}

static int is_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; ++i)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return 1;
  return 0;
}

/* The graph's true inputs (not initializers), in order; NULL past the end. */
static const Onnx__ValueInfoProto *true_input(const Onnx__GraphProto *g, size_t *k) {
  for (; *k < g->n_input; ++*k)
    if (g->input[*k]->name && !is_initializer(g, g->input[*k]->name)) return g->input[(*k)++];
  return NULL;
}

static const tinyml_input_shape_t *shape_binding(const te_bindings_t *b, const char *input) {
  for (size_t i = 0; b && i < b->input_shape_count; ++i)
    if (b->input_shapes[i].input && strcmp(b->input_shapes[i].input, input) == 0)
      return &b->input_shapes[i];
  return NULL;
}

static const tinyml_dim_binding_t *dim_binding(const te_bindings_t *b, const char *name) {
  for (size_t i = 0; b && name && i < b->dim_count; ++i)
    if (b->dims[i].name && strcmp(b->dims[i].name, name) == 0) return &b->dims[i];
  return NULL;
}

/* Whether `name` is the first dimension of an input without an
 * input_shapes entry: the batch, which defaults to 1 wherever it appears. */
static int is_batch_name(const onnx_ctx_t *c, const Onnx__GraphProto *g, const char *name) {
  const Onnx__ValueInfoProto *vi;
  for (size_t k = 0; (vi = true_input(g, &k));) {
    const Onnx__TensorShapeProto *s = shape_of(vi);
    if (s && s->n_dim && !shape_binding(c->bindings, vi->name) && dim_name(s->dim[0]) &&
        strcmp(dim_name(s->dim[0]), name) == 0)
      return 1;
  }
  return 0;
}

/* Dimension i of input vi: its size, 0 when unbound (no default either). */
static int64_t dim_size(const onnx_ctx_t *c, const Onnx__GraphProto *g, dim_t *d, size_t i) {
  if (dim_static(d)) return d->dim_value;
  const tinyml_dim_binding_t *b = dim_binding(c->bindings, dim_name(d));
  if (b) return b->value;
  if (i == 0 || (dim_name(d) && is_batch_name(c, g, dim_name(d)))) return 1;
  return 0;
}

tinyml_status_t onnx_input_dims(onnx_ctx_t *c, const Onnx__GraphProto *g,
                                const Onnx__ValueInfoProto *vi, uint32_t *rank, int64_t *dims) {
  const tinyml_input_shape_t *given = shape_binding(c->bindings, vi->name);
  const Onnx__TensorShapeProto *s = shape_of(vi);
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
    return onnx_fail(c, "'%s' is not a tensor", vi->name);
  if (given) {
    *rank = given->rank;
    memcpy(dims, given->dims, sizeof(int64_t) * given->rank);
    return TINYML_OK;
  }
  if (!s) return onnx_fail(c, "'%s' is not a tensor with a known shape", vi->name);
  if (s->n_dim > TE_MAX_RANK)
    return onnx_fail(c, "'%s' has rank %zu (at most %d)", vi->name, s->n_dim, TE_MAX_RANK);
  *rank = (uint32_t)s->n_dim;
  for (size_t i = 0; i < s->n_dim; ++i) {
    dims[i] = dim_size(c, g, s->dim[i], i);
    if (dims[i] == 0 && !dim_static(s->dim[i]))
      return onnx_fail(c, "'%s' has %s dimension %zu; empty tensors are not supported", vi->name,
                       dim_static(s->dim[i]) ? "an empty" : "an unbound", i);
  }
  return TINYML_OK;
}

static tinyml_status_t invalid(onnx_ctx_t *c, const char *what, const char *name) {
  if (!c->error)
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_INVALID_ARGUMENT, "onnx: %s '%s'",
                                   what, name ? name : "(null)");
  return c->error;
}

/* An input_shapes entry must name a true input, with its declared rank
 * and its static dimensions. */
static tinyml_status_t check_shape_binding(onnx_ctx_t *c, const Onnx__GraphProto *g,
                                           const tinyml_input_shape_t *b) {
  const Onnx__ValueInfoProto *vi = NULL;
  for (size_t k = 0; b->input && (vi = true_input(g, &k));)
    if (strcmp(vi->name, b->input) == 0) break;
  if (!vi) return invalid(c, "input_shapes (--input-shape) names no input of the model:", b->input);
  const Onnx__TensorShapeProto *s = shape_of(vi);
  if (b->rank > TE_MAX_RANK || (b->rank && !b->dims) || (s && s->n_dim != b->rank))
    return invalid(c, "input_shapes (--input-shape) gives the wrong rank for input", b->input);
  for (uint32_t i = 0; i < b->rank; ++i) {
    if (b->dims[i] < 1 || b->dims[i] > (1LL << 31))
      return invalid(c, "input_shapes (--input-shape) has a size outside 1..2^31 for input",
                     b->input);
    if (s && dim_static(s->dim[i]) && s->dim[i]->dim_value != b->dims[i])
      return invalid(c, "input_shapes (--input-shape) contradicts a static dimension of input",
                     b->input);
    /* A name is one size everywhere: the graph may rely on it. */
    const tinyml_dim_binding_t *named = s ? dim_binding(c->bindings, dim_name(s->dim[i])) : NULL;
    if (named && named->value != b->dims[i])
      return invalid(c, "input_shapes (--input-shape) contradicts dims (--dim) for input",
                     b->input);
  }
  return TINYML_OK;
}

/* A dims entry must name a dim_param of some input, with a size in range. */
static tinyml_status_t check_dim_binding(onnx_ctx_t *c, const Onnx__GraphProto *g,
                                         const tinyml_dim_binding_t *b) {
  if (b->value < 1 || b->value > (1LL << 31))
    return invalid(c, "dims (--dim) has a size outside 1..2^31 for", b->name);
  const Onnx__ValueInfoProto *vi;
  for (size_t k = 0; b->name && (vi = true_input(g, &k));) {
    const Onnx__TensorShapeProto *s = shape_of(vi);
    for (size_t i = 0; s && i < s->n_dim; ++i)
      if (dim_name(s->dim[i]) && strcmp(dim_name(s->dim[i]), b->name) == 0) return TINYML_OK;
  }
  return invalid(c, "dims (--dim) names no dimension of the model's inputs:", b->name);
}

static void cut(strbuf_t *sb, size_t length) {
  sb->length = length;
  if (sb->data) sb->data[length] = '\0';
}

/* Appends " (input 'a' dim 1, input 'b' dim 2)" for every dynamic use of
 * `name` (NULL: of every unnamed dimension) that is unbound (defaulted =
 * 0) or defaulted to 1 (defaulted = 1); returns how many it found. */
static int list_uses(onnx_ctx_t *c, const Onnx__GraphProto *g, strbuf_t *sb, const char *name,
                     int defaulted) {
  int n = 0;
  const Onnx__ValueInfoProto *vi;
  for (size_t k = 0; (vi = true_input(g, &k));) {
    const Onnx__TensorShapeProto *s = shape_of(vi);
    if (!s || shape_binding(c->bindings, vi->name)) continue;
    if (s->n_dim == 1 && onnx_input_value(c, vi->name)) continue; /* its value sizes it */
    for (size_t i = 0; i < s->n_dim && i < TE_MAX_RANK; ++i) {
      dim_t *d = s->dim[i];
      if (dim_static(d) || dim_binding(c->bindings, dim_name(d))) continue;
      int is_default = dim_size(c, g, d, i) != 0;
      if (is_default != defaulted) continue;
      if (name ? !dim_name(d) || strcmp(dim_name(d), name) != 0 : dim_name(d) != NULL) continue;
      strbuf_printf(sb, "%sinput '%s' dim %zu", n++ ? ", " : " (", vi->name, i);
    }
  }
  if (n) strbuf_append(sb, ")");
  return n;
}

/* Whether `name` already appeared as dimension (k, i) or earlier. */
static int seen_before(const Onnx__GraphProto *g, const char *name, size_t k_end, size_t i_end) {
  for (size_t k = 0; k <= k_end && k < g->n_input; ++k) {
    const Onnx__TensorShapeProto *s = shape_of(g->input[k]);
    for (size_t i = 0; s && i < s->n_dim && (k < k_end || i < i_end); ++i)
      if (dim_name(s->dim[i]) && strcmp(dim_name(s->dim[i]), name) == 0) return 1;
  }
  return 0;
}

/* Lists each dynamic dimension, by name, that is unbound (defaulted = 0)
 * or defaulted to 1 (defaulted = 1). */
static void list_dims(onnx_ctx_t *c, const Onnx__GraphProto *g, strbuf_t *sb, int defaulted) {
  for (size_t k = 0; k < g->n_input; ++k) {
    const Onnx__TensorShapeProto *s = shape_of(g->input[k]);
    for (size_t i = 0; s && i < s->n_dim; ++i) {
      const char *name = dim_name(s->dim[i]);
      if (!name || seen_before(g, name, k, i)) continue;
      size_t mark = sb->length;
      strbuf_printf(sb, "%s'%s'", mark ? "; " : "", name);
      if (!list_uses(c, g, sb, name, defaulted)) cut(sb, mark);
    }
  }
  size_t mark = sb->length;
  strbuf_printf(sb, "%sunnamed", mark ? "; " : "");
  if (!list_uses(c, g, sb, NULL, defaulted)) cut(sb, mark);
}

static tinyml_status_t report(onnx_ctx_t *c, const Onnx__GraphProto *g) {
  strbuf_t sb;
  strbuf_init(&sb, c->allocator);
  list_dims(c, g, &sb, 0);
  if (sb.oom) onnx_oom(c);
  else if (sb.length)
    onnx_fail(c, "dynamic dimensions are unbound: %s; bind each name with --dim NAME=N "
              "(tinyml_compile_options_t.dims), or give the input's whole shape with "
              "--input-shape INPUT=D0,D1,... (input_shapes)", sb.data);
  cut(&sb, 0);
  if (!c->error && c->bindings && c->bindings->note) {
    list_dims(c, g, &sb, 1);
    if (sb.oom) onnx_oom(c);
    else if (sb.length) {
      char msg[600];
      snprintf(msg, sizeof msg, "onnx: dynamic first dimension compiled as 1: %s; bind it "
               "to change it", sb.data);
      c->bindings->note(c->bindings->note_user, msg);
    }
  }
  strbuf_free(&sb);
  return c->error;
}

tinyml_status_t onnx_check_input_dims(onnx_ctx_t *c, const Onnx__GraphProto *g) {
  const te_bindings_t *b = c->bindings;
  /* A second binding of the same name would be ignored: refuse it. */
  for (size_t i = 0; b && i < b->input_shape_count; ++i) {
    if (b->input_shapes[i].input && shape_binding(b, b->input_shapes[i].input) != &b->input_shapes[i])
      return invalid(c, "input_shapes (--input-shape) gives two shapes for input",
                     b->input_shapes[i].input);
    TINYML_RETURN_IF_ERROR(check_shape_binding(c, g, &b->input_shapes[i]));
  }
  for (size_t i = 0; b && i < b->dim_count; ++i) {
    if (b->dims[i].name && dim_binding(b, b->dims[i].name) != &b->dims[i])
      return invalid(c, "dims (--dim) binds a dimension twice:", b->dims[i].name);
    TINYML_RETURN_IF_ERROR(check_dim_binding(c, g, &b->dims[i]));
  }
  return report(c, g);
}
