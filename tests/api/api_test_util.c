#include "api_test_util.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static const char *g_model_dir;

void api_init_model_dir(int argc, char **argv) {
  g_model_dir = argc > 1 ? argv[1] : getenv("TINYML_API_MODELS");
  if (g_model_dir && *g_model_dir) return;
  fprintf(stderr, "usage: %s MODEL_DIR (or set TINYML_API_MODELS)\n", argv[0]);
  exit(2);
}

int api_shared_present(const char *shared, const char *rel) {
  struct stat st;
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", shared, rel);
  if (stat(path, &st) == 0) return 1;
  if (getenv("CI") && strcmp(getenv("CI"), "true") == 0)
    fail_msg("%s is missing, and CI must provide it", path);
  printf("SKIP: %s is missing (../shared not provided)\n", path);
  return 0;
}

const char *api_model_dir(void) { return g_model_dir; }

char *api_read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  char *buf = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (!buf) return NULL;
  buf[n] = '\0';
  *size = (size_t)n;
  return buf;
}

static char *read_model_file(const char *path, size_t *size) {
  char *text = api_read_file(path, size);
  if (!text) fail_msg("cannot read the model %s", path);
  return text;
}

char *api_read_model(const char *name, size_t *size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.mlir", g_model_dir, name);
  return read_model_file(path, size);
}

static const char *temp_root(void) {
  const char *dir = getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

const char *api_temp_path(char *buf, size_t cap, const char *suffix) {
  snprintf(buf, cap, "%s/tinyml_api_XXXXXX%s", temp_root(), suffix);
  int fd = mkstemps(buf, (int)strlen(suffix));
  if (fd < 0) fail_msg("mkstemps(%s) failed", buf);
  close(fd);
  return buf;
}

const char *api_temp_dir(char *buf, size_t cap) {
  snprintf(buf, cap, "%s/tinyml_api_XXXXXX", temp_root());
  if (!mkdtemp(buf)) fail_msg("mkdtemp(%s) failed", buf);
  return buf;
}

/* ---- statuses ------------------------------------------------------------ */

void api_assert_ok(tinyml_status_t status, const char *what) {
  if (status == TINYML_OK) return;
  print_error("%s failed: %s: %s\n", what,
              tinyml_status_code_name(tinyml_status_code(status)),
              tinyml_status_message(status));
  tinyml_status_free(status);
  fail();
}

void api_expect_error_v(tinyml_status_t status, tinyml_status_code_t code,
                        const char *const *needles) {
  if (status == TINYML_OK) fail_msg("expected %s, got OK", tinyml_status_code_name(code));
  const char *msg = tinyml_status_message(status);
  if (tinyml_status_code(status) != code)
    fail_msg("expected %s, got %s: %s", tinyml_status_code_name(code),
             tinyml_status_code_name(tinyml_status_code(status)), msg);
  for (; *needles; ++needles)
    if (!strstr(msg, *needles))
      fail_msg("%s message does not mention '%s': %s",
               tinyml_status_code_name(code), *needles, msg);
  tinyml_status_free(status);
}

/* ---- compile and load ---------------------------------------------------- */

tinyml_blob_t *api_compile_file(const char *path,
                                const tinyml_compile_options_t *options) {
  size_t size;
  char *text = read_model_file(path, &size);
  tinyml_blob_t *blob = NULL;
  tinyml_status_t st = tinyml_compile(text, size, options, &blob);
  free(text);
  api_assert_ok(st, path);
  assert_non_null(blob);
  return blob;
}

tinyml_blob_t *api_compile_model(const char *name,
                                 const tinyml_compile_options_t *options) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.mlir", g_model_dir, name);
  return api_compile_file(path, options);
}

tinyml_module_t *api_load_blob(const tinyml_blob_t *blob) {
  tinyml_module_t *module = NULL;
  api_assert_ok(tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob),
                                   NULL, &module),
                "tinyml_module_load");
  assert_non_null(module);
  return module;
}

api_fixture_t api_add = {"add_mul_broadcast", NULL, NULL};
api_fixture_t api_conv = {"conv2d", NULL, NULL};

int api_fixtures_setup(void **state) {
  (void)state;
  api_fixture_t *all[] = {&api_add, &api_conv};
  for (size_t i = 0; i < 2; ++i) {
    all[i]->blob = api_compile_model(all[i]->model, NULL);
    all[i]->module = api_load_blob(all[i]->blob);
  }
  return 0;
}

int api_fixtures_teardown(void **state) {
  (void)state;
  api_fixture_t *all[] = {&api_add, &api_conv};
  for (size_t i = 0; i < 2; ++i) {
    tinyml_module_release(all[i]->module);
    tinyml_blob_release(all[i]->blob);
    all[i]->module = NULL;
    all[i]->blob = NULL;
  }
  return 0;
}

/* The block starts with the offset back to what malloc returned. */
uint8_t *api_aligned_copy(const void *data, size_t size, size_t alignment,
                          size_t offset) {
  size_t header = sizeof(size_t);
  uint8_t *raw = malloc(size + alignment + offset + header + 1);
  assert_non_null(raw);
  uintptr_t start = (uintptr_t)(raw + header + alignment - 1) & ~(uintptr_t)(alignment - 1);
  uint8_t *p = (uint8_t *)start + offset;
  size_t back = (size_t)(p - raw);
  memcpy(p - header, &back, header);
  if (size) memcpy(p, data, size);
  return p;
}

void api_aligned_free(void *p) {
  if (!p) return;
  size_t back;
  memcpy(&back, (uint8_t *)p - sizeof(size_t), sizeof back);
  free((uint8_t *)p - back);
}

/* ---- a counting, failing allocator --------------------------------------- */

/* Each block carries its size in front so live_bytes can be tracked. */
#define BLOCK_HEADER 64

static void *counting_alloc(void *self, size_t size, size_t alignment) {
  api_counting_alloc_t *c = self;
  c->calls++;
  if (alignment == 0 || (alignment & (alignment - 1)) || alignment > 4096)
    c->bad_requests++;
  if ((c->fail_at && c->calls == c->fail_at) ||
      (c->fail_at && c->fail_after && c->calls > c->fail_at) ||
      (c->max_size && size > c->max_size))
    return NULL;
  size_t head = alignment > BLOCK_HEADER ? alignment : BLOCK_HEADER;
  void *raw = NULL;
  if (size > SIZE_MAX - head || posix_memalign(&raw, head, head + size) != 0)
    return NULL;
  memcpy((uint8_t *)raw + head - sizeof(size_t) * 2, &head, sizeof head);
  memcpy((uint8_t *)raw + head - sizeof(size_t), &size, sizeof size);
  c->allocs++;
  c->live_bytes += size;
  return (uint8_t *)raw + head;
}

static void counting_free(void *self, void *ptr) {
  api_counting_alloc_t *c = self;
  size_t head, size;
  memcpy(&head, (uint8_t *)ptr - sizeof(size_t) * 2, sizeof head);
  memcpy(&size, (uint8_t *)ptr - sizeof(size_t), sizeof size);
  c->frees++;
  c->live_bytes -= size;
  free((uint8_t *)ptr - head);
}

void api_counting_alloc_init(api_counting_alloc_t *c, size_t fail_at,
                             int fail_after) {
  memset(c, 0, sizeof *c);
  c->allocator.self = c;
  c->allocator.alloc = counting_alloc;
  c->allocator.free = counting_free;
  c->fail_at = fail_at;
  c->fail_after = fail_after;
}

/* ---- I/O buffers --------------------------------------------------------- */

/* From a xorshift32 stream: float32 uniform in [-1, 1), bools 0 or 1, any
 * other element bytes of 1 or 2 (small, non-zero integers and halfs). */
static void fill_input(void *buf, size_t bytes, tinyml_dtype_t dtype, uint32_t seed) {
  uint32_t s = seed * 2654435761u + 1u;
  for (size_t i = 0; i < bytes; i += (dtype == TINYML_DTYPE_FLOAT32 ? 4 : 1)) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    if (dtype == TINYML_DTYPE_FLOAT32 && i + 4 <= bytes) {
      float v = (float)((int32_t)(s >> 8) - (1 << 23)) / (float)(1 << 23);
      memcpy((uint8_t *)buf + i, &v, sizeof v);
    } else {
      ((uint8_t *)buf)[i] = (uint8_t)(s % 2 + (dtype != TINYML_DTYPE_BOOL));
    }
  }
}

static void *alloc_tensor(const tinyml_tensor_info_t *info, uint32_t seed, int fill) {
  void *p = NULL;
  if (posix_memalign(&p, 64, info->byte_size ? info->byte_size : 1) != 0) return NULL;
  if (fill) fill_input(p, info->byte_size, info->dtype, seed);
  return p;
}

typedef tinyml_status_t (*info_fn)(const tinyml_module_t *, size_t, tinyml_tensor_info_t *);

/* Allocates `count` buffers described by `get`; 0 when one is too big. */
static int alloc_side(const tinyml_module_t *m, info_fn get, size_t count,
                      size_t max_bytes, uint32_t seed, void **bufs, size_t *sizes) {
  for (size_t i = 0; i < count; ++i) {
    tinyml_tensor_info_t info;
    tinyml_tensor_info_init(&info);
    api_assert_ok(get(m, i, &info), "tensor info");
    if (info.byte_size > max_bytes) return 0;
    bufs[i] = alloc_tensor(&info, seed + (uint32_t)i, get == tinyml_module_input_info);
    assert_non_null(bufs[i]);
    sizes[i] = info.byte_size;
  }
  return 1;
}

int api_io_alloc(const tinyml_module_t *module, size_t max_bytes, uint32_t seed,
                 api_io_t *io) {
  memset(io, 0, sizeof *io);
  size_t ni = tinyml_module_input_count(module), no = tinyml_module_output_count(module);
  if (ni > API_MAX_IO || no > API_MAX_IO) return 0;
  io->input_count = ni;
  io->output_count = no;
  if (alloc_side(module, tinyml_module_input_info, ni, max_bytes, seed, io->inputs,
                 io->input_sizes) &&
      alloc_side(module, tinyml_module_output_info, no, max_bytes, 0, io->outputs,
                 io->output_sizes))
    return 1;
  api_io_free(io);
  return 0;
}

void api_io_free(api_io_t *io) {
  for (size_t i = 0; i < API_MAX_IO; ++i) {
    free(io->inputs[i]);
    free(io->outputs[i]);
  }
  memset(io, 0, sizeof *io);
}

tinyml_status_t api_io_bind(tinyml_context_t *context, const api_io_t *io) {
  for (size_t i = 0; i < io->input_count; ++i)
    API_RETURN_IF_ERROR(
        tinyml_context_set_input(context, i, io->inputs[i], io->input_sizes[i]));
  for (size_t i = 0; i < io->output_count; ++i)
    API_RETURN_IF_ERROR(
        tinyml_context_set_output(context, i, io->outputs[i], io->output_sizes[i]));
  return TINYML_OK;
}

void api_io_poison_outputs(api_io_t *io, uint8_t byte) {
  for (size_t i = 0; i < io->output_count; ++i)
    memset(io->outputs[i], byte, io->output_sizes[i]);
}

int api_io_outputs_equal(const api_io_t *a, const api_io_t *b) {
  if (a->output_count != b->output_count) return 0;
  for (size_t i = 0; i < a->output_count; ++i)
    if (a->output_sizes[i] != b->output_sizes[i] ||
        memcmp(a->outputs[i], b->outputs[i], a->output_sizes[i]) != 0)
      return 0;
  return 1;
}

tinyml_status_t api_run(const tinyml_module_t *module,
                        const tinyml_context_options_t *options, api_io_t *io,
                        int invokes) {
  tinyml_context_t *ctx = NULL;
  API_RETURN_IF_ERROR(tinyml_context_create(module, options, &ctx));
  tinyml_status_t st = api_io_bind(ctx, io);
  for (int i = 0; !st && i < invokes; ++i) st = tinyml_context_invoke(ctx);
  tinyml_context_release(ctx);
  return st;
}

double api_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int api_process_threads(void) {
  DIR *d = opendir("/proc/self/task");
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

void api_run_seeded(const tinyml_module_t *module, uint32_t seed, api_io_t *io) {
  assert_true(api_io_alloc(module, SIZE_MAX, seed, io));
  api_io_poison_outputs(io, 0xcd);
  api_assert_ok(api_run(module, NULL, io, 1), "run");
}
