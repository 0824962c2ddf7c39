/* Graph inputs whose value the model's declared shapes decide.  An op
 * whose output shape depends on an input's value (ConstantOfShape's
 * shape, OneHot's depth, TopK's K, ...) cannot be compiled from a graph
 * input; but where the declared static shape of the op's output admits
 * exactly one value of that input, the model has told us the value.  Only
 * such one-to-one rules are here: Reshape's -1/0, axes that may be
 * negative, Expand, Slice, Range or Pad map several values to one shape
 * and keep the bind hint.  A derived or empty input is pinned: it stays
 * in the signature with its value as `tinyml.fixed_value`, and the
 * runtime refuses other bytes, so the constant the lowering used is the
 * value the graph sees. */
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_derive.h"
#include "onnx_input_values.h"

typedef struct shape {
  const char *name; /* the declared value */
  uint32_t rank;
  int64_t dims[TE_MAX_RANK];
} shape_t;

/* The declared, fully static shape of `name` (a graph output or a
 * value_info of the graph being lowered); 0 if it has none. */
static int declared(const onnx_ctx_t *c, const char *name, shape_t *s) {
  const Onnx__GraphProto *g = c->graph;
  const Onnx__ValueInfoProto *vi = NULL;
  for (size_t i = 0; name && name[0] && i < g->n_output && !vi; ++i)
    if (g->output[i]->name && strcmp(g->output[i]->name, name) == 0) vi = g->output[i];
  for (size_t i = 0; name && name[0] && i < g->n_value_info && !vi; ++i)
    if (g->value_info[i]->name && strcmp(g->value_info[i]->name, name) == 0) vi = g->value_info[i];
  const Onnx__TypeProto *tp = vi ? vi->type : NULL;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type ||
      !tp->tensor_type->shape || tp->tensor_type->shape->n_dim > TE_MAX_RANK)
    return 0;
  const Onnx__TensorShapeProto *sp = tp->tensor_type->shape;
  for (size_t d = 0; d < sp->n_dim; ++d) {
    if (sp->dim[d]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
        sp->dim[d]->dim_value < 0)
      return 0;
    s->dims[d] = sp->dim[d]->dim_value;
  }
  s->name = name;
  s->rank = (uint32_t)sp->n_dim;
  return 1;
}

static int out_shape(onnx_ctx_t *c, uint32_t j, shape_t *s) {
  return j < c->node->n_output && declared(c, c->node->output[j], s);
}

/* Each rule writes the input's value into out[cap] and names the output
 * it read; it returns the element count, or -1 when the declared shapes
 * do not decide the value. */
typedef int64_t (*rule_fn)(onnx_ctx_t *c, int64_t *out, uint32_t cap, const char **from);

static int64_t output_dims(onnx_ctx_t *c, int64_t *out, uint32_t cap, const char **from) {
  shape_t s;
  if (!out_shape(c, 0, &s) || s.rank > cap) return -1;
  memcpy(out, s.dims, sizeof(int64_t) * s.rank);
  *from = s.name;
  return s.rank;
}

/* The output's size along attribute `axis` (default -1) of output j. */
static int64_t axis_dim(onnx_ctx_t *c, uint32_t j, int64_t *out, const char **from) {
  shape_t s;
  if (!out_shape(c, j, &s)) return -1;
  int32_t axis = onnx_axis(onnx_attr_int(c, "axis", -1), s.rank);
  if (axis < 0) return -1;
  out[0] = s.dims[axis];
  *from = s.name;
  return 1;
}

static int64_t onehot_depth(onnx_ctx_t *c, int64_t *out, uint32_t cap, const char **from) {
  (void)cap;
  return axis_dim(c, 0, out, from);
}

/* TopK's values and indices have one shape: either declared decides K,
 * and the two must agree. */
static int64_t topk_k(onnx_ctx_t *c, int64_t *out, uint32_t cap, const char **from) {
  (void)cap;
  int64_t k1;
  const char *from1;
  int64_t n = axis_dim(c, 0, out, from);
  if (axis_dim(c, 1, &k1, &from1) != 1) return n;
  if (n == 1 && k1 != out[0])
    return onnx_fail(c, "the declared shapes of '%s' and '%s' disagree on K (%lld and %lld)",
                     *from, from1, (long long)out[0], (long long)k1), -1;
  out[0] = k1;
  *from = from1;
  return 1;
}

static int64_t tile_repeats(onnx_ctx_t *c, int64_t *out, uint32_t cap, const char **from) {
  const onnx_value_t *x = onnx_input(c, 0);
  shape_t s;
  if (!x || !out_shape(c, 0, &s) || s.rank != x->rank || s.rank > cap) return -1;
  for (uint32_t d = 0; d < s.rank; ++d) {
    if (x->dims[d] <= 0 || s.dims[d] % x->dims[d]) return -1;
    out[d] = s.dims[d] / x->dims[d];
  }
  *from = s.name;
  return s.rank;
}

/* Every output must be declared: each gives one part. */
static int64_t split_parts(onnx_ctx_t *c, int64_t *out, uint32_t cap, const char **from) {
  const onnx_value_t *x = onnx_input(c, 0);
  int32_t axis = x ? onnx_axis(onnx_attr_int(c, "axis", 0), x->rank) : -1;
  if (axis < 0 || c->node->n_output > cap || onnx_attr(c, "num_outputs")) return -1;
  for (uint32_t j = 0; j < c->node->n_output; ++j) {
    shape_t s;
    if (!out_shape(c, j, &s) || s.rank != x->rank) return -1;
    out[j] = s.dims[axis];
    *from = s.name;
  }
  return c->node->n_output;
}

/* Only when nothing else sizes the output: no scales, no axes, and the
 * default aspect policy (the others round the sizes they are given). */
static int64_t resize_sizes(onnx_ctx_t *c, int64_t *out, uint32_t cap, const char **from) {
  const onnx_value_t *scales = onnx_input(c, 2);
  char policy[32];
  if (scales && (!scales->data || onnx_numel(scales->rank, scales->dims) != 0)) return -1;
  if (onnx_attr(c, "axes") ||
      strcmp(onnx_attr_string(c, "keep_aspect_ratio_policy", "stretch", policy, sizeof policy),
             "stretch") != 0)
    return -1;
  return output_dims(c, out, cap, from);
}

/* The windows' size is their length. */
static int64_t window_size(onnx_ctx_t *c, int64_t *out, uint32_t cap, const char **from) {
  shape_t s;
  (void)cap;
  if (!out_shape(c, 0, &s) || s.rank != 1) return -1;
  out[0] = s.dims[0];
  *from = s.name;
  return 1;
}

static const struct rule {
  const char *op;
  uint32_t input;
  int min_opset;
  rule_fn fn;
} kRules[] = {
    {"ConstantOfShape", 0, 9, output_dims},
    {"OneHot", 1, 9, onehot_depth},
    {"TopK", 1, 10, topk_k},
    {"Tile", 1, 6, tile_repeats},
    {"Split", 1, 13, split_parts},
    {"Resize", 3, 11, resize_sizes},
    {"HannWindow", 0, 17, window_size},
    {"HammingWindow", 0, 17, window_size},
    {"BlackmanWindow", 0, 17, window_size},
};

static const struct rule *find_rule(const onnx_ctx_t *c, uint32_t i) {
  const char *op = c->node->op_type ? c->node->op_type : "";
  const char *domain = c->node->domain ? c->node->domain : "";
  if (domain[0] && strcmp(domain, "ai.onnx") != 0) return NULL;
  for (size_t r = 0; r < sizeof kRules / sizeof kRules[0]; ++r)
    if (kRules[r].input == i && c->opset >= kRules[r].min_opset && strcmp(kRules[r].op, op) == 0)
      return &kRules[r];
  return NULL;
}

/* Whether v is an input of the main graph that no initializer gives,
 * carried in its own type (a float16 input computed in f32 is not). */
static int is_graph_input(const onnx_ctx_t *c, const onnx_value_t *v) {
  const Onnx__GraphProto *g = c->graph;
  const Onnx__ValueInfoProto *vi = NULL;
  if (c->graph_depth) return 0; /* a subgraph's outer reads: not its inputs */
  for (size_t i = 0; i < g->n_input && !vi; ++i)
    if (g->input[i]->name && strcmp(g->input[i]->name, v->name) == 0) vi = g->input[i];
  for (size_t i = 0; i < g->n_initializer && vi; ++i)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, v->name) == 0) return 0;
  return vi && vi->type && vi->type->tensor_type && vi->type->tensor_type->elem_type == v->dtype;
}

/* The values in v's dtype into buf; 0 when one does not fit it. */
static int to_dtype(const int64_t *vals, int64_t n, int32_t dtype, void *buf) {
  for (int64_t k = 0; k < n; ++k) {
    if (dtype == ONNX_INT64) {
      memcpy((int64_t *)buf + k, &vals[k], 8);
    } else if (dtype == ONNX_INT32 && vals[k] >= INT32_MIN && vals[k] <= INT32_MAX) {
      ((int32_t *)buf)[k] = (int32_t)vals[k];
    } else if (dtype == ONNX_FLOAT && vals[k] >= -(1 << 24) && vals[k] <= (1 << 24)) {
      ((float *)buf)[k] = (float)vals[k];
    } else {
      return 0;
    }
  }
  return 1;
}

static void print_values(char *out, size_t cap, const int64_t *vals, int64_t n) {
  size_t len = (size_t)snprintf(out, cap, "[");
  for (int64_t k = 0; k < n && len < cap; ++k)
    len += (size_t)snprintf(out + len, cap - len, "%s%lld", k ? ", " : "", (long long)vals[k]);
  if (len < cap) snprintf(out + len, cap - len, "]");
}

static const char *pinned_by(const onnx_ctx_t *c, const char *name) {
  for (uint32_t k = 0; k < c->pinned_count; ++k)
    if (strcmp(c->pinned_input[k], name) == 0) return c->pinned_by[k];
  return NULL;
}

int onnx_is_pinned(const onnx_ctx_t *c, const char *name) { return pinned_by(c, name) != NULL; }

static int record(onnx_ctx_t *c, const char *input, const char *by) {
  if (c->pinned_count == sizeof c->pinned_input / sizeof c->pinned_input[0]) return 0;
  c->pinned_input[c->pinned_count] = input;
  c->pinned_by[c->pinned_count++] = by;
  return 1;
}

/* v already holds a value (bound, or pinned by another use): the
 * derivation must give the same bytes. */
static int check_agrees(onnx_ctx_t *c, const onnx_value_t *v, const void *buf, size_t bytes,
                        const int64_t *vals, int64_t n, const char *from) {
  if (memcmp(v->data, buf, bytes) == 0) return 1;
  char text[256];
  print_values(text, sizeof text, vals, n);
  const char *other = pinned_by(c, v->name);
  if (other)
    onnx_fail(c, "the declared shape of '%s' needs input '%s' to be %s, but the declared shape "
              "of '%s' fixed it to another value", from, v->name, text, other);
  else
    onnx_fail(c, "the declared shape of '%s' needs input '%s' to be %s, but --input-value "
              "(input_values) binds it to another value", from, v->name, text);
  return 0;
}

static void note(onnx_ctx_t *c, const char *input, const int64_t *vals, int64_t n,
                 const char *from) {
  if (!c->bindings || !c->bindings->note) return;
  char text[256], msg[600];
  print_values(text, sizeof text, vals, n);
  snprintf(msg, sizeof msg, "onnx: input '%s' fixed to %s by the declared shape of '%s'; feed "
           "it that value", input, text, from);
  c->bindings->note(c->bindings->note_user, msg);
}

int onnx_derive_input(onnx_ctx_t *c, uint32_t i, onnx_value_t *v) {
  enum { kCap = 64 };
  int64_t vals[kCap];
  const char *from = NULL;
  const struct rule *r = c->node && c->graph ? find_rule(c, i) : NULL;
  if (!r || !v || !is_graph_input(c, v)) return 1;
  int64_t n = r->fn(c, vals, kCap, &from);
  if (c->error) return 0;
  size_t es = onnx_dtype_size(v->dtype);
  if (n < 0 || !es || n != onnx_numel(v->rank, v->dims)) return 1;
  uint8_t buf[kCap * 8];
  if (!to_dtype(vals, n, v->dtype, buf)) return 1;
  if (v->data) return check_agrees(c, v, buf, (size_t)n * es, vals, n, from);
  if (!record(c, v->name, from)) return 1;
  v->data = tinyml__calloc(c->allocator, (size_t)n + 1, es, 16);
  if (!v->data) return onnx_oom(c), 0;
  memcpy(v->data, buf, (size_t)n * es);
  note(c, v->name, vals, n, from);
  return 1;
}

int onnx_pin_empty(onnx_ctx_t *c, onnx_value_t *v) {
  size_t es = onnx_dtype_size(v->dtype);
  v->data = tinyml__calloc(c->allocator, 1, es ? es : 8, 16);
  if (!v->data) return onnx_oom(c), 0;
  if (!record(c, v->name, v->name)) {
    onnx_fail(c, "more than %zu graph inputs are pinned",
              sizeof c->pinned_input / sizeof c->pinned_input[0]);
    return 0;
  }
  return 1;
}
