/* The Winograd f32 conv (wino_f32.c), which tinyml_uk_conv_f32
 * (conv_f32.c) runs for a blob whose wino_tiles is set. */
#ifndef TINYML_BACKENDS_X86_WINO_F32_H
#define TINYML_BACKENDS_X86_WINO_F32_H

#include "ukernels_common.h"

/* Workgroup wg's band of a Winograd conv (uk_abi.h); `scratch` is its
 * part of the scratch argument. */
void wino_f32(const ukf_ctx_t *c, const float *in, float *out, float *scratch, int32_t wg,
              int32_t count);

#endif
