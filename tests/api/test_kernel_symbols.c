/* White-box: the code the compiler emits may only import what the runtime
 * provides (TINYML_EXE_IMPORTS in lib/module/executable_abi.h: the memory
 * functions and libm), and never an allocator.
 *
 * Usage: test_kernel_symbols GEN_MODULE NM (MODEL_DIR | MODEL.mlir)...
 *
 * Every *.mlir in each MODEL_DIR, and each MODEL.mlir, is compiled with
 * GEN_MODULE (the public API, in a child process), the module is read back
 * with lib/module's verifying reader, each executable image is written to a
 * temporary file and its dynamic symbols are listed with NM (llvm-nm or GNU
 * nm) - an independent ELF reader, not the runtime's own loader. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "lib/module/executable_abi.h"
#include "lib/module/module.h"

#define MAX_MODELS 256

static const char *g_gen_module, *g_nm;
static char g_tmpdir[256];

static const char *const g_allowed[] = TINYML_EXE_IMPORTS;
static const char *const g_forbidden[] = {"malloc", "free", "calloc", "realloc",
                                          "aligned_alloc", "posix_memalign"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct model_case {
  char name[128];
  char path[4096];
} model_case_t;

static int in_list(const char *name, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (strcmp(name, list[i]) == 0) return 1;
  return 0;
}

/* Runs a shell command built from `fmt`; returns its exit status. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...) {
  char cmd[12288];
  va_list args;
  va_start(args, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, args);
  va_end(args);
  int rc = system(cmd);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Reads a file into 64-byte aligned memory (module bytes must be aligned). */
static uint8_t *read_aligned(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  assert_int_equal(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  assert_true(n > 0);
  rewind(f);
  void *buf = NULL;
  assert_int_equal(posix_memalign(&buf, 64, (size_t)n), 0);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static void write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

/* Checks one `nm -D` line; counts tinyml_query and reports imports. */
static void check_nm_line(const char *model, char *line, int *query_defined) {
  char type = 0, name[256];
  char *sym = strrchr(line, ' ');
  if (!sym || strlen(line) < 3) fail_msg("%s: unexpected nm output '%s'", model, line);
  type = sym[-1];
  snprintf(name, sizeof name, "%s", sym + 1);
  name[strcspn(name, "\n@")] = '\0'; /* no versions are expected; drop them */
  if (type == 'U' || type == 'w' || type == 'v') {
    if (in_list(name, g_forbidden, COUNT(g_forbidden)))
      fail_msg("%s: the kernel code calls the allocator '%s'", model, name);
    if (!in_list(name, g_allowed, COUNT(g_allowed)))
      fail_msg("%s: undefined symbol '%s' is not in TINYML_EXE_IMPORTS", model, name);
    print_message("  %s imports %s\n", model, name);
  } else if (strcmp(name, TINYML_EXE_QUERY_SYMBOL) == 0 && type == 'T') {
    (*query_defined)++;
  }
}

static void check_image(const char *model, unsigned index, const tmod_executable_t *x) {
  char so[512], listing[sizeof so + 8];
  snprintf(so, sizeof so, "%s/%s.%u.so", g_tmpdir, model, index);
  snprintf(listing, sizeof listing, "%s.nm", so);
  write_file(so, x->image, (size_t)x->image_size);
  if (run("'%s' -D '%s' > '%s'", g_nm, so, listing) != 0)
    fail_msg("%s: %s -D %s failed", model, g_nm, so);
  FILE *f = fopen(listing, "r");
  assert_non_null(f);
  char line[512];
  int query_defined = 0;
  while (fgets(line, sizeof line, f)) check_nm_line(model, line, &query_defined);
  fclose(f);
  /* Guards against nm printing nothing: the entry point must be there. */
  if (query_defined != 1)
    fail_msg("%s: nm does not list a defined %s", model, TINYML_EXE_QUERY_SYMBOL);
  remove(listing);
  remove(so);
}

static void test_model(void **state) {
  const model_case_t *c = *state;
  if (!*g_nm) {
    print_message("no llvm-nm or nm was found at configure time: cannot list symbols\n");
    skip();
  }
  char module_path[512];
  snprintf(module_path, sizeof module_path, "%s/%s.tmlm", g_tmpdir, c->name);
  if (run("'%s' '%s' '%s'", g_gen_module, c->path, module_path) != 0)
    fail_msg("%s: compiling %s failed", c->name, c->path);
  size_t size;
  uint8_t *bytes = read_aligned(module_path, &size);
  tmod_module_t m;
  tinyml_status_t st = tmod_read(bytes, size, NULL, &m);
  if (st) fail_msg("%s: %s", c->name, tinyml_status_message(st));
  assert_true(m.executable_count > 0);
  for (uint32_t i = 0; i < m.executable_count; ++i) {
    assert_string_equal(m.executables[i].format, "elf");
    check_image(c->name, i, &m.executables[i]);
  }
  tmod_read_free(&m, NULL);
  free(bytes);
  remove(module_path);
}

static int is_mlir(const char *file) {
  size_t len = strlen(file);
  return len > 5 && strcmp(file + len - 5, ".mlir") == 0;
}

/* Adds the model at `path` (a *.mlir file); its name is the file's stem. */
static size_t add_model(const char *path, model_case_t *cases, size_t n) {
  const char *slash = strrchr(path, '/');
  const char *file = slash ? slash + 1 : path;
  if (n >= MAX_MODELS) {
    fprintf(stderr, "more than %d models\n", MAX_MODELS);
    exit(1);
  }
  snprintf(cases[n].name, sizeof cases[n].name, "%.*s", (int)(strlen(file) - 5), file);
  snprintf(cases[n].path, sizeof cases[n].path, "%s", path);
  return n + 1;
}

/* Adds `arg` if it is a *.mlir file, else every *.mlir in directory `arg`. */
static size_t add_models(const char *arg, model_case_t *cases, size_t n) {
  if (is_mlir(arg)) return add_model(arg, cases, n);
  DIR *d = opendir(arg);
  if (!d) {
    fprintf(stderr, "cannot open the model directory %s\n", arg);
    exit(1);
  }
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", arg, e->d_name);
    if (is_mlir(e->d_name)) n = add_model(path, cases, n);
  }
  closedir(d);
  return n;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const struct CMUnitTest *)a)->name, ((const struct CMUnitTest *)b)->name);
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s GEN_MODULE NM (MODEL_DIR | MODEL.mlir)...\n", argv[0]);
    return 2;
  }
  g_gen_module = argv[1];
  g_nm = argv[2];
  static model_case_t cases[MAX_MODELS];
  size_t n = 0;
  for (int i = 3; i < argc; ++i) n = add_models(argv[i], cases, n);
  if (n == 0) {
    fprintf(stderr, "no *.mlir models found\n");
    return 1;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(g_tmpdir, sizeof g_tmpdir, "%s/tinyml_symbols_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(g_tmpdir)) return 1;
  static struct CMUnitTest tests[MAX_MODELS];
  for (size_t i = 0; i < n; ++i)
    tests[i] = (struct CMUnitTest){cases[i].name, test_model, NULL, NULL, &cases[i]};
  qsort(tests, n, sizeof tests[0], by_name);
  int failed = _cmocka_run_group_tests("kernel_symbols", tests, n, NULL, NULL);
  run("rm -rf '%s'", g_tmpdir); /* a failed case leaves its files */
  return failed;
}
