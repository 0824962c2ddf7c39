/* tfl_read on real models, the option accessors on hand-built tables, and
 * the name tables.  (check_flatc.py compares what is read with flatc.)
 *
 * Usage: test_tflite_reader MODELS_DIR
 * Exit 77 (skip) when MODELS_DIR is missing, unless CI=true. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tflite_test_util.h"

static const char *models_dir;
static int models_missing;

/* ---- real models ------------------------------------------------------- */

static void test_reads_every_model(void **state) {
  (void)state;
  if (!tt_require_dir(models_dir)) {
    models_missing = 1;
    skip();
  }
  char **paths;
  size_t count = tt_list_models(models_dir, &paths);
  assert_true(count > 0);
  for (size_t i = 0; i < count; i++) {
    size_t size;
    uint8_t *bytes = tt_read_file(paths[i], &size);
    assert_non_null(bytes);
    tt_alloc_t c;
    tt_alloc_init(&c);
    tfl_model_t *m = NULL;
    tinyml_status_t status = tfl_read(bytes, size, &c.allocator, &m);
    if (status) fail_msg("%s: %s", paths[i], tinyml_status_message(status));
    tt_check_model(m, bytes, size);
    assert_true(m->tensor_count > 0 && m->operator_count > 0);
    assert_true(m->input_count > 0 && m->output_count > 0);
    print_message("%s: %u tensors, %u operators, %zu allocations\n", paths[i],
                  m->tensor_count, m->operator_count, c.calls);
    tfl_model_free(m, &c.allocator);
    assert_int_equal(0, c.live);
    free(bytes);
  }
  tt_free_paths(paths, count);
}

/* A few facts about the smallest models, beyond the flatc comparison. */
static tfl_model_t *read_model(const char *name, uint8_t **bytes) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/tflm/%s", models_dir, name);
  size_t size;
  *bytes = tt_read_file(path, &size);
  if (!*bytes) fail_msg("cannot read %s", path);
  tfl_model_t *m = NULL;
  tinyml_status_t status = tfl_read(*bytes, size, NULL, &m);
  if (status) fail_msg("%s: %s", path, tinyml_status_message(status));
  return m;
}

static void test_simple_add(void **state) {
  (void)state;
  if (!tt_require_dir(models_dir)) skip();
  uint8_t *bytes;
  tfl_model_t *m = read_model("simple_add.tflite", &bytes);
  assert_int_equal(3, m->version);
  assert_int_equal(1, m->operator_count);
  const tfl_operator_t *op = &m->operators[0];
  assert_string_equal("ADD", tfl_builtin_name(op->builtin_code));
  assert_null(op->custom_code);
  assert_int_equal(2, op->input_count);
  assert_int_equal(1, op->output_count);
  assert_int_equal(2, m->input_count);
  assert_int_equal(1, m->output_count);
  assert_int_equal(op->outputs[0], m->outputs[0]);
  tfl_model_free(m, NULL);
  free(bytes);
}

static void test_hello_world_int8(void **state) {
  (void)state;
  if (!tt_require_dir(models_dir)) skip();
  uint8_t *bytes;
  tfl_model_t *m = read_model("hello_world_int8.tflite", &bytes);
  assert_int_equal(3, m->operator_count);
  for (uint32_t i = 0; i < m->operator_count; i++) {
    const tfl_operator_t *op = &m->operators[i];
    assert_string_equal("FULLY_CONNECTED", tfl_builtin_name(op->builtin_code));
    assert_int_equal(3, op->input_count); /* input, weights, bias */
    const tfl_tensor_t *w = &m->tensors[op->inputs[1]];
    assert_int_equal(TFL_INT8, w->type);
    assert_int_equal(2, w->rank);
    assert_int_equal((size_t)w->shape[0] * (size_t)w->shape[1], w->data_size);
    assert_int_equal(1, w->quant.scale_count);
    assert_true(w->quant.scale[0] > 0.0f);
    assert_int_equal(TFL_INT32, m->tensors[op->inputs[2]].type);
    assert_int_equal(8 /* FullyConnectedOptions */, op->options_type);
    assert_non_null(op->options.buf);
  }
  /* The input is [1, 1] with a dynamic batch in shape_signature. */
  const tfl_tensor_t *in = &m->tensors[m->inputs[0]];
  assert_int_equal(TFL_INT8, in->type);
  assert_true(in->has_dynamic_dims);
  assert_null(in->data);
  tfl_model_free(m, NULL);
  free(bytes);
}

/* ---- arguments --------------------------------------------------------- */

static void test_arguments(void **state) {
  (void)state;
  static const uint8_t bytes[8] = {0};
  tfl_model_t *m = (tfl_model_t *)(uintptr_t)1;
  tinyml_status_t status = tfl_read(NULL, 8, NULL, &m);
  assert_int_equal(TINYML_STATUS_INVALID_ARGUMENT, tinyml_status_code(status));
  assert_null(m);
  tinyml_status_free(status);
  status = tfl_read(bytes, sizeof(bytes), NULL, NULL);
  assert_int_equal(TINYML_STATUS_INVALID_ARGUMENT, tinyml_status_code(status));
  tinyml_status_free(status);
  status = tfl_read(NULL, 0, NULL, &m); /* no bytes: a model too short */
  assert_int_equal(TINYML_STATUS_INVALID_MODEL, tinyml_status_code(status));
  tinyml_status_free(status);
  tfl_model_free(NULL, NULL);
}

/* ---- option accessors on a hand-built table ---------------------------- */

/* A vtable at 0 (4 fields), the table at 16 and an int vector at 40:
 *   field 0: int32 -5      field 1: float 1.5
 *   field 2: int8 -3       field 3: uoffset to [7, -1, 9] */
enum { TABLE_BYTES = 56 };

static void put16(uint8_t *b, size_t at, uint16_t v) {
  b[at] = (uint8_t)v;
  b[at + 1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + i] = (uint8_t)(v >> (8 * i));
}

static void build_table(uint8_t *b, tfl_table_t *t) {
  memset(b, 0, TABLE_BYTES);
  put16(b, 0, 12);  /* vtable size */
  put16(b, 2, 20);  /* table size */
  put16(b, 4, 4);   /* field 0 */
  put16(b, 6, 8);   /* field 1 */
  put16(b, 8, 12);  /* field 2 */
  put16(b, 10, 16); /* field 3 */
  put32(b, 16, 16); /* soffset: the vtable is 16 bytes before */
  put32(b, 20, (uint32_t)-5);
  put32(b, 24, 0x3fc00000u); /* 1.5f */
  b[28] = 0xfd;              /* -3 */
  put32(b, 32, 8);           /* the vector at 40 */
  put32(b, 40, 3);
  put32(b, 44, 7);
  put32(b, 48, (uint32_t)-1);
  put32(b, 52, 9);
  t->buf = b;
  t->size = TABLE_BYTES;
  t->pos = 16;
}

static void test_accessors(void **state) {
  (void)state;
  uint8_t b[TABLE_BYTES];
  tfl_table_t t;
  build_table(b, &t);
  int bad = 0;
  assert_int_equal(-5, tfl_table_i32(&t, 0, 99, &bad));
  assert_true(tfl_table_f32(&t, 1, 0.0f, &bad) == 1.5f);
  assert_int_equal(-3, tfl_table_i8(&t, 2, 0, &bad));
  assert_int_equal(1, tfl_table_bool(&t, 2, 0, &bad));
  int32_t v[4] = {0, 0, 0, 42};
  assert_int_equal(3, tfl_table_i32_vector(&t, 3, v, 4, &bad));
  assert_int_equal(7, v[0]);
  assert_int_equal(-1, v[1]);
  assert_int_equal(9, v[2]);
  assert_int_equal(42, v[3]);
  assert_int_equal(3, tfl_table_i32_vector(&t, 3, v, 1, &bad)); /* copies 1 */
  assert_int_equal(3, tfl_table_i32_vector(&t, 3, NULL, 0, &bad));
  /* Fields beyond the vtable and absent tables give the default. */
  assert_int_equal(77, tfl_table_i32(&t, 4, 77, &bad));
  assert_int_equal(0, tfl_table_i32_vector(&t, 4000, v, 4, &bad));
  assert_int_equal(0, bad);
  tfl_table_t none = {NULL, 0, 0};
  assert_int_equal(5, tfl_table_i8(&none, 0, 5, &bad));
  assert_int_equal(6, tfl_table_i32(NULL, 0, 6, NULL));
  assert_int_equal(0, bad);
  assert_int_equal(8, tfl_table_i32(&t, 3, 11, NULL)); /* the raw uoffset */
  /* A wider read than the field has room for in its table. */
  put16(b, 10, 18); /* field 3 at 18: 4 bytes overrun the 20-byte table */
  assert_int_equal(11, tfl_table_i32(&t, 3, 11, &bad));
  assert_int_equal(1, bad);
  bad = 0;
  assert_int_equal(0, tfl_table_i8(&t, 3, 1, &bad)); /* 1 byte fits: byte 34 */
  assert_int_equal(0, bad);
}

/* After a corruption of the table itself every read falls back to its
 * default and sets *bad; the table is then rebuilt. */
static void expect_all_bad(uint8_t *b, tfl_table_t *t) {
  int bad = 0, count = 0;
  count += tfl_table_i32(t, 0, -42, &bad) == -42;
  count += tfl_table_f32(t, 1, -42.0f, &bad) == -42.0f;
  count += tfl_table_i8(t, 2, -42, &bad) == -42;
  count += tfl_table_bool(t, 2, 7, &bad) == 7;
  count += tfl_table_i32_vector(t, 3, NULL, 0, &bad) == 0;
  assert_int_equal(5, count);
  assert_int_equal(1, bad);
  build_table(b, t);
}

/* After a corruption of field 3's uoffset or vector, only the vector read
 * fails. */
static void expect_vector_bad(uint8_t *b, tfl_table_t *t) {
  int bad = 0;
  int32_t v[4];
  assert_int_equal(0, tfl_table_i32_vector(t, 3, v, 4, &bad));
  assert_int_equal(1, bad);
  build_table(b, t);
}

static void test_accessor_bounds(void **state) {
  (void)state;
  uint8_t b[TABLE_BYTES];
  tfl_table_t t;
  build_table(b, &t);
  t.size = 50; /* the vector runs past the end */
  expect_vector_bad(b, &t);
  t.pos = 18; /* misaligned */
  expect_all_bad(b, &t);
  t.pos = TABLE_BYTES; /* past the end */
  expect_all_bad(b, &t);
  t.pos = UINT32_MAX;
  expect_all_bad(b, &t);
  put32(b, 16, (uint32_t)-100); /* vtable past the end */
  expect_all_bad(b, &t);
  put32(b, 16, 20); /* vtable before the start */
  expect_all_bad(b, &t);
  put32(b, 16, 15); /* vtable misaligned */
  expect_all_bad(b, &t);
  put16(b, 0, 3); /* vtable too small */
  expect_all_bad(b, &t);
  put16(b, 0, 2000); /* vtable past the end */
  expect_all_bad(b, &t);
  put16(b, 2, 200); /* table past the end */
  expect_all_bad(b, &t);
  put16(b, 2, 2); /* table smaller than its soffset */
  expect_all_bad(b, &t);
  int bad = 0;
  put16(b, 4, 2); /* field 0 inside the soffset */
  assert_int_equal(-42, tfl_table_i32(&t, 0, -42, &bad));
  assert_int_equal(1, bad);
  build_table(b, &t);
  put32(b, 32, 0); /* zero uoffset */
  expect_vector_bad(b, &t);
  put32(b, 32, 0x80000000u); /* uoffset beyond 2 GiB */
  expect_vector_bad(b, &t);
  put32(b, 32, 30); /* uoffset past the end */
  expect_vector_bad(b, &t);
  put32(b, 32, 9); /* vector misaligned */
  expect_vector_bad(b, &t);
  put32(b, 40, 0x40000001u); /* length * 4 overflows 32 bits */
  expect_vector_bad(b, &t);
  put32(b, 40, 4); /* one element too many */
  expect_vector_bad(b, &t);
}

/* ---- names ------------------------------------------------------------- */

static void test_names(void **state) {
  (void)state;
  assert_string_equal("ADD", tfl_builtin_name(0));
  assert_string_equal("CONV_2D", tfl_builtin_name(3));
  assert_string_equal("FULLY_CONNECTED", tfl_builtin_name(9));
  assert_string_equal("PLACEHOLDER_FOR_GREATER_OP_CODES", tfl_builtin_name(127));
  assert_string_equal("GELU", tfl_builtin_name(150));
  assert_string_equal("STABLEHLO_CASE", tfl_builtin_name(209));
  assert_string_equal("UNKNOWN", tfl_builtin_name(210));
  assert_string_equal("UNKNOWN", tfl_builtin_name(-1));
  assert_string_equal("UNKNOWN", tfl_builtin_name(INT32_MIN));
  assert_string_equal("FLOAT32", tfl_type_name(TFL_FLOAT32));
  assert_string_equal("INT8", tfl_type_name(TFL_INT8));
  assert_string_equal("BFLOAT16", tfl_type_name(TFL_BFLOAT16));
  assert_string_equal("FLOAT8_E5M2", tfl_type_name(22));
  assert_string_equal("UNKNOWN", tfl_type_name(23));
  assert_string_equal("UNKNOWN", tfl_type_name(-128));
}

int main(int argc, char **argv) {
  models_dir = argc > 1 ? argv[1] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reads_every_model),
      cmocka_unit_test(test_simple_add),
      cmocka_unit_test(test_hello_world_int8),
      cmocka_unit_test(test_arguments),
      cmocka_unit_test(test_accessors),
      cmocka_unit_test(test_accessor_bounds),
      cmocka_unit_test(test_names),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  /* Tell meson the model tests were skipped, not passed. */
  return failed ? failed : models_missing ? 77 : 0;
}
