/* Matching an int8 microkernel chain on TOSA. */
#ifndef TINYML_COMPILER_TOSA_UK_MATCH_S8_H
#define TINYML_COMPILER_TOSA_UK_MATCH_S8_H

#include "uk_chain.h"

/* Whether c->conv starts an int8 chain the kernels compute exactly: a
 * conv2d, depthwise_conv2d (multiplier 1; one input channel with any
 * multiplier is an ordinary conv) or matmul with constant weights (a
 * fully-connected layer, run as a 1x1 conv), weight zero point 0, whose
 * int32 result only feeds a per-channel tosa.rescale to int8 (scale32,
 * double rounding, shifts 2..62), optionally then a clamp.  Fills c. */
int tc_uk_match_s8(tc_uk_chain_t *c);

#endif
