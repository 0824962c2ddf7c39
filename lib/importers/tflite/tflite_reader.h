/* A verifying reader for TFLite FlatBuffers (schema: ../shared/schema/tflite/
 * schema.fbs).  It checks every offset, vector and string it follows, so a
 * truncated or corrupt file yields a status naming the problem, never a read
 * out of bounds.  One subgraph is decoded per read: subgraph 0, the model,
 * or with tfl_read_subgraph another (CALL_ONCE's initialiser, IF's branches).
 *
 * Ownership: tfl_model_t and everything it points to is allocated with the
 * allocator given to tfl_read and released by tfl_model_free, except
 * tfl_tensor_t.data and option tables, which point into the caller's bytes:
 * the caller keeps those bytes alive for as long as it uses the model.
 * Thread-safety: a model is immutable after tfl_read; share it freely. */
#ifndef TINYML_IMPORTERS_TFLITE_READER_H
#define TINYML_IMPORTERS_TFLITE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml.h"

/* TensorType values from the schema. */
typedef enum tfl_type {
  TFL_FLOAT32 = 0, TFL_FLOAT16 = 1, TFL_INT32 = 2, TFL_UINT8 = 3,
  TFL_INT64 = 4, TFL_STRING = 5, TFL_BOOL = 6, TFL_INT16 = 7,
  TFL_COMPLEX64 = 8, TFL_INT8 = 9, TFL_FLOAT64 = 10, TFL_COMPLEX128 = 11,
  TFL_UINT64 = 12, TFL_RESOURCE = 13, TFL_VARIANT = 14, TFL_UINT32 = 15,
  TFL_UINT16 = 16, TFL_INT4 = 17, TFL_BFLOAT16 = 18
} tfl_type_t;

/* A verified table inside the caller's bytes, read field by field with the
 * tfl_table_* accessors.  `buf == NULL` means absent (every field reads as
 * its default). */
typedef struct tfl_table {
  const uint8_t *buf;
  size_t size;
  uint32_t pos;
} tfl_table_t;

typedef struct tfl_quant {
  uint32_t scale_count;
  float *scale;            /* owned copy, scale_count entries */
  uint32_t zero_point_count;
  int64_t *zero_point;     /* owned copy, zero_point_count entries */
  int32_t quantized_dimension;
  int has_details;         /* custom QuantizationDetails: unsupported */
} tfl_quant_t;

typedef struct tfl_tensor {
  char *name;              /* owned, NUL-terminated ("" when absent) */
  int32_t type;            /* a tfl_type_t value as stored (may be unknown) */
  uint32_t rank;
  int32_t *shape;          /* owned, rank entries */
  int has_dynamic_dims;    /* shape_signature holds a -1 */
  int has_sparsity;
  int is_variable;
  uint32_t buffer;         /* index into the model's buffers (0 = none) */
  const uint8_t *data;     /* borrowed: constant bytes, NULL if none */
  size_t data_size;
  tfl_quant_t quant;
} tfl_tensor_t;

typedef struct tfl_operator {
  uint32_t opcode_index;
  int32_t builtin_code;    /* max(deprecated_builtin_code, builtin_code) */
  const char *custom_code; /* points into the model's owned strings; NULL if builtin */
  int32_t version;
  uint32_t input_count;
  int32_t *inputs;         /* owned; -1 marks an omitted optional input */
  uint32_t output_count;
  int32_t *outputs;        /* owned */
  uint32_t intermediate_count;
  uint8_t options_type;    /* BuiltinOptions union tag (0 = none) */
  tfl_table_t options;     /* the options table, verified to lie in bounds */
  int has_custom_options;
  const uint8_t *custom_options; /* borrowed: the custom_options bytes, NULL if none */
  size_t custom_options_size;
  uint8_t options2_type;   /* BuiltinOptions2 union tag (0 = none) */
  tfl_table_t options2;
} tfl_operator_t;

typedef struct tfl_model {
  uint32_t version;        /* schema version; 3 is current */
  char *description;       /* owned ("" when absent) */
  uint32_t subgraph_count;
  uint32_t subgraph;       /* the one decoded below (0 for tfl_read) */
  uint32_t tensor_count;   /* of that subgraph */
  tfl_tensor_t *tensors;
  uint32_t input_count;
  int32_t *inputs;         /* tensor indices, verified < tensor_count */
  uint32_t output_count;
  int32_t *outputs;        /* tensor indices, verified < tensor_count */
  uint32_t operator_count;
  tfl_operator_t *operators;
  uint32_t opcode_count;
  char **custom_codes;     /* owned, per opcode; NULL entries for builtins */
} tfl_model_t;

/* Reads and verifies `bytes`.  On success *out is a new model owned by the
 * caller (free with tfl_model_free).  On failure *out is NULL and the status
 * (code TINYML_STATUS_INVALID_MODEL, or OUT_OF_MEMORY) says what is wrong,
 * e.g. "tflite: tensor 12: shape vector runs past the end of the file".
 * Checks, beyond bounds: the "TFL3" identifier; at least one subgraph; every
 * tensor index an operator, input or output names is in range (or -1 for an
 * optional operator input); opcode_index in range; a buffer's data size
 * matches the tensor's shape and type when both are known; quantization
 * scale/zero_point counts agree (zero_point may be empty). */
tinyml_status_t tfl_read(const void *bytes, size_t size,
                         const tinyml_allocator_t *allocator, tfl_model_t **out);
/* tfl_read decoding subgraph `index` instead of 0, with the same checks;
 * an index out of range is INVALID_MODEL naming it and the count. */
tinyml_status_t tfl_read_subgraph(const void *bytes, size_t size, uint32_t index,
                                  const tinyml_allocator_t *allocator, tfl_model_t **out);
void tfl_model_free(tfl_model_t *model, const tinyml_allocator_t *allocator);

/* Field accessors for option tables.  `field` is the field's index in its
 * table (0 for the first field; a union counts as two: type then value).
 * An absent table or field gives `def`.  A field whose bytes would lie out
 * of bounds also gives `def` and sets *bad = 1 when `bad` is non-NULL. */
int32_t tfl_table_i32(const tfl_table_t *t, unsigned field, int32_t def, int *bad);
int8_t tfl_table_i8(const tfl_table_t *t, unsigned field, int8_t def, int *bad);
float tfl_table_f32(const tfl_table_t *t, unsigned field, float def, int *bad);
uint8_t tfl_table_bool(const tfl_table_t *t, unsigned field, uint8_t def, int *bad);
/* A vector of int32 (e.g. ReshapeOptions.new_shape).  Returns its length
 * (0 when absent) and copies at most `cap` entries to `out`; sets *bad = 1 if
 * the vector is out of bounds. */
uint32_t tfl_table_i32_vector(const tfl_table_t *t, unsigned field,
                              int32_t *out, uint32_t cap, int *bad);
/* A string (e.g. VarHandleOptions.shared_name).  Returns its length (0 when
 * absent) and copies it, NUL-terminated, to `out` only if it is shorter
 * than `cap` (else `out` is ""); sets *bad = 1 if it is out of bounds. */
uint32_t tfl_table_string(const tfl_table_t *t, unsigned field, char *out, uint32_t cap,
                          int *bad);

/* Readable names for diagnostics: "CONV_2D", "INT8", ...; never NULL
 * ("UNKNOWN(<n>)" written to a static buffer is not allowed, so unknown
 * values give "UNKNOWN"). */
const char *tfl_builtin_name(int32_t code);
const char *tfl_type_name(int32_t type);
/* Bytes of a tensor of a read model, from its shape and type (sub-byte
 * types packed); 0 for a type without a fixed size. */
uint64_t tfl_tensor_bytes(const tfl_tensor_t *t);

#endif
