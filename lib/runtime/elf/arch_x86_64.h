/* x86-64 (backends/x86, hosted).  ELFCLASS64 with RELA tables.
 * Relocation numbers from the System V x86-64 psABI.  Modules record the
 * CPU and features they were compiled for, which cpu_check_x86_64.c
 * compares with this CPU's. */
#ifndef TINYML_RUNTIME_ELF_ARCH_X86_64_H
#define TINYML_RUNTIME_ELF_ARCH_X86_64_H

#define TINYML_ELF_ARCH_CLASS ELFCLASS64
#define TINYML_ELF_ARCH_REL 0

#if TINYML_FREESTANDING
#define TINYML__X86_64_CHECK_CPU NULL /* runs code built for its one board */
#else
/* cpu_check_x86_64.c; hosted builds only. */
tinyml_status_t tinyml__x86_64_check_cpu(const tmod_module_t *module,
                                         const tinyml_allocator_t *allocator);
#define TINYML__X86_64_CHECK_CPU tinyml__x86_64_check_cpu
#endif

static const tinyml__elf_arch_t tinyml__elf_arch = {
    .name = "x86_64",
    .machine = 62, /* EM_X86_64 */
    .check_cpu = TINYML__X86_64_CHECK_CPU,
};

enum {
  R_X86_64_NONE = 0, R_X86_64_64 = 1, R_X86_64_GLOB_DAT = 6,
  R_X86_64_JUMP_SLOT = 7, R_X86_64_RELATIVE = 8,
};

static inline tinyml__elf_reloc_t tinyml__elf_arch_reloc(uint32_t type) {
  switch (type) {
    case R_X86_64_NONE: return TINYML__ELF_RELOC_NONE;
    case R_X86_64_64: return TINYML__ELF_RELOC_S_PLUS_A;
    case R_X86_64_GLOB_DAT: /* S, not S + A, unlike AArch64's */
    case R_X86_64_JUMP_SLOT: return TINYML__ELF_RELOC_S;
    case R_X86_64_RELATIVE: return TINYML__ELF_RELOC_B_PLUS_A;
    default: return TINYML__ELF_RELOC_UNSUPPORTED;
  }
}

#endif
