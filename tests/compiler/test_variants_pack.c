/* tc_variants_overpacked (driver/variants.c): whether the int8 blobs were
 * packed for more than the baseline and the variants left need, which
 * makes the compile run again with only those.  The x86 backend's real
 * builds: the baseline AVX2 (8 bytes of scratch per k, no dot4), then the
 * AVX-512 VNNI build (16, dot4) and the plain AVX-512 one (16, no dot4).
 * Variants are left out here as tc_variants_generate and tc_variants_check
 * would leave them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/compiler/backend.h"
#include "lib/compiler/driver/variants.h"

extern const tinyml_backend_t tinyml__backend_x86;

typedef struct fixture {
  tc_target_t baseline;
  tc_variants_t vs;
} fixture_t;

/* A default compile's candidates, before any is left out. */
static void begin(fixture_t *f) {
  const tinyml_allocator_t *a = NULL;
  assert_int_equal(TINYML_OK, tc_target_resolve(&tinyml__backend_x86, NULL, NULL, 3, a,
                                                &f->baseline));
  tinyml__compile_request_t req;
  memset(&req, 0, sizeof(req));
  req.emit = TINYML_EMIT_MODULE;
  req.backend = &tinyml__backend_x86;
  assert_int_equal(2, tc_variants_begin(&f->vs, &f->baseline, &req, ~0u));
  assert_string_equal("avx512-vnni", f->vs.v[0].build->name);
  assert_string_equal("avx512", f->vs.v[1].build->name);
  assert_int_equal(16, f->vs.pack.scratch_per_k);
  assert_int_equal(1, f->vs.pack.dot4);
}

/* Keeps the variants whose bits are set in `keep`, in order. */
static void leave(fixture_t *f, unsigned keep) {
  unsigned n = 0;
  for (unsigned i = 0; i < f->vs.count; ++i)
    if (keep >> i & 1u) f->vs.v[n++] = f->vs.v[i];
  f->vs.count = n;
}

static void check(unsigned conv_blobs, unsigned keep, int want, unsigned want_builds) {
  fixture_t f;
  begin(&f);
  f.vs.conv_blobs = conv_blobs;
  leave(&f, keep);
  unsigned builds = 99;
  assert_int_equal(want, tc_variants_overpacked(&f.vs, &builds));
  if (want) assert_int_equal(want_builds, builds);
  f.baseline.ukernels = f.vs.base;
  tc_target_release(&f.baseline);
}

/* Both AVX-512 variants left: the blobs are packed as they need. */
static void test_all_left(void **state) {
  (void)state;
  check(3, 3u, 0, 0);
}

/* None left: the baseline's 8 bytes per k, and no dot4 block. */
static void test_none_left(void **state) {
  (void)state;
  check(3, 0u, 1, 0u);
}

/* Only the plain AVX-512 one (build 1): its scratch, but no dot4 block. */
static void test_plain_left(void **state) {
  (void)state;
  check(3, 2u, 1, 1u << 1);
}

/* Only the VNNI one: it needs both, nothing to pack again. */
static void test_vnni_left(void **state) {
  (void)state;
  check(3, 1u, 0, 0);
}

/* No int8 conv blob: nothing the builds pack differs, so no second
 * compile (most ONNX graphs, whose variants worth_variants drops). */
static void test_no_conv_blobs(void **state) {
  (void)state;
  check(0, 0u, 0, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_all_left),   cmocka_unit_test(test_none_left),
      cmocka_unit_test(test_plain_left), cmocka_unit_test(test_vnni_left),
      cmocka_unit_test(test_no_conv_blobs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
