/* The f32 depthwise conv's units: the driver (depthwise_f32.c, both
 * bitcodes) and its pixel kernels, AVX2 (depthwise_f32_avx2.c) or
 * AVX-512 (depthwise_f32_avx512.c); and its rows for the kernels that
 * chain it (block_f32.c). */
#ifndef TINYML_BACKENDS_X86_DEPTHWISE_F32_H
#define TINYML_BACKENDS_X86_DEPTHWISE_F32_H

#include "window_rows.h"

/* All channels of np (1 or 2) pixels, np x taps at x + i * xstep + xo[t]
 * and weights + wo[t], into dst + i * ic: the bias, the FMAs in tap order
 * and the epilogue. */
#if defined(__AVX512F__)
void ukf_dw_avx512(const ukf_ctx_t *c, int np, const float *x, int32_t xstep, const int32_t *xo,
                   const int32_t *wo, int32_t taps, float *dst);

/* The same on np pixels, DW_NP_MIN <= np <= DW_NP; rows3: the taps are
 * kernel rows of 3 one pixel (xstep) apart (dw_rows3, depthwise_f32.c). */
enum { DW_NP = 8, DW_NP_MIN = 4 };
void ukf_dw_chunk_avx512(const ukf_ctx_t *c, int np, int rows3, const float *x, int32_t xstep,
                         const int32_t *xo, const int32_t *wo, int32_t taps, float *dst);
/* The same on taps in kernel rows of 3 one pixel apart, with the row's
 * left (el) and/or right (er) border pixel next to the chunk. */
void ukf_dw_edges_avx512(const ukf_ctx_t *c, int np, int el, int er, const float *x,
                         int32_t xstep, const int32_t *xo, const int32_t *wo, int32_t taps,
                         float *dst);
#else
void ukf_dw_avx2(const ukf_ctx_t *c, int np, const float *x, int32_t xstep, const int32_t *xo,
                 const int32_t *wo, int32_t taps, float *dst);
#endif

/* Output row oy of one image, columns [x0, x1), into dst (depthwise_f32.c). */
void dw_row(const ukf_ctx_t *c, const dw_plan_t *pl, const dw_src_t *s, int32_t oy, int32_t x0,
            int32_t x1, float *dst);

/* Output pixels [lo, hi), pixel q's channels at out + (q - lo) * ic. */
void dw_f32(const ukf_ctx_t *c, const float *in, int32_t lo, int32_t hi, float *out);

#endif
