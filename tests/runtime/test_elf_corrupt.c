/* Robustness of the ELF loader against damaged images (argv[1]: the good
 * fixture).  Each damaged image must either be rejected with INVALID_MODULE
 * or load (and then unload) cleanly; a crash, a hang or a sanitizer report
 * fails the test.  Also built with -fsanitize=address,undefined when the
 * meson option sanitize_tests is on.  Every image handed to the loader sits
 * in a buffer of exactly its size, so ASan catches any read past the end.
 *
 * Single-byte corruption covers every byte position with all 255 other
 * values, except the file bytes of executable PT_LOAD segments: changing
 * code changes what runs when the loader calls the query entry point, and
 * that may legitimately crash.  The loader does not claim to catch that - the
 * module layer's CRC over the image does.  Everything else (ELF header,
 * program headers, .dynsym/.hash/.dynstr, relocation tables, .rodata, the
 * data segments with .dynamic/.got and the pointer tables, section headers)
 * is corrupted.
 *
 * A third test applies random 2..7-byte corruptions (fixed seed, same
 * areas).  Unlike single bytes, a lucky combination could in principle make
 * a structurally valid image whose query runs the wrong bytes (say, e_entry
 * and the tinyml_query symbol both moved to the same other function); that
 * is the CRC's job, and with this fixture and seed no such case occurs. */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "../../lib/runtime/elf/elf_loader.h"
#include "fixture_file.h"

static const char *fixture_path;

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Loads `data`; returns 1 if it loaded, 0 if rejected.  Any other outcome
 * fails the test. */
static int try_load(const uint8_t *data, size_t size) {
  tinyml__elf_t *elf = NULL;
  const tinyml_exe_library_t *lib = NULL;
  tinyml_status_t s = tinyml__elf_load(data, size, NULL, &elf, &lib);
  if (!s) {
    assert_non_null(elf);
    assert_non_null(lib);
    tinyml__elf_unload(elf, NULL);
    return 1;
  }
  if (tinyml_status_code(s) != TINYML_STATUS_INVALID_MODULE)
    fail_msg("unexpected status %s: %s",
             tinyml_status_code_name(tinyml_status_code(s)),
             tinyml_status_message(s));
  assert_null(elf);
  tinyml_status_free(s);
  return 0;
}

/* Marks the file bytes of executable PT_LOAD segments in `code`. */
static void mark_code(const uint8_t *data, size_t size, uint8_t *code) {
  Elf64_Ehdr h;
  memcpy(&h, data, sizeof h);
  for (size_t i = 0; i < h.e_phnum; i++) {
    Elf64_Phdr p;
    memcpy(&p, data + h.e_phoff + i * sizeof p, sizeof p);
    if (p.p_type != PT_LOAD || !(p.p_flags & PF_X)) continue;
    assert_true(p.p_offset + p.p_filesz <= size);
    memset(code + p.p_offset, 1, (size_t)p.p_filesz);
  }
}

static void test_truncation(void **state) {
  (void)state;
  size_t size;
  uint8_t *full = fixture_read(fixture_path, &size);
  assert_int_equal(try_load(full, size), 1);
  size_t loaded = 0;
  double t0 = now_seconds();
  for (size_t n = 0; n < size; n++) {
    uint8_t *cut = malloc(n ? n : 1);
    assert_non_null(cut);
    memcpy(cut, full, n);
    loaded += (size_t)try_load(cut, n);
    free(cut);
  }
  print_message("truncation: %zu lengths, %zu loaded (section headers cut), "
                "%.2f s\n", size, loaded, now_seconds() - t0);
  free(full);
}

static void test_every_byte(void **state) {
  (void)state;
  size_t size;
  uint8_t *data = fixture_read(fixture_path, &size);
  uint8_t *code = calloc(size, 1);
  assert_non_null(code);
  mark_code(data, size, code);
  size_t positions = 0, loads = 0, rejects = 0;
  double t0 = now_seconds();
  for (size_t pos = 0; pos < size; pos++) {
    if (code[pos]) continue;
    positions++;
    uint8_t original = data[pos];
    for (int v = 0; v < 256; v++) {
      if (v == original) continue;
      data[pos] = (uint8_t)v;
      if (try_load(data, size)) loads++;
      else rejects++;
    }
    data[pos] = original;
  }
  print_message("every byte: %zu of %zu positions x 255 values: %zu loaded, "
                "%zu rejected, %.2f s\n", positions, size, loads, rejects,
                now_seconds() - t0);
  assert_int_equal(try_load(data, size), 1);
  free(code);
  free(data);
}

/* xorshift64: the same sequence on every libc. */
static uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

static void corrupt_some(uint8_t *data, size_t size, const uint8_t *code,
                         uint64_t *rng) {
  int count = 2 + (int)(next_random(rng) % 6);
  for (int i = 0; i < count; i++) {
    size_t pos;
    do pos = (size_t)(next_random(rng) % size); while (code[pos]);
    uint64_t r = next_random(rng);
    if (r % 3 == 0) data[pos] = (uint8_t)(r >> 8);
    else if (r % 3 == 1) data[pos] ^= (uint8_t)(1u << ((r >> 8) % 8));
    else data[pos] = (r >> 8) & 1 ? 0xff : 0x00;
  }
}

static void test_random_multi_byte(void **state) {
  (void)state;
  enum { ITERATIONS = 100000 };
  size_t size;
  uint8_t *pristine = fixture_read(fixture_path, &size);
  uint8_t *data = malloc(size);
  uint8_t *code = calloc(size, 1);
  assert_non_null(data);
  assert_non_null(code);
  mark_code(pristine, size, code);
  uint64_t rng = 0x9e3779b97f4a7c15u;
  size_t loads = 0;
  double t0 = now_seconds();
  for (int i = 0; i < ITERATIONS; i++) {
    memcpy(data, pristine, size);
    corrupt_some(data, size, code, &rng);
    loads += (size_t)try_load(data, size);
  }
  print_message("random multi-byte: %d images, %zu loaded, %.2f s\n",
                ITERATIONS, loads, now_seconds() - t0);
  free(code);
  free(data);
  free(pristine);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s fixture_exe.so\n", argv[0]);
    return 2;
  }
  fixture_path = argv[1];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_truncation),
      cmocka_unit_test(test_every_byte),
      cmocka_unit_test(test_random_multi_byte),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
