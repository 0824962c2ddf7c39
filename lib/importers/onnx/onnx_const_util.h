/* Constant tensors built on the host, shared by lowerings of several
 * families.  Internal to the ONNX importer. */
#ifndef TINYML_IMPORTERS_ONNX_CONST_UTIL_H
#define TINYML_IMPORTERS_ONNX_CONST_UTIL_H

#include <stdint.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_lower.h"

/* The integers 0, 1, .. numel - 1 in row-major order as a constant of
 * `elem` (TE_I32 or TE_I64) and shape `dims`, to compare run-time indices
 * against.  Id 0 with an error recorded for another element type, a count
 * an i32 cannot hold, or out of memory. */
static inline te_value_t onnx_iota_const(onnx_ctx_t *c, te_elem_t elem, uint32_t rank,
                                         const int64_t *dims) {
  int64_t n = onnx_numel(rank, dims);
  if ((elem != TE_I32 && elem != TE_I64) || n < 0 || (elem == TE_I32 && n > INT32_MAX)) {
    onnx_fail(c, "an index range of %lld elements has no integer constant form", (long long)n);
    return (te_value_t){0};
  }
  size_t es = elem == TE_I64 ? 8 : 4;
  uint8_t *buf = tinyml__calloc(c->allocator, (size_t)n + 1, es, 8);
  if (!buf) {
    onnx_oom(c);
    return (te_value_t){0};
  }
  for (int64_t k = 0; k < n; ++k) {
    int32_t k32 = (int32_t)k;
    memcpy(buf + (size_t)k * es, es == 8 ? (const void *)&k : (const void *)&k32, es);
  }
  te_type_t t = te_type(elem, rank, dims);
  te_value_t v = te_const(&c->e, &t, buf);
  tinyml__free(c->allocator, buf);
  return v;
}

#endif
