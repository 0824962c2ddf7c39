/* The freestanding mapping strategy (see elf_map.h), for bare metal
 * without an MMU: the image lives in memory from the caller's allocator,
 * aligned to the largest p_align, and nothing is protected.  The handle
 * follows the image in the same allocation (the image's span is whole
 * pages, so it is aligned): one allocation per executable. */
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "elf_map.h"

/* No MMU, no pages: the loader does not call it, and lays images out in
 * 4 KiB units. */
size_t tinyml__elf_map_page_size(void) { return 4096; }

tinyml_status_t tinyml__elf_map_reserve(const tinyml_allocator_t *allocator,
                                        size_t span, size_t align,
                                        tinyml__elf_memory_t *out) {
  size_t size = span + sizeof(tinyml__elf_t);
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  uint8_t *m = tinyml__alloc(&a, size, align);
  if (!m)
    return TINYML_STATUS_MAKE(allocator, TINYML_STATUS_OUT_OF_MEMORY,
                              "elf: cannot map %zu bytes", size);
  /* Nothing was over-reserved: a misaligned region would push the image's
   * tail past its end, over whatever the allocator hands out next. */
  if ((uintptr_t)m & (align - 1)) {
    tinyml_status_t s = TINYML_STATUS_MAKE(
        allocator, TINYML_STATUS_INVALID_MODULE,
        "elf: the allocator returned %zu bytes that are not aligned to %llu", size,
        (unsigned long long)align);
    tinyml__free(&a, m);
    return s;
  }
  memset(m, 0, size); /* mmap gives zeros; an allocator may not (.bss, gaps) */
  out->region.region = m;
  out->region.region_size = size;
  out->base = m;
  return TINYML_OK;
}

/* No MMU: nothing to protect with.  The loader does not call it. */
tinyml_status_t tinyml__elf_map_protect(const tinyml_allocator_t *allocator,
                                        void *begin, size_t size,
                                        uint32_t flags) {
  (void)allocator;
  (void)begin;
  (void)size;
  (void)flags;
  return TINYML_OK;
}

tinyml_status_t tinyml__elf_map_finish(tinyml_status_t status,
                                       tinyml__elf_t *region,
                                       const tinyml_allocator_t *allocator,
                                       tinyml__elf_t **out_elf) {
  if (status) {
    tinyml__elf_unload(region, allocator); /* frees the region, if any */
    return status;
  }
  /* The handle's place, reserved after the image. */
  tinyml__elf_t *elf = (tinyml__elf_t *)(void *)((uint8_t *)region->region +
                                                  region->region_size) - 1;
  *elf = *region;
  *out_elf = elf;
  return TINYML_OK;
}

/* Also frees a region that has no handle yet: the handle is the region's
 * record, kept inside the region. */
void tinyml__elf_unload(tinyml__elf_t *elf, const tinyml_allocator_t *allocator) {
  if (!elf) return;
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  tinyml__free(&a, elf->region); /* NULL: nothing was reserved */
}
