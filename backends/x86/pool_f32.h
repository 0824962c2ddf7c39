/* The f32 max pool's units: the driver (pool_f32.c, both bitcodes) and
 * the pixel kernels it calls, AVX2 (pool_f32_avx2.c) or AVX-512
 * (pool_f32_avx512.c). */
#ifndef TINYML_BACKENDS_X86_POOL_F32_H
#define TINYML_BACKENDS_X86_POOL_F32_H

#include "ukernels_common.h"
#include "window_rows.h"

/* The lowest float: TOSA's padding value and Linalg's initial maximum. */
#define POOL_LOWEST (-3.40282347e+38f)

/* n pixels xstep floats apart, each the maximum over its taps at x +
 * i * xstep + xo[t] of its ic channels, into dst + i * ic. */
#if UK_ZMM
void ukf_maxpool_avx512(const float *x, int32_t xstep, const int32_t *xo, int32_t taps, int32_t n,
                        int32_t ic, float *dst);
#else
void ukf_maxpool_avx2(const float *x, int32_t xstep, const int32_t *xo, int32_t taps, int32_t n,
                      int32_t ic, float *dst);
#endif

#endif
