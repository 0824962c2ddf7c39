/* A small loader for the "elf" executables of a module: it maps the PT_LOAD
 * segments of an ELF shared object into fresh memory, applies its
 * relocations, binds its imports (TINYML_EXE_IMPORTS) and calls its query
 * entry point.  Every header, offset, size and relocation is checked against
 * the image; anything unexpected is an INVALID_MODULE error, never a crash.
 * Hosted builds map memory with mmap and make text executable with mprotect;
 * freestanding ones take it from the allocator (elf_map.h).
 *
 * Loads of different images may run on different threads at once; a loaded
 * executable belongs to the module that loaded it, and its code may be
 * called from any thread. */
#ifndef TINYML_RUNTIME_ELF_LOADER_H
#define TINYML_RUNTIME_ELF_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "../../module/executable_abi.h"
#include "tinyml.h"

typedef struct tinyml__elf tinyml__elf_t;

/* Loads `image` (borrowed for the call only; NULL only with `size` 0, which
 * is refused as not an ELF image); the out pointers must not be NULL (an
 * internal call: module.c's).  `allocator` is used for the
 * bookkeeping struct and for statuses (freestanding: for the image too).
 * On success *out_elf owns the mapping and *out_library (valid while
 * *out_elf lives) has been checked: ABI version, entry functions inside
 * executable memory, binding_sizes arrays inside the mapping. */
tinyml_status_t tinyml__elf_load(const uint8_t *image, size_t size,
                                 const tinyml_allocator_t *allocator,
                                 tinyml__elf_t **out_elf,
                                 const tinyml_exe_library_t **out_library);

/* Unmaps and frees (defined by the mapping strategy, map_*.c, which knows
 * where the handle lives).  NULL is a no-op. */
void tinyml__elf_unload(tinyml__elf_t *elf, const tinyml_allocator_t *allocator);

#endif
