/* Every single-byte corruption and every truncation of a small module: the
 * reader must return a status or a module whose every pointer stays inside
 * the bytes, never crash, and never leak.  Built a second time with
 * ASan/UBSan (meson option sanitize_tests) so stray reads are caught. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "module_test_util.h"

typedef struct tally {
  size_t accepted, rejected;
  uint64_t hash; /* keeps touch_module's reads alive */
} tally_t;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads `data` (an exactly sized heap block, so sanitizers see overreads)
 * and checks the outcome. */
static void read_one(const uint8_t *data, size_t size, tally_t *t) {
  counting_alloc_t c;
  counting_alloc_init(&c);
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, &c.allocator, &m);
  if (status) {
    tinyml_status_code_t code = tinyml_status_code(status);
    assert_true(code == TINYML_STATUS_INVALID_MODULE);
    assert_true(strncmp(tinyml_status_message(status), "module: ", 8) == 0);
    tinyml_status_free(status);
    t->rejected++;
  } else {
    t->hash ^= touch_module(&m);
    tmod_read_free(&m, &c.allocator);
    t->accepted++;
  }
  assert_int_equal(0, c.live);
}

static void test_every_byte(void **state) {
  (void)state;
  sample_t s;
  small_init(&s);
  size_t size;
  uint8_t *module = write_module(&s.module, &size);
  uint8_t *data = malloc(size);
  assert_non_null(data);
  memcpy(data, module, size);
  tally_t t = {0, 0, 0};
  read_one(data, size, &t);
  assert_int_equal(1, t.accepted); /* the pristine module is valid */
  double start = now();
  for (size_t pos = 0; pos < size; pos++) {
    uint8_t original = data[pos];
    for (unsigned v = 0; v < 256; v++) {
      if (v == original) continue;
      data[pos] = (uint8_t)v;
      read_one(data, size, &t);
    }
    data[pos] = original;
  }
  print_message("%zu-byte module: %zu corruptions, %zu accepted, %zu rejected, "
                "%.2f s\n", size, t.accepted + t.rejected - 1, t.accepted - 1,
                t.rejected, now() - start);
  /* Some bytes (padding, unread fields) may change freely; most may not. */
  assert_true(t.rejected > t.accepted);
  free(data);
  free_module_bytes(module);
}

static void test_every_truncation(void **state) {
  (void)state;
  sample_t s;
  small_init(&s);
  size_t size;
  uint8_t *module = write_module(&s.module, &size);
  tally_t t = {0, 0, 0};
  for (size_t len = 0; len < size; len++) {
    uint8_t *data = malloc(len ? len : 1);
    assert_non_null(data);
    memcpy(data, module, len);
    read_one(data, len, &t);
    free(data);
  }
  /* The writer puts the blobs last, so any truncation cuts into one. */
  assert_int_equal(0, t.accepted);
  free_module_bytes(module);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_byte),
      cmocka_unit_test(test_every_truncation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
