/* Malformed models: tfl_read and tfl_import must return a status (or
 * succeed) and never crash, read out of bounds or leak, whatever the bytes.
 * Built twice: normally, and (with -Dsanitize_tests=true) with the importer
 * sources compiled in under ASan/UBSan, which is what catches a stray read.
 *
 * Each input sits in a heap buffer of exactly its size, so a read one byte
 * past the end is an ASan error.  When a read succeeds, everything the model
 * points at is walked and every option accessor called (tt_check_model).
 *
 * Usage: test_tflite_corrupt MODELS_DIR
 * Exit 77 (skip) when MODELS_DIR is missing, unless CI=true. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/common/alloc.h"
#include "lib/importers/tflite/tflite_import.h"
#include "tflite_test_util.h"

static const char *models_dir;
static int models_missing;

/* The two smallest models: every byte of them is corrupted in turn. */
static const char *const sweep_models[] = {"simple_add.tflite",
                                           "hello_world_int8.tflite"};

typedef struct counts {
  size_t accepted, rejected;
} counts_t;

/* Reads `bytes` with the reader and with the importer; returns whether the
 * reader accepted them. */
static int try_bytes(const uint8_t *bytes, size_t size, counts_t *counts) {
  tt_alloc_t c;
  tt_alloc_init(&c);
  tfl_model_t *m = NULL;
  tinyml_status_t status = tfl_read(bytes, size, &c.allocator, &m);
  int accepted = status == TINYML_OK;
  if (accepted) {
    tt_check_model(m, bytes, size);
    tfl_model_free(m, &c.allocator);
    counts->accepted++;
  } else {
    assert_null(m);
    tt_expect_error(status);
    counts->rejected++;
  }
  char *text = NULL;
  size_t length = 0;
  status = tfl_import(bytes, size, &c.allocator, &text, &length);
  if (status) {
    assert_null(text);
    tt_expect_error(status);
  } else {
    assert_non_null(text);
    assert_int_equal(length, strlen(text));
    tinyml_allocator_t a = tinyml__allocator_or_default(&c.allocator);
    tinyml__free(&a, text);
  }
  assert_int_equal(0, c.live);
  return accepted;
}

/* A copy in a buffer of exactly `size` bytes (malloc(0) may be NULL). */
static uint8_t *exact_copy(const uint8_t *src, size_t size) {
  uint8_t *p = malloc(size ? size : 1);
  assert_non_null(p);
  if (size) memcpy(p, src, size);
  return p;
}

static uint8_t *load(const char *name, size_t *size) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/tflm/%s", models_dir, name);
  uint8_t *bytes = tt_read_file(path, size);
  if (!bytes) fail_msg("cannot read %s", path);
  return bytes;
}

static int have_models(void) {
  if (tt_require_dir(models_dir)) return 1;
  models_missing = 1;
  return 0;
}

static uint32_t get32(const uint8_t *b) {
  return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void put32(uint8_t *b, uint32_t v) {
  for (int i = 0; i < 4; i++) b[i] = (uint8_t)(v >> (8 * i));
}

static void test_short_and_header(void **state) {
  (void)state;
  counts_t n = {0, 0};
  static const uint8_t none[1] = {0};
  assert_false(try_bytes(none, 0, &n));
  if (!have_models()) skip();
  size_t size;
  uint8_t *model = load("simple_add.tflite", &size);
  assert_true(try_bytes(model, size, &n));
  uint8_t *seven = exact_copy(model, 7);
  assert_false(try_bytes(seven, 7, &n));
  free(seven);
  uint8_t *p = exact_copy(model, size);
  p[4] = 'X'; /* identifier */
  assert_false(try_bytes(p, size, &n));
  memcpy(p + 4, "TFL3", 4);
  uint32_t root = get32(p);
  const uint32_t roots[] = {0, 4, 7, root + 1, root + 2, (uint32_t)size - 4,
                            (uint32_t)size, (uint32_t)size + 4, 0x7fffffffu, 0xffffffffu};
  for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
    put32(p, roots[i]);
    assert_false(try_bytes(p, size, &n));
  }
  free(p);
  free(model);
}

static void sweep_truncations(const char *name) {
  size_t size;
  uint8_t *model = load(name, &size);
  counts_t n = {0, 0};
  for (size_t len = 0; len <= size; len++) {
    uint8_t *p = exact_copy(model, len);
    try_bytes(p, len, &n);
    free(p);
  }
  /* The whole file is read; a prefix may pass only if what it cuts off
   * (padding, metadata) is never referred to. */
  assert_true(n.accepted >= 1);
  print_message("%s: %zu truncations accepted, %zu rejected\n", name, n.accepted,
                n.rejected);
  free(model);
}

static void test_truncations(void **state) {
  (void)state;
  if (!have_models()) skip();
  for (size_t i = 0; i < sizeof(sweep_models) / sizeof(sweep_models[0]); i++)
    sweep_truncations(sweep_models[i]);
}

static void sweep_bytes(const char *name) {
  size_t size;
  uint8_t *model = load(name, &size);
  uint8_t *p = exact_copy(model, size);
  counts_t n = {0, 0};
  for (size_t at = 0; at < size; at++) {
    const uint8_t values[] = {0x00, 0xff, 0x7f, 0x80, (uint8_t)(model[at] ^ 1)};
    for (size_t v = 0; v < sizeof(values); v++) {
      if (values[v] == model[at]) continue;
      p[at] = values[v];
      try_bytes(p, size, &n);
    }
    p[at] = model[at];
  }
  print_message("%s: %zu byte changes accepted, %zu rejected\n", name,
                n.accepted, n.rejected);
  assert_true(n.rejected > 0);
  free(p);
  free(model);
}

static void test_every_byte(void **state) {
  (void)state;
  if (!have_models()) skip();
  for (size_t i = 0; i < sizeof(sweep_models) / sizeof(sweep_models[0]); i++)
    sweep_bytes(sweep_models[i]);
}

/* Aligned 32-bit words set to values that make offsets and lengths point
 * far away, which single-byte changes reach only for the low byte. */
static void test_every_word(void **state) {
  (void)state;
  if (!have_models()) skip();
  size_t size;
  uint8_t *model = load("simple_add.tflite", &size);
  uint8_t *p = exact_copy(model, size);
  counts_t n = {0, 0};
  const uint32_t values[] = {0x7fffffffu, 0x80000000u, 0xfffffffcu, 0x3fffffffu,
                             (uint32_t)size, (uint32_t)size - 4, 1000001u};
  for (size_t at = 0; at + 4 <= size; at += 4) {
    for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
      put32(p + at, values[v]);
      try_bytes(p, size, &n);
    }
    memcpy(p + at, model + at, 4);
  }
  print_message("simple_add: %zu word changes accepted, %zu rejected\n",
                n.accepted, n.rejected);
  free(p);
  free(model);
}

/* ---- shared tables ------------------------------------------------------
 * A FlatBuffer may point many vector entries at one table.  This builds,
 * front to back so every uoffset points forward, a model whose subgraph
 * has `count` tensors that are all the same table, named by one string of
 * `name_len` bytes.  Copying each name would take count * name_len bytes. */

typedef struct writer {
  uint8_t *b;
  size_t len;
} writer_t;

static size_t w32(writer_t *w, uint32_t v) {
  put32(w->b + w->len, v);
  w->len += 4;
  return w->len - 4;
}

/* A vtable of `n` field offsets for a table of `size` bytes, padded to 4. */
static size_t vtable(writer_t *w, uint16_t size, const uint16_t *fields, unsigned n) {
  size_t at = w->len;
  uint16_t head[2] = {(uint16_t)(4 + 2 * n), size};
  for (unsigned i = 0; i < 2 + n; i++) {
    uint16_t v = i < 2 ? head[i] : fields[i - 2];
    w->b[w->len++] = (uint8_t)v;
    w->b[w->len++] = (uint8_t)(v >> 8);
  }
  while (w->len % 4) w->b[w->len++] = 0;
  return at;
}

static void point(writer_t *w, size_t from, size_t to) {
  put32(w->b + from, (uint32_t)(to - from));
}

static uint8_t *shared_name_model(uint32_t count, uint32_t name_len, size_t *size) {
  writer_t w = {calloc(1, 64 + 4 * (size_t)count + name_len + 64), 0};
  assert_non_null(w.b);
  size_t root = w32(&w, 0);
  memcpy(w.b + w.len, "TFL3", 4);
  w.len += 4;
  const uint16_t model_fields[] = {4, 0, 8}; /* version, -, subgraphs */
  size_t vt = vtable(&w, 12, model_fields, 3);
  size_t model = w32(&w, 0);
  put32(w.b + model, (uint32_t)(model - vt));
  point(&w, root, model);
  w32(&w, 3);
  size_t subgraphs_field = w32(&w, 0);
  point(&w, subgraphs_field, w.len);
  w32(&w, 1);
  size_t subgraph_entry = w32(&w, 0);
  const uint16_t subgraph_fields[] = {4}; /* tensors */
  vt = vtable(&w, 8, subgraph_fields, 1);
  size_t subgraph = w32(&w, 0);
  put32(w.b + subgraph, (uint32_t)(subgraph - vt));
  point(&w, subgraph_entry, subgraph);
  size_t tensors_field = w32(&w, 0);
  point(&w, tensors_field, w.len);
  w32(&w, count);
  size_t entries = w.len;
  w.len += 4 * (size_t)count;
  const uint16_t tensor_fields[] = {0, 0, 0, 4}; /* shape, type, buffer, name */
  vt = vtable(&w, 8, tensor_fields, 4);
  size_t tensor = w32(&w, 0);
  put32(w.b + tensor, (uint32_t)(tensor - vt));
  for (uint32_t i = 0; i < count; i++) point(&w, entries + 4 * (size_t)i, tensor);
  size_t name_field = w32(&w, 0);
  point(&w, name_field, w.len);
  w32(&w, name_len);
  memset(w.b + w.len, 'n', name_len);
  w.len += name_len + 1; /* calloc'd: NUL-terminated */
  *size = w.len;
  return w.b;
}

static void test_shared_tables(void **state) {
  (void)state;
  size_t size;
  /* Small: decoded in full, 3 copies of the name. */
  uint8_t *small = shared_name_model(3, 10, &size);
  tfl_model_t *m = NULL;
  assert_null(tfl_read(small, size, NULL, &m));
  assert_int_equal(3, m->tensor_count);
  assert_int_equal(10, strlen(m->tensors[2].name));
  tfl_model_free(m, NULL);
  free(small);
  /* 100000 tensors with a 100 kB name: 10 GB of copies from a 500 kB file. */
  uint8_t *big = shared_name_model(100000, 100000, &size);
  tt_alloc_t c;
  tt_alloc_init(&c);
  tinyml_status_t status = tfl_read(big, size, &c.allocator, &m);
  assert_int_equal(TINYML_STATUS_INVALID_MODEL, tinyml_status_code(status));
  assert_non_null(strstr(tinyml_status_message(status), "share one table"));
  print_message("%s\n", tinyml_status_message(status));
  tinyml_status_free(status);
  assert_int_equal(0, c.live);
  free(big);
}

int main(int argc, char **argv) {
  models_dir = argc > 1 ? argv[1] : NULL;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_short_and_header),
      cmocka_unit_test(test_truncations),
      cmocka_unit_test(test_every_byte),
      cmocka_unit_test(test_every_word),
      cmocka_unit_test(test_shared_tables),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  return failed ? failed : models_missing ? 77 : 0;
}
