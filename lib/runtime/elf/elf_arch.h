/* The host's architecture: what the ELF loader and the module layer must
 * know about the machine executables run on.
 *
 * Each architecture has one header, arch_<name>.h, which gives
 *   - TINYML_ELF_ARCH_CLASS: its ELF class (ELFCLASS32 or ELFCLASS64);
 *   - TINYML_ELF_ARCH_REL: 1 if its images carry REL relocation tables
 *     (addends implicit, the word at r_offset), 0 for RELA;
 *   - tinyml__elf_arch: its description (below);
 *   - tinyml__elf_arch_reloc(): its relocation numbers, and how each one's
 *     value is computed.
 * These are constants and static inline functions, so the loader compiles
 * in only the host's class and table kind and no call or table lookup
 * stands between it and them (the Cortex-M4 runtime has 8 KiB of .text).
 * meson includes the host's header, by host_machine.cpu_family(), through
 * TINYML_ELF_ARCH (lib/runtime/elf/meson.build); a host without one fails
 * at setup.  Adding an architecture is one header and one line there;
 * AArch64's would give EM_AARCH64 (183), RELA, and R_AARCH64_ABS64 (257)
 * as S + A, GLOB_DAT (1025) and JUMP_SLOT (1026) as S + A too (unlike
 * x86-64's, which are S), RELATIVE (1027) as B + A.
 *
 * Everything here is constant: nothing to synchronise. */
#ifndef TINYML_RUNTIME_ELF_ARCH_H
#define TINYML_RUNTIME_ELF_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "../../module/module.h"
#include "tinyml.h"

/* How a relocation's value is computed, in the ABI documents' terms: B is
 * where the image was loaded (minus the vaddr it was linked at), S the
 * bound symbol's address, A the addend.  The value is stored as a word of
 * the host's class. */
typedef enum {
  TINYML__ELF_RELOC_NONE,        /* nothing is written */
  TINYML__ELF_RELOC_UNSUPPORTED, /* the image is refused */
  TINYML__ELF_RELOC_B_PLUS_A,    /* a pointer into the image (no symbol) */
  TINYML__ELF_RELOC_S,           /* a GOT or PLT slot: the address alone */
  TINYML__ELF_RELOC_S_PLUS_A,    /* an absolute address */
} tinyml__elf_reloc_t;

/* An architecture's description. */
typedef struct {
  /* The architecture a module's executables must be compiled for (the
   * module's executables[].arch; backends name it). */
  const char *name;
  uint16_t machine; /* e_machine */
  /* Refuses a module that needs something this CPU lacks, before any of
   * its code is mapped (running it would end the process on an illegal
   * instruction).  NULL where nothing is checked. */
  tinyml_status_t (*check_cpu)(const tmod_module_t *module,
                               const tinyml_allocator_t *allocator);
} tinyml__elf_arch_t;

#ifndef TINYML_ELF_ARCH
#error "TINYML_ELF_ARCH names the host's arch_<name>.h (lib/runtime/elf/meson.build)"
#endif
#include TINYML_ELF_ARCH

#endif
