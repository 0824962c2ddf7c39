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
 * printed too ("step S phase P: MS ms, W workgroups"), for setting beside
 * onnxruntime's per-node profile (bench/ort_profile.js).
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

/* As context.c's resolve(). */
static void *resolve(const tinyml_context_t *c, const tmod_binding_t *b) {
  uint8_t *base;
  switch (b->kind) {
    case TMOD_BUFFER_INPUT: base = (uint8_t *)(uintptr_t)c->inputs[b->index]; break;
    case TMOD_BUFFER_OUTPUT: base = c->outputs[b->index]; break;
    case TMOD_BUFFER_CONSTANT: base = (uint8_t *)(uintptr_t)c->module->desc.constants; break;
    default: base = c->arena; break;
  }
  return base ? base + b->offset : NULL;
}

static int verbose;

static void run_step(tinyml_context_t *c, const tmod_step_t *st, totals_t *t) {
  const tinyml_module_t *m = c->module;
  for (uint32_t i = 0; i < st->binding_count; ++i)
    c->scratch_ptrs[i] = resolve(c, &st->bindings[i]);
  if (st->kind == TMOD_STEP_COPY) {
    double t0 = now_ms();
    memmove(c->scratch_ptrs[1], c->scratch_ptrs[0], (size_t)st->bindings[0].size);
    t->whole += now_ms() - t0;
    return;
  }
  const tinyml_exe_entry_t *e = &m->libraries[st->executable]->entries[st->entry];
  for (uint32_t p = 0; p < e->phase_count; ++p) {
    double t0 = now_ms();
    e->fn(c->scratch_ptrs, p, 0, 1);
    double ms = now_ms() - t0;
    if (verbose)
      printf("step %u phase %u: %.3f ms, %u workgroups\n",
             (unsigned)(st - c->module->desc.steps), p, ms, e->workgroups[p]);
    int split = e->workgroups[p] > 1;
    *(split ? &t->split : &t->whole) += ms;
    t->split_phases += (unsigned)split;
    ++t->phases;
  }
}

static totals_t run_once(tinyml_context_t *c) {
  totals_t t = {0};
  for (uint32_t s = 0; s < c->module->desc.step_count; ++s)
    run_step(c, &c->module->desc.steps[s], &t);
  return t;
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
  if (!data || tinyml__module_create(data, size, NULL, &a, &m) ||
      tinyml__context_create(m, &a, NULL, 0, 1, &c)) {
    fprintf(stderr, "usage: phases MODULE.tmlm [RUNS] (a module this runtime loads)\n");
    return 1;
  }
  /* Inputs are zeros; outputs go to buffers larger than any output here. */
  for (uint32_t i = 0; i < m->desc.input_count; ++i) c->inputs[i] = calloc(1, 64u << 20);
  for (uint32_t i = 0; i < m->desc.output_count; ++i) c->outputs[i] = calloc(1, 64u << 20);
  totals_t best = run_once(c); /* also the warm-up */
  verbose = getenv("PHASES_VERBOSE") != NULL;
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
