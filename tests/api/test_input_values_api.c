/* tinyml_compile_options_t's input_values through the shared library, on
 * ONNX models written here byte by byte:
 *   y = Reshape(x, shape)   x: float [2, 6], shape: int64 [2]
 *   y = Reshape(x, shape)   the same with shape: int64 [n] (its length
 *                           dynamic: the bound value's length sizes it)
 * Unbound, the compile is refused naming 'shape' and how to bind it;
 * bound (as data or as text), it compiles, the module has x alone as its
 * input, and y holds x's elements in x's order at the bound shape (ONNX
 * Reshape keeps the row-major order: the reference is x itself).  Each
 * wrong binding is INVALID_ARGUMENT naming it; an older caller's struct
 * without the fields is read as before. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_onnx_pb.h"
#include "api_test_util.h"

static pb_t g_fixed, g_dynamic;

/* y = Reshape(x, shape); shape's one dimension is `shape_dim`. */
static void write_model(pb_t *model, const char *shape_dim) {
  pb_t graph = {0}, n = {0};
  pb_str(&n, 1, "x");
  pb_str(&n, 1, "shape");
  pb_str(&n, 2, "y");
  pb_str(&n, 4, "Reshape");
  pb_msg(&graph, 1, &n);
  pb_str(&graph, 2, "reshape");
  pb_value_info(&graph, 11, "x", 1, 2, (const char *const[]){"2", "6"});
  pb_value_info(&graph, 11, "shape", 7, 1, (const char *const[]){shape_dim});
  pb_value_info(&graph, 12, "y", 1, -1, NULL);
  pb_model(model, &graph);
}

/* ---- helpers ---------------------------------------------------------------- */

static tinyml_status_t compile(const pb_t *model, const tinyml_input_value_t *values, size_t n,
                               tinyml_blob_t **blob) {
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.input_values = values;
  o.input_value_count = n;
  return tinyml_compile(model->data, model->len, &o, blob);
}

/* The module takes x alone and gives y = x's elements at shape dims. */
static void check_reshape(tinyml_blob_t *blob, uint32_t rank, const int64_t *dims) {
  tinyml_module_t *m = api_load_blob(blob);
  assert_int_equal(tinyml_module_input_count(m), 1);
  tinyml_tensor_info_t t;
  tinyml_tensor_info_init(&t);
  api_assert_ok(tinyml_module_input_info(m, 0, &t), "input 0");
  assert_string_equal(t.name, "x");
  api_assert_ok(tinyml_module_output_info(m, 0, &t), "output 0");
  assert_int_equal(t.rank, rank);
  for (uint32_t i = 0; i < rank; ++i) assert_int_equal(t.dims[i], dims[i]);
  api_io_t io;
  assert_true(api_io_alloc(m, 1 << 20, 11, &io));
  api_assert_ok(api_run(m, NULL, &io, 1), "run");
  assert_int_equal(io.output_sizes[0], io.input_sizes[0]);
  assert_memory_equal(io.outputs[0], io.inputs[0], io.input_sizes[0]);
  api_io_free(&io);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static const int64_t k34[2] = {3, 4};

/* ---- tests -------------------------------------------------------------------- */

static void unbound_names_the_input(void **state) {
  (void)state;
  tinyml_blob_t *blob = NULL;
  api_expect_error(compile(&g_fixed, NULL, 0, &blob), TINYML_STATUS_UNSUPPORTED,
                   "node 0 (Reshape", "input 'shape' of the graph", "--input-value shape=");
  assert_null(blob);
}

static void bound_data_compiles_without_the_input(void **state) {
  (void)state;
  tinyml_blob_t *blob = NULL;
  tinyml_input_value_t v = {"shape", TINYML_DTYPE_INT64, k34, sizeof k34, NULL};
  api_assert_ok(compile(&g_fixed, &v, 1, &blob), "compile");
  check_reshape(blob, 2, k34);
}

static void bound_text_compiles(void **state) {
  (void)state;
  tinyml_blob_t *blob = NULL;
  tinyml_input_value_t v = {.input = "shape", .text = "4,-1"};
  api_assert_ok(compile(&g_fixed, &v, 1, &blob), "compile");
  check_reshape(blob, 2, (const int64_t[]){4, 3});
}

/* A 1-D input of dynamic length takes the value's length. */
static void dynamic_length_takes_the_value(void **state) {
  (void)state;
  tinyml_blob_t *blob = NULL;
  tinyml_input_value_t v = {.input = "shape", .text = "2,3,2"};
  api_assert_ok(compile(&g_dynamic, &v, 1, &blob), "compile");
  check_reshape(blob, 3, (const int64_t[]){2, 3, 2});
}

static void bad_values_are_refused(void **state) {
  (void)state;
  tinyml_blob_t *blob = NULL;
  const int32_t k34_i32[2] = {3, 4};
  const int64_t three[3] = {2, 3, 2};
  struct {
    tinyml_input_value_t v[2];
    size_t n;
    const char *what;
  } cases[] = {
      {{{"nope", TINYML_DTYPE_INT64, k34, sizeof k34, NULL}}, 1, "names no input"},
      {{{"shape", TINYML_DTYPE_INT32, k34_i32, sizeof k34_i32, NULL}}, 1, "element type int64"},
      {{{"shape", TINYML_DTYPE_INT64, three, sizeof three, NULL}}, 1, "element count"},
      {{{"shape", TINYML_DTYPE_INT64, k34, sizeof k34, NULL},
        {"shape", TINYML_DTYPE_INT64, k34, sizeof k34, NULL}}, 2, "twice"},
      {{{.input = "shape", .text = "3,x"}}, 1, "does not read"},
      {{{.input = "shape", .text = "3,4,"}}, 1, "element count"},
      {{{"shape", TINYML_DTYPE_INT64, NULL, 16, NULL}}, 1, "no data"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
    api_expect_error(compile(&g_fixed, cases[i].v, cases[i].n, &blob),
                     TINYML_STATUS_INVALID_ARGUMENT, cases[i].what);
  /* An input shape that disagrees with the value's length. */
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.input_values = (const tinyml_input_value_t[]){{.input = "shape", .text = "2,3,2"}};
  o.input_value_count = 1;
  o.input_shapes = (const tinyml_input_shape_t[]){{"shape", 1, (const int64_t[]){2}}};
  o.input_shape_count = 1;
  api_expect_error(tinyml_compile(g_dynamic.data, g_dynamic.len, &o, &blob),
                   TINYML_STATUS_INVALID_ARGUMENT, "element count", "'shape'");
  o.input_values = NULL;
  api_expect_error(tinyml_compile(g_dynamic.data, g_dynamic.len, &o, &blob),
                   TINYML_STATUS_INVALID_ARGUMENT, "input_values is NULL");
  /* Not an ONNX model: nothing to bind. */
  size_t size;
  char *text = api_read_model("add_mul_broadcast", &size);
  tinyml_compile_options_init(&o);
  o.input_values = (const tinyml_input_value_t[]){{.input = "x", .text = "1"}};
  o.input_value_count = 1;
  api_expect_error(tinyml_compile(text, size, &o, &blob), TINYML_STATUS_INVALID_ARGUMENT,
                   "ONNX");
  free(text);
  assert_null(blob);
}

/* A caller built before the fields: its struct ends at note_user, so the
 * binding past it is not read and the compile is refused as before. */
static void old_struct_size_ignores_values(void **state) {
  (void)state;
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.struct_size = offsetof(tinyml_compile_options_t, note_user) + sizeof(void *);
  o.input_values = (const tinyml_input_value_t[]){{"shape", TINYML_DTYPE_INT64, k34, sizeof k34,
                                                   NULL}};
  o.input_value_count = 1;
  tinyml_blob_t *blob = NULL;
  api_expect_error(tinyml_compile(g_fixed.data, g_fixed.len, &o, &blob),
                   TINYML_STATUS_UNSUPPORTED, "--input-value shape=");
  assert_null(blob);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  write_model(&g_fixed, "2");
  write_model(&g_dynamic, "n");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unbound_names_the_input),
      cmocka_unit_test(bound_data_compiles_without_the_input),
      cmocka_unit_test(bound_text_compiles),
      cmocka_unit_test(dynamic_length_takes_the_value),
      cmocka_unit_test(bad_values_are_refused),
      cmocka_unit_test(old_struct_size_ignores_values),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
