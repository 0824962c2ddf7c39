/* Winograd F(2x2, 3x3) and F(4x4, 3x3) for an f32 conv kernel: when a conv
 * takes which, and the filter transform. */
#ifndef TINYML_COMPILER_TOSA_UK_WINO_H
#define TINYML_COMPILER_TOSA_UK_WINO_H

#include <stdint.h>

#include "../../ukernels/uk_abi.h"
#include "../backend.h"

/* The blob's wino_m for conv `p` under the backend's tuning (0: the direct
 * sum), then, for that wino_m, its wino_tiles and the scratch it needs,
 * and the filter transform of one 3x3 kernel (row-major) into its
 * (m + 2)^2 positions, row-major. */
int32_t tc_wino_m(const tc_wino_tuning_t *t, const tinyml_uk_params_t *p);
int32_t tc_wino_tiles(const tc_wino_tuning_t *t, const tinyml_uk_params_t *p);
int64_t tc_wino_scratch(const tinyml_uk_params_t *p);
void tc_wino_filter(const float g[9], int32_t m, float *u);

#endif
