/* The public contract of include/tinyml.h, through the shared library only,
 * up to a loaded module: every function's NULL and bad-argument paths
 * (documented code, a message that names the problem, out_ parameters
 * untouched), version, names, option structs and struct_size, compile
 * errors, module loading and queries.  Contexts, I/O and invokes:
 * test_api_context.c.
 *
 * Usage: test_api_contract MODEL_DIR
 *   MODEL_DIR (tests/e2e/models) may also come from TINYML_API_MODELS. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_test_util.h"

/* Compiles `text`, which must fail with `code` naming `needle`. */
static void expect_compile_error(const char *text, size_t size,
                                 tinyml_status_code_t code, const char *needle) {
  tinyml_blob_t *blob = API_SENTINEL;
  api_expect_error(tinyml_compile(text, size, NULL, &blob), code, needle);
  assert_ptr_equal(blob, API_SENTINEL);
}

/* ==== version, names, options ============================================ */

static void test_version(void **state) {
  (void)state;
  assert_int_equal(tinyml_version_number(), TINYML_VERSION_NUMBER);
  assert_int_equal(TINYML_VERSION_NUMBER, TINYML_VERSION_MAJOR * 1000000 +
                                              TINYML_VERSION_MINOR * 1000 +
                                              TINYML_VERSION_PATCH);
  assert_true(TINYML_VERSION_MINOR < 1000 && TINYML_VERSION_PATCH < 1000);
  assert_string_equal(tinyml_version_string(), TINYML_VERSION_STRING);
  char expect[64];
  snprintf(expect, sizeof expect, "%d.%d.%d", TINYML_VERSION_MAJOR,
           TINYML_VERSION_MINOR, TINYML_VERSION_PATCH);
  assert_string_equal(tinyml_version_string(), expect);
}

static void test_status_code_names(void **state) {
  (void)state;
  static const char *const names[] = {
      "OK", "INVALID_ARGUMENT", "OUT_OF_MEMORY", "INVALID_MODULE", "INVALID_MODEL",
      "UNSUPPORTED", "SIZE_MISMATCH", "FAILED_PRECONDITION", "IO_ERROR", "INTERNAL"};
  for (int code = 0; code <= TINYML_STATUS_INTERNAL; ++code)
    assert_string_equal(tinyml_status_code_name((tinyml_status_code_t)code), names[code]);
  assert_int_equal(sizeof names / sizeof names[0], TINYML_STATUS_INTERNAL + 1);
  assert_non_null(tinyml_status_code_name((tinyml_status_code_t)1000));
  assert_int_equal(tinyml_status_code(TINYML_OK), TINYML_STATUS_OK);
  assert_string_equal(tinyml_status_message(TINYML_OK), "OK");
  tinyml_status_free(TINYML_OK);
}

static void test_dtypes(void **state) {
  (void)state;
  static const struct {
    tinyml_dtype_t dtype;
    const char *name;
    size_t size;
  } table[] = {
      {TINYML_DTYPE_FLOAT32, "float32", 4}, {TINYML_DTYPE_FLOAT16, "float16", 2},
      {TINYML_DTYPE_INT8, "int8", 1},       {TINYML_DTYPE_UINT8, "uint8", 1},
      {TINYML_DTYPE_INT16, "int16", 2},     {TINYML_DTYPE_INT32, "int32", 4},
      {TINYML_DTYPE_INT64, "int64", 8},     {TINYML_DTYPE_BOOL, "bool", 1},
      {TINYML_DTYPE_FLOAT64, "float64", 8}, {TINYML_DTYPE_BFLOAT16, "bfloat16", 2},
      {TINYML_DTYPE_UINT16, "uint16", 2},   {TINYML_DTYPE_UINT32, "uint32", 4},
      {TINYML_DTYPE_UINT64, "uint64", 8},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    assert_string_equal(tinyml_dtype_name(table[i].dtype), table[i].name);
    assert_int_equal(tinyml_dtype_size(table[i].dtype), table[i].size);
  }
  tinyml_dtype_t bad[] = {TINYML_DTYPE_INVALID, (tinyml_dtype_t)14, (tinyml_dtype_t)-1};
  for (size_t i = 0; i < 3; ++i) {
    assert_int_equal(tinyml_dtype_size(bad[i]), 0);
    assert_non_null(tinyml_dtype_name(bad[i]));
  }
}

static void test_options_init(void **state) {
  (void)state;
  tinyml_compile_options_t co;
  tinyml_module_options_t mo;
  tinyml_context_options_t xo;
  tinyml_tensor_info_t ti;
  memset(&co, 0xa5, sizeof co);
  memset(&mo, 0xa5, sizeof mo);
  memset(&xo, 0xa5, sizeof xo);
  memset(&ti, 0xa5, sizeof ti);
  tinyml_compile_options_init(&co);
  tinyml_module_options_init(&mo);
  tinyml_context_options_init(&xo);
  tinyml_tensor_info_init(&ti);
  assert_int_equal(co.struct_size, sizeof co);
  assert_true(!co.target && !co.cpu && !co.features && co.opt_level == 3);
  assert_true(!co.allocator.alloc && !co.allocator.free && !co.allocator.self);
  assert_int_equal(mo.struct_size, sizeof mo);
  assert_null(mo.allocator.alloc);
  assert_int_equal(xo.struct_size, sizeof xo);
  assert_true(!xo.allocator.alloc && !xo.arena && xo.arena_size == 0);
  assert_int_equal(ti.struct_size, sizeof ti);
  assert_true(!ti.name && ti.rank == 0 && ti.byte_size == 0 && !ti.scales);
  /* Not documented either way; must at least not crash. */
  tinyml_compile_options_init(NULL);
  tinyml_module_options_init(NULL);
  tinyml_context_options_init(NULL);
  tinyml_tensor_info_init(NULL);
}

static void test_null_getters_and_releases(void **state) {
  (void)state;
  assert_null(tinyml_blob_data(NULL));
  assert_int_equal(tinyml_blob_size(NULL), 0);
  assert_int_equal(tinyml_module_input_count(NULL), 0);
  assert_int_equal(tinyml_module_output_count(NULL), 0);
  assert_string_equal(tinyml_module_target(NULL), "");
  assert_string_equal(tinyml_module_cpu(NULL), "");
  assert_string_equal(tinyml_module_features(NULL), "");
  assert_int_equal(tinyml_module_arena_size(NULL), 0);
  assert_int_equal(tinyml_module_arena_alignment(NULL), 0);
  assert_int_equal(tinyml_module_constant_size(NULL), 0);
  assert_int_equal(tinyml_module_dispatch_count(NULL), 0);
  tinyml_blob_release(NULL);
  tinyml_module_release(NULL);
  tinyml_context_release(NULL);
  tinyml_status_free(NULL);
}

/* ==== compile ============================================================ */

static void test_compile_bad_arguments(void **state) {
  (void)state;
  size_t size;
  char *text = api_read_model(api_add.model, &size);
  tinyml_blob_t *blob = API_SENTINEL;
  api_expect_error(tinyml_compile(NULL, size, NULL, &blob),
                   TINYML_STATUS_INVALID_ARGUMENT, "tinyml_compile", "model");
  api_expect_error(tinyml_compile(text, size, NULL, NULL),
                   TINYML_STATUS_INVALID_ARGUMENT, "tinyml_compile", "out_module");
  api_expect_error(tinyml_compile(text, 0, NULL, &blob), TINYML_STATUS_INVALID_MODEL,
                   "empty");
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.struct_size = 0;
  api_expect_error(tinyml_compile(text, size, &o, &blob),
                   TINYML_STATUS_INVALID_ARGUMENT, "struct_size");
  int bad_levels[] = {-1, 4, 1000};
  for (size_t i = 0; i < 3; ++i) {
    tinyml_compile_options_init(&o);
    o.opt_level = bad_levels[i];
    api_expect_error(tinyml_compile(text, size, &o, &blob),
                     TINYML_STATUS_INVALID_ARGUMENT, "opt_level");
  }
  assert_ptr_equal(blob, API_SENTINEL);
  free(text);
}

static void test_compile_targets(void **state) {
  (void)state;
  const char *targets = tinyml_compile_targets();
  assert_non_null(targets);
  assert_non_null(strstr(targets, tinyml_module_target(api_add.module)));
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.target = "riscv-9000";
  size_t size;
  char *text = api_read_model(api_add.model, &size);
  tinyml_blob_t *blob = API_SENTINEL;
  /* The message names the bad target and every target that was built. */
  api_expect_error(tinyml_compile(text, size, &o, &blob), TINYML_STATUS_UNSUPPORTED,
                   "riscv-9000", targets);
  assert_ptr_equal(blob, API_SENTINEL);
  free(text);
  o.target = "x86-64";
  tinyml_blob_t *x86 = api_compile_model(api_add.model, &o);
  tinyml_module_t *m = api_load_blob(x86);
  assert_string_equal(tinyml_module_target(m), "x86-64");
  tinyml_module_release(m);
  tinyml_blob_release(x86);
}

/* Fields past struct_size belong to a newer header than the caller's: they
 * must be ignored (here: a bad opt_level and allocators that count). */
static void test_older_option_structs(void **state) {
  (void)state;
  api_counting_alloc_t c;
  api_counting_alloc_init(&c, 0, 0);
  tinyml_compile_options_t co;
  tinyml_compile_options_init(&co);
  co.struct_size = offsetof(tinyml_compile_options_t, opt_level);
  co.opt_level = 99;
  co.allocator = c.allocator;
  tinyml_blob_t *blob = api_compile_model(api_add.model, &co);
  tinyml_module_options_t mo;
  tinyml_module_options_init(&mo);
  mo.struct_size = offsetof(tinyml_module_options_t, allocator);
  mo.allocator = c.allocator;
  tinyml_module_t *m = NULL;
  api_assert_ok(tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), &mo, &m),
                "tinyml_module_load");
  assert_int_equal(c.calls, 0);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_compile_malformed_text(void **state) {
  (void)state;
  /* A truncated function: MLIR's own parser message must come through. */
  const char *text =
      "module {\n"
      "  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {\n"
      "    %v0 = tosa.add %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) ->\n"
      "  }\n"
      "}\n";
  expect_compile_error(text, strlen(text), TINYML_STATUS_INVALID_MODEL, "expected");
  expect_compile_error(text, strlen(text), TINYML_STATUS_INVALID_MODEL, "parse");
  const char *not_mlir = "hello, world";
  expect_compile_error(not_mlir, strlen(not_mlir), TINYML_STATUS_INVALID_MODEL, "'hello'");
}

static void test_compile_binary_garbage(void **state) {
  (void)state;
  uint8_t garbage[4096];
  uint32_t s = 12345;
  for (size_t i = 0; i < sizeof garbage; ++i) {
    s = s * 1103515245u + 12345u;
    garbage[i] = (uint8_t)(s >> 16);
  }
  expect_compile_error((const char *)garbage, sizeof garbage, TINYML_STATUS_INVALID_MODEL,
                       "format");
  const char nul_in_text[] = "module {\0}";
  expect_compile_error(nul_in_text, sizeof nul_in_text, TINYML_STATUS_INVALID_MODEL,
                       "format");
  /* The TFLite identifier routes to the TFLite reader, which names the
   * broken offset. */
  const char tflite[16] = {0x1c, 0, 0, 0, 'T', 'F', 'L', '3'};
  expect_compile_error(tflite, sizeof tflite, TINYML_STATUS_INVALID_MODEL, "root table");
}

static void test_compile_unsupported_op(void **state) {
  (void)state;
  const char *custom =
      "module {\n"
      "  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {\n"
      "    %v0 = tosa.custom %arg0 {domain_name = \"tinyml\", operator_name = \"frob\","
      " implementation_attrs = \"\"} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "    return %v0 : tensor<4xf32>\n"
      "  }\n"
      "}\n";
  expect_compile_error(custom, strlen(custom), TINYML_STATUS_UNSUPPORTED, "tosa.custom");
}

static void test_compile_dynamic_shape(void **state) {
  (void)state;
  const char *dynamic =
      "module {\n"
      "  func.func @main(%arg0: tensor<?x4xf32>) -> (tensor<?x4xf32>) {\n"
      "    %v0 = tosa.add %arg0, %arg0 : (tensor<?x4xf32>, tensor<?x4xf32>) -> "
      "tensor<?x4xf32>\n"
      "    return %v0 : tensor<?x4xf32>\n"
      "  }\n"
      "}\n";
  expect_compile_error(dynamic, strlen(dynamic), TINYML_STATUS_UNSUPPORTED, "dynamic");
}

static void test_blob_write_file_errors(void **state) {
  (void)state;
  api_expect_error(tinyml_blob_write_file(NULL, "/tmp/x"), TINYML_STATUS_INVALID_ARGUMENT,
                   "tinyml_blob_write_file", "blob");
  api_expect_error(tinyml_blob_write_file(api_add.blob, NULL),
                   TINYML_STATUS_INVALID_ARGUMENT, "path");
  const char *missing = "/nonexistent-tinyml-dir/m.tmlm";
  api_expect_error(tinyml_blob_write_file(api_add.blob, missing), TINYML_STATUS_IO_ERROR,
                   missing);
}

/* ==== module loading ===================================================== */

static void expect_load_error(const void *data, size_t size,
                              const tinyml_module_options_t *o,
                              tinyml_status_code_t code, const char *needle) {
  tinyml_module_t *m = API_SENTINEL;
  api_expect_error(tinyml_module_load(data, size, o, &m), code, needle);
  assert_ptr_equal(m, API_SENTINEL);
}

static void test_module_load_bad_arguments(void **state) {
  (void)state;
  const uint8_t *bytes = tinyml_blob_data(api_add.blob);
  size_t size = tinyml_blob_size(api_add.blob);
  expect_load_error(NULL, size, NULL, TINYML_STATUS_INVALID_ARGUMENT, "data");
  api_expect_error(tinyml_module_load(bytes, size, NULL, NULL),
                   TINYML_STATUS_INVALID_ARGUMENT, "out_module");
  tinyml_module_options_t o;
  tinyml_module_options_init(&o);
  o.struct_size = 0;
  expect_load_error(bytes, size, &o, TINYML_STATUS_INVALID_ARGUMENT, "struct_size");
  for (size_t offset = 1; offset < 16; offset *= 2) {
    uint8_t *copy = api_aligned_copy(bytes, size, 64, offset);
    expect_load_error(copy, size, NULL, TINYML_STATUS_INVALID_ARGUMENT, "aligned");
    api_aligned_free(copy);
  }
  expect_load_error(bytes, 0, NULL, TINYML_STATUS_INVALID_MODULE, "module");
  expect_load_error(bytes, size / 2, NULL, TINYML_STATUS_INVALID_MODULE, "module");
  uint8_t *garbage = api_aligned_copy(bytes, size, 64, 0);
  for (size_t i = 0; i < size; ++i) garbage[i] = (uint8_t)(i * 7 + 3);
  expect_load_error(garbage, size, NULL, TINYML_STATUS_INVALID_MODULE, "module");
  api_aligned_free(garbage);
}

static void expect_load_file_error(const char *path, tinyml_status_code_t code,
                                   const char *needle) {
  tinyml_module_t *m = API_SENTINEL;
  api_expect_error(tinyml_module_load_file(path, NULL, &m), code, needle);
  assert_ptr_equal(m, API_SENTINEL);
}

static void test_module_load_file_errors(void **state) {
  (void)state;
  tinyml_module_t *m = API_SENTINEL;
  api_expect_error(tinyml_module_load_file(NULL, NULL, &m),
                   TINYML_STATUS_INVALID_ARGUMENT, "path");
  api_expect_error(tinyml_module_load_file("/tmp/x", NULL, NULL),
                   TINYML_STATUS_INVALID_ARGUMENT, "out_module");
  tinyml_module_options_t o;
  tinyml_module_options_init(&o);
  o.struct_size = 0;
  api_expect_error(tinyml_module_load_file("/tmp/x", &o, &m),
                   TINYML_STATUS_INVALID_ARGUMENT, "struct_size");
  assert_ptr_equal(m, API_SENTINEL);
  const char *missing = "/nonexistent-tinyml-dir/missing.tmlm";
  expect_load_file_error(missing, TINYML_STATUS_IO_ERROR, missing);
  char path[512];
  api_temp_path(path, sizeof path, ".tmlm"); /* empty */
  expect_load_file_error(path, TINYML_STATUS_INVALID_MODULE, path);
  remove(path);
}

/* A directory opens with fopen() on Linux, and ftell() at its end can say
 * LONG_MAX: still an I/O error, not OUT_OF_MEMORY. */
static void test_module_load_file_directory(void **state) {
  (void)state;
  char dir[512];
  api_temp_dir(dir, sizeof dir);
  tinyml_module_t *m = API_SENTINEL;
  tinyml_status_t st = tinyml_module_load_file(dir, NULL, &m);
  rmdir(dir);
  assert_ptr_equal(m, API_SENTINEL);
  api_expect_error(st, TINYML_STATUS_IO_ERROR, dir);
}

static void assert_same_io(const tinyml_module_t *a, const tinyml_module_t *b) {
  assert_int_equal(tinyml_module_input_count(a), tinyml_module_input_count(b));
  assert_int_equal(tinyml_module_output_count(a), tinyml_module_output_count(b));
  assert_int_equal(tinyml_module_arena_size(a), tinyml_module_arena_size(b));
  assert_int_equal(tinyml_module_constant_size(a), tinyml_module_constant_size(b));
  assert_int_equal(tinyml_module_dispatch_count(a), tinyml_module_dispatch_count(b));
  assert_string_equal(tinyml_module_target(a), tinyml_module_target(b));
  for (size_t i = 0; i < tinyml_module_input_count(a); ++i) {
    tinyml_tensor_info_t x, y;
    tinyml_tensor_info_init(&x);
    tinyml_tensor_info_init(&y);
    api_assert_ok(tinyml_module_input_info(a, i, &x), "input_info");
    api_assert_ok(tinyml_module_input_info(b, i, &y), "input_info");
    assert_string_equal(x.name, y.name);
    assert_int_equal(x.byte_size, y.byte_size);
  }
}

static void test_module_load_file_round_trip(void **state) {
  (void)state;
  char path[512];
  api_temp_path(path, sizeof path, ".tmlm");
  api_assert_ok(tinyml_blob_write_file(api_conv.blob, path), "tinyml_blob_write_file");
  size_t size = 0;
  char *bytes = api_read_file(path, &size);
  assert_non_null(bytes);
  assert_int_equal(size, tinyml_blob_size(api_conv.blob));
  assert_memory_equal(bytes, tinyml_blob_data(api_conv.blob), size);
  free(bytes);
  tinyml_module_t *m = NULL;
  api_assert_ok(tinyml_module_load_file(path, NULL, &m), "tinyml_module_load_file");
  remove(path); /* the module owns a copy of the bytes */
  assert_same_io(m, api_conv.module);
  api_io_t from_file, from_blob;
  api_run_seeded(m, 7, &from_file);
  api_run_seeded(api_conv.module, 7, &from_blob);
  assert_true(api_io_outputs_equal(&from_file, &from_blob));
  api_io_free(&from_file);
  api_io_free(&from_blob);
  tinyml_module_release(m);
}

/* ==== queries ============================================================ */

static void check_info(const tinyml_module_t *m, int input, size_t index,
                       uint32_t rank, const int64_t *dims) {
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  api_assert_ok(input ? tinyml_module_input_info(m, index, &info)
                      : tinyml_module_output_info(m, index, &info),
                "tensor info");
  assert_non_null(info.name);
  assert_true(info.name[0] != '\0');
  assert_int_equal(info.struct_size, sizeof info);
  assert_int_equal(info.dtype, TINYML_DTYPE_FLOAT32);
  assert_int_equal(info.rank, rank);
  size_t elements = 1;
  for (uint32_t d = 0; d < rank; ++d) {
    assert_int_equal(info.dims[d], dims[d]);
    elements *= (size_t)dims[d];
  }
  assert_int_equal(info.byte_size, elements * tinyml_dtype_size(info.dtype));
  assert_true(info.quant_count == 0 && !info.scales && !info.zero_points);
}

static void test_module_queries(void **state) {
  (void)state;
  static const int64_t full[] = {1, 4, 5, 3}, b[] = {1, 1, 1, 3}, c[] = {1, 1, 5, 1};
  const tinyml_module_t *m = api_add.module;
  assert_int_equal(tinyml_module_input_count(m), 3);
  assert_int_equal(tinyml_module_output_count(m), 1);
  check_info(m, 1, 0, 4, full);
  check_info(m, 1, 1, 4, b);
  check_info(m, 1, 2, 4, c);
  check_info(m, 0, 0, 4, full);
  tinyml_tensor_info_t x, y;
  tinyml_tensor_info_init(&x);
  tinyml_tensor_info_init(&y);
  api_assert_ok(tinyml_module_input_info(m, 0, &x), "input_info");
  api_assert_ok(tinyml_module_input_info(m, 1, &y), "input_info");
  assert_string_not_equal(x.name, y.name);
  static const int64_t conv_in[] = {1, 9, 8, 3}, conv_out[] = {1, 5, 4, 5};
  check_info(api_conv.module, 1, 0, 4, conv_in);
  check_info(api_conv.module, 0, 0, 4, conv_out);
}

static void check_plausible(const api_fixture_t *f, size_t min_constants, int has_arena) {
  const tinyml_module_t *m = f->module;
  size_t blob = tinyml_blob_size(f->blob);
  size_t align = tinyml_module_arena_alignment(m);
  assert_string_equal(tinyml_module_target(m), "x86-64");
  assert_true(align >= 16 && align <= 4096 && (align & (align - 1)) == 0);
  assert_true(has_arena ? tinyml_module_arena_size(m) > 0 : 1);
  assert_true(tinyml_module_arena_size(m) < (1u << 20));
  assert_true(tinyml_module_constant_size(m) >= min_constants);
  assert_true(tinyml_module_constant_size(m) < blob);
  assert_true(tinyml_module_dispatch_count(m) >= 1);
  assert_true(tinyml_module_dispatch_count(m) <= 16);
  print_message("%s: %zu-byte module, arena %zu (align %zu), constants %zu, %zu steps\n",
                f->model, blob, tinyml_module_arena_size(m), align,
                tinyml_module_constant_size(m), tinyml_module_dispatch_count(m));
}

static void test_module_sizes_plausible(void **state) {
  (void)state;
  check_plausible(&api_add, 0, 0);
  /* conv2d: 5x3x3x3 float weights and 5 biases; a padded input in the arena. */
  check_plausible(&api_conv, (5 * 3 * 3 * 3 + 5) * sizeof(float), 1);
}

typedef tinyml_status_t (*info_fn)(const tinyml_module_t *, size_t, tinyml_tensor_info_t *);

static void check_info_errors(info_fn get, size_t count) {
  tinyml_tensor_info_t info, before;
  tinyml_tensor_info_init(&info);
  api_expect_error(get(NULL, 0, &info), TINYML_STATUS_INVALID_ARGUMENT, "module");
  api_expect_error(get(api_add.module, 0, NULL), TINYML_STATUS_INVALID_ARGUMENT, "out_info");
  memset(&info, 0x77, sizeof info);
  info.struct_size = sizeof info;
  before = info;
  api_expect_error(get(api_add.module, count, &info), TINYML_STATUS_INVALID_ARGUMENT,
                   "index", "out of range");
  api_expect_error(get(api_add.module, SIZE_MAX, &info), TINYML_STATUS_INVALID_ARGUMENT,
                   "out of range");
  assert_memory_equal(&info, &before, sizeof info);
  info.struct_size = 0;
  api_expect_error(get(api_add.module, 0, &info), TINYML_STATUS_INVALID_ARGUMENT,
                   "struct_size");
}

static void test_tensor_info_errors(void **state) {
  (void)state;
  check_info_errors(tinyml_module_input_info, tinyml_module_input_count(api_add.module));
  check_info_errors(tinyml_module_output_info, tinyml_module_output_count(api_add.module));
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version),
      cmocka_unit_test(test_status_code_names),
      cmocka_unit_test(test_dtypes),
      cmocka_unit_test(test_options_init),
      cmocka_unit_test(test_null_getters_and_releases),
      cmocka_unit_test(test_compile_bad_arguments),
      cmocka_unit_test(test_compile_targets),
      cmocka_unit_test(test_older_option_structs),
      cmocka_unit_test(test_compile_malformed_text),
      cmocka_unit_test(test_compile_binary_garbage),
      cmocka_unit_test(test_compile_unsupported_op),
      cmocka_unit_test(test_compile_dynamic_shape),
      cmocka_unit_test(test_blob_write_file_errors),
      cmocka_unit_test(test_module_load_bad_arguments),
      cmocka_unit_test(test_module_load_file_errors),
      cmocka_unit_test(test_module_load_file_directory),
      cmocka_unit_test(test_module_load_file_round_trip),
      cmocka_unit_test(test_module_queries),
      cmocka_unit_test(test_module_sizes_plausible),
      cmocka_unit_test(test_tensor_info_errors),
  };
  return cmocka_run_group_tests(tests, api_fixtures_setup, api_fixtures_teardown);
}
