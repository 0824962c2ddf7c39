/* Writes modules and reads them back; checks that the reader rejects each
 * broken rule with a message naming it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "module_test_util.h"

static void test_crc32(void **state) {
  (void)state;
  assert_int_equal(0, tmod_crc32("", 0));
  assert_int_equal(0xCBF43926u, tmod_crc32("123456789", 9));
  assert_int_equal(0x414FA339u,
                   tmod_crc32("The quick brown fox jumps over the lazy dog", 43));
}

static size_t offset_in(const uint8_t *base, const void *p) {
  return (size_t)((const uint8_t *)p - base);
}

static void roundtrip(const sample_t *s) {
  size_t size;
  uint8_t *data = write_module(&s->module, &size);
  assert_int_equal(0, (uintptr_t)data % TMOD_CONSTANT_ALIGNMENT);
  assert_memory_equal(data + 4, "TMLM", 4);
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, NULL, &m);
  if (status) fail_msg("%s", tinyml_status_message(status));
  assert_modules_equal(&s->module, &m);
  /* Blobs and strings are used in place, 64-aligned. */
  assert_int_equal(0, offset_in(data, m.constants) % 64);
  assert_true(offset_in(data, m.constants) < size);
  for (uint32_t i = 0; i < m.executable_count; i++)
    assert_int_equal(0, offset_in(data, m.executables[i].image) % 64);
  assert_true(offset_in(data, m.target) < size);
  assert_true(offset_in(data, m.inputs[0].scales) < size);

  /* Writing what was read gives the same bytes. */
  size_t size2;
  uint8_t *data2 = write_module(&m, &size2);
  assert_int_equal(size, size2);
  assert_memory_equal(data, data2, size);
  free_module_bytes(data2);
  tmod_read_free(&m, NULL);
  assert_null(m.inputs);
  free_module_bytes(data);
}

static void test_roundtrip(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  roundtrip(&s);
}

/* A stateful module (state, state_checksum) reads back the same. */
static void test_state_roundtrip(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  with_state(&s);
  roundtrip(&s);
}

/* Quantisation arrays at a misaligned address are copied, not pointed to. */
static void test_misaligned_address(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  uint8_t *copy = malloc(size + 8);
  assert_non_null(copy);
  for (size_t shift = 1; shift < 8; shift++) {
    memcpy(copy + shift, data, size);
    tmod_module_t m;
    tinyml_status_t status = tmod_read(copy + shift, size, NULL, &m);
    if (status) fail_msg("shift %zu: %s", shift, tinyml_status_message(status));
    assert_modules_equal(&s.module, &m);
    assert_int_equal(0, (uintptr_t)m.inputs[0].scales % _Alignof(float));
    assert_int_equal(0, (uintptr_t)m.inputs[0].zero_points % _Alignof(int64_t));
    tmod_read_free(&m, NULL);
  }
  free(copy);
  free_module_bytes(data);
}

static void test_minimal_module(void **state) {
  (void)state;
  tmod_module_t empty = {0};
  empty.arena_alignment = 1;
  size_t size;
  uint8_t *data = write_module(&empty, &size);
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, NULL, &m);
  if (status) fail_msg("%s", tinyml_status_message(status));
  assert_modules_equal(&empty, &m);
  assert_null(m.inputs);
  assert_null(m.steps);
  assert_null(m.executables);
  tmod_read_free(&m, NULL);
  free_module_bytes(data);
}

static void test_free_is_safe(void **state) {
  (void)state;
  tmod_module_t m;
  memset(&m, 0, sizeof(m));
  tmod_read_free(&m, NULL);
  tmod_read_free(NULL, NULL);
}

static void expect_status(tinyml_status_t status, tinyml_status_code_t code,
                          const char *needle) {
  if (!status) fail_msg("expected an error containing \"%s\"", needle);
  const char *message = tinyml_status_message(status);
  if (tinyml_status_code(status) != code || !strstr(message, needle))
    fail_msg("expected %s containing \"%s\", got %s: %s",
             tinyml_status_code_name(code), needle,
             tinyml_status_code_name(tinyml_status_code(status)), message);
  tinyml_status_free(status);
}

static void test_bad_arguments(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  uint8_t *data;
  size_t size;
  expect_status(tmod_write(NULL, NULL, &data, &size),
                TINYML_STATUS_INVALID_ARGUMENT, "NULL");
  s.inputs[1].rank = 9;
  expect_status(tmod_write(&s.module, NULL, &data, &size),
                TINYML_STATUS_INVALID_ARGUMENT, "input 1: rank");
  sample_init(&s);
  s.inputs[0].scales = NULL;
  expect_status(tmod_write(&s.module, NULL, &data, &size),
                TINYML_STATUS_INVALID_ARGUMENT, "quantisation");
  sample_init(&s);
  s.module.format_version = 7;
  expect_status(tmod_write(&s.module, NULL, &data, &size),
                TINYML_STATUS_INVALID_ARGUMENT, "format version");
  tmod_module_t m;
  expect_status(tmod_read(NULL, 0, NULL, &m), TINYML_STATUS_INVALID_MODULE, "too few");
  expect_status(tmod_read((const uint8_t *)"TMLM", 4, NULL, &m),
                TINYML_STATUS_INVALID_MODULE, "too few");
}

/* Arena regions: region 0 is arena_size, the others round-trip, and a
 * binding in region 2 is checked against region 2's size. */
static void test_regions(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  s.module.region_count = 3;
  s.module.region_sizes[1] = 128;
  s.module.region_sizes[2] = 40;
  s.bindings1[0].index = 2; /* 40 bytes at 0: fits region 2 exactly */
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, NULL, &m);
  if (status) fail_msg("%s", tinyml_status_message(status));
  assert_int_equal(m.region_count, 3);
  assert_int_equal(m.region_sizes[0], 6000);
  assert_int_equal(m.region_sizes[1], 128);
  assert_int_equal(m.region_sizes[2], 40);
  assert_int_equal(m.steps[1].bindings[0].index, 2);
  tmod_read_free(&m, NULL);
  free_module_bytes(data);
  s.module.region_count = TMOD_MAX_ARENA_REGIONS + 1;
  uint8_t *none = NULL;
  expect_status(tmod_write(&s.module, NULL, &none, &size), TINYML_STATUS_INVALID_ARGUMENT,
                "arena region count");
}

/* ---- semantic rules: mutate the sample, write it, expect the reader's
 * message ---------------------------------------------------------------- */

typedef void (*mutate_fn)(sample_t *s);
typedef struct bad_case {
  const char *name;
  mutate_fn mutate;
  const char *message;
} bad_case_t;

static void arena_range(sample_t *s) { s->bindings2[2].size = 4096; }
static void input_range(sample_t *s) { s->bindings0[0].size = 49; }
static void output_index(sample_t *s) { s->bindings1[1].index = 2; }
static void input_index(sample_t *s) { s->bindings2[0].index = 5; }
static void constant_range(sample_t *s) { s->bindings2[1].size = 745; }
static void range_overflow(sample_t *s) {
  s->bindings0[2].offset = UINT64_MAX;
  s->bindings0[2].size = 2;
}
static void executable_index(sample_t *s) { s->steps[2].executable = 2; }
static void step_kind(sample_t *s) { s->steps[0].kind = 5; }
static void buffer_kind(sample_t *s) { s->bindings0[1].kind = 5; }
static void state_range(sample_t *s) {
  with_state(s);
  s->bindings2[2].offset = 200;
}
static void state_without_size(sample_t *s) {
  with_state(s);
  s->module.state_size = 0;
}
static void copy_three(sample_t *s) {
  s->bindings1[2] = s->bindings1[1];
  s->steps[1].binding_count = 3;
}
static void copy_one(sample_t *s) { s->steps[1].binding_count = 1; }
static void copy_sizes(sample_t *s) { s->bindings1[1].size = 32; }
static void copy_to_input(sample_t *s) {
  s->bindings1[0].size = 48;
  s->bindings1[1] = (tmod_binding_t){TMOD_BUFFER_INPUT, 0, 0, 48};
}
static void copy_to_constants(sample_t *s) {
  s->bindings1[1] = (tmod_binding_t){TMOD_BUFFER_CONSTANT, 0, 0, 40};
}
static void byte_size(sample_t *s) { s->inputs[0].byte_size = 47; }
static void negative_dim(sample_t *s) { s->outputs[1].dims[1] = -3; }
static void dtype_zero(sample_t *s) { s->outputs[0].dtype = 0; }
static void dtype_big(sample_t *s) { s->outputs[0].dtype = TINYML_DTYPE_UINT64 + 1; }
static void size_overflow(sample_t *s) {
  s->outputs[0].dims[0] = INT64_C(1) << 62;
  s->outputs[0].dims[1] = 8;
}
static void quant_axis(sample_t *s) { s->inputs[0].quant_axis = 4; }
static void quant_axis_negative(sample_t *s) { s->inputs[0].quant_axis = -1; }
static void quant_count(sample_t *s) { s->inputs[0].quant_axis = 2; }
static void alignment_zero(sample_t *s) { s->module.arena_alignment = 0; }
static void alignment_odd(sample_t *s) { s->module.arena_alignment = 48; }
static void alignment_big(sample_t *s) { s->module.arena_alignment = 8192; }

static void arena_region(sample_t *s) { s->bindings0[2].index = 1; }
static void region_range(sample_t *s) {
  s->module.region_count = 2;
  s->module.region_sizes[1] = 100;
  s->bindings0[2].index = 1;
}

static const bad_case_t bad_cases[] = {
    {"arena region", arena_region, "step 0 binding 2: arena region 1 is out of range (1 regions)"},
    {"region range", region_range,
     "step 0 binding 2: arena range [0, 4096) exceeds arena region size 100"},
    {"arena range", arena_range,
     "module: step 2 binding 2: arena range [4096, 8192) exceeds arena size 6000"},
    {"input range", input_range,
     "step 0 binding 0: input 0 range [0, 49) exceeds byte size 48"},
    {"output index", output_index, "output index 2 is out of range (2 outputs)"},
    {"input index", input_index, "input index 5 is out of range (2 inputs)"},
    {"constant range", constant_range,
     "constant range [256, 1001) exceeds constants size 1000"},
    {"range overflow", range_overflow, "step 0 binding 2: arena range"},
    {"executable index", executable_index,
     "step 2: executable 2 is out of range (2 executables)"},
    {"step kind", step_kind, "step 0: step kind 5 is invalid"},
    {"buffer kind", buffer_kind, "step 0 binding 1: buffer kind 5 is invalid"},
    {"state range", state_range,
     "step 2 binding 2: state range [200, 328) exceeds state size 256"},
    {"state without size", state_without_size,
     "step 2 binding 2: state range [128, 256) exceeds state size 0"},
    {"copy of 3", copy_three, "step 1: a copy needs 2 bindings, not 3"},
    {"copy of 1", copy_one, "step 1: a copy needs 2 bindings, not 1"},
    {"copy sizes", copy_sizes,
     "step 1: copy source size 40 differs from destination size 32"},
    {"copy to input", copy_to_input, "copy destination is an input"},
    {"copy to constants", copy_to_constants, "copy destination is the constants"},
    {"byte size", byte_size,
     "input 0: byte size 47 does not match its dims and dtype (48)"},
    {"negative dim", negative_dim, "output 1: dimension 1 is negative (-3)"},
    {"dtype 0", dtype_zero, "output 0: dtype 0 is invalid"},
    {"dtype 14", dtype_big, "output 0: dtype 14 is invalid"},
    {"size overflow", size_overflow, "output 0: the byte size of its dims overflows"},
    {"quant axis", quant_axis, "input 0: quantisation axis 4 is out of range for rank 4"},
    {"quant axis -1", quant_axis_negative, "quantisation axis -1 is out of range"},
    {"quant count", quant_count,
     "input 0: 3 quantisation parameters but dimension 2 has size 4"},
    {"alignment 0", alignment_zero, "arena alignment 0 is not a power of two"},
    {"alignment 48", alignment_odd, "arena alignment 48"},
    {"alignment 8192", alignment_big, "arena alignment 8192"},
};

static void test_bad_modules(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
    sample_t s;
    sample_init(&s);
    bad_cases[i].mutate(&s);
    size_t size;
    uint8_t *data = write_module(&s.module, &size);
    counting_alloc_t c;
    counting_alloc_init(&c);
    tmod_module_t m;
    memset(&m, 0x5a, sizeof(m));
    print_message("case %s\n", bad_cases[i].name);
    expect_status(tmod_read(data, size, &c.allocator, &m),
                  TINYML_STATUS_INVALID_MODULE, bad_cases[i].message);
    assert_int_equal(0, c.live); /* nothing leaked on the failure path */
    assert_int_equal(0x5a5a5a5a, m.format_version); /* out untouched */
    free_module_bytes(data);
  }
}

/* ---- byte-level damage: things the writer cannot express ------------- */

static void expect_read_error(const uint8_t *data, size_t size, const char *needle) {
  counting_alloc_t c;
  counting_alloc_init(&c);
  tmod_module_t m;
  expect_status(tmod_read(data, size, &c.allocator, &m),
                TINYML_STATUS_INVALID_MODULE, needle);
  assert_int_equal(0, c.live);
}

/* Moves the byte vector referenced at `field` 4 bytes later, so its data
 * is 4 bytes off the 64-byte grid. */
static void shift_blob(uint8_t *data, size_t field) {
  size_t vector = fb_deref(data, field);
  uint32_t count = fb_u32(data, vector);
  fb_put_u32(data, vector + 4, count - 4);
  fb_put_u32(data, field, fb_u32(data, field) + 4);
}

static void test_damaged_bytes(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  size_t size;
  uint8_t *data = write_module(&s.module, &size);
  uint8_t *copy = malloc(size);
  assert_non_null(copy);
  size_t root = fb_root(data);
  size_t exes = fb_deref(data, fb_field(data, root, 11));
  size_t exe1 = fb_element(data, exes, 1);
  size_t input0 = fb_element(data, fb_deref(data, fb_field(data, root, 6)), 0);

  memcpy(copy, data, size);
  copy[5] = 'X';
  expect_read_error(copy, size, "module: wrong file identifier");

  memcpy(copy, data, size);
  fb_put_u32(copy, fb_field(copy, root, 0), 3);
  expect_read_error(copy, size, "module: format version 3 is not supported (expected 1 or 2)");

  memcpy(copy, data, size);
  copy[fb_deref(copy, fb_field(copy, root, 8)) + 4 + 500] ^= 1;
  expect_read_error(copy, size, "module: constants: checksum");

  memcpy(copy, data, size);
  copy[fb_deref(copy, fb_field(copy, exe1, 2)) + 4 + 10] ^= 0x80;
  expect_read_error(copy, size, "module: executable 1 image: checksum");

  memcpy(copy, data, size);
  shift_blob(copy, fb_field(copy, root, 8));
  expect_read_error(copy, size, "constants: data at offset");
  expect_read_error(copy, size, "is not 64-byte aligned");

  memcpy(copy, data, size);
  shift_blob(copy, fb_field(copy, exe1, 2));
  expect_read_error(copy, size, "executable 1 image: data at offset");

  free(copy);
  free_module_bytes(data);
  with_state(&s);
  data = write_module(&s.module, &size);
  copy = malloc(size);
  assert_non_null(copy);
  root = fb_root(data);
  input0 = fb_element(data, fb_deref(data, fb_field(data, root, 6)), 0);

  memcpy(copy, data, size);
  copy[fb_deref(copy, fb_field(copy, root, 13)) + 4 + 200] ^= 4;
  expect_read_error(copy, size, "module: state: checksum");

  memcpy(copy, data, size);
  shift_blob(copy, fb_field(copy, root, 13));
  expect_read_error(copy, size, "state: data at offset");

  /* Rank 9: the dims vector claims one more element than the writer put. */
  memcpy(copy, data, size);
  size_t dims = fb_deref(copy, fb_field(copy, input0, 2));
  fb_put_u32(copy, dims, 9);
  expect_read_error(copy, size, "input 0: rank 9 exceeds the maximum 8");

  /* A string whose NUL is overwritten. */
  memcpy(copy, data, size);
  size_t target = fb_deref(copy, fb_field(copy, root, 1));
  copy[target + 4 + fb_u32(copy, target)] = 'x';
  expect_read_error(copy, size, "target: string in field 1 is not NUL-terminated");

  /* A vector whose count runs past the end. */
  memcpy(copy, data, size);
  fb_put_u32(copy, fb_deref(copy, fb_field(copy, root, 10)), 0x10000000u);
  expect_read_error(copy, size, "overruns the module");

  free(copy);
  free_module_bytes(data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_crc32),
      cmocka_unit_test(test_roundtrip),
      cmocka_unit_test(test_state_roundtrip),
      cmocka_unit_test(test_regions),
      cmocka_unit_test(test_misaligned_address),
      cmocka_unit_test(test_minimal_module),
      cmocka_unit_test(test_free_is_safe),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_bad_modules),
      cmocka_unit_test(test_damaged_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
