/* Pre/post-processing compiled into the graph, checked against the same
 * stages as plain C loops (test_prepost_ref.c).  The models pass their
 * input straight through, so a module's output is exactly what its stages
 * computed: every pixel format, resize mode, layout and model dtype, the
 * int16 input, and every post-processing output.  The C loops do the same
 * float32 operations in the same order, so the results must be identical,
 * not merely close.  Uses only the public API. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_prepost_ref.h"
#include "tinyml.h"

/* ---- helpers ----------------------------------------------------------- */

static void check(tinyml_status_t st, const char *what) {
  if (!st) return;
  fail_msg("%s: %s: %s", what, tinyml_status_code_name(tinyml_status_code(st)),
           tinyml_status_message(st));
}

static uint32_t g_seed = 12345;
static uint32_t next_random(void) {
  g_seed = g_seed * 1664525u + 1013904223u;
  return g_seed >> 8;
}

static const char *elem_name(tinyml_dtype_t d) {
  switch (d) {
    case TINYML_DTYPE_FLOAT32: return "f32";
    case TINYML_DTYPE_INT16: return "i16";
    case TINYML_DTYPE_INT32: return "i32";
    default: return "i8";
  }
}

typedef struct port {
  tinyml_dtype_t dtype;
  float scale; /* 0 = not quantised */
  int64_t zero_point;
  uint32_t rank;
  int64_t dims[4];
} port_t;

/* A TOSA model whose output is its input, with `p`'s name attributes. */
static char *identity_model(const port_t *p) {
  char type[128], attrs[256];
  size_t n = (size_t)snprintf(type, sizeof type, "tensor<");
  for (uint32_t d = 0; d < p->rank; ++d)
    n += (size_t)snprintf(type + n, sizeof type - n, "%lldx", (long long)p->dims[d]);
  snprintf(type + n, sizeof type - n, "%s>", elem_name(p->dtype));
  n = (size_t)snprintf(attrs, sizeof attrs, "tinyml.name = \"x\"%s",
                       p->dtype == TINYML_DTYPE_UINT8 ? ", tinyml.unsigned" : "");
  if (p->scale > 0.0f)
    snprintf(attrs + n, sizeof attrs - n,
             ", tinyml.scale = array<f32: %.9e>, tinyml.zero_point = array<i64: %lld>",
             (double)p->scale, (long long)p->zero_point);
  char *text = malloc(1024);
  snprintf(text, 1024,
           "module {\n  func.func @main(%%a: %s {%s}) -> (%s {%s}) {\n"
           "    return %%a : %s\n  }\n}\n",
           type, attrs, type, attrs, type);
  return text;
}

typedef struct run {
  tinyml_blob_t *blob;
  tinyml_module_t *module;
  void *out[4];
  size_t out_size[4];
  size_t outputs;
} run_t;

static void compile_run(const port_t *model, const tinyml_preprocess_t *pre,
                        const tinyml_postprocess_t *post, const void *in, run_t *r) {
  char *text = identity_model(model);
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.preprocess = pre;
  o.postprocess = post;
  memset(r, 0, sizeof(*r));
  check(tinyml_compile(text, strlen(text), &o, &r->blob), "compile");
  free(text);
  check(tinyml_module_load(tinyml_blob_data(r->blob), tinyml_blob_size(r->blob), NULL,
                           &r->module), "load");
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  check(tinyml_module_input_info(r->module, 0, &info), "input_info");
  tinyml_context_t *ctx = NULL;
  check(tinyml_context_create(r->module, NULL, &ctx), "context");
  check(tinyml_context_set_input(ctx, 0, in, info.byte_size), "set_input");
  r->outputs = tinyml_module_output_count(r->module);
  assert_true(r->outputs <= 4);
  for (size_t i = 0; i < r->outputs; ++i) {
    check(tinyml_module_output_info(r->module, i, &info), "output_info");
    r->out_size[i] = info.byte_size;
    r->out[i] = calloc(1, info.byte_size + 64);
    check(tinyml_context_set_output(ctx, i, r->out[i], info.byte_size), "set_output");
  }
  check(tinyml_context_invoke(ctx), "invoke");
  tinyml_context_release(ctx);
}

static void run_free(run_t *r) {
  for (size_t i = 0; i < r->outputs; ++i) free(r->out[i]);
  tinyml_module_release(r->module);
  tinyml_blob_release(r->blob);
}

static void expect_info(const tinyml_module_t *m, int input, size_t i, const char *name,
                        tinyml_dtype_t dtype) {
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  check(input ? tinyml_module_input_info(m, i, &info) : tinyml_module_output_info(m, i, &info),
        "info");
  assert_string_equal(info.name, name);
  assert_int_equal(info.dtype, dtype);
}

/* Bytes must be identical; a float mismatch names the element. */
static void expect_same(const void *got, const void *want, size_t size, tinyml_dtype_t dtype,
                        const char *what) {
  if (memcmp(got, want, size) == 0) return;
  size_t es = tinyml_dtype_size(dtype);
  for (size_t i = 0; i < size / es; ++i) {
    if (memcmp((const char *)got + i * es, (const char *)want + i * es, es) == 0) continue;
    if (dtype == TINYML_DTYPE_FLOAT32)
      fail_msg("%s: element %zu is %.9g, expected %.9g", what, i,
               (double)((const float *)got)[i], (double)((const float *)want)[i]);
    fail_msg("%s: element %zu differs", what, i);
  }
}

/* ---- image pre-processing ---------------------------------------------- */

typedef struct image_case {
  const char *what;
  port_t model;
  tinyml_layout_t layout; /* for the model; AUTO guesses */
  int nchw;               /* what the model really is */
  tinyml_pixel_format_t pixels;
  tinyml_resize_t resize;
  uint32_t width, height;
  uint32_t channel_count;
  float mean[3], std[3];
} image_case_t;

static const image_case_t kImageCases[] = {
    {"rgb888 downscaled bilinear to float32 NHWC, per-channel mean/std",
     {TINYML_DTYPE_FLOAT32, 0, 0, 4, {1, 6, 8, 3}}, TINYML_LAYOUT_AUTO, 0,
     TINYML_PIXELS_RGB888, TINYML_RESIZE_BILINEAR, 13, 11, 3, {10, 20, 30}, {2, 3, 4}},
    {"bgr888 upscaled bilinear to int8 gray (luma)",
     {TINYML_DTYPE_INT8, 2.0f / 255.0f, -1, 4, {1, 9, 7, 1}}, TINYML_LAYOUT_AUTO, 0,
     TINYML_PIXELS_BGR888, TINYML_RESIZE_BILINEAR, 5, 4, 1, {127.5f}, {127.5f}},
    {"rgb565 nearest to uint8 NCHW (guessed), identity normalisation",
     {TINYML_DTYPE_UINT8, 1.0f, 0, 4, {1, 3, 6, 5}}, TINYML_LAYOUT_AUTO, 1,
     TINYML_PIXELS_RGB565, TINYML_RESIZE_NEAREST, 17, 9, 1, {0}, {1}},
    {"gray8 same size to float32 NCHW",
     {TINYML_DTYPE_FLOAT32, 0, 0, 4, {1, 1, 4, 4}}, TINYML_LAYOUT_NCHW, 1,
     TINYML_PIXELS_GRAY8, TINYML_RESIZE_BILINEAR, 4, 4, 1, {3}, {0.5f}},
    {"gray8 replicated to three channels, nearest, float32",
     {TINYML_DTYPE_FLOAT32, 0, 0, 4, {1, 5, 5, 3}}, TINYML_LAYOUT_NHWC, 0,
     TINYML_PIXELS_GRAY8, TINYML_RESIZE_NEAREST, 10, 3, 1, {0}, {255}},
    {"rgb565 bilinear to int8 gray",
     {TINYML_DTYPE_INT8, 0.02f, 5, 4, {1, 7, 6, 1}}, TINYML_LAYOUT_AUTO, 0,
     TINYML_PIXELS_RGB565, TINYML_RESIZE_BILINEAR, 11, 16, 1, {100}, {1.5f}},
    {"rgb888 bilinear to int16 NHWC",
     {TINYML_DTYPE_INT16, 0.01f, 7, 4, {1, 4, 6, 3}}, TINYML_LAYOUT_AUTO, 0,
     TINYML_PIXELS_RGB888, TINYML_RESIZE_BILINEAR, 9, 7, 3, {1, 2, 3}, {0.25f, 0.5f, 1}},
    {"bgr888 nearest to uint8 NHWC 3 channels, explicit NHWC",
     {TINYML_DTYPE_UINT8, 0.5f, 128, 4, {1, 3, 3, 3}}, TINYML_LAYOUT_NHWC, 0,
     TINYML_PIXELS_BGR888, TINYML_RESIZE_NEAREST, 8, 8, 1, {128}, {2}},
};

static void image_case(const image_case_t *c) {
  tinyml_preprocess_t pre;
  tinyml_preprocess_init(&pre);
  pre.kind = TINYML_INPUT_IMAGE;
  pre.pixels = c->pixels;
  pre.resize = c->resize;
  pre.image_width = c->width;
  pre.image_height = c->height;
  pre.model_layout = c->layout;
  pre.channel_count = c->channel_count;
  memcpy(pre.mean, c->mean, sizeof c->mean);
  memcpy(pre.std, c->std, sizeof c->std);
  size_t bytes = (size_t)c->width * c->height * ppref_pixel_bytes(c->pixels);
  uint8_t *image = malloc(bytes);
  for (size_t i = 0; i < bytes; ++i) image[i] = (uint8_t)next_random();
  run_t r;
  compile_run(&c->model, &pre, NULL, image, &r);
  expect_info(r.module, 1, 0, "image", TINYML_DTYPE_UINT8);
  expect_info(r.module, 0, 0, "x", c->model.dtype);
  const int64_t *d = c->model.dims;
  uint32_t h = (uint32_t)(c->nchw ? d[2] : d[1]), w = (uint32_t)(c->nchw ? d[3] : d[2]);
  uint32_t ch = (uint32_t)(c->nchw ? d[1] : d[3]);
  ppref_model_input_t mi = {c->model.dtype, c->model.scale, c->model.zero_point};
  float *scratch = malloc(PPREF_IMAGE_SCRATCH(&pre, h, w) * sizeof(float));
  void *want = calloc(1, r.out_size[0]);
  ppref_image(image, &pre, h, w, ch, c->nchw, &mi, scratch, want);
  expect_same(r.out[0], want, r.out_size[0], c->model.dtype, c->what);
  free(want);
  free(scratch);
  free(image);
  run_free(&r);
}

static void test_image(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kImageCases / sizeof kImageCases[0]; ++i) {
    print_message("  %s\n", kImageCases[i].what);
    image_case(&kImageCases[i]);
  }
}

/* ---- int16 pre-processing ---------------------------------------------- */

static void int16_case(const port_t *model, uint32_t channel_count, const float *mean,
                       const float *std) {
  tinyml_preprocess_t pre;
  tinyml_preprocess_init(&pre);
  pre.kind = TINYML_INPUT_INT16;
  pre.channel_count = channel_count;
  memcpy(pre.mean, mean, channel_count * sizeof(float));
  memcpy(pre.std, std, channel_count * sizeof(float));
  size_t n = 1;
  for (uint32_t i = 0; i < model->rank; ++i) n *= (size_t)model->dims[i];
  int16_t *samples = malloc(n * sizeof(int16_t));
  for (size_t i = 0; i < n; ++i) samples[i] = (int16_t)next_random();
  run_t r;
  compile_run(model, &pre, NULL, samples, &r);
  expect_info(r.module, 1, 0, "samples", TINYML_DTYPE_INT16);
  float *f = malloc(n * sizeof(float));
  void *want = calloc(1, r.out_size[0]);
  ppref_int16_to_float(samples, n, f);
  ppref_model_input_t mi = {model->dtype, model->scale, model->zero_point};
  uint32_t last = (uint32_t)model->dims[model->rank - 1];
  ppref_normalise(f, n, channel_count == 1 ? 1 : last, &pre, &mi, want);
  expect_same(r.out[0], want, r.out_size[0], model->dtype, "int16");
  free(want);
  free(f);
  free(samples);
  run_free(&r);
}

static void test_int16(void **state) {
  (void)state;
  port_t to_int8 = {TINYML_DTYPE_INT8, 0.05f, 3, 3, {1, 10, 4}};
  int16_case(&to_int8, 1, (const float[]){100}, (const float[]){256});
  port_t to_float = {TINYML_DTYPE_FLOAT32, 0, 0, 3, {1, 2, 3}};
  int16_case(&to_float, 3, (const float[]){0, -5, 1000}, (const float[]){1, 32768, 0.5f});
  port_t to_uint8 = {TINYML_DTYPE_UINT8, 100.0f, 128, 2, {1, 49}};
  int16_case(&to_uint8, 1, (const float[]){0}, (const float[]){1});
}

/* ---- post-processing ----------------------------------------------------- */

/* Outputs of one post-processing run and what the C loops say they are. */
static void post_case(const port_t *model, const tinyml_postprocess_t *post, const void *raw) {
  run_t r;
  compile_run(model, NULL, post, raw, &r);
  size_t n = 1;
  for (uint32_t i = 0; i < model->rank; ++i) n *= (size_t)model->dims[i];
  size_t last = (size_t)model->dims[model->rank - 1], rows = n / last;
  float *scores = malloc(n * sizeof(float));
  ppref_dequantize(raw, model->dtype, n, model->scale > 0 ? model->scale : 1.0f,
                   model->scale > 0 ? model->zero_point : 0, scores);
  if (post->softmax) ppref_softmax(scores, rows, last);
  size_t o = 0;
  if (post->top_k) {
    int32_t idx[64];
    float best[64];
    ppref_top_k(raw, model->dtype, last, post->top_k, idx);
    for (uint32_t s = 0; s < post->top_k; ++s) best[s] = scores[idx[s]];
    expect_info(r.module, 0, o, "top_k_indices", TINYML_DTYPE_INT32);
    expect_same(r.out[o++], idx, post->top_k * 4, TINYML_DTYPE_INT32, "top_k_indices");
    expect_info(r.module, 0, o, "top_k_scores", TINYML_DTYPE_FLOAT32);
    expect_same(r.out[o++], best, post->top_k * 4, TINYML_DTYPE_FLOAT32, "top_k_scores");
  }
  if (post->argmax) {
    int32_t *cls = malloc(rows * 4);
    for (size_t k = 0; k < rows; ++k)
      ppref_top_k((const char *)raw + k * last * tinyml_dtype_size(model->dtype), model->dtype,
                  last, 1, &cls[k]);
    expect_info(r.module, 0, o, "class", TINYML_DTYPE_INT32);
    assert_int_equal(r.out_size[o], rows * 4);
    expect_same(r.out[o++], cls, rows * 4, TINYML_DTYPE_INT32, "class");
    free(cls);
  }
  if (!post->top_k && !post->argmax) {
    expect_info(r.module, 0, o, "scores", TINYML_DTYPE_FLOAT32);
    /* exp and the sum's order may differ from libm's and this loop's. */
    for (size_t i = 0; i < n; ++i) {
      float got = ((const float *)r.out[o])[i], want = scores[i];
      if (post->softmax ? fabsf(got - want) > 1e-6f + 1e-5f * fabsf(want) : got != want)
        fail_msg("scores[%zu] is %.9g, expected %.9g", i, (double)got, (double)want);
    }
    ++o;
  }
  assert_int_equal(r.outputs, o);
  free(scores);
  run_free(&r);
}

static tinyml_postprocess_t post_of(int dequantize, int softmax, int argmax, uint32_t top_k) {
  tinyml_postprocess_t p;
  tinyml_postprocess_init(&p);
  p.dequantize = dequantize;
  p.softmax = softmax;
  p.argmax = argmax;
  p.top_k = top_k;
  return p;
}

static void post_all(const port_t *model, const void *raw, uint32_t k) {
  const tinyml_postprocess_t cases[] = {
      post_of(1, 0, 0, 0), post_of(0, 1, 0, 0), post_of(0, 0, 1, 0), post_of(1, 0, 0, k),
      post_of(0, 1, 1, k), post_of(0, 0, 0, 1),
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) post_case(model, &cases[i], raw);
}

static void test_post_int8(void **state) {
  (void)state;
  port_t m = {TINYML_DTYPE_INT8, 0.1f, 3, 2, {1, 10}};
  const int8_t raw[10] = {5, -3, 100, 100, 7, -128, 127, 0, 127, 2};
  post_all(&m, raw, 10);
}

static void test_post_uint8(void **state) {
  (void)state;
  port_t m = {TINYML_DTYPE_UINT8, 0.5f, 128, 2, {1, 7}};
  const uint8_t raw[7] = {0, 255, 128, 127, 255, 1, 200};
  post_all(&m, raw, 4);
}

static void test_post_float(void **state) {
  (void)state;
  port_t m = {TINYML_DTYPE_FLOAT32, 0, 0, 2, {1, 6}};
  const float raw[6] = {-1.5f, 3.25f, -1e30f, 3.25f, 0.5f, -0.25f};
  post_all(&m, raw, 6);
}

static void test_post_int32_and_rows(void **state) {
  (void)state;
  port_t m = {TINYML_DTYPE_INT32, 0, 0, 2, {1, 5}};
  const int32_t raw[5] = {INT32_MIN, 7, -2, INT32_MAX, 7};
  tinyml_postprocess_t p = post_of(0, 0, 1, 5);
  post_case(&m, &p, raw);
  port_t rows = {TINYML_DTYPE_FLOAT32, 0, 0, 3, {2, 3, 5}};
  float x[30];
  for (int i = 0; i < 30; ++i) x[i] = (float)((i * 7) % 11) - 4.0f;
  tinyml_postprocess_t a = post_of(0, 0, 1, 0), s = post_of(0, 1, 0, 0);
  post_case(&rows, &a, x);
  post_case(&rows, &s, x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_image),
      cmocka_unit_test(test_int16),
      cmocka_unit_test(test_post_int8),
      cmocka_unit_test(test_post_uint8),
      cmocka_unit_test(test_post_float),
      cmocka_unit_test(test_post_int32_and_rows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
