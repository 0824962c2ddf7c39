/* The resource limits an importer enforces (tinyml_compile_options_t's
 * max_tensor_bytes, max_constant_bytes and max_ops; docs/SECURITY.md,
 * "Limits (the contract)").  Each importer checks them on what the file
 * claims (shapes, data sizes, counts) before it copies or emits anything
 * of that size, so a model over a limit costs neither memory nor time.
 * Knows nothing of targets.  0 in a field = that field's default. */
#ifndef TINYML_IMPORTERS_COMMON_IMPORT_LIMITS_H
#define TINYML_IMPORTERS_COMMON_IMPORT_LIMITS_H

#include <stdint.h>

#include "tinyml.h"

typedef struct te_limits {
  uint64_t max_tensor_bytes;   /* one tensor: constant, input, output or intermediate */
  uint64_t max_constant_bytes; /* all constants together */
  uint64_t max_ops;            /* operators / nodes */
} te_limits_t;

/* `l` with every 0 (or a NULL `l`) replaced by the default. */
static inline te_limits_t te_limits_resolve(const te_limits_t *l) {
  te_limits_t r = l ? *l : (te_limits_t){0, 0, 0};
  if (!r.max_tensor_bytes) r.max_tensor_bytes = TINYML_DEFAULT_MAX_TENSOR_BYTES;
  if (!r.max_constant_bytes) r.max_constant_bytes = TINYML_DEFAULT_MAX_CONSTANT_BYTES;
  if (!r.max_ops) r.max_ops = TINYML_DEFAULT_MAX_OPS;
  return r;
}

#endif
