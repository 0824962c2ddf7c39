/* The counting allocator every fuzz target passes to the library: each
 * target checks that `live` is back to 0 after an input, so a leak on any
 * path aborts at once with the input that caused it (LeakSanitizer would
 * only report at exit). */
#ifndef TINYML_TESTS_FUZZ_ALLOC_H
#define TINYML_TESTS_FUZZ_ALLOC_H

#include <stdlib.h>

#include "tinyml.h"

typedef struct fuzz_counter {
  long live;
} fuzz_counter_t;

static inline void *fuzz_count_alloc(void *self, size_t size, size_t alignment) {
  void *p = NULL;
  if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment,
                     size ? size : 1) != 0)
    return NULL;
  ((fuzz_counter_t *)self)->live++;
  return p;
}

static inline void fuzz_count_free(void *self, void *ptr) {
  if (!ptr) return;
  ((fuzz_counter_t *)self)->live--;
  free(ptr);
}

static inline tinyml_allocator_t fuzz_counting_allocator(fuzz_counter_t *c) {
  return (tinyml_allocator_t){c, fuzz_count_alloc, fuzz_count_free};
}

#endif
