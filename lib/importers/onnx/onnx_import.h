/* ONNX → TOSA.  Parses a ModelProto with protobuf-c (code generated at build
 * time from Debian's onnx.proto) and writes the equivalent TOSA MLIR text.
 * Static shapes only: the caller binds dynamic input dimensions
 * (onnx_import_bound), and shapes follow from them; initializers become
 * constants; each node is lowered
 * by an entry of the per-family tables in onnx_lower.h, which also say
 * which default-domain opsets they implement: a node at another opset, or
 * in another domain, is refused rather than guessed.  Knows nothing of
 * targets. */
#ifndef TINYML_IMPORTERS_ONNX_IMPORT_H
#define TINYML_IMPORTERS_ONNX_IMPORT_H

#include <stddef.h>

#include "tinyml.h"
#include "../common/import_limits.h"
#include "../common/import_bindings.h"

/* Cheap check of the first bytes: a ModelProto starts with field 1
 * (ir_version, varint) or another low-numbered field.  A match only means
 * "try to parse as ONNX". */
int onnx_looks_like(const void *bytes, size_t size);

/* As tfl_import: *text (NUL-terminated, allocated with `allocator`) on
 * success; a status naming the node, op type and reason otherwise. */
tinyml_status_t onnx_import(const void *bytes, size_t size,
                            const tinyml_allocator_t *allocator, char **text,
                            size_t *length);

/* onnx_import with the caller's limits (NULL or 0 fields: the defaults):
 * the node count, each initializer and attribute tensor, the constants
 * together, and each node output, each checked before it is copied or
 * emitted.  UNSUPPORTED, naming the node or tensor and the limit. */
tinyml_status_t onnx_import_limited(const void *bytes, size_t size, const te_limits_t *limits,
                                    const tinyml_allocator_t *allocator, char **text,
                                    size_t *length);

/* onnx_import_limited with the dynamic dimensions of the inputs bound by
 * `bindings` (NULL: none; see tinyml_compile_options_t.dims): an unbound
 * first dimension is compiled as 1, with a note; any other unbound one is
 * refused, naming each and the inputs that use it. */
tinyml_status_t onnx_import_bound(const void *bytes, size_t size, const te_limits_t *limits,
                                  const te_bindings_t *bindings,
                                  const tinyml_allocator_t *allocator, char **text,
                                  size_t *length);

#endif
