/* The module reader's internals (reader.c), shared with the part that
 * reads a module's variants (reader_variants.c, hosted builds only).  Not
 * part of the module API: module.h is.
 * Thread-safety: one reader per tmod_read call. */
#ifndef TINYML_MODULE_READER_INTERNAL_H
#define TINYML_MODULE_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "lib/common/status.h"
#include "module.h"

/* The helpers reader_variants.c calls; static where it is not built
 * (freestanding), so the Cortex-M reader compiles as it did in one file. */
#if TINYML_FREESTANDING
#define TMOD_READER_FN static
#else
#define TMOD_READER_FN
#endif

typedef struct reader {
  const uint8_t *data;
  size_t size;
  const tinyml_allocator_t *user; /* as given, for statuses */
  tinyml_allocator_t alloc;       /* resolved, for the arrays */
  tinyml_status_t status;         /* the first problem, or TINYML_OK */
  /* Said before a name in messages: "variant 2 (x86-64-v4) " while a
   * variant's executables are read, so they are not taken for the
   * baseline's; else "".  Hosted only: the freestanding reader has no
   * variants, and its .text is counted. */
#if !TINYML_FREESTANDING
  const char *scope;
#endif
} reader_t;

#if TINYML_FREESTANDING
#define TMOD_SCOPE(r) ""
#else
#define TMOD_SCOPE(r) ((r)->scope)
#endif

/* What a message is about: `what` is a printf format of this file with at
 * most two %u, for `index` and `sub` ("input %u", "step %u binding %u",
 * "module"), only formatted when a message is made. */
typedef struct name {
  const char *what;
  unsigned index, sub;
} name_t;

/* A bounds-checked table: where it is, where its vtable is, their sizes,
 * and its name.  vtable_size 0 is the empty table (absent or broken): all
 * its fields read as absent. */
typedef struct table {
  reader_t *r;
  name_t name;
  size_t pos, vtable;
  uint32_t vtable_size, size;
} table_t;

/* A bounds-checked vector: position of element 0, and the count.  An
 * absent (or broken) vector has present == 0 and count 0. */
typedef struct vec {
  size_t pos;
  uint32_t count;
  int present;
} vec_t;

/* Records the first problem and returns 0 (reader.c says more).  bad: about
 * the module; nbad: about name `n`; tbad: about table `t`. */
#if TINYML_STATUS_VALUES
TMOD_READER_FN int tmod__bad_at(reader_t *r, const name_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define bad(r, ...) tmod__bad_at(r, NULL, __VA_ARGS__)
#define nbad(r, n, ...) tmod__bad_at(r, n, __VA_ARGS__)
#define tbad(t, ...) tmod__bad_at((t)->r, &(t)->name, __VA_ARGS__)
#else
TMOD_READER_FN int tmod__bad_at(reader_t *r, const name_t *n, const char *text);
#define bad(r, ...) tmod__bad_at(r, NULL, TINYML_FORMAT_ONLY(__VA_ARGS__))
#define nbad(r, n, ...) tmod__bad_at(r, n, TINYML_FORMAT_ONLY(__VA_ARGS__))
#define tbad(t, ...) tmod__bad_at((t)->r, &(t)->name, TINYML_FORMAT_ONLY(__VA_ARGS__))
#endif

/* Only called before any problem: nothing is allocated after one. */
TMOD_READER_FN void tmod__out_of_memory(reader_t *r, const char *what, uint64_t bytes);

/* The vector in field `id`, whose elements are `elem_size` bytes. */
TMOD_READER_FN void tmod__vector(const table_t *t, unsigned id, uint32_t elem_size, vec_t *v);

/* The string in field `id`, pointing into the module; "" when absent. */
TMOD_READER_FN const char *tmod__string(const table_t *t, unsigned id);

/* Table number `i` (< v->count) of a vector of tables, named `what`
 * (which formats `i`). */
TMOD_READER_FN int tmod__element_table(reader_t *r, const vec_t *v, uint32_t i,
                                       const char *what, table_t *t);

/* Executable `i` of vector `v`, its image checked against its checksum. */
TMOD_READER_FN void tmod__read_executable(reader_t *r, const vec_t *v, uint32_t i,
                                          tmod_executable_t *out);

#if !TINYML_FREESTANDING
/* Field 15 (reader_variants.c), after the baseline's executables. */
void tmod__read_variants(table_t *root, tmod_module_t *m);
#endif

#endif
