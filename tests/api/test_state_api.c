/* State kept between invokes (include/tinyml.h, tinyml_module_state_size,
 * tinyml_context_reset_state): a model whose `tinyml.state` arguments and
 * results carry an f32 running sum and an int8 counter that starts at -1
 * (state_fill 255).  Every invoke must see what the one before left; a
 * reset, a new context, or another context (also one sharing the arena)
 * must not; and generated C declares the state the caller keeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"
#include "tinyml.h"

/* y = x + sum, the new sum is y; count = counter + 1, the new counter. */
static const char kStateful[] =
    "func.func @main(%x: tensor<1x5xf32> {tinyml.name = \"x\"},\n"
    "    %sum: tensor<1x5xf32> {tinyml.name = \"sum\", tinyml.state},\n"
    "    %n: tensor<3xi8> {tinyml.name = \"n\", tinyml.state, tinyml.state_fill = 255 : i64})\n"
    "    -> (tensor<1x5xf32> {tinyml.name = \"y\"}, tensor<3xi8> {tinyml.name = \"count\"},\n"
    "        tensor<1x5xf32> {tinyml.name = \"sum\", tinyml.state},\n"
    "        tensor<3xi8> {tinyml.name = \"n\", tinyml.state}) {\n"
    "  %y = tosa.add %x, %sum : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<1x5xf32>\n"
    "  %one = \"tosa.const\"() <{values = dense<1> : tensor<3xi8>}> : () -> tensor<3xi8>\n"
    "  %c = tosa.add %n, %one : (tensor<3xi8>, tensor<3xi8>) -> tensor<3xi8>\n"
    "  return %y, %c, %y, %c : tensor<1x5xf32>, tensor<3xi8>, tensor<1x5xf32>, tensor<3xi8>\n"
    "}\n";

static const float kX[5] = {1, 2, 3, 4, 5};

typedef struct run {
  float x[5], y[5];
  int8_t count[3];
} run_t;

static tinyml_module_t *load_text(const char *text, tinyml_blob_t **blob) {
  api_assert_ok(tinyml_compile(text, strlen(text), NULL, blob), "compile");
  return api_load_blob(*blob);
}

static tinyml_context_t *new_context(const tinyml_module_t *m, void *arena, size_t size,
                                     run_t *r) {
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.arena = arena;
  o.arena_size = size;
  tinyml_context_t *c = NULL;
  api_assert_ok(tinyml_context_create(m, &o, &c), "context");
  memcpy(r->x, kX, sizeof kX);
  api_assert_ok(tinyml_context_set_input(c, 0, r->x, sizeof r->x), "input");
  api_assert_ok(tinyml_context_set_output(c, 0, r->y, sizeof r->y), "output 0");
  api_assert_ok(tinyml_context_set_output(c, 1, r->count, sizeof r->count), "output 1");
  return c;
}

/* Invokes c and checks it is the k-th invoke since the state was fresh. */
static void expect_invoke(tinyml_context_t *c, run_t *r, int k) {
  api_assert_ok(tinyml_context_invoke(c), "invoke");
  for (int i = 0; i < 5; ++i)
    if (r->y[i] != kX[i] * (float)k) fail_msg("invoke %d: y[%d] = %g", k, i, (double)r->y[i]);
  for (int i = 0; i < 3; ++i) assert_int_equal(r->count[i], k - 1);
}

static void test_signature_hides_the_state(void **unused) {
  (void)unused;
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kStateful, &blob);
  assert_int_equal(tinyml_module_input_count(m), 1);
  assert_int_equal(tinyml_module_output_count(m), 2);
  /* 20 + 3 bytes, each of the two copies (read, next) 64-byte aligned. */
  assert_int_equal(tinyml_module_state_size(m), 2 * 128);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_state_persists_and_resets(void **unused) {
  (void)unused;
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kStateful, &blob);
  run_t a, b;
  tinyml_context_t *ca = new_context(m, NULL, 0, &a);
  for (int k = 1; k <= 3; ++k) expect_invoke(ca, &a, k);
  tinyml_context_t *cb = new_context(m, NULL, 0, &b);
  expect_invoke(cb, &b, 1); /* its own state, from the start */
  expect_invoke(ca, &a, 4);
  api_assert_ok(tinyml_context_reset_state(ca), "reset");
  expect_invoke(ca, &a, 1);
  expect_invoke(cb, &b, 2);
  api_assert_ok(tinyml_context_reset_state(ca), "reset");
  api_assert_ok(tinyml_context_reset_state(ca), "reset twice");
  expect_invoke(ca, &a, 1);
  tinyml_context_release(ca);
  tinyml_context_release(cb);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

/* The arena is scratch that contexts may share (tinyml.h); the state is
 * not in it, so poisoning the arena between invokes changes nothing. */
static void test_state_is_not_in_the_arena(void **unused) {
  (void)unused;
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kStateful, &blob);
  static _Alignas(64) uint8_t arena[4096];
  size_t size = tinyml_module_arena_size(m);
  assert_true(size <= sizeof arena);
  run_t a, b;
  tinyml_context_t *ca = new_context(m, size ? arena : NULL, size, &a);
  tinyml_context_t *cb = new_context(m, size ? arena : NULL, size, &b);
  for (int k = 1; k <= 3; ++k) {
    memset(arena, 0xA5, sizeof arena);
    expect_invoke(ca, &a, k);
    memset(arena, 0x5A, sizeof arena);
    expect_invoke(cb, &b, k);
  }
  tinyml_context_release(ca);
  tinyml_context_release(cb);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_stateless_module(void **unused) {
  (void)unused;
  tinyml_blob_t *blob = api_compile_model("softmax", NULL);
  tinyml_module_t *m = api_load_blob(blob);
  assert_int_equal(tinyml_module_state_size(m), 0);
  tinyml_context_t *c = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &c), "context");
  api_assert_ok(tinyml_context_reset_state(c), "reset without state");
  tinyml_context_release(c);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
  assert_int_equal(tinyml_module_state_size(NULL), 0);
  api_expect_error(tinyml_context_reset_state(NULL), TINYML_STATUS_INVALID_ARGUMENT,
                   "tinyml_context_reset_state", "NULL");
}

/* Generated C carries the state too: a caller-owned buffer of the
 * module's state size, set by <name>_reset_state() (tests/compiler/
 * test_emit.py runs it; here, the header's contract). */
static void test_c_forms_take_state(void **unused) {
  (void)unused;
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.emit = TINYML_EMIT_C;
  o.name = "acc";
  tinyml_files_t *files = NULL;
  api_assert_ok(tinyml_compile_files(kStateful, strlen(kStateful), &o, &files), "emit c");
  assert_string_equal(tinyml_files_name(files, 2), "acc.h");
  const tinyml_blob_t *h = tinyml_files_blob(files, 2);
  char *text = calloc(1, tinyml_blob_size(h) + 1);
  assert_non_null(text);
  memcpy(text, tinyml_blob_data(h), tinyml_blob_size(h));
  assert_non_null(strstr(text, "#define ACC_STATE_SIZE 256u"));
  assert_non_null(strstr(text, "void acc_reset_state(void *state);"));
  assert_non_null(strstr(text, "int acc_invoke(void *arena, void *state, const void *const"));
  free(text);
  tinyml_files_release(files);
}

static void test_misplaced_state_is_refused(void **unused) {
  (void)unused;
  static const char kFirst[] =
      "func.func @main(%s: tensor<2xf32> {tinyml.state}, %x: tensor<2xf32>)\n"
      "    -> (tensor<2xf32>, tensor<2xf32> {tinyml.state}) {\n"
      "  %y = tosa.add %x, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %y, %y : tensor<2xf32>, tensor<2xf32>\n}\n";
  static const char kUnpaired[] =
      "func.func @main(%x: tensor<2xf32>, %s: tensor<2xf32> {tinyml.state})\n"
      "    -> tensor<2xf32> {\n"
      "  %y = tosa.add %x, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %y : tensor<2xf32>\n}\n";
  static const char kRetyped[] =
      "func.func @main(%x: tensor<2xf32>, %s: tensor<2xf32> {tinyml.state})\n"
      "    -> (tensor<2xf32>, tensor<2xi32> {tinyml.state}) {\n"
      "  %y = tosa.add %x, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  %z = tosa.cast %y : (tensor<2xf32>) -> tensor<2xi32>\n"
      "  return %y, %z : tensor<2xf32>, tensor<2xi32>\n}\n";
  tinyml_blob_t *blob = NULL;
  api_expect_error(tinyml_compile(kFirst, strlen(kFirst), NULL, &blob),
                   TINYML_STATUS_INVALID_MODEL, "state input", "after the inputs");
  api_expect_error(tinyml_compile(kUnpaired, strlen(kUnpaired), NULL, &blob),
                   TINYML_STATUS_INVALID_MODEL, "1 state inputs but 0 state outputs");
  api_expect_error(tinyml_compile(kRetyped, strlen(kRetyped), NULL, &blob),
                   TINYML_STATUS_INVALID_MODEL, "another type");
  assert_null(blob);
}

/* `tinyml.state_init` gives a state any initial value (TFLite resource
 * variables start as their CALL_ONCE initialiser assigns): a hex literal,
 * a splat and a list, each restored by a reset. */
static const char kInitialised[] =
    "func.func @main(%x: tensor<4xi16> {tinyml.name = \"x\"},\n"
    "    %a: tensor<4xi16> {tinyml.name = \"a\", tinyml.state,\n"
    "                       tinyml.state_init = dense<\"0x010002000300FCFF\"> : tensor<4xi16>},\n"
    "    %b: tensor<2xf32> {tinyml.name = \"b\", tinyml.state,\n"
    "                       tinyml.state_init = dense<2.5> : tensor<2xf32>},\n"
    "    %c: tensor<2xi32> {tinyml.name = \"c\", tinyml.state,\n"
    "                       tinyml.state_init = dense<[7, -9]> : tensor<2xi32>})\n"
    "    -> (tensor<4xi16> {tinyml.name = \"y\"}, tensor<2xf32> {tinyml.name = \"bo\"},\n"
    "        tensor<2xi32> {tinyml.name = \"co\"},\n"
    "        tensor<4xi16> {tinyml.state}, tensor<2xf32> {tinyml.state},\n"
    "        tensor<2xi32> {tinyml.state}) {\n"
    "  %y = tosa.add %x, %a : (tensor<4xi16>, tensor<4xi16>) -> tensor<4xi16>\n"
    "  %b2 = tosa.add %b, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
    "  %c2 = tosa.add %c, %c : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>\n"
    "  return %y, %b, %c, %y, %b2, %c2 : tensor<4xi16>, tensor<2xf32>, tensor<2xi32>,\n"
    "      tensor<4xi16>, tensor<2xf32>, tensor<2xi32>\n"
    "}\n";

/* Invoke k (from 1) since the state was fresh: a = init + (k-1) x, the
 * others double every invoke and are output before doubling. */
static void expect_initialised(tinyml_context_t *c, int k, const int16_t *y,
                               const float *b, const int32_t *cc) {
  static const int16_t kA[4] = {1, 2, 3, -4};
  api_assert_ok(tinyml_context_invoke(c), "invoke");
  for (int i = 0; i < 4; ++i) assert_int_equal(y[i], kA[i] + k * (i + 10));
  for (int i = 0; i < 2; ++i) {
    if (b[i] != 2.5f * (float)(1 << (k - 1))) fail_msg("invoke %d: b[%d] = %g", k, i, (double)b[i]);
    assert_int_equal(cc[i], (i ? -9 : 7) * (1 << (k - 1)));
  }
}

static void test_state_init_value(void **unused) {
  (void)unused;
  tinyml_blob_t *blob;
  tinyml_module_t *m = load_text(kInitialised, &blob);
  tinyml_context_t *c = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &c), "context");
  int16_t x[4] = {10, 11, 12, 13}, y[4];
  float b[2];
  int32_t cc[2];
  api_assert_ok(tinyml_context_set_input(c, 0, x, sizeof x), "input");
  api_assert_ok(tinyml_context_set_output(c, 0, y, sizeof y), "output 0");
  api_assert_ok(tinyml_context_set_output(c, 1, b, sizeof b), "output 1");
  api_assert_ok(tinyml_context_set_output(c, 2, cc, sizeof cc), "output 2");
  for (int k = 1; k <= 3; ++k) expect_initialised(c, k, y, b, cc);
  api_assert_ok(tinyml_context_reset_state(c), "reset");
  expect_initialised(c, 1, y, b, cc);
  tinyml_context_release(c);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void test_bad_state_init_is_refused(void **unused) {
  (void)unused;
  static const char kWrongType[] =
      "func.func @main(%x: tensor<2xf32>,\n"
      "    %s: tensor<2xf32> {tinyml.name = \"s\", tinyml.state,\n"
      "                       tinyml.state_init = dense<1> : tensor<2xi32>})\n"
      "    -> (tensor<2xf32>, tensor<2xf32> {tinyml.state}) {\n"
      "  %y = tosa.add %x, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "  return %y, %y : tensor<2xf32>, tensor<2xf32>\n}\n";
  tinyml_blob_t *blob = NULL;
  api_expect_error(tinyml_compile(kWrongType, strlen(kWrongType), NULL, &blob),
                   TINYML_STATUS_INVALID_MODEL, "state 's'", "tinyml.state_init");
  assert_null(blob);
}

/* A TFLite model with a resource variable (tflite_ops/variable_ops.py,
 * var_counter_i32): count starts as CALL_ONCE sets it, {100, -7, 0, 3}; each
 * invoke outputs it, adds x, outputs that, adds x again and keeps it. */
static const char *g_var_model;

static void expect_counter(tinyml_context_t *c, const int32_t *x, const int32_t out[3][4],
                           int k) {
  static const int32_t kInit[4] = {100, -7, 0, 3};
  api_assert_ok(tinyml_context_invoke(c), "invoke");
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) assert_int_equal(out[j][i], kInit[i] + (2 * (k - 1) + j) * x[i]);
}

static void test_reset_restores_call_once_value(void **unused) {
  (void)unused;
  if (!g_var_model) {
    if (getenv("CI")) fail_msg("no TFLite variable model (flatc or the schema is missing)");
    print_message("skipped: no TFLite variable model (flatc or the schema is missing)\n");
    skip();
  }
  size_t size = 0;
  char *bytes = api_read_file(g_var_model, &size);
  tinyml_blob_t *blob = NULL;
  api_assert_ok(tinyml_compile(bytes, size, NULL, &blob), "compile");
  free(bytes);
  tinyml_module_t *m = api_load_blob(blob);
  assert_int_equal(tinyml_module_input_count(m), 1);
  assert_int_equal(tinyml_module_output_count(m), 3);
  tinyml_context_t *c = NULL;
  api_assert_ok(tinyml_context_create(m, NULL, &c), "context");
  int32_t x[4] = {5, -2, 1000, 0}, out[3][4];
  api_assert_ok(tinyml_context_set_input(c, 0, x, sizeof x), "input");
  for (int j = 0; j < 3; ++j)
    api_assert_ok(tinyml_context_set_output(c, (uint32_t)j, out[j], sizeof out[j]), "output");
  for (int k = 1; k <= 3; ++k) expect_counter(c, x, (const int32_t(*)[4])out, k);
  api_assert_ok(tinyml_context_reset_state(c), "reset");
  expect_counter(c, x, (const int32_t(*)[4])out, 1);
  expect_counter(c, x, (const int32_t(*)[4])out, 2);
  tinyml_context_release(c);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  g_var_model = argc > 2 ? argv[2] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_signature_hides_the_state),
      cmocka_unit_test(test_state_persists_and_resets),
      cmocka_unit_test(test_state_is_not_in_the_arena),
      cmocka_unit_test(test_stateless_module),
      cmocka_unit_test(test_c_forms_take_state),
      cmocka_unit_test(test_misplaced_state_is_refused),
      cmocka_unit_test(test_state_init_value),
      cmocka_unit_test(test_bad_state_init_is_refused),
      cmocka_unit_test(test_reset_restores_call_once_value),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
