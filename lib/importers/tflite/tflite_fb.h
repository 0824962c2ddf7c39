/* Internal to the TFLite reader: bounds-checked FlatBuffer primitives.
 *
 * As in lib/module/reader.c, the bytes are hostile until proven otherwise.
 * Every position is a uint64_t no greater than the size, so a position plus
 * a 32-bit quantity never overflows, and each range is checked before any
 * byte of it is loaded.  Loads are assembled byte by byte (little-endian), so
 * neither alignment nor host byte order matters.
 *
 * The primitives report a fb_err_t; the reader (tflite_decode.h) turns those
 * into statuses naming the object and field, and the tfl_table_* accessors
 * (tflite_reader.h, defined in tflite_fb.c) turn them into defaults. */
#ifndef TINYML_IMPORTERS_TFLITE_FB_H
#define TINYML_IMPORTERS_TFLITE_FB_H

#include <stdint.h>
#include <string.h>

typedef struct fb {
  const uint8_t *data;
  uint64_t size;
} fb_t;

/* A table whose header and vtable lie in bounds. */
typedef struct tbl {
  uint64_t pos, vtable;
  uint32_t vtable_size, size;
} tbl_t;

/* A vector whose elements lie in bounds; present == 0 when absent. */
typedef struct vec {
  uint64_t pos;
  uint32_t count;
  int present;
} vec_t;

typedef enum fb_err {
  FB_OK, FB_TABLE_BOUNDS, FB_VTABLE_BOUNDS, FB_VTABLE_SIZE, FB_TABLE_SIZE,
  FB_FIELD_BOUNDS, FB_OFFSET_BOUNDS, FB_VECTOR_BOUNDS, FB_VECTOR_END,
  FB_STRING_NUL,
} fb_err_t;

/* What each fb_err_t means, for messages; indexed by the fb_err_t. */
extern const char *const fb_err_text[];

/* Little-endian load of `n` bytes at `pos`; the caller checked bounds. */
static inline uint64_t fb_load(const fb_t *b, uint64_t pos, unsigned n) {
  uint64_t v = 0;
  for (unsigned i = n; i-- > 0;) v = (v << 8) | b->data[pos + i];
  return v;
}

/* Sign-extends the low `bytes` bytes of `v`, without the implementation-
 * defined conversion of an out-of-range value to a signed type. */
static inline int64_t fb_sext(uint64_t v, unsigned bytes) {
  unsigned bits = 8 * bytes;
  if (bits < 64) {
    uint64_t mask = (UINT64_C(1) << bits) - 1;
    v &= mask;
    if (v >> (bits - 1)) v |= ~mask;
  }
  int64_t s;
  memcpy(&s, &v, sizeof(s));
  return s;
}

static inline int32_t fb_as_i32(uint64_t v) { return (int32_t)fb_sext(v, 4); }
static inline int32_t fb_as_i8(uint64_t v) { return (int32_t)fb_sext(v, 1); }

fb_err_t fb_open_table(const fb_t *b, uint64_t pos, tbl_t *t);
/* Position of field `id` (`n` bytes wide) in *at, or 0 when absent (0 is
 * never a field position: the root offset lives there). */
fb_err_t fb_field_at(const fb_t *b, const tbl_t *t, uint64_t id, unsigned n,
                     uint64_t *at);
/* Follows the uoffset stored at `at` (4 bytes already in bounds). */
fb_err_t fb_follow(const fb_t *b, uint64_t at, uint64_t *target);
fb_err_t fb_vector_at(const fb_t *b, uint64_t pos, uint32_t elem_size, vec_t *v);
/* The vector referenced by field `id`; absent gives present == 0. */
fb_err_t fb_field_vector(const fb_t *b, const tbl_t *t, uint64_t id,
                         uint32_t elem_size, vec_t *v);
/* The table referenced by field `id`; *present = 0 when absent. */
fb_err_t fb_field_table(const fb_t *b, const tbl_t *t, uint64_t id,
                        tbl_t *out, int *present);

#endif
