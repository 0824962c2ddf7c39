/* The list of built backends.  Adding a backend: its folder, a meson option
 * value, and one line here. */
#include <string.h>

#include "registry.h"

#ifdef TINYML_BACKEND_X86
extern const tinyml_backend_t tinyml__backend_x86;
#endif
#ifdef TINYML_BACKEND_RVV
extern const tinyml_backend_t tinyml__backend_rvv;
#endif
#ifdef TINYML_BACKEND_ARMV7EM
extern const tinyml_backend_t tinyml__backend_armv7em;
#endif

static const tinyml_backend_t *const backends[] = {
#ifdef TINYML_BACKEND_X86
    &tinyml__backend_x86,
#endif
#ifdef TINYML_BACKEND_RVV
    &tinyml__backend_rvv,
#endif
#ifdef TINYML_BACKEND_ARMV7EM
    &tinyml__backend_armv7em,
#endif
    NULL,
};

const tinyml_backend_t *tinyml__backend_find(const char *name) {
  for (size_t i = 0; name && backends[i]; ++i)
    if (strcmp(backends[i]->name, name) == 0) return backends[i];
  return NULL;
}

const char *tinyml__backend_names(void) { return TINYML_BACKEND_NAMES; }

const tinyml_backend_t *tinyml__backend_default(const char *elf_arch) {
  for (size_t i = 0; elf_arch && backends[i]; ++i)
    if (strcmp(backends[i]->elf_arch, elf_arch) == 0) return backends[i];
  return backends[0];
}
