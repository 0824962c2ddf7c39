/* Several models, one arena (include/tinyml.h, tinyml_context_options_t.arena):
 * contexts of two different modules, kws_ref_model and ad01_int8, are
 * created on ONE caller arena of the larger module's size and invoked in
 * turn, A, B, A, B.  Each output must be bit-identical to the same module
 * run alone on its own arena, and within 1 of ../shared/reference (the
 * int8 tolerance of its README).  The last rounds fill the arena with
 * garbage before each invoke, since the contract says nothing in it must
 * survive between invokes.  An arena smaller than a module needs is refused
 * with a message.  argv[1] = the shared directory; skips with a printed
 * reason only where it is missing, and fails instead when CI=true. */
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

#define MODEL_COUNT 2
#define CASE_COUNT 2
#define ROUNDS 4 /* A, B per round; the last two on a poisoned arena */

typedef struct {
  const char *name;                /* models/mlperf-tiny/<name>.tflite */
  const char *cases[CASE_COUNT];   /* reference/<name>/<case>_{in,out}_0.bin */
  tinyml_blob_t *blob;
  tinyml_module_t *module;
  uint8_t *inputs[CASE_COUNT];     /* 64-byte aligned copies */
  uint8_t *expected[CASE_COUNT];   /* the reference outputs */
  uint8_t *alone[CASE_COUNT];      /* outputs of the module run on its own arena */
  size_t input_size, output_size;
} model_t;

static char g_shared[4096];
static model_t g_models[MODEL_COUNT] = {
    {.name = "kws_ref_model", .cases = {"seed1", "real-kws-sample0"}},
    {.name = "ad01_int8", .cases = {"seed1", "real-ad-sample0"}},
};

static int shared_present(void) { return api_shared_present(g_shared, "reference/manifest.json"); }

/* Reads reference/<model>/<case>_<kind>_0.bin, which must be `size` bytes. */
static uint8_t *read_reference(const model_t *m, int c, const char *kind, size_t size) {
  char path[4400];
  snprintf(path, sizeof path, "%s/reference/%s/%s_%s_0.bin", g_shared, m->name, m->cases[c],
           kind);
  size_t got = 0;
  char *data = api_read_file(path, &got);
  if (!data) fail_msg("cannot read %s", path);
  if (got != size) fail_msg("%s is %zu bytes, the module's tensor %zu", path, got, size);
  uint8_t *copy = api_aligned_copy(data, size, 64, 0);
  free(data);
  return copy;
}

static size_t tensor_bytes(const tinyml_module_t *module, int output) {
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  api_assert_ok(output ? tinyml_module_output_info(module, 0, &info)
                       : tinyml_module_input_info(module, 0, &info),
                "tensor info");
  assert_int_equal(info.dtype, TINYML_DTYPE_INT8);
  return info.byte_size;
}

static void load_model(model_t *m) {
  char path[4400];
  snprintf(path, sizeof path, "%s/models/mlperf-tiny/%s.tflite", g_shared, m->name);
  m->blob = api_compile_file(path, NULL);
  m->module = api_load_blob(m->blob);
  assert_int_equal(tinyml_module_input_count(m->module), 1);
  assert_int_equal(tinyml_module_output_count(m->module), 1);
  assert_true(tinyml_module_arena_size(m->module) > 0);
  m->input_size = tensor_bytes(m->module, 0);
  m->output_size = tensor_bytes(m->module, 1);
  for (int c = 0; c < CASE_COUNT; ++c) {
    m->inputs[c] = read_reference(m, c, "in", m->input_size);
    m->expected[c] = read_reference(m, c, "out", m->output_size);
  }
}

static void bind_and_invoke(tinyml_context_t *ctx, model_t *m, int c, uint8_t *out) {
  memset(out, 0x5A, m->output_size); /* so a stale byte cannot pass for a result */
  api_assert_ok(tinyml_context_set_input(ctx, 0, m->inputs[c], m->input_size), "set_input");
  api_assert_ok(tinyml_context_set_output(ctx, 0, out, m->output_size), "set_output");
  api_assert_ok(tinyml_context_invoke(ctx), "invoke");
}

/* The baseline: each case on a context with its own (library-owned) arena. */
static void run_alone(model_t *m) {
  tinyml_context_t *ctx = NULL;
  api_assert_ok(tinyml_context_create(m->module, NULL, &ctx), "context_create (alone)");
  for (int c = 0; c < CASE_COUNT; ++c) {
    m->alone[c] = api_aligned_copy(m->expected[c], m->output_size, 64, 0);
    bind_and_invoke(ctx, m, c, m->alone[c]);
  }
  tinyml_context_release(ctx);
}

static int setup(void **state) {
  (void)state;
  if (!shared_present()) return 0;
  for (int i = 0; i < MODEL_COUNT; ++i) {
    load_model(&g_models[i]);
    run_alone(&g_models[i]);
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  for (int i = 0; i < MODEL_COUNT; ++i) {
    model_t *m = &g_models[i];
    for (int c = 0; c < CASE_COUNT; ++c) {
      api_aligned_free(m->inputs[c]);
      api_aligned_free(m->expected[c]);
      api_aligned_free(m->alone[c]);
    }
    tinyml_module_release(m->module);
    tinyml_blob_release(m->blob);
  }
  return 0;
}

/* The most any element of `got` differs from `want` (int8). */
static int max_diff(const uint8_t *got, const uint8_t *want, size_t n) {
  int worst = 0;
  for (size_t i = 0; i < n; ++i) {
    int d = abs((int)(int8_t)got[i] - (int)(int8_t)want[i]);
    if (d > worst) worst = d;
  }
  return worst;
}

static void check_output(const model_t *m, int c, int round, const uint8_t *out) {
  int diff = max_diff(out, m->expected[c], m->output_size);
  printf("round %d %s/%s: max |diff| vs reference %d, %s the run alone\n", round, m->name,
         m->cases[c], diff, memcmp(out, m->alone[c], m->output_size) ? "DIFFERS from" : "equals");
  assert_true(diff <= 1);
  assert_memory_equal(out, m->alone[c], m->output_size);
}

/* Largest arena size and alignment over the models: the shared arena. */
static size_t shared_arena(size_t *alignment, size_t *sum) {
  size_t size = 0;
  *alignment = 1;
  *sum = 0;
  for (int i = 0; i < MODEL_COUNT; ++i) {
    size_t n = tinyml_module_arena_size(g_models[i].module);
    size_t a = tinyml_module_arena_alignment(g_models[i].module);
    if (n > size) size = n;
    if (a > *alignment) *alignment = a;
    *sum += n;
  }
  return size;
}

static void test_alternate_on_one_arena(void **state) {
  (void)state;
  if (!shared_present()) skip();
  size_t alignment, sum, size = shared_arena(&alignment, &sum);
  printf("arena: shared %zu bytes (alignment %zu), separate %zu + %zu = %zu\n", size, alignment,
         tinyml_module_arena_size(g_models[0].module),
         tinyml_module_arena_size(g_models[1].module), sum);
  uint8_t *arena = aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  assert_non_null(arena);
  tinyml_context_t *ctx[MODEL_COUNT] = {NULL};
  tinyml_context_options_t co;
  tinyml_context_options_init(&co);
  co.arena = arena;
  co.arena_size = size;
  for (int i = 0; i < MODEL_COUNT; ++i)
    api_assert_ok(tinyml_context_create(g_models[i].module, &co, &ctx[i]), "context_create");
  uint8_t out[MODEL_COUNT][1024];
  for (int i = 0; i < MODEL_COUNT; ++i) assert_true(g_models[i].output_size <= sizeof out[i]);
  for (int round = 0; round < ROUNDS; ++round) {
    for (int i = 0; i < MODEL_COUNT; ++i) {
      /* Rounds 0-1: each invoke finds the other model's leftovers; 2-3: garbage. */
      if (round >= 2) memset(arena, 0xA5 ^ round, size);
      bind_and_invoke(ctx[i], &g_models[i], round % CASE_COUNT, out[i]);
    }
    /* Both outputs are read after both invokes: B's invoke leaves A's alone. */
    for (int i = 0; i < MODEL_COUNT; ++i)
      check_output(&g_models[i], round % CASE_COUNT, round, out[i]);
  }
  for (int i = 0; i < MODEL_COUNT; ++i) tinyml_context_release(ctx[i]);
  free(arena);
}

/* One byte short of a module's need, and the smaller module's size given to
 * the larger: both refused, naming both sizes. */
static void test_small_arena_refused(void **state) {
  (void)state;
  if (!shared_present()) skip();
  size_t alignment, sum, size = shared_arena(&alignment, &sum);
  uint8_t *arena = aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
  assert_non_null(arena);
  for (int i = 0; i < MODEL_COUNT; ++i) {
    const tinyml_module_t *m = g_models[i].module;
    size_t need = tinyml_module_arena_size(m);
    size_t other = tinyml_module_arena_size(g_models[1 - i].module);
    size_t tries[2] = {need - 1, other};
    for (int t = 0; t < 2; ++t) {
      if (tries[t] >= need) continue; /* the smaller module fits the other's size */
      tinyml_context_options_t co;
      tinyml_context_options_init(&co);
      co.arena = arena;
      co.arena_size = tries[t];
      tinyml_context_t *ctx = NULL;
      char needs[64];
      snprintf(needs, sizeof needs, "the module needs %zu", need);
      api_expect_error(tinyml_context_create(m, &co, &ctx), TINYML_STATUS_INVALID_ARGUMENT,
                       "arena is", needs);
      assert_null(ctx);
    }
  }
  free(arena);
}

int main(int argc, char **argv) {
  snprintf(g_shared, sizeof g_shared, "%s", argc > 1 ? argv[1] : "../shared");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_alternate_on_one_arena),
      cmocka_unit_test(test_small_arena_refused),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
