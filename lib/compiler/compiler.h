/* The compiler: model bytes in, module bytes out.  Links MLIR and LLVM; the
 * runtime never includes this. */
#ifndef TINYML_COMPILER_COMPILER_H
#define TINYML_COMPILER_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml.h"

#include "backend.h"
#include "../importers/common/import_bindings.h"

typedef struct tinyml__compile_request {
  /* The target's backend, never NULL: the caller resolves it (bindings-c
   * holds the registry of built backends), so the compiler never reaches
   * into backends/. */
  const tinyml_backend_t *backend;
  const char *cpu;      /* NULL = backend default */
  const char *features; /* NULL = backend default */
  int opt_level;
  /* Optional: receives the TOSA text the importer produced (for tools and
   * debugging); NULL = none. */
  void (*dump_tosa)(void *user, const char *text, size_t length);
  void *dump_user;
  tinyml_emit_t emit; /* what tinyml__compile_files produces */
  const char *name;   /* C identifier naming the model's files and symbols */
  /* Stages to compile into the graph (prepost.h); NULL = none.  They point
   * at complete structs (every field set, `pre`/`post` below when the API
   * made the request). */
  const tinyml_preprocess_t *preprocess;
  const tinyml_postprocess_t *postprocess;
  tinyml_preprocess_t pre;
  tinyml_postprocess_t post;
  int winograd; /* whether f32 convs may use Winograd (tosa/uk_wino.c) */
  int strip;    /* leave out the dispatch labels (linalg/labels.h) */
  /* Arena region capacities, 0-terminated; none: one arena (graph.h). */
  uint64_t arena_regions[TINYML_MAX_ARENA_REGIONS];
  /* Resource limits (tinyml_compile_options_t); 0 = the default. */
  uint64_t max_tensor_bytes, max_constant_bytes, max_ops, max_arena_bytes;
  /* ONNX dynamic dimensions and the note callback (tinyml_compile_options_t);
   * borrowed. */
  te_bindings_t bindings;
  /* tinyml_compile_options_t.split_min_work; 0 = the backend's. */
  uint64_t split_min_work;
} tinyml__compile_request_t;

/* One output file: `name` is a plain file name (no directory). */
typedef struct tinyml__file {
  char name[64];
  uint8_t *data; /* allocated with the compile's allocator */
  size_t size;
} tinyml__file_t;

#define TINYML__MAX_FILES 3

typedef struct tinyml__files {
  uint32_t count;
  tinyml__file_t file[TINYML__MAX_FILES];
} tinyml__files_t;

/* Compiles `model` into the files of `request->emit`:
 *   module:     NAME.tmlm
 *   c:          NAME.c, NAME.h, NAME_kernels.o (the kernels, exporting
 *               NAME_query)
 *   static-lib: libNAME.a (schedule + kernels), NAME.h */
tinyml_status_t tinyml__compile_files(const void *model, size_t model_size,
                                      const tinyml__compile_request_t *request,
                                      const tinyml_allocator_t *allocator,
                                      tinyml__files_t *out);
void tinyml__files_free(tinyml__files_t *files, const tinyml_allocator_t *allocator);

/* Compiles `model` and returns module bytes allocated with `allocator`
 * (64-byte aligned; free with tinyml__free). */
tinyml_status_t tinyml__compile(const void *model, size_t model_size,
                                const tinyml__compile_request_t *request,
                                const tinyml_allocator_t *allocator,
                                uint8_t **out_data, size_t *out_size);

#endif
