/* The arena split into regions of given capacities (memory_plan_internal.h):
 * a small fast memory first, then slower ones.  Buffers are taken in order
 * of steps that touch them per byte, most first, and each goes to the
 * first region where it fits beside what is alive with it; each region is
 * then re-placed largest first when that packs it tighter. */
#include <stdlib.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "memory_plan_internal.h"

/* uses/size descending, as cross products (no division, no rounding: uses
 * are steps, far below 2^16, and sizes below 2^47, the importers' limit);
 * then larger first, then earlier. */
static int by_heat(const void *x, const void *y) {
  const item_t *a = x, *b = y;
  uint64_t l = (uint64_t)a->uses * b->size, r = (uint64_t)b->uses * a->size;
  if (l != r) return l > r ? -1 : 1;
  if (a->size != b->size) return a->size < b->size ? 1 : -1;
  return a->first < b->first ? -1 : a->first > b->first;
}

static tinyml_status_t too_large(const tc_graph_t *g, const item_t *it,
                                 const tinyml_allocator_t *a) {
  const char *label = g->dispatches[it->first].label;
  return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                             "compile: arena regions: the %llu-byte %s of step %lld (%s) fits "
                             "in no region beside what is alive with it",
                             (unsigned long long)it->size,
                             it->buffer == UINT32_MAX ? "kernel scratch" : "buffer",
                             (long long)it->first, label && label[0] ? label : "unnamed");
}

/* Re-places region r's items largest first, if that makes it smaller;
 * `scratch` has room for `count` items and bindings. */
static void compact(item_t *in_region, size_t count, uint32_t r, uint64_t *size,
                    item_t *copy, tmod_binding_t *saved) {
  memcpy(copy, in_region, count * sizeof(item_t));
  for (size_t k = 0; k < count; ++k) saved[k] = *copy[k].binding;
  uint64_t packed = tc_plan_place_all(copy, count, r);
  if (packed <= *size) {
    *size = packed;
    return;
  }
  for (size_t k = 0; k < count; ++k) *copy[k].binding = saved[k];
}

tinyml_status_t tc_plan_regions(tc_graph_t *g, item_t *items, size_t n,
                                const tinyml_allocator_t *a) {
  uint32_t count = 0;
  while (count < TMOD_MAX_ARENA_REGIONS && g->region_caps[count]) ++count;
  qsort(items, n, sizeof(item_t), by_heat);
  item_t *placed = tinyml__calloc(a, (size_t)(count + 1) * n + 1, sizeof(item_t), 8);
  tmod_binding_t *saved = tinyml__calloc(a, n + 1, sizeof(tmod_binding_t), 8);
  if (!placed || !saved) {
    tinyml__free(a, placed);
    tinyml__free(a, saved);
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY,
                               "compiler: out of memory planning arena regions");
  }
  size_t used[TMOD_MAX_ARENA_REGIONS] = {0};
  uint64_t end[TMOD_MAX_ARENA_REGIONS] = {0};
  tinyml_status_t st = TINYML_OK;
  for (size_t k = 0; k < n && !st; ++k) {
    uint32_t r = 0;
    for (; r < count; ++r) {
      item_t *region = placed + (size_t)r * n;
      items[k].offset = tc_plan_place(region, used[r], &items[k]);
      if (items[k].offset + items[k].size <= g->region_caps[r]) break;
    }
    if (r == count) {
      st = too_large(g, &items[k], a);
      break;
    }
    placed[(size_t)r * n + used[r]++] = items[k];
    *items[k].binding = (tmod_binding_t){TMOD_BUFFER_ARENA, r, items[k].offset, items[k].size};
    if (items[k].offset + items[k].size > end[r]) end[r] = items[k].offset + items[k].size;
  }
  for (uint32_t r = 0; r < count && !st; ++r) {
    g->region_sizes[r] = tc_plan_align(end[r]);
    compact(placed + (size_t)r * n, used[r], r, &g->region_sizes[r], placed + (size_t)count * n,
            saved);
  }
  g->region_count = count;
  tinyml__free(a, placed);
  tinyml__free(a, saved);
  return st;
}
