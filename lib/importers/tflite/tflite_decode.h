/* Internal to the TFLite reader: the decoding state and the FlatBuffer
 * primitives of tflite_fb.h again, failing with a status that names the
 * object (`what`, e.g. "subgraph 0 tensor 12") and field (`name`).  Every
 * status is TINYML_STATUS_INVALID_MODEL with a message "tflite: ...", or
 * OUT_OF_MEMORY.  Everything allocated here comes from r->alloc and is
 * charged against the decoding budget (see tflite_decode.c). */
#ifndef TINYML_IMPORTERS_TFLITE_DECODE_H
#define TINYML_IMPORTERS_TFLITE_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "tflite_fb.h"
#include "tinyml.h"

typedef struct reader {
  fb_t b;
  const tinyml_allocator_t *user; /* as given, for statuses */
  tinyml_allocator_t alloc;       /* resolved, for the model */
  uint64_t budget;                /* what decoding may still cost, in bytes */
  char sg[24];                    /* "subgraph N", the one being read */
} reader_t;

/* A reader of `size` bytes with the full budget for that size. */
void rd_init(reader_t *r, const void *bytes, size_t size,
             const tinyml_allocator_t *allocator);

tinyml_status_t rd_bad(reader_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
tinyml_status_t rd_fb_bad(reader_t *r, const char *what, const char *name,
                          fb_err_t e);
tinyml_status_t rd_out_of_memory(reader_t *r, const char *what, uint64_t bytes);

/* Charges `bytes` of work for `what` against the budget. */
tinyml_status_t rd_spend(reader_t *r, uint64_t bytes, const char *what);
/* Allocates count * size zeroed bytes; *out = NULL (and OK) when count is
 * 0, so empty arrays cost no allocation. */
tinyml_status_t rd_alloc_array(reader_t *r, uint32_t count, size_t size,
                               size_t align, const char *what, void **out);

/* Scalar field `id` of `n` bytes, zero-extended; `def` when absent. */
tinyml_status_t rd_scalar(reader_t *r, const tbl_t *t, unsigned id, unsigned n,
                          uint64_t def, const char *what, const char *name,
                          uint64_t *out);
tinyml_status_t rd_vector(reader_t *r, const tbl_t *t, unsigned id,
                          uint32_t elem_size, const char *what,
                          const char *name, vec_t *v);
tinyml_status_t rd_table(reader_t *r, const tbl_t *t, unsigned id,
                         const char *what, const char *name, tbl_t *out,
                         int *present);
/* A vector of tables: `name` names the vector, entry `i` is read. */
tinyml_status_t rd_element(reader_t *r, const vec_t *v, uint32_t i,
                           const char *what, const char *name, tbl_t *t);
/* Refuses more than MAX_COUNT entries (see tflite_decode.c). */
tinyml_status_t rd_check_count(reader_t *r, const vec_t *v, const char *what,
                               const char *name);
/* Copies the string in field `id`; absent gives "" or, with `null_if_absent`,
 * NULL. */
tinyml_status_t rd_string(reader_t *r, const tbl_t *t, unsigned id,
                          const char *what, const char *name,
                          int null_if_absent, char **out);

/* Entry `i` of an int32 vector (in bounds: the vector was verified). */
int32_t rd_i32_at(reader_t *r, const vec_t *v, uint32_t i);
/* Copies an int vector into a new array (NULL when empty). */
tinyml_status_t rd_copy_i32(reader_t *r, const vec_t *v, const char *name,
                            int32_t **out);
/* Every entry must index a tensor; -1 also passes with `allow_omitted`. */
tinyml_status_t rd_check_indices(reader_t *r, const vec_t *v,
                                 uint32_t tensor_count, int allow_omitted,
                                 const char *what, const char *name);

#endif
