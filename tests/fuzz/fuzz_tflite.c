/* libFuzzer target for the TFLite importer: any bytes must give a status or
 * a result, never a crash, an out-of-bounds access, undefined behaviour or a
 * leak.  Built with clang's -fsanitize=fuzzer,address,undefined; see
 * README.md.
 *
 * Each input goes through tfl_import (reader plus emitter) and then through
 * tfl_read directly, whose model is walked in full: every tensor's data and
 * quantisation, every operator's indices, and every tfl_table_* accessor on
 * fields 0..15 of its options tables.  A small input is then compiled in
 * full and its module run (fuzz_compile.c).  Allocations go through a counting
 * allocator, so a leak on any path aborts at once with the input that
 * caused it (LeakSanitizer would only report at exit). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_alloc.h"
#include "fuzz_compile.h"
#include "lib/common/alloc.h"
#include "lib/importers/tflite/tfl_flexbuf.h"
#include "lib/importers/tflite/tflite_import.h"
#include "lib/importers/tflite/tflite_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_tflite: %s\n", what);
  abort();
}

/* Sums bytes so that every one of them is read (and ASan sees the read). */
static uint32_t touch(const void *p, size_t n) {
  const uint8_t *b = p;
  uint32_t h = 0;
  for (size_t i = 0; i < n; i++) h = h * 31 + b[i];
  return h;
}

static uint32_t walk_options(const tfl_table_t *t) {
  uint32_t h = 0;
  for (unsigned f = 0; f < 16; f++) {
    int bad = 0;
    int32_t vec[16];
    float x = tfl_table_f32(t, f, 0.0f, &bad);
    h += (uint32_t)tfl_table_i32(t, f, 0, &bad) + (uint32_t)tfl_table_i8(t, f, 0, &bad) +
         tfl_table_bool(t, f, 0, &bad) + touch(&x, sizeof(x));
    uint32_t n = tfl_table_i32_vector(t, f, vec, 16, &bad);
    h += touch(vec, sizeof(vec[0]) * (n < 16 ? n : 16)) + (uint32_t)bad;
  }
  return h;
}

/* Custom options must lie inside the input, and the FlexBuffer reader must
 * answer every lookup on them without reading outside. */
static uint32_t walk_custom_options(const tfl_operator_t *op, const uint8_t *data, size_t size) {
  if (!op->custom_options) return 0;
  check(op->custom_options >= data && op->custom_options_size <= size &&
            (size_t)(op->custom_options - data) <= size - op->custom_options_size,
        "custom options outside the input");
  static const char *const kKeys[] = {"max_detections", "nms_iou_threshold", "y_scale", "", "x"};
  tfl_flex_map_t map;
  char err[160];
  uint32_t h = 0;
  if (!tfl_flex_open(op->custom_options, op->custom_options_size, &map, err, sizeof err))
    return touch(err, strlen(err));
  for (size_t k = 0; k < sizeof kKeys / sizeof kKeys[0]; k++) {
    double v = 0;
    int found = tfl_flex_number(&map, kKeys[k], &v, err, sizeof err);
    h += (uint32_t)found + touch(&v, sizeof v) + (found < 0 ? touch(err, strlen(err)) : 0);
  }
  return h;
}

static uint32_t walk_tensor(const tfl_tensor_t *t, const uint8_t *data, size_t size) {
  uint32_t h = touch(t->name, strlen(t->name)) + touch(tfl_type_name(t->type), 1);
  check(t->rank <= 8, "rank above 8");
  h += touch(t->shape, t->rank * sizeof(int32_t));
  check(!t->data || (t->data >= data && t->data_size <= size &&
                     (size_t)(t->data - data) <= size - t->data_size),
        "tensor data outside the input");
  if (t->data) h += touch(t->data, t->data_size);
  h += touch(t->quant.scale, t->quant.scale_count * sizeof(float));
  h += touch(t->quant.zero_point, t->quant.zero_point_count * sizeof(int64_t));
  return h;
}

static int index_ok(int32_t i, uint32_t count, int allow_omitted) {
  return (allow_omitted && i == -1) || (i >= 0 && (uint32_t)i < count);
}

static uint32_t walk_operator(const tfl_model_t *m, const tfl_operator_t *op,
                              const uint8_t *data, size_t size) {
  check(op->opcode_index < m->opcode_count, "opcode_index out of range");
  uint32_t h = touch(tfl_builtin_name(op->builtin_code), 1);
  if (op->custom_code) h += touch(op->custom_code, strlen(op->custom_code));
  for (uint32_t i = 0; i < op->input_count; i++)
    check(index_ok(op->inputs[i], m->tensor_count, 1), "operator input out of range");
  for (uint32_t i = 0; i < op->output_count; i++)
    check(index_ok(op->outputs[i], m->tensor_count, 0), "operator output out of range");
  h += walk_custom_options(op, data, size);
  return h + walk_options(&op->options) + walk_options(&op->options2);
}

static uint32_t walk_model(const tfl_model_t *m, const uint8_t *data, size_t size) {
  uint32_t h = touch(m->description, strlen(m->description));
  for (uint32_t i = 0; i < m->tensor_count; i++) h += walk_tensor(&m->tensors[i], data, size);
  for (uint32_t i = 0; i < m->input_count; i++)
    check(index_ok(m->inputs[i], m->tensor_count, 0), "graph input out of range");
  for (uint32_t i = 0; i < m->output_count; i++)
    check(index_ok(m->outputs[i], m->tensor_count, 0), "graph output out of range");
  for (uint32_t i = 0; i < m->operator_count; i++) h += walk_operator(m, &m->operators[i], data, size);
  return h;
}

/* The importer end to end; compiled out with -DFUZZ_TFLITE_READER_ONLY to
 * fuzz the reader alone while the emitter has a known finding. */
static void fuzz_import(const uint8_t *data, size_t size, tinyml_allocator_t *a,
                        fuzz_counter_t *c) {
#ifdef FUZZ_TFLITE_READER_ONLY
  (void)data, (void)size, (void)a, (void)c;
#else
  char *text = NULL;
  size_t length = 0;
  tinyml_status_t status = tfl_import(data, size, a, &text, &length);
  check(!status == (text != NULL), "a text with a failure, or none with success");
  if (text) check(strlen(text) == length, "text length differs from strlen");
  tinyml__free(a, text);
  tinyml_status_free(status);
  check(c->live == 0, "tfl_import leaked");
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_counter_t c = {0};
  tinyml_allocator_t a = fuzz_counting_allocator(&c);
  fuzz_import(data, size, &a, &c);
  tfl_model_t *m = NULL;
  tinyml_status_t status = tfl_read(data, size, &a, &m);
  check(!status == (m != NULL), "a model with a failure, or none with success");
  if (m) {
    volatile uint32_t sink = walk_model(m, data, size);
    (void)sink;
  }
  tfl_model_free(m, &a);
  tinyml_status_free(status);
  check(c.live == 0, "tfl_read leaked");
  fuzz_compile(data, size);
  return 0;
}
