/* Integer divisions that cannot trap (guard_divisions.c). */
#ifndef TINYML_COMPILER_LINALG_GUARD_DIVISIONS_H
#define TINYML_COMPILER_LINALG_GUARD_DIVISIONS_H

#include <mlir-c/IR.h>

#include "tinyml.h"

/* Gives every scalar signed or unsigned integer division and remainder in
 * `m` (Linalg on tensors, after TOSA lowering) a divisor of 1 where the
 * one it has would trap: 0, and -1 under the type's minimum dividend.  x86
 * raises SIGFPE for both, which would end the caller's process; TOSA
 * leaves both results unpredictable, and every other quotient keeps its
 * value. */
tinyml_status_t tc_guard_divisions(MlirModule m, const tinyml_allocator_t *a);

#endif
