/* A growable text buffer, for the importers and the compiler, which write
 * MLIR and C text.  Appends never fail loudly: the first allocation failure
 * latches `oom`, later appends are ignored, and the caller checks once at
 * the end.
 * Ownership: the buffer owns `data` until strbuf_take hands it over.
 * Thread-safety: none; one writer at a time. */
#ifndef TINYML_COMMON_STRBUF_H
#define TINYML_COMMON_STRBUF_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml.h"

typedef struct strbuf {
  const tinyml_allocator_t *allocator; /* resolved, see tinyml__allocator_or_default */
  char *data;
  size_t length;
  size_t capacity;
  int oom;
} strbuf_t;

void strbuf_init(strbuf_t *sb, const tinyml_allocator_t *allocator);
void strbuf_free(strbuf_t *sb);
void strbuf_append(strbuf_t *sb, const char *text);
void strbuf_printf(strbuf_t *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends `size` bytes as upper-case hex digits, two per byte. */
void strbuf_hex(strbuf_t *sb, const void *bytes, size_t size);
/* Appends `text` as an MLIR string literal, quotes included; bytes MLIR
 * would misread are written as \XX escapes. */
void strbuf_mlir_string(strbuf_t *sb, const char *text);
/* Hands the NUL-terminated text to the caller (free with tinyml__free) and
 * empties the buffer; NULL if an append ran out of memory. */
char *strbuf_take(strbuf_t *sb, size_t *length);

#endif
