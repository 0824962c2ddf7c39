/* Microkernel selection, on TOSA right after import: the chains the
 * target's kernels compute become single "tinyml.uk" ops (ukernel_op.h). */
#ifndef TINYML_COMPILER_TOSA_UK_SELECT_H
#define TINYML_COMPILER_TOSA_UK_SELECT_H

#include <mlir-c/IR.h>

#include "../target/target.h"

/* Rewrites every matching chain in `m` into TC_UKERNEL_OP for the
 * target's microkernels (it must have some); *out_count gets how many
 * (out_count may be NULL).  `winograd`: whether f32 convs may take
 * Winograd (uk_wino.h). */
tinyml_status_t tc_ukernels_select(MlirContext ctx, MlirModule m, const tc_target_t *target,
                                   int winograd, const tinyml_allocator_t *a,
                                   unsigned *out_count);

#endif
