/* The hosted mapping strategy (see elf_map.h): the image is one anonymous
 * private mapping, read-write while the loader fills and relocates it;
 * mprotect then gives each segment its protection.  The mapping is
 * over-reserved so the image's base can honour the largest p_align.  The
 * handle is a separate allocation from the caller's allocator, made once
 * the image has loaded. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "elf_format.h"
#include "elf_map.h"

size_t tinyml__elf_map_page_size(void) {
  long page = sysconf(_SC_PAGESIZE);
  return page > 0 ? (size_t)page : 4096;
}

tinyml_status_t tinyml__elf_map_reserve(const tinyml_allocator_t *allocator,
                                        size_t span, size_t align,
                                        tinyml__elf_memory_t *out) {
  /* mmap returns whole pages: at most align - page bytes go to alignment. */
  size_t size = span + align - tinyml__elf_map_page_size();
  void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return TINYML_STATUS_MAKE(allocator, TINYML_STATUS_OUT_OF_MEMORY,
                              "elf: cannot map %zu bytes", size);
  uintptr_t a = (uintptr_t)m;
  uintptr_t aligned = (a + (align - 1)) & ~(uintptr_t)(align - 1);
  out->region.region = m;
  out->region.region_size = size;
  out->base = (uint8_t *)m + (aligned - a);
  return TINYML_OK;
}

static int prot_of(uint32_t flags) {
  int prot = PROT_NONE;
  if (flags & PF_R) prot |= PROT_READ;
  if (flags & PF_W) prot |= PROT_WRITE;
  if (flags & PF_X) prot |= PROT_EXEC;
  return prot;
}

tinyml_status_t tinyml__elf_map_protect(const tinyml_allocator_t *allocator,
                                        void *begin, size_t size,
                                        uint32_t flags) {
  if (mprotect(begin, size, prot_of(flags)) != 0)
    return TINYML_STATUS_MAKE(allocator, TINYML_STATUS_INTERNAL,
                              "elf: mprotect failed (errno %d)", errno);
  return TINYML_OK;
}

tinyml_status_t tinyml__elf_map_finish(tinyml_status_t status,
                                       tinyml__elf_t *region,
                                       const tinyml_allocator_t *allocator,
                                       tinyml__elf_t **out_elf) {
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  tinyml__elf_t *elf = NULL;
  if (!status) {
    elf = tinyml__alloc(&a, sizeof *elf, _Alignof(tinyml__elf_t));
    if (!elf)
      status = TINYML_STATUS_MAKE(allocator, TINYML_STATUS_OUT_OF_MEMORY,
                                  "elf: out of memory");
  }
  if (status) {
    if (region->region) munmap(region->region, region->region_size);
    return status;
  }
  *elf = *region;
  *out_elf = elf;
  return TINYML_OK;
}

void tinyml__elf_unload(tinyml__elf_t *elf, const tinyml_allocator_t *allocator) {
  if (!elf) return;
  munmap(elf->region, elf->region_size);
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  tinyml__free(&a, elf);
}
