/* Shared by the module tests: sample modules, a field-by-field comparison,
 * a counting allocator and a little FlatBuffer navigation for patching. */
#ifndef TINYML_TESTS_MODULE_TEST_UTIL_H
#define TINYML_TESTS_MODULE_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/module/module.h"

/* A module plus the storage it points at, so tests can mutate a copy. */
typedef struct sample {
  tmod_module_t module;
  tmod_tensor_t inputs[2], outputs[2];
  float scales0[3], scales1[1];
  int64_t zero_points0[3], zero_points1[1];
  tmod_binding_t bindings0[3], bindings1[3], bindings2[4];
  tmod_step_t steps[3];
  tmod_executable_t executables[2];
  uint8_t constants[1000];
  uint8_t image0[300], image1[77];
} sample_t;

/* 2 quantised inputs, 2 outputs, 1000 bytes of constants, 3 steps (one a
 * COPY) and 2 executables. */
void sample_init(sample_t *s);
/* Adds 256 bytes of state (the initial value: a copy of constants [512,
 * 768)): step 2's arena binding moves into it. */
void with_state(sample_t *s);
/* The same shape cut down (1 input, 1 output, 2 steps, 1 executable, small
 * blobs) so that every byte of it can be corrupted in turn. */
void small_init(sample_t *s);

/* cmocka-asserts that `actual` (read back) equals `expected` (written);
 * checksums are compared against a CRC of the expected data. */
void assert_modules_equal(const tmod_module_t *expected,
                          const tmod_module_t *actual);
/* Reads every byte a read module points at (for the sanitizers) and
 * returns a value that depends on all of them. */
uint64_t touch_module(const tmod_module_t *m);

/* Writes `m` with the system allocator; asserts success.  Free with
 * free_module_bytes(). */
uint8_t *write_module(const tmod_module_t *m, size_t *size);
void free_module_bytes(uint8_t *data);

/* Counts allocations; fails call number `fail_at` (1-based, 0 = never) and,
 * when `fail_after` is set, every call after it too. */
typedef struct counting_alloc {
  tinyml_allocator_t allocator;
  size_t calls, live;
  size_t fail_at;
  int fail_after;
} counting_alloc_t;
void counting_alloc_init(counting_alloc_t *c);

/* FlatBuffer navigation on trusted (just written) bytes. */
uint32_t fb_u32(const uint8_t *b, size_t pos);
void fb_put_u32(uint8_t *b, size_t pos, uint32_t v);
size_t fb_root(const uint8_t *b);
/* Position of field `id` of the table at `table`; 0 when absent. */
size_t fb_field(const uint8_t *b, size_t table, unsigned id);
/* Follows the uoffset stored at `at`. */
size_t fb_deref(const uint8_t *b, size_t at);
/* Table number `i` of the vector of tables starting at `vector`. */
size_t fb_element(const uint8_t *b, size_t vector, unsigned i);

#endif
