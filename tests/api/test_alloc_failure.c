/* Allocation failure through the public API: with a counting allocator that
 * fails allocation number N, for every N from 1 until the whole cycle
 * (compile, load, context_create, bind, invoke) succeeds, the step that hits
 * the failure returns OUT_OF_MEMORY, leaves its out_ parameter alone, and
 * once everything is released allocs == frees.
 *
 * Usage: test_alloc_failure MODEL_DIR   (or set TINYML_API_MODELS) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"

/* The smallest model: one fused dispatch, compiles in well under 0.1 s. */
#define MODEL "add_mul_broadcast"
#define MAX_TRIES 100000

typedef enum step { STEP_COMPILE, STEP_LOAD, STEP_CONTEXT, STEP_BIND, STEP_INVOKE,
                    STEP_DONE } step_t;
static const char *const g_step_names[] = {"compile", "load", "context_create",
                                           "bind", "invoke", "done"};

/* What one cycle did. */
typedef struct outcome {
  step_t failed_at; /* STEP_DONE when everything succeeded */
  tinyml_status_code_t code;
  int out_touched; /* an out_ parameter changed although the call failed */
} outcome_t;

typedef struct objects {
  tinyml_blob_t *blob;
  tinyml_module_t *module;
  tinyml_context_t *context;
} objects_t;

static void release_all(objects_t *o) {
  if (o->context != API_SENTINEL) tinyml_context_release(o->context);
  if (o->module != API_SENTINEL) tinyml_module_release(o->module);
  if (o->blob != API_SENTINEL) tinyml_blob_release(o->blob);
}

/* Records a failure of `step` (if `st` is one) and frees the status. */
static int failed(tinyml_status_t st, step_t step, void *out, outcome_t *r) {
  if (!st) return 0;
  r->failed_at = step;
  r->code = tinyml_status_code(st);
  r->out_touched = out != API_SENTINEL;
  tinyml_status_free(st);
  return 1;
}

static tinyml_status_t load(const tinyml_blob_t *blob, const char *path,
                            const tinyml_module_options_t *mo, tinyml_module_t **m) {
  return path ? tinyml_module_load_file(path, mo, m)
              : tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), mo, m);
}

/* Runs the cycle from `blob` (already compiled) or from `text` (compiled
 * here); with `path`, loads the module from that file instead of the blob. */
static outcome_t run_cycle(const char *text, size_t size, const tinyml_blob_t *blob,
                           const char *path, api_counting_alloc_t *c) {
  outcome_t r = {STEP_DONE, TINYML_STATUS_OK, 0};
  objects_t o = {API_SENTINEL, API_SENTINEL, API_SENTINEL};
  tinyml_compile_options_t co;
  tinyml_module_options_t mo;
  tinyml_context_options_t xo;
  tinyml_compile_options_init(&co);
  tinyml_module_options_init(&mo);
  tinyml_context_options_init(&xo);
  co.allocator = mo.allocator = xo.allocator = c->allocator;
  api_io_t io;
  memset(&io, 0, sizeof io);
  if (text && failed(tinyml_compile(text, size, &co, &o.blob), STEP_COMPILE, o.blob, &r))
    goto done;
  if (failed(load(text ? o.blob : blob, path, &mo, &o.module), STEP_LOAD, o.module, &r) ||
      failed(tinyml_context_create(o.module, &xo, &o.context), STEP_CONTEXT, o.context, &r))
    goto done;
  assert_true(api_io_alloc(o.module, SIZE_MAX, 1, &io));
  if (failed(api_io_bind(o.context, &io), STEP_BIND, API_SENTINEL, &r)) goto done;
  failed(tinyml_context_invoke(o.context), STEP_INVOKE, API_SENTINEL, &r);
done:
  release_all(&o);
  api_io_free(&io);
  return r;
}

/* Fails unless the cycle that failed allocation `n` cleaned up after itself
 * and failed (if it did) the way the contract says. */
static void check_cycle(size_t n, const outcome_t *r, const api_counting_alloc_t *c) {
  const char *step = g_step_names[r->failed_at];
  if (c->allocs != c->frees || c->live_bytes != 0)
    fail_msg("N=%zu (%s failed): %zu allocations, %zu frees, %zu bytes leaked", n, step,
             c->allocs, c->frees, c->live_bytes);
  assert_int_equal(c->bad_requests, 0);
  if (r->failed_at == STEP_DONE) return;
  if (r->code != TINYML_STATUS_OUT_OF_MEMORY)
    fail_msg("N=%zu: %s returned %s, not OUT_OF_MEMORY", n, step,
             tinyml_status_code_name(r->code));
  if (r->out_touched) fail_msg("N=%zu: %s set its out_ parameter", n, step);
}

/* Tries every N until the cycle succeeds; returns how many N were tried. */
static size_t fail_each(const char *text, size_t size, const tinyml_blob_t *blob,
                        const char *path, int fail_after) {
  size_t per_step[STEP_DONE + 1] = {0};
  size_t n = 0;
  outcome_t r;
  do {
    assert_true(++n < MAX_TRIES);
    api_counting_alloc_t c;
    api_counting_alloc_init(&c, n, fail_after);
    r = run_cycle(text, size, blob, path, &c);
    check_cycle(n, &r, &c);
    per_step[r.failed_at]++;
  } while (r.failed_at != STEP_DONE);
  print_message("%s, fail_after=%d: tried N = 1..%zu; failures in compile %zu, "
                "load %zu, context_create %zu, bind %zu, invoke %zu\n",
                text ? "from the model" : path ? "from a file" : "from memory",
                fail_after, n, per_step[STEP_COMPILE], per_step[STEP_LOAD],
                per_step[STEP_CONTEXT], per_step[STEP_BIND], per_step[STEP_INVOKE]);
  /* Binding and invoking allocate nothing. */
  assert_int_equal(per_step[STEP_BIND] + per_step[STEP_INVOKE], 0);
  return n;
}

/* The whole cycle, compile included, failing one allocation at a time, then
 * failing allocation N and every later one (so that even the statuses fall
 * back to the static ones). */
static void test_full_cycle(void **state) {
  (void)state;
  size_t size;
  char *text = api_read_model(MODEL, &size);
  for (int fail_after = 0; fail_after < 2; ++fail_after) {
    double start = api_now();
    size_t tried = fail_each(text, size, NULL, NULL, fail_after);
    print_message("%s: %zu cycles in %.2f s\n", MODEL, tried, api_now() - start);
    assert_true(tried > 3);
  }
  free(text);
}

/* From an already compiled module, loaded from memory and from a file. */
static void test_runtime_cycle_fail_after(void **state) {
  (void)state;
  tinyml_blob_t *blob = api_compile_model(MODEL, NULL);
  char path[512];
  api_temp_path(path, sizeof path, ".tmlm");
  api_assert_ok(tinyml_blob_write_file(blob, path), "tinyml_blob_write_file");
  for (int fail_after = 0; fail_after < 2; ++fail_after) {
    size_t from_memory = fail_each(NULL, 0, blob, NULL, fail_after);
    size_t from_file = fail_each(NULL, 0, blob, path, fail_after);
    assert_int_equal(from_file, from_memory + 1); /* + the file's bytes */
  }
  remove(path);
  tinyml_blob_release(blob);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_full_cycle),
      cmocka_unit_test(test_runtime_cycle_fail_after),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
