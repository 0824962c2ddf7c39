/* The blob of an f32 matmul whose B comes at run time
 * (TINYML_UK_MATMUL_F32, lib/ukernels/uk_abi.h). */
#ifndef TINYML_COMPILER_TOSA_UK_MATMUL_H
#define TINYML_COMPILER_TOSA_UK_MATMUL_H

#include "tinyml.h"
#include "uk_chain.h"

/* The kernel's kind name: tinyml_uk_<this> is its entry point. */
#define TC_UK_MATMUL_F32 "matmul_f32"

/* The blob of matched chain `c` (kind TINYML_UK_MATMUL_F32: header,
 * bias, scale and offset, no weights), as a constant before `before`;
 * null when too large or out of memory. */
MlirValue tc_uk_blob_matmul_f32(MlirContext ctx, tc_uk_chain_t *c, const tinyml_allocator_t *a,
                                MlirOperation before);

#endif
