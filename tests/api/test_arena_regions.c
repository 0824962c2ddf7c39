/* Arena regions through the public header and the shared library:
 * tinyml_compile_options_t.arena_regions splits the arena, the module
 * reports each region, a context allocates them or takes the caller's
 * memory (checked), and outputs are those of the one-arena module.
 * argv[1]: tests/e2e/models. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"
#include "tinyml.h"

static tinyml_blob_t *compile_split(const char *model, size_t r0, size_t r1) {
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.arena_regions[0] = r0;
  o.arena_regions[1] = r1;
  return api_compile_model(model, &o);
}

/* Two regions whose sum is the one-arena plan or more, each within its
 * capacity, and the same outputs from contexts that allocate them. */
static void test_split_runs_the_same(void **state) {
  (void)state;
  tinyml_blob_t *one = api_compile_model("cnn_two_results", NULL);
  tinyml_module_t *m1 = api_load_blob(one);
  size_t whole = tinyml_module_arena_size(m1);
  assert_int_equal(tinyml_module_arena_region_count(m1), 1);
  assert_int_equal(tinyml_module_arena_region_size(m1, 0), whole);
  size_t cap0 = whole / 3 / 64 * 64 + 64;
  tinyml_blob_t *two = compile_split("cnn_two_results", cap0, whole);
  tinyml_module_t *m2 = api_load_blob(two);
  assert_int_equal(tinyml_module_arena_region_count(m2), 2);
  size_t s0 = tinyml_module_arena_region_size(m2, 0), s1 = tinyml_module_arena_region_size(m2, 1);
  assert_int_equal(tinyml_module_arena_size(m2), s0);
  assert_true(s0 > 0 && s0 <= cap0);
  assert_true(s1 <= whole && s0 + s1 >= whole);
  assert_int_equal(tinyml_module_arena_region_size(m2, 2), 0);
  api_io_t a, b;
  assert_true(api_io_alloc(m1, 1 << 24, 11, &a));
  assert_true(api_io_alloc(m2, 1 << 24, 11, &b));
  api_assert_ok(api_run(m1, NULL, &a, 2), "one arena");
  api_assert_ok(api_run(m2, NULL, &b, 2), "two regions");
  assert_true(api_io_outputs_equal(&a, &b));
  api_io_free(&a);
  api_io_free(&b);
  tinyml_module_release(m1);
  tinyml_module_release(m2);
  tinyml_blob_release(one);
  tinyml_blob_release(two);
}

/* The caller's memory for both regions (region 0 through `arena`), filled
 * with garbage first: same outputs; a short or misaligned region is
 * refused naming it. */
static void test_caller_regions(void **state) {
  (void)state;
  tinyml_blob_t *blob = compile_split("cnn_two_results", 4096, 1 << 20);
  tinyml_module_t *m = api_load_blob(blob);
  size_t s0 = tinyml_module_arena_region_size(m, 0), s1 = tinyml_module_arena_region_size(m, 1);
  size_t al = tinyml_module_arena_alignment(m);
  uint8_t *r0 = aligned_alloc(al, (s0 + al) / al * al), *r1 = aligned_alloc(al, (s1 + al) / al * al);
  assert_non_null(r0);
  assert_non_null(r1);
  memset(r0, 0xA5, s0);
  memset(r1, 0x5A, s1);
  api_io_t want, got;
  assert_true(api_io_alloc(m, 1 << 24, 5, &want));
  assert_true(api_io_alloc(m, 1 << 24, 5, &got));
  api_assert_ok(api_run(m, NULL, &want, 1), "allocated regions");
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.arena = r0;
  o.arena_size = s0;
  o.arena_regions[1] = r1;
  o.arena_region_sizes[1] = s1;
  api_assert_ok(api_run(m, &o, &got, 1), "caller regions");
  assert_true(api_io_outputs_equal(&want, &got));
  tinyml_context_t *ctx = NULL;
  o.arena_region_sizes[1] = s1 - 1;
  api_expect_error(tinyml_context_create(m, &o, &ctx), TINYML_STATUS_INVALID_ARGUMENT,
                   "arena region 1 is", "the module needs");
  o.arena_region_sizes[1] = s1;
  o.arena_regions[1] = r1 + 1;
  api_expect_error(tinyml_context_create(m, &o, &ctx), TINYML_STATUS_INVALID_ARGUMENT,
                   "aligned to");
  o.arena_regions[1] = NULL; /* the context allocates region 1 */
  o.arena_size = s0 - 1;
  api_expect_error(tinyml_context_create(m, &o, &ctx), TINYML_STATUS_INVALID_ARGUMENT,
                   "arena is", "the module needs");
  assert_null(ctx);
  api_io_free(&want);
  api_io_free(&got);
  free(r0);
  free(r1);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* A buffer that fits no region fails the compile, naming its size. */
static void test_too_small_regions(void **state) {
  (void)state;
  size_t size = 0;
  char *text = api_read_model("cnn_two_results", &size);
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.arena_regions[0] = 64;
  o.arena_regions[1] = 128;
  tinyml_blob_t *blob = NULL;
  api_expect_error(tinyml_compile(text, size, &o, &blob), TINYML_STATUS_UNSUPPORTED,
                   "arena regions", "fits in no region");
  assert_null(blob);
  o.emit = TINYML_EMIT_C;
  o.arena_regions[0] = 1 << 20;
  tinyml_files_t *files = NULL;
  api_expect_error(tinyml_compile_files(text, size, &o, &files), TINYML_STATUS_UNSUPPORTED,
                   "arena regions need the module form");
  assert_null(files);
  free(text);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split_runs_the_same),
      cmocka_unit_test(test_caller_regions),
      cmocka_unit_test(test_too_small_regions),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
