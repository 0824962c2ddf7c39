/* Profiling through the public header and the shared library: the step
 * labels the compiler records (tinyml_module_step_label, left out with
 * `strip`) and the step hook (tinyml_context_set_step_hook).
 * argv[1]: tests/e2e/models; argv[2]: ../shared, for a real TFLite model
 * (skipped with a printed reason only where it is missing outside CI). */
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

static const char *g_shared = "../shared";

static int shared_present(void) { return api_shared_present(g_shared, "models"); }

static int any_label_has(const tinyml_module_t *m, const char *needle) {
  for (size_t s = 0; s < tinyml_module_dispatch_count(m); ++s)
    if (strstr(tinyml_module_step_label(m, s), needle)) return 1;
  return 0;
}

/* kws_ref_model: every step names its TFLite operators and output tensor. */
static void test_tflite_labels(void **state) {
  (void)state;
  if (!shared_present()) {
    print_message("skipped: ../shared (kws_ref_model) is missing\n");
    skip();
  }
  char path[4200];
  snprintf(path, sizeof path, "%s/models/mlperf-tiny/kws_ref_model.tflite", g_shared);
  tinyml_blob_t *blob = api_compile_file(path, NULL);
  tinyml_module_t *m = api_load_blob(blob);
  assert_true(tinyml_module_dispatch_count(m) > 5);
  for (size_t s = 0; s < tinyml_module_dispatch_count(m); ++s)
    assert_true(tinyml_module_step_label(m, s)[0] != '\0');
  /* The int8 conv runs on the microkernel, which the label names too. */
  assert_string_equal(tinyml_module_step_label(m, 0),
                      "CONV_2D functional_1/activation/Relu, kernel conv_s8");
  assert_true(any_label_has(m, "DEPTHWISE_CONV_2D functional_1/"));
  assert_true(any_label_has(m, "FULLY_CONNECTED functional_1/dense/BiasAdd"));
  assert_true(any_label_has(m, "SOFTMAX "));
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* A TOSA MLIR model is named by op and line; `strip` leaves names out and
 * only names: the stripped module is smaller and computes the same. */
static void test_mlir_labels_and_strip(void **state) {
  (void)state;
  tinyml_blob_t *full = api_compile_model("conv2d", NULL);
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.strip = 1;
  tinyml_blob_t *bare = api_compile_model("conv2d", &o);
  tinyml_module_t *mf = api_load_blob(full), *mb = api_load_blob(bare);
  assert_true(strstr(tinyml_module_step_label(mf, 0), "tosa.conv2d line ") != NULL);
  assert_int_equal(tinyml_module_dispatch_count(mf), tinyml_module_dispatch_count(mb));
  for (size_t s = 0; s < tinyml_module_dispatch_count(mb); ++s)
    assert_string_equal(tinyml_module_step_label(mb, s), "");
  assert_true(tinyml_blob_size(bare) < tinyml_blob_size(full));
  api_io_t a, b;
  assert_true(api_io_alloc(mf, 1 << 24, 7, &a));
  assert_true(api_io_alloc(mb, 1 << 24, 7, &b));
  api_assert_ok(api_run(mf, NULL, &a, 1), "labelled");
  api_assert_ok(api_run(mb, NULL, &b, 1), "stripped");
  assert_true(api_io_outputs_equal(&a, &b));
  api_io_free(&a);
  api_io_free(&b);
  tinyml_module_release(mf);
  tinyml_module_release(mb);
  tinyml_blob_release(full);
  tinyml_blob_release(bare);
}

static void test_label_bad_arguments(void **state) {
  (void)state;
  tinyml_blob_t *blob = api_compile_model("conv2d", NULL);
  tinyml_module_t *m = api_load_blob(blob);
  assert_string_equal(tinyml_module_step_label(NULL, 0), "");
  assert_string_equal(tinyml_module_step_label(m, tinyml_module_dispatch_count(m)), "");
  assert_string_equal(tinyml_module_step_label(m, (size_t)-1), "");
  api_expect_error(tinyml_context_set_step_hook(NULL, NULL, NULL),
                   TINYML_STATUS_INVALID_ARGUMENT, "tinyml_context_set_step_hook",
                   "context must not be NULL");
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

typedef struct calls {
  size_t n, bad;
  size_t expect_step;
  int expect_done;
} calls_t;

/* Each step is announced, then finished, in schedule order. */
static void on_step(void *user, size_t step, int done) {
  calls_t *c = user;
  if (step != c->expect_step || done != c->expect_done) c->bad++;
  c->n++;
  c->expect_done = !done;
  if (done) c->expect_step = step + 1;
}

/* Two steps' calls per step and invoke, none once removed, same outputs,
 * also on a context with threads. */
static void run_hooked(const char *model, uint32_t threads) {
  tinyml_blob_t *blob = api_compile_model(model, NULL);
  tinyml_module_t *m = api_load_blob(blob);
  size_t steps = tinyml_module_dispatch_count(m);
  api_io_t plain, hooked;
  assert_true(api_io_alloc(m, 1 << 24, 3, &plain));
  assert_true(api_io_alloc(m, 1 << 24, 3, &hooked));
  api_assert_ok(api_run(m, NULL, &plain, 1), "without a hook");
  tinyml_context_options_t co;
  tinyml_context_options_init(&co);
  co.thread_count = threads;
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(m, &co, &ctx), "context");
  api_assert_ok(api_io_bind(ctx, &hooked), "bind");
  calls_t c = {0, 0, 0, 0};
  api_assert_ok(tinyml_context_set_step_hook(ctx, on_step, &c), "set hook");
  for (int i = 0; i < 3; ++i) {
    c.expect_step = 0;
    api_assert_ok(tinyml_context_invoke(ctx), "hooked invoke");
  }
  assert_int_equal(c.bad, 0);
  assert_int_equal(c.n, 3 * 2 * steps);
  assert_true(api_io_outputs_equal(&plain, &hooked));
  api_assert_ok(tinyml_context_set_step_hook(ctx, NULL, NULL), "remove hook");
  api_assert_ok(tinyml_context_invoke(ctx), "unhooked invoke");
  assert_int_equal(c.n, 3 * 2 * steps);
  tinyml_context_release(ctx);
  api_io_free(&plain);
  api_io_free(&hooked);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_hook_order(void **state) {
  (void)state;
  run_hooked("cnn_two_results", 1);
}

static void test_hook_with_threads(void **state) {
  (void)state;
  run_hooked("matmul_tiles", 2);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  if (argc > 2) g_shared = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tflite_labels),
      cmocka_unit_test(test_mlir_labels_and_strip),
      cmocka_unit_test(test_label_bad_arguments),
      cmocka_unit_test(test_hook_order),
      cmocka_unit_test(test_hook_with_threads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
