/* Where a module's time goes, for threads: runs every phase of every
 * dispatch on one thread, timed one by one, R times, and prints the best
 * run's total, the share spent in phases with more than one useful
 * workgroup (those the runtime's threads share) and Amdahl's bound for 2
 * threads.  White-box: it drives the loaded entries the way context.c does
 * (docs/PERF.md, "Threads").  Build against a build directory:
 *
 *   cc -O2 -I. -Iinclude -Ibuild -o phases bench/phases.c \
 *     build/lib/runtime/libtinyml_runtime.a build/lib/module/libtinyml_module.a \
 *     build/lib/common/libtinyml_common.a -lpthread -lm
 *   ./phases model.tmlm [R]
 *
 * With PHASES_VERBOSE set, every phase of every run after the first is
 * printed too ("step S phase P: US us, W workgroups"), for setting beside
 * onnxruntime's per-node profile (bench/ort_profile.js).
 *
 * With PHASES_THREADS=N (N > 1), each run is two passes, one on this
 * thread alone and one sharing split phases with N - 1 workers as
 * context.c does (2 workgroups per thread), in alternating order; it
 * prints each phase's best time of either kind (with PHASES_VERBOSE) and
 * the sums of those bests: where threads gain or lose, phase by phase,
 * without the whole invoke's noise.
 *
 * With PHASES_STEADY set as well, it runs all the 1-thread passes, then
 * all the shared ones, back to back, and prints each phase's median of
 * either kind.  That is how an application invokes: on threads, each
 * buffer's cache lines are where the last shared pass left them, not all
 * in this core's cache as after a 1-thread pass.  Writing or reading
 * lines the other core holds costs 2-2.5x one's own (docs/PERF.md), so
 * the alternating passes above make the shared phases look slower than
 * they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/common/alloc.h"
#include "lib/runtime/runtime.h"

typedef struct totals {
  double split, whole; /* ms in split and unsplit phases */
  unsigned split_phases, phases;
} totals_t;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int verbose;
/* PHASES_THREADS mode: the best time of phase i alone and shared. */
enum { MAX_PHASES = 4096 };
static int threads = 1, shared;
static double best_ms[2][MAX_PHASES];
static double last_ms[MAX_PHASES]; /* this run's */
static unsigned phase_no;

static void run_step(tinyml_context_t *c, const tmod_step_t *st, totals_t *t) {
  const tinyml_module_t *m = c->module;
  for (uint32_t i = 0; i < st->binding_count; ++i)
    c->scratch_ptrs[i] = tinyml__binding_ptr(c, &st->bindings[i]);
  if (st->kind == TMOD_STEP_COPY) {
    double t0 = now_ms();
    memmove(c->scratch_ptrs[1], c->scratch_ptrs[0], (size_t)st->bindings[0].size);
    t->whole += now_ms() - t0;
    return;
  }
  const tinyml_exe_entry_t *e = &m->libraries[st->executable]->entries[st->entry];
  for (uint32_t p = 0; p < e->phase_count; ++p) {
    uint32_t n = e->workgroups[p], most = 2u * (uint32_t)threads;
    double t0 = now_ms();
    if (shared && n > 1)
      tinyml__pool_run(c->pool, e->fn, c->scratch_ptrs, p, n < most ? n : most);
    else
      e->fn(c->scratch_ptrs, p, 0, 1);
    double ms = now_ms() - t0;
    if (threads > 1 && phase_no < MAX_PHASES) {
      last_ms[phase_no] = ms;
      double *b = &best_ms[shared][phase_no++];
      if (*b == 0 || ms < *b) *b = ms;
      continue;
    }
    if (verbose)
      printf("step %u phase %u: %.2f us, %u workgroups\n",
             (unsigned)(st - c->module->desc.steps), p, ms * 1e3, e->workgroups[p]);
    int split = e->workgroups[p] > 1;
    *(split ? &t->split : &t->whole) += ms;
    t->split_phases += (unsigned)split;
    ++t->phases;
  }
}

static totals_t run_once(tinyml_context_t *c) {
  totals_t t = {0};
  phase_no = 0;
  for (uint32_t s = 0; s < c->module->desc.step_count; ++s)
    run_step(c, &c->module->desc.steps[s], &t);
  return t;
}

/* PHASES_THREADS mode: alternating 1-thread and shared passes. */
static int compare_threads(tinyml_context_t *c, const char *name, int runs) {
  int v = verbose;
  verbose = 0;
  unsigned phases = 0;
  for (int r = 0; r < runs; ++r)
    for (int k = 0; k < 2; ++k) {
      shared = (r + k) & 1;
      run_once(c);
      phases = phase_no;
    }
  double one = 0, many = 0;
  for (unsigned i = 0; i < phases; ++i) {
    one += best_ms[0][i];
    many += best_ms[1][i];
    if (v)
      printf("phase %u: %.1f us alone, %.1f us on %d threads, %.2fx\n", i, best_ms[0][i] * 1e3,
             best_ms[1][i] * 1e3, threads, best_ms[0][i] / best_ms[1][i]);
  }
  printf("%s: sum of best phases %.3f ms alone, %.3f ms on %d threads, %.2fx\n", name, one,
         many, threads, one / many);
  return 0;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* PHASES_STEADY: all 1-thread passes, then all shared ones. */
static int steady_threads(tinyml_context_t *c, const char *name, int runs) {
  int v = verbose;
  verbose = 0;
  unsigned phases = 0;
  double *ms = calloc((size_t)2 * (size_t)runs * MAX_PHASES, sizeof(double));
  if (!ms) return 1;
  for (int k = 0; k < 2; ++k) {
    shared = k;
    run_once(c); /* leaves the caches as this kind does */
    for (int r = 0; r < runs; ++r) {
      run_once(c);
      phases = phase_no;
      memcpy(ms + ((size_t)k * runs + r) * MAX_PHASES, last_ms, phases * sizeof(double));
    }
  }
  double one = 0, many = 0, col[2][64];
  const int n = runs < 64 ? runs : 64;
  for (unsigned i = 0; i < phases; ++i) {
    for (int k = 0; k < 2; ++k) {
      for (int r = 0; r < n; ++r) col[k][r] = ms[((size_t)k * runs + r) * MAX_PHASES + i];
      qsort(col[k], (size_t)n, sizeof(double), by_value);
    }
    one += col[0][n / 2];
    many += col[1][n / 2];
    if (v)
      printf("phase %u: median %.1f us alone, %.1f us on %d threads, %.2fx\n", i,
             col[0][n / 2] * 1e3, col[1][n / 2] * 1e3, threads, col[0][n / 2] / col[1][n / 2]);
  }
  free(ms);
  printf("%s: sum of median phases %.3f ms alone, %.3f ms on %d threads, %.2fx (steady)\n",
         name, one, many, threads, one / many);
  return 0;
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f || fseek(f, 0, SEEK_END) != 0) return NULL;
  long n = ftell(f);
  rewind(f);
  uint8_t *d = n > 0 ? aligned_alloc(64, ((size_t)n + 63) / 64 * 64) : NULL;
  if (d && fread(d, 1, (size_t)n, f) != (size_t)n) d = NULL;
  fclose(f);
  *size = (size_t)n;
  return d;
}

int main(int argc, char **argv) {
  size_t size = 0;
  uint8_t *data = argc > 1 ? read_file(argv[1], &size) : NULL;
  int runs = argc > 2 ? atoi(argv[2]) : 10;
  tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  tinyml_module_t *m = NULL;
  tinyml_context_t *c = NULL;
  const char *th = getenv("PHASES_THREADS");
  threads = th && atoi(th) > 1 && atoi(th) <= 16 ? atoi(th) : 1;
  if (!data || tinyml__module_create(data, size, NULL, NULL, &a, &m) ||
      tinyml__context_create(m, &a, (void *[TMOD_MAX_ARENA_REGIONS]){NULL}, (uint32_t)threads, &c)) {
    fprintf(stderr, "usage: phases MODULE.tmlm [RUNS] (a module this runtime loads)\n");
    return 1;
  }
  /* Inputs are zeros; outputs go to buffers larger than any output here. */
  for (uint32_t i = 0; i < m->desc.input_count; ++i) c->inputs[i] = calloc(1, 64u << 20);
  for (uint32_t i = 0; i < m->desc.output_count; ++i) c->outputs[i] = calloc(1, 64u << 20);
  totals_t best = run_once(c); /* also the warm-up */
  verbose = getenv("PHASES_VERBOSE") != NULL;
  if (threads > 1 && getenv("PHASES_STEADY")) return steady_threads(c, argv[1], runs);
  if (threads > 1) return compare_threads(c, argv[1], runs);
  for (int r = 1; r < runs; ++r) {
    totals_t t = run_once(c);
    if (r == 1 || t.split + t.whole < best.split + best.whole) best = t;
  }
  double total = best.split + best.whole;
  printf("%s: %.2f ms, split %.2f ms (%.1f%%), unsplit %.2f ms, %u of %u phases split, "
         "2-thread bound %.2fx\n",
         argv[1], total, best.split, 100 * best.split / total, best.whole, best.split_phases,
         best.phases, total / (best.whole + best.split / 2));
  return 0;
}
