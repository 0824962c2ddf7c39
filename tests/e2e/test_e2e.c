/*
 * test_e2e.c - end-to-end numerics: compile each model in models/ with the
 * public API, run it, and compare every output with the C reference.
 *
 * Usage: test_e2e MODEL_DIR   (or set TINYML_E2E_MODELS)
 *        test_e2e --write-case MODEL DIR
 *   The second form writes the inputs (DIR/input_<i>.bin) and the C
 *   reference's outputs (DIR/expected_<i>.bin) of one model, so the tools can
 *   be checked against the same reference (tests/tools/).
 *
 * Shapes and weight seeds below must match gen_models.py, which writes the
 * models; both reproduce the same weights from weight(i, seed).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "reference.h"
#include "tinyml.h"

#define MAX_IO 3
#define REL_TOL 1e-4
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

typedef struct tensor_spec {
  const char *name; /* expected I/O name, or NULL when the model sets none */
  uint32_t rank;
  int64_t dims[4];
} tensor_spec_t;

typedef void (*reference_fn)(const float *const *in, float *const *out);

typedef struct e2e_case {
  const char *model; /* file name under the model directory, minus .mlir */
  size_t input_count, output_count;
  tensor_spec_t inputs[MAX_IO], outputs[MAX_IO];
  reference_fn reference;
} e2e_case_t;

static const char *g_model_dir;

/* ---------------------------------------------------------------------------
 * Layers with built-in weights, mirroring the helpers of gen_models.py
 * ------------------------------------------------------------------------- */

static float *new_weights(size_t count, int seed) {
  float *w = malloc(count * sizeof *w);
  assert_non_null(w);
  ref_weights(w, count, seed);
  return w;
}

/* Func.conv2d: OHWI weights from `seed`, bias from seed + 1. */
static void conv_layer(const ref_window_t *g, const float *in, int out_c,
                       int seed, float *out) {
  float *w = new_weights((size_t)out_c * g->kh * g->kw * g->c, seed);
  float *b = new_weights((size_t)out_c, seed + 1);
  ref_conv2d(g, in, w, b, out_c, out);
  free(w);
  free(b);
}

/* Func.depthwise: HWCM weights from `seed`, bias from seed + 1. */
static void depthwise_layer(const ref_window_t *g, const float *in, int mult,
                            int seed, float *out) {
  float *w = new_weights((size_t)g->kh * g->kw * g->c * mult, seed);
  float *b = new_weights((size_t)g->c * mult, seed + 1);
  ref_depthwise_conv2d(g, in, w, b, mult, out);
  free(w);
  free(b);
}

/* Func.dense: [1, k] x [k, n] weights from `seed`, bias from seed + 1. */
static void dense_layer(const float *in, int k, int n, int seed, float *out) {
  float *w = new_weights((size_t)k * n, seed);
  float *b = new_weights((size_t)n, seed + 1);
  ref_matmul(in, w, 1, 1, k, n, out);
  for (int j = 0; j < n; ++j) out[j] += b[j];
  free(w);
  free(b);
}

/* ---------------------------------------------------------------------------
 * Model references
 * ------------------------------------------------------------------------- */

static void ref_model_conv2d(const float *const *in, float *const *out) {
  const ref_window_t g = {.n = 1, .h = 9, .w = 8, .c = 3, .kh = 3, .kw = 3,
                          .stride_y = 2, .stride_x = 2, .pad_top = 1,
                          .pad_bottom = 1, .pad_left = 0, .pad_right = 1};
  conv_layer(&g, in[0], 5, 1, out[0]);
  ref_relu(out[0], 1 * 5 * 4 * 5);
}

static void ref_model_depthwise(const float *const *in, float *const *out) {
  const ref_window_t g = {.n = 1, .h = 8, .w = 7, .c = 4, .kh = 3, .kw = 3,
                          .stride_y = 1, .stride_x = 1, .pad_top = 1,
                          .pad_bottom = 1, .pad_left = 1, .pad_right = 1};
  depthwise_layer(&g, in[0], 1, 3, out[0]);
}

static void ref_model_depthwise_mult2(const float *const *in,
                                      float *const *out) {
  const ref_window_t g = {.n = 1, .h = 7, .w = 6, .c = 3, .kh = 3, .kw = 3,
                          .stride_y = 1, .stride_x = 1, .pad_top = 1,
                          .pad_bottom = 1, .pad_left = 1, .pad_right = 1};
  depthwise_layer(&g, in[0], 2, 5, out[0]);
}

static void ref_model_matmul(const float *const *in, float *const *out) {
  ref_matmul(in[0], in[1], 2, 7, 13, 5, out[0]);
}

static void ref_model_fully_connected(const float *const *in,
                                      float *const *out) {
  /* The reshapes to [1, 1, 24] and back to [1, 10] do not move data. */
  dense_layer(in[0], 24, 10, 7, out[0]);
}

static void ref_model_avg_pool(const float *const *in, float *const *out) {
  const ref_window_t g = {.n = 1, .h = 9, .w = 9, .c = 3, .kh = 3, .kw = 3,
                          .stride_y = 2, .stride_x = 2, .pad_top = 1,
                          .pad_bottom = 1, .pad_left = 1, .pad_right = 1};
  ref_pool2d(&g, REF_POOL_AVG, in[0], out[0]);
}

static void ref_model_max_pool(const float *const *in, float *const *out) {
  const ref_window_t g = {.n = 1, .h = 8, .w = 6, .c = 4, .kh = 2, .kw = 2,
                          .stride_y = 2, .stride_x = 2};
  ref_pool2d(&g, REF_POOL_MAX, in[0], out[0]);
}

static void ref_model_add_mul(const float *const *in, float *const *out) {
  static const int full[] = {1, 4, 5, 3}, b[] = {1, 1, 1, 3}, c[] = {1, 1, 5, 1};
  float sum[1 * 4 * 5 * 3];
  ref_broadcast_binary(REF_ADD, 4, full, in[0], full, in[1], b, sum);
  ref_broadcast_binary(REF_MUL, 4, full, sum, full, in[2], c, out[0]);
}

static void mul_in_place(int h, int w, const float *const *in, float *const *out) {
  const ref_window_t g = {.n = 1, .h = h, .w = w, .c = 3, .kh = 3, .kw = 3,
                          .stride_y = 1, .stride_x = 1, .pad_top = 1,
                          .pad_bottom = 1, .pad_left = 1, .pad_right = 1};
  const int dims[] = {1, h, w, 3};
  float y[1 * 5 * 8 * 3], p[1 * 5 * 8 * 3];
  conv_layer(&g, in[0], 3, 21, y);
  ref_broadcast_binary(REF_MUL, 4, dims, y, dims, in[0], dims, p);
  depthwise_layer(&g, p, 1, 23, out[0]);
}

static void ref_model_mul_in_place(const float *const *in, float *const *out) {
  mul_in_place(5, 7, in, out);
}

static void ref_model_mul_in_place16(const float *const *in, float *const *out) {
  mul_in_place(4, 8, in, out);
}

static void ref_model_reshape_transpose_concat(const float *const *in,
                                               float *const *out) {
  /* Reshape [2, 12] -> [2, 3, 4] does not move data. */
  static const int dims[] = {2, 3, 4}, perms[] = {2, 0, 1};
  static const int axis_sizes[] = {2, 5};
  float t[24];
  ref_transpose(in[0], 3, dims, perms, t);
  const float *parts[] = {t, in[1]};
  ref_concat(parts, axis_sizes, 2, 4, 3, out[0]);
}

/* NCHW views of NHWC inputs; (a + b) * k, ReLU, concat with c on C; then
 * the sum over H and W. */
static void ref_model_transpose_sink(const float *const *in, float *const *out) {
  static const int nhwc3[] = {1, 4, 5, 3}, nhwc2[] = {1, 4, 5, 2}, perms[] = {0, 3, 1, 2};
  static const int nchw3[] = {1, 3, 4, 5}, kdims[] = {1, 3, 1, 1}, axis_sizes[] = {3, 2};
  float a[60], b[60], c[40], s[60], y[60], k[3];
  ref_transpose(in[0], 4, nhwc3, perms, a);
  ref_transpose(in[1], 4, nhwc3, perms, b);
  ref_transpose(in[2], 4, nhwc2, perms, c);
  ref_weights(k, 3, 21);
  ref_broadcast_binary(REF_ADD, 4, nchw3, a, nchw3, b, nchw3, s);
  ref_broadcast_binary(REF_MUL, 4, nchw3, s, nchw3, k, kdims, y);
  ref_relu(y, 60);
  const float *parts[] = {y, c};
  ref_concat(parts, axis_sizes, 2, 1, 20, out[0]);
  for (int ch = 0; ch < 5; ++ch) {
    double sum = 0;
    for (int i = 0; i < 20; ++i) sum += out[0][ch * 20 + i];
    out[1][ch] = (float)sum;
  }
}

static void ref_model_softmax(const float *const *in, float *const *out) {
  ref_softmax(in[0], 2 * 3, 10, out[0]);
}

static void ref_model_cnn(const float *const *in, float *const *out) {
  const ref_window_t conv = {.n = 1, .h = 16, .w = 16, .c = 3, .kh = 3,
                             .kw = 3, .stride_y = 2, .stride_x = 2,
                             .pad_bottom = 1, .pad_right = 1};
  const ref_window_t dw = {.n = 1, .h = 8, .w = 8, .c = 8, .kh = 3, .kw = 3,
                           .stride_y = 1, .stride_x = 1, .pad_top = 1,
                           .pad_bottom = 1, .pad_left = 1, .pad_right = 1};
  const ref_window_t pool = {.n = 1, .h = 8, .w = 8, .c = 8, .kh = 2, .kw = 2,
                             .stride_y = 2, .stride_x = 2};
  static const int pooled_dims[] = {1, 4, 4, 8}, nchw[] = {0, 3, 1, 2};
  float a[8 * 8 * 8], b[8 * 8 * 8], c[4 * 4 * 8], flat[128];
  conv_layer(&conv, in[0], 8, 11, a);
  ref_relu(a, ARRAY_LEN(a));
  depthwise_layer(&dw, a, 1, 13, b);
  ref_relu(b, ARRAY_LEN(b));
  ref_pool2d(&pool, REF_POOL_MAX, b, c);
  ref_transpose(c, 4, pooled_dims, nchw, flat);
  dense_layer(flat, 128, 10, 15, out[0]);
  ref_softmax(out[0], 1, 10, out[1]);
}

static void ref_model_matmul512(const float *const *in, float *const *out) {
  ref_matmul(in[0], in[1], 1, 512, 512, 512, out[0]);
}

static void ref_model_matmul_tiles(const float *const *in, float *const *out) {
  ref_matmul(in[0], in[1], 2, 37, 300, 290, out[0]);
}

#define T(...) {NULL, __VA_ARGS__}
#define NAMED(name, ...) {name, __VA_ARGS__}

static e2e_case_t g_cases[] = {
    {"conv2d", 1, 1, {T(4, {1, 9, 8, 3})}, {T(4, {1, 5, 4, 5})},
     ref_model_conv2d},
    {"depthwise_conv2d", 1, 1, {T(4, {1, 8, 7, 4})}, {T(4, {1, 8, 7, 4})},
     ref_model_depthwise},
    {"depthwise_conv2d_mult2", 1, 1, {T(4, {1, 7, 6, 3})},
     {T(4, {1, 7, 6, 6})}, ref_model_depthwise_mult2},
    {"matmul", 2, 1, {T(3, {2, 7, 13}), T(3, {2, 13, 5})}, {T(3, {2, 7, 5})},
     ref_model_matmul},
    {"fully_connected", 1, 1, {T(4, {1, 2, 3, 4})}, {T(2, {1, 10})},
     ref_model_fully_connected},
    {"avg_pool", 1, 1, {T(4, {1, 9, 9, 3})}, {T(4, {1, 5, 5, 3})},
     ref_model_avg_pool},
    {"max_pool", 1, 1, {T(4, {1, 8, 6, 4})}, {T(4, {1, 4, 3, 4})},
     ref_model_max_pool},
    {"add_mul_broadcast", 3, 1,
     {T(4, {1, 4, 5, 3}), T(4, {1, 1, 1, 3}), T(4, {1, 1, 5, 1})},
     {T(4, {1, 4, 5, 3})}, ref_model_add_mul},
    {"mul_in_place", 1, 1, {T(4, {1, 5, 7, 3})}, {T(4, {1, 5, 7, 3})},
     ref_model_mul_in_place},
    {"mul_in_place16", 1, 1, {T(4, {1, 4, 8, 3})}, {T(4, {1, 4, 8, 3})},
     ref_model_mul_in_place16},
    {"reshape_transpose_concat", 2, 1, {T(2, {2, 12}), T(3, {4, 5, 3})},
     {T(3, {4, 7, 3})}, ref_model_reshape_transpose_concat},
    {"transpose_sink", 3, 2, {T(4, {1, 4, 5, 3}), T(4, {1, 4, 5, 3}), T(4, {1, 4, 5, 2})},
     {T(4, {1, 5, 4, 5}), T(2, {1, 5})}, ref_model_transpose_sink},
    {"softmax", 1, 1, {T(3, {2, 3, 10})}, {T(3, {2, 3, 10})},
     ref_model_softmax},
    {"cnn_two_results", 1, 2, {NAMED("image", 4, {1, 16, 16, 3})},
     {NAMED("logits", 2, {1, 10}), NAMED("probs", 2, {1, 10})},
     ref_model_cnn},
    {"matmul512", 2, 1, {T(3, {1, 512, 512}), T(3, {1, 512, 512})},
     {T(3, {1, 512, 512})}, ref_model_matmul512},
    {"matmul_tiles", 2, 1, {T(3, {2, 37, 300}), T(3, {2, 300, 290})},
     {T(3, {2, 37, 290})}, ref_model_matmul_tiles},
};

typedef struct e2e_run {
  const e2e_case_t *c;
  const char *cpu; /* NULL: the default */
  char name[64];
} e2e_run_t;

/* Each case runs for the default (a multi-versioned module: the best
 * variant this CPU runs), then pinned to each x86-64 level, so that an
 * AVX-512 machine also runs the AVX2 code that AVX2-only machines get. */
static const char *const g_cpus[] = {NULL, "x86-64-v4", "x86-64-v3"};

/* ---------------------------------------------------------------------------
 * Harness
 * ------------------------------------------------------------------------- */

static void check_ok(tinyml_status_t status, const char *what) {
  if (status == TINYML_OK) return;
  print_error("%s failed: %s: %s\n", what,
              tinyml_status_code_name(tinyml_status_code(status)),
              tinyml_status_message(status));
  tinyml_status_free(status);
  fail();
}

static char *read_model(const char *model, size_t *size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.mlir", g_model_dir, model);
  FILE *f = fopen(path, "rb");
  if (f == NULL) fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  text[n] = '\0';
  *size = (size_t)n;
  return text;
}

static tinyml_module_t *compile_and_load(const char *model, const char *cpu,
                                         tinyml_blob_t **out_blob) {
  size_t size;
  char *text = read_model(model, &size);
  tinyml_compile_options_t options;
  tinyml_compile_options_init(&options);
  options.target = "x86-64";
  options.cpu = cpu;
  check_ok(tinyml_compile(text, size, &options, out_blob), "tinyml_compile");
  free(text);
  tinyml_module_t *module = NULL;
  /* The blob stays alive until the module is released: the module uses the
   * bytes in place. */
  check_ok(tinyml_module_load(tinyml_blob_data(*out_blob),
                              tinyml_blob_size(*out_blob), NULL, &module),
           "tinyml_module_load");
  assert_string_equal(tinyml_module_target(module), "x86-64");
  return module;
}

static size_t spec_count(const tensor_spec_t *spec) {
  size_t n = 1;
  for (uint32_t i = 0; i < spec->rank; ++i) n *= (size_t)spec->dims[i];
  return n;
}

static void check_info(const tinyml_tensor_info_t *info,
                       const tensor_spec_t *spec) {
  assert_non_null(info->name);
  if (spec->name != NULL) assert_string_equal(info->name, spec->name);
  assert_int_equal(info->dtype, TINYML_DTYPE_FLOAT32);
  assert_int_equal(info->rank, spec->rank);
  for (uint32_t i = 0; i < spec->rank; ++i)
    assert_int_equal(info->dims[i], spec->dims[i]);
  assert_int_equal(info->byte_size, spec_count(spec) * sizeof(float));
  assert_int_equal(info->quant_count, 0);
}

static void check_io(const tinyml_module_t *module, const e2e_case_t *c) {
  tinyml_tensor_info_t info;
  assert_int_equal(tinyml_module_input_count(module), c->input_count);
  assert_int_equal(tinyml_module_output_count(module), c->output_count);
  for (size_t i = 0; i < c->input_count; ++i) {
    tinyml_tensor_info_init(&info);
    check_ok(tinyml_module_input_info(module, i, &info), "input_info");
    check_info(&info, &c->inputs[i]);
  }
  for (size_t i = 0; i < c->output_count; ++i) {
    tinyml_tensor_info_init(&info);
    check_ok(tinyml_module_output_info(module, i, &info), "output_info");
    check_info(&info, &c->outputs[i]);
  }
}

/* A float buffer aligned to 4 bytes but deliberately not to 8 or more: the
 * API promises to accept any element-aligned buffer.  Free with free_io(). */
static float *alloc_io(size_t count) {
  float *base = malloc((count + 1) * sizeof(float));
  assert_non_null(base);
  return base + 1;
}

static void free_io(float *p) {
  if (p != NULL) free(p - 1);
}

/* Uniform in [-1, 1), exact in f32, from a xorshift32 stream. */
static void fill_random(float *x, size_t count, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1u;
  for (size_t i = 0; i < count; ++i) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    x[i] = (float)((int32_t)(s >> 8) - (1 << 23)) / (float)(1 << 23);
  }
}

/* Largest |got - want| / max(1, |want|); fails past REL_TOL or on NaN. */
static double compare(const char *model, size_t output, const float *got,
                      const float *want, size_t count) {
  double worst = 0.0;
  for (size_t i = 0; i < count; ++i) {
    double err = fabs((double)got[i] - want[i]) / fmax(1.0, fabs(want[i]));
    if (!(err <= REL_TOL))
      fail_msg("%s output %zu element %zu: got %.9g, want %.9g", model,
               output, i, got[i], want[i]);
    worst = fmax(worst, err);
  }
  return worst;
}

typedef struct io_buffers {
  float *in[MAX_IO], *out[MAX_IO], *want[MAX_IO];
} io_buffers_t;

static void alloc_buffers(const e2e_case_t *c, io_buffers_t *io) {
  memset(io, 0, sizeof *io);
  for (size_t i = 0; i < c->input_count; ++i) {
    io->in[i] = alloc_io(spec_count(&c->inputs[i]));
    fill_random(io->in[i], spec_count(&c->inputs[i]), (uint32_t)i + 1);
  }
  for (size_t i = 0; i < c->output_count; ++i) {
    io->out[i] = alloc_io(spec_count(&c->outputs[i]));
    io->want[i] = alloc_io(spec_count(&c->outputs[i]));
  }
}

static void free_buffers(io_buffers_t *io) {
  for (size_t i = 0; i < MAX_IO; ++i) {
    free_io(io->in[i]);
    free_io(io->out[i]);
    free_io(io->want[i]);
  }
}

static void bind(tinyml_context_t *ctx, const e2e_case_t *c, io_buffers_t *io) {
  for (size_t i = 0; i < c->input_count; ++i)
    check_ok(tinyml_context_set_input(ctx, i, io->in[i],
                                      spec_count(&c->inputs[i]) * sizeof(float)),
             "set_input");
  for (size_t i = 0; i < c->output_count; ++i)
    check_ok(tinyml_context_set_output(ctx, i, io->out[i],
                                       spec_count(&c->outputs[i]) * sizeof(float)),
             "set_output");
}

/* Invokes and compares every output; returns the worst relative error. */
static double invoke_and_compare(tinyml_context_t *ctx, const e2e_case_t *c,
                                 io_buffers_t *io) {
  double worst = 0.0;
  /* NaN marks elements the module never wrote. */
  for (size_t i = 0; i < c->output_count; ++i)
    for (size_t e = 0; e < spec_count(&c->outputs[i]); ++e) io->out[i][e] = NAN;
  check_ok(tinyml_context_invoke(ctx), "invoke");
  for (size_t i = 0; i < c->output_count; ++i)
    worst = fmax(worst, compare(c->model, i, io->out[i], io->want[i],
                                spec_count(&c->outputs[i])));
  return worst;
}

/* Whether this CPU runs code built for `cpu` (NULL runs everywhere). */
static int host_runs(const char *cpu) {
  __builtin_cpu_init();
  if (cpu == NULL) return 1;
  if (strcmp(cpu, "x86-64-v3") == 0) return __builtin_cpu_supports("x86-64-v3");
  return __builtin_cpu_supports("x86-64-v4");
}

static void run_case(void **state) {
  const e2e_run_t *r = *state;
  const e2e_case_t *c = r->c;
  if (!host_runs(r->cpu)) {
    print_message("skipped: --cpu %s needs instructions this CPU lacks\n", r->cpu);
    skip();
  }
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *module = compile_and_load(c->model, r->cpu, &blob);
  check_io(module, c);

  io_buffers_t io;
  alloc_buffers(c, &io);
  c->reference((const float *const *)io.in, io.want);

  tinyml_context_t *ctx = NULL;
  check_ok(tinyml_context_create(module, NULL, &ctx), "context_create");
  bind(ctx, c, &io);
  /* Twice: a second run on the same context catches state (accumulators,
   * arena contents) that leaks from one invoke into the next. */
  double worst = invoke_and_compare(ctx, c, &io);
  worst = fmax(worst, invoke_and_compare(ctx, c, &io));
  printf("e2e %-36s ok  inputs %zu  outputs %zu  max rel err %.2e\n", r->name,
         c->input_count, c->output_count, worst);

  tinyml_context_release(ctx);
  tinyml_module_release(module);
  tinyml_blob_release(blob);
  free_buffers(&io);
}

static int write_file(const char *dir, const char *kind, size_t i,
                      const float *data, size_t count) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_%zu.bin", dir, kind, i);
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  size_t n = fwrite(data, sizeof(float), count, f);
  return (fclose(f) == 0 && n == count) ? 0 : -1;
}

static int write_case(const char *model, const char *dir) {
  for (size_t k = 0; k < ARRAY_LEN(g_cases); ++k) {
    const e2e_case_t *c = &g_cases[k];
    if (strcmp(c->model, model) != 0) continue;
    io_buffers_t io;
    alloc_buffers(c, &io);
    c->reference((const float *const *)io.in, io.want);
    int rc = 0;
    for (size_t i = 0; i < c->input_count; ++i)
      rc |= write_file(dir, "input", i, io.in[i], spec_count(&c->inputs[i]));
    for (size_t i = 0; i < c->output_count; ++i)
      rc |= write_file(dir, "expected", i, io.want[i], spec_count(&c->outputs[i]));
    free_buffers(&io);
    if (rc) fprintf(stderr, "test_e2e: cannot write into %s\n", dir);
    return rc ? 1 : 0;
  }
  fprintf(stderr, "test_e2e: no case named '%s'\n", model);
  return 2;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--write-case") == 0)
    return write_case(argv[2], argv[3]);
  g_model_dir = argc > 1 ? argv[1] : getenv("TINYML_E2E_MODELS");
  if (g_model_dir == NULL) {
    fprintf(stderr, "usage: %s MODEL_DIR (or set TINYML_E2E_MODELS)\n",
            argv[0]);
    return 2;
  }
  static e2e_run_t runs[ARRAY_LEN(g_cpus) * ARRAY_LEN(g_cases)];
  struct CMUnitTest tests[ARRAY_LEN(runs)];
  for (size_t i = 0; i < ARRAY_LEN(runs); ++i) {
    e2e_run_t *r = &runs[i];
    r->c = &g_cases[i % ARRAY_LEN(g_cases)];
    r->cpu = g_cpus[i / ARRAY_LEN(g_cases)];
    snprintf(r->name, sizeof r->name, "%s%s%s", r->c->model, r->cpu ? " --cpu " : "",
             r->cpu ? r->cpu : "");
    tests[i] = (struct CMUnitTest){.name = r->name, .test_func = run_case, .initial_state = r};
  }
  return cmocka_run_group_tests_name("e2e", tests, NULL, NULL);
}
