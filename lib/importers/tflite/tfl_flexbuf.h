/* A minimal, bounds-checked reader for the FlexBuffer maps TFLite stores as
 * custom operator options (e.g. TFLite_Detection_PostProcess's): the root
 * must be a map, and only its scalar values (ints, uints, floats, bools and
 * their indirect forms) can be read.  Every offset is checked against the
 * buffer before it is followed, so corrupt options give a message, never a
 * read out of bounds.
 *
 * Ownership: a map borrows the bytes it was opened on.
 * Thread-safety: none needed; a map is read-only after tfl_flex_open. */
#ifndef TINYML_IMPORTERS_TFL_FLEXBUF_H
#define TINYML_IMPORTERS_TFL_FLEXBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct tfl_flex_map {
  const uint8_t *buf;
  size_t size;
  size_t values;      /* position of the first value */
  size_t keys;        /* position of the keys vector's first entry */
  uint32_t width;     /* bytes per value */
  uint32_t key_width; /* bytes per keys-vector entry */
  uint32_t count;
} tfl_flex_map_t;

/* Opens the root map of `size` bytes at `buf`.  Returns 1, or 0 with a
 * message in `err` (e.g. "the root is not a map") when the bytes are
 * malformed. */
int tfl_flex_open(const uint8_t *buf, size_t size, tfl_flex_map_t *out, char *err,
                  size_t cap);

/* The scalar under `key` as a double (a bool reads as 0 or 1).  Returns 1
 * when found, 0 when the key is absent or holds null, and -1 with a message
 * in `err` when its value is malformed or not a scalar. */
int tfl_flex_number(const tfl_flex_map_t *m, const char *key, double *out, char *err,
                    size_t cap);

#endif
