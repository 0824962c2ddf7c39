/* The last stage of a compile: what it produced, as the files the caller
 * asked for (compiler.h, tinyml__files_t). */
#ifndef TINYML_COMPILER_DRIVER_DELIVER_H
#define TINYML_COMPILER_DRIVER_DELIVER_H

#include <stddef.h>
#include <stdint.h>

#include "../compiler.h"
#include "../linalg/graph.h"
#include "../target/target.h"

typedef struct tc_product {
  const tc_graph_t *graph; /* planned: buffers bound, arena sized */
  const tc_target_t *target;
  tinyml_emit_t emit;
  const char *name;
  const uint8_t *so; /* the linked executable (TINYML_EMIT_MODULE) */
  size_t so_size;
  /* The kernels object (the other forms); TINYML_EMIT_C takes it over and
   * sets *obj to NULL. */
  uint8_t **obj;
  size_t obj_size;
  const struct tc_variants *variants; /* the module's besides the baseline; NULL: none */
} tc_product_t;

/* NAME.tmlm; or NAME.c, NAME.h and NAME_kernels.o; or libNAME.a and
 * NAME.h (compiler.h), into *out. */
tinyml_status_t tc_deliver(const tc_product_t *product, const tinyml_allocator_t *a,
                           tinyml__files_t *out);

#endif
