#include "tflite_test_util.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

uint8_t *tt_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *data = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
    data = malloc(n ? (size_t)n : 1);
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = data ? (size_t)n : 0;
  return data;
}

int tt_require_dir(const char *dir) {
  struct stat st;
  if (dir && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 1;
  print_message("SKIP: %s missing\n", dir ? dir : "(no directory given)");
  const char *ci = getenv("CI");
  if (ci && strcmp(ci, "true") == 0)
    fail_msg("CI=true: the shared models are required");
  return 0;
}

/* ---- listing models ---------------------------------------------------- */

typedef struct paths {
  char **items;
  size_t count, cap;
} paths_t;

static void add_path(paths_t *p, const char *dir, const char *name) {
  if (p->count == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 16;
    p->items = realloc(p->items, p->cap * sizeof(*p->items));
    assert_non_null(p->items);
  }
  size_t n = strlen(dir) + strlen(name) + 2;
  p->items[p->count] = malloc(n);
  assert_non_null(p->items[p->count]);
  snprintf(p->items[p->count++], n, "%s/%s", dir, name);
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void walk(paths_t *p, const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    size_t before = p->count;
    add_path(p, dir, e->d_name);
    struct stat st;
    char *path = p->items[before];
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
      p->count--; /* a directory: recurse instead */
      walk(p, path);
      free(path);
    } else if (!ends_with(path, ".tflite")) {
      p->count--;
      free(path);
    }
  }
  closedir(d);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tt_list_models(const char *dir, char ***out) {
  paths_t p = {NULL, 0, 0};
  walk(&p, dir);
  if (p.count) qsort(p.items, p.count, sizeof(*p.items), by_name);
  *out = p.items;
  return p.count;
}

void tt_free_paths(char **paths, size_t count) {
  for (size_t i = 0; i < count; i++) free(paths[i]);
  free(paths);
}

/* ---- counting allocator ------------------------------------------------ */

static void *counting_alloc(void *self, size_t size, size_t alignment) {
  tt_alloc_t *c = self;
  c->calls++;
  if (c->fail_at && (c->calls == c->fail_at || (c->fail_after && c->calls > c->fail_at)))
    return NULL;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  void *p = NULL;
  if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
  c->live++;
  return p;
}

static void counting_free(void *self, void *ptr) {
  tt_alloc_t *c = self;
  assert_true(c->live > 0);
  c->live--;
  free(ptr);
}

void tt_alloc_init(tt_alloc_t *c) {
  memset(c, 0, sizeof(*c));
  c->allocator.self = c;
  c->allocator.alloc = counting_alloc;
  c->allocator.free = counting_free;
}

/* ---- checking a decoded model ------------------------------------------ */

static uint64_t touch_bytes(const void *p, size_t n) {
  const uint8_t *b = p;
  uint64_t h = 0;
  for (size_t i = 0; i < n; i++) h = h * 31 + b[i];
  return h;
}

static uint64_t check_options(const tfl_table_t *t, const uint8_t *bytes, size_t size) {
  if (!t->buf) return 0;
  assert_ptr_equal(bytes, t->buf);
  assert_int_equal(size, t->size);
  assert_true(t->pos < size);
  uint64_t h = 0;
  for (unsigned f = 0; f < 16; f++) {
    int bad = 0;
    int32_t vec[8];
    float x = tfl_table_f32(t, f, 0.0f, &bad);
    h += (uint64_t)tfl_table_i32(t, f, 0, &bad) + (uint64_t)tfl_table_i8(t, f, 0, &bad) +
         tfl_table_bool(t, f, 0, &bad) + touch_bytes(&x, sizeof(x));
    uint32_t n = tfl_table_i32_vector(t, f, vec, 8, &bad);
    h += touch_bytes(vec, sizeof(vec[0]) * (n < 8 ? n : 8)) + (unsigned)bad;
  }
  return h;
}

static uint64_t check_tensor(const tfl_tensor_t *t, const uint8_t *bytes, size_t size) {
  assert_non_null(t->name);
  uint64_t h = touch_bytes(t->name, strlen(t->name)) + (uint64_t)t->type;
  h += touch_bytes(tfl_type_name(t->type), strlen(tfl_type_name(t->type)));
  assert_true(t->rank <= 8);
  assert_true(t->rank == 0 || t->shape != NULL);
  for (uint32_t i = 0; i < t->rank; i++) assert_true(t->shape[i] >= 0);
  if (t->data) {
    assert_true(t->data >= bytes && t->data_size <= size &&
                (size_t)(t->data - bytes) <= size - t->data_size);
    h += touch_bytes(t->data, t->data_size);
  } else {
    assert_int_equal(0, t->data_size);
  }
  const tfl_quant_t *q = &t->quant;
  assert_true(q->scale_count == 0 || q->scale != NULL);
  assert_true(q->zero_point_count == 0 || q->zero_point != NULL);
  h += touch_bytes(q->scale, q->scale_count * sizeof(float));
  h += touch_bytes(q->zero_point, q->zero_point_count * sizeof(int64_t));
  if (q->scale_count > 1)
    assert_true(q->quantized_dimension >= 0 && (uint32_t)q->quantized_dimension < t->rank);
  return h;
}

static void check_indices(const int32_t *v, uint32_t n, uint32_t limit, int allow_omitted) {
  assert_true(n == 0 || v != NULL);
  for (uint32_t i = 0; i < n; i++)
    assert_true((allow_omitted && v[i] == -1) || (v[i] >= 0 && (uint32_t)v[i] < limit));
}

static uint64_t check_operator(const tfl_model_t *m, const tfl_operator_t *op,
                               const uint8_t *bytes, size_t size) {
  assert_true(op->opcode_index < m->opcode_count);
  assert_ptr_equal(m->custom_codes[op->opcode_index], op->custom_code);
  uint64_t h = (uint64_t)op->builtin_code + (uint64_t)op->version;
  if (op->custom_code) h += touch_bytes(op->custom_code, strlen(op->custom_code));
  h += touch_bytes(tfl_builtin_name(op->builtin_code), strlen(tfl_builtin_name(op->builtin_code)));
  check_indices(op->inputs, op->input_count, m->tensor_count, 1);
  check_indices(op->outputs, op->output_count, m->tensor_count, 0);
  return h + check_options(&op->options, bytes, size) +
         check_options(&op->options2, bytes, size);
}

uint64_t tt_check_model(const tfl_model_t *m, const uint8_t *bytes, size_t size) {
  assert_non_null(m);
  assert_non_null(m->description);
  assert_true(m->subgraph_count >= 1);
  uint64_t h = touch_bytes(m->description, strlen(m->description)) + m->version;
  assert_true(m->tensor_count == 0 || m->tensors != NULL);
  for (uint32_t i = 0; i < m->tensor_count; i++)
    h += check_tensor(&m->tensors[i], bytes, size);
  check_indices(m->inputs, m->input_count, m->tensor_count, 0);
  check_indices(m->outputs, m->output_count, m->tensor_count, 0);
  assert_true(m->opcode_count == 0 || m->custom_codes != NULL);
  for (uint32_t i = 0; i < m->opcode_count; i++)
    if (m->custom_codes[i]) h += touch_bytes(m->custom_codes[i], strlen(m->custom_codes[i]));
  assert_true(m->operator_count == 0 || m->operators != NULL);
  for (uint32_t i = 0; i < m->operator_count; i++)
    h += check_operator(m, &m->operators[i], bytes, size);
  return h;
}

void tt_expect_error(tinyml_status_t status) {
  assert_non_null(status);
  tinyml_status_code_t code = tinyml_status_code(status);
  const char *message = tinyml_status_message(status);
  if (code == TINYML_STATUS_INTERNAL || strncmp(message, "tflite: ", 8) != 0)
    fail_msg("unexpected status %s: %s", tinyml_status_code_name(code), message);
  tinyml_status_free(status);
}
