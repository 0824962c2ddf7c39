/* f32 max pools as microkernels, and convs fused into them. */
#ifndef TINYML_COMPILER_TOSA_UK_POOL_H
#define TINYML_COMPILER_TOSA_UK_POOL_H

#include "ukernel_op.h"

/* The f32 max pools of `m` that propagate NaN become kind maxpool_f32:
 * called by tc_ukernels_select for backends with the f32 kernels;
 * returns how many it rewrote. */
unsigned tc_ukernels_select_pools(MlirContext ctx, MlirModule m, const tinyml_allocator_t *a);

/* After the other fusions: each f32 conv into the max pool that alone
 * reads its result, on images of TC_PWDWPW_ROWS rows or more; returns how
 * many. */
unsigned tc_ukernels_fuse_pool(const tc_uk_pass_t *pass, MlirModule m);

#endif
