/* The memory plan's shared places checked from outside: an independent
 * checker that no two buffers alive at one step share a byte unless a
 * kernel contract allows it, and a run of the planned schedule in one byte
 * array with naive kernels that honour those contracts in the least
 * forgiving order, compared with the same schedule on separate buffers.
 * The planner's code is not used to judge the planner. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lib/common/alloc.h"
#include "lib/compiler/linalg/graph.h"
#include "lib/compiler/linalg/inplace.h"
#include "lib/compiler/linalg/memory_plan.h"

#define MAXB 16

/* A conv of one output channel count over an NHWC int8 image, or (oc 0)
 * an elementwise add of two equal buffers. */
typedef struct geom {
  int32_t ih, iw, ic, oh, ow, oc, k, stride, pad;
} geom_t;

typedef struct net {
  tc_graph_t g;
  tc_buffer_t buffers[MAXB];
  tc_dispatch_t dispatches[MAXB];
  uint32_t args[MAXB][3];
  geom_t geom[MAXB];
  uint32_t output;
} net_t;

static uint64_t conv_out(geom_t *c) {
  c->oh = (c->ih + 2 * c->pad - c->k) / c->stride + 1;
  c->ow = (c->iw + 2 * c->pad - c->k) / c->stride + 1;
  return (uint64_t)c->oh * c->ow * c->oc;
}

static void net_init(net_t *n, uint64_t input_size) {
  memset(n, 0, sizeof(*n));
  n->buffers[0] = (tc_buffer_t){TC_BUFFER_INPUT, 0, input_size, -1, {0}};
  n->g.buffers = n->buffers;
  n->g.buffer_count = 1;
  n->g.dispatches = n->dispatches;
  n->g.outputs = &n->output;
  n->g.output_count = 1;
}

/* Dispatch d = next: reads `a` (and `b` for an add), writes a new buffer. */
static uint32_t add_step(net_t *n, uint32_t a, uint32_t b, geom_t c) {
  const uint32_t d = n->g.dispatch_count++, out = n->g.buffer_count++;
  uint64_t size = c.oc ? conv_out(&c) : n->buffers[a].size;
  n->geom[d] = c;
  n->buffers[out] = (tc_buffer_t){TC_BUFFER_PRODUCED, d, size, -1, {0}};
  n->args[d][0] = a;
  n->args[d][1] = c.oc ? out : b;
  n->args[d][2] = out;
  n->dispatches[d] = (tc_dispatch_t){.input_count = c.oc ? 1 : 2, .output_count = 1,
                                     .args = n->args[d]};
  n->buffers[a].last_use = d;
  if (!c.oc) n->buffers[b].last_use = d;
  n->output = out;
  return out;
}

static uint32_t conv(net_t *n, uint32_t a, int32_t h, int32_t w, int32_t ic, int32_t oc,
                     int32_t k, int32_t stride, int32_t pad) {
  return add_step(n, a, 0, (geom_t){h, w, ic, 0, 0, oc, k, stride, pad});
}

/* Marks conv dispatch d as streaming (what tc_note_inplace does for
 * armv7em's kernels). */
static void stream(net_t *n, uint32_t d) {
  const geom_t *c = &n->geom[d];
  n->dispatches[d].stream_in = 1;
  n->dispatches[d].stream_out = 2;
  n->dispatches[d].stream_lead =
      tc_stream_lead(c->ih, c->iw, c->ic, c->oh, c->ow, c->oc, c->stride, c->pad);
}

static tinyml_status_t plan(net_t *n) {
  tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  return tc_plan_memory(&n->g, &a);
}

/* ---- the checker ------------------------------------------------------ */

static int64_t last_step(const tc_buffer_t *b) {
  return b->last_use > (int64_t)b->index ? b->last_use : (int64_t)b->index;
}

/* Whether dispatch d's kernel contract lets output y overlap input x:
 * x is read for the last time by d, and d declared the pair (an
 * elementwise pair must then share the exact place). */
static int allowed(const net_t *n, uint32_t x, uint32_t y) {
  const tc_buffer_t *bx = &n->buffers[x], *by = &n->buffers[y];
  const uint32_t d = by->index;
  const tc_dispatch_t *dp = &n->dispatches[d];
  if (bx->last_use != (int64_t)d) return 0;
  if (dp->stream_in && dp->args[dp->stream_in - 1] == x && dp->args[dp->stream_out - 1] == y)
    return 1; /* judged by running it (run_planned) */
  return dp->reuse_in && dp->args[dp->reuse_in - 1] == x && dp->args[dp->reuse_out - 1] == y &&
         bx->binding.offset == by->binding.offset;
}

static int disjoint(const tmod_binding_t *a, const tmod_binding_t *b) {
  return a->offset + a->size <= b->offset || b->offset + b->size <= a->offset;
}

static void check_plan(const net_t *n) {
  const tc_graph_t *g = &n->g;
  for (uint32_t i = 0; i < g->buffer_count; ++i) {
    const tc_buffer_t *a = &n->buffers[i];
    if (a->binding.kind != TMOD_BUFFER_ARENA) continue;
    assert_true(a->binding.offset + a->size <= g->arena_size);
    assert_int_equal(a->binding.offset % 64, 0);
    for (uint32_t j = i + 1; j < g->buffer_count; ++j) {
      const tc_buffer_t *b = &n->buffers[j];
      if (b->binding.kind != TMOD_BUFFER_ARENA) continue;
      if (!((int64_t)a->index <= last_step(b) && (int64_t)b->index <= last_step(a))) continue;
      if (!disjoint(&a->binding, &b->binding)) assert_true(allowed(n, i, j) || allowed(n, j, i));
    }
    for (uint32_t d = 0; d < g->dispatch_count; ++d) {
      const tmod_binding_t *s = &n->dispatches[d].scratch;
      if (!n->dispatches[d].scratch_size) continue;
      if ((int64_t)a->index <= d && d <= last_step(a)) assert_true(disjoint(s, &a->binding));
    }
  }
}

/* ---- running the schedule --------------------------------------------- */

static int8_t weight(int32_t o, int32_t t) { return (int8_t)((o * 7 + t * 3) % 5 - 2); }

/* Output pixels in raster order and, within a pixel, each channel written
 * right after reading its whole window: the latest reads the streaming
 * contract (graph.h) allows. */
static void run_conv(const geom_t *c, const int8_t *in, int8_t *out) {
  for (int32_t q = 0; q < c->oh * c->ow; ++q) {
    const int32_t oy = q / c->ow, ox = q % c->ow;
    for (int32_t o = 0; o < c->oc; ++o) {
      int32_t acc = o;
      for (int32_t ky = 0; ky < c->k; ++ky)
        for (int32_t kx = 0; kx < c->k; ++kx) {
          const int32_t iy = oy * c->stride - c->pad + ky, ix = ox * c->stride - c->pad + kx;
          if (iy < 0 || iy >= c->ih || ix < 0 || ix >= c->iw) continue;
          for (int32_t i = 0; i < c->ic; ++i)
            acc += in[((size_t)iy * c->iw + ix) * c->ic + i] * weight(o, (ky * c->k + kx) * 9 + i);
        }
      out[(size_t)q * c->oc + o] = (int8_t)(acc ^ (acc >> 8));
    }
  }
}

static void run_add(size_t size, const int8_t *a, const int8_t *b, int8_t *out) {
  for (size_t i = 0; i < size; ++i) out[i] = (int8_t)(a[i] + 3 * b[i]);
}

typedef int8_t *(*place_fn)(const net_t *, uint32_t, void *);

/* Runs the schedule with buffer i at place(i); copies out the output. */
static void run(const net_t *n, const int8_t *input, place_fn place, void *user,
                int8_t *result) {
  for (uint32_t d = 0; d < n->g.dispatch_count; ++d) {
    const uint32_t *args = n->args[d];
    const int8_t *a = args[0] == 0 ? input : place(n, args[0], user);
    int8_t *out = place(n, args[2], user);
    if (n->geom[d].oc)
      run_conv(&n->geom[d], a, out);
    else
      run_add(n->buffers[args[2]].size, a, place(n, args[1], user), out);
  }
  memcpy(result, place(n, n->output, user), n->buffers[n->output].size);
}

static int8_t *separate(const net_t *n, uint32_t b, void *user) {
  (void)n;
  return (int8_t *)user + (size_t)b * 65536;
}

/* The output is bound to the caller's buffer; the others to the arena. */
static int8_t *planned(const net_t *n, uint32_t b, void *user) {
  int8_t *arena = user;
  if (n->buffers[b].binding.kind == TMOD_BUFFER_OUTPUT) return arena + 4 * 65536;
  return arena + n->buffers[b].binding.offset;
}

static void check_run(const net_t *n, unsigned seed) {
  int8_t input[65536], want[65536], got[65536];
  srand(seed);
  for (size_t i = 0; i < sizeof input; ++i) input[i] = (int8_t)(rand() % 256 - 128);
  int8_t *apart = calloc(MAXB, 65536), *arena = calloc(5, 65536);
  assert_non_null(apart);
  assert_non_null(arena);
  assert_true(n->g.arena_size <= 4 * 65536);
  run(n, input, separate, apart, want);
  run(n, input, planned, arena, got);
  assert_memory_equal(got, want, n->buffers[n->output].size);
  free(apart);
  free(arena);
}

/* ---- tests ------------------------------------------------------------ */

/* KWS's shape: a strided conv, then depthwise-like 3x3 and pointwise 1x1
 * convs on 25x5x64, each streaming over the one before. */
static void dscnn_chain_streams(void **state) {
  (void)state;
  net_t n;
  net_init(&n, 49 * 10);
  uint32_t b = conv(&n, 0, 49, 10, 1, 64, 3, 2, 1);
  for (int i = 0; i < 4; ++i) {
    b = conv(&n, b, 25, 5, 64, 64, 3, 1, 1);
    b = conv(&n, b, 25, 5, 64, 64, 1, 1, 0);
  }
  b = conv(&n, b, 25, 5, 64, 12, 1, 1, 0);
  for (uint32_t d = 1; d < n.g.dispatch_count; ++d) stream(&n, d);
  assert_null(plan(&n));
  check_plan(&n);
  check_run(&n, 1);
  /* Two 8000-byte buffers side by side would take 16000. */
  assert_true(n.g.arena_size < 12000);
}

/* A residual block: the skip x stays alive over the branch, so only the
 * second conv streams; the add writes over the dead skip. */
static void residual_block(void **state) {
  (void)state;
  net_t n;
  net_init(&n, 16 * 16 * 3);
  const uint32_t x = conv(&n, 0, 16, 16, 3, 16, 3, 1, 1);
  const uint32_t a = conv(&n, x, 16, 16, 16, 16, 3, 1, 1);
  const uint32_t b = conv(&n, a, 16, 16, 16, 16, 3, 1, 1);
  const uint32_t y = add_step(&n, x, b, (geom_t){0});
  conv(&n, y, 16, 16, 16, 8, 3, 2, 1);
  stream(&n, 1); /* not allowed: x is read again by the add */
  stream(&n, 2);
  n.dispatches[3].reuse_in = 1;
  n.dispatches[3].reuse_out = 3;
  stream(&n, 4);
  assert_null(plan(&n));
  check_plan(&n);
  check_run(&n, 2);
  assert_true(!disjoint(&n.buffers[a].binding, &n.buffers[b].binding));
  assert_int_equal(n.buffers[y].binding.offset, n.buffers[x].binding.offset);
  /* x, a and b are 4096 bytes each; three apart would be 12288. */
  assert_true(n.g.arena_size < 3 * 4096);
}

/* Bands run at once write rows other bands still read: no overlap. */
static void split_kernel_keeps_apart(void **state) {
  (void)state;
  net_t n;
  net_init(&n, 8 * 8 * 4);
  uint32_t a = conv(&n, 0, 8, 8, 4, 16, 3, 1, 1);
  uint32_t b = conv(&n, a, 8, 8, 16, 16, 3, 1, 1);
  conv(&n, b, 8, 8, 16, 4, 1, 1, 0);
  stream(&n, 1);
  n.dispatches[1].phase_count = 1;
  n.dispatches[1].workgroups[0] = 2;
  assert_null(plan(&n));
  check_plan(&n);
  assert_true(disjoint(&n.buffers[a].binding, &n.buffers[b].binding));
}

/* Random geometries: the output placed exactly the lead below the input
 * (rounded up to the arena's 64 bytes by the planner, so tested here
 * without rounding) still computes the separate-buffer result. */
static void lead_is_enough(void **state) {
  (void)state;
  srand(7);
  for (int t = 0; t < 300; ++t) {
    geom_t c = {1 + rand() % 12, 1 + rand() % 12, 1 + rand() % 6, 0, 0, 1 + rand() % 6,
                1 + rand() % 4, 1 + rand() % 3, 0};
    c.pad = rand() % c.k;
    if (c.ih + 2 * c.pad < c.k || c.iw + 2 * c.pad < c.k) continue;
    const uint64_t out_size = conv_out(&c), in_size = (uint64_t)c.ih * c.iw * c.ic;
    const uint64_t lead = tc_stream_lead(c.ih, c.iw, c.ic, c.oh, c.ow, c.oc, c.stride, c.pad);
    assert_true(lead <= out_size);
    int8_t in[1024], want[4096], mem[8192];
    for (uint64_t i = 0; i < in_size; ++i) in[i] = (int8_t)(rand() % 256 - 128);
    run_conv(&c, in, want);
    memcpy(mem + lead, in, in_size);
    run_conv(&c, mem + lead, mem);
    assert_memory_equal(mem, want, out_size);
  }
}

/* Random chains with branches and scratch, nothing shared: every pair
 * alive together is apart, and the arena holds the largest live set. */
static void random_graphs_never_overlap(void **state) {
  (void)state;
  srand(11);
  for (int t = 0; t < 200; ++t) {
    net_t n;
    net_init(&n, 64);
    uint32_t live = 0;
    const int steps = 3 + rand() % 10;
    for (int s = 0; s < steps; ++s) {
      const uint32_t from = rand() % 3 == 0 ? live : n.g.buffer_count - 1;
      const int32_t w = 1 + rand() % 40, ch = 1 + rand() % 16;
      const uint32_t b = conv(&n, from, 1, w, 1, ch, 1, 1, 0);
      n.dispatches[n.g.dispatch_count - 1].scratch_size = (uint64_t)(rand() % 3) * 100;
      if (rand() % 4 == 0) live = b;
    }
    assert_null(plan(&n));
    check_plan(&n);
    for (uint32_t d = 0; d < n.g.dispatch_count; ++d) {
      uint64_t sum = n.dispatches[d].scratch_size;
      for (uint32_t i = 1; i < n.g.buffer_count; ++i)
        if (n.buffers[i].binding.kind == TMOD_BUFFER_ARENA && n.buffers[i].index <= d &&
            (int64_t)d <= last_step(&n.buffers[i]))
          sum += n.buffers[i].size;
      assert_true(n.g.arena_size >= sum);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dscnn_chain_streams),
      cmocka_unit_test(residual_block),
      cmocka_unit_test(split_kernel_keeps_apart),
      cmocka_unit_test(lead_is_enough),
      cmocka_unit_test(random_graphs_never_overlap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
