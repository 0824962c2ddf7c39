/* The FlexBuffer map reader (tfl_flexbuf.h).
 *
 * Layout, as flexbuffers.h writes it: the buffer ends with the root value,
 * its packed type and its width in bytes.  A packed type is (type << 2) |
 * log2(width).  A map's value is an offset back to its values; before them
 * lie the offset back to its keys vector, that vector's width and the
 * count, each one value wide; after them, one packed type byte per value.
 * A keys vector holds offsets back to NUL-terminated key strings, and its
 * count precedes its first entry. */
#include "tfl_flexbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum {
  FLEX_NULL = 0, FLEX_INT = 1, FLEX_UINT = 2, FLEX_FLOAT = 3,
  FLEX_INDIRECT_INT = 6, FLEX_INDIRECT_UINT = 7, FLEX_INDIRECT_FLOAT = 8,
  FLEX_MAP = 9, FLEX_BOOL = 26
};

static int fail(char *err, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, cap, fmt, ap);
  va_end(ap);
  return 0;
}

static int valid_width(uint64_t w) { return w == 1 || w == 2 || w == 4 || w == 8; }

/* The `width`-byte little-endian unsigned at `pos`, if it lies in bounds. */
static int read_uint(const uint8_t *buf, size_t size, size_t pos, uint32_t width,
                     uint64_t *out) {
  if (!valid_width(width) || pos > size || size - pos < width) return 0;
  uint64_t v = 0;
  for (uint32_t k = 0; k < width; ++k) v |= (uint64_t)buf[pos + k] << (8 * k);
  *out = v;
  return 1;
}

/* The position `offset` bytes before `pos`, if that is inside the buffer. */
static int back(size_t pos, uint64_t offset, size_t *out) {
  if (offset > pos) return 0;
  *out = pos - (size_t)offset;
  return 1;
}

/* Reads the map header before `values` (its count and keys vector). */
static int open_keys(tfl_flex_map_t *m, char *err, size_t cap) {
  uint64_t count, koff, kwidth, kcount;
  size_t w = m->width, kpos;
  if (m->values < 3 * w || !read_uint(m->buf, m->size, m->values - w, m->width, &count) ||
      !read_uint(m->buf, m->size, m->values - 3 * w, m->width, &koff) ||
      !read_uint(m->buf, m->size, m->values - 2 * w, m->width, &kwidth))
    return fail(err, cap, "the map header lies outside the options");
  if (count > m->size || count * (w + 1) > m->size - m->values)
    return fail(err, cap, "the map's %llu values run past the end of the options",
                (unsigned long long)count);
  if (!valid_width(kwidth) || !back(m->values - 3 * w, koff, &kpos) || kpos < kwidth ||
      !read_uint(m->buf, m->size, kpos - kwidth, (uint32_t)kwidth, &kcount))
    return fail(err, cap, "the map's keys vector lies outside the options");
  if (kcount != count || count * kwidth > m->size - kpos)
    return fail(err, cap, "the map has %llu values but %llu keys", (unsigned long long)count,
                (unsigned long long)kcount);
  m->keys = kpos;
  m->key_width = (uint32_t)kwidth;
  m->count = (uint32_t)count;
  return 1;
}

int tfl_flex_open(const uint8_t *buf, size_t size, tfl_flex_map_t *out, char *err,
                  size_t cap) {
  memset(out, 0, sizeof *out);
  if (!buf || size < 3) return fail(err, cap, "the options are empty or truncated");
  uint32_t root_width = buf[size - 1];
  uint8_t packed = buf[size - 2];
  uint64_t offset;
  if (!valid_width(root_width) || size < 2 + (size_t)root_width)
    return fail(err, cap, "the root width %u is invalid", root_width);
  size_t root = size - 2 - root_width;
  if (packed >> 2 != FLEX_MAP)
    return fail(err, cap, "the root is not a map (type %u)", packed >> 2);
  out->buf = buf;
  out->size = size;
  out->width = 1u << (packed & 3);
  if (!read_uint(buf, size, root, root_width, &offset) || offset == 0 ||
      !back(root, offset, &out->values))
    return fail(err, cap, "the root map's offset points outside the options");
  return open_keys(out, err, cap);
}

/* Key i as a NUL-terminated string inside the buffer, or NULL. */
static const char *key_at(const tfl_flex_map_t *m, uint32_t i) {
  size_t at = m->keys + (size_t)i * m->key_width, pos;
  uint64_t off;
  if (!read_uint(m->buf, m->size, at, m->key_width, &off) || !back(at, off, &pos) ||
      pos >= m->size || !memchr(m->buf + pos, 0, m->size - pos))
    return NULL;
  return (const char *)m->buf + pos;
}

/* A `width`-byte int, uint or float at `pos` as a double. */
static int read_scalar(const tfl_flex_map_t *m, size_t pos, uint32_t width, int type,
                       double *out) {
  uint64_t v;
  if (!read_uint(m->buf, m->size, pos, width, &v)) return 0;
  if (type == FLEX_FLOAT) {
    if (width == 4) {
      float f;
      uint32_t u = (uint32_t)v;
      memcpy(&f, &u, 4);
      *out = f;
    } else if (width == 8) {
      memcpy(out, &v, 8);
    } else {
      return 0;
    }
  } else if (type == FLEX_INT && width < 8 && (v >> (8 * width - 1)) & 1) {
    *out = (double)(int64_t)(v | ~(uint64_t)0 << (8 * width)); /* sign-extend */
  } else {
    *out = type == FLEX_INT ? (double)(int64_t)v : (double)v;
  }
  return 1;
}

/* Value i of the map: inline scalars are one map value wide; indirect
 * ones sit at an offset back, as wide as their packed type says. */
static int value_at(const tfl_flex_map_t *m, uint32_t i, const char *key, double *out,
                    char *err, size_t cap) {
  uint8_t packed = m->buf[m->values + (size_t)m->count * m->width + i];
  int type = packed >> 2;
  uint32_t own = 1u << (packed & 3);
  size_t pos = m->values + (size_t)i * m->width, target;
  uint64_t off;
  switch (type) {
    case FLEX_NULL: return 0;
    case FLEX_INT: case FLEX_UINT: case FLEX_FLOAT: case FLEX_BOOL:
      if (read_scalar(m, pos, m->width, type == FLEX_BOOL ? FLEX_UINT : type, out)) {
        if (type == FLEX_BOOL) *out = *out != 0;
        return 1;
      }
      break;
    case FLEX_INDIRECT_INT: case FLEX_INDIRECT_UINT: case FLEX_INDIRECT_FLOAT:
      if (read_uint(m->buf, m->size, pos, m->width, &off) && back(pos, off, &target) &&
          read_scalar(m, target, own, type - (FLEX_INDIRECT_INT - FLEX_INT), out))
        return 1;
      break;
    default:
      fail(err, cap, "option '%s' is not a number (FlexBuffer type %d)", key, type);
      return -1;
  }
  fail(err, cap, "option '%s' has a malformed value", key);
  return -1;
}

int tfl_flex_number(const tfl_flex_map_t *m, const char *key, double *out, char *err,
                    size_t cap) {
  for (uint32_t i = 0; i < m->count; ++i) {
    const char *k = key_at(m, i);
    if (!k) {
      fail(err, cap, "key %u of the options map lies outside the options", i);
      return -1;
    }
    if (strcmp(k, key) == 0) return value_at(m, i, key, out, err, cap);
  }
  return 0;
}
