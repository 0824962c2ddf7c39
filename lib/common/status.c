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

tinyml_status_t tinyml__status_makev(const tinyml_allocator_t *allocator,
                                     tinyml_status_code_t code, const char *fmt,
                                     va_list args) {
  if (code == TINYML_STATUS_OK) return TINYML_OK;
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(NULL, 0, fmt, copy);
  va_end(copy);
  if (n < 0) return fallback(code);
  struct tinyml_status_s *s =
      tinyml__alloc(&a, sizeof(*s) + (size_t)n + 1, _Alignof(struct tinyml_status_s));
  if (!s) return fallback(code);
  s->code = code;
  s->is_static = 0;
  s->allocator = a;
  vsnprintf(s->message, (size_t)n + 1, fmt, args);
  return s;
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
