/* The list of built backends (registry.h).  Its table is generated from
 * the backends meson built (registry_table.h, backends/meson.build), so
 * adding a backend never edits this file. */
#include "registry.h"

#include <string.h>

#include "registry_table.h"

static const tinyml_backend_t *const backends[] = {TINYML_BACKEND_TABLE NULL};

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
