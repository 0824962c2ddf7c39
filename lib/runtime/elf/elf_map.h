/* Where a loaded image lives: the mapping strategy.  Each strategy is one
 * file, and meson compiles the build's (lib/runtime/elf/meson.build):
 *
 *   map_mmap.c    hosted: an anonymous mapping, read-write while the
 *                 loader fills and relocates it, then page protections;
 *   map_caller.c  freestanding (bare metal, no MMU): memory from the
 *                 caller's allocator, never protected.
 *
 * The loader lays the image out and decides each segment's protection
 * (elf_loader.c); a strategy reserves, protects and releases the memory and
 * keeps the handle of a loaded image.  They keep no state of their own, so
 * loads on different threads do not interfere (given an allocator that
 * allows it).  A handle belongs to the module that loaded it. */
#ifndef TINYML_RUNTIME_ELF_MAP_H
#define TINYML_RUNTIME_ELF_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "elf_loader.h"

#ifndef TINYML_FREESTANDING
#define TINYML_FREESTANDING 0
#endif

/* Whether the build's strategy protects pages.  Where it does not, the
 * loader leaves out the rules that exist only for protections (no segment
 * both writable and executable, PT_GNU_RELRO inside a writable segment):
 * there is nothing to protect with. */
#define TINYML__ELF_MAP_PROTECTS (!TINYML_FREESTANDING)

/* A loaded image's memory, and the handle of the image: what the strategy
 * reserved, which tinyml__elf_map_finish (on failure) or
 * tinyml__elf_unload frees. */
struct tinyml__elf {
  void *region;
  size_t region_size;
};

/* An image's memory while it loads. */
typedef struct {
  tinyml__elf_t region; /* what the strategy reserved */
  uint8_t *base;        /* the image's first byte, inside the region */
} tinyml__elf_memory_t;

/* The host's page size: the unit of protection, and so of the layout.
 * Called only when TINYML__ELF_MAP_PROTECTS (the loader lays out
 * unprotected images in 4 KiB units). */
size_t tinyml__elf_map_page_size(void);

/* Reserves zeroed, read-write memory for an image of `span` bytes whose
 * base is aligned to `align` (a power of two, at least the layout unit),
 * in *out.  Fails with OUT_OF_MEMORY, or INVALID_MODULE when the caller's
 * allocator ignored the alignment; then nothing is left to release.
 * `allocator` is for statuses (and, freestanding, for the memory). */
tinyml_status_t tinyml__elf_map_reserve(const tinyml_allocator_t *allocator,
                                        size_t span, size_t align,
                                        tinyml__elf_memory_t *out);

/* Gives the `size` bytes at `begin` (whole pages of a reserved region) the
 * access of PF_* `flags`; 0 makes them inaccessible.  Fails with INTERNAL.
 * Called only when TINYML__ELF_MAP_PROTECTS. */
tinyml_status_t tinyml__elf_map_protect(const tinyml_allocator_t *allocator,
                                        void *begin, size_t size,
                                        uint32_t flags);

/* Ends a load whose checks returned `status`.  If it is OK, stores in
 * *out_elf the handle of the image whose memory is *region
 * (tinyml__elf_unload frees both), which can fail with OUT_OF_MEMORY.
 * Otherwise, or then, frees the region (if *region has one: a failed
 * reserve leaves none) and leaves *out_elf alone.  Returns the status the
 * load ends with; takes ownership of `status`. */
tinyml_status_t tinyml__elf_map_finish(tinyml_status_t status,
                                       tinyml__elf_t *region,
                                       const tinyml_allocator_t *allocator,
                                       tinyml__elf_t **out_elf);

#endif
