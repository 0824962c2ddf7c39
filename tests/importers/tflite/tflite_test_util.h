/* Shared by the TFLite reader tests: model files, a counting allocator and
 * a walk over everything a decoded model points at. */
#ifndef TINYML_TESTS_IMPORTERS_TFLITE_TEST_UTIL_H
#define TINYML_TESTS_IMPORTERS_TFLITE_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/importers/tflite/tflite_reader.h"

/* The whole file in a buffer of exactly its size (so ASan sees any read
 * past the end); NULL if it cannot be read.  Free with free(). */
uint8_t *tt_read_file(const char *path, size_t *size);

/* Whether `dir` exists.  When it does not, prints "SKIP: <dir> missing" and,
 * under CI=true, fails the current cmocka test; otherwise the caller
 * skips. */
int tt_require_dir(const char *dir);

/* Every *.tflite under `dir` (recursively), sorted; returns the count and
 * an array of malloc'd paths in *out (free with tt_free_paths). */
size_t tt_list_models(const char *dir, char ***out);
void tt_free_paths(char **paths, size_t count);

/* Counts allocations; call number `fail_at` (1-based, 0 = never) fails and,
 * with `fail_after`, every later one too. */
typedef struct tt_alloc {
  tinyml_allocator_t allocator;
  size_t calls, live;
  size_t fail_at;
  int fail_after;
} tt_alloc_t;
void tt_alloc_init(tt_alloc_t *c);

/* cmocka-asserts the reader's promises on a model read from `bytes`:
 * indices in range, data inside `bytes`, strings terminated.  Touches every
 * byte the model points at (for the sanitizers) and calls every tfl_table_*
 * accessor on fields 0..15 of each options table.  Returns a value that
 * depends on all of it. */
uint64_t tt_check_model(const tfl_model_t *m, const uint8_t *bytes, size_t size);

/* Asserts `status` failed with a "tflite: " message; frees it. */
void tt_expect_error(tinyml_status_t status);

#endif
