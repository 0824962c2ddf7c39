/* Fused pre/post-processing against the same stages run one after another.
 *
 * The pipeline: a 320x240 RGB888 frame -> luma -> bilinear 96x96 ->
 * (x - 0) / 255 -> int8 -> person_detect -> dequantise -> softmax -> top 2.
 * Three ways to run it, timed side by side (interleaved, median of N):
 *   fused    one module: the stages compiled into the model's graph
 *   C loops  the model alone, with each stage a plain C loop over the whole
 *            tensor (tests/compiler/test_prepost_ref.c, the tests' reference)
 *   modules  the model alone, with each stage its own compiled module
 *            (stages/NAME.mlir), chained through caller buffers
 * It also counts dispatches and checks the three agree.  Run it with
 * bench/prepost/run.sh, which builds it.
 *
 * usage: bench_prepost MODEL.tflite STAGES_DIR [RUNS] */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_prepost_ref.h"
#include "tinyml.h"

#define W 320
#define H 240
#define SIDE 96
#define STAGES 7

static const char *const kStages[STAGES] = {"colour",     "resize",  "normalise", "quantise",
                                            "dequantize", "softmax", "topk"};

typedef struct runner {
  tinyml_blob_t *blob;
  tinyml_module_t *module;
  tinyml_context_t *ctx;
} runner_t;

static void die(tinyml_status_t st, const char *what) {
  if (!st) return;
  fprintf(stderr, "bench_prepost: %s: %s\n", what, tinyml_status_message(st));
  exit(1);
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "bench_prepost: cannot read %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *d = malloc((size_t)n + 1);
  if (fread(d, 1, (size_t)n, f) != (size_t)n) exit(1);
  fclose(f);
  *size = (size_t)n;
  return d;
}

static runner_t compile(const void *model, size_t size, const tinyml_compile_options_t *o) {
  runner_t r = {0};
  die(tinyml_compile(model, size, o, &r.blob), "compile");
  die(tinyml_module_load(tinyml_blob_data(r.blob), tinyml_blob_size(r.blob), NULL, &r.module),
      "load");
  die(tinyml_context_create(r.module, NULL, &r.ctx), "context");
  return r;
}

static runner_t compile_file(const char *path, const tinyml_compile_options_t *o) {
  size_t size;
  void *text = read_file(path, &size);
  runner_t r = compile(text, size, o);
  free(text);
  return r;
}

static size_t io_size(const runner_t *r, int input, size_t i) {
  tinyml_tensor_info_t t;
  tinyml_tensor_info_init(&t);
  die(input ? tinyml_module_input_info(r->module, i, &t)
            : tinyml_module_output_info(r->module, i, &t), "info");
  return t.byte_size;
}

static void bind(runner_t *r, const void *in, void *out0, void *out1) {
  die(tinyml_context_set_input(r->ctx, 0, in, io_size(r, 1, 0)), "set_input");
  die(tinyml_context_set_output(r->ctx, 0, out0, io_size(r, 0, 0)), "set_output");
  if (out1) die(tinyml_context_set_output(r->ctx, 1, out1, io_size(r, 0, 1)), "set_output");
}

static void release(runner_t *r) {
  tinyml_context_release(r->ctx);
  tinyml_module_release(r->module);
  tinyml_blob_release(r->blob);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof(double), by_value);
  return v[n / 2];
}

/* ---- the three pipelines --------------------------------------------- */

typedef struct result {
  int32_t idx[2];
  float scores[2];
} result_t;

typedef struct bench {
  uint8_t *image;
  runner_t fused, alone, stage[STAGES];
  float *colour, *resized, *normalised, deq[2], probs[2];
  int8_t model_in[SIDE * SIDE], model_out[2];
  tinyml_preprocess_t pre;
  ppref_model_input_t mi;
  result_t fused_r, loops_r, modules_r;
} bench_t;

static void run_fused(bench_t *b) { die(tinyml_context_invoke(b->fused.ctx), "fused"); }

static void run_loops(bench_t *b) {
  ppref_colour(b->image, W, H, TINYML_PIXELS_RGB888, 1, b->colour);
  ppref_resize(b->colour, H, W, 1, b->resized, SIDE, SIDE, TINYML_RESIZE_BILINEAR);
  ppref_normalise(b->resized, SIDE * SIDE, 1, &b->pre, &b->mi, b->model_in);
  die(tinyml_context_invoke(b->alone.ctx), "model");
  ppref_dequantize(b->model_out, TINYML_DTYPE_INT8, 2, 1.0f / 256.0f, -128, b->probs);
  ppref_softmax(b->probs, 1, 2);
  ppref_top_k(b->model_out, TINYML_DTYPE_INT8, 2, 2, b->loops_r.idx);
  for (int i = 0; i < 2; ++i) b->loops_r.scores[i] = b->probs[b->loops_r.idx[i]];
}

static void run_modules(bench_t *b) {
  for (int s = 0; s < 4; ++s) die(tinyml_context_invoke(b->stage[s].ctx), kStages[s]);
  die(tinyml_context_invoke(b->alone.ctx), "model");
  for (int s = 4; s < STAGES; ++s) die(tinyml_context_invoke(b->stage[s].ctx), kStages[s]);
}

static void setup(bench_t *b, const char *model_path, const char *stages) {
  size_t size;
  void *model = read_file(model_path, &size);
  tinyml_preprocess_init(&b->pre);
  b->pre.kind = TINYML_INPUT_IMAGE;
  b->pre.image_width = W;
  b->pre.image_height = H;
  b->pre.std[0] = 255.0f;
  tinyml_postprocess_t post;
  tinyml_postprocess_init(&post);
  post.softmax = 1;
  post.top_k = 2;
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  b->alone = compile(model, size, &o);
  o.preprocess = &b->pre;
  o.postprocess = &post;
  b->fused = compile(model, size, &o);
  free(model);
  b->mi = (ppref_model_input_t){TINYML_DTYPE_INT8, 2.0f / 255.0f, -1};
  b->image = malloc((size_t)W * H * 3);
  uint32_t seed = 1;
  for (size_t i = 0; i < (size_t)W * H * 3; ++i) {
    seed = seed * 1664525u + 1013904223u;
    b->image[i] = (uint8_t)(seed >> 24);
  }
  b->colour = malloc(sizeof(float) * W * H);
  b->resized = malloc(sizeof(float) * SIDE * SIDE);
  b->normalised = malloc(sizeof(float) * SIDE * SIDE);
  bind(&b->fused, b->image, b->fused_r.idx, b->fused_r.scores);
  bind(&b->alone, b->model_in, b->model_out, NULL);
  tinyml_compile_options_init(&o);
  for (int s = 0; s < STAGES; ++s) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.mlir", stages, kStages[s]);
    b->stage[s] = compile_file(path, &o);
  }
  bind(&b->stage[0], b->image, b->colour, NULL);
  bind(&b->stage[1], b->colour, b->resized, NULL);
  bind(&b->stage[2], b->resized, b->normalised, NULL);
  bind(&b->stage[3], b->normalised, b->model_in, NULL);
  bind(&b->stage[4], b->model_out, b->deq, NULL);
  bind(&b->stage[5], b->deq, b->probs, NULL);
  bind(&b->stage[6], b->probs, b->modules_r.idx, b->modules_r.scores);
}

static size_t dispatches(const runner_t *r) { return tinyml_module_dispatch_count(r->module); }

static void report(bench_t *b, double t_model, double t_fused, double t_loops,
                   double t_modules) {
  size_t model = dispatches(&b->alone), stages = 0, arenas = 0;
  for (int s = 0; s < STAGES; ++s) {
    stages += dispatches(&b->stage[s]);
    arenas += tinyml_module_arena_size(b->stage[s].module);
  }
  size_t loop_buffers = sizeof(float) * (W * H + SIDE * SIDE) + sizeof b->model_in;
  size_t module_buffers = sizeof(float) * (W * H + 2 * SIDE * SIDE) + sizeof b->model_in;
  printf("person_detect, %dx%d RGB888 frame -> luma -> bilinear %dx%d -> /255 -> int8 -> model"
         " -> dequantise -> softmax -> top 2\n\n", W, H, SIDE, SIDE);
  printf("%-40s %12s %10s %9s %10s %9s %13s\n", "pipeline", "dispatches", "median ms",
         "vs fused", "stages ms", "vs fused", "extra memory");
  printf("%-40s %12zu %10.4f %9s\n", "(the model alone, for reference)", model, t_model * 1e3,
         "");
  printf("%-40s %12zu %10.4f %9.2f %10.4f %9.2f %11zu B\n",
         "fused (stages compiled into the model)", dispatches(&b->fused), t_fused * 1e3, 1.0,
         (t_fused - t_model) * 1e3, 1.0,
         tinyml_module_arena_size(b->fused.module) - tinyml_module_arena_size(b->alone.module));
  char d[32];
  snprintf(d, sizeof d, "%zu + 6 loops", model);
  printf("%-40s %12s %10.4f %9.2f %10.4f %9.2f %11zu B\n", "model + stages as separate C loops",
         d, t_loops * 1e3, t_loops / t_fused, (t_loops - t_model) * 1e3,
         (t_loops - t_model) / (t_fused - t_model), loop_buffers);
  snprintf(d, sizeof d, "%zu + %zu", model, stages);
  printf("%-40s %12s %10.4f %9.2f %10.4f %9.2f %11zu B\n", "model + stages as separate modules",
         d, t_modules * 1e3, t_modules / t_fused, (t_modules - t_model) * 1e3,
         (t_modules - t_model) / (t_fused - t_model), module_buffers + arenas);
  printf("\nstages ms = median of the pipeline - median of the model alone; extra memory =\n"
         "arena beyond the model's, plus the buffers between stages\n");
  /* Softmax's exp is libm's in the loops: allow its last bits. */
  int same_loops = !memcmp(b->fused_r.idx, b->loops_r.idx, sizeof b->fused_r.idx);
  for (int i = 0; i < 2; ++i)
    same_loops &= fabsf(b->fused_r.scores[i] - b->loops_r.scores[i]) <= 1e-6f;
  int same_class = b->fused_r.idx[0] == b->modules_r.idx[0];
  printf("speed-up of fusing: %.2fx over C loops, %.2fx over separate modules (whole "
         "pipeline)\n", t_loops / t_fused, t_modules / t_fused);
  printf("top 2: fused (%d %.6f, %d %.6f); C loops %s; separate modules: same top class %s\n",
         b->fused_r.idx[0], (double)b->fused_r.scores[0], b->fused_r.idx[1],
         (double)b->fused_r.scores[1], same_loops ? "agree" : "DIFFER",
         same_class ? "yes" : "NO");
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_prepost MODEL.tflite STAGES_DIR [RUNS]\n");
    return 2;
  }
  int runs = argc > 3 ? atoi(argv[3]) : 300;
  if (runs < 1) runs = 1;
  static bench_t b;
  setup(&b, argv[1], argv[2]);
  double *tf = malloc(sizeof(double) * (size_t)runs), *tl = malloc(sizeof(double) * (size_t)runs);
  double *tm = malloc(sizeof(double) * (size_t)runs), *ta = malloc(sizeof(double) * (size_t)runs);
  for (int i = 0; i < 10; ++i) {  /* warm up caches and page tables */
    run_fused(&b);
    run_loops(&b);
    run_modules(&b);
  }
  for (int i = 0; i < runs; ++i) {  /* interleaved, so load changes hit all three */
    double t0 = now();
    run_fused(&b);
    double t1 = now();
    run_loops(&b);
    double t2 = now();
    run_modules(&b);
    double t3 = now();
    die(tinyml_context_invoke(b.alone.ctx), "model");
    double t4 = now();
    tf[i] = t1 - t0;
    tl[i] = t2 - t1;
    tm[i] = t3 - t2;
    ta[i] = t4 - t3;
  }
  report(&b, median(ta, runs), median(tf, runs), median(tl, runs), median(tm, runs));
  release(&b.fused);
  release(&b.alone);
  for (int s = 0; s < STAGES; ++s) release(&b.stage[s]);
  free(tf);
  free(tl);
  free(tm);
  free(ta);
  return 0;
}
