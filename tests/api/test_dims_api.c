/* tinyml_compile_options_t's dims, input_shapes and note, through the
 * shared library, on an ONNX model written here byte by byte:
 *   z = Add(x, y)  x: float [batch, seq, 3], y: float [1, seq, 3]
 *   v = Neg(u)     u: float [1, ?]  (a dimension with no name)
 * Unbound, the compile lists every dynamic name and each input using it;
 * bound, it compiles and computes x + y and -u at the bound shapes (the
 * reference is the sum and negation in this file); the batch defaults to 1
 * with a note; an older caller's struct without the fields still works. */
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

static void node(pb_t *graph, const char *op, const char *const *in, int n_in, const char *out) {
  pb_t n = {0};
  for (int i = 0; i < n_in; ++i) pb_str(&n, 1, in[i]);
  pb_str(&n, 2, out);
  pb_str(&n, 3, out);
  pb_str(&n, 4, op);
  pb_msg(graph, 1, &n);
}

static pb_t g_model;

static void write_model(void) {
  pb_t graph = {0};
  node(&graph, "Add", (const char *const[]){"x", "y"}, 2, "z");
  node(&graph, "Neg", (const char *const[]){"u"}, 1, "v");
  pb_str(&graph, 2, "dims");
  pb_value_info(&graph, 11, "x", 1, 3, (const char *const[]){"batch", "seq", "3"});
  pb_value_info(&graph, 11, "y", 1, 3, (const char *const[]){"1", "seq", "3"});
  pb_value_info(&graph, 11, "u", 1, 2, (const char *const[]){"1", ""});
  pb_value_info(&graph, 12, "z", 1, 3, (const char *const[]){"batch", "seq", "3"});
  pb_value_info(&graph, 12, "v", 1, 2, (const char *const[]){"1", ""});
  pb_model(&g_model, &graph);
}

/* ---- helpers ---------------------------------------------------------------- */

typedef struct notes {
  int count;
  char last[512];
} notes_t;

static void take_note(void *user, const char *message) {
  notes_t *n = user;
  n->count++;
  snprintf(n->last, sizeof n->last, "%s", message);
}

/* Every input's whole shape (x [2, 6, 3], y [1, 6, 3], u [1, 3]) into
 * options `o` already initialised, the notes into `notes`.  Static: the
 * options outlive this call. */
static const int64_t kx[3] = {2, 6, 3}, ky[3] = {1, 6, 3}, ku[2] = {1, 3};
static const tinyml_input_shape_t kEveryShape[3] = {{"x", 3, kx}, {"y", 3, ky}, {"u", 2, ku}};

static void shape_every_input(tinyml_compile_options_t *o, notes_t *notes) {
  o->input_shapes = kEveryShape;
  o->input_shape_count = 3;
  o->note = take_note;
  o->note_user = notes;
}

static tinyml_status_t compile(const tinyml_compile_options_t *o, tinyml_blob_t **blob) {
  return tinyml_compile(g_model.data, g_model.len, o, blob);
}

static void expect_dims(const tinyml_tensor_info_t *t, uint32_t rank, const int64_t *dims) {
  assert_int_equal(t->rank, rank);
  for (uint32_t i = 0; i < rank; ++i) assert_int_equal(t->dims[i], dims[i]);
}

/* Runs the module and checks z = x + y (y broadcast over the batch) and
 * v = -u exactly: one IEEE add or negation per element. */
static void check_run(tinyml_module_t *m, int64_t batch, int64_t seq, int64_t ulen) {
  tinyml_tensor_info_t t;
  tinyml_tensor_info_init(&t);
  api_assert_ok(tinyml_module_input_info(m, 0, &t), "input 0");
  expect_dims(&t, 3, (const int64_t[]){batch, seq, 3});
  api_assert_ok(tinyml_module_input_info(m, 2, &t), "input 2");
  expect_dims(&t, 2, (const int64_t[]){1, ulen});
  api_assert_ok(tinyml_module_output_info(m, 0, &t), "output 0");
  expect_dims(&t, 3, (const int64_t[]){batch, seq, 3});
  api_io_t io;
  assert_true(api_io_alloc(m, 1 << 20, 7, &io));
  api_assert_ok(api_run(m, NULL, &io, 1), "run");
  const float *x = io.inputs[0], *y = io.inputs[1], *u = io.inputs[2];
  const float *z = io.outputs[0], *v = io.outputs[1];
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < seq * 3; ++k) assert_true(z[b * seq * 3 + k] == x[b * seq * 3 + k] + y[k]);
  for (int64_t k = 0; k < ulen; ++k) assert_true(v[k] == -u[k]);
  api_io_free(&io);
}

/* ---- tests -------------------------------------------------------------------- */

static void unbound_lists_every_name(void **state) {
  (void)state;
  tinyml_blob_t *blob = NULL;
  api_expect_error(compile(NULL, &blob), TINYML_STATUS_UNSUPPORTED, "unbound",
                   "'seq' (input 'x' dim 1, input 'y' dim 1)", "unnamed (input 'u' dim 1)",
                   "--dim", "--input-shape");
  assert_null(blob);
  /* Binding seq leaves only the unnamed one. */
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.dims = (const tinyml_dim_binding_t[]){{"seq", 4}};
  o.dim_count = 1;
  tinyml_status_t st = compile(&o, &blob);
  assert_null(strstr(tinyml_status_message(st), "'seq'"));
  api_expect_error(st, TINYML_STATUS_UNSUPPORTED, "unnamed (input 'u' dim 1)");
}

static void bound_dims_compile_and_batch_defaults(void **state) {
  (void)state;
  notes_t notes = {0};
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.dims = (const tinyml_dim_binding_t[]){{"seq", 5}};
  o.dim_count = 1;
  o.input_shapes = (const tinyml_input_shape_t[]){{"u", 2, (const int64_t[]){1, 7}}};
  o.input_shape_count = 1;
  o.note = take_note;
  o.note_user = &notes;
  tinyml_blob_t *blob = NULL;
  api_assert_ok(compile(&o, &blob), "compile");
  assert_int_equal(notes.count, 1);
  assert_non_null(strstr(notes.last, "'batch' (input 'x' dim 0)"));
  assert_non_null(strstr(notes.last, "as 1"));
  tinyml_module_t *m = api_load_blob(blob);
  check_run(m, 1, 5, 7);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void input_shapes_set_everything(void **state) {
  (void)state;
  notes_t notes = {0};
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  shape_every_input(&o, &notes);
  tinyml_blob_t *blob = NULL;
  api_assert_ok(compile(&o, &blob), "compile");
  assert_int_equal(notes.count, 0); /* nothing defaulted */
  tinyml_module_t *m = api_load_blob(blob);
  check_run(m, 2, 6, 3);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
}

static void bad_bindings_are_refused(void **state) {
  (void)state;
  tinyml_compile_options_t o;
  tinyml_blob_t *blob = NULL;
  tinyml_compile_options_init(&o);
  o.dims = (const tinyml_dim_binding_t[]){{"nope", 3}};
  o.dim_count = 1;
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "'nope'");
  o.dims = (const tinyml_dim_binding_t[]){{"seq", 0}};
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "'seq'", "1..2^31");
  tinyml_compile_options_init(&o);
  o.input_shapes = (const tinyml_input_shape_t[]){{"y", 2, (const int64_t[]){1, 6}}};
  o.input_shape_count = 1;
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "rank", "'y'");
  o.input_shapes = (const tinyml_input_shape_t[]){{"y", 3, (const int64_t[]){2, 6, 3}}};
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "static", "'y'");
  o.input_shapes = (const tinyml_input_shape_t[]){{"w", 3, (const int64_t[]){1, 6, 3}}};
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "'w'");
  o.input_shapes = NULL;
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "NULL");
  /* Bound twice, or two sizes for one name: never "the first one wins". */
  o.input_shapes = (const tinyml_input_shape_t[]){{"u", 2, (const int64_t[]){1, 3}},
                                                  {"u", 2, (const int64_t[]){1, 4}}};
  o.input_shape_count = 2;
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "two shapes", "'u'");
  o.input_shapes = NULL;
  o.input_shape_count = 0;
  o.dims = (const tinyml_dim_binding_t[]){{"seq", 3}, {"seq", 4}};
  o.dim_count = 2;
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "twice", "'seq'");
  o.dim_count = 1;
  o.input_shapes = (const tinyml_input_shape_t[]){{"x", 3, (const int64_t[]){1, 6, 3}}};
  o.input_shape_count = 1;
  api_expect_error(compile(&o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "contradicts dims",
                   "'x'");
  /* Not an ONNX model: nothing to bind. */
  size_t size;
  char *text = api_read_model("add_mul_broadcast", &size);
  tinyml_compile_options_init(&o);
  o.dims = (const tinyml_dim_binding_t[]){{"seq", 3}};
  o.dim_count = 1;
  api_expect_error(tinyml_compile(text, size, &o, &blob), TINYML_STATUS_INVALID_ARGUMENT, "ONNX");
  free(text);
  assert_null(blob);
}

/* A caller built before the fields: its struct ends at max_arena_bytes, so
 * whatever lies past it is not read (here: a binding that would make the
 * compile succeed, and a note callback that must not be called). */
static void old_struct_size_still_works(void **state) {
  (void)state;
  notes_t notes = {0};
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.struct_size = offsetof(tinyml_compile_options_t, max_arena_bytes) + sizeof(uint64_t);
  shape_every_input(&o, &notes);
  tinyml_blob_t *blob = NULL;
  api_expect_error(compile(&o, &blob), TINYML_STATUS_UNSUPPORTED, "unbound", "'seq'");
  assert_int_equal(notes.count, 0);
  /* A static model compiles with the old struct as before. */
  size_t size;
  char *text = api_read_model("add_mul_broadcast", &size);
  api_assert_ok(tinyml_compile(text, size, &o, &blob), "old-size compile");
  free(text);
  tinyml_blob_release(blob);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  write_model();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unbound_lists_every_name),
      cmocka_unit_test(bound_dims_compile_and_batch_defaults),
      cmocka_unit_test(input_shapes_set_everything),
      cmocka_unit_test(bad_bindings_are_refused),
      cmocka_unit_test(old_struct_size_still_works),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
