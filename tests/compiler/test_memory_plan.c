/* White-box tests of the static memory plan (lib/compiler/memory_plan.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/common/alloc.h"
#include "lib/compiler/linalg/graph.h"
#include "lib/compiler/linalg/memory_plan.h"

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

/* A residual block's end: d0 and d1 make the skip (b1) and the branch (b2);
 * d2 reads both and may write b3 over the skip (reuse_in/out: args 1 and
 * 2); d3 makes the output b4. */
typedef struct block {
  tc_graph_t g;
  tc_buffer_t buffers[5];
  tc_dispatch_t dispatches[4];
  uint32_t args[4][3];
  uint32_t output;
} block_t;

static void make_block(block_t *b) {
  memset(b, 0, sizeof(*b));
  const uint64_t sizes[5] = {64, 256, 256, 256, 64};
  const int64_t last[5] = {1, 2, 2, 3, -1};
  for (uint32_t i = 0; i < 5; ++i)
    b->buffers[i] = (tc_buffer_t){i == 0 ? TC_BUFFER_INPUT : TC_BUFFER_PRODUCED,
                                  i == 0 ? 0 : i - 1, sizes[i], last[i], {0}};
  const uint32_t args[4][3] = {{0, 1}, {0, 2}, {2, 1, 3}, {3, 4}};
  memcpy(b->args, args, sizeof args);
  for (uint32_t d = 0; d < 4; ++d)
    b->dispatches[d] = (tc_dispatch_t){.input_count = d == 2 ? 2 : 1, .output_count = 1,
                                       .args = b->args[d]};
  b->dispatches[2].reuse_in = 2;
  b->dispatches[2].reuse_out = 3;
  b->output = 4;
  b->g.buffers = b->buffers;
  b->g.buffer_count = 5;
  b->g.dispatches = b->dispatches;
  b->g.dispatch_count = 4;
  b->g.outputs = &b->output;
  b->g.output_count = 1;
}

static int same_place(const block_t *b, uint32_t x, uint32_t y) {
  return b->buffers[x].binding.offset == b->buffers[y].binding.offset;
}

static void output_takes_last_read_residual(void **state) {
  (void)state;
  block_t b;
  make_block(&b);
  assert_null(plan(&b.g));
  assert_true(same_place(&b, 1, 3));
  assert_int_equal(b.buffers[3].binding.kind, TMOD_BUFFER_ARENA);
  assert_int_equal(b.buffers[3].binding.size, 256);
  /* The branch is read while the pair is in use. */
  const tmod_binding_t *x = &b.buffers[2].binding, *y = &b.buffers[3].binding;
  assert_true(x->offset + x->size <= y->offset || y->offset + y->size <= x->offset);
  assert_int_equal(b.g.arena_size, 2 * 256);
}

static void residual_read_later_keeps_its_place(void **state) {
  (void)state;
  block_t b;
  make_block(&b);
  b.buffers[1].last_use = 3; /* d3 reads the skip too */
  b.args[3][0] = 1;
  b.args[3][1] = 4;
  b.buffers[3].last_use = 2;
  assert_null(plan(&b.g));
  assert_false(same_place(&b, 1, 3));
  assert_no_live_overlap(&b.g);
}

static void residual_read_twice_keeps_its_place(void **state) {
  (void)state;
  block_t b;
  make_block(&b);
  b.args[2][0] = 1; /* the conv's input is the residual too */
  b.buffers[2].last_use = -1;
  assert_null(plan(&b.g));
  assert_false(same_place(&b, 1, 3));
  assert_no_live_overlap(&b.g);
}

static void residual_of_other_size_keeps_its_place(void **state) {
  (void)state;
  block_t b;
  make_block(&b);
  b.buffers[1].size = 512;
  assert_null(plan(&b.g));
  assert_false(same_place(&b, 1, 3));
  assert_no_live_overlap(&b.g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chain_reuses_dead_space),
      cmocka_unit_test(scratch_gets_its_own_slot),
      cmocka_unit_test(offsets_are_aligned),
      cmocka_unit_test(output_takes_last_read_residual),
      cmocka_unit_test(residual_read_later_keeps_its_place),
      cmocka_unit_test(residual_read_twice_keeps_its_place),
      cmocka_unit_test(residual_of_other_size_keeps_its_place),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
