/* Matching an f32 microkernel chain on TOSA. */
#ifndef TINYML_COMPILER_TOSA_UK_MATCH_F32_H
#define TINYML_COMPILER_TOSA_UK_MATCH_F32_H

#include "uk_chain.h"

/* Whether c->conv starts an f32 chain: a conv2d, depthwise_conv2d or
 * matmul with constant weights and zero points 0; the per-channel
 * multiply, add and clamp after it join c->epi.  Fills c. */
int tc_uk_match_f32(tc_uk_chain_t *c);

#endif
