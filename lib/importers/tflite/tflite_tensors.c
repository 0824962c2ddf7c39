/* Reading a subgraph's tensors (see tflite_tensors.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/status.h"
#include "tflite_tensors.h"

/* A cap on the rank, as MAX_COUNT in tflite_decode.c caps counts, so a
 * corrupt shape cannot ask for a giant allocation. */
#define MAX_RANK 8u
/* At most 2^59 elements per shape, so that a consumer can compute any
 * tensor's byte size (16 bytes per element at most) in an int64_t. */
#define MAX_ELEMENTS (UINT64_C(1) << 59)

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

uint64_t tfl_tensor_bytes(const tfl_tensor_t *t) {
  unsigned bits = type_bits(t->type);
  uint64_t n = element_count(t); /* <= 2^59 once read, so no overflow below */
  return bits >= 8 ? n * (bits / 8) : (n * bits + 7) / 8;
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
  char what[48];
  snprintf(what, sizeof(what), "%s tensor %" PRIu32, r->sg, i);
  tbl_t t;
  TINYML_RETURN_IF_ERROR(rd_element(r, tensors, i, r->sg, "tensor", &t));
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

tinyml_status_t rd_tensors(reader_t *r, const tbl_t *sg, const vec_t *buffers,
                           tfl_model_t *m) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(rd_vector(r, sg, 0, 4, r->sg, "tensors", &v));
  TINYML_RETURN_IF_ERROR(rd_check_count(r, &v, r->sg, "tensors"));
  void *p;
  TINYML_RETURN_IF_ERROR(rd_alloc_array(r, v.count, sizeof(tfl_tensor_t),
                                        _Alignof(tfl_tensor_t), "tensors", &p));
  m->tensors = p;
  m->tensor_count = v.count; /* zeroed entries: tfl_model_free copes */
  for (uint32_t i = 0; i < v.count; i++)
    TINYML_RETURN_IF_ERROR(read_tensor(r, &v, buffers, i, &m->tensors[i]));
  return TINYML_OK;
}
