/* tfl_read: verifies a TFLite FlatBuffer and decodes subgraph 0.
 *
 * The bytes are read through the bounds-checked primitives of tflite_fb.h.
 * The reader turns their fb_err_t into statuses naming the object and
 * field. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/common/status.h"
#include "tflite_decode.h"
#include "tflite_reader.h"

/* A cap on the rank, as MAX_COUNT in tflite_decode.c caps counts, so a
 * corrupt shape cannot ask for a giant allocation. */
#define MAX_RANK 8u
/* At most 2^59 elements per shape, so that a consumer can compute any
 * tensor's byte size (16 bytes per element at most) in an int64_t. */
#define MAX_ELEMENTS (UINT64_C(1) << 59)

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
  TINYML_RETURN_IF_ERROR(rd_vector(r, t, 0, 4, what, "shape", &v));
  if (v.count > MAX_RANK)
    return rd_bad(r, "%s: rank %" PRIu32 " exceeds the maximum %u", what, v.count,
                  MAX_RANK);
  for (uint32_t i = 0; i < v.count; i++)
    if (rd_i32_at(r, &v, i) < 0)
      return rd_bad(r, "%s: dimension %" PRIu32 " is negative (%" PRId32 ")", what,
                    i, rd_i32_at(r, &v, i));
  TINYML_RETURN_IF_ERROR(rd_copy_i32(r, &v, "shape", &out->shape));
  out->rank = v.count;
  if (element_count(out) > MAX_ELEMENTS)
    return rd_bad(r, "%s: shape has more than 2^59 elements", what);
  /* shape_signature repeats the shape with -1 for unknown dimensions. */
  TINYML_RETURN_IF_ERROR(rd_vector(r, t, 7, 4, what, "shape_signature", &v));
  if (v.count > MAX_RANK)
    return rd_bad(r, "%s: shape_signature rank %" PRIu32 " exceeds the maximum %u",
                  what, v.count, MAX_RANK);
  for (uint32_t i = 0; i < v.count; i++) {
    int32_t d = rd_i32_at(r, &v, i);
    if (d < -1)
      return rd_bad(r, "%s: shape_signature[%" PRIu32 "] is %" PRId32, what, i, d);
    if (d == -1) out->has_dynamic_dims = 1;
  }
  return TINYML_OK;
}

static tinyml_status_t copy_quant(reader_t *r, const vec_t *scale,
                                  const vec_t *zero_point, tfl_quant_t *q) {
  void *p;
  TINYML_RETURN_IF_ERROR(rd_alloc_array(r, scale->count, sizeof(float),
                                        _Alignof(float), "scale", &p));
  q->scale = p;
  q->scale_count = scale->count;
  for (uint32_t i = 0; i < scale->count; i++) {
    uint32_t bits = (uint32_t)fb_load(&r->b, scale->pos + 4 * (uint64_t)i, 4);
    memcpy(&q->scale[i], &bits, sizeof(bits));
  }
  TINYML_RETURN_IF_ERROR(rd_alloc_array(r, zero_point->count, sizeof(int64_t),
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
      return rd_bad(r, "%s: scale[%" PRIu32 "] is not finite (bits 0x%08" PRIx32 ")",
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
    return rd_bad(r, "%s: quantized_dimension %" PRId32 " is out of range for rank %" PRIu32,
                  what, d, t->rank);
  if ((uint32_t)t->shape[d] != q->scale_count)
    return rd_bad(r, "%s: %" PRIu32 " scales but dimension %" PRId32 " has size %" PRId32,
                  what, q->scale_count, d, t->shape[d]);
  return TINYML_OK;
}

static tinyml_status_t read_quant(reader_t *r, const tbl_t *t,
                                  const char *what, tfl_tensor_t *out) {
  tbl_t qt, details;
  vec_t scale, zero_point;
  uint64_t details_type, dim;
  int present;
  TINYML_RETURN_IF_ERROR(rd_table(r, t, 4, what, "quantization", &qt, &present));
  if (!present) return TINYML_OK;
  TINYML_RETURN_IF_ERROR(rd_vector(r, &qt, 2, 4, what, "scale", &scale));
  TINYML_RETURN_IF_ERROR(rd_vector(r, &qt, 3, 8, what, "zero_point", &zero_point));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, &qt, 4, 1, 0, what, "details_type", &details_type));
  TINYML_RETURN_IF_ERROR(rd_table(r, &qt, 5, what, "details", &details, &present));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, &qt, 6, 4, 0, what, "quantized_dimension", &dim));
  if (scale.count && zero_point.count && scale.count != zero_point.count)
    return rd_bad(r, "%s: %" PRIu32 " scales but %" PRIu32 " zero points", what,
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
  TINYML_RETURN_IF_ERROR(rd_element(r, buffers, index, "model", "buffer", &t));
  TINYML_RETURN_IF_ERROR(rd_vector(r, &t, 0, 1, what, "data", &data));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, &t, 1, 8, 0, what, "offset", &offset));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, &t, 2, 8, 0, what, "size", &size));
  if (offset > 1) {
    if (offset > r->b.size || size > r->b.size - offset)
      return rd_bad(r, "%s: %" PRIu64 " bytes at offset %" PRIu64 " lie outside the file (%" PRIu64 " bytes)",
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
  return rd_bad(r, "%s: %zu data bytes do not match its shape and type %s (%" PRIu64 " bytes)",
                what, t->data_size, tfl_type_name(t->type), bytes);
}

static tinyml_status_t read_tensor_fields(reader_t *r, const tbl_t *t,
                                          const char *what, tfl_tensor_t *out) {
  uint64_t type, buffer, variable, external;
  tbl_t sparsity;
  TINYML_RETURN_IF_ERROR(rd_string(r, t, 3, what, "name", 0, &out->name));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 1, 1, 0, what, "type", &type));
  out->type = fb_as_i8(type); /* TensorType is a signed byte */
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 2, 4, 0, what, "buffer", &buffer));
  out->buffer = (uint32_t)buffer;
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 5, 1, 0, what, "is_variable", &variable));
  out->is_variable = variable != 0;
  TINYML_RETURN_IF_ERROR(rd_table(r, t, 6, what, "sparsity", &sparsity, &out->has_sparsity));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 10, 4, 0, what, "external_buffer", &external));
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
  TINYML_RETURN_IF_ERROR(rd_element(r, tensors, i, "subgraph 0", "tensor", &t));
  TINYML_RETURN_IF_ERROR(read_tensor_fields(r, &t, what, out));
  TINYML_RETURN_IF_ERROR(read_shape(r, &t, what, out));
  TINYML_RETURN_IF_ERROR(read_quant(r, &t, what, out));
  if (out->buffer >= buffers->count) {
    if (out->buffer == 0) return TINYML_OK; /* no buffers, no data */
    return rd_bad(r, "%s: buffer %" PRIu32 " is out of range (%" PRIu32 " buffers)",
                  what, out->buffer, buffers->count);
  }
  TINYML_RETURN_IF_ERROR(buffer_data(r, buffers, out->buffer, out));
  return check_data_size(r, what, out);
}

static tinyml_status_t read_tensors(reader_t *r, const tbl_t *sg,
                                    const vec_t *buffers, tfl_model_t *m) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(rd_vector(r, sg, 0, 4, "subgraph 0", "tensors", &v));
  TINYML_RETURN_IF_ERROR(rd_check_count(r, &v, "subgraph 0", "tensors"));
  void *p;
  TINYML_RETURN_IF_ERROR(rd_alloc_array(r, v.count, sizeof(tfl_tensor_t),
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
  TINYML_RETURN_IF_ERROR(rd_vector(r, sg, id, 4, "subgraph 0", name, &v));
  TINYML_RETURN_IF_ERROR(rd_check_indices(r, &v, m->tensor_count, 0, "subgraph 0", name));
  TINYML_RETURN_IF_ERROR(rd_copy_i32(r, &v, name, out));
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
  TINYML_RETURN_IF_ERROR(rd_element(r, codes, i, "model", "operator code", t));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 0, 1, 0, what, "deprecated_builtin_code", &deprecated));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 2, 4, 1, what, "version", &version));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 3, 4, 0, what, "builtin_code", &code));
  /* Old files set only the byte, new ones both (the byte saturating at
   * PLACEHOLDER_FOR_GREATER_OP_CODES), so the larger one is meant. */
  int32_t old = fb_as_i8(deprecated);
  out->builtin_code = old > fb_as_i32(code) ? old : fb_as_i32(code);
  out->version = fb_as_i32(version);
  return TINYML_OK;
}

static tinyml_status_t read_opcodes(reader_t *r, const tbl_t *root,
                                    tfl_model_t *m, vec_t *codes) {
  TINYML_RETURN_IF_ERROR(rd_vector(r, root, 1, 4, "model", "operator_codes", codes));
  TINYML_RETURN_IF_ERROR(rd_check_count(r, codes, "model", "operator_codes"));
  void *p;
  TINYML_RETURN_IF_ERROR(rd_alloc_array(r, codes->count, sizeof(char *),
                                        _Alignof(char *), "operator codes", &p));
  m->custom_codes = p;
  m->opcode_count = codes->count;
  for (uint32_t i = 0; i < codes->count; i++) {
    char what[40];
    snprintf(what, sizeof(what), "operator code %" PRIu32, i);
    opcode_t oc;
    tbl_t t;
    TINYML_RETURN_IF_ERROR(read_opcode(r, codes, i, &oc, &t));
    TINYML_RETURN_IF_ERROR(rd_string(r, &t, 1, what, "custom_code", 1, &m->custom_codes[i]));
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
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, id, 1, 0, what, name, &tag));
  TINYML_RETURN_IF_ERROR(rd_table(r, t, id + 1, what, name, &options, &present));
  *type = (uint8_t)tag;
  if (!present) return TINYML_OK;
  if (options.pos > UINT32_MAX)
    return rd_bad(r, "%s: %s: table lies beyond 4 GiB", what, name);
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
  TINYML_RETURN_IF_ERROR(rd_vector(r, t, 5, 1, what, "custom_options", &v));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 9, 8, 0, what, "large_custom_options_offset", &offset));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, t, 10, 8, 0, what, "large_custom_options_size", &size));
  if (offset > 1 && (offset > r->b.size || size > r->b.size - offset))
    return rd_bad(r, "%s: %" PRIu64 " custom option bytes at offset %" PRIu64 " lie outside the file",
                  what, size, offset);
  op->has_custom_options = v.present || offset > 1;
  return TINYML_OK;
}

static tinyml_status_t read_operator_io(reader_t *r, const tbl_t *t,
                                        const char *what, uint32_t tensor_count,
                                        tfl_operator_t *op) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(rd_vector(r, t, 1, 4, what, "inputs", &v));
  TINYML_RETURN_IF_ERROR(rd_check_indices(r, &v, tensor_count, 1, what, "inputs"));
  TINYML_RETURN_IF_ERROR(rd_copy_i32(r, &v, "inputs", &op->inputs));
  op->input_count = v.count;
  TINYML_RETURN_IF_ERROR(rd_vector(r, t, 2, 4, what, "outputs", &v));
  TINYML_RETURN_IF_ERROR(rd_check_indices(r, &v, tensor_count, 0, what, "outputs"));
  TINYML_RETURN_IF_ERROR(rd_copy_i32(r, &v, "outputs", &op->outputs));
  op->output_count = v.count;
  TINYML_RETURN_IF_ERROR(rd_vector(r, t, 8, 4, what, "intermediates", &v));
  TINYML_RETURN_IF_ERROR(rd_check_indices(r, &v, tensor_count, 0, what, "intermediates"));
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
  TINYML_RETURN_IF_ERROR(rd_element(r, ops, i, "subgraph 0", "operator", &t));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, &t, 0, 4, 0, what, "opcode_index", &index));
  if (index >= m->opcode_count)
    return rd_bad(r, "%s: opcode_index %" PRIu64 " is out of range (%" PRIu32 " operator codes)",
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
  TINYML_RETURN_IF_ERROR(rd_vector(r, sg, 3, 4, "subgraph 0", "operators", &v));
  TINYML_RETURN_IF_ERROR(rd_check_count(r, &v, "subgraph 0", "operators"));
  void *p;
  TINYML_RETURN_IF_ERROR(rd_alloc_array(r, v.count, sizeof(tfl_operator_t),
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
    return rd_bad(r, "%" PRIu64 " bytes are too few for a model", r->b.size);
  if (memcmp(r->b.data + 4, "TFL3", 4) != 0)
    return rd_bad(r, "wrong file identifier (expected \"TFL3\" at byte 4)");
  uint64_t pos = fb_load(&r->b, 0, 4);
  if (pos < 8 || pos >= r->b.size)
    return rd_bad(r, "root table offset %" PRIu64 " is out of range (%" PRIu64 " bytes)",
                  pos, r->b.size);
  fb_err_t e = fb_open_table(&r->b, pos, root);
  return e ? rd_fb_bad(r, "model", "root table", e) : TINYML_OK;
}

static tinyml_status_t read_model(reader_t *r, tfl_model_t *m) {
  tbl_t root, sg;
  vec_t codes, subgraphs, buffers;
  uint64_t version;
  TINYML_RETURN_IF_ERROR(read_header(r, &root));
  TINYML_RETURN_IF_ERROR(rd_scalar(r, &root, 0, 4, 0, "model", "version", &version));
  m->version = (uint32_t)version;
  TINYML_RETURN_IF_ERROR(rd_string(r, &root, 3, "model", "description", 0, &m->description));
  TINYML_RETURN_IF_ERROR(read_opcodes(r, &root, m, &codes));
  TINYML_RETURN_IF_ERROR(rd_vector(r, &root, 2, 4, "model", "subgraphs", &subgraphs));
  TINYML_RETURN_IF_ERROR(rd_check_count(r, &subgraphs, "model", "subgraphs"));
  if (!subgraphs.count) return rd_bad(r, "model: no subgraphs");
  m->subgraph_count = subgraphs.count;
  TINYML_RETURN_IF_ERROR(rd_element(r, &subgraphs, 0, "model", "subgraph", &sg));
  /* Buffers are read when a tensor refers to them. */
  TINYML_RETURN_IF_ERROR(rd_vector(r, &root, 4, 4, "model", "buffers", &buffers));
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
  reader_t r;
  rd_init(&r, bytes, size, allocator);
  tfl_model_t *m = tinyml__calloc(&r.alloc, 1, sizeof(*m), _Alignof(tfl_model_t));
  if (!m) return rd_out_of_memory(&r, "the model", sizeof(*m));
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
