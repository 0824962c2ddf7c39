/* Allocation failure: failing the Nth allocation, for every N until the
 * read succeeds, gives OUT_OF_MEMORY and leaks nothing (allocs == frees).
 *
 * Usage: test_tflite_alloc MODELS_DIR [MODEL.tflite...]
 * Exit 77 (skip) when MODELS_DIR is missing, unless CI=true. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/common/alloc.h"
#include "lib/importers/tflite/tflite_import.h"
#include "tflite_test_util.h"

static const char *models_dir;
static int models_missing;

static uint8_t *load(const char *name, size_t *size) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", models_dir, name);
  uint8_t *bytes = tt_read_file(path, size);
  if (!bytes) fail_msg("cannot read %s", path);
  return bytes;
}

/* Reads with allocation `fail_at` failing (and every later one with
 * `fail_after`, which leaves even the status message unallocatable).
 * Returns 1 once the read succeeded. */
static int read_failing(const uint8_t *bytes, size_t size, size_t fail_at,
                        int fail_after, const tfl_model_t *expected) {
  tt_alloc_t c;
  tt_alloc_init(&c);
  c.fail_at = fail_at;
  c.fail_after = fail_after;
  tfl_model_t *m = (tfl_model_t *)(uintptr_t)1;
  tinyml_status_t status = tfl_read(bytes, size, &c.allocator, &m);
  if (!status) {
    tt_check_model(m, bytes, size);
    assert_int_equal(expected->tensor_count, m->tensor_count);
    assert_int_equal(expected->operator_count, m->operator_count);
    assert_string_equal(expected->tensors[0].name, m->tensors[0].name);
    tfl_model_free(m, &c.allocator);
    assert_int_equal(0, c.live);
    return 1;
  }
  if (tinyml_status_code(status) != TINYML_STATUS_OUT_OF_MEMORY)
    fail_msg("allocation %zu: %s", fail_at, tinyml_status_message(status));
  assert_null(m);
  tinyml_status_free(status);
  assert_int_equal(0, c.live);
  return 0;
}

static void run_read(const char *name) {
  size_t size;
  uint8_t *bytes = load(name, &size);
  tfl_model_t *expected = NULL;
  assert_null(tfl_read(bytes, size, NULL, &expected));
  for (int fail_after = 0; fail_after < 2; fail_after++) {
    size_t n = 1;
    while (!read_failing(bytes, size, n, fail_after, expected)) n++;
    print_message("%s: read succeeded once %zu allocations could (fail_after=%d)\n",
                  name, n - 1, fail_after);
    assert_true(n > 4); /* model, description, tensors, names at least */
  }
  tfl_model_free(expected, NULL);
  free(bytes);
}

static void test_read(void **state) {
  (void)state;
  if (!tt_require_dir(models_dir)) {
    models_missing = 1;
    skip();
  }
  run_read("tflm/simple_add.tflite");
  run_read("tflm/hello_world_int8.tflite");
  run_read("tflm/micro_speech.tflite");
  run_read("mlperf-tiny/kws_ref_model.tflite");
}

/* The importer too: each failing allocation gives OUT_OF_MEMORY, or the
 * status an unfailing run gives when only that status's own message could
 * not be allocated. */
static tinyml_status_code_t import_failing(const uint8_t *bytes, size_t size,
                                           size_t fail_at, size_t *calls) {
  tt_alloc_t c;
  tt_alloc_init(&c);
  c.fail_at = fail_at;
  char *text = NULL;
  size_t length = 0;
  tinyml_status_t status = tfl_import(bytes, size, &c.allocator, &text, &length);
  tinyml_status_code_t code = tinyml_status_code(status);
  tinyml_status_free(status);
  if (text) {
    tinyml_allocator_t a = tinyml__allocator_or_default(&c.allocator);
    tinyml__free(&a, text);
  }
  assert_int_equal(0, c.live);
  *calls = c.calls;
  return code;
}

static void import_all_failing(const uint8_t *bytes, size_t size, const char *name) {
  size_t calls;
  tinyml_status_code_t normal = import_failing(bytes, size, 0, &calls);
  for (size_t n = 1; n <= calls; n++) {
    size_t ignored;
    tinyml_status_code_t code = import_failing(bytes, size, n, &ignored);
    if (code != TINYML_STATUS_OUT_OF_MEMORY && code != normal)
      fail_msg("allocation %zu of %zu: %s", n, calls, tinyml_status_code_name(code));
  }
  print_message("%s: import makes %zu allocations (%s)\n", name, calls,
                tinyml_status_code_name(normal));
}

static void test_import(void **state) {
  (void)state;
  if (!tt_require_dir(models_dir)) skip();
  size_t size;
  uint8_t *bytes = load("tflm/simple_add.tflite", &size);
  import_all_failing(bytes, size, "simple_add");
  free(bytes);
}

/* Models given after MODELS_DIR (paths): ones whose import reads more
 * subgraphs (CALL_ONCE, IF), which must also succeed unfailed. */
static int extra_count;
static char **extra_models;

static void test_import_extra(void **state) {
  (void)state;
  if (!extra_count) {
    print_message("skipped: no extra models on the command line\n");
    skip();
  }
  for (int i = 0; i < extra_count; ++i) {
    size_t size, calls;
    uint8_t *bytes = tt_read_file(extra_models[i], &size);
    if (!bytes) fail_msg("cannot read %s", extra_models[i]);
    assert_int_equal(import_failing(bytes, size, 0, &calls), TINYML_STATUS_OK);
    import_all_failing(bytes, size, extra_models[i]);
    free(bytes);
  }
}

int main(int argc, char **argv) {
  models_dir = argc > 1 ? argv[1] : NULL;
  extra_count = argc > 2 ? argc - 2 : 0;
  extra_models = argv + 2;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read),
      cmocka_unit_test(test_import),
      cmocka_unit_test(test_import_extra),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  return failed ? failed : models_missing ? 77 : 0;
}
