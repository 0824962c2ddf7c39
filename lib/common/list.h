/* Comma-separated lists of names, as LLVM writes CPU features
 * ("+avx2,+fma") and the backends list CPUs: one membership test for the
 * compiler and the runtime's CPU check.
 * Thread-safety: pure functions. */
#ifndef TINYML_COMMON_LIST_H
#define TINYML_COMMON_LIST_H

#include <stddef.h>

/* Whether the first `n` bytes of `list` hold the `k` bytes at `item` as one
 * whole item; `list` need not be NUL-terminated. */
int tinyml__list_has_n(const char *list, size_t n, const char *item, size_t k);

/* The same for NUL-terminated `list` and `item`; a NULL list holds nothing. */
int tinyml__list_has(const char *list, const char *item);

/* Whether NUL-terminated `list` holds every item of `required` (NULL or
 * empty: nothing required). */
int tinyml__list_has_all(const char *list, const char *required);

#endif
