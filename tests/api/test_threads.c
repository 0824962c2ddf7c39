/* Contexts with several threads (tinyml_context_options_t.thread_count):
 * the option's range, that 1 thread starts none and N start N - 1, and that
 * outputs are bit-identical for 1, 2, 3 and 4 threads on the e2e models,
 * threads_mix.mlir (ops that stay on the Linalg path, large enough to
 * split, whatever microkernels the target has) and ../shared's models (on
 * x86-64 their convs are int8 and f32 microkernel calls, split into bands
 * of output pixels: 2, 3 and 4 threads cut them into 4, 6 and 8 bands;
 * the mlperf-tiny models and mnist are too small to repay waking a worker,
 * so every one of their steps must be marked inline, and two zoo
 * MobileNets, f32 and int8, carry the split bands)
 * (argv[1] = e2e models, argv[2] = tests/api/models, argv[3] = ../shared;
 * the ../shared cases skip with a printed reason only where it is missing,
 * and fail instead when CI=true).
 *
 * White-box: linked with the static library, it also reads the loaded
 * executables' entry tables (lib/runtime/runtime.h), so the comparisons are
 * known to run split phases rather than one thread's code path twice, and
 * calls the entries itself with more workgroups than are useful, and runs a
 * job on the pool itself to read a worker's stack size. */
#define _GNU_SOURCE /* pthread_getattr_np, pthread_setattr_default_np */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../lib/common/alloc.h"
#include "../../lib/runtime/pool.h"
#include "../../lib/runtime/runtime.h"
#include "api_test_util.h"

static char g_shared[4096], g_extra[4096];

static int shared_present(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/models", g_shared);
  DIR *d = opendir(path);
  if (d) {
    closedir(d);
    return 1;
  }
  if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
    fail_msg("%s is missing, and CI must provide it", path);
  printf("SKIP: %s is missing (../shared not provided)\n", path);
  return 0;
}

/* Phases of `module` that run as more than one workgroup. */
static unsigned split_phases(const tinyml_module_t *module) {
  unsigned n = 0;
  for (uint32_t x = 0; x < module->desc.executable_count; ++x) {
    const tinyml_exe_library_t *lib = module->libraries[x];
    for (uint32_t e = 0; e < lib->entry_count; ++e)
      for (uint32_t p = 0; p < lib->entries[e].phase_count; ++p)
        n += lib->entries[e].workgroups[p] > 1;
  }
  return n;
}

static tinyml_context_options_t options_with(uint32_t threads) {
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.thread_count = threads;
  return o;
}

static void test_thread_count_option(void **state) {
  (void)state;
  tinyml_blob_t *blob = api_compile_model("conv2d", NULL);
  tinyml_module_t *m = api_load_blob(blob);
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  assert_int_equal(o.thread_count, 1);
  tinyml_context_t *ctx = NULL;
  o.thread_count = 0;
  api_expect_error(tinyml_context_create(m, &o, &ctx), TINYML_STATUS_INVALID_ARGUMENT,
                   "thread_count is 0");
  o.thread_count = TINYML_MAX_THREADS + 1;
  api_expect_error(tinyml_context_create(m, &o, &ctx), TINYML_STATUS_INVALID_ARGUMENT,
                   "thread_count is 33");
  assert_null(ctx);
  /* An options struct from before thread_count means one thread. */
  o.struct_size = offsetof(tinyml_context_options_t, thread_count);
  o.thread_count = 0;
  api_assert_ok(tinyml_context_create(m, &o, &ctx), "old options struct");
  tinyml_context_release(ctx);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* 1 creates no thread; N creates N - 1, and release joins them. */
static void test_threads_started_and_joined(void **state) {
  (void)state;
  int before = api_process_threads();
  if (before < 0) {
    print_message("skipped: /proc/self/task cannot be read, so threads cannot be counted\n");
    skip();
  }
  tinyml_blob_t *blob = api_compile_model("conv2d", NULL);
  tinyml_module_t *m = api_load_blob(blob);
  const uint32_t counts[] = {1, 3, TINYML_MAX_THREADS};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
    tinyml_context_options_t o = options_with(counts[i]);
    tinyml_context_t *ctx = NULL;
    api_assert_ok(tinyml_context_create(m, &o, &ctx), "context");
    assert_int_equal(api_process_threads(), before + (int)counts[i] - 1);
    tinyml_context_release(ctx);
    assert_int_equal(api_process_threads(), before);
  }
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* Runs `m` on 1, 2, 3 and 4 threads, three invokes each into outputs
 * poisoned before every invoke, and requires the bytes of the one-thread
 * run every time. */
static void expect_identical(const tinyml_module_t *m, const char *name) {
  api_io_t ref, io;
  if (!api_io_alloc(m, 64u << 20, 7, &ref) || !api_io_alloc(m, 64u << 20, 7, &io))
    fail_msg("%s: cannot size its I/O", name);
  tinyml_context_options_t one = options_with(1);
  api_io_poison_outputs(&ref, 0xa5);
  api_assert_ok(api_run(m, &one, &ref, 1), name);
  for (uint32_t threads = 2; threads <= 4; ++threads) {
    tinyml_context_options_t o = options_with(threads);
    tinyml_context_t *ctx = NULL;
    api_assert_ok(tinyml_context_create(m, &o, &ctx), name);
    api_assert_ok(api_io_bind(ctx, &io), name);
    for (int rep = 0; rep < 3; ++rep) {
      api_io_poison_outputs(&io, (uint8_t)(0x5a + rep));
      api_assert_ok(tinyml_context_invoke(ctx), name);
      if (!api_io_outputs_equal(&ref, &io))
        fail_msg("%s: %u threads (invoke %d) differ from 1 thread", name, threads, rep);
    }
    tinyml_context_release(ctx);
  }
  api_io_free(&ref);
  api_io_free(&io);
}

/* The ABI lets a runtime cut a phase into more workgroups than are useful
 * ("more just run empty"; pool.c never does): runs every split phase as
 * its useful count + 3 workgroups, one after the other, in reverse, and
 * requires the bytes of a normal run.  Microkernel calls must then leave
 * the extra workgroups empty, and never touch scratch they were not
 * given. */
static void expect_identical_overcut(const tinyml_module_t *m, const char *name) {
  api_io_t ref, io;
  if (!api_io_alloc(m, 64u << 20, 7, &ref) || !api_io_alloc(m, 64u << 20, 7, &io))
    fail_msg("%s: cannot size its I/O", name);
  tinyml_context_options_t one = options_with(1);
  api_assert_ok(api_run(m, &one, &ref, 1), name);
  tinyml_context_t *c = NULL;
  api_assert_ok(tinyml_context_create(m, &one, &c), name);
  api_assert_ok(api_io_bind(c, &io), name);
  api_io_poison_outputs(&io, 0x3c);
  for (uint32_t s = 0; s < m->desc.step_count; ++s) {
    const tmod_step_t *st = &m->desc.steps[s];
    for (uint32_t i = 0; i < st->binding_count; ++i)
      c->scratch_ptrs[i] = tinyml__binding_ptr(c, &st->bindings[i]);
    if (st->kind == TMOD_STEP_COPY) {
      memmove(c->scratch_ptrs[1], c->scratch_ptrs[0], (size_t)st->bindings[0].size);
      continue;
    }
    const tinyml_exe_entry_t *e = &m->libraries[st->executable]->entries[st->entry];
    for (uint32_t p = 0; p < e->phase_count; ++p) {
      uint32_t n = e->workgroups[p] > 1 ? e->workgroups[p] + 3 : 1;
      for (uint32_t w = n; w-- > 0;) e->fn(c->scratch_ptrs, p, w, n);
    }
  }
  if (!api_io_outputs_equal(&ref, &io)) fail_msg("%s: extra empty workgroups change it", name);
  tinyml_context_release(c);
  api_io_free(&ref);
  api_io_free(&io);
}

/* `min_split`: how many split phases the model must have at least;
 * INLINE: none at all, every phase too small to repay waking a worker
 * (tinyml_backend_t.split_min_work), so the module's steps all say 1 through
 * tinyml_module_step_workgroups(). */
#define INLINE UINT32_MAX

/* tinyml_module_step_phase_workgroups() lists each step's phases, ending
 * with 0, and the largest is tinyml_module_step_workgroups(). */
static void check_phase_workgroups(const tinyml_module_t *m, const char *path) {
  for (size_t s = 0; s < tinyml_module_dispatch_count(m); ++s) {
    uint32_t most = 0;
    size_t p = 0;
    for (uint32_t w; (w = tinyml_module_step_phase_workgroups(m, s, p)) != 0; ++p)
      most = w > most ? w : most;
    if (p == 0 || most != tinyml_module_step_workgroups(m, s))
      fail_msg("%s: step %zu: %zu phases of at most %u workgroups, the step says %u", path, s,
               p, most, tinyml_module_step_workgroups(m, s));
  }
}

static void check_model(const char *path, unsigned min_split) {
  tinyml_blob_t *blob = api_compile_file(path, NULL);
  tinyml_module_t *m = api_load_blob(blob);
  check_phase_workgroups(m, path);
  unsigned split = split_phases(m);
  printf("%s: %u split phases\n", path, split);
  if (min_split == INLINE) {
    if (split != 0) fail_msg("%s: %u split phases, expected every phase inline", path, split);
    for (size_t s = 0; s < tinyml_module_dispatch_count(m); ++s)
      if (tinyml_module_step_workgroups(m, s) != 1)
        fail_msg("%s: step %zu has %u workgroups, expected 1", path, s,
                 tinyml_module_step_workgroups(m, s));
  } else if (split < min_split) {
    fail_msg("%s: %u split phases, expected at least %u", path, split, min_split);
  }
  expect_identical(m, path);
  expect_identical_overcut(m, path);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* threads_mix.mlir splits 5 phases on x86-64, with and without AVX-512:
 * the add, the mul, the exp with the transpose, the reduction and the
 * matmul.  Its 96x160x72 matmul of two inputs is a microkernel call on
 * x86-64 (tinyml_uk_matmul_f32), split into bands of 32 columns of B
 * (3: 32, 32 and 8), one phase as before.  On the Linalg path (other
 * targets) 72 columns leave a strip of 8 outside the strip loop, whose
 * packed panel is a stack buffer written by one top-level loop and read
 * by the next, and distribute.c keeps only the remainder's loops in one
 * unsplit phase.  Checked for the variant this CPU loads and for the
 * AVX2 baseline; other targets' counts are not measured: at least 4. */
static int check_mix_module(tinyml_blob_t *blob, const char *path) {
  tinyml_module_t *m = api_load_blob(blob);
  const int x86 = strcmp(tinyml_module_target(m), "x86-64") == 0;
  unsigned split = split_phases(m);
  printf("%s (%s): %u split phases\n", path, tinyml_module_cpu(m), split);
  if (x86 ? split != 5 : split < 4)
    fail_msg("%s (%s): %u split phases, expected %s", path, tinyml_module_cpu(m), split,
             x86 ? "5" : "at least 4");
  expect_identical(m, path);
  expect_identical_overcut(m, path);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
  return x86;
}

static void check_threads_mix(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/threads_mix.mlir", g_extra);
  if (!check_mix_module(api_compile_file(path, NULL), path)) return;
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.cpu = "x86-64-v3";
  check_mix_module(api_compile_file(path, &o), path);
}

static void test_e2e_models_identical(void **state) {
  (void)state;
  /* Those that must split; the others (too small to split, or microkernel
   * calls too small to be worth it) still run and compare. */
  static const struct {
    const char *name;
    unsigned min_split;
  } models[] = {{"matmul512", 1},  {"matmul", INLINE},          {"conv2d", 0},
                {"depthwise_conv2d", 0}, {"avg_pool", 0}, {"cnn_two_results", 0},
                {"max_pool", 0},   {"softmax", 0},         {"reshape_transpose_concat", 0},
                {"fully_connected", 0}, {"add_mul_broadcast", 0}};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.mlir", api_model_dir(), models[i].name);
    check_model(path, models[i].min_split);
  }
  check_threads_mix();
}

/* split_min_work = 1 splits what the default keeps inline (each of these
 * has a loop phase below x86-64's 1 M, matmul's 2x7x13x5 a k loop carrying
 * its sums, counted since stop 47; the other e2e models' steps are
 * microkernel calls too small for two bands of UK_BAND_WORK, which no
 * threshold splits): the split must give the same bytes on every thread
 * count, as a default split does. */
static void test_forced_split_identical(void **state) {
  (void)state;
  static const char *const names[] = {"avg_pool", "cnn_two_results", "matmul"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.mlir", api_model_dir(), names[i]);
    tinyml_compile_options_t o;
    tinyml_compile_options_init(&o);
    tinyml_blob_t *plain = api_compile_file(path, &o);
    o.split_min_work = 1;
    tinyml_blob_t *blob = api_compile_file(path, &o);
    tinyml_module_t *m0 = api_load_blob(plain), *m = api_load_blob(blob);
    unsigned before = split_phases(m0), split = split_phases(m);
    printf("%s: %u split phases forced (%u by default)\n", path, split, before);
    if (split <= before)
      fail_msg("%s: split_min_work 1 gives %u split phases, the default %u", path, split,
               before);
    expect_identical(m, path);
    expect_identical_overcut(m, path);
    tinyml_module_release(m0);
    tinyml_module_release(m);
    tinyml_blob_release(plain);
    tinyml_blob_release(blob);
  }
}

static void test_shared_models_identical(void **state) {
  (void)state;
  if (!shared_present()) skip();
  static const struct {
    const char *rel;
    unsigned min_split;
  } models[] = {{"models/mlperf-tiny/vww_96_float.tflite", INLINE},
                {"models/mlperf-tiny/resnet8_float.tflite", INLINE},
                /* Its depthwise loops' inner bounds are not constant: their
                 * work is unknown, so they stay split. */
                {"models/mlperf-tiny/kws_ref_model_float32.tflite", 0},
                {"models/onnx/mnist.onnx", INLINE},
                {"models/mlperf-tiny/vww_96_int8.tflite", INLINE},
                {"models/mlperf-tiny/resnet8_int8.tflite", INLINE},
                {"models/mlperf-tiny/kws_ref_model.tflite", INLINE},
                /* Large enough to split: f32 and int8 microkernel bands
                 * (x86-64's 1 M: 13 split phases; 2 M: 9). */
                {"zoo/models/tflite-classification/tfls_mobilenet_v1_0.25_224.tflite", 13},
                /* uint8: its convs take the Linalg path, whose work is each
                 * output point times its filter window (tiling.c); 26 when
                 * a point counted 8, leaving the 7x7 1024 -> 1024 convs
                 * (51 M multiply-adds) inline. */
                {"zoo/models/tflite-classification/"
                 "coral_mobilenet_v1_1.0_224_quant_embedding_extractor.tflite", 29},
                /* A copy of 64 workgroups, weighed by the bytes it moves
                 * (distribute.c), and its larger convs, weighed by their
                 * windows (1 when a point counted 8). */
                {"zoo/models/tflite-classification/coral_mobilenet_v1_0.25_128_quant.tflite", 10}};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; ++i) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", g_shared, models[i].rel);
    check_model(path, models[i].min_split);
  }
  /* A quantized batch matmul and a loop carrying its sums were "unknown
   * work", so they split: 2 threads ran 10-20% slower than 1.  Its LSTM
   * state lives on from invoke to invoke, so only the split is checked. */
  char path[4200];
  snprintf(path, sizeof path, "%s/zoo/models/tflite-rnn/tflm_trained_lstm_int8.tflite", g_shared);
  tinyml_blob_t *blob = api_compile_file(path, NULL);
  tinyml_module_t *m = api_load_blob(blob);
  if (split_phases(m) != 0)
    fail_msg("%s: %u split phases, expected every phase inline", path, split_phases(m));
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* A worker's stack size, read by workgroup 1 of a 2-workgroup job while
 * the caller, in workgroup 0, waits for it: so the worker runs it.  The
 * caller sleeps on a condition variable, for at most STACK_WAIT_S seconds
 * (the test then fails on the size, 0, instead of hanging). */
#define STACK_WAIT_S 60
static size_t g_worker_stack;
static pthread_mutex_t g_stack_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_stack_read = PTHREAD_COND_INITIALIZER;

static void read_stack(void *const *bindings, uint32_t phase, uint32_t w, uint32_t count) {
  (void)bindings, (void)phase, (void)count;
  pthread_mutex_lock(&g_stack_mutex);
  if (w == 1) {
    pthread_attr_t attr;
    size_t size = 1;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      pthread_attr_getstacksize(&attr, &size);
      pthread_attr_destroy(&attr);
    }
    g_worker_stack = size;
    pthread_cond_signal(&g_stack_read);
  } else {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += STACK_WAIT_S;
    while (!g_worker_stack &&
           pthread_cond_timedwait(&g_stack_read, &g_stack_mutex, &until) != ETIMEDOUT) {
    }
  }
  pthread_mutex_unlock(&g_stack_mutex);
}

/* Workers run the kernels an invoke runs, which may take about 136 KiB of
 * stack (tinyml.h): they get at least 256 KiB even where the default thread
 * stack is smaller (musl: 128 KiB; here glibc's default is made 128 KiB). */
static void test_worker_stack(void **state) {
  (void)state;
#if defined(__GLIBC__)
  pthread_attr_t def, small;
  assert_int_equal(pthread_getattr_default_np(&def), 0);
  assert_int_equal(pthread_attr_init(&small), 0);
  assert_int_equal(pthread_attr_setstacksize(&small, 128 * 1024), 0);
  assert_int_equal(pthread_setattr_default_np(&small), 0);
  tinyml__pool_t *pool = NULL;
  const tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  tinyml_status_t st = tinyml__pool_create(1, &a, &pool);
  assert_int_equal(pthread_setattr_default_np(&def), 0);
  pthread_attr_destroy(&small);
  pthread_attr_destroy(&def);
  api_assert_ok(st, "pool");
  g_worker_stack = 0;
  tinyml__pool_run(pool, read_stack, NULL, 0, 2);
  tinyml__pool_destroy(pool, &a);
  assert_true(g_worker_stack >= 256 * 1024);
#else
  print_message("skipped: the default thread stack size can be set only with glibc\n");
  skip();
#endif
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  snprintf(g_extra, sizeof g_extra, "%s", argc > 2 ? argv[2] : "tests/api/models");
  snprintf(g_shared, sizeof g_shared, "%s", argc > 3 ? argv[3] : "../shared");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_thread_count_option),
      cmocka_unit_test(test_threads_started_and_joined),
      cmocka_unit_test(test_worker_stack),
      cmocka_unit_test(test_e2e_models_identical),
      cmocka_unit_test(test_forced_split_identical),
      cmocka_unit_test(test_shared_models_identical),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
