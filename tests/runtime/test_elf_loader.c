/* Tests of lib/runtime/elf/elf_loader.c on fixtures built by meson from
 * fixture_exe.c (argv: exe, preemptible, malloc, bad_abi, bad_phases,
 * bad_fn, bad_workgroups).  Targeted corruptions check that each rule names its problem;
 * test_elf_corrupt.c covers every byte. */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/runtime/elf/elf_loader.h"
#include "fixture_file.h"

enum { FX_EXE, FX_PREEMPTIBLE, FX_MALLOC, FX_BAD_ABI, FX_BAD_PHASES,
       FX_BAD_FN, FX_BAD_WORKGROUPS, FX_COUNT };
static const char *fixture_paths[FX_COUNT];

typedef struct {
  uint8_t *data;
  size_t size;
} image_t;

static image_t read_fixture(int which) {
  image_t im;
  im.data = fixture_read(fixture_paths[which], &im.size);
  return im;
}

/* Loads `im` expecting an INVALID_MODULE whose message contains `needle`. */
static void expect_reject(const image_t *im, const char *needle) {
  tinyml__elf_t *elf = NULL;
  const tinyml_exe_library_t *lib = NULL;
  tinyml_status_t s = tinyml__elf_load(im->data, im->size, NULL, &elf, &lib);
  assert_non_null(s);
  assert_int_equal(tinyml_status_code(s), TINYML_STATUS_INVALID_MODULE);
  if (!strstr(tinyml_status_message(s), needle))
    fail_msg("message '%s' lacks '%s'", tinyml_status_message(s), needle);
  assert_null(elf);
  tinyml_status_free(s);
}

static void call_entry(const tinyml_exe_entry_t *e, void *const *bindings) {
  e->fn(bindings, 0, 0, 1);
}

/* Loads a good fixture and runs both entries. */
static void run_fixture(int which) {
  image_t im = read_fixture(which);
  tinyml__elf_t *elf = NULL;
  const tinyml_exe_library_t *lib = NULL;
  tinyml_status_t s = tinyml__elf_load(im.data, im.size, NULL, &elf, &lib);
  if (s) fail_msg("load failed: %s", tinyml_status_message(s));
  free(im.data); /* the image is only borrowed for the call */
  assert_int_equal(lib->abi_version, TINYML_EXE_ABI_VERSION);
  assert_int_equal(lib->entry_count, 2);

  const tinyml_exe_entry_t *add = &lib->entries[0];
  assert_int_equal(add->binding_count, 3);
  for (int i = 0; i < 3; i++) assert_int_equal(add->binding_sizes[i], 64);
  float x[16], y[16], z[16];
  for (int i = 0; i < 16; i++) x[i] = (float)i, y[i] = 0.5f * (float)i, z[i] = -1;
  void *add_args[3] = {x, y, z};
  call_entry(add, add_args);
  for (int i = 0; i < 16; i++) assert_true(z[i] == 1.5f * (float)i);

  const tinyml_exe_entry_t *fill = &lib->entries[1];
  assert_int_equal(fill->binding_count, 2);
  assert_int_equal(fill->binding_sizes[0], 64);
  assert_int_equal(fill->binding_sizes[1], 32);
  uint8_t a[64 + 8], b[32 + 8];
  memset(a, 0, sizeof a);
  memset(b, 0, sizeof b);
  void *fill_args[2] = {a, b};
  call_entry(fill, fill_args);
  for (int i = 0; i < 64; i++) assert_int_equal(a[i], 0x5a);
  for (int i = 0; i < 32; i++) assert_int_equal(b[i], 0x11);
  for (int i = 64; i < 72; i++) assert_int_equal(a[i], 0); /* stays in range */
  for (int i = 32; i < 40; i++) assert_int_equal(b[i], 0);
  tinyml__elf_unload(elf, NULL);
}

static void test_load_and_run(void **state) {
  (void)state;
  run_fixture(FX_EXE);
}

/* No -Bsymbolic, .gnu.hash only: symbol relocations against defined symbols
 * and the DT_STRTAB bound on the symbol table. */
static void test_load_and_run_preemptible(void **state) {
  (void)state;
  run_fixture(FX_PREEMPTIBLE);
}

/* The permissions of the mapping holding `addr`, from /proc/self/maps. */
static void perms_of(const void *addr, char out[5]) {
  FILE *f = fopen("/proc/self/maps", "r");
  assert_non_null(f);
  char line[512];
  strcpy(out, "????");
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char perms[5];
    if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
    uintptr_t a = (uintptr_t)addr;
    if (a >= lo && a < hi) memcpy(out, perms, 5);
  }
  fclose(f);
}

static void test_protections(void **state) {
  (void)state;
  image_t im = read_fixture(FX_EXE);
  tinyml__elf_t *elf = NULL;
  const tinyml_exe_library_t *lib = NULL;
  assert_null(tinyml__elf_load(im.data, im.size, NULL, &elf, &lib));
  char perms[5];
  const void *code;
  memcpy(&code, &lib->entries[0].fn, sizeof code);
  perms_of(code, perms);
  assert_string_equal(perms, "r-xp");
  perms_of(lib, perms); /* .data.rel.ro, read-only after relocation */
  assert_string_equal(perms, "r--p");
  tinyml__elf_unload(elf, NULL);
  free(im.data);
}

typedef struct {
  int allocs, frees;
} counts_t;

static void *count_alloc(void *self, size_t size, size_t alignment) {
  ((counts_t *)self)->allocs++;
  void *p = NULL;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  return posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}

static void count_free(void *self, void *ptr) {
  ((counts_t *)self)->frees++;
  free(ptr);
}

static void test_uses_allocator(void **state) {
  (void)state;
  counts_t counts = {0, 0};
  tinyml_allocator_t a = {&counts, count_alloc, count_free};
  image_t im = read_fixture(FX_EXE);
  tinyml__elf_t *elf = NULL;
  const tinyml_exe_library_t *lib = NULL;
  assert_null(tinyml__elf_load(im.data, im.size, &a, &elf, &lib));
  assert_int_equal(counts.allocs, 1);
  tinyml__elf_unload(elf, &a);
  assert_int_equal(counts.frees, 1);
  tinyml__elf_unload(NULL, &a); /* no-op */
  free(im.data);
}

/* No image (what an absent one reads as) and a 1-byte one. */
static void test_no_image(void **state) {
  (void)state;
  tinyml__elf_t *elf = NULL;
  const tinyml_exe_library_t *lib = NULL;
  uint8_t byte = 0x7f;
  tinyml_status_t s = tinyml__elf_load(NULL, 0, NULL, &elf, &lib);
  assert_int_equal(tinyml_status_code(s), TINYML_STATUS_INVALID_MODULE);
  assert_non_null(strstr(tinyml_status_message(s), "not an ELF image"));
  tinyml_status_free(s);
  s = tinyml__elf_load(&byte, 1, NULL, &elf, &lib);
  assert_int_equal(tinyml_status_code(s), TINYML_STATUS_INVALID_MODULE);
  tinyml_status_free(s);
  assert_null(elf);
}

static void test_rejects_malloc_import(void **state) {
  (void)state;
  image_t im = read_fixture(FX_MALLOC);
  expect_reject(&im, "elf: undefined symbol 'malloc' is not an allowed import");
  free(im.data);
}

static void test_rejects_bad_library(void **state) {
  (void)state;
  static const struct {
    int which;
    const char *needle;
  } cases[] = {{FX_BAD_ABI, "abi_version 3, expected 2"},
               {FX_BAD_PHASES, "entry 0: 0 phases"},
               {FX_BAD_FN, "entry 1: fn is not in an executable segment"},
               {FX_BAD_WORKGROUPS, "entry 1: phase 0 has 0 workgroups"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    image_t im = read_fixture(cases[i].which);
    expect_reject(&im, cases[i].needle);
    free(im.data);
  }
}

/* ---- targeted corruptions of the good fixture -------------------------- */

static Elf64_Ehdr ehdr_of(const image_t *im) {
  Elf64_Ehdr h;
  memcpy(&h, im->data, sizeof h);
  return h;
}

static Elf64_Phdr phdr_at(const image_t *im, size_t i) {
  Elf64_Ehdr h = ehdr_of(im);
  Elf64_Phdr p;
  memcpy(&p, im->data + h.e_phoff + i * sizeof p, sizeof p);
  return p;
}

/* File offset of program header `i`'s first field. */
static size_t phdr_offset(const image_t *im, size_t i) {
  return (size_t)ehdr_of(im).e_phoff + i * sizeof(Elf64_Phdr);
}

/* Index of the first program header of `type` having `flags`. */
static size_t find_phdr(const image_t *im, uint32_t type, uint32_t flags) {
  for (size_t i = 0; i < ehdr_of(im).e_phnum; i++) {
    Elf64_Phdr p = phdr_at(im, i);
    if (p.p_type == type && (p.p_flags & flags) == flags) return i;
  }
  fail_msg("no program header of type %u", type);
  return 0;
}

static size_t vaddr_to_offset(const image_t *im, uint64_t vaddr) {
  for (size_t i = 0; i < ehdr_of(im).e_phnum; i++) {
    Elf64_Phdr p = phdr_at(im, i);
    if (p.p_type == PT_LOAD && vaddr >= p.p_vaddr &&
        vaddr < p.p_vaddr + p.p_filesz)
      return (size_t)(vaddr - p.p_vaddr + p.p_offset);
  }
  fail_msg("vaddr 0x%llx is not file-backed", (unsigned long long)vaddr);
  return 0;
}

/* File offset of the dynamic entry with `tag`. */
static size_t dyn_offset(const image_t *im, int64_t tag) {
  Elf64_Phdr d = phdr_at(im, find_phdr(im, PT_DYNAMIC, 0));
  for (size_t off = (size_t)d.p_offset; off < d.p_offset + d.p_filesz;
       off += sizeof(Elf64_Dyn)) {
    Elf64_Dyn e;
    memcpy(&e, im->data + off, sizeof e);
    if (e.d_tag == tag) return off;
  }
  fail_msg("no dynamic tag %lld", (long long)tag);
  return 0;
}

static uint64_t dyn_value(const image_t *im, int64_t tag) {
  Elf64_Dyn e;
  memcpy(&e, im->data + dyn_offset(im, tag), sizeof e);
  return e.d_un.d_val;
}

/* st_value of the dynamic symbol `name`. */
static uint64_t symbol_value(const image_t *im, const char *name) {
  size_t symtab = vaddr_to_offset(im, dyn_value(im, DT_SYMTAB));
  size_t strtab = vaddr_to_offset(im, dyn_value(im, DT_STRTAB));
  for (size_t off = symtab; off + sizeof(Elf64_Sym) <= strtab;
       off += sizeof(Elf64_Sym)) {
    Elf64_Sym s;
    memcpy(&s, im->data + off, sizeof s);
    if (strcmp((const char *)im->data + strtab + s.st_name, name) == 0)
      return s.st_value;
  }
  fail_msg("no symbol %s", name);
  return 0;
}

static void put64(image_t *im, size_t off, uint64_t v) { memcpy(im->data + off, &v, 8); }
static void put32(image_t *im, size_t off, uint32_t v) { memcpy(im->data + off, &v, 4); }
static void put16(image_t *im, size_t off, uint16_t v) { memcpy(im->data + off, &v, 2); }

/* Applies `edit` to a fresh copy of the good fixture and expects `needle`. */
#define EXPECT_EDIT_REJECTED(edit, needle)                                     \
  do {                                                                         \
    image_t im = read_fixture(FX_EXE);                                         \
    edit;                                                                      \
    expect_reject(&im, needle);                                                \
    free(im.data);                                                             \
  } while (0)

static void test_rejects_bad_headers(void **state) {
  (void)state;
  EXPECT_EDIT_REJECTED(im.data[1] = 'X', "bad magic");
  EXPECT_EDIT_REJECTED(im.data[EI_CLASS] = ELFCLASS32, "unsupported ELF class 1");
  EXPECT_EDIT_REJECTED(im.data[EI_DATA] = ELFDATA2MSB, "not little-endian");
  EXPECT_EDIT_REJECTED(put16(&im, offsetof(Elf64_Ehdr, e_machine), EM_AARCH64),
                       "e_machine 183");
  EXPECT_EDIT_REJECTED(put16(&im, offsetof(Elf64_Ehdr, e_type), ET_EXEC),
                       "not ET_DYN");
  EXPECT_EDIT_REJECTED(put16(&im, offsetof(Elf64_Ehdr, e_phentsize), 32),
                       "e_phentsize 32");
  EXPECT_EDIT_REJECTED(put64(&im, offsetof(Elf64_Ehdr, e_phoff), im.size - 8),
                       "program header table outside");
  EXPECT_EDIT_REJECTED(
      put64(&im, offsetof(Elf64_Ehdr, e_entry), ehdr_of(&im).e_entry + 1),
      "e_entry is not the exported function 'tinyml_query'");
  /* Another exported function is still not the query. */
  EXPECT_EDIT_REJECTED(put64(&im, offsetof(Elf64_Ehdr, e_entry),
                             symbol_value(&im, "fixture_add")),
                       "e_entry is not the exported function");
  EXPECT_EDIT_REJECTED(put64(&im, offsetof(Elf64_Ehdr, e_entry), 0),
                       "not in an executable segment");
}

static void test_rejects_bad_segments(void **state) {
  (void)state;
  EXPECT_EDIT_REJECTED(
      put32(&im, phdr_offset(&im, find_phdr(&im, PT_LOAD, PF_X)) +
                     offsetof(Elf64_Phdr, p_flags), PF_R | PF_W | PF_X),
      "both writable and executable");
  EXPECT_EDIT_REJECTED(
      put64(&im, phdr_offset(&im, find_phdr(&im, PT_LOAD, PF_W)) +
                     offsetof(Elf64_Phdr, p_offset), im.size),
      "PT_LOAD file range outside the image");
  EXPECT_EDIT_REJECTED(
      put64(&im, phdr_offset(&im, find_phdr(&im, PT_LOAD, PF_X)) +
                     offsetof(Elf64_Phdr, p_filesz), 1 << 20),
      "p_filesz exceeds p_memsz");
  EXPECT_EDIT_REJECTED(
      put64(&im, phdr_offset(&im, find_phdr(&im, PT_LOAD, PF_W)) +
                     offsetof(Elf64_Phdr, p_memsz), (uint64_t)1 << 40),
      "PT_LOAD larger than");
  EXPECT_EDIT_REJECTED(
      put64(&im, phdr_offset(&im, find_phdr(&im, PT_LOAD, PF_X)) +
                     offsetof(Elf64_Phdr, p_align), 3000),
      "not a power of two");
  EXPECT_EDIT_REJECTED(
      put64(&im, phdr_offset(&im, find_phdr(&im, PT_LOAD, PF_X)) +
                     offsetof(Elf64_Phdr, p_align), 0),
      "not a power of two from 4 KiB to 64 KiB");
  EXPECT_EDIT_REJECTED(
      put64(&im, phdr_offset(&im, find_phdr(&im, PT_LOAD, PF_X)) +
                     offsetof(Elf64_Phdr, p_vaddr),
          phdr_at(&im, find_phdr(&im, PT_LOAD, PF_X)).p_offset),
      "unsorted or share a page");
  EXPECT_EDIT_REJECTED(
      put32(&im, phdr_offset(&im, find_phdr(&im, PT_GNU_STACK, 0)), PT_TLS),
      "PT_TLS");
}

/* Replaces the DT_FLAGS_1 entry (which the loader ignores) with `tag`. */
static void retag(image_t *im, int64_t tag) {
  put64(im, dyn_offset(im, DT_FLAGS_1), (uint64_t)tag);
}

static void test_rejects_bad_dynamic(void **state) {
  (void)state;
  EXPECT_EDIT_REJECTED(retag(&im, DT_NEEDED), "DT_NEEDED");
  EXPECT_EDIT_REJECTED(retag(&im, DT_INIT), "constructors/destructors");
  EXPECT_EDIT_REJECTED(retag(&im, DT_INIT_ARRAY), "constructors/destructors");
  EXPECT_EDIT_REJECTED(retag(&im, DT_FINI_ARRAY), "constructors/destructors");
  EXPECT_EDIT_REJECTED(retag(&im, DT_TEXTREL), "DT_TEXTREL");
  EXPECT_EDIT_REJECTED(retag(&im, DT_REL), "DT_REL relocations");
  EXPECT_EDIT_REJECTED(retag(&im, 36 /* DT_RELR */), "DT_RELR");
  EXPECT_EDIT_REJECTED(retag(&im, 0x12345), "unsupported dynamic tag 0x12345");
  EXPECT_EDIT_REJECTED(retag(&im, DT_SYMTAB), "duplicate dynamic tag 6");
  EXPECT_EDIT_REJECTED(put64(&im, dyn_offset(&im, DT_PLTREL) + 8, DT_REL),
                       "DT_PLTREL must be DT_RELA");
  EXPECT_EDIT_REJECTED(put64(&im, dyn_offset(&im, DT_RELAENT) + 8, 16),
                       "DT_RELAENT");
  EXPECT_EDIT_REJECTED(put64(&im, dyn_offset(&im, DT_RELASZ) + 8, 25),
                       "DT_RELA table is malformed");
  EXPECT_EDIT_REJECTED(put64(&im, dyn_offset(&im, DT_STRSZ) + 8, 1 << 24),
                       "string table outside");
  EXPECT_EDIT_REJECTED(put64(&im, dyn_offset(&im, DT_SYMTAB) + 8, 1ull << 40),
                       "symbol table outside");
  EXPECT_EDIT_REJECTED(put64(&im, dyn_offset(&im, DT_FLAGS) + 8, DF_TEXTREL),
                       "DF_TEXTREL");
}

/* File offset of relocation `i` of the DT_JMPREL table. */
static size_t plt_rela_offset(const image_t *im, size_t i) {
  return vaddr_to_offset(im, dyn_value(im, DT_JMPREL)) + i * sizeof(Elf64_Rela);
}

/* Overwrites the first letter of `name` in .dynstr with `c`. */
static void rename_symbol(image_t *im, const char *name, char c) {
  size_t strtab = vaddr_to_offset(im, dyn_value(im, DT_STRTAB));
  size_t strsz = (size_t)dyn_value(im, DT_STRSZ);
  size_t n = strlen(name) + 1;
  for (size_t i = 0; i + n <= strsz; i++) {
    if (memcmp(im->data + strtab + i, name, n) == 0) {
      im->data[strtab + i] = (uint8_t)c;
      return;
    }
  }
  fail_msg("no symbol named %s", name);
}

static void test_rejects_bad_relocations(void **state) {
  (void)state;
  /* r_info = (sym << 32) | type */
  EXPECT_EDIT_REJECTED(put32(&im, plt_rela_offset(&im, 0) + 8, 37),
                       "unsupported relocation type 37");
  EXPECT_EDIT_REJECTED(put32(&im, plt_rela_offset(&im, 0) + 12, 99),
                       "symbol index 99 out of range");
  EXPECT_EDIT_REJECTED(put64(&im, plt_rela_offset(&im, 0), ehdr_of(&im).e_entry),
                       "outside writable segments");
  /* The first DT_RELA entry is RELATIVE; its addend is a vaddr. */
  EXPECT_EDIT_REJECTED(
      put64(&im, vaddr_to_offset(&im, dyn_value(&im, DT_RELA)) + 16, 1ull << 40),
      "RELATIVE relocation at");
  EXPECT_EDIT_REJECTED(rename_symbol(&im, "memcpy", 'n'),
                       "undefined symbol 'nemcpy' is not an allowed import");
}

int main(int argc, char **argv) {
  if (argc != 1 + FX_COUNT) {
    fprintf(stderr, "usage: %s exe preemptible malloc bad_abi bad_phases "
            "bad_fn bad_workgroups\n", argv[0]);
    return 2;
  }
  for (int i = 0; i < FX_COUNT; i++) fixture_paths[i] = argv[1 + i];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_load_and_run),
      cmocka_unit_test(test_load_and_run_preemptible),
      cmocka_unit_test(test_protections),
      cmocka_unit_test(test_uses_allocator),
      cmocka_unit_test(test_no_image),
      cmocka_unit_test(test_rejects_malloc_import),
      cmocka_unit_test(test_rejects_bad_library),
      cmocka_unit_test(test_rejects_bad_headers),
      cmocka_unit_test(test_rejects_bad_segments),
      cmocka_unit_test(test_rejects_bad_dynamic),
      cmocka_unit_test(test_rejects_bad_relocations),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
