/* Deployment without the module interpreter: the schedule as C source, and
 * the static library built from it (static_lib.c). */
#ifndef TINYML_COMPILER_TOOLCHAIN_EMIT_C_H
#define TINYML_COMPILER_TOOLCHAIN_EMIT_C_H

#include <stddef.h>

#include "../../module/module.h"
#include "tinyml.h"

typedef struct tc_c_source {
  char *header; /* NAME.h: arena and I/O sizes, NAME_invoke() */
  size_t header_size;
  char *source; /* NAME.c: constants and the dispatch calls */
  size_t source_size;
} tc_c_source_t;

/* 1 if `s` can prefix C symbols (and file names) safely. */
int tc_is_c_identifier(const char *s);

/* Writes the C for `module`, whose kernels object exports NAME_query
 * instead of tinyml_query.  Both strings are allocated with `a`. */
tinyml_status_t tc_emit_c(const tmod_module_t *module, const char *name,
                          const tinyml_allocator_t *a, tc_c_source_t *out);
void tc_c_source_free(tc_c_source_t *s, const tinyml_allocator_t *a);

#endif
