/* tfl_read: verifies a TFLite FlatBuffer and decodes one subgraph.
 *
 * The reader comes in layers: tflite_fb.c holds the bounds-checked
 * FlatBuffer primitives, tflite_decode.c the same failing with statuses that
 * name the object and field, and tflite_tensors.c reads the tensors.  This
 * file reads the model header, the operator codes, the subgraph's inputs,
 * outputs and operators, and frees what tfl_read made. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/common/status.h"
#include "tflite_decode.h"
#include "tflite_reader.h"
#include "tflite_tensors.h"

/* ------------------------------------------------------------------------
 * Subgraph inputs and outputs
 * ---------------------------------------------------------------------- */

/* Subgraph inputs (field 1) or outputs (field 2). */
static tinyml_status_t read_io(reader_t *r, const tbl_t *sg, unsigned id,
                               const char *name, tfl_model_t *m,
                               int32_t **out, uint32_t *count) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(rd_vector(r, sg, id, 4, r->sg, name, &v));
  TINYML_RETURN_IF_ERROR(rd_check_indices(r, &v, m->tensor_count, 0, r->sg, name));
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
  /* Kept (borrowed) for custom operators that read their options. */
  if (v.present) {
    op->custom_options = r->b.data + v.pos;
    op->custom_options_size = v.count;
  } else if (offset > 1) {
    op->custom_options = r->b.data + offset;
    op->custom_options_size = (size_t)size;
  }
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
  char what[48];
  snprintf(what, sizeof(what), "%s operator %" PRIu32, r->sg, i);
  tbl_t t, code_table;
  uint64_t index;
  opcode_t oc;
  TINYML_RETURN_IF_ERROR(rd_element(r, ops, i, r->sg, "operator", &t));
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
  TINYML_RETURN_IF_ERROR(rd_vector(r, sg, 3, 4, r->sg, "operators", &v));
  TINYML_RETURN_IF_ERROR(rd_check_count(r, &v, r->sg, "operators"));
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

static tinyml_status_t read_model(reader_t *r, uint32_t index, tfl_model_t *m) {
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
  if (index >= subgraphs.count)
    return rd_bad(r, "model: subgraph %" PRIu32 " is out of range (%" PRIu32 " subgraphs)",
                  index, subgraphs.count);
  m->subgraph_count = subgraphs.count;
  m->subgraph = index;
  snprintf(r->sg, sizeof r->sg, "subgraph %" PRIu32, index);
  TINYML_RETURN_IF_ERROR(rd_element(r, &subgraphs, index, "model", "subgraph", &sg));
  /* Buffers are read when a tensor refers to them. */
  TINYML_RETURN_IF_ERROR(rd_vector(r, &root, 4, 4, "model", "buffers", &buffers));
  TINYML_RETURN_IF_ERROR(rd_tensors(r, &sg, &buffers, m));
  TINYML_RETURN_IF_ERROR(read_io(r, &sg, 1, "inputs", m, &m->inputs, &m->input_count));
  TINYML_RETURN_IF_ERROR(read_io(r, &sg, 2, "outputs", m, &m->outputs, &m->output_count));
  return read_operators(r, &sg, &codes, m);
}

tinyml_status_t tfl_read(const void *bytes, size_t size,
                         const tinyml_allocator_t *allocator, tfl_model_t **out) {
  return tfl_read_subgraph(bytes, size, 0, allocator, out);
}

tinyml_status_t tfl_read_subgraph(const void *bytes, size_t size, uint32_t index,
                                  const tinyml_allocator_t *allocator, tfl_model_t **out) {
  if (out) *out = NULL;
  if (!out || (!bytes && size))
    return tinyml__status_make(allocator, TINYML_STATUS_INVALID_ARGUMENT,
                               "tflite: NULL argument");
  reader_t r;
  rd_init(&r, bytes, size, allocator);
  tfl_model_t *m = tinyml__calloc(&r.alloc, 1, sizeof(*m), _Alignof(tfl_model_t));
  if (!m) return rd_out_of_memory(&r, "the model", sizeof(*m));
  tinyml_status_t status = read_model(&r, index, m);
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
