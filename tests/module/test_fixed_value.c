/* Pinned inputs in the module format (TensorInfo.fixed_value): written and
 * read back in place, present-and-empty kept apart from absent, and the
 * reader refusing a value of the wrong size or one on an output, with a
 * message naming the tensor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "module_test_util.h"

/* Input 1 of the sample ("bias_in", uint8 [2, 5]) pinned to 0..9. */
static const uint8_t kBias[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

static void expect_invalid(const uint8_t *data, size_t size, const char *needle) {
  counting_alloc_t c;
  counting_alloc_init(&c);
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, &c.allocator, &m);
  if (!status) fail_msg("expected an error containing \"%s\"", needle);
  const char *message = tinyml_status_message(status);
  if (tinyml_status_code(status) != TINYML_STATUS_INVALID_MODULE || !strstr(message, needle))
    fail_msg("expected INVALID_MODULE containing \"%s\", got %s", needle, message);
  tinyml_status_free(status);
  assert_int_equal(0, c.live);
}

/* Position of input `i`'s fixed_value vector (its length word). */
static size_t fixed_vector(const uint8_t *data, unsigned i) {
  size_t inputs = fb_deref(data, fb_field(data, fb_root(data), 6));
  size_t field = fb_field(data, fb_element(data, inputs, i), 5);
  assert_true(field != 0);
  return fb_deref(data, field);
}

static void test_roundtrip(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  s.inputs[1].fixed_value = kBias;
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, NULL, &m);
  if (status) fail_msg("%s", tinyml_status_message(status));
  assert_modules_equal(&s.module, &m);
  /* An older runtime, which reads only version 1, refuses it. */
  assert_int_equal(TMOD_FORMAT_VERSION_PINNED, m.format_version);
  assert_null(m.inputs[0].fixed_value);
  assert_non_null(m.inputs[1].fixed_value);
  assert_memory_equal(kBias, m.inputs[1].fixed_value, sizeof kBias);
  /* Used in place, as the rest of the module's bytes. */
  assert_true(m.inputs[1].fixed_value > data && m.inputs[1].fixed_value < data + size);
  tmod_read_free(&m, NULL);
  free_module_bytes(data);
}

/* An empty input pinned (the importer pins empty shape inputs): byte_size
 * 0, and fixed_value present, not NULL. */
static void test_empty_input(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  s.inputs[1].rank = 1;
  s.inputs[1].dims[0] = 0;
  s.inputs[1].byte_size = 0;
  s.inputs[1].quant_count = 0;
  s.inputs[1].fixed_value = kBias; /* 0 of its bytes */
  s.bindings2[0].size = 0;
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, NULL, &m);
  if (status) fail_msg("%s", tinyml_status_message(status));
  assert_int_equal(0, m.inputs[1].byte_size);
  assert_non_null(m.inputs[1].fixed_value);
  tmod_read_free(&m, NULL);
  free_module_bytes(data);
}

static void test_wrong_size(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  s.inputs[1].fixed_value = kBias;
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  size_t vector = fixed_vector(data, 1);
  assert_int_equal(10, fb_u32(data, vector));
  fb_put_u32(data, vector, 9);
  expect_invalid(data, size, "input 1: 'bias_in' has a fixed value of 9 bytes; only an "
                             "input may have one, of its byte size 10");
  fb_put_u32(data, vector, 11);
  expect_invalid(data, size, "'bias_in' has a fixed value of 11 bytes");
  fb_put_u32(data, vector, 0);
  expect_invalid(data, size, "'bias_in' has a fixed value of 0 bytes");
  fb_put_u32(data, vector, 0x7fffffffu); /* past the end of the module */
  expect_invalid(data, size, "input 1");
  free_module_bytes(data);
}

static void test_output_refused(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  static const uint8_t kLogits[40] = {1};
  s.outputs[0].fixed_value = kLogits;
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  expect_invalid(data, size, "output 0: 'logits' has a fixed value of 40 bytes; only an input may have one");
  free_module_bytes(data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_empty_input),
      cmocka_unit_test(test_wrong_size),
      cmocka_unit_test(test_output_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
