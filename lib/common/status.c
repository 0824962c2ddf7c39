#include "status.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"

struct tinyml_status_s {
  tinyml_status_code_t code;
  int is_static; /* a fallback that must never be freed */
  tinyml_allocator_t allocator;
  char message[];
};

/* Returned when the message itself cannot be allocated, so even an
 * out-of-memory path reports its code.  Read-only: not global state. */
#define FALLBACK(c, m) {.code = (c), .is_static = 1, .allocator = {0}, .message = m}
static const struct {
  tinyml_status_code_t code;
  int is_static;
  tinyml_allocator_t allocator;
  char message[64];
} fallbacks[] = {
    FALLBACK(TINYML_STATUS_OK, "OK"),
    FALLBACK(TINYML_STATUS_INVALID_ARGUMENT, "invalid argument (out of memory for the message)"),
    FALLBACK(TINYML_STATUS_OUT_OF_MEMORY, "out of memory"),
    FALLBACK(TINYML_STATUS_INVALID_MODULE, "invalid module (out of memory for the message)"),
    FALLBACK(TINYML_STATUS_INVALID_MODEL, "invalid model (out of memory for the message)"),
    FALLBACK(TINYML_STATUS_UNSUPPORTED, "unsupported (out of memory for the message)"),
    FALLBACK(TINYML_STATUS_SIZE_MISMATCH, "size mismatch (out of memory for the message)"),
    FALLBACK(TINYML_STATUS_FAILED_PRECONDITION, "failed precondition (out of memory for the message)"),
    FALLBACK(TINYML_STATUS_IO_ERROR, "I/O error (out of memory for the message)"),
    FALLBACK(TINYML_STATUS_INTERNAL, "internal error (out of memory for the message)"),
};

static tinyml_status_t fallback(tinyml_status_code_t code) {
  size_t i = (size_t)code;
  if (i >= sizeof(fallbacks) / sizeof(fallbacks[0])) i = TINYML_STATUS_INTERNAL;
  return (tinyml_status_t)(void *)&fallbacks[i];
}

/* A status for a message of `n` characters (written by the caller), or NULL
 * when there is no memory for it. */
static struct tinyml_status_s *status_new(const tinyml_allocator_t *allocator,
                                          tinyml_status_code_t code, size_t n) {
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  struct tinyml_status_s *s =
      tinyml__alloc(&a, sizeof(*s) + n + 1, _Alignof(struct tinyml_status_s));
  if (!s) return NULL;
  s->code = code;
  s->is_static = 0;
  s->allocator = a;
  s->message[n] = 0;
  return s;
}

#if TINYML_STATUS_VALUES
tinyml_status_t tinyml__status_makev(const tinyml_allocator_t *allocator,
                                     tinyml_status_code_t code, const char *fmt,
                                     va_list args) {
  if (code == TINYML_STATUS_OK) return TINYML_OK;
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  struct tinyml_status_s *s = n < 0 ? NULL : status_new(allocator, code, (size_t)n);
  if (!s) return fallback(code);
  vsnprintf(s->message, (size_t)n + 1, fmt, args);
  return s;
}
#else
/* Messages without their values (see status.h), for every caller, except
 * a leading "%s": the API's messages name the function that failed so. */
tinyml_status_t tinyml__status_makev(const tinyml_allocator_t *allocator,
                                     tinyml_status_code_t code, const char *fmt,
                                     va_list args) {
  if (fmt[0] == '%' && fmt[1] == 's')
    return tinyml__status_text(allocator, code, va_arg(args, const char *), fmt + 2);
  return tinyml__status_plain(allocator, code, fmt);
}
#endif

/* Writes `fmt` to `out` with each run of conversions shown as one '?' and
 * "%%" as '%'; returns the length, at most strlen(fmt). */
static size_t without_values(const char *fmt, char *out) {
  size_t n = 0;
  int after_value = 0; /* the last character written stands for a value */
  for (const char *p = fmt; *p; p++) {
    char c = *p;
    int value = 0;
    if (c == '%' && p[1] == '%') {
      p++;
    } else if (c == '%') {
      while (p[1] && strchr("-+ #0123456789.hlLjzt", p[1])) p++; /* flags..length */
      if (p[1]) p++;                                               /* conversion */
      if (after_value) continue;
      c = '?';
      value = 1;
    }
    after_value = value;
    out[n] = c;
    n++;
  }
  return n;
}

tinyml_status_t tinyml__status_text(const tinyml_allocator_t *allocator,
                                    tinyml_status_code_t code, const char *prefix,
                                    const char *fmt) {
  if (code == TINYML_STATUS_OK) return TINYML_OK;
  size_t head = strlen(prefix);
  /* Room for fmt as it is, which the text never exceeds: one pass over
   * it instead of one to measure and one to write. */
  struct tinyml_status_s *s = status_new(allocator, code, head + strlen(fmt));
  if (!s) return fallback(code);
  memcpy(s->message, prefix, head);
  s->message[head + without_values(fmt, s->message + head)] = 0;
  return s;
}

tinyml_status_t tinyml__status_plain(const tinyml_allocator_t *allocator,
                                     tinyml_status_code_t code, const char *fmt) {
  return tinyml__status_text(allocator, code, "", fmt);
}

tinyml_status_t tinyml__status_make(const tinyml_allocator_t *allocator,
                                    tinyml_status_code_t code, const char *fmt,
                                    ...) {
  va_list args;
  va_start(args, fmt);
  tinyml_status_t s = tinyml__status_makev(allocator, code, fmt, args);
  va_end(args);
  return s;
}

tinyml_status_t tinyml__status_annotate(tinyml_status_t status, const char *fmt,
                                        ...) {
  if (!status || status->is_static) return status;
  char prefix[256];
  va_list args;
  va_start(args, fmt);
  vsnprintf(prefix, sizeof(prefix), fmt, args);
  va_end(args);
  tinyml_status_t s = tinyml__status_make(&status->allocator, status->code,
                                          "%s: %s", prefix, status->message);
  if (s->is_static) return status; /* keep the more specific message */
  tinyml_status_free(status);
  return s;
}

tinyml_status_code_t tinyml_status_code(tinyml_status_t status) {
  return status ? status->code : TINYML_STATUS_OK;
}

const char *tinyml_status_message(tinyml_status_t status) {
  return status ? status->message : "OK";
}

const char *tinyml_status_code_name(tinyml_status_code_t code) {
  switch (code) {
    case TINYML_STATUS_OK: return "OK";
    case TINYML_STATUS_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case TINYML_STATUS_OUT_OF_MEMORY: return "OUT_OF_MEMORY";
    case TINYML_STATUS_INVALID_MODULE: return "INVALID_MODULE";
    case TINYML_STATUS_INVALID_MODEL: return "INVALID_MODEL";
    case TINYML_STATUS_UNSUPPORTED: return "UNSUPPORTED";
    case TINYML_STATUS_SIZE_MISMATCH: return "SIZE_MISMATCH";
    case TINYML_STATUS_FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case TINYML_STATUS_IO_ERROR: return "IO_ERROR";
    case TINYML_STATUS_INTERNAL: return "INTERNAL";
  }
  return "UNKNOWN";
}

void tinyml_status_free(tinyml_status_t status) {
  if (!status || status->is_static) return;
  tinyml_allocator_t a = status->allocator;
  tinyml__free(&a, status);
}
