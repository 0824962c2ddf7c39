/* loop_access.c's stack buffers (memref.alloca): a loop may be split over
 * workgroups, each call with its own buffer, only if every iteration
 * writes the whole buffer before reading it.  Hand-written loops in the
 * form x86-64's packed panels take (a row loop of vector writes into a
 * subview, then reads), and three that carry values from one iteration
 * to the next through the buffer or leave part of it unwritten. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "lib/common/alloc.h"
#include "lib/compiler/codegen/loop_access.h"
#include "lib/compiler/mlir_util.h"

/* @ROWS@: rows the copy loop writes (of 64); @READ_FIRST@: a read of the
 * buffer at the top of each iteration, before the copy; @WRITE@: the
 * row the copy writes (%r, or %c0 every time: a partial write). */
static const char *const k_func =
    "func.func @f(%src: memref<4x64x32xf32>, %out: memref<4x8xf32>) {\n"
    "  %c0 = arith.constant 0 : index\n"
    "  %c1 = arith.constant 1 : index\n"
    "  %c4 = arith.constant 4 : index\n"
    "  %c5 = arith.constant 5 : index\n"
    "  %rows = arith.constant @ROWS@ : index\n"
    "  %pad = arith.constant 0.0 : f32\n"
    "  %a = memref.alloca() : memref<64x32xf32>\n"
    "  scf.for %i = %c0 to %c4 step %c1 {\n"
    "    @READ_FIRST@\n"
    "    scf.for %r = %c0 to %rows step %c1 {\n"
    "      %v = vector.transfer_read %src[%i, %r, %c0], %pad {in_bounds = [true]} :"
    " memref<4x64x32xf32>, vector<32xf32>\n"
    "      %sv = memref.subview %a[@WRITE@, 0] [1, 32] [1, 1] : memref<64x32xf32> to"
    " memref<1x32xf32, strided<[32, 1], offset: ?>>\n"
    "      vector.transfer_write %v, %sv[%c0, %c0] {in_bounds = [true]} : vector<32xf32>,"
    " memref<1x32xf32, strided<[32, 1], offset: ?>>\n"
    "    }\n"
    "    %x = vector.transfer_read %a[%c5, %c0], %pad {in_bounds = [true]} :"
    " memref<64x32xf32>, vector<8xf32>\n"
    "    vector.transfer_write %x, %out[%i, %c0] {in_bounds = [true]} : vector<8xf32>,"
    " memref<4x8xf32>\n"
    "  }\n"
    "  return\n"
    "}\n";

static const char *const k_read_first =
    "%early = vector.transfer_read %a[%c0, %c0], %pad {in_bounds = [true]} :"
    " memref<64x32xf32>, vector<8xf32>\n"
    "    vector.transfer_write %early, %out[%i, %c0] {in_bounds = [true]} : vector<8xf32>,"
    " memref<4x8xf32>";

static MlirWalkResult first_loop(MlirOperation op, void *user) {
  if (!tc_op_is(op, "scf.for")) return MlirWalkResultAdvance;
  *(MlirOperation *)user = op;
  return MlirWalkResultInterrupt;
}

/* k_func with each @NAME@ replaced by the matching value. */
static void fill(char *out, size_t cap, const char *const *names, const char *const *values,
                 size_t n) {
  size_t len = 0;
  for (const char *p = k_func; *p;) {
    size_t k = 0;
    while (k < n && strncmp(p, names[k], strlen(names[k])) != 0) ++k;
    const char *add = k < n ? values[k] : p;
    size_t add_len = k < n ? strlen(values[k]) : 1;
    assert_true(len + add_len < cap);
    memcpy(out + len, add, add_len);
    len += add_len;
    p += k < n ? strlen(names[k]) : 1;
  }
  out[len] = '\0';
}

/* Whether the outer loop of k_func, so filled in, is parallel. */
static bool outer_parallel(int rows, const char *read_first, const char *write_row) {
  char text[4096], rows_text[16];
  snprintf(rows_text, sizeof rows_text, "%d", rows);
  const char *const names[] = {"@ROWS@", "@READ_FIRST@", "@WRITE@"};
  const char *const values[] = {rows_text, read_first, write_row};
  fill(text, sizeof text, names, values, 3);
  tc_diag_t diag;
  MlirContext ctx = tc_context_create(&diag);
  MlirModule m = mlirModuleCreateParse(ctx, tc_str(text));
  if (mlirModuleIsNull(m)) fail_msg("parse: %s", diag.text);
  MlirOperation loop = {NULL};
  mlirOperationWalk(mlirModuleGetOperation(m), first_loop, &loop, MlirWalkPreOrder);
  assert_false(mlirOperationIsNull(loop));
  tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  bool parallel = tc_loop_is_parallel(loop, &a);
  mlirModuleDestroy(m);
  mlirContextDestroy(ctx);
  return parallel;
}

/* All 64 rows written, then read: each iteration's own. */
static void test_written_whole_first(void **state) {
  (void)state;
  assert_true(outer_parallel(64, "", "%r"));
}

/* Read before the copy: iteration i reads what i - 1 wrote. */
static void test_read_before_write(void **state) {
  (void)state;
  assert_false(outer_parallel(64, k_read_first, "%r"));
}

/* 32 of 64 rows written: row 5 is, but the loop cannot know which rows
 * the reads need, so only a whole write counts. */
static void test_partial_write(void **state) {
  (void)state;
  assert_false(outer_parallel(32, "", "%r"));
}

/* Every trip writes row 0: rows 1..63 keep earlier iterations' values. */
static void test_same_row_written(void **state) {
  (void)state;
  assert_false(outer_parallel(64, "", "%c0"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_written_whole_first),
      cmocka_unit_test(test_read_before_write),
      cmocka_unit_test(test_partial_write),
      cmocka_unit_test(test_same_row_written),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
