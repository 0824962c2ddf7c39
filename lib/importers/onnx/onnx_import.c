/* The ONNX importer's driver: parse, collect initializers and inputs, lower
 * each node in order (ONNX graphs are topologically sorted), then write the
 * function signature around the body once every result type is known. */
#include "onnx_import.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "onnx_float_types.h"
#include "onnx_uint.h"
#include "onnx_inputs.h"
#include "onnx_derive.h"
#include "onnx_input_values.h"
#include "onnx_lower.h"

static const onnx_lowering_t *const kFamilies[] = {
    onnx_lowerings_elementwise, onnx_lowerings_activation, onnx_lowerings_nn, onnx_lowerings_norm, onnx_lowerings_shape,
    onnx_lowerings_shape_index, onnx_lowerings_resize,
    onnx_lowerings_reduce, onnx_lowerings_quant,
    onnx_lowerings_loss,
    onnx_lowerings_control,
    onnx_lowerings_rnn,
    onnx_lowerings_misc,
    onnx_lowerings_attention,
    onnx_lowerings_select,
    onnx_lowerings_sequence,
    onnx_lowerings_loop,
    onnx_lowerings_legacy,
    onnx_lowerings_scatter,
    onnx_lowerings_qms,
    onnx_lowerings_signal,
    onnx_lowerings_sample,
    onnx_lowerings_einsum,
    onnx_lowerings_text,
    onnx_lowerings_pool,
    onnx_lowerings_qpool,
};

/* ---- protobuf-c through the caller's allocator ------------------------ */

static void *pb_alloc(void *data, size_t size) {
  return tinyml__alloc((const tinyml_allocator_t *)data, size, 16);
}

static void pb_free(void *data, void *ptr) {
  tinyml__free((const tinyml_allocator_t *)data, ptr);
}

int onnx_looks_like(const void *bytes, size_t size) {
  const uint8_t *p = bytes;
  /* Field 1 (ir_version, varint) = 0x08; some writers start with field 7
   * (graph, bytes) = 0x3a or field 8 (opset_import) = 0x42. */
  return size >= 2 && (p[0] == 0x08 || p[0] == 0x3a || p[0] == 0x42 || p[0] == 0x12 ||
                       p[0] == 0x1a);
}

/* ---- values ------------------------------------------------------------ */

static onnx_value_t *find_value(onnx_ctx_t *c, const char *name) {
  for (uint32_t i = c->value_count; i-- > 0;)
    if (strcmp(c->values[i].name, name) == 0) return &c->values[i];
  return NULL;
}

/* Adds (or, for SSA-violating graphs, replaces) a named value. */
static onnx_value_t *add_value(onnx_ctx_t *c, const char *name) {
  onnx_value_t *v = find_value(c, name);
  if (v) {
    tinyml__free(c->allocator, v->data);
    memset(v, 0, sizeof *v);
    v->name = name;
    return v;
  }
  if (c->value_count == c->value_capacity) {
    uint32_t cap = c->value_capacity ? 2 * c->value_capacity : 64;
    onnx_value_t *nv = tinyml__calloc(c->allocator, cap, sizeof *nv, 8);
    if (!nv) return NULL;
    if (c->value_count) memcpy(nv, c->values, c->value_count * sizeof *nv);
    tinyml__free(c->allocator, c->values);
    c->values = nv;
    c->value_capacity = cap;
  }
  v = &c->values[c->value_count++];
  memset(v, 0, sizeof *v);
  v->name = name;
  return v;
}

tinyml_status_t onnx_fail(onnx_ctx_t *c, const char *fmt, ...) {
  if (c->error) return c->error;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char hint[sizeof msg];
  if (c->node && onnx_bind_hint(c, msg, hint, sizeof hint)) snprintf(msg, sizeof msg, "%s", hint);
  if (c->node)
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_UNSUPPORTED,
                                   "onnx: node %u (%s '%s'): %s", c->node_index,
                                   c->node->op_type ? c->node->op_type : "?",
                                   c->node->name ? c->node->name : "", msg);
  else
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_UNSUPPORTED, "onnx: %s", msg);
  return c->error;
}

tinyml_status_t onnx_oom(onnx_ctx_t *c) {
  if (!c->error)
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
  return c->error;
}

/* ---- types ------------------------------------------------------------- */

int onnx_te_elem(int32_t dtype, te_elem_t *elem) {
  switch (dtype) {
    case ONNX_FLOAT: *elem = TE_F32; return 1;
    case ONNX_UINT8: case ONNX_INT8: *elem = TE_I8; return 1;
    case ONNX_INT16: *elem = TE_I16; return 1;
    case ONNX_INT32: *elem = TE_I32; return 1;
    case ONNX_INT64: *elem = TE_I64; return 1;
    case ONNX_BOOL: *elem = TE_I1; return 1;
    default: return 0;
  }
}

int32_t onnx_dtype_of(te_elem_t elem) {
  switch (elem) {
    case TE_F32: return ONNX_FLOAT;
    case TE_I8: return ONNX_INT8;
    case TE_I16: return ONNX_INT16;
    case TE_I32: return ONNX_INT32;
    case TE_I64: return ONNX_INT64;
    case TE_I1: return ONNX_BOOL;
    default: return 0;
  }
}

size_t onnx_dtype_size(int32_t dtype) {
  switch (dtype) {
    case ONNX_FLOAT: case ONNX_INT32: return 4;
    case ONNX_UINT8: case ONNX_INT8: case ONNX_BOOL: return 1;
    case ONNX_INT16: return 2;
    case ONNX_INT64: return 8;
    default: return 0;
  }
}

const char *onnx_dtype_name(int32_t dtype) {
  static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16",
                                      "INT16", "INT32", "INT64", "STRING", "BOOL",
                                      "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64",
                                      "COMPLEX128", "BFLOAT16"};
  return dtype >= 0 && dtype < (int32_t)(sizeof names / sizeof names[0]) ? names[dtype]
                                                                         : "UNKNOWN";
}

int32_t onnx_axis(int64_t axis, uint32_t rank) {
  if (axis < 0) axis += rank;
  return axis < 0 || axis >= (int64_t)rank ? -1 : (int32_t)axis;
}

static int64_t numel(uint32_t rank, const int64_t *dims) { return onnx_numel(rank, dims); }

/* ---- constants --------------------------------------------------------- */

/* Counts `bytes` of constant `name` against max_tensor_bytes and
 * max_constant_bytes; 0 (after recording the error) when over one. */
int onnx_check_constant(onnx_ctx_t *c, const char *name, uint64_t bytes) {
  if (bytes > c->limits.max_tensor_bytes) {
    onnx_fail(c, "tensor '%s' is %llu bytes, more than max_tensor_bytes (%llu)", name,
              (unsigned long long)bytes, (unsigned long long)c->limits.max_tensor_bytes);
    return 0;
  }
  c->constant_bytes += bytes; /* each below 2^31: no overflow */
  if (c->constant_bytes > c->limits.max_constant_bytes) {
    onnx_fail(c, "constants reach %llu bytes at tensor '%s', more than max_constant_bytes (%llu)",
              (unsigned long long)c->constant_bytes, name,
              (unsigned long long)c->limits.max_constant_bytes);
    return 0;
  }
  return 1;
}

/* Copies a TensorProto's elements into host order; 0 on unsupported data. */
int onnx_decode_tensor(onnx_ctx_t *c, const Onnx__TensorProto *t, onnx_value_t *v) {
  if (onnx_is_wide_float(t->data_type) && !t->n_external_data &&
      (!t->has_data_location || t->data_location == 0))
    return onnx_decode_wide_float(c, t, v);
  size_t es = onnx_dtype_size(t->data_type);
  if (!es || t->n_dims > TE_MAX_RANK || t->n_external_data ||
      (t->has_data_location && t->data_location != 0)) {
    onnx_fail(c, "tensor '%s': %s data%s is not supported", t->name ? t->name : "",
              onnx_dtype_name(t->data_type), t->n_external_data ? " stored externally" : "");
    return 0;
  }
  v->dtype = t->data_type;
  v->rank = (uint32_t)t->n_dims;
  for (uint32_t i = 0; i < v->rank; ++i) {
    if (t->dims[i] < 0 || t->dims[i] > (1LL << 31)) {
      onnx_fail(c, "tensor '%s' has a bad dimension", t->name ? t->name : "");
      return 0;
    }
    v->dims[i] = t->dims[i];
  }
  int64_t n = numel(v->rank, v->dims);
  if (n > (1LL << 30) / (int64_t)es) {
    onnx_fail(c, "tensor '%s' is too large", t->name ? t->name : "");
    return 0;
  }
  /* The limits, on the claimed shape, before the data is copied. */
  if (!onnx_check_constant(c, t->name ? t->name : "", (uint64_t)n * es)) return 0;
  v->data = tinyml__calloc(c->allocator, (size_t)n + 1, es, 16);
  if (!v->data) return onnx_oom(c), 0;
  uint8_t *d = v->data;
  if (t->has_raw_data) {
    if (t->raw_data.len != (size_t)n * es) goto size_mismatch;
    if (t->raw_data.len) memcpy(d, t->raw_data.data, t->raw_data.len); /* empty: data NULL */
    return 1;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (t->data_type == ONNX_FLOAT) {
      if ((size_t)n != t->n_float_data) goto size_mismatch;
      memcpy(d + 4 * i, &t->float_data[i], 4);
    } else if (t->data_type == ONNX_INT64) {
      if ((size_t)n != t->n_int64_data) goto size_mismatch;
      memcpy(d + 8 * i, &t->int64_data[i], 8);
    } else {
      if ((size_t)n != t->n_int32_data) goto size_mismatch;
      int32_t x = t->int32_data[i];
      if (es == 4) memcpy(d + 4 * i, &x, 4);
      else if (es == 2) { int16_t h = (int16_t)x; memcpy(d + 2 * i, &h, 2); }
      else d[i] = (uint8_t)x;
    }
  }
  return 1;
size_mismatch:
  tinyml__free(c->allocator, v->data);
  v->data = NULL;
  onnx_fail(c, "tensor '%s' holds the wrong number of elements", t->name ? t->name : "");
  return 0;
}

static te_value_t materialise(onnx_ctx_t *c, onnx_value_t *v) {
  te_elem_t elem;
  if (v->dtype == ONNX_SEQUENCE) {
    onnx_fail(c, "value '%s' is a sequence or optional: those exist only at compile time", v->name);
    return (te_value_t){0};
  }
  if (!onnx_te_elem(v->dtype, &elem)) {
    onnx_fail(c, "value '%s' has unsupported type %s", v->name, onnx_dtype_name(v->dtype));
    return (te_value_t){0};
  }
  te_type_t t = te_type(elem, v->rank, v->dims);
  if (te_numel(&t) == 0) {
    onnx_fail(c, "value '%s' has no elements; empty tensors are not supported", v->name);
    return (te_value_t){0};
  }
  v->v = te_const(&c->e, &t, v->data);
  return v->v;
}

/* ---- operand and attribute access for the lowerings ---------------------- */

uint32_t onnx_input_count(onnx_ctx_t *c) { return (uint32_t)c->node->n_input; }
uint32_t onnx_output_count(onnx_ctx_t *c) { return (uint32_t)c->node->n_output; }

onnx_value_t *onnx_input(onnx_ctx_t *c, uint32_t i) {
  if (i >= c->node->n_input || !c->node->input[i][0]) return NULL;
  return find_value(c, c->node->input[i]);
}

te_value_t onnx_in(onnx_ctx_t *c, uint32_t i) {
  onnx_value_t *v = onnx_input(c, i);
  if (!v) {
    onnx_fail(c, "input %u is missing", i);
    return (te_value_t){0};
  }
  if (v->v.id) return v->v;
  if (v->data) return materialise(c, v);
  onnx_fail(c, "input %u ('%s') has no value", i, v->name);
  return (te_value_t){0};
}

const onnx_value_t *onnx_const_input(onnx_ctx_t *c, uint32_t i) {
  onnx_value_t *v = onnx_input(c, i);
  if (v && !onnx_derive_input(c, i, v)) return NULL;
  if (v && !v->data) c->wanted_const = i + 1;
  return v && v->data ? v : NULL;
}

const onnx_value_t *onnx_const_probe(onnx_ctx_t *c, uint32_t i) {
  onnx_value_t *v = onnx_input(c, i);
  return v && v->data ? v : NULL;
}

int64_t onnx_const_ints(onnx_ctx_t *c, uint32_t i, int64_t *out, uint32_t cap) {
  const onnx_value_t *v = onnx_const_input(c, i);
  if (!v || (v->dtype != ONNX_INT64 && v->dtype != ONNX_INT32)) return -1;
  int64_t n = numel(v->rank, v->dims);
  if (n > cap) return -1;
  for (int64_t k = 0; k < n; ++k) {
    if (v->dtype == ONNX_INT64) {
      memcpy(&out[k], (const uint8_t *)v->data + 8 * k, 8);
    } else {
      int32_t x;
      memcpy(&x, (const uint8_t *)v->data + 4 * k, 4);
      out[k] = x;
    }
  }
  return n;
}

int onnx_const_float(onnx_ctx_t *c, uint32_t i, float *out) {
  const onnx_value_t *v = onnx_const_input(c, i);
  if (!v || v->dtype != ONNX_FLOAT || numel(v->rank, v->dims) != 1) return 0;
  memcpy(out, v->data, 4);
  return 1;
}

static onnx_value_t *output_slot(onnx_ctx_t *c, uint32_t i) {
  if (i >= c->node->n_output || !c->node->output[i][0]) return NULL;
  /* Lowerings hold pointers to their inputs' data while they write outputs;
   * ONNX graphs are single-assignment, so a redefinition is refused. */
  if (find_value(c, c->node->output[i])) {
    onnx_fail(c, "'%s' is assigned more than once", c->node->output[i]);
    return NULL;
  }
  onnx_value_t *v = add_value(c, c->node->output[i]);
  if (!v) onnx_oom(c);
  return v;
}

tinyml_status_t onnx_set_out(onnx_ctx_t *c, uint32_t i, te_value_t tv) {
  return onnx_set_out_typed(c, i, tv, onnx_dtype_of(tv.type.elem));
}

tinyml_status_t onnx_set_out_typed(onnx_ctx_t *c, uint32_t i, te_value_t tv, int32_t dtype) {
  if (c->error) return c->error;
  if (!tv.id) return onnx_fail(c, "output %u was not computed", i);
  if (i >= c->node->n_output || !c->node->output[i][0]) return TINYML_OK; /* unused */
  /* Later lowerings divide by dimensions; an empty result stops here. */
  if (te_numel(&tv.type) == 0)
    return onnx_fail(c, "output %u has no elements; empty tensors are not supported", i);
  if (te_numel(&tv.type) > (1LL << 31)) return onnx_fail(c, "output %u is too large", i);
  /* An intermediate over the limit stops before any op consumes it. */
  uint64_t bytes = (uint64_t)te_numel(&tv.type) * (onnx_dtype_size(dtype) ? onnx_dtype_size(dtype) : 1);
  if (bytes > c->limits.max_tensor_bytes)
    return onnx_fail(c, "output %u '%s' is %llu bytes, more than max_tensor_bytes (%llu)", i,
                     c->node->output[i], (unsigned long long)bytes,
                     (unsigned long long)c->limits.max_tensor_bytes);
  onnx_value_t *v = output_slot(c, i);
  if (!v) return c->error ? c->error : onnx_oom(c);
  v->v = tv;
  v->dtype = dtype;
  v->rank = tv.type.rank;
  memcpy(v->dims, tv.type.dims, sizeof(int64_t) * tv.type.rank);
  return TINYML_OK;
}

tinyml_status_t onnx_set_out_const(onnx_ctx_t *c, uint32_t i, int32_t dtype, uint32_t rank,
                                   const int64_t *dims, const void *data) {
  if (c->error) return c->error;
  size_t es = onnx_dtype_size(dtype);
  if (!es || rank > TE_MAX_RANK) return onnx_fail(c, "unsupported constant result");
  if (i >= c->node->n_output || !c->node->output[i][0]) return TINYML_OK;
  int64_t n = numel(rank, dims);
  if (n < 0 || n > (1LL << 30) / (int64_t)es) return onnx_fail(c, "constant result is too large");
  if (!onnx_check_constant(c, c->node->output[i], (uint64_t)n * es)) return c->error;
  void *copy = tinyml__alloc(c->allocator, (size_t)n * es + 1, 16);
  if (!copy) return onnx_oom(c);
  if (n) memcpy(copy, data, (size_t)n * es);
  onnx_value_t *v = output_slot(c, i);
  if (!v) {
    tinyml__free(c->allocator, copy);
    return c->error;
  }
  v->dtype = dtype;
  v->rank = rank;
  if (rank) memcpy(v->dims, dims, sizeof(int64_t) * rank); /* dims may be NULL at rank 0 */
  v->data = copy;
  return TINYML_OK;
}

const Onnx__AttributeProto *onnx_attr(onnx_ctx_t *c, const char *name) {
  for (size_t i = 0; i < c->node->n_attribute; ++i)
    if (c->node->attribute[i]->name && strcmp(c->node->attribute[i]->name, name) == 0)
      return c->node->attribute[i];
  return NULL;
}

int64_t onnx_attr_int(onnx_ctx_t *c, const char *name, int64_t def) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  return a && a->has_i ? a->i : def;
}

float onnx_attr_float(onnx_ctx_t *c, const char *name, float def) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  return a && a->has_f ? a->f : def;
}

int64_t onnx_attr_ints(onnx_ctx_t *c, const char *name, int64_t *out, uint32_t cap) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  if (!a) return -1;
  if (a->n_ints > cap) {
    onnx_fail(c, "attribute '%s' has too many values", name);
    return -1;
  }
  for (size_t k = 0; k < a->n_ints; ++k) out[k] = a->ints[k];
  return (int64_t)a->n_ints;
}

const char *onnx_attr_string(onnx_ctx_t *c, const char *name, const char *def, char *out,
                             size_t cap) {
  const Onnx__AttributeProto *a = onnx_attr(c, name);
  if (!a || !a->has_s) return def;
  size_t n = a->s.len < cap - 1 ? a->s.len : cap - 1;
  if (n) memcpy(out, a->s.data, n); /* an empty string's data may be NULL */
  out[n] = '\0';
  return out;
}

/* ---- the graph ------------------------------------------------------------ */

static int64_t default_opset(const Onnx__ModelProto *m) {
  for (size_t i = 0; i < m->n_opset_import; ++i) {
    const char *d = m->opset_import[i]->domain;
    if (!d || !d[0] || strcmp(d, "ai.onnx") == 0) return m->opset_import[i]->version;
  }
  return -1;
}

static int64_t domain_opset(const Onnx__ModelProto *m, const char *domain) {
  for (size_t i = 0; i < m->n_opset_import; ++i)
    if (m->opset_import[i]->domain && strcmp(m->opset_import[i]->domain, domain) == 0)
      return m->opset_import[i]->version;
  return -1;
}

static int is_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; ++i)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return 1;
  return 0;
}

static tinyml_status_t add_initializers(onnx_ctx_t *c, const Onnx__GraphProto *g) {
  if (g->n_sparse_initializer) return onnx_fail(c, "sparse initializers are not supported");
  for (size_t i = 0; i < g->n_initializer; ++i) {
    const Onnx__TensorProto *t = g->initializer[i];
    if (!t->name) return onnx_fail(c, "an initializer has no name");
    onnx_value_t *v = add_value(c, t->name);
    if (!v) return onnx_oom(c);
    if (!onnx_decode_tensor(c, t, v)) return c->error;
  }
  return TINYML_OK;
}

typedef struct io {
  uint32_t count;
  onnx_value_t **values; /* inputs: pointers into c->values (stable after setup) */
  uint32_t *ids;
  te_type_t *types;
} io_t;

static tinyml_status_t add_inputs(onnx_ctx_t *c, const Onnx__GraphProto *g, io_t *in) {
  in->types = tinyml__calloc(c->allocator, g->n_input + 1, sizeof(te_type_t), 8);
  in->ids = tinyml__calloc(c->allocator, g->n_input + 1, sizeof(uint32_t), 4);
  if (!in->types || !in->ids) return onnx_oom(c);
  TINYML_RETURN_IF_ERROR(onnx_check_input_values(c, g));
  TINYML_RETURN_IF_ERROR(onnx_check_input_dims(c, g));
  for (size_t i = 0; i < g->n_input; ++i) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    if (!vi->name) return onnx_fail(c, "a graph input has no name");
    if (is_initializer(g, vi->name)) continue; /* a default, overridable in ONNX: we fold it */
    uint32_t rank;
    int64_t dims[TE_MAX_RANK];
    te_elem_t elem = TE_F32;
    TINYML_RETURN_IF_ERROR(onnx_input_dims(c, g, vi, &rank, dims));
    int32_t dtype = vi->type->tensor_type->elem_type; /* a tensor: onnx_input_dims checked */
    if (!onnx_te_elem(dtype, &elem) && !onnx_is_wide_float(dtype) && !onnx_uint_elem(dtype, &elem))
      return onnx_fail(c, "input '%s' has unsupported type %s", vi->name, onnx_dtype_name(dtype));
    onnx_value_t *v = add_value(c, vi->name);
    if (!v) return onnx_oom(c);
    v->dtype = dtype;
    v->rank = rank;
    memcpy(v->dims, dims, sizeof(int64_t) * rank);
    /* A bound input is a constant like an initializer: not in the signature. */
    const tinyml_input_value_t *bound = onnx_input_value(c, vi->name);
    if (bound) {
      TINYML_RETURN_IF_ERROR(onnx_bind_input_value(c, vi, bound, v));
      continue;
    }
    /* A zero dimension leaves one possible value: no elements.  Lowerings
     * read it as a constant; a runtime use (v->v unset) refuses it. */
    if (onnx_numel(rank, dims) == 0 && !onnx_is_wide_float(dtype)) {
      if (!onnx_pin_empty(c, v)) return c->error;
      in->types[in->count] = te_type(elem, rank, dims);
      in->ids[in->count++] = ++c->e.next_id;
      continue;
    }
    if (onnx_is_wide_float(dtype)) {
      TINYML_RETURN_IF_ERROR(onnx_check_wide(c, dtype, vi->name));
      /* Their conversion to f32 is a TOSA op, which takes no empty tensor. */
      if (onnx_numel(rank, dims) == 0 && dtype != ONNX_DOUBLE)
        return onnx_fail(c, "input '%s' is an empty %s tensor; empty 16-bit float inputs are not "
                            "supported", vi->name, onnx_dtype_name(dtype));
      v->dtype = ONNX_FLOAT; /* computed in f32 */
      v->v = onnx_boundary_in(c, dtype, rank, dims, &in->types[in->count], &in->ids[in->count]);
      in->count++;
      continue;
    }
    v->v = (te_value_t){++c->e.next_id, te_type(elem, rank, dims)};
    in->types[in->count] = v->v.type;
    in->ids[in->count++] = v->v.id;
  }
  return TINYML_OK;
}

static const onnx_lowering_t *find_lowering(const char *op, int64_t opset, int *wrong_opset) {
  *wrong_opset = 0;
  for (size_t f = 0; f < sizeof kFamilies / sizeof kFamilies[0]; ++f)
    for (const onnx_lowering_t *l = kFamilies[f]; l->op_type; ++l)
      if (strcmp(l->op_type, op) == 0) {
        if (opset >= l->min_opset && opset <= l->max_opset) return l;
        *wrong_opset = 1;
      }
  return NULL;
}

/* Every op the lowering writes is located at "OP_TYPE name" (the node's
 * name, else its first output's). */
static void set_loc(onnx_ctx_t *c) {
  const Onnx__NodeProto *n = c->node;
  const char *name = n->name && n->name[0] ? n->name : n->n_output ? n->output[0] : NULL;
  te_set_loc(&c->e, n->op_type, name);
}

static tinyml_status_t lower_nodes(onnx_ctx_t *c, const Onnx__GraphProto *g) {
  for (size_t k = 0; k < g->n_node && !c->error; ++k) {
    c->node = g->node[k];
    c->node_index = (uint32_t)k;
    const char *op = c->node->op_type ? c->node->op_type : "";
    const char *domain = c->node->domain ? c->node->domain : "";
    if (strcmp(domain, "ai.onnx.preview.training") == 0) {
      set_loc(c);
      TINYML_RETURN_IF_ERROR(onnx_lower_training(c));
      continue;
    }
    if (c->opset == 0)
      return onnx_fail(c, "the model imports no default-domain opset");
    c->graph = g;
    if (strcmp(domain, "com.microsoft") == 0 && onnx_qms_op(op)) domain = "";
    if (strcmp(domain, "com.microsoft") == 0 && onnx_qpool_op(op)) domain = "";
    if (domain[0] && strcmp(domain, "ai.onnx") != 0)
      return onnx_fail(c, "operators of domain '%s' are not supported", domain);
    int wrong_opset;
    const onnx_lowering_t *l = find_lowering(op, c->opset, &wrong_opset);
    if (!l)
      return wrong_opset ? onnx_fail(c, "not supported at opset %lld", (long long)c->opset)
                         : onnx_fail(c, "operator not supported");
    set_loc(c);
    c->wanted_const = 0;
    TINYML_RETURN_IF_ERROR(onnx_uint_check_node(c));
    TINYML_RETURN_IF_ERROR(l->fn(c));
    for (size_t j = 0; j < c->node->n_output && !c->error; ++j)
      if (c->node->output[j][0] && !find_value(c, c->node->output[j]))
        return onnx_fail(c, "output %zu was not produced", j);
  }
  c->node = NULL;
  te_set_loc(&c->e, NULL, NULL);
  return c->error;
}

tinyml_status_t onnx_lower_graph(onnx_ctx_t *c, const Onnx__GraphProto *g) {
  const Onnx__NodeProto *node = c->node;
  uint32_t index = c->node_index;
  uint32_t wanted = c->wanted_const;
  const Onnx__GraphProto *graph = c->graph;
  /* Each level is a C stack frame or three; a hostile file can nest deep. */
  if (c->graph_depth >= 32) return onnx_fail(c, "subgraphs nested more than 32 deep");
  for (size_t i = 0; i < g->n_initializer && !c->error; ++i) {
    const char *name = g->initializer[i]->name;
    /* Replacing an outer value would change it for the rest of the graph. */
    if (!name || find_value(c, name))
      return onnx_fail(c, "a subgraph initializer '%s' has no name or hides an outer value",
                       name ? name : "");
  }
  c->graph_depth++;
  tinyml_status_t st = add_initializers(c, g);
  if (!st) st = lower_nodes(c, g);
  c->graph_depth--;
  c->node = node;
  c->node_index = index;
  c->wanted_const = wanted;
  c->graph = graph;
  if (node) set_loc(c);
  return st;
}

onnx_value_t *onnx_find(onnx_ctx_t *c, const char *name) { return find_value(c, name); }

onnx_value_t *onnx_out_slot(onnx_ctx_t *c, uint32_t i) { return output_slot(c, i); }

onnx_value_t *onnx_push_value(onnx_ctx_t *c, const char *name) {
  /* A fresh entry even when the name exists: find_value sees the newest. */
  if (c->value_count == c->value_capacity) {
    uint32_t cap = c->value_capacity ? 2 * c->value_capacity : 64;
    onnx_value_t *nv = tinyml__calloc(c->allocator, cap, sizeof *nv, 8);
    if (!nv) return onnx_oom(c), NULL;
    if (c->value_count) memcpy(nv, c->values, c->value_count * sizeof *nv);
    tinyml__free(c->allocator, c->values);
    c->values = nv;
    c->value_capacity = cap;
  }
  onnx_value_t *v = &c->values[c->value_count++];
  memset(v, 0, sizeof *v);
  v->name = name;
  return v;
}

void onnx_pop_values(onnx_ctx_t *c, uint32_t mark) {
  while (c->value_count > mark) tinyml__free(c->allocator, c->values[--c->value_count].data);
}

te_value_t onnx_runtime(onnx_ctx_t *c, onnx_value_t *v) {
  return v->v.id ? v->v : materialise(c, v);
}

static void put_name_attrs_open(strbuf_t *sb, const char *name, int32_t dtype) {
  strbuf_append(sb, " {tinyml.name = ");
  strbuf_mlir_string(sb, name);
  if (dtype == ONNX_UINT8 || onnx_is_wide_uint(dtype)) strbuf_append(sb, ", tinyml.unsigned");
}

static void put_name_attr(strbuf_t *sb, const char *name, int32_t dtype) {
  put_name_attrs_open(sb, name, dtype);
  strbuf_append(sb, "}");
}

/* A pinned input's attributes also hold the only value it may take. */
static void put_input_attrs(te_t *e, const char *name, const onnx_value_t *v,
                            const te_type_t *t, int pinned) {
  put_name_attrs_open(e->sb, name, v->dtype);
  if (pinned) {
    strbuf_append(e->sb, ", tinyml.fixed_value = ");
    te_print_dense(e, t, v->data);
  }
  strbuf_append(e->sb, "}");
}

/* Writes the whole function: signature (now that result types are known),
 * the body the lowerings wrote, and the return. */
static tinyml_status_t assemble(onnx_ctx_t *c, const Onnx__GraphProto *g, const io_t *in,
                                const strbuf_t *body, strbuf_t *out) {
  te_t e = {.sb = out};
  te_value_t *res = tinyml__calloc(c->allocator, g->n_output + 1, sizeof(te_value_t), 8);
  if (!res) return onnx_oom(c);
  strbuf_append(out, "module {\n  func.func @main(");
  uint32_t k = 0;
  for (size_t i = 0; i < g->n_input; ++i) {
    if (is_initializer(g, g->input[i]->name)) continue;
    if (onnx_input_value(c, g->input[i]->name)) continue;
    strbuf_printf(out, "%s%%v%u: ", k ? ", " : "", in->ids[k]);
    te_print_type(&e, &in->types[k]);
    put_input_attrs(&e, g->input[i]->name, find_value(c, g->input[i]->name), &in->types[k],
                    onnx_is_pinned(c, g->input[i]->name));
    ++k;
  }
  strbuf_append(out, ") -> (");
  tinyml_status_t st = TINYML_OK;
  for (size_t i = 0; i < g->n_output && !st; ++i) {
    onnx_value_t *v = g->output[i]->name ? find_value(c, g->output[i]->name) : NULL;
    if (!v) {
      st = onnx_fail(c, "graph output '%s' is never computed", g->output[i]->name);
      break;
    }
    res[i] = v->v.id ? v->v : materialise(c, v);
    if (!res[i].id) {
      st = c->error;
      break;
    }
    if (i) strbuf_append(out, ", ");
    te_print_type(&e, &res[i].type);
    put_name_attr(out, g->output[i]->name, v->dtype);
  }
  if (!st) {
    strbuf_append(out, ") {\n");
    if (body->length) strbuf_append(out, body->data);
    strbuf_append(out, "    return");
    for (size_t i = 0; i < g->n_output; ++i) strbuf_printf(out, "%s %%v%u", i ? "," : "", res[i].id);
    strbuf_append(out, " : ");
    for (size_t i = 0; i < g->n_output; ++i) {
      if (i) strbuf_append(out, ", ");
      te_print_type(&e, &res[i].type);
    }
    strbuf_append(out, "\n  }\n}\n");
  }
  tinyml__free(c->allocator, res);
  return st;
}

static void free_ctx(onnx_ctx_t *c) {
  for (uint32_t i = 0; i < c->value_count; ++i) tinyml__free(c->allocator, c->values[i].data);
  tinyml__free(c->allocator, c->values);
}

static tinyml_status_t import_graph(onnx_ctx_t *c, const Onnx__ModelProto *m, strbuf_t *body,
                                    strbuf_t *out) {
  const Onnx__GraphProto *g = m->graph;
  if (!g) return onnx_fail(c, "the model has no graph");
  c->graph = g;
  c->opset = default_opset(m);
  c->training_opset = domain_opset(m, "ai.onnx.preview.training");
  /* A model of training operators alone imports no default opset: 0 then
   * refuses any default-domain node it has (lower_nodes). */
  int training_only = c->opset == -1 && c->training_opset >= 1;
  if (training_only) c->opset = 0;
  /* A model importing only other domains (training_only is handled above):
   * say which rather than report an opset of -1. */
  if (c->opset == -1 && m->n_opset_import)
    return onnx_fail(c, "the model imports no default-domain opset (it imports domain '%s')",
                     m->opset_import[0]->domain ? m->opset_import[0]->domain : "");
  /* Each lowering states the opsets it implements; these bounds only
   * reject nonsense. */
  if ((c->opset < 1 && !training_only) || c->opset > 23)
    return onnx_fail(c, "default-domain opset %lld is not supported (1 to 23 are)",
                     (long long)c->opset);
  if (g->n_output == 0) return onnx_fail(c, "the graph has no outputs");
  if (g->n_node > c->limits.max_ops)
    return onnx_fail(c, "the graph has %zu nodes, more than max_ops (%llu)", g->n_node,
                     (unsigned long long)c->limits.max_ops);
  io_t in = {0};
  tinyml_status_t st = add_initializers(c, g);
  if (!st) st = add_inputs(c, g, &in);
  if (!st) st = lower_nodes(c, g);
  if (!st) st = onnx_convert_outputs(c, g);
  if (!st) st = assemble(c, g, &in, body, out);
  tinyml__free(c->allocator, in.types);
  tinyml__free(c->allocator, in.ids);
  return st ? st : c->error;
}

tinyml_status_t onnx_import(const void *bytes, size_t size,
                            const tinyml_allocator_t *allocator, char **text,
                            size_t *length) {
  return onnx_import_limited(bytes, size, NULL, allocator, text, length);
}

tinyml_status_t onnx_import_limited(const void *bytes, size_t size, const te_limits_t *limits,
                                    const tinyml_allocator_t *allocator, char **text,
                                    size_t *length) {
  return onnx_import_bound(bytes, size, limits, NULL, allocator, text, length);
}

tinyml_status_t onnx_import_bound(const void *bytes, size_t size, const te_limits_t *limits,
                                  const te_bindings_t *bindings,
                                  const tinyml_allocator_t *allocator, char **text,
                                  size_t *length) {
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  *text = NULL;
  *length = 0;
  onnx_ctx_t scan = {.allocator = &a, .limits = te_limits_resolve(limits)};
  TINYML_RETURN_IF_ERROR(onnx_prescan(&scan, bytes, size));
  ProtobufCAllocator pa = {pb_alloc, pb_free, &a};
  Onnx__ModelProto *m = onnx__model_proto__unpack(&pa, size, bytes);
  if (!m)
    return tinyml__status_make(&a, TINYML_STATUS_INVALID_MODEL,
                               "onnx: unrecognised model format: not TFLite, not TOSA "
                               "text, and not a valid ONNX ModelProto");
  strbuf_t body, out;
  strbuf_init(&body, &a);
  strbuf_init(&out, &a);
  onnx_ctx_t c = {.allocator = &a, .e = {.sb = &body}, .limits = te_limits_resolve(limits),
                  .bindings = bindings};
  tinyml_status_t st = import_graph(&c, m, &body, &out);
  if (!st && (body.oom || out.oom)) st = onnx_oom(&c);
  if (!st) {
    *text = strbuf_take(&out, length);
    if (!*text) st = onnx_oom(&c);
  }
  if (st != c.error && c.error) tinyml_status_free(c.error);
  strbuf_free(&body);
  strbuf_free(&out);
  free_ctx(&c);
  onnx__model_proto__free_unpacked(m, &pa);
  return st;
}
