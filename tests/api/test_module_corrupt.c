/* Corrupted modules through the public API: for every byte of a real
 * compiled module and every one of the 255 other values, and for every
 * truncation, tinyml_module_load() must either reject the bytes
 * (INVALID_MODULE or UNSUPPORTED, with a message) or give a module that runs:
 * a context is created, I/O sized from the *loaded* module's own description
 * is bound, and invoke is called.  Never a crash, never a leak.
 *
 * Usage: test_module_corrupt MODULE.tmlm...
 *
 * The modules are compiled at build time (gen_module.c), so this test needs
 * only the runtime half of the library; meson builds it a second time with
 * that half compiled under ASan/UBSan (option sanitize_tests). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"

/* A corrupted module may claim larger (consistent) tensors or a huge arena:
 * I/O bigger than this is counted but not run, and the library's allocator
 * refuses bigger blocks (so a huge arena is an OUT_OF_MEMORY status instead
 * of gigabytes of memory touched by malloc debugging or the sanitizers). */
#define MAX_BYTES (64u << 20)

typedef struct tally {
  size_t loaded, rejected, ran, too_big, no_memory;
  size_t by_code[TINYML_STATUS_INTERNAL + 1];
  char current[64]; /* the case being tried, for failure messages */
} tally_t;

static const char *g_path;

/* Creates a context, binds I/O sized from `m` and invokes it. */
static void run_loaded(const tinyml_module_t *m, const tinyml_allocator_t *a, tally_t *t) {
  api_io_t io;
  if (!api_io_alloc(m, MAX_BYTES, 1, &io)) {
    t->too_big++;
    return;
  }
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.allocator = *a;
  tinyml_status_t st = api_run(m, &o, &io, 1);
  /* A corrupted arena_size may ask for more memory than there is. */
  if (tinyml_status_code(st) == TINYML_STATUS_OUT_OF_MEMORY) {
    t->no_memory++;
  } else {
    api_assert_ok(st, t->current);
    t->ran++;
  }
  tinyml_status_free(st);
  api_io_free(&io);
}

/* Rejections are INVALID_MODULE or UNSUPPORTED (a corrupted target), with
 * a message; frees the status. */
static void check_rejected(tinyml_status_t st, size_t size, tally_t *t) {
  tinyml_status_code_t code = tinyml_status_code(st);
  t->by_code[code <= TINYML_STATUS_INTERNAL ? code : TINYML_STATUS_INTERNAL]++;
  const char *msg = tinyml_status_message(st);
  if (code != TINYML_STATUS_INVALID_MODULE && code != TINYML_STATUS_UNSUPPORTED)
    fail_msg("%s (%zu bytes): unexpected %s: %s", t->current, size,
             tinyml_status_code_name(code), msg);
  /* Every message names the layer, then the problem. */
  if (strncmp(msg, "module: ", 8) != 0 || strlen(msg) < 16)
    fail_msg("%s: badly formed message: %s", t->current, msg);
  tinyml_status_free(st);
  t->rejected++;
}

/* Loads `data` (16-aligned, exactly `size` bytes of heap so that the
 * sanitizers see any overread) and runs it if it loads; nothing may leak. */
static void try_load(const uint8_t *data, size_t size, tally_t *t) {
  api_counting_alloc_t c;
  api_counting_alloc_init(&c, 0, 0);
  c.max_size = MAX_BYTES;
  tinyml_module_options_t o;
  tinyml_module_options_init(&o);
  o.allocator = c.allocator;
  tinyml_module_t *m = NULL;
  tinyml_status_t st = tinyml_module_load(data, size, &o, &m);
  if (!st) {
    t->loaded++;
    run_loaded(m, &c.allocator, t);
    tinyml_module_release(m);
  } else {
    check_rejected(st, size, t);
    assert_null(m);
  }
  if (c.allocs != c.frees)
    fail_msg("%s: %zu allocations but %zu frees", t->current, c.allocs, c.frees);
}

static uint8_t *exact_copy(const uint8_t *data, size_t size) {
  void *p = NULL;
  assert_int_equal(posix_memalign(&p, 16, size ? size : 1), 0);
  if (size) memcpy(p, data, size);
  return p;
}

static uint8_t *read_module(size_t *size) {
  char *bytes = api_read_file(g_path, size);
  if (!bytes) fail_msg("cannot read %s", g_path);
  uint8_t *copy = exact_copy((const uint8_t *)bytes, *size);
  free(bytes);
  return copy;
}

static void report(const char *what, size_t size, size_t cases, const tally_t *t,
                   double seconds) {
  print_message("%s: %zu-byte module, %zu %s: %zu loaded (%zu ran, %zu out of memory, "
                "%zu too big to run), %zu rejected (%zu INVALID_MODULE, %zu UNSUPPORTED)"
                " in %.2f s\n",
                g_path, size, cases, what, t->loaded, t->ran, t->no_memory, t->too_big,
                t->rejected, t->by_code[TINYML_STATUS_INVALID_MODULE],
                t->by_code[TINYML_STATUS_UNSUPPORTED], seconds);
}

static void test_pristine_module_runs(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = read_module(&size);
  tally_t t;
  memset(&t, 0, sizeof t);
  snprintf(t.current, sizeof t.current, "the pristine module");
  try_load(data, size, &t);
  assert_int_equal(t.ran, 1);
  free(data);
}

static void test_every_byte_every_value(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = read_module(&size);
  tally_t t;
  memset(&t, 0, sizeof t);
  double start = api_now();
  for (size_t pos = 0; pos < size; ++pos) {
    uint8_t original = data[pos];
    for (unsigned v = 0; v < 256; ++v) {
      if (v == original) continue;
      data[pos] = (uint8_t)v;
      snprintf(t.current, sizeof t.current, "byte %zu = 0x%02x (was 0x%02x)", pos, v,
               original);
      try_load(data, size, &t);
    }
    data[pos] = original;
  }
  report("single-byte corruptions", size, size * 255, &t, api_now() - start);
  /* Checksums cover the code and the constants: most changes are caught. */
  assert_true(t.rejected > 4 * t.loaded);
  free(data);
}

static void test_every_truncation(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = read_module(&size);
  tally_t t;
  memset(&t, 0, sizeof t);
  double start = api_now();
  for (size_t len = 0; len < size; ++len) {
    uint8_t *cut = exact_copy(data, len);
    snprintf(t.current, sizeof t.current, "truncated to %zu bytes", len);
    try_load(cut, len, &t);
    free(cut);
  }
  report("truncations", size, size, &t, api_now() - start);
  assert_true(t.rejected > 0);
  free(data);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODULE.tmlm...\n", argv[0]);
    return 2;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pristine_module_runs),
      cmocka_unit_test(test_every_byte_every_value),
      cmocka_unit_test(test_every_truncation),
  };
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    g_path = argv[i];
    failed += cmocka_run_group_tests_name(g_path, tests, NULL, NULL);
  }
  return failed;
}
