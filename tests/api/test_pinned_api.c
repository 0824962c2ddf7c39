/* Pinned inputs (include/tinyml.h, tinyml_tensor_info_t.fixed_value): an
 * argument marked `tinyml.fixed_value` stays an input of the module, even
 * when the body no longer uses it; the info query shows the fixed bytes;
 * invoke runs with exactly those bytes and refuses any other value with
 * INVALID_ARGUMENT naming the input.  Expected outputs follow the
 * operators' definitions (TOSA/ONNX Reshape keeps row-major order; add is
 * elementwise), not our own results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"
#include "tinyml.h"

/* What an importer emits for ONNX Reshape(x, shape) with `shape` a graph
 * input fixed from the declared output shape: the body uses a constant. */
static const char kReshape[] =
    "func.func @main(%x: tensor<2x3xf32> {tinyml.name = \"x\"},\n"
    "    %shape: tensor<2xi64> {tinyml.name = \"shape\",\n"
    "                           tinyml.fixed_value = dense<[3, 2]> : tensor<2xi64>})\n"
    "    -> (tensor<3x2xf32> {tinyml.name = \"y\"}) {\n"
    "  %s = tosa.const_shape {values = dense<[3, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>\n"
    "  %y = tosa.reshape %x, %s : (tensor<2x3xf32>, !tosa.shape<2>) -> tensor<3x2xf32>\n"
    "  return %y : tensor<3x2xf32>\n"
    "}\n";

/* Pinned arguments the body ignores entirely: a boolean (bit-packed in
 * MLIR, a byte each at the boundary), a splat and an empty tensor. */
static const char kIgnored[] =
    "func.func @main(%b: tensor<3xi1> {tinyml.name = \"flags\",\n"
    "                  tinyml.fixed_value = dense<[true, false, true]> : tensor<3xi1>},\n"
    "    %x: tensor<4xf32> {tinyml.name = \"x\"},\n"
    "    %k: tensor<4xi32> {tinyml.name = \"k\", tinyml.fixed_value = dense<5> : tensor<4xi32>},\n"
    "    %e: tensor<0xi64> {tinyml.name = \"axes\",\n"
    "                       tinyml.fixed_value = dense<> : tensor<0xi64>})\n"
    "    -> (tensor<4xf32> {tinyml.name = \"y\"}) {\n"
    "  %y = tosa.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "  return %y : tensor<4xf32>\n"
    "}\n";

static tinyml_module_t *load_text(const char *text, tinyml_blob_t **blob) {
  api_assert_ok(tinyml_compile(text, strlen(text), NULL, blob), "compile");
  return api_load_blob(*blob);
}

static void test_info_shows_fixed_bytes(void **unused) {
  (void)unused;
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kReshape, &blob);
  assert_int_equal(tinyml_module_input_count(m), 2);
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  api_assert_ok(tinyml_module_input_info(m, 0, &info), "info 0");
  assert_null(info.fixed_value);
  api_assert_ok(tinyml_module_input_info(m, 1, &info), "info 1");
  assert_string_equal(info.name, "shape");
  assert_int_equal(info.byte_size, 16);
  assert_non_null(info.fixed_value);
  const int64_t want[2] = {3, 2};
  assert_memory_equal(info.fixed_value, want, sizeof want);
  api_assert_ok(tinyml_module_output_info(m, 0, &info), "output info");
  assert_null(info.fixed_value);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* A caller built against the header before fixed_value existed: the field
 * is neither required nor written. */
static void test_older_info_struct(void **unused) {
  (void)unused;
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kReshape, &blob);
  tinyml_tensor_info_t info;
  memset(&info, 0xab, sizeof info);
  info.struct_size = offsetof(tinyml_tensor_info_t, fixed_value);
  api_assert_ok(tinyml_module_input_info(m, 1, &info), "older info");
  assert_string_equal(info.name, "shape");
  const void *untouched;
  memset(&untouched, 0xab, sizeof untouched);
  assert_ptr_equal(info.fixed_value, untouched);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_invoke_checks_the_value(void **unused) {
  (void)unused;
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kReshape, &blob);
  tinyml_context_t *c = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &c), "context");
  float x[6] = {1, -2, 3.5f, 4, 5, -6}, y[6];
  int64_t shape[2] = {3, 2};
  api_assert_ok(tinyml_context_set_input(c, 0, x, sizeof x), "x");
  api_assert_ok(tinyml_context_set_input(c, 1, shape, sizeof shape), "shape");
  api_assert_ok(tinyml_context_set_output(c, 0, y, sizeof y), "y");
  memset(y, 0, sizeof y);
  api_assert_ok(tinyml_context_invoke(c), "invoke");
  assert_memory_equal(y, x, sizeof x); /* Reshape keeps row-major order */

  shape[0] = 2; /* the caller asks for another shape: refused, not ignored */
  shape[1] = 3;
  memset(y, 0x7f, sizeof y);
  api_expect_error(tinyml_context_invoke(c), TINYML_STATUS_INVALID_ARGUMENT,
                   "tinyml_context_invoke: input 1 'shape' must equal the value fixed "
                   "at compile time", "element 0 is 2, the fixed value has 3");
  for (int i = 0; i < 6; ++i) assert_int_equal(((uint8_t *)y)[4 * i], 0x7f); /* unwritten */
  shape[0] = 3; /* only the second element differs */
  api_expect_error(tinyml_context_invoke(c), TINYML_STATUS_INVALID_ARGUMENT,
                   "input 1 'shape'", "element 1 is 3, the fixed value has 2");
  shape[1] = 2;
  api_assert_ok(tinyml_context_invoke(c), "invoke again");
  assert_memory_equal(y, x, sizeof x);
  tinyml_context_release(c);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* Unused pinned arguments stay inputs, in order; an empty one binds with
 * size 0 and always matches. */
static void test_ignored_arguments_stay_inputs(void **unused) {
  (void)unused;
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kIgnored, &blob);
  assert_int_equal(tinyml_module_input_count(m), 4);
  static const char *const names[4] = {"flags", "x", "k", "axes"};
  static const size_t sizes[4] = {3, 16, 16, 0};
  tinyml_tensor_info_t info[4];
  for (size_t i = 0; i < 4; ++i) {
    tinyml_tensor_info_init(&info[i]);
    api_assert_ok(tinyml_module_input_info(m, i, &info[i]), "info");
    assert_string_equal(info[i].name, names[i]);
    assert_int_equal(info[i].byte_size, sizes[i]);
    assert_int_equal(info[i].fixed_value != NULL, i != 1);
  }
  const uint8_t flags[3] = {1, 0, 1};
  const int32_t k[4] = {5, 5, 5, 5};
  assert_memory_equal(info[0].fixed_value, flags, 3);
  assert_memory_equal(info[2].fixed_value, k, sizeof k);

  tinyml_context_t *c = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &c), "context");
  uint8_t in_flags[3] = {1, 0, 1};
  int32_t in_k[4] = {5, 5, 5, 5};
  int64_t axes[1];
  float x[4] = {1, 2, -3, 0.25f}, y[4];
  api_assert_ok(tinyml_context_set_input(c, 0, in_flags, 3), "flags");
  api_assert_ok(tinyml_context_set_input(c, 1, x, sizeof x), "x");
  api_assert_ok(tinyml_context_set_input(c, 2, in_k, sizeof in_k), "k");
  api_assert_ok(tinyml_context_set_input(c, 3, axes, 0), "empty axes");
  api_assert_ok(tinyml_context_set_output(c, 0, y, sizeof y), "y");
  api_assert_ok(tinyml_context_invoke(c), "invoke");
  for (int i = 0; i < 4; ++i) assert_true(y[i] == x[i] + x[i]);
  in_flags[2] = 0;
  api_expect_error(tinyml_context_invoke(c), TINYML_STATUS_INVALID_ARGUMENT,
                   "input 0 'flags'", "element 2 is 0, the fixed value has 1");
  in_flags[2] = 1;
  in_k[3] = -5;
  api_expect_error(tinyml_context_invoke(c), TINYML_STATUS_INVALID_ARGUMENT,
                   "input 2 'k'", "element 3 is -5, the fixed value has 5");
  tinyml_context_release(c);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_wrong_type_refused(void **unused) {
  (void)unused;
  static const char kBad[] =
      "func.func @main(%x: tensor<2xf32> {tinyml.name = \"x\"},\n"
      "    %n: tensor<2xi64> {tinyml.name = \"count\",\n"
      "                       tinyml.fixed_value = dense<[1, 2]> : tensor<2xi32>})\n"
      "    -> (tensor<2xf32> {tinyml.name = \"y\"}) {\n"
      "  return %x : tensor<2xf32>\n"
      "}\n";
  tinyml_blob_t *blob = NULL;
  api_expect_error(tinyml_compile(kBad, strlen(kBad), NULL, &blob),
                   TINYML_STATUS_INVALID_ARGUMENT, "input 1 'count'", "tinyml.fixed_value");
  assert_null(blob);
}

/* A uint64 pin: the refusal prints both values as unsigned decimals. */
static void test_unsigned_value_in_message(void **unused) {
  (void)unused;
  static const char kU64[] =
      "func.func @main(%x: tensor<2xf32> {tinyml.name = \"x\"},\n"
      "    %n: tensor<1xi64> {tinyml.name = \"n\", tinyml.unsigned,\n"
      "                       tinyml.fixed_value = dense<-2> : tensor<1xi64>})\n"
      "    -> (tensor<2xf32> {tinyml.name = \"y\"}) {\n"
      "  return %x : tensor<2xf32>\n"
      "}\n";
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kU64, &blob);
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  api_assert_ok(tinyml_module_input_info(m, 1, &info), "info 1");
  assert_int_equal(info.dtype, TINYML_DTYPE_UINT64);
  tinyml_context_t *c = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &c), "context");
  float x[2] = {1, 2}, y[2];
  uint64_t n = 0x8000000000000000u;
  api_assert_ok(tinyml_context_set_input(c, 0, x, sizeof x), "x");
  api_assert_ok(tinyml_context_set_input(c, 1, &n, sizeof n), "n");
  api_assert_ok(tinyml_context_set_output(c, 0, y, sizeof y), "y");
  api_expect_error(tinyml_context_invoke(c), TINYML_STATUS_INVALID_ARGUMENT, "input 1 'n'",
                   "element 0 is 9223372036854775808, the fixed value has 18446744073709551614");
  tinyml_context_release(c);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_info_shows_fixed_bytes),
      cmocka_unit_test(test_older_info_struct),
      cmocka_unit_test(test_invoke_checks_the_value),
      cmocka_unit_test(test_ignored_arguments_stay_inputs),
      cmocka_unit_test(test_wrong_type_refused),
      cmocka_unit_test(test_unsigned_value_in_message),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
