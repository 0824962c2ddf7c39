/* The ELF format as the loader reads it: the numbers it checks, the views
 * of the records it decodes, and the decoders of the host's ELF class.
 * Our own copy of the numbers: freestanding targets have no <elf.h>.
 *
 * Classes.  The host's class is the only one compiled in, and the only
 * one accepted (its architecture file says which, elf_arch.h): addresses,
 * offsets and sizes are words of that class, 64-bit on ELFCLASS64 hosts and
 * 32-bit on ELFCLASS32 ones (Cortex-M), where 64-bit arithmetic would
 * double the loader's code for values that cannot exceed 32 bits anyway.
 * The loader's checks are written so that they cannot overflow in either
 * width.  So is the relocation table kind: RELA, or REL, whose addends are
 * implicit (the word at r_offset); only ELFCLASS32 decodes REL.
 *
 * All multi-byte fields are decoded byte by byte, so no misaligned or
 * out-of-bounds access can happen whatever the bytes are; callers check
 * that a record lies inside the image first.  Everything here is constant
 * or a pure function of its arguments. */
#ifndef TINYML_RUNTIME_ELF_FORMAT_H
#define TINYML_RUNTIME_ELF_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elf_arch.h"

#define ELFCLASS32 1
#define ELFCLASS64 2
enum {
  ELFDATA2LSB = 1, EV_CURRENT = 1, ET_DYN = 3,
  ELFOSABI_NONE = 0, ELFOSABI_GNU = 3,
  PT_LOAD = 1, PT_DYNAMIC = 2, PT_INTERP = 3, PT_TLS = 7,
  PT_GNU_RELRO = 0x6474e552,
  PF_X = 1, PF_W = 2, PF_R = 4,
  SHN_UNDEF = 0, SHN_LORESERVE = 0xff00,
  STT_FUNC = 2, STT_TLS = 6, STT_GNU_IFUNC = 10,
  STB_GLOBAL = 1, STB_WEAK = 2,
  DF_TEXTREL = 0x4, DF_STATIC_TLS = 0x10,
};

/* Dynamic tags. */
enum {
  DT_NULL = 0, DT_NEEDED = 1, DT_PLTRELSZ = 2, DT_PLTGOT = 3, DT_HASH = 4,
  DT_STRTAB = 5, DT_SYMTAB = 6, DT_RELA = 7, DT_RELASZ = 8, DT_RELAENT = 9,
  DT_STRSZ = 10, DT_SYMENT = 11, DT_INIT = 12, DT_FINI = 13, DT_SONAME = 14,
  DT_RPATH = 15, DT_SYMBOLIC = 16, DT_REL = 17, DT_RELSZ = 18, DT_RELENT = 19,
  DT_PLTREL = 20, DT_DEBUG = 21, DT_TEXTREL = 22, DT_JMPREL = 23,
  DT_BIND_NOW = 24, DT_INIT_ARRAY = 25, DT_FINI_ARRAY = 26,
  DT_INIT_ARRAYSZ = 27, DT_FINI_ARRAYSZ = 28, DT_RUNPATH = 29, DT_FLAGS = 30,
  DT_PREINIT_ARRAY = 32, DT_PREINIT_ARRAYSZ = 33, DT_SYMTAB_SHNDX = 34,
  DT_RELRSZ = 35, DT_RELR = 36, DT_RELRENT = 37,
  DT_GNU_HASH = 0x6ffffef5, DT_VERSYM = 0x6ffffff0, DT_RELACOUNT = 0x6ffffff9,
  DT_RELCOUNT = 0x6ffffffa,
  DT_FLAGS_1 = 0x6ffffffb, DT_VERDEF = 0x6ffffffc, DT_VERDEFNUM = 0x6ffffffd,
  DT_VERNEED = 0x6ffffffe, DT_VERNEEDNUM = 0x6fffffff,
};

/* The relocation table tags of the host's table kind; the other kind's
 * are refused. */
#if TINYML_ELF_ARCH_REL
#define TAG_REL DT_REL
#define TAG_RELSZ DT_RELSZ
#define TAG_RELENT DT_RELENT
#define TAG_RELCOUNT DT_RELCOUNT
#define REL_NAME "DT_REL"
#else
#define TAG_REL DT_RELA
#define TAG_RELSZ DT_RELASZ
#define TAG_RELENT DT_RELAENT
#define TAG_RELCOUNT DT_RELACOUNT
#define REL_NAME "DT_RELA"
#endif

/* A word of the host's class. */
#if TINYML_ELF_ARCH_CLASS == ELFCLASS64
typedef uint64_t word_t;
#define WORD_MAX UINT64_MAX
#elif TINYML_ELF_ARCH_CLASS == ELFCLASS32
typedef uint32_t word_t;
#define WORD_MAX UINT32_MAX
#else
#error "the architecture file sets TINYML_ELF_ARCH_CLASS to ELFCLASS32 or ELFCLASS64"
#endif
_Static_assert(sizeof(word_t) == sizeof(uintptr_t), "the host class is the pointer width");

/* Class-independent views of the ELF records we read. */
typedef struct {
  uint16_t type, machine, phentsize, phnum;
  uint32_t version;
  word_t entry, phoff;
} ehdr_t;
typedef struct {
  uint32_t type, flags;
  word_t offset, vaddr, filesz, memsz, align;
} phdr_t;
typedef struct {
  word_t tag, val;
} dyn_t;
typedef struct {
  word_t offset, type, sym;
  word_t addend; /* two's complement; relocation arithmetic wraps */
  bool implicit; /* REL: the addend is the word at offset */
} rela_t;
typedef struct {
  uint32_t name;
  uint8_t info;
  uint16_t shndx;
  word_t value;
} sym_t;

/* Always inlined: a call costs more code than the load it makes (GCC -Os
 * keeps them out of line otherwise). */
#define LOAD_FN static inline __attribute__((always_inline))
LOAD_FN uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
LOAD_FN uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* The decoders and record sizes of the host's class. */
#if TINYML_ELF_ARCH_CLASS == ELFCLASS64
_Static_assert(!TINYML_ELF_ARCH_REL, "ELFCLASS64 images use RELA tables here");
LOAD_FN uint64_t le64(const uint8_t *p) {
  return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}
#define EHDR_SIZE ((size_t)64)
#define PHDR_SIZE ((size_t)56)
#define DYN_SIZE ((size_t)16)
#define REL_SIZE ((size_t)24)
#define SYM_SIZE ((size_t)24)
#define WORD_SIZE ((size_t)8)
#define le_word le64
static inline void read_ehdr(const uint8_t *p, ehdr_t *h) {
  h->type = le16(p + 16);
  h->machine = le16(p + 18);
  h->version = le32(p + 20);
  h->entry = le64(p + 24);
  h->phoff = le64(p + 32);
  h->phentsize = le16(p + 54);
  h->phnum = le16(p + 56);
}
static inline void read_phdr(const uint8_t *p, phdr_t *h) {
  h->type = le32(p);
  h->flags = le32(p + 4);
  h->offset = le64(p + 8);
  h->vaddr = le64(p + 16);
  h->filesz = le64(p + 32);
  h->memsz = le64(p + 40);
  h->align = le64(p + 48);
}
static inline void read_dyn(const uint8_t *p, dyn_t *d) {
  d->tag = le64(p);
  d->val = le64(p + 8);
}
static inline void read_rel(const uint8_t *p, rela_t *r) {
  uint64_t info = le64(p + 8);
  r->offset = le64(p);
  r->type = info & 0xffffffffu;
  r->sym = info >> 32;
  r->addend = le64(p + 16);
  r->implicit = false;
}
static inline void read_sym(const uint8_t *p, sym_t *s) {
  s->name = le32(p);
  s->info = p[4];
  s->shndx = le16(p + 6);
  s->value = le64(p + 8);
}
#else
#define EHDR_SIZE ((size_t)52)
#define PHDR_SIZE ((size_t)32)
#define DYN_SIZE ((size_t)8)
#define REL_SIZE ((size_t)(TINYML_ELF_ARCH_REL ? 8 : 12))
#define SYM_SIZE ((size_t)16)
#define WORD_SIZE ((size_t)4)
#define le_word le32
static inline void read_ehdr(const uint8_t *p, ehdr_t *h) {
  h->type = le16(p + 16);
  h->machine = le16(p + 18);
  h->version = le32(p + 20);
  h->entry = le32(p + 24);
  h->phoff = le32(p + 28);
  h->phentsize = le16(p + 42);
  h->phnum = le16(p + 44);
}
static inline void read_phdr(const uint8_t *p, phdr_t *h) {
  h->type = le32(p);
  h->offset = le32(p + 4);
  h->vaddr = le32(p + 8);
  h->filesz = le32(p + 16);
  h->memsz = le32(p + 20);
  h->flags = le32(p + 24);
  h->align = le32(p + 28);
}
static inline void read_dyn(const uint8_t *p, dyn_t *d) {
  d->tag = le32(p);
  d->val = le32(p + 4);
}
static inline void read_rel(const uint8_t *p, rela_t *r) {
  uint32_t info = le32(p + 4);
  r->offset = le32(p);
  r->type = info & 0xffu;
  r->sym = info >> 8;
  /* REL: read from r_offset once that is checked. */
  r->addend = TINYML_ELF_ARCH_REL ? 0 : le32(p + 8);
  r->implicit = TINYML_ELF_ARCH_REL;
}
static inline void read_sym(const uint8_t *p, sym_t *s) {
  s->name = le32(p);
  s->value = le32(p + 4);
  s->info = p[12];
  s->shndx = le16(p + 14);
}
#endif

#endif
