/* Two f32 conv kernels of one input into the channel concat that joins
 * them (SqueezeNet's fire modules). */
#ifndef TINYML_COMPILER_TOSA_UK_CONCAT_H
#define TINYML_COMPILER_TOSA_UK_CONCAT_H

#include "ukernel_op.h"

/* Returns how many concats became one convcat_f32 kernel. */
unsigned tc_ukernels_fuse_concat(const tc_uk_pass_t *pass, MlirModule m);

#endif
