/* The static memory plan.  Buffers that live in the arena get offsets from a
 * greedy-by-size placement over their lifetimes (the same idea as TFLite
 * Micro's GreedyMemoryPlanner): largest first, each at the lowest aligned
 * offset that no overlapping-in-time buffer uses, and the same in a few
 * other orders, keeping the smallest.  A kernel's output may take the
 * place of an input it reads for the last time (share_places), and a
 * streaming kernel's output may overlap its dying input from a lead below
 * it on (note_streams). */
#include <stdlib.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "memory_plan.h"
#include "memory_plan_internal.h"


uint64_t tc_plan_align(uint64_t x) { return (x + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN; }

static int by_size_desc(const void *x, const void *y) {
  const item_t *a = x, *b = y;
  if (a->size != b->size) return a->size < b->size ? 1 : -1;
  return a->first < b->first ? -1 : a->first > b->first;
}

static int overlaps_in_time(const item_t *a, const item_t *b) {
  return a->first <= b->last && b->first <= a->last;
}

/* Whether `it` at offset `at` takes bytes of `o` (alive with it) that it
 * may not; then *next is the next offset worth trying.  A streaming
 * kernel's output may overlap its input from `lead` bytes below it on. */
static int clashes(const item_t *o, const item_t *it, uint64_t at, uint64_t *next) {
  if (!(at < o->offset + o->size && o->offset < at + it->size)) return 0;
  *next = tc_plan_align(o->offset + o->size);
  if (it->stream_of != UINT32_MAX && it->stream_of == o->buffer)
    return at + it->lead > o->offset;
  if (o->stream_of != UINT32_MAX && o->stream_of == it->buffer) {
    if (o->offset + o->lead <= at) return 0;
    *next = tc_plan_align(o->offset + o->lead);
  }
  return 1;
}

uint64_t tc_plan_place(const item_t *items, size_t placed, const item_t *it) {
  uint64_t offset = 0, next = 0;
  int moved = 1;
  while (moved) {
    moved = 0;
    for (size_t k = 0; k < placed; ++k) {
      const item_t *o = &items[k];
      if (!overlaps_in_time(o, it)) continue;
      if (clashes(o, it, offset, &next)) {
        offset = next;
        moved = 1;
      }
    }
  }
  return offset;
}

uint64_t tc_plan_place_all(item_t *items, size_t n, uint32_t region) {
  qsort(items, n, sizeof(item_t), by_size_desc);
  uint64_t end = 0;
  for (size_t k = 0; k < n; ++k) {
    items[k].offset = tc_plan_place(items, k, &items[k]);
    *items[k].binding = (tmod_binding_t){TMOD_BUFFER_ARENA, region, items[k].offset, items[k].size};
    if (items[k].offset + items[k].size > end) end = items[k].offset + items[k].size;
  }
  return tc_plan_align(end);
}

static int later_first(const void *x, const void *y) {
  const item_t *a = x, *b = y;
  if (a->first != b->first) return a->first < b->first ? 1 : -1;
  return by_size_desc(x, y);
}

static int earlier_first(const void *x, const void *y) { return later_first(y, x); }

static int longest_first(const void *x, const void *y) {
  const item_t *a = x, *b = y;
  const int64_t la = a->last - a->first, lb = b->last - b->first;
  if (la != lb) return la < lb ? 1 : -1;
  return by_size_desc(x, y);
}

/* Longest-lived first, the later of equal lives first: a skip held over
 * a branch goes first, then each stream's output before its input. */
static int longest_later(const void *x, const void *y) {
  const item_t *a = x, *b = y;
  const int64_t la = a->last - a->first, lb = b->last - b->first;
  if (la != lb) return la < lb ? 1 : -1;
  return later_first(x, y);
}

/* Largest first, the later of equal sizes first: a streaming kernel's
 * output is then placed before its input, which may slide under it. */
static int by_size_later(const void *x, const void *y) {
  const item_t *a = x, *b = y;
  if (a->size != b->size) return a->size < b->size ? 1 : -1;
  return a->first < b->first ? 1 : a->first > b->first ? -1 : 0;
}

static uint64_t place_in_order(item_t *items, size_t n, int (*order)(const void *, const void *)) {
  qsort(items, n, sizeof(item_t), order);
  uint64_t end = 0;
  for (size_t k = 0; k < n; ++k) {
    items[k].offset = tc_plan_place(items, k, &items[k]);
    if (items[k].offset + items[k].size > end) end = items[k].offset + items[k].size;
  }
  return tc_plan_align(end);
}

tinyml_status_t tc_plan_place_best(item_t *items, size_t n, uint32_t region,
                                   const tinyml_allocator_t *a, uint64_t *out_size) {
  static int (*const orders[])(const void *, const void *) = {
      by_size_desc, by_size_later, later_first, earlier_first, longest_first, longest_later};
  item_t *trial = tinyml__calloc(a, n + 1, sizeof(item_t), 8);
  if (!trial)
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY,
                               "compiler: out of memory placing arena buffers");
  uint64_t best = place_in_order(items, n, orders[0]);
  for (size_t o = 1; o < sizeof orders / sizeof orders[0]; ++o) {
    memcpy(trial, items, n * sizeof(item_t));
    const uint64_t size = place_in_order(trial, n, orders[o]);
    if (size < best) {
      best = size;
      memcpy(items, trial, n * sizeof(item_t));
    }
  }
  tinyml__free(a, trial);
  for (size_t k = 0; k < n; ++k)
    *items[k].binding = (tmod_binding_t){TMOD_BUFFER_ARENA, region, items[k].offset, items[k].size};
  *out_size = best;
  return TINYML_OK;
}

/* Steps that touch each item: its writer and every read of it (through any
 * buffer that shares its place); a kernel's scratch counts as 2. */
static void count_uses(const tc_graph_t *g, const uint32_t *root, item_t *items, size_t n) {
  for (size_t k = 0; k < n; ++k) items[k].uses = items[k].buffer == UINT32_MAX ? 2 : 1;
  for (uint32_t d = 0; d < g->dispatch_count; ++d) {
    const tc_dispatch_t *dp = &g->dispatches[d];
    for (uint32_t i = 0; i < dp->input_count; ++i)
      for (size_t k = 0; k < n; ++k)
        if (items[k].buffer == root[dp->args[i]]) items[k].uses++;
  }
}

static void claim_outputs(tc_graph_t *g) {
  for (uint32_t j = 0; j < g->output_count; ++j) {
    tc_buffer_t *b = &g->buffers[g->outputs[j]];
    if (b->kind == TC_BUFFER_PRODUCED && b->binding.kind != TMOD_BUFFER_OUTPUT) {
      b->binding = (tmod_binding_t){TMOD_BUFFER_OUTPUT, j, 0, b->size};
    } else {
      b->last_use = g->dispatch_count; /* copied out after the last dispatch */
    }
  }
}

static void bind_fixed(tc_graph_t *g) {
  uint64_t off = 0;
  for (uint32_t i = 0; i < g->buffer_count; ++i) {
    tc_buffer_t *b = &g->buffers[i];
    if (b->kind == TC_BUFFER_INPUT) {
      b->binding = (tmod_binding_t){TMOD_BUFFER_INPUT, b->index, 0, b->size};
    } else if (b->kind == TC_BUFFER_CONSTANT) {
      b->binding = (tmod_binding_t){TMOD_BUFFER_CONSTANT, 0, off, b->size};
      off = tc_plan_align(off + b->size);
    } else {
      b->binding.kind = TMOD_BUFFER_ARENA; /* until claimed as an output */
    }
  }
  g->constants_size = off;
}

static int in_arena(const tc_buffer_t *b) {
  return b->kind == TC_BUFFER_PRODUCED && b->binding.kind == TMOD_BUFFER_ARENA;
}

/* root[b]: the buffer whose place b takes, b itself when none.  A dispatch
 * whose output may overwrite an input (tc_dispatch_t.reuse_in) gets that
 * input's place when this is the input's last read, the dispatch reads it
 * through no other argument, and both are arena buffers of one size.  On
 * ResNet-50's residual 1x1 convs the output's lines are then ones the
 * kernel has just read, not a third stream of memory traffic. */
static void share_places(const tc_graph_t *g, uint32_t *root) {
  for (uint32_t b = 0; b < g->buffer_count; ++b) root[b] = b;
  for (uint32_t d = 0; d < g->dispatch_count; ++d) {
    const tc_dispatch_t *dp = &g->dispatches[d];
    if (!dp->reuse_in || dp->reuse_in > dp->input_count || dp->reuse_out <= dp->input_count ||
        dp->reuse_out > dp->input_count + dp->output_count)
      continue;
    const uint32_t r = dp->args[dp->reuse_in - 1], o = dp->args[dp->reuse_out - 1];
    const tc_buffer_t *rb = &g->buffers[r], *ob = &g->buffers[o];
    if (!in_arena(rb) || !in_arena(ob) || rb->last_use != (int64_t)d || rb->size != ob->size)
      continue;
    uint32_t reads = 0;
    for (uint32_t i = 0; i < dp->input_count; ++i) reads += dp->args[i] == r;
    if (reads == 1) root[o] = root[r];
  }
}

static int64_t last_of(const tc_buffer_t *b) {
  return b->last_use > (int64_t)b->index ? b->last_use : (int64_t)b->index;
}

static int one_workgroup(const tc_dispatch_t *dp) {
  for (uint32_t k = 0; k < dp->phase_count && k < TC_MAX_PHASES; ++k)
    if (dp->workgroups[k] > 1) return 0;
  return 1;
}

/* The output item of each streaming kernel (tc_dispatch_t.stream_in) may
 * overlap its input when this is the input's last read, the kernel reads
 * it through no other argument and runs as one workgroup: bands computed
 * at once would write rows another band has yet to read. */
static void note_streams(const tc_graph_t *g, const uint32_t *root, const int64_t *last,
                         item_t *items, size_t n) {
  for (uint32_t d = 0; d < g->dispatch_count; ++d) {
    const tc_dispatch_t *dp = &g->dispatches[d];
    if (!dp->stream_in || dp->stream_in > dp->input_count || dp->stream_out <= dp->input_count ||
        dp->stream_out > dp->input_count + dp->output_count || !one_workgroup(dp))
      continue;
    const uint32_t r = root[dp->args[dp->stream_in - 1]], o = root[dp->args[dp->stream_out - 1]];
    if (r == o || last[r] != (int64_t)d || !in_arena(&g->buffers[r]) ||
        !in_arena(&g->buffers[o]))
      continue;
    uint32_t reads = 0;
    for (uint32_t i = 0; i < dp->input_count; ++i) reads += root[dp->args[i]] == r;
    for (size_t k = 0; reads == 1 && k < n; ++k)
      if (items[k].buffer == o) {
        items[k].stream_of = r;
        items[k].lead = dp->stream_lead;
      }
  }
}

tinyml_status_t tc_plan_memory(tc_graph_t *g, const tinyml_allocator_t *a) {
  bind_fixed(g);
  claim_outputs(g);
  size_t n = 0, cap = g->buffer_count + g->dispatch_count + 1;
  item_t *items = tinyml__calloc(a, cap, sizeof(item_t), 8);
  uint32_t *root = tinyml__calloc(a, g->buffer_count + 1, sizeof(uint32_t), 4);
  int64_t *last = tinyml__calloc(a, g->buffer_count + 1, sizeof(int64_t), 8);
  if (!items || !root || !last) {
    tinyml__free(a, items);
    tinyml__free(a, root);
    tinyml__free(a, last);
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY,
                               "compiler: out of memory planning memory");
  }
  share_places(g, root);
  for (uint32_t i = 0; i < g->buffer_count; ++i) last[i] = last_of(&g->buffers[i]);
  for (uint32_t i = 0; i < g->buffer_count; ++i)
    if (root[i] != i && last[i] > last[root[i]]) last[root[i]] = last[i];
  for (uint32_t i = 0; i < g->buffer_count; ++i) {
    tc_buffer_t *b = &g->buffers[i];
    if (!in_arena(b) || root[i] != i) continue;
    items[n++] = (item_t){b->size, 0, b->index, last[i], &b->binding, i, 0, UINT32_MAX, 0};
  }
  for (uint32_t d = 0; d < g->dispatch_count; ++d) {
    tc_dispatch_t *dp = &g->dispatches[d];
    if (dp->scratch_size)
      items[n++] =
          (item_t){dp->scratch_size, 0, d, d, &dp->scratch, UINT32_MAX, 0, UINT32_MAX, 0};
  }
  note_streams(g, root, last, items, n);
  tinyml_status_t st = TINYML_OK;
  if (g->region_caps[0]) {
    count_uses(g, root, items, n);
    st = tc_plan_regions(g, items, n, a);
  } else {
    g->region_count = 1;
    st = tc_plan_place_best(items, n, 0, a, &g->region_sizes[0]);
  }
  for (uint32_t i = 0; !st && i < g->buffer_count; ++i)
    if (root[i] != i) {
      g->buffers[i].binding = g->buffers[root[i]].binding;
      g->buffers[i].binding.size = g->buffers[i].size;
    }
  g->arena_size = g->region_sizes[0];
  tinyml__free(a, items);
  tinyml__free(a, root);
  tinyml__free(a, last);
  return st;
}
