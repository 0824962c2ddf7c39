/* RISC-V, 64-bit (backends/rvv, run under qemu-riscv64).  ELFCLASS64 with
 * RELA tables.  Relocation numbers from the RISC-V ELF psABI. */
#ifndef TINYML_RUNTIME_ELF_ARCH_RISCV64_H
#define TINYML_RUNTIME_ELF_ARCH_RISCV64_H

#define TINYML_ELF_ARCH_CLASS ELFCLASS64
#define TINYML_ELF_ARCH_REL 0

static const tinyml__elf_arch_t tinyml__elf_arch = {
    .name = "riscv64",
    .machine = 243, /* EM_RISCV */
    .check_cpu = NULL,
};

enum {
  R_RISCV_NONE = 0, R_RISCV_64 = 2, R_RISCV_RELATIVE = 3, R_RISCV_JUMP_SLOT = 5,
};

/* RISC-V has no GLOB_DAT: GOT entries are R_RISCV_64. */
static inline tinyml__elf_reloc_t tinyml__elf_arch_reloc(uint32_t type) {
  switch (type) {
    case R_RISCV_NONE: return TINYML__ELF_RELOC_NONE;
    case R_RISCV_64: return TINYML__ELF_RELOC_S_PLUS_A;
    case R_RISCV_JUMP_SLOT: return TINYML__ELF_RELOC_S;
    case R_RISCV_RELATIVE: return TINYML__ELF_RELOC_B_PLUS_A;
    default: return TINYML__ELF_RELOC_UNSUPPORTED;
  }
}

#endif
