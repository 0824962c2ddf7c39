/* Multi-versioned modules (tmod_variant_t): variants survive a write and a
 * read, a reader refuses a variant whose executables do not match the
 * baseline's, and a module without variants is byte for byte what a
 * writer before them made (no field 15); writer and reader hold to
 * TMOD_MAX_VARIANTS, and errors in a variant name it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "module_test_util.h"

typedef struct variants {
  tmod_variant_t v[2];
  tmod_executable_t exes[2][2];
  uint8_t images[2][2][96];
} variants_t;

/* Two variants of sample_t's two executables, each image distinct. */
static void add_variants(sample_t *s, variants_t *vs) {
  static const char *const cpus[2] = {"x86-64-v4", "x86-64-v4"};
  static const char *const features[2] = {"+avx512f,+avx512vnni", "+avx512f"};
  for (int i = 0; i < 2; ++i) {
    for (int k = 0; k < 2; ++k) {
      for (int b = 0; b < 96; ++b) vs->images[i][k][b] = (uint8_t)(i * 31 + k * 7 + b);
      vs->exes[i][k] = (tmod_executable_t){"elf", "x86_64", vs->images[i][k], 96 - 8 * k, 0};
    }
    vs->v[i] = (tmod_variant_t){cpus[i], features[i], vs->exes[i]};
  }
  s->module.variant_count = 2;
  s->module.variants = vs->v;
}

static void test_roundtrip(void **state) {
  (void)state;
  sample_t s;
  variants_t vs;
  sample_init(&s);
  add_variants(&s, &vs);
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  tmod_module_t m;
  tinyml_status_t st = tmod_read(data, size, NULL, &m);
  if (st) fail_msg("%s", tinyml_status_message(st));
  assert_modules_equal(&s.module, &m);
  assert_int_equal(2, m.variant_count);
  for (int i = 0; i < 2; ++i) {
    assert_string_equal(vs.v[i].cpu, m.variants[i].cpu);
    assert_string_equal(vs.v[i].features, m.variants[i].features);
    for (int k = 0; k < 2; ++k) {
      const tmod_executable_t *e = &m.variants[i].executables[k];
      assert_string_equal("x86_64", e->arch);
      assert_int_equal(vs.exes[i][k].image_size, e->image_size);
      assert_memory_equal(vs.images[i][k], e->image, (size_t)e->image_size);
      assert_int_equal(0, (uintptr_t)(e->image - data) % 64); /* used in place */
      assert_int_equal(tmod_crc32(vs.images[i][k], (size_t)e->image_size), e->checksum);
    }
  }
  size_t size2;
  uint8_t *data2 = write_module(&m, &size2);
  assert_int_equal(size, size2);
  assert_memory_equal(data, data2, size);
  free_module_bytes(data2);
  tmod_read_free(&m, NULL);
  free_module_bytes(data);
}

static void test_no_variants_unchanged(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  assert_int_equal(0, fb_field(data, fb_root(data), 15));
  tmod_module_t m;
  assert_int_equal(TINYML_OK, tmod_read(data, size, NULL, &m));
  assert_int_equal(0, m.variant_count);
  assert_null(m.variants);
  tmod_read_free(&m, NULL);
  free_module_bytes(data);
}

static void expect_refused(const uint8_t *data, size_t size, const char *part) {
  tmod_module_t m;
  tinyml_status_t st = tmod_read(data, size, NULL, &m);
  assert_int_equal(TINYML_STATUS_INVALID_MODULE, tinyml_status_code(st));
  if (!strstr(tinyml_status_message(st), part))
    fail_msg("'%s' lacks '%s'", tinyml_status_message(st), part);
  tinyml_status_free(st);
}

/* A variant with another count of executables, and a corrupt variant
 * image (its checksum no longer matches). */
static void test_refusals(void **state) {
  (void)state;
  sample_t s;
  variants_t vs;
  sample_init(&s);
  add_variants(&s, &vs);
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  size_t vec = fb_deref(data, fb_field(data, fb_root(data), 15));
  size_t v1 = fb_element(data, vec, 1);
  size_t exes = fb_deref(data, fb_field(data, v1, 2));
  fb_put_u32(data, exes, 1); /* 1 executable, the baseline 2 */
  expect_refused(data, size, "variant 1");
  fb_put_u32(data, exes, 2);
  size_t e0 = fb_element(data, exes, 0);
  size_t image = fb_deref(data, fb_field(data, e0, 2));
  data[image + 4 + 10] ^= 1;
  /* Named as the variant's, not taken for the baseline's executable 0. */
  expect_refused(data, size, "module: variant 1 (x86-64-v4) executable 0 image: checksum");
  free_module_bytes(data);
}

/* A count beyond TMOD_MAX_VARIANTS, and a variant whose cpu is "" (which
 * would pass any CPU's check). */
static void test_reader_limits(void **state) {
  (void)state;
  sample_t s;
  variants_t vs;
  sample_init(&s);
  add_variants(&s, &vs);
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  size_t vec = fb_deref(data, fb_field(data, fb_root(data), 15));
  fb_put_u32(data, vec, TMOD_MAX_VARIANTS + 1);
  char want[64];
  snprintf(want, sizeof(want), "%u variants exceed the maximum %u", TMOD_MAX_VARIANTS + 1,
           TMOD_MAX_VARIANTS);
  expect_refused(data, size, want);
  fb_put_u32(data, vec, 2);
  size_t cpu = fb_deref(data, fb_field(data, fb_element(data, vec, 0), 0));
  fb_put_u32(data, cpu, 0);
  data[cpu + 4] = 0; /* the empty string's NUL */
  expect_refused(data, size, "module: variant 0: names no cpu");
  free_module_bytes(data);
}

static void expect_unwritable(const tmod_module_t *m, const char *part) {
  uint8_t *data = NULL;
  size_t size = 0;
  tinyml_status_t st = tmod_write(m, NULL, &data, &size);
  assert_int_equal(TINYML_STATUS_INVALID_ARGUMENT, tinyml_status_code(st));
  if (!strstr(tinyml_status_message(st), part))
    fail_msg("'%s' lacks '%s'", tinyml_status_message(st), part);
  assert_null(data);
  tinyml_status_free(st);
}

static void test_writer_limits(void **state) {
  (void)state;
  sample_t s;
  variants_t vs;
  sample_init(&s);
  add_variants(&s, &vs);
  s.module.variant_count = TMOD_MAX_VARIANTS + 1;
  char want[64];
  snprintf(want, sizeof(want), "variant count %u: exceeds the maximum", TMOD_MAX_VARIANTS + 1);
  expect_unwritable(&s.module, want);
  s.module.variant_count = 2;
  vs.v[1].cpu = NULL;
  expect_unwritable(&s.module, "variant 1: the cpu is NULL");
  vs.v[1].cpu = "";
  expect_unwritable(&s.module, "variant 1: the cpu is NULL or empty");
  vs.v[1].cpu = "x86-64-v4";
  vs.v[0].features = NULL;
  expect_unwritable(&s.module, "variant 0: the features are NULL");
  vs.v[0].features = "+avx512f";
  vs.exes[1][1].image = NULL;
  expect_unwritable(&s.module, "variant 1: an executable is NULL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_no_variants_unchanged),
      cmocka_unit_test(test_refusals),
      cmocka_unit_test(test_writer_limits),
      cmocka_unit_test(test_reader_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
