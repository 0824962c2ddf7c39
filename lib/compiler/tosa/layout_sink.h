/* Moves layout transposes below the TOSA ops that work in any layout, so
 * that transposes to and from NHWC meet and cancel (layout_sink.c). */
#ifndef TINYML_COMPILER_TOSA_LAYOUT_SINK_H
#define TINYML_COMPILER_TOSA_LAYOUT_SINK_H

#include <mlir-c/IR.h>

#include "../mlir_util.h"

/* Rewrites every function of `m` in place; returns how many ops moved.
 * Leaves dead transposes and constants for the canonicaliser. */
unsigned tc_layout_sink(MlirModule m);

#endif
