/* Allocation failure: failing the Nth allocation, for every N until the
 * call succeeds, gives OUT_OF_MEMORY and leaks nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "module_test_util.h"

/* Reads `data` with allocation number `fail_at` failing (and, with
 * `fail_after`, every later one: then even the status falls back to the
 * static one).  Returns 1 once the read succeeded. */
static int read_failing(const uint8_t *data, size_t size, size_t fail_at,
                        int fail_after, const tmod_module_t *expected) {
  counting_alloc_t c;
  counting_alloc_init(&c);
  c.fail_at = fail_at;
  c.fail_after = fail_after;
  tmod_module_t m;
  memset(&m, 0x5a, sizeof(m));
  tinyml_status_t status = tmod_read(data, size, &c.allocator, &m);
  if (!status) {
    assert_modules_equal(expected, &m);
    tmod_read_free(&m, &c.allocator);
    assert_int_equal(0, c.live);
    return 1;
  }
  if (tinyml_status_code(status) != TINYML_STATUS_OUT_OF_MEMORY)
    fail_msg("allocation %zu: %s", fail_at, tinyml_status_message(status));
  assert_int_equal(0x5a5a5a5a, m.format_version); /* out untouched */
  tinyml_status_free(status);
  assert_int_equal(0, c.live);
  return 0;
}

static void run_read(const uint8_t *data, size_t size, const tmod_module_t *expected,
                     int fail_after) {
  size_t n = 1;
  while (!read_failing(data, size, n, fail_after, expected)) {
    n++;
    assert_true(n < 100);
  }
  print_message("read succeeded once %zu allocations could (fail_after=%d)\n",
                n - 1, fail_after);
  assert_true(n > 4); /* inputs, outputs, executables, steps at least */
}

static void test_read_allocation_failure(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  run_read(data, size, &s.module, 0);
  run_read(data, size, &s.module, 1);
  /* At an odd address the quantisation arrays are copied: same count. */
  uint8_t *odd = malloc(size + 1);
  assert_non_null(odd);
  memcpy(odd + 1, data, size);
  run_read(odd + 1, size, &s.module, 0);
  free(odd);
  free_module_bytes(data);
}

static void test_write_allocation_failure(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  for (int fail_after = 0; fail_after < 2; fail_after++) {
    counting_alloc_t c;
    counting_alloc_init(&c);
    c.fail_at = 1;
    c.fail_after = fail_after;
    uint8_t *data = NULL;
    size_t size = 0;
    tinyml_status_t status = tmod_write(&s.module, &c.allocator, &data, &size);
    assert_int_equal(TINYML_STATUS_OUT_OF_MEMORY, tinyml_status_code(status));
    assert_null(data);
    tinyml_status_free(status);
    assert_int_equal(0, c.live);
  }
  counting_alloc_t c;
  counting_alloc_init(&c);
  uint8_t *data = NULL;
  size_t size = 0;
  assert_null(tmod_write(&s.module, &c.allocator, &data, &size));
  assert_int_equal(1, c.live);
  assert_int_equal(0, (uintptr_t)data % 64);
  c.allocator.free(c.allocator.self, data);
  assert_int_equal(0, c.live);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_allocation_failure),
      cmocka_unit_test(test_write_allocation_failure),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
