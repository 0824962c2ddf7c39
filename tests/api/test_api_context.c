/* The public contract of include/tinyml.h for contexts, through the shared
 * library only: context options and caller arenas, I/O binding, invoke
 * preconditions, no allocation in invoke, several contexts and threads on
 * one module, and every model of EXTRA_MODEL_DIR compiled and run.  Up to
 * a loaded module: test_api_contract.c.
 *
 * Usage: test_api_context MODEL_DIR [EXTRA_MODEL_DIR]
 *   MODEL_DIR (tests/e2e/models) may also come from TINYML_API_MODELS;
 *   every model in EXTRA_MODEL_DIR (tests/api/models) must compile and run. */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
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

/* ==== contexts =========================================================== */

static void expect_create_error(const tinyml_module_t *m,
                                const tinyml_context_options_t *o,
                                tinyml_status_code_t code, const char *needle) {
  tinyml_context_t *ctx = API_SENTINEL;
  api_expect_error(tinyml_context_create(m, o, &ctx), code, needle);
  assert_ptr_equal(ctx, API_SENTINEL);
}

static void test_context_create_errors(void **state) {
  (void)state;
  const tinyml_module_t *m = api_conv.module;
  expect_create_error(NULL, NULL, TINYML_STATUS_INVALID_ARGUMENT, "module");
  api_expect_error(tinyml_context_create(m, NULL, NULL), TINYML_STATUS_INVALID_ARGUMENT,
                   "out_context");
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.struct_size = 0;
  expect_create_error(m, &o, TINYML_STATUS_INVALID_ARGUMENT, "struct_size");
  size_t need = tinyml_module_arena_size(m), align = tinyml_module_arena_alignment(m);
  void *arena = NULL;
  assert_int_equal(posix_memalign(&arena, align, need + align), 0);
  tinyml_context_options_init(&o);
  o.arena = arena;
  o.arena_size = need - 1;
  expect_create_error(m, &o, TINYML_STATUS_INVALID_ARGUMENT, "arena");
  o.arena_size = 0;
  expect_create_error(m, &o, TINYML_STATUS_INVALID_ARGUMENT, "arena");
  for (size_t off = 1; off < align; off *= 2) {
    o.arena = (uint8_t *)arena + off;
    o.arena_size = need;
    expect_create_error(m, &o, TINYML_STATUS_INVALID_ARGUMENT, "aligned");
  }
  free(arena);
}

/* Runs `m` through a context made with `o`, after poisoning the outputs. */
static void run_with(const tinyml_module_t *m, const tinyml_context_options_t *o,
                     api_io_t *io) {
  api_io_poison_outputs(io, 0xcd);
  api_assert_ok(api_run(m, o, io, 1), "run");
}

static int arena_was_written(const uint8_t *arena, size_t size, uint8_t poison) {
  for (size_t i = 0; i < size; ++i)
    if (arena[i] != poison) return 1;
  return 0;
}

/* Live bytes the context itself holds, measured with a counting allocator. */
static size_t context_bytes(const tinyml_module_t *m, tinyml_context_options_t *o) {
  api_counting_alloc_t c;
  api_counting_alloc_init(&c, 0, 0);
  o->allocator = c.allocator;
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(m, o, &ctx), "tinyml_context_create");
  size_t live = c.live_bytes;
  tinyml_context_release(ctx);
  assert_int_equal(c.allocs, c.frees);
  memset(&o->allocator, 0, sizeof o->allocator);
  return live;
}

static void test_caller_arena(void **state) {
  (void)state;
  const tinyml_module_t *m = api_conv.module;
  size_t need = tinyml_module_arena_size(m), align = tinyml_module_arena_alignment(m);
  uint8_t *arena = NULL;
  assert_int_equal(posix_memalign((void **)&arena, align, need), 0);
  memset(arena, 0xab, need);
  api_io_t owned, caller;
  assert_true(api_io_alloc(m, SIZE_MAX, 3, &owned));
  assert_true(api_io_alloc(m, SIZE_MAX, 3, &caller));
  run_with(m, NULL, &owned);
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.arena = arena;
  o.arena_size = need; /* exactly the size, exactly the alignment */
  run_with(m, &o, &caller);
  assert_true(api_io_outputs_equal(&owned, &caller));
  assert_true(arena_was_written(arena, need, 0xab));
  /* With a caller arena the context does not allocate one. */
  size_t with_arena = context_bytes(m, &o);
  o.arena = NULL;
  size_t without = context_bytes(m, &o);
  assert_true(without >= need);
  assert_true(with_arena + need <= without);
  api_io_free(&owned);
  api_io_free(&caller);
  free(arena);
}

/* Older callers' context options end before the arena fields: a stale arena
 * past struct_size must be ignored. */
static void test_context_older_options(void **state) {
  (void)state;
  uint8_t tiny[1];
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.struct_size = offsetof(tinyml_context_options_t, arena);
  o.arena = tiny + 1; /* misaligned and too small: must not be looked at */
  o.arena_size = 1;
  api_io_t io;
  assert_true(api_io_alloc(api_conv.module, SIZE_MAX, 1, &io));
  run_with(api_conv.module, &o, &io);
  api_io_free(&io);
}

typedef struct binder {
  tinyml_context_t *ctx;
  int input;
} binder_t;

static tinyml_status_t bind_one(const binder_t *b, size_t index, void *data, size_t size) {
  return b->input ? tinyml_context_set_input(b->ctx, index, data, size)
                  : tinyml_context_set_output(b->ctx, index, data, size);
}

/* Every bad way to bind tensor `index` of one side; `buf` is correctly
 * sized and aligned, with at least 8 spare bytes behind it. */
static void check_bind_errors(const binder_t *b, size_t count, uint8_t *buf, size_t size,
                              const char *name) {
  binder_t null_ctx = {NULL, b->input};
  api_expect_error(bind_one(&null_ctx, 0, buf, size), TINYML_STATUS_INVALID_ARGUMENT,
                   "context");
  api_expect_error(bind_one(b, 0, NULL, size), TINYML_STATUS_INVALID_ARGUMENT, "data");
  api_expect_error(bind_one(b, count, buf, size), TINYML_STATUS_INVALID_ARGUMENT,
                   "index", "out of range");
  api_expect_error(bind_one(b, SIZE_MAX, buf, size), TINYML_STATUS_INVALID_ARGUMENT,
                   "out of range");
  api_expect_error(bind_one(b, 0, buf, size - 4), TINYML_STATUS_SIZE_MISMATCH, name,
                   "too small");
  api_expect_error(bind_one(b, 0, buf, size + 4), TINYML_STATUS_SIZE_MISMATCH, name,
                   "too large");
  api_expect_error(bind_one(b, 0, buf, 0), TINYML_STATUS_SIZE_MISMATCH, name);
  for (size_t off = 1; off < 4; ++off)
    api_expect_error(bind_one(b, 0, buf + off, size), TINYML_STATUS_INVALID_ARGUMENT,
                     name, "aligned");
}

static void test_set_io_errors(void **state) {
  (void)state;
  const tinyml_module_t *m = api_add.module;
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &ctx), "tinyml_context_create");
  api_io_t io;
  assert_true(api_io_alloc(m, SIZE_MAX, 1, &io));
  uint8_t *buf = api_aligned_copy(io.inputs[0], io.input_sizes[0] + 8, 64, 0);
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  api_assert_ok(tinyml_module_input_info(m, 0, &info), "input_info");
  binder_t in = {ctx, 1};
  check_bind_errors(&in, io.input_count, buf, io.input_sizes[0], info.name);
  api_assert_ok(tinyml_module_output_info(m, 0, &info), "output_info");
  binder_t out = {ctx, 0};
  check_bind_errors(&out, io.output_count, buf, io.output_sizes[0], info.name);
  api_aligned_free(buf);
  api_io_free(&io);
  tinyml_context_release(ctx);
}

/* A rejected rebind leaves the previous binding in place. */
static void test_failed_bind_keeps_binding(void **state) {
  (void)state;
  const tinyml_module_t *m = api_add.module;
  api_io_t io, again;
  assert_true(api_io_alloc(m, SIZE_MAX, 5, &io));
  assert_true(api_io_alloc(m, SIZE_MAX, 5, &again));
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &ctx), "tinyml_context_create");
  api_assert_ok(api_io_bind(ctx, &io), "bind");
  api_assert_ok(tinyml_context_invoke(ctx), "invoke");
  uint8_t wrong[8];
  api_expect_error(tinyml_context_set_input(ctx, 0, wrong, sizeof wrong),
                   TINYML_STATUS_SIZE_MISMATCH, "too small");
  api_expect_error(tinyml_context_set_output(ctx, 0, wrong, sizeof wrong),
                   TINYML_STATUS_SIZE_MISMATCH, "too small");
  api_io_poison_outputs(&again, 0);
  memcpy(again.outputs[0], io.outputs[0], io.output_sizes[0]);
  api_io_poison_outputs(&io, 0xcd);
  api_assert_ok(tinyml_context_invoke(ctx), "invoke");
  assert_true(api_io_outputs_equal(&io, &again));
  tinyml_context_release(ctx);
  api_io_free(&io);
  api_io_free(&again);
}

static void test_invoke_preconditions(void **state) {
  (void)state;
  const tinyml_module_t *m = api_add.module;
  api_expect_error(tinyml_context_invoke(NULL), TINYML_STATUS_INVALID_ARGUMENT, "context");
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &ctx), "tinyml_context_create");
  api_io_t io;
  assert_true(api_io_alloc(m, SIZE_MAX, 1, &io));
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  api_assert_ok(tinyml_module_input_info(m, 0, &info), "input_info");
  api_expect_error(tinyml_context_invoke(ctx), TINYML_STATUS_FAILED_PRECONDITION, "input",
                   info.name);
  /* All inputs but the last. */
  for (size_t i = 0; i + 1 < io.input_count; ++i)
    api_assert_ok(tinyml_context_set_input(ctx, i, io.inputs[i], io.input_sizes[i]), "in");
  api_assert_ok(tinyml_module_input_info(m, io.input_count - 1, &info), "input_info");
  api_expect_error(tinyml_context_invoke(ctx), TINYML_STATUS_FAILED_PRECONDITION, "input",
                   info.name);
  size_t last = io.input_count - 1;
  api_assert_ok(tinyml_context_set_input(ctx, last, io.inputs[last], io.input_sizes[last]),
                "in");
  api_assert_ok(tinyml_module_output_info(m, 0, &info), "output_info");
  api_expect_error(tinyml_context_invoke(ctx), TINYML_STATUS_FAILED_PRECONDITION, "output",
                   info.name);
  api_assert_ok(api_io_bind(ctx, &io), "bind");
  api_assert_ok(tinyml_context_invoke(ctx), "invoke");
  tinyml_context_release(ctx);
  api_io_free(&io);
}

/* "Performs no allocation": the context's allocator is not called by invoke. */
static void test_invoke_does_not_allocate(void **state) {
  (void)state;
  api_counting_alloc_t c;
  api_counting_alloc_init(&c, 0, 0);
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.allocator = c.allocator;
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(api_conv.module, &o, &ctx), "tinyml_context_create");
  api_io_t io;
  assert_true(api_io_alloc(api_conv.module, SIZE_MAX, 1, &io));
  api_assert_ok(api_io_bind(ctx, &io), "bind");
  size_t calls = c.calls;
  for (int i = 0; i < 3; ++i) api_assert_ok(tinyml_context_invoke(ctx), "invoke");
  assert_int_equal(c.calls, calls);
  tinyml_context_release(ctx);
  assert_int_equal(c.allocs, c.frees);
  assert_int_equal(c.bad_requests, 0);
  api_io_free(&io);
}

/* Two contexts on one module, invoked in turns on different inputs. */
static void test_two_contexts(void **state) {
  (void)state;
  const tinyml_module_t *m = api_conv.module;
  api_io_t io[2], want[2];
  tinyml_context_t *ctx[2] = {NULL, NULL};
  for (int i = 0; i < 2; ++i) {
    api_run_seeded(m, 10 + (uint32_t)i, &want[i]); /* each alone, fresh context */
    assert_true(api_io_alloc(m, SIZE_MAX, 10 + (uint32_t)i, &io[i]));
    api_assert_ok(tinyml_context_create(m, NULL, &ctx[i]), "tinyml_context_create");
    api_assert_ok(api_io_bind(ctx[i], &io[i]), "bind");
  }
  assert_false(api_io_outputs_equal(&want[0], &want[1]));
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < 2; ++i) {
      api_io_poison_outputs(&io[i], (uint8_t)round);
      api_assert_ok(tinyml_context_invoke(ctx[i]), "invoke");
      assert_true(api_io_outputs_equal(&io[i], &want[i]));
    }
  for (int i = 0; i < 2; ++i) {
    tinyml_context_release(ctx[i]);
    api_io_free(&io[i]);
    api_io_free(&want[i]);
  }
}

/* ==== every extra model ================================================== */

static const char *g_extra_dir;

/* References for output 0 of the extra models whose imports were once
 * missing (erff; sincosf, whose argument order matters). */
typedef void (*reference_fn)(const api_io_t *io, float *want);

static void ref_erf(const api_io_t *io, float *want) {
  const float *x = io->inputs[0];
  for (size_t i = 0; i < io->output_sizes[0] / sizeof(float); ++i) want[i] = erff(x[i]);
}

/* TOSA FFT2D, forward, real part, for [1, 8, 8]. */
static void ref_fft2d_real(const api_io_t *io, float *want) {
  const float *re = io->inputs[0], *im = io->inputs[1];
  const double pi = 3.14159265358979323846;
  for (int oy = 0; oy < 8; ++oy)
    for (int ox = 0; ox < 8; ++ox) {
      double sum = 0.0;
      for (int iy = 0; iy < 8; ++iy)
        for (int ix = 0; ix < 8; ++ix) {
          double a = 2 * pi * ((iy * oy) % 8 / 8.0 + (ix * ox) % 8 / 8.0);
          sum += re[iy * 8 + ix] * cos(a) + im[iy * 8 + ix] * sin(a);
        }
      want[oy * 8 + ox] = (float)sum;
    }
}

static const struct {
  const char *file;
  reference_fn fn;
} g_references[] = {{"erf.mlir", ref_erf}, {"fft2d.mlir", ref_fft2d_real}};

static void check_reference(const char *file, const api_io_t *io) {
  for (size_t r = 0; r < sizeof g_references / sizeof g_references[0]; ++r) {
    if (strcmp(file, g_references[r].file) != 0) continue;
    size_t n = io->output_sizes[0] / sizeof(float);
    float *want = malloc(n * sizeof *want);
    assert_non_null(want);
    g_references[r].fn(io, want);
    const float *got = io->outputs[0];
    for (size_t i = 0; i < n; ++i)
      if (!(fabsf(got[i] - want[i]) <= 1e-4f * fmaxf(1.0f, fabsf(want[i]))))
        fail_msg("%s element %zu: got %.9g, want %.9g", file, i, got[i], want[i]);
    free(want);
  }
}

/* Compiles, loads and runs the model at `path` twice on one context; both
 * runs must write the same bytes. */
static void run_twice(const char *path, const char *file) {
  tinyml_blob_t *blob = api_compile_file(path, NULL);
  tinyml_module_t *m = api_load_blob(blob);
  api_io_t first, second;
  assert_true(api_io_alloc(m, SIZE_MAX, 1, &first));
  assert_true(api_io_alloc(m, SIZE_MAX, 1, &second));
  run_with(m, NULL, &first);
  run_with(m, NULL, &second);
  assert_true(api_io_outputs_equal(&first, &second));
  check_reference(file, &first);
  print_message("%s: %zu inputs, %zu outputs, %zu steps\n", path, first.input_count,
                first.output_count, tinyml_module_dispatch_count(m));
  api_io_free(&first);
  api_io_free(&second);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* Models for ops the e2e models do not use (libm imports, float16, integer
 * division) compile, load and run. */
static void test_extra_models_run(void **state) {
  (void)state;
  if (!g_extra_dir) {
    print_message("no EXTRA_MODEL_DIR argument: nothing to run\n");
    skip();
  }
  DIR *d = opendir(g_extra_dir);
  assert_non_null(d);
  size_t count = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len <= 5 || strcmp(e->d_name + len - 5, ".mlir") != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", g_extra_dir, e->d_name);
    run_twice(path, e->d_name);
    count++;
  }
  closedir(d);
  assert_true(count > 0);
}

/* ==== threads ============================================================ */

#define THREADS 4
#define THREAD_INVOKES 200

typedef struct worker {
  const tinyml_module_t *module;
  const api_io_t *want;
  uint32_t seed;
  int failures; /* cmocka asserts are not thread-safe: count instead */
} worker_t;

static void *worker_main(void *arg) {
  worker_t *w = arg;
  api_io_t io;
  tinyml_context_t *ctx = NULL;
  if (!api_io_alloc(w->module, SIZE_MAX, w->seed, &io)) return (w->failures = 1, NULL);
  tinyml_status_t st = tinyml_context_create(w->module, NULL, &ctx);
  if (!st) st = api_io_bind(ctx, &io);
  for (int i = 0; !st && i < THREAD_INVOKES; ++i) {
    api_io_poison_outputs(&io, (uint8_t)i);
    st = tinyml_context_invoke(ctx);
    if (!st && !api_io_outputs_equal(&io, w->want)) w->failures++;
  }
  if (st) w->failures++;
  tinyml_status_free(st);
  tinyml_context_release(ctx);
  api_io_free(&io);
  return NULL;
}

static void test_threads_share_module(void **state) {
  (void)state;
  api_io_t want;
  api_run_seeded(api_conv.module, 21, &want);
  pthread_t threads[THREADS];
  worker_t workers[THREADS];
  for (int i = 0; i < THREADS; ++i) {
    workers[i] = (worker_t){api_conv.module, &want, 21, 0};
    assert_int_equal(pthread_create(&threads[i], NULL, worker_main, &workers[i]), 0);
  }
  int failures = 0;
  for (int i = 0; i < THREADS; ++i) {
    assert_int_equal(pthread_join(threads[i], NULL), 0);
    failures += workers[i].failures;
  }
  assert_int_equal(failures, 0);
  api_io_free(&want);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  g_extra_dir = argc > 2 ? argv[2] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_context_create_errors),
      cmocka_unit_test(test_caller_arena),
      cmocka_unit_test(test_context_older_options),
      cmocka_unit_test(test_set_io_errors),
      cmocka_unit_test(test_failed_bind_keeps_binding),
      cmocka_unit_test(test_invoke_preconditions),
      cmocka_unit_test(test_invoke_does_not_allocate),
      cmocka_unit_test(test_two_contexts),
      cmocka_unit_test(test_threads_share_module),
      cmocka_unit_test(test_extra_models_run),
  };
  return cmocka_run_group_tests(tests, api_fixtures_setup, api_fixtures_teardown);
}
