/* TFLite → TOSA.  Reads a .tflite FlatBuffer (verified, see tflite_reader.h)
 * and writes the equivalent TOSA MLIR text with TFLite's numerics: int8/uint8
 * rescales use TFLite's fixed-point multipliers with double rounding, and
 * ADD, AVERAGE_POOL_2D, SOFTMAX and MEAN round the way TFLite's reference
 * kernels do.  Knows nothing of targets.
 *
 * Inputs and outputs keep their TFLite names (`tinyml.name`) and carry their
 * quantisation (`tinyml.scale`, `tinyml.zero_point`, `tinyml.quant_axis`).
 *
 * Model state: each variable tensor a live operator reads (LSTM output and
 * cell state, ...), in order of first use, is one more argument after the
 * inputs, {tinyml.name, tinyml.state, tinyml.state_fill = B : i64}, and one
 * more result after the outputs, {tinyml.name, tinyml.state}, returning the
 * state's value after its last update (the argument if none).  B is the
 * byte TFLite Micro resets every byte of the state to: an int8 tensor's
 * zero point, else 0.  States have no quantisation attributes.  Resource
 * variables (tfl_variables.h) follow as more states, named by shared_name,
 * whose argument carries `tinyml.state_init = dense<...>` (the CALL_ONCE
 * initialiser's constant) or the fill byte. */
#ifndef TINYML_IMPORTERS_TFLITE_IMPORT_H
#define TINYML_IMPORTERS_TFLITE_IMPORT_H

#include <stddef.h>

#include "tinyml.h"
#include "../common/import_limits.h"

/* On success *text is a NUL-terminated string of *length bytes allocated
 * with `allocator`; the caller frees it with tinyml__free.  On failure *text
 * is NULL and the status names the problem; an unsupported operator names
 * its builtin name, its operator index and the reason, e.g.
 * "tflite: operator 3 (LSTM): not supported". */
tinyml_status_t tfl_import(const void *bytes, size_t size,
                           const tinyml_allocator_t *allocator, char **text,
                           size_t *length);

/* tfl_import with the caller's limits (NULL or 0 fields: the defaults).
 * They are checked on the verified model, before any constant is copied
 * or any op emitted: UNSUPPORTED naming the tensor (and the operator
 * that makes it) or the operator count, and the limit. */
tinyml_status_t tfl_import_limited(const void *bytes, size_t size, const te_limits_t *limits,
                                   const tinyml_allocator_t *allocator, char **text,
                                   size_t *length);

#endif
