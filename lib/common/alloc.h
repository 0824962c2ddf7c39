/* Internal allocator helpers.  Nothing here is public. */
#ifndef TINYML_COMMON_ALLOC_H
#define TINYML_COMMON_ALLOC_H

#include <stddef.h>

#include "tinyml.h"

/* Returns `a` if it names an allocator, else the system allocator.  The
 * result is copied into the object that keeps it. */
tinyml_allocator_t tinyml__allocator_or_default(const tinyml_allocator_t *a);

/* Allocates through `a` (must be resolved by tinyml__allocator_or_default);
 * zero `size` allocates one byte so NULL always means failure. */
void *tinyml__alloc(const tinyml_allocator_t *a, size_t size, size_t alignment);
void *tinyml__calloc(const tinyml_allocator_t *a, size_t count, size_t size,
                     size_t alignment);
void tinyml__free(const tinyml_allocator_t *a, void *ptr);
/* Copies a NUL-terminated string; NULL on failure. */
char *tinyml__strdup(const tinyml_allocator_t *a, const char *s);

#endif
