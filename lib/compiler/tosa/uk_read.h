/* Reading the TOSA a microkernel chain is made of: constants, static
 * shapes small enough for the kernels' int32 parameters, and conv
 * windows.  Shared by the int8 and f32 matching and the packing. */
#ifndef TINYML_COMPILER_TOSA_UK_READ_H
#define TINYML_COMPILER_TOSA_UK_READ_H

#include <mlir-c/IR.h>
#include <stdint.h>

#include "../../ukernels/uk_abi.h"
#include "../mlir_util.h"

/* The dense elements of the tosa.const that `v` is (through reshapes,
 * which keep element order); null otherwise. */
MlirAttribute tc_uk_const_attr(MlirValue v);

/* Whether `v` is a static tensor of `bits`-bit integers (or f32) whose
 * every size fits the kernels' int32 parameters. */
int tc_uk_elem_is(MlirValue v, unsigned bits);
int tc_uk_is_f32(MlirValue v);

int64_t tc_uk_dim(MlirValue v, intptr_t i);
intptr_t tc_uk_rank(MlirValue v);
int64_t tc_uk_numel(MlirAttribute a);

/* A constant scalar of `bits`-bit integers (any element count, all read as
 * element 0). */
int tc_uk_const_int(MlirValue v, unsigned bits, int64_t *out);

/* Element i of a constant f32 attribute (element 0 of a splat). */
float tc_uk_f32_at(MlirAttribute a, int64_t i);

/* The NHWC shapes and the window (pad, stride, dilation) of a conv or
 * depthwise conv `op` (input x, weights w, result y) into *p, for either
 * element type; 0 when an attribute is missing or the window is
 * degenerate. */
int tc_uk_read_window(tinyml_uk_params_t *p, MlirOperation op, MlirValue x, MlirValue w,
                      MlirValue y, int depthwise);

/* The tensor a conv's input `x` was sliced from, when the slice starts at
 * the origin, keeps batch and channels, and `conv` has no bottom or right
 * padding: its windows never reach the cut rows and columns, so the kernel
 * may read the whole tensor (its row pitch comes from iw).  Else x. */
MlirValue tc_uk_unsliced(MlirValue x, MlirOperation conv);

#endif
