#include "alloc.h"

#include <stdint.h>
#include <string.h>

#if TINYML_FREESTANDING
/* Bare metal has no malloc: every object needs the caller's allocator, and
 * without one each allocation fails (OUT_OF_MEMORY), never crashes. */
static void *no_alloc(void *self, size_t size, size_t alignment) {
  (void)self;
  (void)size;
  (void)alignment;
  return NULL;
}

static void no_free(void *self, void *ptr) {
  (void)self;
  (void)ptr;
}

tinyml_allocator_t tinyml__allocator_or_default(const tinyml_allocator_t *a) {
  if (a && a->alloc && a->free) return *a;
  tinyml_allocator_t d = {NULL, no_alloc, no_free};
  return d;
}
#else
#include <stdlib.h>

static void *system_alloc(void *self, size_t size, size_t alignment) {
  (void)self;
  if (alignment < sizeof(void *)) alignment = sizeof(void *);
  void *p = NULL;
  if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
  return p;
}

static void system_free(void *self, void *ptr) {
  (void)self;
  free(ptr);
}

tinyml_allocator_t tinyml__allocator_or_default(const tinyml_allocator_t *a) {
  if (a && a->alloc && a->free) return *a;
  tinyml_allocator_t d = {NULL, system_alloc, system_free};
  return d;
}
#endif

void *tinyml__alloc(const tinyml_allocator_t *a, size_t size, size_t alignment) {
  if (alignment == 0) alignment = 1;
  return a->alloc(a->self, size ? size : 1, alignment);
}

void *tinyml__calloc(const tinyml_allocator_t *a, size_t count, size_t size,
                     size_t alignment) {
  if (size && count > SIZE_MAX / size) return NULL;
  void *p = tinyml__alloc(a, count * size, alignment);
  if (p) memset(p, 0, count * size != 0 ? count * size : 1);
  return p;
}

void tinyml__free(const tinyml_allocator_t *a, void *ptr) {
  if (ptr) a->free(a->self, ptr);
}

char *tinyml__strdup(const tinyml_allocator_t *a, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = tinyml__alloc(a, n, 1);
  if (p) memcpy(p, s, n);
  return p;
}
