/* Residual adds into f32 conv kernels, after the layout sink. */
#ifndef TINYML_COMPILER_TOSA_UK_RESIDUAL_H
#define TINYML_COMPILER_TOSA_UK_RESIDUAL_H

#include "ukernel_op.h"

/* Moves a residual add (and the clamp after it) into the f32 conv kernel
 * that feeds it; returns how many. */
unsigned tc_ukernels_fuse_residual(const tc_uk_pass_t *pass, MlirModule m);

#endif
