/* tinyml_compile_options_t.no_winograd, through the shared library: a 3x3
 * stride-1 f32 conv of 32 channels each side compiles by default into a
 * Winograd F(2x2, 3x3) kernel on x86-64 (lib/compiler/tosa/uk_wino.c) and
 * with no_winograd into the direct sum.  Both must agree within float
 * rounding but not bit for bit (else one of them did not take its path),
 * and a caller whose struct ends before the field gets the default. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api_test_util.h"

enum { C = 32, HW = 9 };

/* Weights and biases from a fixed sequence, as MLIR's hex form. */
static void put_dense(char **p, int n, uint32_t *state) {
  *p += sprintf(*p, "dense<\"0x");
  for (int i = 0; i < n; ++i) {
    *state = *state * 1664525u + 1013904223u;
    float f = (float)(*state >> 8) / 16777216.0f - 0.5f;
    uint8_t b[4];
    memcpy(b, &f, 4);
    *p += sprintf(*p, "%02X%02X%02X%02X", b[0], b[1], b[2], b[3]);
  }
  *p += sprintf(*p, "\">");
}

static char *conv_model(void) {
  char *text = malloc((size_t)C * C * 9 * 8 + 4096), *p = text;
  uint32_t state = 12345;
  p += sprintf(p, "func.func @main(%%x: tensor<1x%dx%dx%dxf32>) -> tensor<1x%dx%dx%dxf32> {\n",
               HW, HW, C, HW, HW, C);
  p += sprintf(p, "  %%w = \"tosa.const\"() <{values = ");
  put_dense(&p, C * 9 * C, &state);
  p += sprintf(p, " : tensor<%dx3x3x%dxf32>}> : () -> tensor<%dx3x3x%dxf32>\n", C, C, C, C);
  p += sprintf(p, "  %%b = \"tosa.const\"() <{values = ");
  put_dense(&p, C, &state);
  p += sprintf(p, " : tensor<%dxf32>}> : () -> tensor<%dxf32>\n", C, C);
  p += sprintf(p,
               "  %%z = \"tosa.const\"() <{values = dense<0.0> : tensor<1xf32>}> : () -> "
               "tensor<1xf32>\n"
               "  %%y = tosa.conv2d %%x, %%w, %%b, %%z, %%z {acc_type = f32, dilation = "
               "array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : "
               "(tensor<1x%dx%dx%dxf32>, tensor<%dx3x3x%dxf32>, tensor<%dxf32>, tensor<1xf32>, "
               "tensor<1xf32>) -> tensor<1x%dx%dx%dxf32>\n"
               "  return %%y : tensor<1x%dx%dx%dxf32>\n}\n",
               HW, HW, C, C, C, C, HW, HW, C, HW, HW, C);
  return text;
}

/* Output 0 of the model compiled with `o`, on the inputs of seed 9. */
static float *run(const char *text, const tinyml_compile_options_t *o, size_t *n) {
  tinyml_blob_t *blob = NULL;
  api_assert_ok(tinyml_compile(text, strlen(text), o, &blob), "tinyml_compile");
  tinyml_module_t *m = api_load_blob(blob);
  api_io_t io;
  assert_true(api_io_alloc(m, 1u << 20, 9, &io));
  api_assert_ok(api_run(m, NULL, &io, 1), "invoke");
  *n = io.output_sizes[0] / sizeof(float);
  float *out = malloc(io.output_sizes[0]);
  memcpy(out, io.outputs[0], io.output_sizes[0]);
  api_io_free(&io);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
  return out;
}

static void test_no_winograd(void **state) {
  (void)state;
  char *text = conv_model();
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  size_t n, nd, no;
  float *wino = run(text, &o, &n);
  o.no_winograd = 1;
  float *direct = run(text, &o, &nd);
  o.struct_size = offsetof(tinyml_compile_options_t, no_winograd); /* an older header */
  float *older = run(text, &o, &no);
  assert_int_equal(n, (size_t)HW * HW * C);
  assert_int_equal(nd, n);
  assert_int_equal(no, n);
  double most = 1.0, worst = 0.0;
  for (size_t i = 0; i < n; ++i) most = fmax(most, fabs(direct[i]));
  for (size_t i = 0; i < n; ++i) worst = fmax(worst, fabs((double)wino[i] - direct[i]));
  assert_true(worst <= 1e-5 * most);
  assert_true(memcmp(wino, direct, n * sizeof(float)) != 0);
  assert_memory_equal(older, wino, n * sizeof(float));
  free(text);
  free(wino);
  free(direct);
  free(older);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_winograd),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
