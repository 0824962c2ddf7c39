/* Per-step timing for tinyml-run (run_profile.h). */
#include "run_profile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tool_util.h"

struct run_profile {
  tinyml_context_t *context;
  const tinyml_module_t *module;
  size_t steps;
  long runs, run;     /* recorded invokes, and the one in progress */
  double started;     /* when the current step began */
  double *ms;         /* runs x steps */
};

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void on_step(void *user, size_t step, int done) {
  run_profile_t *p = user;
  if (!done) {
    p->started = now_ms();
    return;
  }
  if (p->run < p->runs) p->ms[p->run * (long)p->steps + (long)step] = now_ms() - p->started;
  if (step + 1 == p->steps) p->run++;
}

run_profile_t *run_profile_start(tinyml_context_t *context, const tinyml_module_t *module,
                                 long runs) {
  run_profile_t *p = calloc(1, sizeof *p);
  size_t steps = tinyml_module_dispatch_count(module);
  if (p) p->ms = calloc((size_t)runs * steps + 1, sizeof *p->ms);
  if (!p || !p->ms) {
    if (p) free(p);
    tool_error("out of memory for the profile");
    return NULL;
  }
  *p = (run_profile_t){context, module, steps, runs, 0, 0, p->ms};
  if (tool_check(tinyml_context_set_step_hook(context, on_step, p), "--profile") != 0) {
    free(p->ms);
    free(p);
    return NULL;
  }
  return p;
}

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of step `s` over the recorded runs (sorts a scratch copy). */
static double step_median(const run_profile_t *p, size_t s, double *scratch) {
  long n = p->run < p->runs ? p->run : p->runs;
  for (long r = 0; r < n; ++r) scratch[r] = p->ms[r * (long)p->steps + (long)s];
  qsort(scratch, (size_t)n, sizeof *scratch, compare_doubles);
  return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

void run_profile_finish(run_profile_t *p, double invoke_median_ms) {
  if (!p) return;
  tinyml_status_free(tinyml_context_set_step_hook(p->context, NULL, NULL));
  double *scratch = malloc((size_t)p->runs * sizeof *scratch + sizeof *scratch);
  if (invoke_median_ms <= 0) {
    /* the benchmark failed and said so */
  } else if (!scratch || p->run == 0) {
    tool_error(scratch ? "--profile: no invoke was recorded" : "out of memory");
  } else {
    double sum = 0;
    printf("profile: step median_ms share operators (median of %ld invokes)\n", p->run);
    for (size_t s = 0; s < p->steps; ++s) {
      double m = step_median(p, s, scratch);
      const char *label = tinyml_module_step_label(p->module, s);
      sum += m;
      printf("step %3zu %10.6f %5.1f%% %s\n", s, m,
             invoke_median_ms > 0 ? 100 * m / invoke_median_ms : 0.0,
             label[0] ? label : "(no names: a copy, or compiled with --strip)");
    }
    printf("profile_sum_ms=%.6f (%.1f%% of median_ms)\n", sum,
           invoke_median_ms > 0 ? 100 * sum / invoke_median_ms : 0.0);
  }
  free(scratch);
  free(p->ms);
  free(p);
}
