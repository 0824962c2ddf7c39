/* The whole compile of a fuzzed model: importer, TOSA rewrites, Linalg,
 * the memory plan, LLVM code generation and the link (ld.lld runs as a
 * process), then the module through the runtime.  Only small inputs are
 * compiled (FUZZ_COMPILE_MAX_BYTES): a compile costs tens of milliseconds
 * to seconds, and the mutations that matter (shapes, attributes, operator
 * codes, types) are as easy to make on a small model as on a large one. */
#include "fuzz_compile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_alloc.h"
#include "tinyml.h"

#ifndef FUZZ_COMPILE_MAX_BYTES
#define FUZZ_COMPILE_MAX_BYTES (16u << 10)
#endif

/* A compiled module is run only if its arena and I/O fit in this. */
#define FUZZ_RUN_MAX_BYTES (64u << 20)

static void check(int ok, const char *what, tinyml_status_t st) {
  if (ok) return;
  fprintf(stderr, "fuzz_compile: %s%s%s\n", what, st ? ": " : "",
          st ? tinyml_status_message(st) : "");
  abort();
}

static tinyml_tensor_info_t io_info(const tinyml_module_t *m, int output, size_t i) {
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  tinyml_status_t st = output ? tinyml_module_output_info(m, i, &info)
                              : tinyml_module_input_info(m, i, &info);
  check(!st, "a loaded module's tensor info fails", st);
  return info;
}

static size_t io_bytes(const tinyml_module_t *m, int output, size_t i) {
  return io_info(m, output, i).byte_size;
}

/* Runs the module once on inputs of `fill` bytes; a compiled module must
 * run (it may compute NaN or garbage from garbage, but never fail). */
static void run(const tinyml_module_t *m, const tinyml_allocator_t *a, uint8_t fill) {
  size_t n[2] = {tinyml_module_input_count(m), tinyml_module_output_count(m)};
  size_t total = tinyml_module_arena_size(m);
  for (int o = 0; o < 2; ++o)
    for (size_t i = 0; i < n[o]; ++i) total += io_bytes(m, o, i);
  if (total > FUZZ_RUN_MAX_BYTES) return;
  tinyml_context_options_t co;
  tinyml_context_options_init(&co);
  co.allocator = *a;
  tinyml_context_t *ctx = NULL;
  tinyml_status_t st = tinyml_context_create(m, &co, &ctx);
  check(!st, "a compiled module's context fails", st);
  void *bufs[64] = {0};
  size_t used = 0;
  for (int o = 0; o < 2; ++o)
    for (size_t i = 0; i < n[o] && used < 64; ++i, ++used) {
      tinyml_tensor_info_t info = io_info(m, o, i);
      size_t bytes = info.byte_size;
      bufs[used] = a->alloc(a->self, bytes ? bytes : 1, 64);
      check(bufs[used] != NULL, "out of memory for a buffer", NULL);
      /* A pinned input accepts only its fixed value; any other fill is
       * refused by design, not a failure of the compiled code. */
      if (info.fixed_value) memcpy(bufs[used], info.fixed_value, bytes);
      else memset(bufs[used], fill, bytes);
      st = o ? tinyml_context_set_output(ctx, i, bufs[used], bytes)
             : tinyml_context_set_input(ctx, i, bufs[used], bytes);
      check(!st, "binding a compiled module's buffer fails", st);
    }
  if (used == n[0] + n[1]) {
    st = tinyml_context_invoke(ctx);
    check(!st, "a compiled module's invoke fails", st);
  }
  for (size_t k = 0; k < used; ++k) a->free(a->self, bufs[k]);
  tinyml_context_release(ctx);
}

/* Picks inputs deterministically (libFuzzer needs the same input to do the
 * same) but without favouring any byte value. */
static uint32_t fnv1a(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

/* The generated-C form of the same compile (emit_c.c): the files must be
 * there, each non-empty. */
static void emit_c(const uint8_t *data, size_t size, const tinyml_allocator_t *a) {
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.allocator = *a;
  o.emit = TINYML_EMIT_C;
  tinyml_files_t *files = NULL;
  tinyml_status_t st = tinyml_compile_files(data, size, &o, &files);
  check(!st, "the module compiled but its C form fails", st);
  check(tinyml_files_count(files) >= 3, "the C form has fewer than 3 files", NULL);
  for (size_t i = 0; i < tinyml_files_count(files); ++i)
    check(tinyml_blob_size(tinyml_files_blob(files, i)) > 0, "an empty generated file", NULL);
  tinyml_files_release(files);
}

void fuzz_compile(const uint8_t *data, size_t size) {
  if (size > FUZZ_COMPILE_MAX_BYTES) return;
  fuzz_counter_t c = {0};
  tinyml_allocator_t a = fuzz_counting_allocator(&c);
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.allocator = a;
  tinyml_blob_t *blob = NULL;
  tinyml_status_t st = tinyml_compile(data, size, &o, &blob);
  check(!st == (blob != NULL), "a module with a failure, or none with success", st);
  if (st) {
    check(tinyml_status_message(st)[0] != '\0', "a failure without a message", st);
    tinyml_status_free(st);
  } else {
    tinyml_module_options_t mo;
    tinyml_module_options_init(&mo);
    mo.allocator = a;
    tinyml_module_t *m = NULL;
    st = tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), &mo, &m);
    check(!st, "a compiled module does not load", st);
    run(m, &a, size ? data[0] : 0);
    tinyml_module_release(m);
    tinyml_blob_release(blob);
    if (fnv1a(data, size) % 8 == 0) emit_c(data, size, &a); /* one input in eight */
  }
  check(c.live == 0, "tinyml_compile leaked through the caller's allocator", NULL);
}
