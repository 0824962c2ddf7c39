/* The compiler: model bytes in, module bytes out.  Links MLIR and LLVM; the
 * runtime never includes this. */
#ifndef TINYML_COMPILER_COMPILER_H
#define TINYML_COMPILER_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml.h"

typedef struct tinyml__compile_request {
  const char *target;   /* resolved backend name, never NULL */
  const char *cpu;      /* NULL = backend default */
  const char *features; /* NULL = backend default */
  int opt_level;
  /* Optional: receives the TOSA text the importer produced (for tools and
   * debugging); NULL = none. */
  void (*dump_tosa)(void *user, const char *text, size_t length);
  void *dump_user;
} tinyml__compile_request_t;

/* Compiles `model` and returns module bytes allocated with `allocator`
 * (64-byte aligned; free with tinyml__free). */
tinyml_status_t tinyml__compile(const void *model, size_t model_size,
                                const tinyml__compile_request_t *request,
                                const tinyml_allocator_t *allocator,
                                uint8_t **out_data, size_t *out_size);

#endif
