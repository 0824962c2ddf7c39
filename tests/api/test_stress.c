/* Heavy use from several threads (issue 29, "Hostile input and heavy use"),
 * through the public API only, on ../shared's models:
 *
 * concurrent_compiles  4 threads compile 4 different models (TFLite int8,
 *   TFLite float, ONNX) at once, 4 rounds, each thread taking every model
 *   once; round 0 runs before any other compile of the process, so it also
 *   races the first-use set-up (LLVM's target registry, MLIR's pass
 *   registry).  Every blob must be byte-identical to the same model
 *   compiled alone.
 * shared_module        8 threads x 1,000 invokes of ONE loaded module
 *   (kws_ref_model int8, then its float32 model), each thread on its own
 *   context, started together behind a barrier, with inputs that differ by
 *   thread and iteration.  Every output must be bit-identical to the
 *   one-thread reference run made first for that input.
 * pool_cycles          contexts with thread_count 2, 3 and 4 created,
 *   invoked (once or twice, on different inputs) and released 1,000 times
 *   each: the worker pool's start, use and join.  kws_ref_model splits 8 of
 *   its 16 phases on x86-64 (counted from lib/runtime/runtime.h's entry
 *   tables, as tests/api/test_threads.c does), so the workers really share
 *   its phases.  Outputs must equal the one-thread reference, and the
 *   process must have no more threads at the end than at the start.
 *
 * The reference inputs are chosen so that their outputs differ pairwise:
 * an output that comes from another thread's input, or from no invoke at
 * all (outputs are poisoned first), cannot pass.  Workers never call
 * cmocka (it is not thread-safe): they record the first failure, which the
 * main thread reports after joining them.
 *
 * argv[1] = the shared directory, argv[2] = one case to run (all if
 * absent).  TINYML_STRESS_ITERATIONS overrides the 1,000 iterations (for
 * debugging; the suite runs the default).  Skips with a printed reason only
 * where ../shared is missing, and fails instead when CI=true.  Run under
 * ThreadSanitizer by scripts/test.sh (its TSan stage). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"
#include "tinyml.h"

#define INPUTS 16         /* distinct reference inputs per model */
#define CANDIDATES 1024   /* inputs tried to find INPUTS distinct outputs */
#define SHARED_THREADS 8  /* threads invoking one module */
#define COMPILE_THREADS 4 /* threads compiling at once, one model each */
#define COMPILE_ROUNDS 4  /* each thread compiles each model once */

static char g_shared[4096];
static unsigned g_iterations = 1000;

static void shared_path(char *buf, size_t cap, const char *rel) {
  snprintf(buf, cap, "%s/models/%s", g_shared, rel);
}

static void *aligned_buffer(size_t size) {
  void *p = NULL;
  if (posix_memalign(&p, 64, size ? size : 1) != 0) fail_msg("out of memory");
  return p;
}

/* ---- a model with distinct reference inputs ------------------------------ */

typedef struct {
  tinyml_blob_t *blob;
  tinyml_module_t *module;
  size_t in_size, out_size;
  uint8_t *inputs[INPUTS];
  uint8_t *refs[INPUTS]; /* the one-thread outputs of inputs[i] */
} model_t;

static uint32_t xorshift(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

/* Random features: int8/uint8 within 32 of the zero point (where kws's
 * outputs vary most), float32 in [-8, 8). */
static void fill_input(uint8_t *buf, const tinyml_tensor_info_t *info, uint32_t *s) {
  if (info->dtype == TINYML_DTYPE_FLOAT32) {
    for (size_t i = 0; i + 4 <= info->byte_size; i += 4) {
      float v = (float)((int32_t)(xorshift(s) >> 8) - (1 << 23)) / (float)(1 << 20);
      memcpy(buf + i, &v, sizeof v);
    }
    return;
  }
  int zp = info->quant_count == 1 ? (int)info->zero_points[0] : 0;
  int lo = info->dtype == TINYML_DTYPE_INT8 ? -128 : 0, hi = lo + 255;
  for (size_t i = 0; i < info->byte_size; ++i) {
    int v = zp + (int)(xorshift(s) % 64) - 32;
    buf[i] = (uint8_t)(v < lo ? lo : v > hi ? hi : v);
  }
}

/* Compiles and loads `rel`, then draws inputs until INPUTS of them have
 * pairwise different outputs on a one-thread context: the references. */
static void model_prepare(model_t *m, const char *rel) {
  char path[4400];
  shared_path(path, sizeof path, rel);
  memset(m, 0, sizeof *m);
  m->blob = api_compile_file(path, NULL);
  m->module = api_load_blob(m->blob);
  assert_int_equal(tinyml_module_input_count(m->module), 1);
  assert_int_equal(tinyml_module_output_count(m->module), 1);
  tinyml_tensor_info_t in, out;
  tinyml_tensor_info_init(&in);
  tinyml_tensor_info_init(&out);
  api_assert_ok(tinyml_module_input_info(m->module, 0, &in), "input info");
  api_assert_ok(tinyml_module_output_info(m->module, 0, &out), "output info");
  m->in_size = in.byte_size;
  m->out_size = out.byte_size;
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(m->module, NULL, &ctx), rel);
  uint32_t seed = 0x9e3779b9u;
  int found = 0;
  for (int tries = 0; found < INPUTS && tries < CANDIDATES; ++tries) {
    uint8_t *input = aligned_buffer(m->in_size), *output = aligned_buffer(m->out_size);
    fill_input(input, &in, &seed);
    memset(output, 0xa5, m->out_size);
    api_assert_ok(tinyml_context_set_input(ctx, 0, input, m->in_size), rel);
    api_assert_ok(tinyml_context_set_output(ctx, 0, output, m->out_size), rel);
    api_assert_ok(tinyml_context_invoke(ctx), rel);
    int fresh = 1;
    for (int k = 0; k < found && fresh; ++k)
      fresh = memcmp(m->refs[k], output, m->out_size) != 0;
    if (!fresh) {
      free(input);
      free(output);
      continue;
    }
    m->inputs[found] = input;
    m->refs[found++] = output;
  }
  tinyml_context_release(ctx);
  if (found < INPUTS)
    fail_msg("%s: only %d of %d candidate inputs give distinct outputs", rel, found,
             CANDIDATES);
}

static void model_release(model_t *m) {
  for (int k = 0; k < INPUTS; ++k) {
    free(m->inputs[k]);
    free(m->refs[k]);
  }
  tinyml_module_release(m->module);
  tinyml_blob_release(m->blob);
}

/* Binds input k and `out` (poisoned with `poison` first), invokes, and
 * compares with reference k; 0 and a message in `err` on any difference. */
static int invoke_and_check(const model_t *m, tinyml_context_t *ctx, int k, uint8_t *out,
                            uint8_t poison, char *err, size_t cap) {
  memset(out, poison, m->out_size);
  tinyml_status_t st = tinyml_context_set_input(ctx, 0, m->inputs[k], m->in_size);
  if (!st) st = tinyml_context_set_output(ctx, 0, out, m->out_size);
  if (!st) st = tinyml_context_invoke(ctx);
  if (st) {
    snprintf(err, cap, "%s", tinyml_status_message(st));
    tinyml_status_free(st);
    return 0;
  }
  if (memcmp(out, m->refs[k], m->out_size) == 0) return 1;
  size_t at = 0;
  while (out[at] == m->refs[k][at]) ++at;
  snprintf(err, cap, "input %d: output byte %zu is 0x%02x, the reference's 0x%02x", k, at,
           out[at], m->refs[k][at]);
  return 0;
}

/* ---- concurrent compiles -------------------------------------------------- */

static const char *const g_compile_models[COMPILE_THREADS] = {
    "mlperf-tiny/kws_ref_model.tflite", "tflm/micro_speech.tflite",
    "tflm/hello_world_float.tflite", "onnx/mnist.onnx"};

typedef struct {
  char *data[COMPILE_THREADS]; /* the model files */
  size_t size[COMPILE_THREADS];
} model_files_t;

typedef struct {
  const model_files_t *files;
  int model;
  pthread_barrier_t *start;
  tinyml_blob_t *blob;
  char error[512];
} compile_job_t;

static void *compile_worker(void *arg) {
  compile_job_t *job = arg;
  pthread_barrier_wait(job->start);
  tinyml_status_t st = tinyml_compile(job->files->data[job->model],
                                      job->files->size[job->model], NULL, &job->blob);
  if (st) {
    snprintf(job->error, sizeof job->error, "%s: %s", g_compile_models[job->model],
             tinyml_status_message(st));
    tinyml_status_free(st);
  }
  return NULL;
}

/* Compiles every model at once, thread t taking model (t + round) % 4. */
static void compile_round(const model_files_t *files, int round,
                          tinyml_blob_t *out[COMPILE_THREADS]) {
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, COMPILE_THREADS);
  compile_job_t jobs[COMPILE_THREADS];
  pthread_t threads[COMPILE_THREADS];
  for (int t = 0; t < COMPILE_THREADS; ++t) {
    jobs[t] = (compile_job_t){.files = files, .model = (t + round) % COMPILE_THREADS,
                              .start = &start};
    if (pthread_create(&threads[t], NULL, compile_worker, &jobs[t]) != 0)
      fail_msg("cannot start compile thread %d", t);
  }
  for (int t = 0; t < COMPILE_THREADS; ++t) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&start);
  for (int t = 0; t < COMPILE_THREADS; ++t) {
    if (jobs[t].error[0]) fail_msg("round %d, thread %d: %s", round, t, jobs[t].error);
    out[jobs[t].model] = jobs[t].blob;
  }
}

static void expect_same_blob(const tinyml_blob_t *alone, const tinyml_blob_t *b, int model,
                             int round) {
  const char *name = g_compile_models[model];
  size_t n = tinyml_blob_size(alone);
  if (tinyml_blob_size(b) != n)
    fail_msg("%s, round %d: %zu bytes, alone %zu", name, round, tinyml_blob_size(b), n);
  const uint8_t *x = tinyml_blob_data(alone), *y = tinyml_blob_data(b);
  for (size_t i = 0; i < n; ++i)
    if (x[i] != y[i])
      fail_msg("%s, round %d: byte %zu is 0x%02x, alone 0x%02x", name, round, i, y[i], x[i]);
}

static void test_concurrent_compiles(void **state) {
  (void)state;
  model_files_t files;
  for (int i = 0; i < COMPILE_THREADS; ++i) {
    char path[4400];
    shared_path(path, sizeof path, g_compile_models[i]);
    files.data[i] = api_read_file(path, &files.size[i]);
    if (!files.data[i]) fail_msg("cannot read %s", path);
  }
  tinyml_blob_t *rounds[COMPILE_ROUNDS][COMPILE_THREADS];
  double t0 = api_now();
  compile_round(&files, 0, rounds[0]); /* the process's first compiles */
  tinyml_blob_t *alone[COMPILE_THREADS];
  for (int i = 0; i < COMPILE_THREADS; ++i) {
    tinyml_status_t st = tinyml_compile(files.data[i], files.size[i], NULL, &alone[i]);
    api_assert_ok(st, g_compile_models[i]);
  }
  for (int r = 1; r < COMPILE_ROUNDS; ++r) compile_round(&files, r, rounds[r]);
  for (int r = 0; r < COMPILE_ROUNDS; ++r)
    for (int i = 0; i < COMPILE_THREADS; ++i) expect_same_blob(alone[i], rounds[r][i], i, r);
  printf("concurrent_compiles: %d rounds of %d models, byte-identical (%.1f s)\n",
         COMPILE_ROUNDS, COMPILE_THREADS, api_now() - t0);
  for (int i = 0; i < COMPILE_THREADS; ++i) {
    tinyml_blob_release(alone[i]);
    for (int r = 0; r < COMPILE_ROUNDS; ++r) tinyml_blob_release(rounds[r][i]);
    free(files.data[i]);
  }
}

/* ---- one module, many threads --------------------------------------------- */

typedef struct {
  const model_t *model;
  unsigned index;
  pthread_barrier_t *start;
  uint8_t *out;      /* its output buffer */
  unsigned invokes;  /* checked invokes */
  char error[512];
} invoke_job_t;

/* Creates its own context (all threads at once), then invokes on input
 * (index + 7 i) % INPUTS, so at every i the threads use different inputs
 * and each thread goes through all of them. */
static void *shared_module_worker(void *arg) {
  invoke_job_t *job = arg;
  const model_t *m = job->model;
  pthread_barrier_wait(job->start);
  tinyml_context_t *ctx = NULL;
  tinyml_status_t st = tinyml_context_create(m->module, NULL, &ctx);
  if (st) {
    snprintf(job->error, sizeof job->error, "context: %s", tinyml_status_message(st));
    tinyml_status_free(st);
  }
  pthread_barrier_wait(job->start);
  for (unsigned i = 0; ctx && i < g_iterations; ++i) {
    int k = (int)((job->index + 7 * i) % INPUTS);
    char err[256];
    if (!invoke_and_check(m, ctx, k, job->out, (uint8_t)(i * 31 + job->index), err, sizeof err)) {
      snprintf(job->error, sizeof job->error, "iteration %u: %s", i, err);
      break;
    }
    job->invokes++;
  }
  tinyml_context_release(ctx);
  return NULL;
}

static void shared_module_case(const char *rel) {
  model_t m;
  model_prepare(&m, rel);
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, SHARED_THREADS);
  invoke_job_t jobs[SHARED_THREADS];
  pthread_t threads[SHARED_THREADS];
  double t0 = api_now();
  for (unsigned t = 0; t < SHARED_THREADS; ++t) {
    jobs[t] = (invoke_job_t){.model = &m, .index = t, .start = &start,
                             .out = aligned_buffer(m.out_size)};
    if (pthread_create(&threads[t], NULL, shared_module_worker, &jobs[t]) != 0)
      fail_msg("cannot start invoke thread %u", t);
  }
  unsigned total = 0;
  for (unsigned t = 0; t < SHARED_THREADS; ++t) pthread_join(threads[t], NULL);
  pthread_barrier_destroy(&start);
  for (unsigned t = 0; t < SHARED_THREADS; ++t) {
    if (jobs[t].error[0]) fail_msg("%s, thread %u: %s", rel, t, jobs[t].error);
    total += jobs[t].invokes;
    free(jobs[t].out);
  }
  assert_int_equal(total, SHARED_THREADS * g_iterations);
  printf("shared_module %s: %u threads x %u invokes, bit-identical (%.1f s)\n", rel,
         SHARED_THREADS, g_iterations, api_now() - t0);
  model_release(&m);
}

static void test_shared_module(void **state) {
  (void)state;
  shared_module_case("mlperf-tiny/kws_ref_model.tflite");
  shared_module_case("mlperf-tiny/kws_ref_model_float32.tflite");
}

/* ---- the worker pool's start, use and join --------------------------------- */

static void test_pool_cycles(void **state) {
  (void)state;
  model_t m;
  model_prepare(&m, "mlperf-tiny/kws_ref_model.tflite");
  uint8_t *out = aligned_buffer(m.out_size);
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  /* Counted after one pool has come and gone: ThreadSanitizer starts a
   * thread of its own at the process's first pthread_create. */
  o.thread_count = 2;
  api_assert_ok(api_run(m.module, &o, &(api_io_t){0}, 0), "first context");
  int before = api_process_threads();
  double t0 = api_now();
  for (uint32_t threads = 2; threads <= 4; ++threads) {
    o.thread_count = threads;
    for (unsigned i = 0; i < g_iterations; ++i) {
      tinyml_context_t *ctx = NULL;
      api_assert_ok(tinyml_context_create(m.module, &o, &ctx), "context");
      /* Every other cycle invokes twice, on two inputs. */
      for (unsigned rep = 0; rep <= i % 2; ++rep) {
        int k = (int)((i * 5 + rep * 3 + threads) % INPUTS);
        char err[256];
        if (!invoke_and_check(&m, ctx, k, out, (uint8_t)(i + rep), err, sizeof err))
          fail_msg("%u threads, cycle %u, invoke %u: %s", threads, i, rep, err);
      }
      tinyml_context_release(ctx);
    }
  }
  if (before >= 0 && api_process_threads() != before)
    fail_msg("%d threads after the cycles, %d before", api_process_threads(), before);
  printf("pool_cycles: %u create/invoke/release cycles each with 2, 3 and 4 threads, "
         "bit-identical (%.1f s)\n",
         g_iterations, api_now() - t0);
  free(out);
  model_release(&m);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s SHARED_DIR [CASE]\n", argv[0]);
    return 2;
  }
  snprintf(g_shared, sizeof g_shared, "%s", argv[1]);
  const char *iters = getenv("TINYML_STRESS_ITERATIONS");
  if (iters && *iters) {
    char *end;
    unsigned long n = strtoul(iters, &end, 10);
    if (*end || n == 0 || n > 1000000) {
      fprintf(stderr, "TINYML_STRESS_ITERATIONS must be 1 to 1000000\n");
      return 2;
    }
    g_iterations = (unsigned)n;
  }
  /* concurrent_compiles first: its round 0 must be the process's first
   * compiles when every case runs. */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_concurrent_compiles),
      cmocka_unit_test(test_shared_module),
      cmocka_unit_test(test_pool_cycles),
  };
  char filter[128] = "";
  if (argc > 2) {
    snprintf(filter, sizeof filter, "test_%s", argv[2]);
    size_t i = 0;
    while (i < sizeof tests / sizeof tests[0] && strcmp(tests[i].name, filter) != 0) ++i;
    if (i == sizeof tests / sizeof tests[0]) {
      fprintf(stderr, "unknown case '%s'\n", argv[2]);
      return 2;
    }
    cmocka_set_test_filter(filter);
  }
  /* Exits (failing) under CI=true when ../shared is missing. */
  if (!api_shared_present(g_shared, "models")) return 77;
  return cmocka_run_group_tests(tests, NULL, NULL);
}
