/* What the pre- and post-processing stages share for their messages
 * (prepost_internal.h). */
#include <stdarg.h>
#include <stdio.h>

#include "prepost_internal.h"

int pp_fail(pp_t *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->error, sizeof(p->error), fmt, ap);
  va_end(ap);
  return 1;
}

const char *pp_dtype_name(const pp_port_t *port) {
  switch (port->type.elem) {
    case TE_F32: return "float32";
    case TE_I8: return port->is_unsigned ? "uint8" : "int8";
    case TE_I16: return "int16";
    case TE_I32: return "int32";
    default: return "unsupported";
  }
}

void pp_dims_text(const te_type_t *t, char *out, size_t cap) {
  size_t n = (size_t)snprintf(out, cap, "[");
  for (uint32_t i = 0; i < t->rank && n < cap; ++i)
    n += (size_t)snprintf(out + n, cap - n, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
  if (n < cap) snprintf(out + n, cap - n, "]");
}
