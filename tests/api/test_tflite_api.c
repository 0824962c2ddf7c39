/* TFLite models through the public API: names and quantisation survive into
 * the module's signature, and a compile → load → invoke round trip works
 * through the installed-style shared library.  Reads ../shared's models
 * (argv[1] = the shared directory); skips with a printed reason only where
 * it is missing, and fails instead when CI=true. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "api_test_util.h"
#include "tinyml.h"

static char g_shared[4096];

static int shared_present(void) { return api_shared_present(g_shared, "models"); }

/* The module borrows the blob's bytes: release the module first. */
static tinyml_module_t *compile_shared(const char *rel, tinyml_blob_t **blob) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", g_shared, rel);
  *blob = api_compile_file(path, NULL);
  return api_load_blob(*blob);
}

static void expect_io(const tinyml_tensor_info_t *t, const char *name, tinyml_dtype_t dtype,
                      float scale, int64_t zp) {
  assert_string_equal(t->name, name);
  assert_int_equal(t->dtype, dtype);
  assert_int_equal(t->quant_count, 1);
  assert_true(fabsf(t->scales[0] - scale) <= 1e-6f * scale);
  assert_int_equal(t->zero_points[0], zp);
}

static void test_kws_signature(void **state) {
  (void)state;
  if (!shared_present()) skip();
  tinyml_blob_t *blob;
  tinyml_module_t *m = compile_shared("models/mlperf-tiny/kws_ref_model.tflite", &blob);
  tinyml_tensor_info_t in, out;
  tinyml_tensor_info_init(&in);
  tinyml_tensor_info_init(&out);
  api_assert_ok(tinyml_module_input_info(m, 0, &in), "input_info");
  api_assert_ok(tinyml_module_output_info(m, 0, &out), "output_info");
  expect_io(&in, "input_1", TINYML_DTYPE_INT8, 0.584703f, 83);
  assert_int_equal(in.rank, 4);
  assert_int_equal(in.dims[1], 49);
  expect_io(&out, "Identity", TINYML_DTYPE_INT8, 1.0f / 256, -128);
  assert_int_equal(out.byte_size, 12);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* Softmax outputs of an int8 model are probabilities in 1/256 steps; their
 * dequantised sum must be close to 1 for any input. */
static void test_kws_invoke_probabilities(void **state) {
  (void)state;
  if (!shared_present()) skip();
  tinyml_blob_t *blob;
  tinyml_module_t *m = compile_shared("models/mlperf-tiny/kws_ref_model.tflite", &blob);
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &ctx), "context_create");
  int8_t input[490], output[12];
  for (size_t i = 0; i < sizeof input; ++i) input[i] = (int8_t)(i * 37 % 256 - 128);
  api_assert_ok(tinyml_context_set_input(ctx, 0, input, sizeof input), "set_input");
  api_assert_ok(tinyml_context_set_output(ctx, 0, output, sizeof output), "set_output");
  api_assert_ok(tinyml_context_invoke(ctx), "invoke");
  double sum = 0;
  for (int i = 0; i < 12; ++i) sum += (output[i] + 128) / 256.0;
  assert_true(sum > 0.9 && sum < 1.1);
  tinyml_context_release(ctx);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_truncated_tflite_is_refused(void **state) {
  (void)state;
  if (!shared_present()) skip();
  char path[4200];
  snprintf(path, sizeof path, "%s/models/tflm/hello_world_int8.tflite", g_shared);
  size_t size = 0;
  char *bytes = api_read_file(path, &size);
  tinyml_blob_t *blob = NULL;
  api_expect_error(tinyml_compile(bytes, size / 2, NULL, &blob), TINYML_STATUS_INVALID_MODEL,
                   "tflite: ");
  assert_null(blob);
  free(bytes);
}

int main(int argc, char **argv) {
  snprintf(g_shared, sizeof g_shared, "%s", argc > 1 ? argv[1] : "../shared");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kws_signature),
      cmocka_unit_test(test_kws_invoke_probabilities),
      cmocka_unit_test(test_truncated_tflite_is_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
