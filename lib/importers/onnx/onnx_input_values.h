/* Internal to the ONNX importer: graph inputs bound to values at compile
 * time (onnx_input_values.c). */
#ifndef TINYML_IMPORTERS_ONNX_INPUT_VALUES_H
#define TINYML_IMPORTERS_ONNX_INPUT_VALUES_H

#include <stddef.h>

#include "onnx_lower.h"

/* The caller's value for graph input `name`, or NULL. */
const tinyml_input_value_t *onnx_input_value(const onnx_ctx_t *c, const char *name);
/* INVALID_ARGUMENT for a binding that names no true input of `g`, binds
 * one twice or has no data. */
tinyml_status_t onnx_check_input_values(onnx_ctx_t *c, const Onnx__GraphProto *g);
/* Makes `v` (dtype, rank and dims of input `vi` set) the constant `b`
 * gives; INVALID_ARGUMENT when its type or element count is not the
 * input's, or its text does not read. */
tinyml_status_t onnx_bind_input_value(onnx_ctx_t *c, const Onnx__ValueInfoProto *vi,
                                      const tinyml_input_value_t *b, onnx_value_t *v);
/* For a refusal `reason` that wants a constant where the node's input
 * c->wanted_const derives from graph inputs alone: writes the message
 * naming them and how to bind them into out[cap] and returns 1; else 0. */
int onnx_bind_hint(onnx_ctx_t *c, const char *reason, char *out, size_t cap);

#endif
