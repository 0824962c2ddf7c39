/* Pre/post-processing options through the public header and the shared
 * library: the _init defaults, the new inputs and outputs as the module
 * reports them, what the outputs hold, older struct sizes, the emitted C
 * forms, and every refusal (INVALID_ARGUMENT naming the problem).  The
 * stages' arithmetic is tests/compiler/test_prepost.c's job.
 *
 * Usage: test_prepost_api MODEL_DIR (tests/e2e/models) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"

/* One 16x16x3 float input "image"; outputs "logits" and "probs", [1, 10]. */
#define CNN "cnn_two_results"

static tinyml_compile_options_t options(const tinyml_preprocess_t *pre,
                                        const tinyml_postprocess_t *post) {
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.preprocess = pre;
  o.postprocess = post;
  return o;
}

static tinyml_status_t compile_model(const char *name, const tinyml_compile_options_t *o,
                                     tinyml_blob_t **blob) {
  size_t size;
  char *text = api_read_model(name, &size);
  tinyml_status_t st = tinyml_compile(text, size, o, blob);
  free(text);
  return st;
}

static tinyml_preprocess_t image(uint32_t w, uint32_t h, tinyml_pixel_format_t px) {
  tinyml_preprocess_t p;
  tinyml_preprocess_init(&p);
  p.kind = TINYML_INPUT_IMAGE;
  p.image_width = w;
  p.image_height = h;
  p.pixels = px;
  return p;
}

static void expect_info(const tinyml_module_t *m, int input, size_t i, const char *name,
                        tinyml_dtype_t dtype, uint32_t rank, const int64_t *dims) {
  tinyml_tensor_info_t t;
  tinyml_tensor_info_init(&t);
  api_assert_ok(input ? tinyml_module_input_info(m, i, &t) : tinyml_module_output_info(m, i, &t),
                "info");
  assert_string_equal(t.name, name);
  assert_int_equal(t.dtype, dtype);
  assert_int_equal(t.rank, rank);
  for (uint32_t d = 0; d < rank; ++d) assert_int_equal(t.dims[d], dims[d]);
}

static void test_init_defaults(void **state) {
  (void)state;
  tinyml_preprocess_t p;
  memset(&p, 0x5a, sizeof p);
  tinyml_preprocess_init(&p);
  assert_int_equal(p.struct_size, sizeof p);
  assert_int_equal(p.kind, TINYML_INPUT_AS_MODEL);
  assert_int_equal(p.pixels, TINYML_PIXELS_RGB888);
  assert_int_equal(p.resize, TINYML_RESIZE_BILINEAR);
  assert_int_equal(p.model_layout, TINYML_LAYOUT_AUTO);
  assert_int_equal(p.channel_count, 1);
  for (int c = 0; c < 4; ++c) {
    assert_true(p.mean[c] == 0.0f);
    assert_true(p.std[c] == 1.0f);
  }
  tinyml_postprocess_t q;
  memset(&q, 0x5a, sizeof q);
  tinyml_postprocess_init(&q);
  assert_int_equal(q.struct_size, sizeof q);
  assert_int_equal(q.dequantize | q.softmax | q.argmax, 0);
  assert_int_equal(q.top_k, 0);
  tinyml_preprocess_init(NULL); /* no-ops */
  tinyml_postprocess_init(NULL);
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  assert_null(o.preprocess);
  assert_null(o.postprocess);
}

/* The image input and the top-k outputs replace the model's own; the
 * model's second output follows unchanged. */
static void test_signature(void **state) {
  (void)state;
  tinyml_preprocess_t pre = image(40, 30, TINYML_PIXELS_RGB565);
  tinyml_postprocess_t post;
  tinyml_postprocess_init(&post);
  post.softmax = 1;
  post.argmax = 1;
  post.top_k = 3;
  tinyml_compile_options_t o = options(&pre, &post);
  tinyml_blob_t *blob = NULL;
  api_assert_ok(compile_model(CNN, &o, &blob), "compile");
  tinyml_module_t *m = api_load_blob(blob);
  assert_int_equal(tinyml_module_input_count(m), 1);
  expect_info(m, 1, 0, "image", TINYML_DTYPE_UINT8, 4, (const int64_t[]){1, 30, 40, 2});
  assert_int_equal(tinyml_module_output_count(m), 4);
  expect_info(m, 0, 0, "top_k_indices", TINYML_DTYPE_INT32, 1, (const int64_t[]){3});
  expect_info(m, 0, 1, "top_k_scores", TINYML_DTYPE_FLOAT32, 1, (const int64_t[]){3});
  expect_info(m, 0, 2, "class", TINYML_DTYPE_INT32, 1, (const int64_t[]){1});
  expect_info(m, 0, 3, "probs", TINYML_DTYPE_FLOAT32, 2, (const int64_t[]){1, 10});
  api_io_t io;
  assert_true(api_io_alloc(m, 1 << 20, 7, &io));
  api_assert_ok(api_run(m, NULL, &io, 1), "invoke");
  const int32_t *idx = io.outputs[0], *cls = io.outputs[2];
  const float *scores = io.outputs[1], *probs = io.outputs[3];
  /* The model's own softmax ("probs") ranks as its logits do. */
  assert_int_equal(cls[0], idx[0]);
  for (int i = 0; i < 3; ++i) {
    assert_true(idx[i] >= 0 && idx[i] < 10);
    assert_true(fabsf(scores[i] - probs[idx[i]]) <= 1e-5f);
    if (i) assert_true(scores[i] <= scores[i - 1]);
  }
  for (int c = 0; c < 10; ++c)
    if (c != idx[0] && c != idx[1] && c != idx[2]) assert_true(probs[c] <= scores[2]);
  api_io_free(&io);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_scores_and_int16(void **state) {
  (void)state;
  tinyml_preprocess_t pre;
  tinyml_preprocess_init(&pre);
  pre.kind = TINYML_INPUT_INT16;
  tinyml_postprocess_t post;
  tinyml_postprocess_init(&post);
  post.dequantize = 1; /* a float output: nothing to do but rename it */
  tinyml_compile_options_t o = options(&pre, &post);
  tinyml_blob_t *blob = NULL;
  api_assert_ok(compile_model("softmax", &o, &blob), "compile");
  tinyml_module_t *m = api_load_blob(blob);
  expect_info(m, 1, 0, "samples", TINYML_DTYPE_INT16, 3, (const int64_t[]){2, 3, 10});
  expect_info(m, 0, 0, "scores", TINYML_DTYPE_FLOAT32, 3, (const int64_t[]){2, 3, 10});
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* Structs from an older header: the fields they lack take defaults. */
static void test_older_structs(void **state) {
  (void)state;
  tinyml_preprocess_t pre = image(16, 16, TINYML_PIXELS_RGB888);
  tinyml_compile_options_t o = options(&pre, NULL);
  o.struct_size = offsetof(tinyml_compile_options_t, preprocess); /* before the stages */
  o.preprocess = (const tinyml_preprocess_t *)(uintptr_t)0x10; /* never read */
  tinyml_blob_t *blob = NULL;
  api_assert_ok(compile_model(CNN, &o, &blob), "old options");
  tinyml_module_t *m = api_load_blob(blob);
  expect_info(m, 1, 0, "image", TINYML_DTYPE_FLOAT32, 4, (const int64_t[]){1, 16, 16, 3});
  tinyml_module_release(m);
  tinyml_blob_release(blob);
  o = options(&pre, NULL);
  pre.struct_size = offsetof(tinyml_preprocess_t, channel_count); /* no mean/std */
  pre.channel_count = 3;
  pre.std[0] = 0.0f; /* beyond the struct: ignored, so not refused */
  api_assert_ok(compile_model(CNN, &o, &blob), "old preprocess");
  m = api_load_blob(blob);
  expect_info(m, 1, 0, "image", TINYML_DTYPE_UINT8, 4, (const int64_t[]){1, 16, 16, 3});
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* A preprocess of kind AS_MODEL and a postprocess with nothing set are
 * the same as none. */
static void test_empty_stages(void **state) {
  (void)state;
  tinyml_preprocess_t pre;
  tinyml_preprocess_init(&pre);
  tinyml_postprocess_t post;
  tinyml_postprocess_init(&post);
  tinyml_compile_options_t o = options(&pre, &post);
  tinyml_blob_t *blob = NULL;
  api_assert_ok(compile_model(CNN, &o, &blob), "compile");
  tinyml_module_t *m = api_load_blob(blob);
  expect_info(m, 1, 0, "image", TINYML_DTYPE_FLOAT32, 4, (const int64_t[]){1, 16, 16, 3});
  expect_info(m, 0, 0, "logits", TINYML_DTYPE_FLOAT32, 2, (const int64_t[]){1, 10});
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static int contains(const void *data, size_t size, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= size; ++i)
    if (memcmp((const char *)data + i, needle, n) == 0) return 1;
  return 0;
}

/* The stages are part of the graph, so the C forms carry them too. */
static void test_emit_c(void **state) {
  (void)state;
  tinyml_preprocess_t pre = image(20, 10, TINYML_PIXELS_GRAY8);
  tinyml_postprocess_t post;
  tinyml_postprocess_init(&post);
  post.argmax = 1;
  tinyml_compile_options_t o = options(&pre, &post);
  o.emit = TINYML_EMIT_C;
  o.name = "cnn";
  size_t size;
  char *text = api_read_model(CNN, &size);
  tinyml_files_t *files = NULL;
  api_assert_ok(tinyml_compile_files(text, size, &o, &files), "compile_files");
  free(text);
  const tinyml_blob_t *h = tinyml_files_blob(files, 2);
  assert_string_equal(tinyml_files_name(files, 2), "cnn.h");
  assert_true(contains(tinyml_blob_data(h), tinyml_blob_size(h), "\"image\", uint8 [1, 10, 20, 1]"));
  assert_true(contains(tinyml_blob_data(h), tinyml_blob_size(h), "\"class\""));
  tinyml_files_release(files);
}

/* ---- refusals ---------------------------------------------------------- */

static void expect_refusal(const char *model, const tinyml_preprocess_t *pre,
                           const tinyml_postprocess_t *post, const char *needle) {
  tinyml_compile_options_t o = options(pre, post);
  tinyml_blob_t *blob = (tinyml_blob_t *)(uintptr_t)0x5a5a5a50;
  api_expect_error(compile_model(model, &o, &blob), TINYML_STATUS_INVALID_ARGUMENT, needle);
  assert_ptr_equal(blob, (tinyml_blob_t *)(uintptr_t)0x5a5a5a50);
}

static void test_refuse_options(void **state) {
  (void)state;
  tinyml_preprocess_t p = image(16, 16, TINYML_PIXELS_RGB888);
  p.kind = (tinyml_input_kind_t)9;
  expect_refusal(CNN, &p, NULL, "kind is not a tinyml_input_kind_t");
  p = image(16, 16, (tinyml_pixel_format_t)7);
  expect_refusal(CNN, &p, NULL, "pixels");
  p = image(16, 16, TINYML_PIXELS_RGB888);
  p.resize = (tinyml_resize_t)2;
  expect_refusal(CNN, &p, NULL, "resize");
  p = image(16, 16, TINYML_PIXELS_RGB888);
  p.model_layout = (tinyml_layout_t)3;
  expect_refusal(CNN, &p, NULL, "model_layout");
  p = image(0, 16, TINYML_PIXELS_RGB888);
  expect_refusal(CNN, &p, NULL, "image_width and image_height");
  p = image(16, 16, TINYML_PIXELS_RGB888);
  p.channel_count = 5;
  expect_refusal(CNN, &p, NULL, "channel_count must be 1..4");
  p = image(16, 16, TINYML_PIXELS_RGB888);
  p.std[0] = 0.0f;
  expect_refusal(CNN, &p, NULL, "std not 0");
  p = image(16, 16, TINYML_PIXELS_RGB888);
  p.mean[0] = NAN;
  expect_refusal(CNN, &p, NULL, "finite");
  p = image(16, 16, TINYML_PIXELS_RGB888);
  p.struct_size = 4;
  expect_refusal(CNN, &p, NULL, "preprocess.struct_size");
  tinyml_postprocess_t q;
  tinyml_postprocess_init(&q);
  q.struct_size = 2;
  expect_refusal(CNN, NULL, &q, "postprocess.struct_size");
}

static void test_refuse_misfits(void **state) {
  (void)state;
  tinyml_preprocess_t p = image(16, 16, TINYML_PIXELS_RGB888);
  expect_refusal("softmax", &p, NULL, "needs a 4-D model input");
  expect_refusal("matmul", &p, NULL, "exactly one input; this one has 2");
  expect_refusal("depthwise_conv2d", &p, NULL, "channel count mismatch");
  p.channel_count = 2;
  expect_refusal(CNN, &p, NULL, "mean/std have 2 channels");
  tinyml_preprocess_t s;
  tinyml_preprocess_init(&s);
  s.kind = TINYML_INPUT_INT16;
  s.channel_count = 3;
  expect_refusal("softmax", &s, NULL, "its last axis has 10");
  tinyml_postprocess_t q;
  tinyml_postprocess_init(&q);
  q.top_k = 11;
  expect_refusal(CNN, NULL, &q, "top_k 11 is larger than the 10 classes");
  q.top_k = 2;
  expect_refusal("softmax", NULL, &q, "top_k needs one row");
}

static void test_refuse_integer_dequantize(void **state) {
  (void)state;
  /* An int32 output without quantisation parameters has no scale. */
  char text[] =
      "module {\n  func.func @main(%a: tensor<1x4xi32>) -> tensor<1x4xi32> {\n"
      "    return %a : tensor<1x4xi32>\n  }\n}\n";
  tinyml_postprocess_t q;
  tinyml_postprocess_init(&q);
  q.softmax = 1;
  tinyml_compile_options_t o = options(NULL, &q);
  tinyml_blob_t *blob = NULL;
  api_expect_error(tinyml_compile(text, strlen(text), &o, &blob),
                   TINYML_STATUS_INVALID_ARGUMENT, "softmax needs a float32 or quantised");
}

/* A pinned input (tinyml.fixed_value) keeps its run-time check only as an
 * input of the module, which pre-processing would replace. */
static void test_refuse_pinned_input(void **state) {
  (void)state;
  char text[] =
      "module {\n  func.func @main(%a: tensor<1x4x4x3xf32> {tinyml.name = \"img\",\n"
      "      tinyml.fixed_value = dense<1.0> : tensor<1x4x4x3xf32>}) -> tensor<1x4x4x3xf32> {\n"
      "    return %a : tensor<1x4x4x3xf32>\n  }\n}\n";
  tinyml_preprocess_t p = image(8, 8, TINYML_PIXELS_RGB888);
  tinyml_compile_options_t o = options(&p, NULL);
  tinyml_blob_t *blob = NULL;
  api_expect_error(tinyml_compile(text, strlen(text), &o, &blob), TINYML_STATUS_INVALID_ARGUMENT,
                   "input 0 'img' has a value fixed at compile time");
  assert_null(blob);
}

/* Every allocation the stages make can fail: with the Nth allocation
 * failing, for every N until the compile succeeds, the compile says
 * OUT_OF_MEMORY, leaves the blob alone and frees all it took. */
static void test_allocation_failure(void **state) {
  (void)state;
  const char *text =
      "module {\n  func.func @main(%a: tensor<1x4x4x1xi8> {tinyml.scale = array<f32: 0.5>, "
      "tinyml.zero_point = array<i64: 1>}) -> (tensor<1x16xi8> {tinyml.scale = array<f32: 0.25>, "
      "tinyml.zero_point = array<i64: -3>}) {\n"
      "    %s = tosa.const_shape {values = dense<[1, 16]> : tensor<2xindex>} : () -> "
      "!tosa.shape<2>\n"
      "    %r = tosa.reshape %a, %s : (tensor<1x4x4x1xi8>, !tosa.shape<2>) -> tensor<1x16xi8>\n"
      "    return %r : tensor<1x16xi8>\n  }\n}\n";
  tinyml_preprocess_t pre = image(6, 5, TINYML_PIXELS_RGB888);
  tinyml_postprocess_t post;
  tinyml_postprocess_init(&post);
  post.softmax = 1;
  post.argmax = 1;
  post.top_k = 3;
  for (size_t n = 1;; ++n) {
    assert_true(n < 100000);
    api_counting_alloc_t c;
    api_counting_alloc_init(&c, n, 0);
    tinyml_compile_options_t o = options(&pre, &post);
    o.allocator = c.allocator;
    tinyml_blob_t *blob = (tinyml_blob_t *)(uintptr_t)0x5a5a5a50;
    tinyml_status_t st = tinyml_compile(text, strlen(text), &o, &blob);
    if (!st) {
      tinyml_blob_release(blob);
      assert_int_equal(c.allocs, c.frees);
      print_message("  compile succeeded once allocation %zu no longer failed\n", n);
      return;
    }
    if (tinyml_status_code(st) != TINYML_STATUS_OUT_OF_MEMORY)
      fail_msg("allocation %zu: %s", n, tinyml_status_message(st));
    assert_ptr_equal(blob, (tinyml_blob_t *)(uintptr_t)0x5a5a5a50);
    tinyml_status_free(st);
    assert_int_equal(c.allocs, c.frees);
    assert_int_equal(c.bad_requests, 0);
  }
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_init_defaults),   cmocka_unit_test(test_signature),
      cmocka_unit_test(test_scores_and_int16), cmocka_unit_test(test_older_structs),
      cmocka_unit_test(test_empty_stages),    cmocka_unit_test(test_emit_c),
      cmocka_unit_test(test_refuse_options),  cmocka_unit_test(test_refuse_misfits),
      cmocka_unit_test(test_refuse_integer_dequantize),
      cmocka_unit_test(test_refuse_pinned_input),
      cmocka_unit_test(test_allocation_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
