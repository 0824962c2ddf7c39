/* White-box tests of the static memory plan (lib/compiler/memory_plan.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/common/alloc.h"
#include "lib/compiler/graph.h"

static tinyml_status_t plan(tc_graph_t *g) {
  tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  return tc_plan_memory(g, &a);
}

/* A chain d0 -> d1 -> ... where dispatch i reads buffer i and writes i+1;
 * buffer 0 is the input and the last buffer the output. */
typedef struct chain {
  tc_graph_t g;
  tc_buffer_t buffers[8];
  tc_dispatch_t dispatches[8];
  uint32_t args[8][2];
  uint32_t output;
} chain_t;

static void make_chain(chain_t *c, const uint64_t *sizes, uint32_t n) {
  memset(c, 0, sizeof(*c));
  for (uint32_t i = 0; i < n; ++i) {
    c->buffers[i] = (tc_buffer_t){i == 0 ? TC_BUFFER_INPUT : TC_BUFFER_PRODUCED,
                                  i == 0 ? 0 : i - 1, sizes[i], -1, {0}};
    if (i + 1 < n) c->buffers[i].last_use = i;
  }
  for (uint32_t d = 0; d + 1 < n; ++d) {
    c->args[d][0] = d;
    c->args[d][1] = d + 1;
    c->dispatches[d] = (tc_dispatch_t){.input_count = 1, .output_count = 1, .args = c->args[d]};
  }
  c->output = n - 1;
  c->g.buffers = c->buffers;
  c->g.buffer_count = n;
  c->g.dispatches = c->dispatches;
  c->g.dispatch_count = n - 1;
  c->g.outputs = &c->output;
  c->g.output_count = 1;
}

static int live_together(const tc_buffer_t *a, const tc_buffer_t *b) {
  return (int64_t)a->index <= b->last_use && (int64_t)b->index <= a->last_use;
}

static void assert_no_live_overlap(const tc_graph_t *g) {
  for (uint32_t i = 0; i < g->buffer_count; ++i)
    for (uint32_t j = i + 1; j < g->buffer_count; ++j) {
      const tc_buffer_t *a = &g->buffers[i], *b = &g->buffers[j];
      if (a->binding.kind != TMOD_BUFFER_ARENA || b->binding.kind != TMOD_BUFFER_ARENA)
        continue;
      if (!live_together(a, b)) continue;
      int disjoint = a->binding.offset + a->size <= b->binding.offset ||
                     b->binding.offset + b->size <= a->binding.offset;
      assert_true(disjoint);
    }
}

static void chain_reuses_dead_space(void **state) {
  (void)state;
  chain_t c;
  uint64_t sizes[] = {1000, 4096, 4096, 4096, 4096, 256};
  make_chain(&c, sizes, 6);
  assert_null(plan(&c.g));
  assert_no_live_overlap(&c.g);
  /* Only two intermediates are ever alive together. */
  assert_int_equal(c.g.arena_size, 2 * 4096);
  /* The result goes straight to the caller's output buffer. */
  assert_int_equal(c.buffers[5].binding.kind, TMOD_BUFFER_OUTPUT);
  assert_int_equal(c.buffers[0].binding.kind, TMOD_BUFFER_INPUT);
}

static void scratch_gets_its_own_slot(void **state) {
  (void)state;
  chain_t c;
  uint64_t sizes[] = {64, 128, 128, 64};
  make_chain(&c, sizes, 4);
  c.dispatches[1].scratch_size = 192;
  assert_null(plan(&c.g));
  assert_no_live_overlap(&c.g);
  const tmod_binding_t *s = &c.dispatches[1].scratch;
  assert_int_equal(s->kind, TMOD_BUFFER_ARENA);
  assert_int_equal(s->size, 192);
  /* Dispatch 1 reads buffer 1 and writes buffer 2 while using scratch. */
  for (int b = 1; b <= 2; ++b) {
    const tmod_binding_t *x = &c.buffers[b].binding;
    assert_true(x->offset + x->size <= s->offset || s->offset + s->size <= x->offset);
  }
  assert_true(c.g.arena_size >= 128 + 128 + 192);
}

static void offsets_are_aligned(void **state) {
  (void)state;
  chain_t c;
  uint64_t sizes[] = {4, 3, 5, 7, 9, 4};
  make_chain(&c, sizes, 6);
  assert_null(plan(&c.g));
  for (uint32_t i = 0; i < c.g.buffer_count; ++i)
    if (c.buffers[i].binding.kind == TMOD_BUFFER_ARENA)
      assert_int_equal(c.buffers[i].binding.offset % 64, 0);
  assert_int_equal(c.g.arena_size % 64, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chain_reuses_dead_space),
      cmocka_unit_test(scratch_gets_its_own_slot),
      cmocka_unit_test(offsets_are_aligned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
