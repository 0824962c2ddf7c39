/* Arm, 32-bit: Thumb code for Armv7E-M (backends/armv7em), on bare-metal
 * Cortex-M.  ELFCLASS32 with REL tables: lld emits those for Arm, and their
 * addends are implicit, the word at r_offset.  Thumb function addresses
 * carry bit 0 in symbol values, e_entry and the relocated pointers; the
 * loader keeps it, so calls go through BLX.  Relocation numbers from the
 * Arm ELF ABI (IHI 0044). */
#ifndef TINYML_RUNTIME_ELF_ARCH_ARM_H
#define TINYML_RUNTIME_ELF_ARCH_ARM_H

#define TINYML_ELF_ARCH_CLASS ELFCLASS32
#define TINYML_ELF_ARCH_REL 1

static const tinyml__elf_arch_t tinyml__elf_arch = {
    .name = "arm", /* Armv7E-M, Thumb */
    .machine = 40, /* EM_ARM */
    .check_cpu = NULL,
};

enum {
  R_ARM_NONE = 0, R_ARM_ABS32 = 2, R_ARM_GLOB_DAT = 21, R_ARM_JUMP_SLOT = 22,
  R_ARM_RELATIVE = 23,
};

static inline tinyml__elf_reloc_t tinyml__elf_arch_reloc(uint32_t type) {
  switch (type) {
    case R_ARM_NONE: return TINYML__ELF_RELOC_NONE;
    case R_ARM_ABS32: return TINYML__ELF_RELOC_S_PLUS_A;
    /* glibc's Arm ld.so stores S for these, ignoring the word lld leaves
     * there (for JUMP_SLOT that is the PLT header's address). */
    case R_ARM_GLOB_DAT:
    case R_ARM_JUMP_SLOT: return TINYML__ELF_RELOC_S;
    case R_ARM_RELATIVE: return TINYML__ELF_RELOC_B_PLUS_A;
    default: return TINYML__ELF_RELOC_UNSUPPORTED;
  }
}

#endif
