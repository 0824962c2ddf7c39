/* "The library never aborts, exits or longjmps" (include/tinyml.h), for
 * hostile options and hostile input data.  Each case runs in a child
 * process, so one that kills its process is reported as such and the other
 * cases still run.
 *
 * Usage: test_no_abort EXTRA_MODEL_DIR   (tests/api/models)
 *   (or set TINYML_API_MODELS) */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_test_util.h"

/* What a child reports back: the status of its case. */
typedef struct report {
  tinyml_status_code_t code;
  char message[1024];
} report_t;

typedef tinyml_status_t (*case_fn)(const void *arg);

/* Children must not use cmocka asserts (they would longjmp into the child's
 * copy of the runner): setup failures exit with this code instead. */
#define CHILD_SETUP_FAILED 4
/* A case whose result is defined got another (or an error). */
#define CHILD_WRONG_RESULT 5

static char *child_read_model(const char *name, size_t *size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.mlir", api_model_dir(), name);
  char *text = api_read_file(path, size);
  if (text) return text;
  fprintf(stderr, "cannot read %s\n", path);
  _exit(CHILD_SETUP_FAILED);
}

static void child_main(int fd, case_fn fn, const void *arg) {
  /* cmocka catches these to longjmp into its runner: let them kill. */
  static const int fatal[] = {SIGFPE, SIGSEGV, SIGILL, SIGBUS, SIGABRT, SIGSYS};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; ++i) signal(fatal[i], SIG_DFL);
  tinyml_status_t st = fn(arg);
  report_t r;
  memset(&r, 0, sizeof r);
  r.code = tinyml_status_code(st);
  snprintf(r.message, sizeof r.message, "%s", tinyml_status_message(st));
  tinyml_status_free(st);
  ssize_t n = write(fd, &r, sizeof r);
  _exit(n == (ssize_t)sizeof r ? 0 : 3);
}

/* Runs fn(arg) in a child and fills *r; returns 0 (after printing why) if
 * the library ended the process. */
static int run_in_child(const char *what, case_fn fn, const void *arg, report_t *r) {
  int fds[2];
  assert_int_equal(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], fn, arg);
  }
  close(fds[1]);
  ssize_t n = read(fds[0], r, sizeof *r);
  close(fds[0]);
  int ws = 0;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == CHILD_SETUP_FAILED)
    fail_msg("%s: the test's own setup failed (see stderr)", what);
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == CHILD_WRONG_RESULT) {
    print_error("%s: a wrong result (see stderr)\n", what);
    return 0;
  }
  if (WIFSIGNALED(ws)) {
    print_error("%s: the process was killed by signal %d\n", what, WTERMSIG(ws));
    return 0;
  }
  if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0 || n != (ssize_t)sizeof *r) {
    print_error("%s: the library ended the process (exit status %d)\n", what,
                WEXITSTATUS(ws));
    return 0;
  }
  print_message("%s: %s: %s\n", what, tinyml_status_code_name(r->code), r->message);
  return 1;
}

/* ---- options that LLVM rejects ------------------------------------------ */

typedef struct target_case {
  const char *cpu, *features, *named; /* `named`: what the message must name */
} target_case_t;

static tinyml_status_t compile_with(const void *arg) {
  const target_case_t *c = arg;
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.cpu = c->cpu;
  o.features = c->features;
  size_t size = 0;
  char *text = child_read_model("integer_ops", &size);
  tinyml_blob_t *blob = NULL;
  tinyml_status_t st = tinyml_compile(text, size, &o, &blob);
  free(text);
  tinyml_blob_release(blob);
  return st;
}

/* A bad cpu or feature string is the caller's mistake: INVALID_ARGUMENT or
 * UNSUPPORTED (as for an unknown target), naming it - not INTERNAL, and not
 * LLVM's report_fatal_error() ending the process. */
/* Whether the child's report for `c` is a proper rejection; prints why not. */
static int rejected_properly(const char *what, const target_case_t *c, const report_t *r) {
  if (r->code != TINYML_STATUS_INVALID_ARGUMENT && r->code != TINYML_STATUS_UNSUPPORTED) {
    print_error("%s: %s, want INVALID_ARGUMENT or UNSUPPORTED\n", what,
                tinyml_status_code_name(r->code));
    return 0;
  }
  if (!strstr(r->message, c->named)) {
    print_error("%s: the message does not name '%s'\n", what, c->named);
    return 0;
  }
  return 1;
}

static void test_bad_cpu_and_features(void **state) {
  (void)state;
  static const target_case_t cases[] = {
      {"not-a-cpu", NULL, "not-a-cpu"},
      {NULL, "avx2", "avx2"}, /* features need a '+' or '-' */
  };
  int failures = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char what[128];
    snprintf(what, sizeof what, "compile with cpu '%s', features '%s'",
             cases[i].cpu ? cases[i].cpu : "(default)",
             cases[i].features ? cases[i].features : "(default)");
    report_t r;
    if (!run_in_child(what, compile_with, &cases[i], &r) ||
        !rejected_properly(what, &cases[i], &r))
      failures++;
  }
  assert_int_equal(failures, 0);
}

/* ---- input data the model's ops do not define --------------------------- */

typedef struct divide_case {
  int32_t dividend, divisor;
} divide_case_t;

/* Runs integer_ops (output 0 = intdiv(input 0, input 1), 4x8 int32) on
 * `m` with every element of the inputs set from `c`; *quotient gets
 * output element 0 when not null. */
static tinyml_status_t run_division(const tinyml_module_t *m, const divide_case_t *c,
                                    int32_t *quotient) {
  api_io_t io;
  if (!api_io_alloc(m, SIZE_MAX, 1, &io)) _exit(CHILD_SETUP_FAILED);
  int32_t *a = io.inputs[0], *b = io.inputs[1];
  for (size_t i = 0; i < io.input_sizes[0] / sizeof(int32_t); ++i) {
    a[i] = c->dividend;
    b[i] = c->divisor;
  }
  tinyml_status_t st = api_run(m, NULL, &io, 1);
  if (!st && quotient) memcpy(quotient, io.outputs[0], sizeof *quotient);
  api_io_free(&io);
  return st;
}

static tinyml_status_t divide(const void *arg) {
  size_t size = 0;
  char *text = child_read_model("integer_ops", &size);
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *m = NULL;
  tinyml_status_t st = tinyml_compile(text, size, NULL, &blob);
  free(text);
  if (!st) st = tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), NULL, &m);
  const divide_case_t *c = arg;
  int32_t q = 0;
  if (!st) st = run_division(m, c, &q);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
  /* Where TOSA defines the quotient (truncated), the guard keeps it. */
  const int defined = c->divisor != 0 && !(c->dividend == INT32_MIN && c->divisor == -1);
  if (defined && (st || q != c->dividend / c->divisor)) {
    fprintf(stderr, "intdiv %d / %d gave %d (%s)\n", (int)c->dividend, (int)c->divisor, (int)q,
            tinyml_status_message(st));
    _exit(CHILD_WRONG_RESULT);
  }
  return st;
}

/* TOSA leaves x / 0 and INT32_MIN / -1 unpredictable: any value (or an
 * error status) is fine, a SIGFPE that kills the host is not.  Beside
 * them, quotients TOSA defines (truncated) must survive the guard. */
static void test_integer_division_data(void **state) {
  (void)state;
  static const divide_case_t cases[] = {{7, 0}, {INT32_MIN, -1}, {-7, 2}, {INT32_MIN, 1},
                                        {INT32_MIN, -2}, {7, -1}};
  int failures = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    char what[96];
    snprintf(what, sizeof what, "intdiv %d / %d", (int)cases[i].dividend,
             (int)cases[i].divisor);
    report_t r;
    failures += !run_in_child(what, divide, &cases[i], &r);
  }
  assert_int_equal(failures, 0);
}

/* Indices from the data: tosa.gather with indices out of range must read
 * the nearest row (lib/compiler/linalg/guards.c), never memory outside the
 * values, and in-range indices their own row.  Without the guard, an index
 * of 2^30 faults. */
static tinyml_status_t gather(const void *arg) {
  (void)arg;
  static const int32_t idx[6] = {2, -1, 5, 1 << 30, INT32_MIN, 4};
  static const int32_t want[6] = {2, 0, 4, 4, 0, 4}; /* clamped rows */
  size_t size = 0;
  char *text = child_read_model("gather", &size);
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *m = NULL;
  tinyml_status_t st = tinyml_compile(text, size, NULL, &blob);
  free(text);
  if (!st) st = tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), NULL, &m);
  api_io_t io;
  if (!st && !api_io_alloc(m, SIZE_MAX, 1, &io)) _exit(CHILD_SETUP_FAILED);
  if (!st) {
    float *values = io.inputs[0];
    for (int i = 0; i < 15; ++i) values[i] = (float)i;
    memcpy(io.inputs[1], idx, sizeof idx);
    st = api_run(m, NULL, &io, 1);
    const float *y = io.outputs[0];
    for (int i = 0; i < 6 && !st; ++i)
      for (int c = 0; c < 3; ++c)
        if (y[i * 3 + c] != (float)(want[i] * 3 + c)) {
          fprintf(stderr, "gather index %d gave %g for channel %d (row %d expected)\n",
                  (int)idx[i], (double)y[i * 3 + c], c, (int)want[i]);
          _exit(CHILD_WRONG_RESULT);
        }
    api_io_free(&io);
  }
  tinyml_module_release(m);
  tinyml_blob_release(blob);
  return st;
}

static void test_gather_indices_data(void **state) {
  (void)state;
  report_t r;
  assert_true(run_in_child("gather with indices out of range", gather, NULL, &r));
  assert_int_equal(r.code, TINYML_STATUS_OK);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_cpu_and_features),
      cmocka_unit_test(test_integer_division_data),
      cmocka_unit_test(test_gather_indices_data),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
