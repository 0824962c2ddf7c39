/* The backends this library was built with.  Only bindings-c uses it: it
 * resolves the caller's target and hands the descriptor to the compiler,
 * which never reaches up into backends/.
 * Thread-safety: immutable. */
#ifndef TINYML_BACKENDS_REGISTRY_H
#define TINYML_BACKENDS_REGISTRY_H

#include "../lib/compiler/backend.h"

/* The built backend named `name`; NULL when it was not built. */
const tinyml_backend_t *tinyml__backend_find(const char *name);

/* Comma-separated names of the built backends, in registration order. */
const char *tinyml__backend_names(void);

/* The first built backend whose executables are for `elf_arch` (the
 * architecture the runtime runs on), or else the first built one; NULL
 * when none was built. */
const tinyml_backend_t *tinyml__backend_default(const char *elf_arch);

#endif
