#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"

void strbuf_init(strbuf_t *sb, const tinyml_allocator_t *allocator) {
  memset(sb, 0, sizeof(*sb));
  sb->allocator = allocator;
}

void strbuf_free(strbuf_t *sb) {
  tinyml__free(sb->allocator, sb->data);
  sb->data = NULL;
  sb->length = sb->capacity = 0;
}

/* Makes room for `extra` more bytes plus the terminator. */
static int reserve(strbuf_t *sb, size_t extra) {
  if (sb->oom) return 0;
  if (sb->length + extra + 1 <= sb->capacity) return 1;
  size_t cap = sb->capacity ? sb->capacity : 4096;
  while (cap < sb->length + extra + 1) {
    if (cap > SIZE_MAX / 2) { sb->oom = 1; return 0; }
    cap *= 2;
  }
  char *p = tinyml__alloc(sb->allocator, cap, 1);
  if (!p) { sb->oom = 1; return 0; }
  if (sb->length) memcpy(p, sb->data, sb->length);
  p[sb->length] = '\0';
  tinyml__free(sb->allocator, sb->data);
  sb->data = p;
  sb->capacity = cap;
  return 1;
}

void strbuf_append(strbuf_t *sb, const char *text) {
  size_t n = strlen(text);
  if (!reserve(sb, n)) return;
  memcpy(sb->data + sb->length, text, n + 1);
  sb->length += n;
}

void strbuf_printf(strbuf_t *sb, const char *fmt, ...) {
  char small[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) { sb->oom = 1; return; }
  if ((size_t)n < sizeof small) { strbuf_append(sb, small); return; }
  if (!reserve(sb, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(sb->data + sb->length, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb->length += (size_t)n;
}

void strbuf_hex(strbuf_t *sb, const void *bytes, size_t size) {
  static const char digits[] = "0123456789ABCDEF";
  if (size > (SIZE_MAX - 1) / 2 || !reserve(sb, 2 * size)) return;
  const uint8_t *p = bytes;
  char *out = sb->data + sb->length;
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  sb->length += 2 * size;
  sb->data[sb->length] = '\0';
}

void strbuf_mlir_string(strbuf_t *sb, const char *text) {
  strbuf_append(sb, "\"");
  for (const unsigned char *s = (const unsigned char *)text; *s; ++s) {
    if (*s < 0x20 || *s >= 0x7f || *s == '"' || *s == '\\') strbuf_printf(sb, "\\%02X", *s);
    else strbuf_printf(sb, "%c", *s);
  }
  strbuf_append(sb, "\"");
}

char *strbuf_take(strbuf_t *sb, size_t *length) {
  if (sb->oom || !reserve(sb, 0)) {
    strbuf_free(sb);
    return NULL;
  }
  char *p = sb->data;
  if (length) *length = sb->length;
  sb->data = NULL;
  sb->length = sb->capacity = 0;
  return p;
}
