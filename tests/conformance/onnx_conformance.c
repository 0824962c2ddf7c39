/* The ONNX backend conformance suite (Debian's libonnx-testdata) through
 * the public API.  For each test directory: compile model.onnx, run every
 * test_data_set_*, compare with the expected outputs (rtol 1e-3, atol 1e-7,
 * as onnx's backend tests do; integers exactly).  One line per test:
 *   PASS <suite>/<test>
 *   FAIL <suite>/<test>: <why>            (a wrong answer, a crash, ...)
 *   UNSUPPORTED <suite>/<test>: <reason>  (the compiler refused, clearly)
 * and the summary "N passed, N failed, N unsupported".  Each test runs in a
 * child process, so a crash is a FAIL and not the end of the run.
 *
 * Usage: onnx_conformance DATA_DIR [--suites a,b] [--filter TEXT] [--jobs N]
 *                         [--blockers]
 * --blockers also prints, per unsupported op type, how many tests it blocks. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx.pb-c.h"
#include "tinyml.h"

#define MAX_TESTS 4096
#define MAX_IO 16

typedef struct options {
  const char *data_dir;
  char suites[256];
  const char *filter;
  int jobs;
  int blockers;
} options_t;

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) *size = (size_t)n;
  return buf;
}

/* ---- tensors from .pb files --------------------------------------------- */

typedef struct tensor {
  int32_t dtype;
  size_t count, elem_size;
  uint8_t *data; /* host order */
  char name[256];
} tensor_t;

static size_t dtype_size(int32_t t) {
  switch (t) {
    case 1: case 6: return 4;  /* float, int32 */
    case 2: case 3: case 9: return 1; /* uint8, int8, bool */
    case 5: return 2;          /* int16 */
    case 7: return 8;          /* int64 */
    case 10: case 16: return 2; /* float16, bfloat16 */
    case 4: return 2;           /* uint16: older suites' bfloat16 data */
    case 11: return 8;          /* double */
    case 12: return 4;          /* uint32 */
    case 13: return 8;          /* uint64 */
    default: return 0;
  }
}

static int load_tensor(const char *path, tensor_t *t, char *why, size_t cap) {
  size_t n;
  char *bytes = read_file(path, &n);
  if (!bytes) return snprintf(why, cap, "cannot read %s", path), 0;
  Onnx__TensorProto *p = onnx__tensor_proto__unpack(NULL, n, (const uint8_t *)bytes);
  free(bytes);
  if (!p) return snprintf(why, cap, "cannot parse %s", path), 0;
  memset(t, 0, sizeof *t);
  t->dtype = p->data_type;
  t->elem_size = dtype_size(p->data_type);
  snprintf(t->name, sizeof t->name, "%s", p->name ? p->name : "");
  size_t count = 1;
  for (size_t i = 0; i < p->n_dims; ++i) count *= (size_t)p->dims[i];
  t->count = count;
  int ok = t->elem_size != 0;
  if (ok) t->data = calloc(count + 1, t->elem_size);
  if (ok && p->has_raw_data) {
    ok = p->raw_data.len == count * t->elem_size;
    if (ok) memcpy(t->data, p->raw_data.data, p->raw_data.len);
  } else if (ok) {
    for (size_t i = 0; i < count && ok; ++i) {
      if (t->dtype == 1) {
        ok = i < p->n_float_data;
        if (ok) memcpy(t->data + 4 * i, &p->float_data[i], 4);
      } else if (t->dtype == 7) {
        ok = i < p->n_int64_data;
        if (ok) memcpy(t->data + 8 * i, &p->int64_data[i], 8);
      } else if (t->dtype == 12 || t->dtype == 13) {
        ok = i < p->n_uint64_data; /* ONNX keeps both in uint64_data */
        uint64_t x = ok ? p->uint64_data[i] : 0;
        uint32_t x32 = (uint32_t)x;
        if (ok) memcpy(t->data + t->elem_size * i, t->dtype == 12 ? (void *)&x32 : (void *)&x,
                       t->elem_size);
      } else if (t->dtype == 11) {
        ok = i < p->n_double_data;
        if (ok) memcpy(t->data + 8 * i, &p->double_data[i], 8);
      } else if (i < p->n_int32_data) {
        int32_t x = p->int32_data[i];
        if (t->elem_size == 4) memcpy(t->data + 4 * i, &x, 4);
        else if (t->elem_size == 2) { int16_t h = (int16_t)x; memcpy(t->data + 2 * i, &h, 2); }
        else t->data[i] = (uint8_t)x;
      } else ok = 0;
    }
  }
  onnx__tensor_proto__free_unpacked(p, NULL);
  if (!ok) snprintf(why, cap, "%s: unsupported or inconsistent data (type %d)", path, t->dtype);
  return ok;
}

/* ---- one test ------------------------------------------------------------ */

/* Element i of a float16 (10), bfloat16 (16) or double (11) tensor. */
static double wide_float(int32_t dtype, const uint8_t *p, size_t i) {
  if (dtype == 11) {
    double d;
    memcpy(&d, p + 8 * i, 8);
    return d;
  }
  uint16_t h;
  memcpy(&h, p + 2 * i, 2);
  if (dtype == 16) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
  }
  int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double m = exp == 0x1f ? (man ? NAN : INFINITY)
             : exp ? ldexp(1024 + man, exp - 25) : ldexp(man, -24);
  return h >> 15 ? -m : m;
}

static int close_enough(const tensor_t *want, const uint8_t *got, size_t i) {
  if (want->dtype == 1 || want->dtype == 10 || want->dtype == 11 || want->dtype == 16) {
    double e, a;
    if (want->dtype == 1) {
      float fe, fa;
      memcpy(&fe, want->data + 4 * i, 4);
      memcpy(&fa, got + 4 * i, 4);
      e = fe, a = fa;
    } else {
      e = wide_float(want->dtype, want->data, i);
      a = wide_float(want->dtype, got, i);
    }
    if (isnan(e) || isnan(a)) return isnan(e) && isnan(a);
    if (isinf(e) || isinf(a)) return e == a;
    return fabs((double)a - (double)e) <= 1e-7 + 1e-3 * fabs((double)e);
  }
  return memcmp(want->data + i * want->elem_size, got + i * want->elem_size, want->elem_size) == 0;
}

static int dtype_matches(int32_t onnx, tinyml_dtype_t d) {
  switch (onnx) {
    case 1: return d == TINYML_DTYPE_FLOAT32;
    case 2: return d == TINYML_DTYPE_UINT8;
    case 3: return d == TINYML_DTYPE_INT8;
    case 5: return d == TINYML_DTYPE_INT16;
    case 6: return d == TINYML_DTYPE_INT32;
    case 7: return d == TINYML_DTYPE_INT64;
    case 9: return d == TINYML_DTYPE_BOOL;
    case 10: return d == TINYML_DTYPE_FLOAT16;
    case 11: return d == TINYML_DTYPE_FLOAT64;
    case 16: return d == TINYML_DTYPE_BFLOAT16;
    case 4: /* uint16, or older suites' bfloat16 data: bits, compared exactly */
      return d == TINYML_DTYPE_BFLOAT16 || d == TINYML_DTYPE_UINT16;
    case 12: return d == TINYML_DTYPE_UINT32;
    case 13: return d == TINYML_DTYPE_UINT64;
    default: return 0;
  }
}

static int count_files(const char *dir, const char *prefix) {
  int n = 0;
  char path[4096];
  for (;; ++n) {
    snprintf(path, sizeof path, "%s/%s_%d.pb", dir, prefix, n);
    if (access(path, R_OK) != 0) return n;
  }
}

static void free_tensors(tensor_t *t, int n) {
  for (int i = 0; i < n; ++i) free(t[i].data);
}

/* Loads data set `dir`'s tensors into in[] and want[], runs them and
 * compares; the caller frees what it loaded. */
static int run_loaded(const tinyml_module_t *m, const char *dir, tensor_t *in, int nin,
                      tensor_t *want, int nout, const int *bound, void **got,
                      tinyml_context_t **ctx, char *why, size_t cap) {
  char path[4096];
  for (int i = 0; i < nin; ++i) {
    snprintf(path, sizeof path, "%s/input_%d.pb", dir, i);
    if (!load_tensor(path, &in[i], why, cap)) return 0;
  }
  for (int i = 0; i < nout; ++i) {
    snprintf(path, sizeof path, "%s/output_%d.pb", dir, i);
    if (!load_tensor(path, &want[i], why, cap)) return 0;
  }
  tinyml_status_t st = tinyml_context_create(m, NULL, ctx);
  for (int i = 0, k = 0; !st && i < nin; ++i) {
    if (bound && bound[i]) continue;
    tinyml_tensor_info_t info;
    tinyml_tensor_info_init(&info);
    st = tinyml_module_input_info(m, (size_t)k, &info);
    if (!st && (!dtype_matches(in[i].dtype, info.dtype) || info.byte_size != in[i].count * in[i].elem_size))
      return snprintf(why, cap, "input %d: data type %d x %zu does not fit %s (%zu bytes)", i,
                      in[i].dtype, in[i].count, tinyml_dtype_name(info.dtype), info.byte_size), 0;
    if (!st) st = tinyml_context_set_input(*ctx, (size_t)k++, in[i].data, info.byte_size);
  }
  for (int i = 0; !st && i < nout; ++i) {
    tinyml_tensor_info_t info;
    tinyml_tensor_info_init(&info);
    st = tinyml_module_output_info(m, (size_t)i, &info);
    if (!st && (!dtype_matches(want[i].dtype, info.dtype) ||
                info.byte_size != want[i].count * want[i].elem_size))
      return snprintf(why, cap, "output %d: expected type %d x %zu, module gives %s (%zu bytes)",
                      i, want[i].dtype, want[i].count, tinyml_dtype_name(info.dtype),
                      info.byte_size), 0;
    got[i] = calloc(info.byte_size + 1, 1);
    if (!st) st = tinyml_context_set_output(*ctx, (size_t)i, got[i], info.byte_size);
  }
  if (!st) st = tinyml_context_invoke(*ctx);
  if (st) {
    snprintf(why, cap, "run: %s", tinyml_status_message(st));
    tinyml_status_free(st);
    return 0;
  }
  for (int i = 0; i < nout; ++i)
    for (size_t k = 0; k < want[i].count; ++k)
      if (!close_enough(&want[i], got[i], k))
        return snprintf(why, cap, "%s: output %d element %zu differs", dir, i, k), 0;
  return 1;
}

/* Runs one data set; returns 1 on a match, else fills `why`.  Inputs with
 * bound[i] set (NULL: none) were bound at compile time: not fed. */
static int run_data_set(const tinyml_module_t *m, const char *dir, const int *bound, char *why,
                        size_t cap) {
  int nin = count_files(dir, "input"), nout = count_files(dir, "output"), nbound = 0;
  for (int i = 0; bound && i < nin && i < MAX_IO; ++i) nbound += bound[i] != 0;
  if ((size_t)(nin - nbound) != tinyml_module_input_count(m) ||
      (size_t)nout != tinyml_module_output_count(m))
    return snprintf(why, cap, "%s: %d inputs/%d outputs, module has %zu/%zu", dir, nin, nout,
                    tinyml_module_input_count(m), tinyml_module_output_count(m)), 0;
  if (nin > MAX_IO || nout > MAX_IO) return snprintf(why, cap, "too many tensors"), 0;
  /* Everything is freed on every path: the bound retry runs this once per
   * data set and per compiled module. */
  tensor_t in[MAX_IO] = {{0}}, want[MAX_IO] = {{0}};
  void *got[MAX_IO] = {0};
  tinyml_context_t *ctx = NULL;
  int ok = run_loaded(m, dir, in, nin, want, nout, bound, got, &ctx, why, cap);
  tinyml_context_release(ctx);
  free_tensors(in, nin);
  free_tensors(want, nout);
  for (int i = 0; i < nout; ++i) free(got[i]);
  return ok;
}

/* ---- inputs bound at compile time ---------------------------------------- */

static tinyml_dtype_t api_dtype(int32_t onnx) {
  static const tinyml_dtype_t kinds[] = {TINYML_DTYPE_FLOAT32, TINYML_DTYPE_UINT8,
                                         TINYML_DTYPE_INT8, TINYML_DTYPE_INT16,
                                         TINYML_DTYPE_INT32, TINYML_DTYPE_INT64,
                                         TINYML_DTYPE_BOOL};
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; ++i)
    if (dtype_matches(onnx, kinds[i])) return kinds[i];
  return TINYML_DTYPE_INVALID;
}

/* Marks in bound[] the inputs a refusal asks to bind ("--input-value
 * NAME=...") that are not bound yet; how many it marked. */
static int mark_wanted(const char *msg, const tensor_t *in, int nin, int *bound) {
  int n = 0;
  for (int i = 0; i < nin; ++i) {
    char flag[300];
    snprintf(flag, sizeof flag, "--input-value %s=", in[i].name);
    if (!bound[i] && in[i].name[0] && strstr(msg, flag)) bound[i] = ++n;
  }
  return n;
}

static int load_inputs(const char *dir, tensor_t *in, char *why, size_t cap) {
  int nin = count_files(dir, "input");
  char path[4096];
  if (nin > MAX_IO) return snprintf(why, cap, "too many tensors"), -1;
  for (int i = 0; i < nin; ++i) {
    snprintf(path, sizeof path, "%s/input_%d.pb", dir, i);
    if (!load_tensor(path, &in[i], why, cap)) return -1;
  }
  return nin;
}

/* Compiles with the inputs marked in bound[] bound to their values in in[]. */
static tinyml_status_t compile_bound(const char *model, size_t size, const tensor_t *in,
                                     int nin, const int *bound, tinyml_blob_t **blob) {
  tinyml_input_value_t values[MAX_IO];
  size_t n = 0;
  for (int i = 0; i < nin; ++i)
    if (bound[i])
      values[n++] = (tinyml_input_value_t){in[i].name, api_dtype(in[i].dtype), in[i].data,
                                           in[i].count * in[i].elem_size, NULL};
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.input_values = values;
  o.input_value_count = n;
  return tinyml_compile(model, size, &o, blob);
}

/* One data set with its own values of the bound inputs; 1 on a match.
 * Each set compiles a module of its own: all of it is freed here, or a
 * test of many sets grows by a module per set. */
static int run_set_bound(const char *model, size_t size, const char *dir, const int *bound,
                         char *why, size_t cap) {
  tensor_t in[MAX_IO];
  int nin = load_inputs(dir, in, why, cap);
  if (nin < 0) return 0;
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *m = NULL;
  tinyml_status_t st = compile_bound(model, size, in, nin, bound, &blob);
  if (!st) st = tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), NULL, &m);
  int ok = !st && run_data_set(m, dir, bound, why, cap);
  if (st) snprintf(why, cap, "%s: compile: %s", dir, tinyml_status_message(st));
  tinyml_status_free(st);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
  free_tensors(in, nin);
  return ok;
}

/* A test refused only for want of graph inputs' values: binds those the
 * refusals name to data set 0's values until it compiles (or is refused
 * for another reason), then runs every data set with its own values bound,
 * as a user binding them would.  Exit 3: a pass with inputs bound. */
static int run_bound(const char *suite, const char *dir, const char *name, const char *model,
                     size_t size, tinyml_status_t st) {
  char path[4096], why[1024] = "";
  tensor_t in[MAX_IO];
  int bound[MAX_IO] = {0};
  snprintf(path, sizeof path, "%s/test_data_set_0", dir);
  int nin = load_inputs(path, in, why, sizeof why);
  tinyml_blob_t *blob = NULL;
  while (st && nin > 0 && mark_wanted(tinyml_status_message(st), in, nin, bound)) {
    tinyml_status_t next = compile_bound(model, size, in, nin, bound, &blob);
    if (st != next) tinyml_status_free(st);
    st = next;
  }
  tinyml_blob_release(blob);
  free_tensors(in, nin);
  if (st) return printf("UNSUPPORTED %s/%s: %s\n", suite, name, tinyml_status_message(st)), 2;
  int sets = 0;
  for (;; ++sets) {
    snprintf(path, sizeof path, "%s/test_data_set_%d", dir, sets);
    struct stat sb;
    if (stat(path, &sb) != 0) break;
    if (!run_set_bound(model, size, path, bound, why, sizeof why))
      return printf("FAIL %s/%s: %s\n", suite, name, why), 1;
  }
  if (sets == 0) return printf("FAIL %s/%s: no test data sets\n", suite, name), 1;
  printf("PASS %s/%s (bound at compile time:", suite, name);
  for (int i = 0; i < nin; ++i)
    if (bound[i]) printf(" %s", in[i].name);
  printf(")\n");
  return 3;
}

/* Child process: prints one result line; exit 0 pass, 1 fail, 2 unsupported,
 * 3 pass with inputs bound at compile time. */
static int run_test(const char *suite, const char *dir, const char *name) {
  char path[4096], why[1024] = "";
  size_t size;
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  char *model = read_file(path, &size);
  if (!model) return printf("FAIL %s/%s: cannot read model.onnx\n", suite, name), 1;
  tinyml_blob_t *blob = NULL;
  tinyml_status_t st = tinyml_compile(model, size, NULL, &blob);
  if (st && strstr(tinyml_status_message(st), "--input-value ")) {
    int r = run_bound(suite, dir, name, model, size, st);
    free(model);
    return r;
  }
  free(model);
  if (st) {
    printf("UNSUPPORTED %s/%s: %s\n", suite, name, tinyml_status_message(st));
    return 2;
  }
  tinyml_module_t *m = NULL;
  st = tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), NULL, &m);
  if (st) return printf("FAIL %s/%s: load: %s\n", suite, name, tinyml_status_message(st)), 1;
  int sets = 0;
  for (;; ++sets) {
    snprintf(path, sizeof path, "%s/test_data_set_%d", dir, sets);
    struct stat sb;
    if (stat(path, &sb) != 0) break;
    if (!run_data_set(m, path, NULL, why, sizeof why))
      return printf("FAIL %s/%s: %s\n", suite, name, why), 1;
  }
  if (sets == 0) return printf("FAIL %s/%s: no test data sets\n", suite, name), 1;
  printf("PASS %s/%s\n", suite, name);
  return 0;
}

/* ---- the driver ------------------------------------------------------------ */

typedef struct test {
  char suite[64], name[256], dir[4096];
  pid_t pid;
  int pipe_fd;
  char line[2048];
  int result; /* 0 pass, 1 fail, 2 unsupported */
  int bound;  /* a pass with inputs bound at compile time */
} test_t;

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int collect(const options_t *o, test_t *tests, int cap) {
  int n = 0;
  char suites[256];
  snprintf(suites, sizeof suites, "%s", o->suites);
  for (char *s = strtok(suites, ","); s; s = strtok(NULL, ",")) {
    char dirpath[4096];
    snprintf(dirpath, sizeof dirpath, "%s/%s", o->data_dir, s);
    DIR *d = opendir(dirpath);
    if (!d) continue;
    char *names[MAX_TESTS];
    int k = 0;
    for (struct dirent *e; (e = readdir(d)) && k < MAX_TESTS;)
      if (e->d_name[0] != '.') names[k++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)k, sizeof names[0], cmp_names);
    for (int i = 0; i < k; ++i) {
      if ((!o->filter || strstr(names[i], o->filter)) && n < cap) {
        test_t *t = &tests[n++];
        snprintf(t->suite, sizeof t->suite, "%s", s);
        snprintf(t->name, sizeof t->name, "%s", names[i]);
        snprintf(t->dir, sizeof t->dir, "%s/%s", dirpath, names[i]);
      }
      free(names[i]);
    }
  }
  return n;
}

static void start(test_t *t) {
  int fds[2];
  if (pipe(fds) != 0) { perror("pipe"); exit(2); }
  fflush(stdout);
  t->pid = fork();
  if (t->pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDOUT_FILENO);
    int r = run_test(t->suite, t->dir, t->name);
    fflush(stdout);
    _exit(r);
  }
  close(fds[1]);
  t->pipe_fd = fds[0];
}

static void finish(test_t *t, int status) {
  ssize_t n = read(t->pipe_fd, t->line, sizeof t->line - 1);
  close(t->pipe_fd);
  t->line[n > 0 ? n : 0] = '\0';
  char *nl = strchr(t->line, '\n');
  if (nl) *nl = '\0';
  if (WIFSIGNALED(status)) {
    snprintf(t->line, sizeof t->line, "FAIL %s/%s: crashed with signal %d", t->suite, t->name,
             WTERMSIG(status));
    t->result = 1;
  } else {
    t->result = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (t->result == 3) t->bound = 1, t->result = 0;
    if (t->result > 2 || !t->line[0]) {
      snprintf(t->line, sizeof t->line, "FAIL %s/%s: exited with %d", t->suite, t->name, t->result);
      t->result = 1;
    }
  }
  puts(t->line);
}

static void run_all(test_t *tests, int n, int jobs) {
  int next = 0, running = 0;
  while (next < n || running > 0) {
    while (running < jobs && next < n) {
      start(&tests[next++]);
      ++running;
    }
    int status;
    pid_t pid = wait(&status);
    if (pid < 0) break;
    for (int i = 0; i < next; ++i)
      if (tests[i].pid == pid) {
        finish(&tests[i], status);
        tests[i].pid = 0;
        --running;
      }
  }
}

/* "...(OpType 'name'): reason" → OpType; other refusals count as "other". */
static void blocker_of(const char *line, char *op, size_t cap) {
  const char *p = strstr(line, "onnx: node ");
  const char *q = p ? strchr(p, '(') : NULL;
  size_t n = 0;
  if (q) {
    ++q;
    while (q[n] && q[n] != ' ' && n + 1 < cap) ++n;
  }
  if (!n) {
    snprintf(op, cap, "(other: %.60s)", strstr(line, ": ") ? strstr(line, ": ") + 2 : line);
    return;
  }
  memcpy(op, q, n);
  op[n] = '\0';
}

static void print_blockers(const test_t *tests, int n) {
  char ops[MAX_TESTS][96];
  int counts[MAX_TESTS], k = 0;
  for (int i = 0; i < n; ++i) {
    if (tests[i].result != 2) continue;
    char op[96];
    blocker_of(tests[i].line, op, sizeof op);
    int j = 0;
    while (j < k && strcmp(ops[j], op) != 0) ++j;
    if (j == k) {
      snprintf(ops[k], sizeof ops[k], "%s", op);
      counts[k++] = 0;
    }
    ++counts[j];
  }
  printf("unsupported, by the op that blocks each test:\n");
  for (int round = 0; round < k; ++round) {
    int best = -1;
    for (int j = 0; j < k; ++j)
      if (counts[j] > 0 && (best < 0 || counts[j] > counts[best])) best = j;
    if (best < 0) break;
    printf("  %4d  %s\n", counts[best], ops[best]);
    counts[best] = -counts[best] - 1;
  }
}

int main(int argc, char **argv) {
  options_t o = {.jobs = 2};
  /* A floor on passes: a change that turns passes into refusals fails too. */
  int min_pass = 0;
  snprintf(o.suites, sizeof o.suites, "node,pytorch-converted,pytorch-operator,simple");
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--suites") == 0 && i + 1 < argc) snprintf(o.suites, sizeof o.suites, "%s", argv[++i]);
    else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) o.filter = argv[++i];
    else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) o.jobs = atoi(argv[++i]);
    else if (strcmp(argv[i], "--blockers") == 0) o.blockers = 1;
    else if (strcmp(argv[i], "--min-pass") == 0 && i + 1 < argc) min_pass = atoi(argv[++i]);
    else if (!o.data_dir) o.data_dir = argv[i];
    else return fprintf(stderr, "unexpected argument '%s'\n", argv[i]), 2;
  }
  if (!o.data_dir || o.jobs < 1) {
    fprintf(stderr, "usage: %s DATA_DIR [--suites a,b] [--filter TEXT] [--jobs N] [--blockers] [--min-pass N]\n", argv[0]);
    return 2;
  }
  struct stat sb;
  if (stat(o.data_dir, &sb) != 0) {
    printf("SKIP: %s is missing (install libonnx-testdata)\n", o.data_dir);
    return getenv("CI") && strcmp(getenv("CI"), "true") == 0 ? 1 : 77;
  }
  static test_t tests[MAX_TESTS];
  int n = collect(&o, tests, MAX_TESTS);
  run_all(tests, n, o.jobs);
  int counts[3] = {0, 0, 0};
  int bound = 0;
  for (int i = 0; i < n; ++i) ++counts[tests[i].result];
  for (int i = 0; i < n; ++i) bound += tests[i].bound;
  if (o.blockers) print_blockers(tests, n);
  printf("%d passed (%d with shape inputs bound at compile time), %d failed, %d unsupported\n",
         counts[0], bound, counts[1], counts[2]);
  if (counts[0] < min_pass)
    printf("FAIL: %d passes, fewer than the %d required (--min-pass)\n", counts[0], min_pass);
  return counts[1] == 0 && n > 0 && counts[0] >= min_pass ? 0 : 1;
}
