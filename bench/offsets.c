/* Does a module's speed depend on where the caller's buffers sit?  Loads a
 * module and binds its inputs and outputs to caller buffers at several byte
 * offsets, then invokes it round-robin over the placements (REPS timed
 * invokes each, after one untimed, ROUNDS rounds, the order rotated every
 * round) so that load on a shared machine hits every placement alike.
 * Prints each placement's median wall and thread-CPU time, the least CPU
 * time, and the spread of the medians (max / min).  Every placement's
 * outputs must be byte-identical to the first's (exit 1 otherwise).
 *
 *   tinyml-compile m.mlir -o mm.tmlm [--cpu host]
 *   build/bench/offsets mm.tmlm [ROUNDS [REPS]]      (default 20 3)
 *
 * Each placement owns one 4096-aligned slab holding the buffers (inputs,
 * then outputs; buffer k) in equal 4096-aligned slots, one after another,
 * so the buffers' relative addresses, not only their page offsets, are the
 * same from run to run.  Buffer k sits in its slot at:
 *   "+X"          X + 1024 k mod 4096 bytes (X = 0, 4, 16, 64, 4096 + 64):
 *                 alignment X, and no two buffers share a page offset;
 *   "all +X"      X for every buffer: all share one page offset (4K
 *                 aliasing between every stream), as large malloc'd buffers
 *                 do (glibc maps each and returns page + 16);
 *   "in0~out0"    input 0 and output 0 at the same page offset, the others
 *                 as "+0"; "in0~in1" the same for the two inputs;
 *   "+0 gap G"    as "+0" with G more bytes between slots.
 * Public API and the shared library only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tinyml.h"

enum { MAX_BUFS = 16, MAX_PLACES = 16, PAGE = 4096 };

typedef struct place {
  char name[32];
  size_t offset[MAX_BUFS]; /* past buffer k's 4096-aligned slot */
  size_t gap;              /* extra bytes between slots, a multiple of 4096 */
  unsigned char *slab;     /* every buffer's slot, one after another */
  double *ms, *cpu;        /* every timed invoke: wall and thread CPU time */
  size_t samples;
} place_t;

typedef struct bench {
  tinyml_context_t *ctx;
  size_t inputs, outputs, bufs;
  size_t size[MAX_BUFS];
  size_t slot; /* bytes per buffer slot before a placement's gap */
  place_t place[MAX_PLACES];
  size_t places;
} bench_t;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int check(tinyml_status_t s, const char *what) {
  if (!s) return 0;
  fprintf(stderr, "offsets: %s: %s\n", what, tinyml_status_message(s));
  tinyml_status_free(s);
  return 1;
}

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static unsigned char *at(const bench_t *b, const place_t *p, size_t k) {
  return p->slab + k * (b->slot + p->gap) + p->offset[k];
}

static place_t *add_place(bench_t *b, const char *name, size_t gap) {
  place_t *p = &b->place[b->places++];
  snprintf(p->name, sizeof p->name, "%s", name);
  p->gap = gap;
  for (size_t k = 0; k < b->bufs; ++k) p->offset[k] = (k * 1024) % PAGE;
  return p;
}

static void add_places(bench_t *b) {
  static const size_t offs[] = {0, 4, 16, 64, PAGE + 64};
  char name[32];
  for (size_t i = 0; i < sizeof offs / sizeof *offs; ++i) {
    snprintf(name, sizeof name, "+%zu", offs[i]);
    place_t *p = add_place(b, name, 0);
    for (size_t k = 0; k < b->bufs; ++k) p->offset[k] += offs[i];
  }
  static const size_t same[] = {0, 16, 64};
  for (size_t i = 0; i < sizeof same / sizeof *same; ++i) {
    snprintf(name, sizeof name, "all +%zu", same[i]);
    place_t *p = add_place(b, name, 0);
    for (size_t k = 0; k < b->bufs; ++k) p->offset[k] = same[i];
  }
  if (b->outputs) add_place(b, "in0~out0", 0)->offset[b->inputs] = 0;
  if (b->inputs > 1) add_place(b, "in0~in1", 0)->offset[1] = 0;
  add_place(b, "+0 gap 4K", PAGE);
  add_place(b, "+0 gap 12K", 3 * PAGE);
}

/* Deterministic data: f32 in [-1, 1), bool 0 or 1, other types random
 * bytes. */
static void fill(unsigned char *dst, size_t size, tinyml_dtype_t dtype, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1664525u + 1013904223u;
    dst[i] = (unsigned char)(x >> 24);
  }
  if (dtype == TINYML_DTYPE_BOOL)
    for (size_t i = 0; i < size; ++i) dst[i] &= 1;
  if (dtype != TINYML_DTYPE_FLOAT32) return;
  float *f = (float *)dst;
  for (size_t i = 0; i < size / 4; ++i) {
    x = x * 1664525u + 1013904223u;
    f[i] = (float)(int32_t)(x >> 8) / (float)(1 << 23) - 1.0f;
  }
}

static int alloc_places(bench_t *b, const tinyml_module_t *m, size_t samples) {
  unsigned char *ref[MAX_BUFS] = {0};
  int err = 0;
  for (size_t k = 0; k < b->inputs && !err; ++k) {
    tinyml_tensor_info_t info;
    tinyml_tensor_info_init(&info);
    err = check(tinyml_module_input_info(m, k, &info), "input info") ||
          !(ref[k] = malloc(b->size[k] + 1));
    if (!err) fill(ref[k], b->size[k], info.dtype, (uint32_t)k);
  }
  for (size_t i = 0; i < b->places && !err; ++i) {
    place_t *p = &b->place[i];
    size_t bytes = b->bufs * (b->slot + p->gap);
    p->ms = malloc(samples * sizeof *p->ms);
    p->cpu = malloc(samples * sizeof *p->cpu);
    p->slab = aligned_alloc(PAGE, bytes);
    if (!p->ms || !p->cpu || !p->slab) {
      err = 1;
      break;
    }
    /* Another pattern per placement: an output left unwritten differs. */
    memset(p->slab, 0x5a ^ (int)i, bytes);
    for (size_t k = 0; k < b->inputs; ++k) memcpy(at(b, p, k), ref[k], b->size[k]);
  }
  for (size_t k = 0; k < b->inputs; ++k) free(ref[k]);
  return err;
}

static int bind(bench_t *b, const place_t *p) {
  for (size_t k = 0; k < b->inputs; ++k)
    if (check(tinyml_context_set_input(b->ctx, k, at(b, p, k), b->size[k]), "set_input")) return 1;
  for (size_t k = b->inputs; k < b->bufs; ++k)
    if (check(tinyml_context_set_output(b->ctx, k - b->inputs, at(b, p, k), b->size[k]), "set_output"))
      return 1;
  return 0;
}

static int run_place(bench_t *b, place_t *p, unsigned reps) {
  if (bind(b, p) || check(tinyml_context_invoke(b->ctx), "invoke")) return 1;
  for (unsigned r = 0; r < reps; ++r) {
    double t0 = now_ms(), c0 = cpu_ms();
    if (check(tinyml_context_invoke(b->ctx), "invoke")) return 1;
    p->cpu[p->samples] = cpu_ms() - c0;
    p->ms[p->samples++] = now_ms() - t0;
  }
  return 0;
}

static int same_outputs(const bench_t *b) {
  int bad = 0;
  for (size_t i = 1; i < b->places; ++i)
    for (size_t k = b->inputs; k < b->bufs; ++k)
      if (memcmp(at(b, &b->place[i], k), at(b, &b->place[0], k), b->size[k])) {
        fprintf(stderr, "offsets: placement %s: output %zu differs from placement %s's\n",
                b->place[i].name, k - b->inputs, b->place[0].name);
        bad = 1;
      }
  return bad;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return v[n / 2];
}

/* CPU time leaves out the time the thread waits for a core, which on a
 * loaded machine is most of the wall time's noise. */
static void report(bench_t *b) {
  double lo[2] = {0, 0}, hi[2] = {0, 0};
  printf("%-11s %9s %9s %9s   offsets (bytes past each 4096-aligned slot: inputs | outputs)\n",
         "placement", "wall med", "cpu med", "cpu min");
  for (size_t i = 0; i < b->places; ++i) {
    place_t *p = &b->place[i];
    double med[2] = {median(p->ms, p->samples), median(p->cpu, p->samples)};
    for (int j = 0; j < 2; ++j) {
      if (!i || med[j] < lo[j]) lo[j] = med[j];
      if (!i || med[j] > hi[j]) hi[j] = med[j];
    }
    printf("%-11s %9.3f %9.3f %9.3f  ", p->name, med[0], med[1], p->cpu[0]);
    for (size_t k = 0; k < b->bufs; ++k) printf(" %s%zu", k == b->inputs ? "| " : "", p->offset[k]);
    printf("\n");
  }
  printf("spread (max/min of medians): wall %.2f, cpu %.2f\n", hi[0] / lo[0], hi[1] / lo[1]);
}

static int usage(void) {
  fprintf(stderr, "usage: offsets MODULE.tmlm [ROUNDS [REPS]]\n");
  return 2;
}

static int setup(bench_t *b, const tinyml_module_t *m) {
  b->inputs = tinyml_module_input_count(m);
  b->outputs = tinyml_module_output_count(m);
  b->bufs = b->inputs + b->outputs;
  if (b->bufs > MAX_BUFS) {
    fprintf(stderr, "offsets: %zu inputs and outputs, at most %d\n", b->bufs, MAX_BUFS);
    return 1;
  }
  for (size_t k = 0; k < b->bufs; ++k) {
    tinyml_tensor_info_t info;
    tinyml_tensor_info_init(&info);
    tinyml_status_t s = k < b->inputs ? tinyml_module_input_info(m, k, &info)
                                      : tinyml_module_output_info(m, k - b->inputs, &info);
    if (check(s, "tensor info")) return 1;
    b->size[k] = info.byte_size;
    if (info.byte_size + 2 * PAGE > b->slot) b->slot = (info.byte_size / PAGE + 3) * PAGE;
  }
  add_places(b);
  return 0;
}

static int measure(bench_t *b, unsigned rounds, unsigned reps) {
  for (unsigned r = 0; r < rounds; ++r) {
    for (size_t j = 0; j < b->places; ++j)
      if (run_place(b, &b->place[(j + r) % b->places], reps)) return 1;
    if (r == 0 && same_outputs(b)) return 1;
  }
  report(b);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) return usage();
  unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 20;
  unsigned reps = argc > 3 ? (unsigned)atoi(argv[3]) : 3;
  if (!rounds || !reps) return usage();
  tinyml_module_t *m = NULL;
  if (check(tinyml_module_load_file(argv[1], NULL, &m), argv[1])) return 1;
  static bench_t b;
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  int err = setup(&b, m) || check(tinyml_context_create(m, &o, &b.ctx), "context") ||
            alloc_places(&b, m, (size_t)rounds * reps);
  if (!err) {
    printf("%s: target %s, %zu placements, %u rounds x %u invokes, round-robin\n", argv[1],
           tinyml_module_target(m), b.places, rounds, reps);
    err = measure(&b, rounds, reps);
  }
  for (size_t i = 0; i < b.places; ++i) {
    free(b.place[i].slab);
    free(b.place[i].ms);
    free(b.place[i].cpu);
  }
  tinyml_context_release(b.ctx);
  tinyml_module_release(m);
  return err;
}
