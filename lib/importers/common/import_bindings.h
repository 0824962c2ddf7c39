/* The dynamic-dimension bindings of a compile (tinyml_compile_options_t's
 * dims, input_shapes and note), as the ONNX importer reads them.  Every
 * pointer is the caller's, borrowed for the compile. */
#ifndef TINYML_IMPORTERS_COMMON_IMPORT_BINDINGS_H
#define TINYML_IMPORTERS_COMMON_IMPORT_BINDINGS_H

#include <stddef.h>

#include "tinyml.h"

typedef struct te_bindings {
  const tinyml_dim_binding_t *dims;
  size_t dim_count;
  const tinyml_input_shape_t *input_shapes;
  size_t input_shape_count;
  void (*note)(void *user, const char *message); /* NULL: notes are dropped */
  void *note_user;
  const tinyml_input_value_t *input_values; /* inputs bound to constants */
  size_t input_value_count;
} te_bindings_t;

/* Whether `b` binds anything (a note callback alone does not). */
static inline int te_bindings_any(const te_bindings_t *b) {
  if (b && b->input_value_count) return 1;
  return b && (b->dim_count || b->input_shape_count);
}

#endif
