/* Internal to the ONNX importer: graph inputs whose value the model's
 * declared shapes decide (onnx_derive.c).  Such an input is PINNED: it
 * stays in the signature, the lowerings read its value as a constant, and
 * its argument carries `tinyml.fixed_value` so the runtime can refuse any
 * other bytes. */
#ifndef TINYML_IMPORTERS_ONNX_DERIVE_H
#define TINYML_IMPORTERS_ONNX_DERIVE_H

#include "onnx_lower.h"

/* For input i (value v) of the node being lowered: when v is a graph
 * input and the node's op has a rule that reads the value off the
 * declared static shape of its output, pins v to it (with a note) or, if
 * v is already bound or pinned, checks that the two agree.  0 with an
 * error recorded on a contradiction; 1 otherwise (also when no rule
 * applies: the caller's refusal keeps its bind hint). */
int onnx_derive_input(onnx_ctx_t *c, uint32_t i, onnx_value_t *v);
/* Pins graph input v, whose shape has a zero dimension, to its only
 * value: no elements.  0 with an error recorded (out of memory). */
int onnx_pin_empty(onnx_ctx_t *c, onnx_value_t *v);
/* Whether graph input `name` was pinned (by a derivation or as empty). */
int onnx_is_pinned(const onnx_ctx_t *c, const char *name);

#endif
