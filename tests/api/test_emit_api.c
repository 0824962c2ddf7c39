/* tinyml_compile_files() and the tinyml_files_t accessors, through the
 * shared library: every emit kind, the files each one makes, and the
 * refusals (wrong entry point, unknown kind, bad name, NULL arguments).
 * That the emitted C computes what the module computes is
 * tests/compiler/test_emit.py's job.
 *
 * Usage: test_emit_api MODEL_DIR (tests/e2e/models) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"

#define MODEL "conv2d"

static tinyml_files_t *compile_files(tinyml_emit_t emit, const char *name) {
  size_t size;
  char *text = api_read_model(MODEL, &size);
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.emit = emit;
  o.name = name;
  tinyml_files_t *files = NULL;
  api_assert_ok(tinyml_compile_files(text, size, &o, &files), "tinyml_compile_files");
  free(text);
  return files;
}

static void expect_names(const tinyml_files_t *f, const char *const *names, size_t n) {
  assert_int_equal(tinyml_files_count(f), n);
  for (size_t i = 0; i < n; ++i) {
    assert_string_equal(tinyml_files_name(f, i), names[i]);
    assert_true(tinyml_blob_size(tinyml_files_blob(f, i)) > 0);
  }
  assert_null(tinyml_files_name(f, n));
  assert_null(tinyml_files_blob(f, n));
}

static void test_module_files(void **state) {
  (void)state;
  tinyml_files_t *f = compile_files(TINYML_EMIT_MODULE, NULL);
  expect_names(f, (const char *[]){"model.tmlm"}, 1);
  tinyml_module_t *m = api_load_blob(tinyml_files_blob(f, 0));
  assert_int_equal(tinyml_module_input_count(m), 1);
  tinyml_module_release(m);
  tinyml_files_release(f);
}

static void test_c_files(void **state) {
  (void)state;
  tinyml_files_t *f = compile_files(TINYML_EMIT_C, "net");
  expect_names(f, (const char *[]){"net.c", "net_kernels.o", "net.h"}, 3);
  const tinyml_blob_t *h = tinyml_files_blob(f, 2);
  char *text = calloc(1, tinyml_blob_size(h) + 1);
  memcpy(text, tinyml_blob_data(h), tinyml_blob_size(h));
  assert_non_null(strstr(text, "#define NET_ARENA_SIZE "));
  assert_non_null(strstr(text, "int net_invoke(void *arena"));
  free(text);
  const uint8_t *obj = tinyml_blob_data(tinyml_files_blob(f, 1));
  assert_memory_equal(obj, "\x7f" "ELF", 4);
  char dir[4096];
  api_temp_dir(dir, sizeof dir);
  api_assert_ok(tinyml_files_write(f, dir), "tinyml_files_write");
  char path[4200];
  snprintf(path, sizeof path, "%s/net.h", dir);
  size_t size;
  char *back = api_read_file(path, &size);
  assert_int_equal(size, tinyml_blob_size(h));
  free(back);
  tinyml_files_release(f);
}

static void test_static_lib_files(void **state) {
  (void)state;
  tinyml_files_t *f = compile_files(TINYML_EMIT_STATIC_LIB, "net");
  expect_names(f, (const char *[]){"libnet.a", "net.h"}, 2);
  assert_memory_equal(tinyml_blob_data(tinyml_files_blob(f, 0)), "!<arch>\n", 8);
  tinyml_files_release(f);
}

static void test_refusals(void **state) {
  (void)state;
  size_t size;
  char *text = api_read_model(MODEL, &size);
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.emit = TINYML_EMIT_C;
  tinyml_blob_t *blob = API_SENTINEL;
  api_expect_error(tinyml_compile(text, size, &o, &blob), TINYML_STATUS_INVALID_ARGUMENT,
                   "tinyml_compile_files");
  assert_ptr_equal(blob, API_SENTINEL);
  tinyml_files_t *files = API_SENTINEL;
  o.emit = (tinyml_emit_t)7;
  api_expect_error(tinyml_compile_files(text, size, &o, &files),
                   TINYML_STATUS_INVALID_ARGUMENT, "emit 7");
  o.emit = TINYML_EMIT_C;
  const char *bad[] = {"", "9lives", "a-b", "x/../y",
                       "a_name_that_is_far_too_long_for_a_c_prefix_0123456789"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    o.name = bad[i];
    api_expect_error(tinyml_compile_files(text, size, &o, &files),
                     TINYML_STATUS_INVALID_ARGUMENT, "C identifier");
  }
  api_expect_error(tinyml_compile_files(NULL, size, NULL, &files),
                   TINYML_STATUS_INVALID_ARGUMENT, "model");
  api_expect_error(tinyml_compile_files(text, size, NULL, NULL),
                   TINYML_STATUS_INVALID_ARGUMENT, "out_files");
  assert_ptr_equal(files, API_SENTINEL);
  api_expect_error(tinyml_files_write(NULL, "/tmp"), TINYML_STATUS_INVALID_ARGUMENT, "NULL");
  assert_int_equal(tinyml_files_count(NULL), 0);
  assert_null(tinyml_files_name(NULL, 0));
  assert_null(tinyml_files_blob(NULL, 0));
  tinyml_files_release(NULL);
  free(text);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_module_files),
      cmocka_unit_test(test_c_files),
      cmocka_unit_test(test_static_lib_files),
      cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
