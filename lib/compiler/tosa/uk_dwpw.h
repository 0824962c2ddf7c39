/* Depthwise convs into the 1x1 conv kernel that reads them (and the 1x1
 * expansion before them), after the residual fusion. */
#ifndef TINYML_COMPILER_TOSA_UK_DWPW_H
#define TINYML_COMPILER_TOSA_UK_DWPW_H

#include "ukernel_op.h"

/* Images of fewer rows keep their expansion apart: a band recomputes the
 * rows above it that the band before had (codegen/ukernel_lower.c gives
 * these kernels bands of at least half as many rows). */
#define TC_PWDWPW_ROWS 28

/* Moves each f32 depthwise conv into the 1x1 conv kernel that reads it,
 * and on images of TC_PWDWPW_ROWS rows or more the 1x1 expansion before
 * it too; returns how many. */
unsigned tc_ukernels_fuse_dwpw(const tc_uk_pass_t *pass, MlirModule m);

#endif
