/* Internal to the ONNX importer: the graph inputs' shapes, with their
 * dynamic dimensions bound (onnx_inputs.c). */
#ifndef TINYML_IMPORTERS_ONNX_INPUTS_H
#define TINYML_IMPORTERS_ONNX_INPUTS_H

#include "onnx_lower.h"

/* Checks c->bindings against the graph's inputs (INVALID_ARGUMENT for a
 * binding that names nothing or contradicts the model), fails listing
 * every dynamic dimension left unbound, and sends the note for those
 * compiled as 1. */
tinyml_status_t onnx_check_input_dims(onnx_ctx_t *c, const Onnx__GraphProto *g);
/* The shape input `vi` is compiled with. */
tinyml_status_t onnx_input_dims(onnx_ctx_t *c, const Onnx__GraphProto *g,
                                const Onnx__ValueInfoProto *vi, uint32_t *rank, int64_t *dims);

#endif
