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

#define TINYML_RETURN_IF_ERROR(expr)                                           \
  do {                                                                         \
    tinyml_status_t tinyml__st = (expr);                                       \
    if (tinyml__st) return tinyml__st;                                         \
  } while (0)

#endif
