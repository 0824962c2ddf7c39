/* The reader's decoding state and its status-making field reads (see
 * tflite_decode.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/common/status.h"
#include "tflite_decode.h"

/* A cap on counts, so a corrupt count cannot ask for a giant allocation.
 * Counts are also bounded by the bytes present (4 per element at least),
 * but the decoded structs are ~25 times larger than that. */
#define MAX_COUNT 1000000u
/* A FlatBuffer may point many entries at one table, vector or string, so a
 * small file could make a naive reader copy or scan the same bytes millions
 * of times.  Decoding therefore gets a budget: bytes allocated plus bytes
 * scanned without allocating, at most BUDGET_PER_BYTE per file byte plus
 * BUDGET_BASE.  Real models stay well under it: a 104-byte tensor struct
 * comes from at least 8 bytes of file (an offset and a table). */
#define BUDGET_PER_BYTE 32u
#define BUDGET_BASE (1u << 20)

void rd_init(reader_t *r, const void *bytes, size_t size,
             const tinyml_allocator_t *allocator) {
  uint64_t budget = (uint64_t)size > (UINT64_MAX - BUDGET_BASE) / BUDGET_PER_BYTE
                        ? UINT64_MAX
                        : (uint64_t)size * BUDGET_PER_BYTE + BUDGET_BASE;
  *r = (reader_t){{bytes, size}, allocator, tinyml__allocator_or_default(allocator),
                  budget, "subgraph 0"};
}

tinyml_status_t rd_bad(reader_t *r, const char *fmt, ...) {
  char message[320];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof(message), fmt, args);
  va_end(args);
  return tinyml__status_make(r->user, TINYML_STATUS_INVALID_MODEL,
                             "tflite: %s", message);
}

tinyml_status_t rd_fb_bad(reader_t *r, const char *what,
                          const char *name, fb_err_t e) {
  return rd_bad(r, "%s: %s: %s", what, name, fb_err_text[e]);
}

tinyml_status_t rd_out_of_memory(reader_t *r, const char *what,
                                 uint64_t bytes) {
  return tinyml__status_make(r->user, TINYML_STATUS_OUT_OF_MEMORY,
                             "tflite: out of memory for %s (%" PRIu64 " bytes)",
                             what, bytes);
}

tinyml_status_t rd_spend(reader_t *r, uint64_t bytes, const char *what) {
  if (bytes > r->budget)
    return rd_bad(r, "decoding %s takes the work past %u bytes per byte of the "
                  "file: too many entries share one table, vector or string",
                  what, BUDGET_PER_BYTE);
  r->budget -= bytes;
  return TINYML_OK;
}

tinyml_status_t rd_alloc_array(reader_t *r, uint32_t count,
                               size_t size, size_t align, const char *what,
                               void **out) {
  *out = NULL;
  if (!count) return TINYML_OK;
  TINYML_RETURN_IF_ERROR(rd_spend(r, (uint64_t)count * size, what));
  *out = tinyml__calloc(&r->alloc, count, size, align);
  if (!*out) return rd_out_of_memory(r, what, (uint64_t)count * size);
  return TINYML_OK;
}

tinyml_status_t rd_scalar(reader_t *r, const tbl_t *t, unsigned id,
                          unsigned n, uint64_t def, const char *what,
                          const char *name, uint64_t *out) {
  uint64_t at;
  *out = def; /* also on failure, which keeps gcc's flow analysis happy */
  fb_err_t e = fb_field_at(&r->b, t, id, n, &at);
  if (e) return rd_fb_bad(r, what, name, e);
  if (at) *out = fb_load(&r->b, at, n);
  return TINYML_OK;
}

tinyml_status_t rd_vector(reader_t *r, const tbl_t *t, unsigned id,
                          uint32_t elem_size, const char *what,
                          const char *name, vec_t *v) {
  fb_err_t e = fb_field_vector(&r->b, t, id, elem_size, v);
  return e ? rd_fb_bad(r, what, name, e) : TINYML_OK;
}

tinyml_status_t rd_table(reader_t *r, const tbl_t *t, unsigned id,
                         const char *what, const char *name, tbl_t *out,
                         int *present) {
  fb_err_t e = fb_field_table(&r->b, t, id, out, present);
  return e ? rd_fb_bad(r, what, name, e) : TINYML_OK;
}

tinyml_status_t rd_element(reader_t *r, const vec_t *v, uint32_t i,
                           const char *what, const char *name, tbl_t *t) {
  uint64_t pos;
  fb_err_t e = fb_follow(&r->b, v->pos + 4 * (uint64_t)i, &pos);
  if (!e) e = fb_open_table(&r->b, pos, t);
  return e ? rd_bad(r, "%s: %s %" PRIu32 ": %s", what, name, i, fb_err_text[e])
           : TINYML_OK;
}

tinyml_status_t rd_check_count(reader_t *r, const vec_t *v,
                               const char *what, const char *name) {
  if (v->count > MAX_COUNT)
    return rd_bad(r, "%s: %" PRIu32 " %s exceed the maximum %u", what, v->count,
                  name, MAX_COUNT);
  return TINYML_OK;
}

tinyml_status_t rd_string(reader_t *r, const tbl_t *t, unsigned id,
                          const char *what, const char *name,
                          int null_if_absent, char **out) {
  vec_t v;
  TINYML_RETURN_IF_ERROR(rd_vector(r, t, id, 1, what, name, &v));
  if (v.present && (v.count >= r->b.size - v.pos || r->b.data[v.pos + v.count]))
    return rd_fb_bad(r, what, name, FB_STRING_NUL);
  if (!v.present && null_if_absent) return TINYML_OK;
  TINYML_RETURN_IF_ERROR(rd_spend(r, (uint64_t)v.count + 1, name));
  char *s = tinyml__alloc(&r->alloc, (size_t)v.count + 1, 1);
  if (!s) return rd_out_of_memory(r, name, (uint64_t)v.count + 1);
  if (v.count) memcpy(s, r->b.data + v.pos, v.count);
  s[v.count] = '\0';
  *out = s;
  return TINYML_OK;
}

int32_t rd_i32_at(reader_t *r, const vec_t *v, uint32_t i) {
  return fb_as_i32(fb_load(&r->b, v->pos + 4 * (uint64_t)i, 4));
}

tinyml_status_t rd_copy_i32(reader_t *r, const vec_t *v,
                            const char *name, int32_t **out) {
  void *p;
  TINYML_RETURN_IF_ERROR(rd_alloc_array(r, v->count, sizeof(int32_t),
                                        _Alignof(int32_t), name, &p));
  int32_t *a = p;
  for (uint32_t i = 0; i < v->count; i++) a[i] = rd_i32_at(r, v, i);
  *out = a;
  return TINYML_OK;
}

tinyml_status_t rd_check_indices(reader_t *r, const vec_t *v,
                                 uint32_t tensor_count, int allow_omitted,
                                 const char *what, const char *name) {
  TINYML_RETURN_IF_ERROR(rd_spend(r, 4 * (uint64_t)v->count, name));
  for (uint32_t i = 0; i < v->count; i++) {
    int32_t index = rd_i32_at(r, v, i);
    if (index == -1 && allow_omitted) continue;
    if (index < 0 || (uint32_t)index >= tensor_count)
      return rd_bad(r, "%s: %s[%" PRIu32 "] = %" PRId32 " is not a tensor index (%" PRIu32 " tensors)",
                    what, name, i, index, tensor_count);
  }
  return TINYML_OK;
}
