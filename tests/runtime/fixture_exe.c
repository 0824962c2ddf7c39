/* A hand-written stand-in for a compiled model executable, linked the way the
 * compiler links real ones (see the lld flags at the top of
 * lib/runtime/elf/elf_loader.c).  Built freestanding: the only outside symbols
 * are the imports the loader allows, unless a FIXTURE_VARIANT asks for a
 * broken image:
 *   0  the good fixture
 *   1  also imports malloc (the loader must reject it by name)
 *   2  the library reports the wrong abi_version
 *   3  an entry has 0 phases
 *   4  an entry's fn points at data, not code
 *   5  an entry's phase has 0 workgroups */
#include <stddef.h>
#include <stdint.h>

#include "../../lib/module/executable_abi.h"

#ifndef FIXTURE_VARIANT
#define FIXTURE_VARIANT 0
#endif

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);

#define N 16

/* Exported (default visibility), so a link without -Bsymbolic refers to it
 * through a symbol relocation against a defined symbol. */
void fixture_add(void *const *bindings, uint32_t phase, uint32_t wg, uint32_t count) {
  (void)phase;
  (void)wg;
  (void)count;
  const float *x = bindings[0];
  const float *y = bindings[1];
  float *z = bindings[2];
  for (int i = 0; i < N; i++) z[i] = x[i] + y[i];
}

/* A data pointer to an import: an R_X86_64_64 relocation against memset. */
static void *(*volatile fill_fn)(void *, int, size_t) = memset;

#if FIXTURE_VARIANT == 1
void *malloc(size_t n);
#endif

/* Fills bindings[0] (64 bytes) with 0x5a and bindings[1] (32 bytes) with
 * 0x11.  memcpy/memset are called directly (JUMP_SLOT), through the data
 * pointer above, and through a GOT load of memset's address (GLOB_DAT). */
static void fill_copy(void *const *bindings, uint32_t phase, uint32_t wg, uint32_t count) {
  (void)phase;
  (void)wg;
  (void)count;
  uint8_t tmp[64];
  void *(*volatile got_fill)(void *, int, size_t) = memset;
  fill_fn(tmp, 0x00, sizeof tmp);
  got_fill(tmp, 0x5a, sizeof tmp);
  memcpy(bindings[0], tmp, sizeof tmp);
  memset(bindings[1], 0x11, 32);
#if FIXTURE_VARIANT == 1
  *(void *volatile *)bindings[1] = malloc(1);
#endif
}

/* Static tables of pointers: R_X86_64_RELATIVE relocations. */
static const uint64_t add_sizes[] = {N * 4, N * 4, N * 4};
static const uint64_t fill_sizes[] = {64, 32};
static const uint32_t one_workgroup[] = {1};
static const uint32_t no_workgroup[] = {0};
static const uint64_t not_code = 0;

#if FIXTURE_VARIANT == 4
#define FILL_FN ((tinyml_exe_entry_fn)(uintptr_t)&not_code)
#else
#define FILL_FN fill_copy
#endif

static const tinyml_exe_entry_t entries[] = {
    {fixture_add, 3, FIXTURE_VARIANT == 3 ? 0u : 1u, add_sizes, one_workgroup},
    {FILL_FN, 2, 1, fill_sizes, FIXTURE_VARIANT == 5 ? no_workgroup : one_workgroup},
};

static const tinyml_exe_library_t library = {
    FIXTURE_VARIANT == 2 ? TINYML_EXE_ABI_VERSION + 1 : TINYML_EXE_ABI_VERSION,
    2, entries};

/* The ELF entry point (lld -e tinyml_query). */
const tinyml_exe_library_t *tinyml_query(uint32_t max_abi_version) {
  (void)not_code;
  return max_abi_version >= TINYML_EXE_ABI_VERSION ? &library : NULL;
}
