/* Arithmetic on the data that cannot crash the process (guards.c). */
#ifndef TINYML_COMPILER_LINALG_GUARDS_H
#define TINYML_COMPILER_LINALG_GUARDS_H

#include <mlir-c/IR.h>

#include "tinyml.h"

/* Gives every scalar signed or unsigned integer division and remainder in
 * `m` (Linalg on tensors, after TOSA lowering) a divisor of 1 where the
 * one it has would trap: 0, and -1 under the type's minimum dividend.  x86
 * raises SIGFPE for both, which would end the caller's process; TOSA
 * leaves both results unpredictable, and every other quotient keeps its
 * value. */
tinyml_status_t tc_guard_divisions(MlirModule m, const tinyml_allocator_t *a);

/* Clamps every index that tensor.extract or tensor.insert in `m` takes from
 * the data (an integer cast to index: run-time gathers, as TOSA lowers
 * tosa.gather) into its dimension's extent, so that an out-of-range index
 * in a model's input reads or writes the nearest element instead of
 * memory outside the tensor.  TOSA leaves such an index's result
 * unpredictable (ERROR_IF); ONNX and TFLite call it an error, which an
 * invoke has no way to report. */
tinyml_status_t tc_guard_indices(MlirModule m, const tinyml_allocator_t *a);

#endif
