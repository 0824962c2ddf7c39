/* The ELF loader for module executables (see elf_loader.h): the checks
 * common to every architecture and mapping strategy.  The host's
 * architecture (its e_machine, class, table kind and relocations) comes
 * from its arch_<name>.h (elf_arch.h), the memory from the build's mapping
 * strategy (elf_map.h), the record decoders from elf_format.h.
 *
 * How executables must be linked (the compiler uses exactly these flags, and
 * tests/runtime/meson.build builds its fixtures with them):
 *
 *   ld.lld-22 -shared -e tinyml_query -Bsymbolic -z now -z relro
 *             --hash-style=sysv --strip-all --gc-sections
 *             -z max-page-size=4096 -o out.so in.o
 *
 * from objects made by `clang --target=x86_64-unknown-linux-gnu -fPIC
 * -ffreestanding -fno-builtin` (or the same LLVM settings).  The query
 * function must be named tinyml_query and be exported (default visibility).
 * -Bsymbolic binds the object's own symbols at link time, so only RELATIVE
 * relocations and the imports remain (a hosted runtime still binds symbol
 * relocations against defined symbols, to the object itself; a freestanding
 * one refuses them, see BINDS_DEFINED).  -z relro lets
 * the loader make pointer tables read-only after relocation.  The explicit
 * max-page-size keeps the layout the same for every target; it must be at
 * least the host's page size (use 65536 for hosts with 16/64 KiB pages).  Do
 * not add -z pack-relative-relocs (DT_RELR), -z notext, TLS, constructors or
 * libraries: the loader rejects them.
 *
 * Threat model.  The image is hostile until proven otherwise: every header
 * field, offset, size, table and relocation is checked, with overflow-checked
 * arithmetic, before it is used, and all multi-byte fields are decoded byte
 * by byte, so no misaligned or out-of-bounds access can happen whatever the
 * bytes are.  What this cannot catch is a structurally valid image whose
 * *code* is wrong: calling e_entry runs that code.  The module layer guards
 * against corruption of the code with a CRC over the whole image, so this
 * loader's guarantee is that structural problems are caught before anything
 * runs.  A few rules below are stricter than ELF needs (executable segments
 * fully file-backed, p_align of at least 4 KiB, e_entry must be the
 * exported tinyml_query) because they stop a corrupted header byte from
 * sending execution to the wrong bytes; tests/runtime checks every
 * single-byte corruption outside the code.
 *
 * Layout.  The whole span of PT_LOAD segments is one region of memory
 * (elf_map.h), first read-write; segments are copied in and relocated.
 * Where the strategy protects pages, each segment then gets its own
 * protection (never writable and executable), PT_GNU_RELRO becomes
 * read-only and the rest of the region becomes inaccessible.  Segments may
 * not share a host page, since a page has only one protection.
 *
 * Freestanding builds (TINYML_FREESTANDING, bare metal without an MMU) have
 * no threads and run each entry as one call, and carry only what the
 * compiler's link needs (see BINDS_DEFINED). */
#include "elf_loader.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../code_sync.h"
#include "elf_arch.h"
#include "elf_format.h"
#include "elf_map.h"

/* Whether relocations against the image's own symbols are bound.  The
 * compiler links with -Bsymbolic, which leaves only RELATIVE relocations
 * for them; a freestanding runtime carries only what that link needs. */
#define BINDS_DEFINED (!TINYML_FREESTANDING)
/* Whether the mapping strategy protects pages (elf_map.h). */
#define PROTECTS TINYML__ELF_MAP_PROTECTS

/* The ELF entry point's symbol name (lld -e); the loader insists on it. */
#define QUERY_SYMBOL TINYML_EXE_QUERY_SYMBOL

#define MAX_PHNUM 64
#define MAX_LOADS 16
#define MAX_SPAN ((word_t)256 << 20) /* bytes of address space per image */
#define MIN_ALIGN ((word_t)4 << 10)
#define MAX_ALIGN ((word_t)64 << 10)
#define MAX_ENTRIES 65536u
#define MAX_BINDINGS 4096u

/* The dynamic section's table addresses and sizes, by tag: the loader keeps
 * only KEPT_TAGS, all below 32. */
#define TAG_BIT(tag) ((uint32_t)1 << (tag))
#define KEPT_TAGS                                                              \
  (TAG_BIT(TAG_REL) | TAG_BIT(TAG_RELSZ) | TAG_BIT(TAG_RELENT) |               \
   TAG_BIT(DT_JMPREL) | TAG_BIT(DT_PLTRELSZ) | TAG_BIT(DT_PLTREL) |            \
   TAG_BIT(DT_SYMTAB) | TAG_BIT(DT_SYMENT) | TAG_BIT(DT_STRTAB) |              \
   TAG_BIT(DT_STRSZ) | TAG_BIT(DT_HASH))
typedef struct {
  uint32_t seen; /* bit t set once tag t was read */
  word_t sym_count;
  word_t val[32];
} dynamic_t;

/* The fields used most come first: Thumb's short loads and stores reach
 * only the first 128 bytes of a struct. */
typedef struct {
  const tinyml_allocator_t *allocator; /* for statuses */
  const uint8_t *image;
  size_t size;
  word_t page; /* the layout unit */
  size_t load_count;
  bool has_dynamic, has_relro;
  word_t align;  /* largest PT_LOAD alignment */
  word_t bias;   /* the vaddr that lands at mem.base */
  word_t span;   /* bytes from mem.base, page-rounded */
  tinyml__elf_memory_t mem; /* from the mapping strategy */
  ehdr_t eh;
  dynamic_t dyn;
  phdr_t dynamic, relro;
  phdr_t loads[MAX_LOADS];
} loader_t;

#if TINYML_STATUS_VALUES
__attribute__((format(printf, 2, 3)))
static tinyml_status_t fail(const loader_t *l, const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  tinyml_status_t s = tinyml__status_makev(l->allocator,
                                           TINYML_STATUS_INVALID_MODULE, fmt, args);
  va_end(args);
  return s;
}
#else
/* The message's text without its values (see status.h).  Cold: the paths
 * to it are errors, so they need be short, not fast (-12 bytes of .text). */
__attribute__((cold))
static tinyml_status_t fail_text(const loader_t *l, const char *text) {
  return tinyml__status_plain(l->allocator, TINYML_STATUS_INVALID_MODULE, text);
}
#define fail(l, ...) fail_text(l, TINYML_FORMAT_ONLY(__VA_ARGS__))
#endif

/* [off, off + len) lies within [0, limit). */
static bool range_ok(word_t off, word_t len, word_t limit) {
  return off <= limit && len <= limit - off;
}

static word_t floor_to(word_t x, word_t a) { return x & ~(a - 1); }
/* Callers keep x <= WORD_MAX - a (all addresses are capped below). */
static word_t ceil_to(word_t x, word_t a) { return floor_to(x + a - 1, a); }

static bool in_span(const loader_t *l, word_t vaddr, word_t len) {
  return vaddr >= l->bias && range_ok(vaddr - l->bias, len, l->span);
}

/* [vaddr, vaddr + len) lies inside one PT_LOAD having all of `flags`. */
static bool in_segment(const loader_t *l, word_t vaddr, word_t len,
                       uint32_t flags) {
  for (size_t i = 0; i < l->load_count; i++) {
    const phdr_t *p = &l->loads[i];
    if ((p->flags & flags) == flags && vaddr >= p->vaddr &&
        range_ok(vaddr - p->vaddr, len, p->memsz))
      return true;
  }
  return false;
}

/* Callers check in_span first. */
static uint8_t *at(const loader_t *l, word_t vaddr) {
  return l->mem.base + (vaddr - l->bias);
}
static word_t runtime_address(const loader_t *l, word_t vaddr) {
  return (word_t)(uintptr_t)l->mem.base + (vaddr - l->bias);
}
/* Maps a runtime address back to a vaddr; false if below the mapping. */
static bool to_vaddr(const loader_t *l, uintptr_t addr, word_t *vaddr) {
  uintptr_t base = (uintptr_t)l->mem.base;
  if (addr < base) return false;
  *vaddr = (word_t)(addr - base) + l->bias;
  return *vaddr >= l->bias; /* no wrap */
}

/* ---- headers ------------------------------------------------------------ */

static tinyml_status_t check_ident(loader_t *l) {
  const uint8_t *id = l->image;
  /* 0x7f 'E' 'L' 'F' as one load, not a call to memcmp. */
  if (l->size < 16 || le32(id) != 0x464c457fu)
    return fail(l, "elf: not an ELF image (bad magic)");
  if (id[4] != TINYML_ELF_ARCH_CLASS)
    return fail(l, "elf: unsupported ELF class %u (compiled for another --target?)", id[4]);
  if (id[5] != ELFDATA2LSB)
    return fail(l, "elf: image is not little-endian");
  if (id[6] != EV_CURRENT)
    return fail(l, "elf: unsupported ELF version %u", id[6]);
  if (id[7] != ELFOSABI_NONE && id[7] != ELFOSABI_GNU)
    return fail(l, "elf: unsupported OS ABI %u", id[7]);
  return TINYML_OK;
}

static tinyml_status_t check_ehdr(loader_t *l) {
  if (l->size < EHDR_SIZE) return fail(l, "elf: truncated ELF header");
  read_ehdr(l->image, &l->eh);
  const ehdr_t *h = &l->eh;
  if (h->type != ET_DYN)
    return fail(l, "elf: e_type %u is not ET_DYN (a shared object)", h->type);
  if (h->machine != tinyml__elf_arch.machine)
    return fail(l, "elf: e_machine %u is not this host's (%u; compiled for another --target?)",
                h->machine, tinyml__elf_arch.machine);
  if (h->version != EV_CURRENT)
    return fail(l, "elf: unsupported e_version %u", (unsigned)h->version);
  if (h->phentsize != PHDR_SIZE)
    return fail(l, "elf: e_phentsize %u, expected %zu", h->phentsize,
                PHDR_SIZE);
  if (h->phnum == 0 || h->phnum > MAX_PHNUM)
    return fail(l, "elf: %u program headers (1..%d allowed)", h->phnum,
                MAX_PHNUM);
  if (!range_ok(h->phoff, (word_t)h->phnum * h->phentsize, l->size))
    return fail(l, "elf: program header table outside the image");
  return TINYML_OK;
}

static tinyml_status_t check_load(loader_t *l, const phdr_t *p) {
  /* lld always uses max-page-size; demanding >= 4 KiB keeps the
   * p_vaddr/p_offset congruence check meaningful, so a shifted p_offset
   * cannot silently move code. */
  word_t align = p->align;
  if (p->memsz == 0) return fail(l, "elf: empty PT_LOAD segment");
  if (p->filesz > p->memsz)
    return fail(l, "elf: PT_LOAD p_filesz exceeds p_memsz");
  if (!range_ok(p->offset, p->filesz, l->size))
    return fail(l, "elf: PT_LOAD file range outside the image");
  if ((align & (align - 1)) != 0 || align < MIN_ALIGN || align > MAX_ALIGN)
    return fail(l, "elf: PT_LOAD alignment 0x%llx is not a power of two "
                "from 4 KiB to 64 KiB", (unsigned long long)align);
  if ((p->vaddr ^ p->offset) & (align - 1)) /* align is a power of two */
    return fail(l, "elf: PT_LOAD p_vaddr and p_offset disagree modulo p_align");
  if (p->memsz > MAX_SPAN)
    return fail(l, "elf: PT_LOAD larger than %llu bytes",
                (unsigned long long)MAX_SPAN);
  /* Keeps every later page/alignment rounding free of overflow. */
  if (p->vaddr > WORD_MAX - 2 * MAX_ALIGN - MAX_SPAN)
    return fail(l, "elf: PT_LOAD address range overflows");
  if (PROTECTS && (p->flags & PF_W) && (p->flags & PF_X))
    return fail(l, "elf: PT_LOAD is both writable and executable");
  /* Code must come from the file: a short p_filesz would run zeros. */
  if ((p->flags & PF_X) && p->filesz != p->memsz)
    return fail(l, "elf: executable PT_LOAD is not fully backed by the file");
  if (l->load_count > 0) {
    const phdr_t *prev = &l->loads[l->load_count - 1];
    if (ceil_to(prev->vaddr + prev->memsz, l->page) > floor_to(p->vaddr, l->page))
      return fail(l, "elf: PT_LOAD segments are unsorted or share a page");
  }
  if (l->load_count == MAX_LOADS)
    return fail(l, "elf: more than %d PT_LOAD segments", MAX_LOADS);
  if (align > l->align) l->align = align;
  l->loads[l->load_count++] = *p;
  return TINYML_OK;
}

/* Keeps a segment of which there may be one; false for a second one. */
static bool note_single(const phdr_t *p, phdr_t *slot, bool *has) {
  if (*has) return false;
  *slot = *p;
  *has = true;
  return true;
}

static tinyml_status_t read_phdrs(loader_t *l) {
  for (size_t i = 0; i < l->eh.phnum; i++) {
    phdr_t p;
    read_phdr(l->image + l->eh.phoff + (word_t)i * l->eh.phentsize, &p);
    tinyml_status_t s = TINYML_OK;
    if (p.type == PT_LOAD)
      s = check_load(l, &p);
    else if (p.type == PT_DYNAMIC)
      s = note_single(&p, &l->dynamic, &l->has_dynamic)
              ? TINYML_OK : fail(l, "elf: more than one PT_DYNAMIC");
    else if (PROTECTS && p.type == PT_GNU_RELRO)
      s = note_single(&p, &l->relro, &l->has_relro)
              ? TINYML_OK : fail(l, "elf: more than one PT_GNU_RELRO");
    else if (p.type == PT_TLS)
      s = fail(l, "elf: thread-local storage (PT_TLS) is not supported");
    else if (p.type == PT_INTERP)
      s = fail(l, "elf: PT_INTERP: not a self-contained shared object");
    /* Others (PT_PHDR, PT_NOTE, PT_GNU_STACK, ...) do not affect loading. */
    if (s) return s;
  }
  if (l->load_count == 0) return fail(l, "elf: no PT_LOAD segment");
  if (!l->has_dynamic) return fail(l, "elf: no PT_DYNAMIC segment");
  return TINYML_OK;
}

/* Computes bias and span and checks the special segments against them. */
static tinyml_status_t plan_layout(loader_t *l) {
  if (l->align < l->page) l->align = l->page;
  const phdr_t *last = &l->loads[l->load_count - 1];
  l->bias = floor_to(l->loads[0].vaddr, l->align);
  word_t end = last->vaddr + last->memsz;
  if (end - l->bias > MAX_SPAN)
    return fail(l, "elf: segments span more than %llu bytes",
                (unsigned long long)MAX_SPAN);
  l->span = ceil_to(end, l->page) - l->bias;
  const phdr_t *d = &l->dynamic;
  if (d->memsz < DYN_SIZE || !in_segment(l, d->vaddr, d->memsz, 0))
    return fail(l, "elf: PT_DYNAMIC is not inside a PT_LOAD segment");
  const phdr_t *r = &l->relro;
  if (PROTECTS && l->has_relro && !in_segment(l, r->vaddr, r->memsz, PF_W))
    return fail(l, "elf: PT_GNU_RELRO is not inside a writable PT_LOAD");
  return TINYML_OK;
}

/* ---- mapping ------------------------------------------------------------ */

static tinyml_status_t map_segments(loader_t *l) {
  TINYML_RETURN_IF_ERROR(tinyml__elf_map_reserve(l->allocator, (size_t)l->span,
                                                 (size_t)l->align, &l->mem));
  for (size_t i = 0; i < l->load_count; i++) {
    const phdr_t *p = &l->loads[i];
    if (p->filesz) memcpy(at(l, p->vaddr), l->image + p->offset, (size_t)p->filesz);
  }
  return TINYML_OK;
}

static tinyml_status_t protect(loader_t *l, word_t from, word_t to, uint32_t flags) {
  if (to <= from) return TINYML_OK;
  return tinyml__elf_map_protect(l->allocator, at(l, from), (size_t)(to - from), flags);
}

static tinyml_status_t protect_segments(loader_t *l) {
  /* Code was written through the data side: RISC-V and Arm need the
   * instruction side synchronised before it runs (a no-op on x86). */
  tinyml__sync_code(l->mem.region.region, l->mem.region.region_size);
  if (!PROTECTS) return TINYML_OK;
  TINYML_RETURN_IF_ERROR(tinyml__elf_map_protect(l->allocator, l->mem.region.region,
                                                 l->mem.region.region_size, 0));
  for (size_t i = 0; i < l->load_count; i++) {
    const phdr_t *p = &l->loads[i];
    TINYML_RETURN_IF_ERROR(protect(l, floor_to(p->vaddr, l->page),
                                   ceil_to(p->vaddr + p->memsz, l->page), p->flags));
  }
  if (!l->has_relro) return TINYML_OK;
  /* Round the end down: the page holding the end may also hold .data. */
  return protect(l, floor_to(l->relro.vaddr, l->page),
                 floor_to(l->relro.vaddr + l->relro.memsz, l->page), PF_R);
}

/* ---- dynamic section ---------------------------------------------------- */

static tinyml_status_t reject_tag(loader_t *l, word_t tag) {
  switch (tag) {
    case DT_NEEDED:
      return fail(l, "elf: DT_NEEDED: executables may not depend on libraries");
    case DT_INIT: case DT_FINI: case DT_INIT_ARRAY: case DT_FINI_ARRAY:
    case DT_INIT_ARRAYSZ: case DT_FINI_ARRAYSZ: case DT_PREINIT_ARRAY:
    case DT_PREINIT_ARRAYSZ:
      return fail(l, "elf: constructors/destructors (dynamic tag %llu) are not "
                  "supported: the loader never runs them",
                  (unsigned long long)tag);
#if TINYML_ELF_ARCH_REL
    case DT_RELA: case DT_RELASZ: case DT_RELAENT:
      return fail(l, "elf: DT_RELA relocations are not supported (only REL)");
#else
    case DT_REL: case DT_RELSZ: case DT_RELENT:
      return fail(l, "elf: DT_REL relocations are not supported (only RELA)");
#endif
    case DT_TEXTREL:
      return fail(l, "elf: DT_TEXTREL: relocations in code are not supported");
    case DT_RELR: case DT_RELRSZ: case DT_RELRENT:
      return fail(l, "elf: DT_RELR is not supported (link without "
                  "-z pack-relative-relocs)");
    default:
      return fail(l, "elf: unsupported dynamic tag 0x%llx",
                  (unsigned long long)tag);
  }
}

/* Tags that carry nothing the loader must act on. */
static bool harmless_tag(word_t tag) {
  switch (tag) {
    case DT_PLTGOT: case DT_SONAME: case DT_RPATH: case DT_SYMBOLIC:
    case DT_DEBUG: case DT_BIND_NOW: case DT_RUNPATH: case DT_SYMTAB_SHNDX:
    case DT_GNU_HASH: case DT_VERSYM: case DT_FLAGS_1:
    case TAG_RELCOUNT:
    case DT_VERDEF: case DT_VERDEFNUM: case DT_VERNEED: case DT_VERNEEDNUM:
      return true;
    default:
      return false;
  }
}

static tinyml_status_t take_tag(loader_t *l, const dyn_t *e) {
  if (e->tag < 32 && (KEPT_TAGS & TAG_BIT(e->tag))) {
    if (l->dyn.seen & TAG_BIT(e->tag))
      return fail(l, "elf: duplicate dynamic tag %llu", (unsigned long long)e->tag);
    l->dyn.seen |= TAG_BIT(e->tag);
    l->dyn.val[e->tag] = e->val;
    return TINYML_OK;
  }
  if (e->tag == DT_FLAGS) {
    if (e->val & DF_TEXTREL)
      return fail(l, "elf: DF_TEXTREL: relocations in code are not supported");
    if (e->val & DF_STATIC_TLS)
      return fail(l, "elf: DF_STATIC_TLS: thread-local storage is not supported");
    return TINYML_OK;
  }
  return harmless_tag(e->tag) ? TINYML_OK : reject_tag(l, e->tag);
}

static bool has_tag(const loader_t *l, word_t tag) {
  return (l->dyn.seen >> tag) & 1;
}

static tinyml_status_t read_dynamic(loader_t *l) {
  size_t esz = DYN_SIZE;
  word_t count = l->dynamic.memsz / esz;
  for (word_t i = 0; i < count; i++) {
    dyn_t e;
    read_dyn(at(l, l->dynamic.vaddr + i * esz), &e);
    if (e.tag == DT_NULL) return TINYML_OK;
    TINYML_RETURN_IF_ERROR(take_tag(l, &e));
  }
  return fail(l, "elf: dynamic section has no DT_NULL terminator");
}

/* A relocation table: both tags or neither, whole entries, in the span. */
static tinyml_status_t check_rela_table(loader_t *l, word_t addr_tag,
                                        word_t size_tag, word_t addr,
                                        word_t size, const char *name) {
  if (!has_tag(l, addr_tag) && !has_tag(l, size_tag)) return TINYML_OK;
  if (!has_tag(l, addr_tag) || !has_tag(l, size_tag))
    return fail(l, "elf: %s table is missing its address or size", name);
  if (size % REL_SIZE != 0 || !in_span(l, addr, size))
    return fail(l, "elf: %s table is malformed or outside the image", name);
  return TINYML_OK;
}

/* .dynsym has no size in the dynamic section.  We take it from DT_HASH
 * (nchain) when present - our flags emit it - and otherwise bound it by
 * DT_STRTAB when the symbol table precedes it (lld places .dynstr right
 * after .dynsym and .gnu.hash).  Either way the table must lie inside the
 * mapping and every symbol index is checked against the count.
 * DT_GNU_HASH is not walked. */
static tinyml_status_t count_symbols(loader_t *l) {
  dynamic_t *d = &l->dyn;
  if (has_tag(l, DT_HASH)) {
    /* nbucket, nchain: 32-bit words; nchain is the symbol count. */
    if (!in_span(l, d->val[DT_HASH], 8)) return fail(l, "elf: DT_HASH outside the image");
    d->sym_count = le32(at(l, d->val[DT_HASH]) + 4);
  } else if (d->val[DT_SYMTAB] < d->val[DT_STRTAB]) {
    d->sym_count = (d->val[DT_STRTAB] - d->val[DT_SYMTAB]) / SYM_SIZE;
  } else {
    return fail(l, "elf: cannot bound the symbol table (need DT_HASH, or "
                "DT_SYMTAB before DT_STRTAB)");
  }
  if (d->sym_count > l->span / SYM_SIZE ||
      !in_span(l, d->val[DT_SYMTAB], d->sym_count * SYM_SIZE))
    return fail(l, "elf: symbol table outside the image");
  return TINYML_OK;
}

static tinyml_status_t check_tables(loader_t *l) {
  dynamic_t *d = &l->dyn;
  if (!has_tag(l, DT_SYMTAB) || !has_tag(l, DT_STRTAB) || !has_tag(l, DT_STRSZ))
    return fail(l, "elf: missing DT_SYMTAB, DT_STRTAB or DT_STRSZ");
  if (has_tag(l, DT_SYMENT) && d->val[DT_SYMENT] != SYM_SIZE)
    return fail(l, "elf: DT_SYMENT %llu, expected %zu",
                (unsigned long long)d->val[DT_SYMENT], SYM_SIZE);
  if (!in_span(l, d->val[DT_STRTAB], d->val[DT_STRSZ]))
    return fail(l, "elf: string table outside the image");
  if (has_tag(l, TAG_REL) && d->val[TAG_RELENT] != REL_SIZE)
    return fail(l, "elf: " REL_NAME "ENT missing or not %zu", REL_SIZE);
  if (has_tag(l, DT_JMPREL) && (!has_tag(l, DT_PLTREL) || d->val[DT_PLTREL] != TAG_REL))
    return fail(l, "elf: DT_PLTREL must be " REL_NAME);
  TINYML_RETURN_IF_ERROR(check_rela_table(l, TAG_REL, TAG_RELSZ, d->val[TAG_REL],
                                          d->val[TAG_RELSZ], REL_NAME));
  TINYML_RETURN_IF_ERROR(check_rela_table(l, DT_JMPREL, DT_PLTRELSZ, d->val[DT_JMPREL],
                                          d->val[DT_PLTRELSZ], "DT_JMPREL"));
  return count_symbols(l);
}

/* ---- symbols and relocations -------------------------------------------- */

static void read_symbol(const loader_t *l, word_t index, sym_t *s) {
  read_sym(at(l, l->dyn.val[DT_SYMTAB] + index * SYM_SIZE), s);
}

/* The NUL-terminated name of `s` inside the string table, or NULL. */
static const char *symbol_name(const loader_t *l, const sym_t *s) {
  if (s->name >= l->dyn.val[DT_STRSZ]) return NULL;
  const char *name = (const char *)at(l, l->dyn.val[DT_STRTAB] + s->name);
  return memchr(name, 0, (size_t)(l->dyn.val[DT_STRSZ] - s->name)) ? name : NULL;
}

typedef void (*generic_fn)(void);

/* glibc's sincosf is a GNU extension; this portable one serves instead. */
static void tinyml_sincosf(float x, float *s, float *c) {
  *s = sinf(x);
  *c = cosf(x);
}
#define sincosf tinyml_sincosf

/* The allowed imports (TINYML_EXE_IMPORT_LIST) and the runtime's own
 * functions they bind to: one table, so it is also the allow-list. */
static bool import_address(const char *name, word_t *out) {
  static const struct {
    const char *name;
    generic_fn fn;
  } bindings[] = {
#define BIND(name) {#name, (generic_fn)name},
      /* The name string is taken before the sincosf macro expands. */
      TINYML_EXE_IMPORT_LIST(BIND)
#undef BIND
  };
  for (size_t i = 0; i < sizeof(bindings) / sizeof(bindings[0]); i++) {
    if (strcmp(name, bindings[i].name) != 0) continue;
    uintptr_t a;
    _Static_assert(sizeof(a) == sizeof(bindings[i].fn), "code pointer size");
    memcpy(&a, &bindings[i].fn, sizeof a);
    *out = a;
    return true;
  }
  return false;
}

static tinyml_status_t resolve_defined(loader_t *l, const sym_t *s,
                                       word_t *out) {
  uint8_t type = s->info & 0xf;
  if (s->shndx >= SHN_LORESERVE)
    return fail(l, "elf: absolute or special symbol (st_shndx 0x%x) in a "
                "relocation", s->shndx);
  if (type == STT_TLS || type == STT_GNU_IFUNC)
    return fail(l, "elf: TLS or IFUNC symbol in a relocation");
  if (s->value < l->bias || s->value - l->bias > l->span)
    return fail(l, "elf: symbol value 0x%llx outside the image",
                (unsigned long long)s->value);
  *out = runtime_address(l, s->value);
  return TINYML_OK;
}

static tinyml_status_t resolve_symbol(loader_t *l, word_t index,
                                      word_t *out) {
  if (index == 0 || index >= l->dyn.sym_count)
    return fail(l, "elf: relocation symbol index %llu out of range",
                (unsigned long long)index);
  sym_t s;
  read_symbol(l, index, &s);
  if (s.shndx != SHN_UNDEF) {
    if (!BINDS_DEFINED)
      return fail(l, "elf: relocation against a defined symbol (link with -Bsymbolic)");
    return resolve_defined(l, &s, out);
  }
  const char *name = symbol_name(l, &s);
  if (!name)
    return fail(l, "elf: symbol %llu has a name outside the string table",
                (unsigned long long)index);
  if (!import_address(name, out))
    return fail(l, "elf: undefined symbol '%.64s' is not an allowed import", name);
  return TINYML_OK;
}

static void put_word(const loader_t *l, word_t vaddr, word_t value) {
  uint8_t *p = at(l, vaddr);
  for (size_t i = 0; i < WORD_SIZE; i++) p[i] = (uint8_t)(value >> (8 * i));
}

static word_t get_word(const loader_t *l, word_t vaddr) {
  const uint8_t *p = at(l, vaddr);
  return le_word(p);
}

static tinyml_status_t apply_one(loader_t *l, rela_t *r) {
  tinyml__elf_reloc_t how = tinyml__elf_arch_reloc((uint32_t)r->type);
  if (how == TINYML__ELF_RELOC_NONE) return TINYML_OK;
  if (how == TINYML__ELF_RELOC_UNSUPPORTED)
    return fail(l, "elf: unsupported relocation type %llu",
                (unsigned long long)r->type);
  if (!in_segment(l, r->offset, WORD_SIZE, PF_W))
    return fail(l, "elf: relocation at 0x%llx is outside writable segments",
                (unsigned long long)r->offset);
  if (r->implicit) r->addend = get_word(l, r->offset);
  word_t value = 0;
  if (how == TINYML__ELF_RELOC_B_PLUS_A) {
    /* Pointers into the image; one past the end is still fine. */
    if (r->sym != 0 || r->addend < l->bias || r->addend - l->bias > l->span)
      return fail(l, "elf: RELATIVE relocation at 0x%llx points outside the "
                  "image", (unsigned long long)r->offset);
    value = runtime_address(l, r->addend);
  } else {
    TINYML_RETURN_IF_ERROR(resolve_symbol(l, r->sym, &value));
    if (how == TINYML__ELF_RELOC_S_PLUS_A) value += r->addend;
  }
  /* A 32-bit class stores the low word; the arithmetic wraps there too. */
  put_word(l, r->offset, value);
  return TINYML_OK;
}

/* Entries are decoded one at a time from the mapping, so a relocation that
 * overwrites a table is just data: every entry is checked when it is read. */
static tinyml_status_t apply_table(loader_t *l, word_t addr, word_t size) {
  for (word_t off = 0; off < size; off += REL_SIZE) {
    rela_t r;
    read_rel(at(l, addr + off), &r);
    TINYML_RETURN_IF_ERROR(apply_one(l, &r));
  }
  return TINYML_OK;
}

static tinyml_status_t relocate(loader_t *l) {
  if (has_tag(l, TAG_REL))
    TINYML_RETURN_IF_ERROR(apply_table(l, l->dyn.val[TAG_REL], l->dyn.val[TAG_RELSZ]));
  if (has_tag(l, DT_JMPREL))
    TINYML_RETURN_IF_ERROR(apply_table(l, l->dyn.val[DT_JMPREL], l->dyn.val[DT_PLTRELSZ]));
  return TINYML_OK;
}

/* e_entry must be code and must be the exported query function (by name),
 * so a damaged e_entry or symbol value cannot send the call elsewhere - not
 * even to another function's start. */
static tinyml_status_t check_entry(loader_t *l) {
  word_t entry = l->eh.entry;
  if (!in_segment(l, entry, 1, PF_X))
    return fail(l, "elf: e_entry 0x%llx is not in an executable segment",
                (unsigned long long)entry);
  for (word_t i = 1; i < l->dyn.sym_count; i++) {
    sym_t s;
    read_symbol(l, i, &s);
    const char *name = symbol_name(l, &s);
    if (!name || strcmp(name, QUERY_SYMBOL) != 0) continue;
    uint8_t bind = s.info >> 4;
    if (s.value == entry && (s.info & 0xf) == STT_FUNC &&
        s.shndx != SHN_UNDEF && s.shndx < SHN_LORESERVE &&
        (bind == STB_GLOBAL || bind == STB_WEAK))
      return TINYML_OK;
    break;
  }
  return fail(l, "elf: e_entry is not the exported function '" QUERY_SYMBOL "'");
}

/* ---- the query and its result ------------------------------------------- */

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
bool tinyml__fuzz_may_run(const uint8_t *image, size_t size); /* the fuzzer's */
#endif

/* The called code was not built with -fsanitize=function, whose check would
 * read bytes before the entry. */
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
static const tinyml_exe_library_t *call_query(const loader_t *l) {
  word_t a = runtime_address(l, l->eh.entry);
  uintptr_t addr = (uintptr_t)a;
  tinyml_exe_query_fn query;
  _Static_assert(sizeof(query) == sizeof(addr), "code pointer size");
  memcpy(&query, &addr, sizeof query); /* object-to-code conversion, no UB */
  return query(TINYML_EXE_ABI_VERSION);
}

/* [ptr, ptr + len) lies in one segment with `flags` and ptr is aligned. */
static bool mapped(const loader_t *l, const void *ptr, word_t len,
                   size_t alignment, uint32_t flags) {
  uintptr_t a = (uintptr_t)ptr;
  word_t v;
  return a % alignment == 0 && to_vaddr(l, a, &v) && in_segment(l, v, len, flags);
}

static bool code_mapped(const loader_t *l, tinyml_exe_entry_fn fn) {
  uintptr_t a;
  memcpy(&a, &fn, sizeof a);
  word_t v;
  return to_vaddr(l, a, &v) && in_segment(l, v, 1, PF_X);
}

static tinyml_status_t check_entry_record(const loader_t *l,
                                          const tinyml_exe_entry_t *e,
                                          uint32_t i) {
  if (!code_mapped(l, e->fn))
    return fail(l, "elf: entry %u: fn is not in an executable segment", i);
#if TINYML_FREESTANDING /* no threads: it runs each entry as one call */
  if (e->phase_count != 1)
    return fail(l, "elf: entry %u: %u phases (this runtime runs 1)", i, e->phase_count);
#else
  if (e->phase_count - 1u >= TINYML_EXE_MAX_PHASES)
    return fail(l, "elf: entry %u: %u phases (1 to %u)", i, e->phase_count,
                TINYML_EXE_MAX_PHASES);
  if (!mapped(l, e->workgroups, (word_t)e->phase_count * sizeof(uint32_t),
              _Alignof(uint32_t), PF_R))
    return fail(l, "elf: entry %u: workgroups outside the image", i);
  for (uint32_t p = 0; p < e->phase_count; p++)
    if (e->workgroups[p] == 0) return fail(l, "elf: entry %u: phase %u has 0 workgroups", i, p);
#endif
  if (e->binding_count > MAX_BINDINGS)
    return fail(l, "elf: entry %u: %u bindings (at most %u)", i,
                e->binding_count, MAX_BINDINGS);
  if (e->binding_count > 0 &&
      !mapped(l, e->binding_sizes, (word_t)e->binding_count * sizeof(uint64_t),
              _Alignof(uint64_t), PF_R))
    return fail(l, "elf: entry %u: binding_sizes outside the image", i);
  return TINYML_OK;
}

static tinyml_status_t check_library(const loader_t *l,
                                     const tinyml_exe_library_t *lib) {
  if (!lib) return fail(l, "elf: query returned NULL (ABI version %u refused)",
                        TINYML_EXE_ABI_VERSION);
  if (!mapped(l, lib, sizeof *lib, _Alignof(tinyml_exe_library_t), PF_R))
    return fail(l, "elf: query result is outside the image");
  if (lib->abi_version != TINYML_EXE_ABI_VERSION)
    return fail(l, "elf: abi_version %u, expected %u", lib->abi_version,
                TINYML_EXE_ABI_VERSION);
  if (lib->entry_count > MAX_ENTRIES)
    return fail(l, "elf: %u entries (at most %u)", lib->entry_count, MAX_ENTRIES);
  word_t bytes = (word_t)lib->entry_count * sizeof(tinyml_exe_entry_t);
  if (lib->entry_count > 0 &&
      !mapped(l, lib->entries, bytes, _Alignof(tinyml_exe_entry_t), PF_R))
    return fail(l, "elf: entries array is outside the image");
  for (uint32_t i = 0; i < lib->entry_count; i++)
    TINYML_RETURN_IF_ERROR(check_entry_record(l, &lib->entries[i], i));
  return TINYML_OK;
}

/* ---- public ------------------------------------------------------------- */

static tinyml_status_t load(loader_t *l, const tinyml_exe_library_t **out) {
  TINYML_RETURN_IF_ERROR(check_ident(l));
  TINYML_RETURN_IF_ERROR(check_ehdr(l));
  TINYML_RETURN_IF_ERROR(read_phdrs(l));
  TINYML_RETURN_IF_ERROR(plan_layout(l));
  TINYML_RETURN_IF_ERROR(map_segments(l));
  TINYML_RETURN_IF_ERROR(read_dynamic(l));
  TINYML_RETURN_IF_ERROR(check_tables(l));
  TINYML_RETURN_IF_ERROR(check_entry(l));
  TINYML_RETURN_IF_ERROR(relocate(l));
  TINYML_RETURN_IF_ERROR(protect_segments(l));
  /* Everything structural has been checked; from here code runs. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  /* tests/fuzz/fuzz_module.c turns the module CRCs off so that mutated
   * images reach these checks; it lets only the images it trusts run. */
  if (!tinyml__fuzz_may_run(l->image, l->size))
    return fail(l, "elf: (fuzzing) an image the fuzzer does not trust is not run");
#endif
  const tinyml_exe_library_t *lib = call_query(l);
  TINYML_RETURN_IF_ERROR(check_library(l, lib));
  *out = lib;
  return TINYML_OK;
}

tinyml_status_t tinyml__elf_load(const uint8_t *image, size_t size,
                                 const tinyml_allocator_t *allocator,
                                 tinyml__elf_t **out_elf,
                                 const tinyml_exe_library_t **out_library) {
  /* Pages matter only to protections: without them the unit is 4 KiB. */
  loader_t l = {.allocator = allocator, .image = image, .size = size,
                .page = PROTECTS ? (word_t)tinyml__elf_map_page_size() : MIN_ALIGN};
  const tinyml_exe_library_t *lib = NULL;
  tinyml_status_t s = tinyml__elf_map_finish(load(&l, &lib), &l.mem.region, allocator,
                                             out_elf);
  if (!s) *out_library = lib;
  return s;
}
