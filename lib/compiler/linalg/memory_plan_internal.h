/* What the memory plan (memory_plan.c) and its split into arena regions
 * (memory_regions.c) share.  Internal to lib/compiler/linalg. */
#ifndef TINYML_COMPILER_LINALG_MEMORY_PLAN_INTERNAL_H
#define TINYML_COMPILER_LINALG_MEMORY_PLAN_INTERNAL_H

#include "graph.h"

#define ARENA_ALIGN 64u

/* One arena buffer or kernel scratch to place: alive from step `first`
 * to step `last`; its place goes to *binding. */
typedef struct item {
  uint64_t size, offset;
  int64_t first, last;
  tmod_binding_t *binding;
  uint32_t buffer; /* buffer id; UINT32_MAX for a kernel's scratch */
  uint32_t uses;   /* steps that touch it (count_uses), for regions */
  /* The buffer this one may overlap as a streaming kernel's output
   * (tc_dispatch_t.stream_in), UINT32_MAX for none, and by how many bytes
   * it must start before that buffer where they overlap. */
  uint32_t stream_of;
  uint64_t lead;
} item_t;

uint64_t tc_plan_align(uint64_t x);
/* Lowest aligned offset where `it` fits beside every one of the `placed`
 * items alive with it. */
uint64_t tc_plan_place(const item_t *items, size_t placed, const item_t *it);
/* Places items[0..n) by size, largest first (it sorts them), in arena
 * region `region`; returns the region's size. */
uint64_t tc_plan_place_all(item_t *items, size_t n, uint32_t region);
/* Places items[0..n) in several orders (by size, by time, by lifetime)
 * and keeps the smallest plan, the largest-first one on ties; sets each
 * binding in region `region` and *out_size.  It reorders items. */
tinyml_status_t tc_plan_place_best(item_t *items, size_t n, uint32_t region,
                                   const tinyml_allocator_t *a, uint64_t *out_size);
/* Splits items[0..n) over g->region_caps (at least one): sets each
 * binding, g->region_count and g->region_sizes.  UNSUPPORTED, naming the
 * buffer, when one fits in no region. */
tinyml_status_t tc_plan_regions(tc_graph_t *g, item_t *items, size_t n,
                                const tinyml_allocator_t *a);

#endif
