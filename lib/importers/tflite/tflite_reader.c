/* tfl_read: verifies a TFLite FlatBuffer and decodes subgraph 0.
 *
 * The bytes are read through the bounds-checked primitives of tflite_fb.h.
 * The reader turns their fb_err_t into statuses naming the object and
 * field. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/common/status.h"
#include "tflite_fb.h"
#include "tflite_reader.h"

/* Caps on counts, so a corrupt count cannot ask for a giant allocation.
 * Counts are also bounded by the bytes present (4 per element at least),
 * but the decoded structs are ~25 times larger than that. */
#define MAX_COUNT 1000000u
#define MAX_RANK 8u
/* At most 2^59 elements per shape, so that a consumer can compute any
 * tensor's byte size (16 bytes per element at most) in an int64_t. */
#define MAX_ELEMENTS (UINT64_C(1) << 59)
/* A FlatBuffer may point many entries at one table, vector or string, so a
 * small file could make a naive reader copy or scan the same bytes millions
 * of times.  Decoding therefore gets a budget: bytes allocated plus bytes
 * scanned without allocating, at most BUDGET_PER_BYTE per file byte plus
 * BUDGET_BASE.  Real models stay well under it: a 104-byte tensor struct
 * comes from at least 8 bytes of file (an offset and a table). */
#define BUDGET_PER_BYTE 32u
#define BUDGET_BASE (1u << 20)

/* ------------------------------------------------------------------------
 * Reader plumbing: the same primitives, failing with a status that names
 * the object (`what`, e.g. "subgraph 0 tensor 12") and field (`name`).
 * ---------------------------------------------------------------------- */

typedef struct reader {
  fb_t b;
  const tinyml_allocator_t *user; /* as given, for statuses */
  tinyml_allocator_t alloc;       /* resolved, for the model */
  uint64_t budget;                /* what decoding may still cost, in bytes */
} reader_t;

static tinyml_status_t bad(reader_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static tinyml_status_t bad(reader_t *r, const char *fmt, ...) {
  char message[320];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  return tinyml__status_make(r->user, TINYML_STATUS_INVALID_MODEL,
                             "tflite: %s", message);
}

static tinyml_status_t fb_bad(reader_t *r, const char *what,
                              const char *name, fb_err_t e) {
  return bad(r, "%s: %s: %s", what, name, fb_err_text[e]);
}

static tinyml_status_t out_of_memory(reader_t *r, const char *what,
                                     uint64_t bytes) {
  return tinyml__status_make(r->user, TINYML_STATUS_OUT_OF_MEMORY,
                             "tflite: out of memory for %s (%" PRIu64 " bytes)",
                             what, bytes);
}

/* Charges `bytes` of work for `what` against the budget. */
static tinyml_status_t spend(reader_t *r, uint64_t bytes, const char *what) {
  if (bytes > r->budget)
    return bad(r, "decoding %s takes the work past %u bytes per byte of the "
               "file: too many entries share one table, vector or string",
               what, BUDGET_PER_BYTE);
  r->budget -= bytes;
  return TINYML_OK;
}

/* Allocates count * size zeroed bytes; *out = NULL (and OK) when count is
 * 0, so empty arrays cost no allocation. */
static tinyml_status_t alloc_array(reader_t *r, uint32_t count,
                                   size_t size, size_t align, const char *what,
                                   void **out) {
  *out = NULL;
  if (!count) return TINYML_OK;
  TINYML_RETURN_IF_ERROR(spend(r, (uint64_t)count * size, what));
  *out = tinyml__calloc(&r->alloc, count, size, align);
  if (!*out) return out_of_memory(r, what, (uint64_t)count * size);
  return TINYML_OK;
}

/* Scalar field `id` of `n` bytes, zero-extended; `def` when absent. */
static tinyml_status_t scalar(reader_t *r, const tbl_t *t, unsigned id,
                              unsigned n, uint64_t def, const char *what,
                              const char *name, uint64_t *out) {
  uint64_t at;
  *out = def; /* also on failure, which keeps gcc's flow analysis happy */
  fb_err_t e = fb_field_at(&r->b, t, id, n, &at);
  if (e) return fb_bad(r, what, name, e);
  if (at) *out = fb_load(&r->b, at, n);
  return TINYML_OK;
}

static tinyml_status_t vector(reader_t *r, const tbl_t *t, unsigned id,
                              uint32_t elem_size, const char *what,
                              const char *name, vec_t *v) {
  fb_err_t e = fb_field_vector(&r->b, t, id, elem_size, v);
  return e ? fb_bad(r, what, name, e) : TINYML_OK;
}

static tinyml_status_t table(reader_t *r, const tbl_t *t, unsigned id,
                             const char *what, const char *name, tbl_t *out,
                             int *present) {
  fb_err_t e = fb_field_table(&r->b, t, id, out, present);
  return e ? fb_bad(r, what, name, e) : TINYML_OK;
}

/* A vector of tables: `name` names the vector, entry `i` is read. */
static tinyml_status_t element(reader_t *r, const vec_t *v, uint32_t i,
                               const char *what, const char *name, tbl_t *t) {
  uint64_t pos;
  fb_err_t e = fb_follow(&r->b, v->pos + 4 * (uint64_t)i, &pos);
  if (!e) e = fb_open_table(&r->b, pos, t);
  return e ? bad(r, "%s: %s %" PRIu32 ": %s", what, name, i, fb_err_text[e])
           : TINYML_OK;
}

static tinyml_status_t check_count(reader_t *r, const vec_t *v,
                                   const char *what, const char *name) {
  if (v->count > MAX_COUNT)
    return bad(r, "%s: %" PRIu32 " %s exceed the maximum %u", what, v->count,
               name, MAX_COUNT);
  return TINYML_OK;
}

/* Copies the string in field `id`; absent gives "" or, with `null_if_absent`,
 * NULL. */
static tinyml_status_t string(reader_t *r, const tbl_t *t, unsigned id,
                              const char *what, const char *name,
                              int null_if_absent, char **out) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, t, id, 1, what, name, &v));
  if (v.present && (v.count >= r->b.size - v.pos || r->b.data[v.pos + v.count]))
    return fb_bad(r, what, name, FB_STRING_NUL);
  if (!v.present && null_if_absent) return TINYML_OK;
  TINYML_RETURN_IF_ERROR(spend(r, (uint64_t)v.count + 1, name));
  char *s = tinyml__alloc(&r->alloc, (size_t)v.count + 1, 1);
  if (!s) return out_of_memory(r, name, (uint64_t)v.count + 1);
  if (v.count) memcpy(s, r->b.data + v.pos, v.count);
  s[v.count] = '\0';
  *out = s;
  return TINYML_OK;
}

static int32_t i32_at(reader_t *r, const vec_t *v, uint32_t i) {
  return fb_as_i32(fb_load(&r->b, v->pos + 4 * (uint64_t)i, 4));
}

/* Copies an int vector into a new array (NULL when empty). */
static tinyml_status_t copy_i32(reader_t *r, const vec_t *v,
                                const char *name, int32_t **out) {
  void *p;
  TINYML_RETURN_IF_ERROR(alloc_array(r, v->count, sizeof(int32_t),
                                     _Alignof(int32_t), name, &p));
  int32_t *a = p;
  for (uint32_t i = 0; i < v->count; i++) a[i] = i32_at(r, v, i);
  *out = a;
  return TINYML_OK;
}

/* Every entry must index a tensor; -1 also passes with `allow_omitted`. */
static tinyml_status_t check_indices(reader_t *r, const vec_t *v,
                                     uint32_t tensor_count, int allow_omitted,
                                     const char *what, const char *name) {
  TINYML_RETURN_IF_ERROR(spend(r, 4 * (uint64_t)v->count, name));
  for (uint32_t i = 0; i < v->count; i++) {
    int32_t index = i32_at(r, v, i);
    if (index == -1 && allow_omitted) continue;
    if (index < 0 || (uint32_t)index >= tensor_count)
      return bad(r, "%s: %s[%" PRIu32 "] = %" PRId32 " is not a tensor index (%" PRIu32 " tensors)",
                 what, name, i, index, tensor_count);
  }
  return TINYML_OK;
}

/* ------------------------------------------------------------------------
 * Tensors
 * ---------------------------------------------------------------------- */

/* Bits per element, 0 when the size is not fixed (STRING, RESOURCE,
 * VARIANT) or the type is unknown. */
static unsigned type_bits(int32_t type) {
  static const uint8_t bits[] = {32, 16, 32, 8, 64, 0, 8, 16, 64, 8, 64, 128,
                                 64, 0, 0, 32, 16, 4, 16, 2, 4, 8, 8};
  if (type < 0 || (size_t)type >= sizeof(bits)) return 0;
  return bits[type];
}

/* The shape's element count, saturating at MAX_ELEMENTS + 1. */
static uint64_t element_count(const tfl_tensor_t *t) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t->rank; i++) {
    uint64_t d = (uint64_t)t->shape[i];
    if (d == 0) return 0;
    n = n > MAX_ELEMENTS / d ? MAX_ELEMENTS + 1 : n * d;
  }
  return n;
}

static tinyml_status_t read_shape(reader_t *r, const tbl_t *t,
                                  const char *what, tfl_tensor_t *out) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, t, 0, 4, what, "shape", &v));
  if (v.count > MAX_RANK)
    return bad(r, "%s: rank %" PRIu32 " exceeds the maximum %u", what, v.count,
               MAX_RANK);
  for (uint32_t i = 0; i < v.count; i++)
    if (i32_at(r, &v, i) < 0)
      return bad(r, "%s: dimension %" PRIu32 " is negative (%" PRId32 ")", what,
                 i, i32_at(r, &v, i));
  TINYML_RETURN_IF_ERROR(copy_i32(r, &v, "shape", &out->shape));
  out->rank = v.count;
  if (element_count(out) > MAX_ELEMENTS)
    return bad(r, "%s: shape has more than 2^59 elements", what);
  /* shape_signature repeats the shape with -1 for unknown dimensions. */
  TINYML_RETURN_IF_ERROR(vector(r, t, 7, 4, what, "shape_signature", &v));
  if (v.count > MAX_RANK)
    return bad(r, "%s: shape_signature rank %" PRIu32 " exceeds the maximum %u",
               what, v.count, MAX_RANK);
  for (uint32_t i = 0; i < v.count; i++) {
    int32_t d = i32_at(r, &v, i);
    if (d < -1)
      return bad(r, "%s: shape_signature[%" PRIu32 "] is %" PRId32, what, i, d);
    if (d == -1) out->has_dynamic_dims = 1;
  }
  return TINYML_OK;
}

static tinyml_status_t copy_quant(reader_t *r, const vec_t *scale,
                                  const vec_t *zero_point, tfl_quant_t *q) {
  void *p;
  TINYML_RETURN_IF_ERROR(alloc_array(r, scale->count, sizeof(float),
                                     _Alignof(float), "scale", &p));
  q->scale = p;
  q->scale_count = scale->count;
  for (uint32_t i = 0; i < scale->count; i++) {
    uint32_t bits = (uint32_t)fb_load(&r->b, scale->pos + 4 * (uint64_t)i, 4);
    memcpy(&q->scale[i], &bits, sizeof(bits));
  }
  TINYML_RETURN_IF_ERROR(alloc_array(r, zero_point->count, sizeof(int64_t),
                                     _Alignof(int64_t), "zero_point", &p));
  q->zero_point = p;
  q->zero_point_count = zero_point->count;
  for (uint32_t i = 0; i < zero_point->count; i++)
    q->zero_point[i] = fb_sext(fb_load(&r->b, zero_point->pos + 8 * (uint64_t)i, 8), 8);
  return TINYML_OK;
}

/* A NaN or infinite scale has no meaning, and turning one into integer
 * multipliers downstream would be undefined behaviour. */
static tinyml_status_t check_scales(reader_t *r, const char *what,
                                    const tfl_quant_t *q) {
  for (uint32_t i = 0; i < q->scale_count; i++) {
    uint32_t bits;
    memcpy(&bits, &q->scale[i], sizeof(bits));
    if ((bits & 0x7f800000u) == 0x7f800000u)
      return bad(r, "%s: scale[%" PRIu32 "] is not finite (bits 0x%08" PRIx32 ")",
                 what, i, bits);
  }
  return TINYML_OK;
}

/* Per-channel parameters need a dimension with one entry per parameter. */
static tinyml_status_t check_quant_dim(reader_t *r, const char *what,
                                       tfl_tensor_t *t) {
  tfl_quant_t *q = &t->quant;
  if (q->scale_count <= 1) return TINYML_OK;
  /* A 1-D tensor can only be quantised along dimension 0; some converters
   * wrote the weights' dimension on per-channel biases (TFLM's original
   * person_detect has 3), which TFLM ignores, so that is corrected. */
  if (t->rank == 1 && (uint32_t)t->shape[0] == q->scale_count)
    q->quantized_dimension = 0;
  int32_t d = q->quantized_dimension;
  if (d < 0 || (uint32_t)d >= t->rank)
    return bad(r, "%s: quantized_dimension %" PRId32 " is out of range for rank %" PRIu32,
               what, d, t->rank);
  if ((uint32_t)t->shape[d] != q->scale_count)
    return bad(r, "%s: %" PRIu32 " scales but dimension %" PRId32 " has size %" PRId32,
               what, q->scale_count, d, t->shape[d]);
  return TINYML_OK;
}

static tinyml_status_t read_quant(reader_t *r, const tbl_t *t,
                                  const char *what, tfl_tensor_t *out) {
  tbl_t qt, details;
  vec_t scale, zero_point;
  uint64_t details_type, dim;
  int present;
  TINYML_RETURN_IF_ERROR(table(r, t, 4, what, "quantization", &qt, &present));
  if (!present) return TINYML_OK;
  TINYML_RETURN_IF_ERROR(vector(r, &qt, 2, 4, what, "scale", &scale));
  TINYML_RETURN_IF_ERROR(vector(r, &qt, 3, 8, what, "zero_point", &zero_point));
  TINYML_RETURN_IF_ERROR(scalar(r, &qt, 4, 1, 0, what, "details_type", &details_type));
  TINYML_RETURN_IF_ERROR(table(r, &qt, 5, what, "details", &details, &present));
  TINYML_RETURN_IF_ERROR(scalar(r, &qt, 6, 4, 0, what, "quantized_dimension", &dim));
  if (scale.count && zero_point.count && scale.count != zero_point.count)
    return bad(r, "%s: %" PRIu32 " scales but %" PRIu32 " zero points", what,
               scale.count, zero_point.count);
  out->quant.has_details = details_type != 0;
  out->quant.quantized_dimension = fb_as_i32(dim);
  TINYML_RETURN_IF_ERROR(copy_quant(r, &scale, &zero_point, &out->quant));
  TINYML_RETURN_IF_ERROR(check_scales(r, what, &out->quant));
  return check_quant_dim(r, what, out);
}

/* The bytes of buffer `index`: its data vector or, when its offset field is
 * above 1 (models over 2 GiB), `size` bytes at file offset `offset`. */
static tinyml_status_t buffer_data(reader_t *r, const vec_t *buffers,
                                   uint32_t index, tfl_tensor_t *out) {
  char what[40];
  snprintf(what, sizeof(what), "buffer %" PRIu32, index);
  tbl_t t;
  vec_t data;
  uint64_t offset, size;
  TINYML_RETURN_IF_ERROR(element(r, buffers, index, "model", "buffer", &t));
  TINYML_RETURN_IF_ERROR(vector(r, &t, 0, 1, what, "data", &data));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 1, 8, 0, what, "offset", &offset));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 2, 8, 0, what, "size", &size));
  if (offset > 1) {
    if (offset > r->b.size || size > r->b.size - offset)
      return bad(r, "%s: %" PRIu64 " bytes at offset %" PRIu64 " lie outside the file (%" PRIu64 " bytes)",
                 what, size, offset, r->b.size);
    data.pos = offset;
    data.count = 0;
  } else {
    size = data.count;
  }
  out->data = size ? r->b.data + data.pos : NULL;
  out->data_size = (size_t)size; /* <= the file size, so it fits */
  return TINYML_OK;
}

/* Constant data must be as large as its shape and type say, when both are
 * known. */
static tinyml_status_t check_data_size(reader_t *r, const char *what,
                                       const tfl_tensor_t *t) {
  unsigned bits = type_bits(t->type);
  if (!t->data || !bits || t->has_dynamic_dims) return TINYML_OK;
  uint64_t n = element_count(t); /* <= 2^59 by now, so no overflow below */
  uint64_t bytes = bits >= 8 ? n * (bits / 8) : (n * bits + 7) / 8;
  /* Sub-byte types are accepted packed or one element per byte. */
  if (t->data_size == bytes || (bits < 8 && t->data_size == n)) return TINYML_OK;
  return bad(r, "%s: %zu data bytes do not match its shape and type %s (%" PRIu64 " bytes)",
             what, t->data_size, tfl_type_name(t->type), bytes);
}

static tinyml_status_t read_tensor_fields(reader_t *r, const tbl_t *t,
                                          const char *what, tfl_tensor_t *out) {
  uint64_t type, buffer, variable, external;
  tbl_t sparsity;
  TINYML_RETURN_IF_ERROR(string(r, t, 3, what, "name", 0, &out->name));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 1, 1, 0, what, "type", &type));
  out->type = fb_as_i8(type); /* TensorType is a signed byte */
  TINYML_RETURN_IF_ERROR(scalar(r, t, 2, 4, 0, what, "buffer", &buffer));
  out->buffer = (uint32_t)buffer;
  TINYML_RETURN_IF_ERROR(scalar(r, t, 5, 1, 0, what, "is_variable", &variable));
  out->is_variable = variable != 0;
  TINYML_RETURN_IF_ERROR(table(r, t, 6, what, "sparsity", &sparsity, &out->has_sparsity));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 10, 4, 0, what, "external_buffer", &external));
  /* Data in another file: reading on would take the tensor for a
   * non-constant, so refuse it plainly. */
  if (external)
    return tinyml__status_make(r->user, TINYML_STATUS_UNSUPPORTED,
                               "tflite: %s: external buffer %" PRIu64 " is not supported",
                               what, external);
  return TINYML_OK;
}

static tinyml_status_t read_tensor(reader_t *r, const vec_t *tensors,
                                   const vec_t *buffers, uint32_t i,
                                   tfl_tensor_t *out) {
  char what[40];
  snprintf(what, sizeof(what), "subgraph 0 tensor %" PRIu32, i);
  tbl_t t;
  TINYML_RETURN_IF_ERROR(element(r, tensors, i, "subgraph 0", "tensor", &t));
  TINYML_RETURN_IF_ERROR(read_tensor_fields(r, &t, what, out));
  TINYML_RETURN_IF_ERROR(read_shape(r, &t, what, out));
  TINYML_RETURN_IF_ERROR(read_quant(r, &t, what, out));
  if (out->buffer >= buffers->count) {
    if (out->buffer == 0) return TINYML_OK; /* no buffers, no data */
    return bad(r, "%s: buffer %" PRIu32 " is out of range (%" PRIu32 " buffers)",
               what, out->buffer, buffers->count);
  }
  TINYML_RETURN_IF_ERROR(buffer_data(r, buffers, out->buffer, out));
  return check_data_size(r, what, out);
}

static tinyml_status_t read_tensors(reader_t *r, const tbl_t *sg,
                                    const vec_t *buffers, tfl_model_t *m) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, sg, 0, 4, "subgraph 0", "tensors", &v));
  TINYML_RETURN_IF_ERROR(check_count(r, &v, "subgraph 0", "tensors"));
  void *p;
  TINYML_RETURN_IF_ERROR(alloc_array(r, v.count, sizeof(tfl_tensor_t),
                                     _Alignof(tfl_tensor_t), "tensors", &p));
  m->tensors = p;
  m->tensor_count = v.count; /* zeroed entries: tfl_model_free copes */
  for (uint32_t i = 0; i < v.count; i++)
    TINYML_RETURN_IF_ERROR(read_tensor(r, &v, buffers, i, &m->tensors[i]));
  return TINYML_OK;
}

/* Subgraph inputs (field 1) or outputs (field 2). */
static tinyml_status_t read_io(reader_t *r, const tbl_t *sg, unsigned id,
                               const char *name, tfl_model_t *m,
                               int32_t **out, uint32_t *count) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, sg, id, 4, "subgraph 0", name, &v));
  TINYML_RETURN_IF_ERROR(check_indices(r, &v, m->tensor_count, 0, "subgraph 0", name));
  TINYML_RETURN_IF_ERROR(copy_i32(r, &v, name, out));
  *count = v.count;
  return TINYML_OK;
}

/* ------------------------------------------------------------------------
 * Operator codes and operators
 * ---------------------------------------------------------------------- */

typedef struct opcode {
  int32_t builtin_code;
  int32_t version;
} opcode_t;

static tinyml_status_t read_opcode(reader_t *r, const vec_t *codes,
                                   uint32_t i, opcode_t *out, tbl_t *t) {
  char what[40];
  snprintf(what, sizeof(what), "operator code %" PRIu32, i);
  uint64_t deprecated, version, code;
  TINYML_RETURN_IF_ERROR(element(r, codes, i, "model", "operator code", t));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 0, 1, 0, what, "deprecated_builtin_code", &deprecated));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 2, 4, 1, what, "version", &version));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 3, 4, 0, what, "builtin_code", &code));
  /* Old files set only the byte, new ones both (the byte saturating at
   * PLACEHOLDER_FOR_GREATER_OP_CODES), so the larger one is meant. */
  int32_t old = fb_as_i8(deprecated);
  out->builtin_code = old > fb_as_i32(code) ? old : fb_as_i32(code);
  out->version = fb_as_i32(version);
  return TINYML_OK;
}

static tinyml_status_t read_opcodes(reader_t *r, const tbl_t *root,
                                    tfl_model_t *m, vec_t *codes) {
  TINYML_RETURN_IF_ERROR(vector(r, root, 1, 4, "model", "operator_codes", codes));
  TINYML_RETURN_IF_ERROR(check_count(r, codes, "model", "operator_codes"));
  void *p;
  TINYML_RETURN_IF_ERROR(alloc_array(r, codes->count, sizeof(char *),
                                     _Alignof(char *), "operator codes", &p));
  m->custom_codes = p;
  m->opcode_count = codes->count;
  for (uint32_t i = 0; i < codes->count; i++) {
    char what[40];
    snprintf(what, sizeof(what), "operator code %" PRIu32, i);
    opcode_t oc;
    tbl_t t;
    TINYML_RETURN_IF_ERROR(read_opcode(r, codes, i, &oc, &t));
    TINYML_RETURN_IF_ERROR(string(r, &t, 1, what, "custom_code", 1, &m->custom_codes[i]));
  }
  return TINYML_OK;
}

/* An options union value: tag field `id`, table field `id + 1`.  The table
 * is verified down to its vtable; the accessors check each field read. */
static tinyml_status_t read_options(reader_t *r, const tbl_t *t,
                                    unsigned id, const char *what,
                                    const char *name, uint8_t *type,
                                    tfl_table_t *out) {
  uint64_t tag;
  tbl_t options;
  int present;
  TINYML_RETURN_IF_ERROR(scalar(r, t, id, 1, 0, what, name, &tag));
  TINYML_RETURN_IF_ERROR(table(r, t, id + 1, what, name, &options, &present));
  *type = (uint8_t)tag;
  if (!present) return TINYML_OK;
  if (options.pos > UINT32_MAX)
    return bad(r, "%s: %s: table lies beyond 4 GiB", what, name);
  out->buf = r->b.data;
  out->size = (size_t)r->b.size;
  out->pos = (uint32_t)options.pos;
  return TINYML_OK;
}

/* custom_options (field 5), or for models over 2 GiB the bytes at
 * large_custom_options_offset (field 9) when that is above 1. */
static tinyml_status_t read_custom_options(reader_t *r, const tbl_t *t,
                                           const char *what,
                                           tfl_operator_t *op) {
  vec_t v;
  uint64_t offset, size;
  TINYML_RETURN_IF_ERROR(vector(r, t, 5, 1, what, "custom_options", &v));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 9, 8, 0, what, "large_custom_options_offset", &offset));
  TINYML_RETURN_IF_ERROR(scalar(r, t, 10, 8, 0, what, "large_custom_options_size", &size));
  if (offset > 1 && (offset > r->b.size || size > r->b.size - offset))
    return bad(r, "%s: %" PRIu64 " custom option bytes at offset %" PRIu64 " lie outside the file",
               what, size, offset);
  op->has_custom_options = v.present || offset > 1;
  return TINYML_OK;
}

static tinyml_status_t read_operator_io(reader_t *r, const tbl_t *t,
                                        const char *what, uint32_t tensor_count,
                                        tfl_operator_t *op) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, t, 1, 4, what, "inputs", &v));
  TINYML_RETURN_IF_ERROR(check_indices(r, &v, tensor_count, 1, what, "inputs"));
  TINYML_RETURN_IF_ERROR(copy_i32(r, &v, "inputs", &op->inputs));
  op->input_count = v.count;
  TINYML_RETURN_IF_ERROR(vector(r, t, 2, 4, what, "outputs", &v));
  TINYML_RETURN_IF_ERROR(check_indices(r, &v, tensor_count, 0, what, "outputs"));
  TINYML_RETURN_IF_ERROR(copy_i32(r, &v, "outputs", &op->outputs));
  op->output_count = v.count;
  TINYML_RETURN_IF_ERROR(vector(r, t, 8, 4, what, "intermediates", &v));
  TINYML_RETURN_IF_ERROR(check_indices(r, &v, tensor_count, 0, what, "intermediates"));
  op->intermediate_count = v.count;
  return TINYML_OK;
}

static tinyml_status_t read_operator(reader_t *r, const vec_t *ops,
                                     const vec_t *codes, uint32_t i,
                                     tfl_model_t *m, tfl_operator_t *op) {
  char what[40];
  snprintf(what, sizeof(what), "subgraph 0 operator %" PRIu32, i);
  tbl_t t, code_table;
  uint64_t index;
  opcode_t oc;
  TINYML_RETURN_IF_ERROR(element(r, ops, i, "subgraph 0", "operator", &t));
  TINYML_RETURN_IF_ERROR(scalar(r, &t, 0, 4, 0, what, "opcode_index", &index));
  if (index >= m->opcode_count)
    return bad(r, "%s: opcode_index %" PRIu64 " is out of range (%" PRIu32 " operator codes)",
               what, index, m->opcode_count);
  op->opcode_index = (uint32_t)index;
  TINYML_RETURN_IF_ERROR(read_opcode(r, codes, op->opcode_index, &oc, &code_table));
  op->builtin_code = oc.builtin_code;
  op->version = oc.version;
  op->custom_code = m->custom_codes[op->opcode_index];
  TINYML_RETURN_IF_ERROR(read_operator_io(r, &t, what, m->tensor_count, op));
  TINYML_RETURN_IF_ERROR(read_options(r, &t, 3, what, "builtin_options",
                                      &op->options_type, &op->options));
  TINYML_RETURN_IF_ERROR(read_options(r, &t, 11, what, "builtin_options_2",
                                      &op->options2_type, &op->options2));
  return read_custom_options(r, &t, what, op);
}

static tinyml_status_t read_operators(reader_t *r, const tbl_t *sg,
                                      const vec_t *codes, tfl_model_t *m) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(vector(r, sg, 3, 4, "subgraph 0", "operators", &v));
  TINYML_RETURN_IF_ERROR(check_count(r, &v, "subgraph 0", "operators"));
  void *p;
  TINYML_RETURN_IF_ERROR(alloc_array(r, v.count, sizeof(tfl_operator_t),
                                     _Alignof(tfl_operator_t), "operators", &p));
  m->operators = p;
  m->operator_count = v.count;
  for (uint32_t i = 0; i < v.count; i++)
    TINYML_RETURN_IF_ERROR(read_operator(r, &v, codes, i, m, &m->operators[i]));
  return TINYML_OK;
}

/* ------------------------------------------------------------------------
 * Model
 * ---------------------------------------------------------------------- */

static tinyml_status_t read_header(reader_t *r, tbl_t *root) {
  if (r->b.size < 8)
    return bad(r, "%" PRIu64 " bytes are too few for a model", r->b.size);
  if (memcmp(r->b.data + 4, "TFL3", 4) != 0)
    return bad(r, "wrong file identifier (expected \"TFL3\" at byte 4)");
  uint64_t pos = fb_load(&r->b, 0, 4);
  if (pos < 8 || pos >= r->b.size)
    return bad(r, "root table offset %" PRIu64 " is out of range (%" PRIu64 " bytes)",
               pos, r->b.size);
  fb_err_t e = fb_open_table(&r->b, pos, root);
  return e ? fb_bad(r, "model", "root table", e) : TINYML_OK;
}

static tinyml_status_t read_model(reader_t *r, tfl_model_t *m) {
  tbl_t root, sg;
  vec_t codes, subgraphs, buffers;
  uint64_t version;
  TINYML_RETURN_IF_ERROR(read_header(r, &root));
  TINYML_RETURN_IF_ERROR(scalar(r, &root, 0, 4, 0, "model", "version", &version));
  m->version = (uint32_t)version;
  TINYML_RETURN_IF_ERROR(string(r, &root, 3, "model", "description", 0, &m->description));
  TINYML_RETURN_IF_ERROR(read_opcodes(r, &root, m, &codes));
  TINYML_RETURN_IF_ERROR(vector(r, &root, 2, 4, "model", "subgraphs", &subgraphs));
  TINYML_RETURN_IF_ERROR(check_count(r, &subgraphs, "model", "subgraphs"));
  if (!subgraphs.count) return bad(r, "model: no subgraphs");
  m->subgraph_count = subgraphs.count;
  TINYML_RETURN_IF_ERROR(element(r, &subgraphs, 0, "model", "subgraph", &sg));
  /* Buffers are read when a tensor refers to them. */
  TINYML_RETURN_IF_ERROR(vector(r, &root, 4, 4, "model", "buffers", &buffers));
  TINYML_RETURN_IF_ERROR(read_tensors(r, &sg, &buffers, m));
  TINYML_RETURN_IF_ERROR(read_io(r, &sg, 1, "inputs", m, &m->inputs, &m->input_count));
  TINYML_RETURN_IF_ERROR(read_io(r, &sg, 2, "outputs", m, &m->outputs, &m->output_count));
  return read_operators(r, &sg, &codes, m);
}

tinyml_status_t tfl_read(const void *bytes, size_t size,
                         const tinyml_allocator_t *allocator, tfl_model_t **out) {
  if (out) *out = NULL;
  if (!out || (!bytes && size))
    return tinyml__status_make(allocator, TINYML_STATUS_INVALID_ARGUMENT,
                               "tflite: NULL argument");
  uint64_t budget = (uint64_t)size > (UINT64_MAX - BUDGET_BASE) / BUDGET_PER_BYTE
                        ? UINT64_MAX
                        : (uint64_t)size * BUDGET_PER_BYTE + BUDGET_BASE;
  reader_t r = {{bytes, size}, allocator, tinyml__allocator_or_default(allocator),
                budget};
  tfl_model_t *m = tinyml__calloc(&r.alloc, 1, sizeof(*m), _Alignof(tfl_model_t));
  if (!m) return out_of_memory(&r, "the model", sizeof(*m));
  tinyml_status_t status = read_model(&r, m);
  if (status) {
    tfl_model_free(m, allocator);
    return status;
  }
  *out = m;
  return TINYML_OK;
}

void tfl_model_free(tfl_model_t *model, const tinyml_allocator_t *allocator) {
  if (!model) return;
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  for (uint32_t i = 0; model->tensors && i < model->tensor_count; i++) {
    tfl_tensor_t *t = &model->tensors[i];
    tinyml__free(&a, t->name);
    tinyml__free(&a, t->shape);
    tinyml__free(&a, t->quant.scale);
    tinyml__free(&a, t->quant.zero_point);
  }
  for (uint32_t i = 0; model->operators && i < model->operator_count; i++) {
    tinyml__free(&a, model->operators[i].inputs);
    tinyml__free(&a, model->operators[i].outputs);
  }
  for (uint32_t i = 0; model->custom_codes && i < model->opcode_count; i++)
    tinyml__free(&a, model->custom_codes[i]);
  tinyml__free(&a, model->tensors);
  tinyml__free(&a, model->operators);
  tinyml__free(&a, model->custom_codes);
  tinyml__free(&a, model->inputs);
  tinyml__free(&a, model->outputs);
  tinyml__free(&a, model->description);
  tinyml__free(&a, model);
}
