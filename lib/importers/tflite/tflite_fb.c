/* The bounds-checked FlatBuffer primitives (see tflite_fb.h), and on them
 * the tfl_table_* accessors for option tables (see tflite_reader.h).
 *
 * The accessors re-check everything on each call, since option tables are
 * only verified down to their vtable. */
#include <string.h>

#include "tflite_fb.h"
#include "tflite_reader.h"

/* ------------------------------------------------------------------------
 * FlatBuffer primitives
 * ---------------------------------------------------------------------- */

const char *const fb_err_text[] = {
    "ok",
    "table is misaligned or lies outside the file",
    "vtable is misaligned or lies outside the file",
    "vtable size is invalid",
    "table size is invalid",
    "field lies outside its table",
    "offset points outside the file",
    "vector is misaligned or lies outside the file",
    "vector runs past the end of the file",
    "string is not NUL-terminated",
};

fb_err_t fb_open_table(const fb_t *b, uint64_t pos, tbl_t *t) {
  if (pos % 4 || pos > b->size || b->size - pos < 4) return FB_TABLE_BOUNDS;
  int64_t vtable = (int64_t)pos - (int64_t)fb_as_i32(fb_load(b, pos, 4));
  if (vtable < 0 || vtable % 2 || (uint64_t)vtable > b->size - 4)
    return FB_VTABLE_BOUNDS;
  t->pos = pos;
  t->vtable = (uint64_t)vtable;
  t->vtable_size = (uint32_t)fb_load(b, t->vtable, 2);
  t->size = (uint32_t)fb_load(b, t->vtable + 2, 2);
  if (t->vtable_size < 4 || t->vtable_size % 2 ||
      t->vtable_size > b->size - t->vtable)
    return FB_VTABLE_SIZE;
  if (t->size < 4 || t->size > b->size - pos) return FB_TABLE_SIZE;
  return FB_OK;
}

fb_err_t fb_field_at(const fb_t *b, const tbl_t *t, uint64_t id, unsigned n,
                     uint64_t *at) {
  *at = 0;
  uint64_t slot = 4 + 2 * id;
  if (id > 0xFFFF || slot + 2 > t->vtable_size) return FB_OK;
  uint32_t offset = (uint32_t)fb_load(b, t->vtable + slot, 2);
  if (offset == 0) return FB_OK;
  if (offset < 4 || offset + n > t->size) return FB_FIELD_BOUNDS;
  *at = t->pos + offset;
  return FB_OK;
}

fb_err_t fb_follow(const fb_t *b, uint64_t at, uint64_t *target) {
  uint64_t offset = fb_load(b, at, 4);
  if (offset == 0 || offset > INT32_MAX || at + offset >= b->size)
    return FB_OFFSET_BOUNDS;
  *target = at + offset;
  return FB_OK;
}

fb_err_t fb_vector_at(const fb_t *b, uint64_t pos, uint32_t elem_size, vec_t *v) {
  if (pos % 4 || pos > b->size || b->size - pos < 4) return FB_VECTOR_BOUNDS;
  v->count = (uint32_t)fb_load(b, pos, 4);
  v->pos = pos + 4;
  v->present = 1;
  if ((uint64_t)v->count * elem_size > b->size - v->pos) return FB_VECTOR_END;
  return FB_OK;
}

fb_err_t fb_field_vector(const fb_t *b, const tbl_t *t, uint64_t id,
                         uint32_t elem_size, vec_t *v) {
  uint64_t at, pos;
  fb_err_t e;
  memset(v, 0, sizeof(*v));
  if ((e = fb_field_at(b, t, id, 4, &at)) || !at) return e;
  if ((e = fb_follow(b, at, &pos))) return e;
  return fb_vector_at(b, pos, elem_size, v);
}

fb_err_t fb_field_table(const fb_t *b, const tbl_t *t, uint64_t id,
                        tbl_t *out, int *present) {
  uint64_t at, pos;
  fb_err_t e;
  *present = 0;
  if ((e = fb_field_at(b, t, id, 4, &at)) || !at) return e;
  if ((e = fb_follow(b, at, &pos)) || (e = fb_open_table(b, pos, out))) return e;
  *present = 1;
  return FB_OK;
}

/* ------------------------------------------------------------------------
 * Option table accessors
 * ---------------------------------------------------------------------- */

/* Position of an option field, 0 when the table or field is absent or out
 * of bounds (then *bad is set). */
static uint64_t option_field(const tfl_table_t *t, unsigned field, unsigned n,
                             int *bad) {
  if (!t || !t->buf) return 0;
  fb_t b = {t->buf, t->size};
  tbl_t tb;
  uint64_t at = 0;
  if (fb_open_table(&b, t->pos, &tb) || fb_field_at(&b, &tb, field, n, &at)) {
    if (bad) *bad = 1;
    return 0;
  }
  return at;
}

int32_t tfl_table_i32(const tfl_table_t *t, unsigned field, int32_t def, int *bad) {
  uint64_t at = option_field(t, field, 4, bad);
  if (!at) return def;
  fb_t b = {t->buf, t->size};
  return fb_as_i32(fb_load(&b, at, 4));
}

int8_t tfl_table_i8(const tfl_table_t *t, unsigned field, int8_t def, int *bad) {
  uint64_t at = option_field(t, field, 1, bad);
  return at ? (int8_t)fb_as_i8(t->buf[at]) : def;
}

float tfl_table_f32(const tfl_table_t *t, unsigned field, float def, int *bad) {
  uint64_t at = option_field(t, field, 4, bad);
  if (!at) return def;
  fb_t b = {t->buf, t->size};
  uint32_t bits = (uint32_t)fb_load(&b, at, 4);
  float v;
  memcpy(&v, &bits, sizeof(v));
  return v;
}

uint8_t tfl_table_bool(const tfl_table_t *t, unsigned field, uint8_t def, int *bad) {
  uint64_t at = option_field(t, field, 1, bad);
  return at ? t->buf[at] != 0 : def;
}

uint32_t tfl_table_i32_vector(const tfl_table_t *t, unsigned field,
                              int32_t *out, uint32_t cap, int *bad) {
  uint64_t at = option_field(t, field, 4, bad);
  if (!at) return 0;
  fb_t b = {t->buf, t->size};
  uint64_t pos;
  vec_t v;
  if (fb_follow(&b, at, &pos) || fb_vector_at(&b, pos, 4, &v)) {
    if (bad) *bad = 1;
    return 0;
  }
  for (uint32_t i = 0; out && i < v.count && i < cap; i++)
    out[i] = fb_as_i32(fb_load(&b, v.pos + 4 * (uint64_t)i, 4));
  return v.count;
}

uint32_t tfl_table_string(const tfl_table_t *t, unsigned field, char *out, uint32_t cap,
                          int *bad) {
  if (cap) out[0] = 0;
  uint64_t at = option_field(t, field, 4, bad);
  if (!at) return 0;
  fb_t b = {t->buf, t->size};
  uint64_t pos;
  vec_t v;
  if (fb_follow(&b, at, &pos) || fb_vector_at(&b, pos, 1, &v)) {
    if (bad) *bad = 1;
    return 0;
  }
  if (v.count < cap) {
    memcpy(out, b.data + v.pos, v.count);
    out[v.count] = 0;
  }
  return v.count;
}
