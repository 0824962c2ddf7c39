/* Internal status helpers shared by every layer.  Nothing here is public. */
#ifndef TINYML_COMMON_STATUS_H
#define TINYML_COMMON_STATUS_H

#include <stdarg.h>

#include "tinyml.h"

/* Makes a status with a printf-style message, allocated with `allocator`
 * (NULL or zeroed = system).  Never fails: when memory runs out it returns a
 * static status that carries the code and a fixed message. */
tinyml_status_t tinyml__status_make(const tinyml_allocator_t *allocator,
                                    tinyml_status_code_t code, const char *fmt,
                                    ...)
    __attribute__((format(printf, 3, 4)));
tinyml_status_t tinyml__status_makev(const tinyml_allocator_t *allocator,
                                     tinyml_status_code_t code, const char *fmt,
                                     va_list args);

/* Prefixes the message of `status` with "context: " (printf-style).  Takes
 * ownership of `status` and returns a status to use in its place. */
tinyml_status_t tinyml__status_annotate(tinyml_status_t status, const char *fmt,
                                        ...)
    __attribute__((format(printf, 2, 3)));

/* ---- message values --------------------------------------------------------
 * Passing a message's values costs code at every check that can fail: about
 * 750 bytes of a Cortex-M4 runtime, mostly in the module reader and the ELF
 * loader (docs/SIZES.md).  So a freestanding build keeps each message's text
 * but not its values, which read as '?' ("elf: e_machine ? is not this
 * host's (?)").  The checks are the same; a hosted build prints the values
 * (for the module reader's checks, tinyml-run --info does so for the same
 * module on the host).  Define TINYML_STATUS_VALUES=1 to keep them anyway. */
#ifndef TINYML_STATUS_VALUES
#if TINYML_FREESTANDING
#define TINYML_STATUS_VALUES 0
#else
#define TINYML_STATUS_VALUES 1
#endif
#endif

/* A status whose message is `prefix` followed by `fmt` with its
 * printf conversions shown as '?' (a run of them as one).  Never fails, like
 * tinyml__status_make. */
tinyml_status_t tinyml__status_text(const tinyml_allocator_t *allocator,
                                    tinyml_status_code_t code, const char *prefix,
                                    const char *fmt);
/* tinyml__status_text with no prefix: the one "" is here, so a caller's
 * object carries no string of its own for it. */
tinyml_status_t tinyml__status_plain(const tinyml_allocator_t *allocator,
                                     tinyml_status_code_t code, const char *fmt);

/* The format of a printf-style argument list.  The arguments are checked
 * against it but not evaluated (inside sizeof: tinyml__format_check is never
 * defined), so they cost no code. */
int tinyml__format_check(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define TINYML_FORMAT_ONLY(...)                                                \
  ((void)sizeof(tinyml__format_check(__VA_ARGS__)), TINYML__FIRST(__VA_ARGS__, 0))
#define TINYML__FIRST(first, ...) first

/* tinyml__status_make and tinyml__status_annotate, without the values when
 * TINYML_STATUS_VALUES is 0 (then the annotation, which only names where the
 * problem is, is left out). */
#if TINYML_STATUS_VALUES
#define TINYML_STATUS_MAKE(allocator, code, ...)                               \
  tinyml__status_make(allocator, code, __VA_ARGS__)
#define TINYML_STATUS_ANNOTATE(status, ...) tinyml__status_annotate(status, __VA_ARGS__)
#else
#define TINYML_STATUS_MAKE(allocator, code, ...)                               \
  tinyml__status_plain(allocator, code, TINYML_FORMAT_ONLY(__VA_ARGS__))
#define TINYML_STATUS_ANNOTATE(status, ...)                                    \
  ((void)TINYML_FORMAT_ONLY(__VA_ARGS__), (status))
#endif

/* TINYML_STATUS_MAKE for a format that begins with "%s" for the name of
 * what failed (the API's messages name their function so): without the
 * values that name is kept, as tinyml__status_makev does at run time, but
 * no argument is passed for the other values. */
#if TINYML_STATUS_VALUES
#define TINYML_STATUS_MAKE_NAMED(allocator, code, ...)                         \
  tinyml__status_make(allocator, code, __VA_ARGS__)
#else
#define TINYML_STATUS_MAKE_NAMED(allocator, code, ...)                         \
  tinyml__status_text(allocator, code, TINYML__SECOND(__VA_ARGS__, 0),         \
                      TINYML_FORMAT_ONLY(__VA_ARGS__) + 2)
#define TINYML__SECOND(first, second, ...) second
#endif

#define TINYML_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    tinyml_status_t tinyml__st = (expr);                                       \
    if (tinyml__st) return tinyml__st;                                         \
  } while (0)

#endif
