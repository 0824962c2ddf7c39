/*
 * reference.h - naive C versions of the TOSA ops the end-to-end tests use.
 *
 * Written for obviousness, not speed: plain loops, f32 tensors in TOSA
 * layouts, accumulation in double so the reference is more accurate than any
 * f32 kernel it is compared against.  No dependency on libtinyml.
 */
#ifndef TINYML_TESTS_E2E_REFERENCE_H
#define TINYML_TESTS_E2E_REFERENCE_H

#include <stddef.h>

/* The deterministic weights of gen_models.py: weight(i, seed) there. */
void ref_weights(float *dst, size_t count, int seed);

/* Geometry of a 2-D sliding window over an NHWC input. */
typedef struct ref_window {
  int n, h, w, c;        /* input dims */
  int kh, kw;            /* kernel */
  int stride_y, stride_x;
  int pad_top, pad_bottom, pad_left, pad_right;
} ref_window_t;

/* Output height and width of the window (TOSA requires exact tiling). */
int ref_window_out_h(const ref_window_t *g);
int ref_window_out_w(const ref_window_t *g);

/* conv2d: weights OHWI [out_c][kh][kw][c], bias [out_c], output NHWC. */
void ref_conv2d(const ref_window_t *g, const float *in, const float *weights,
                const float *bias, int out_c, float *out);

/* depthwise_conv2d: weights HWCM [kh][kw][c][mult], bias [c * mult], output
 * channel c * mult + m. */
void ref_depthwise_conv2d(const ref_window_t *g, const float *in,
                          const float *weights, const float *bias, int mult,
                          float *out);

/* max_pool2d, or avg_pool2d dividing by the number of non-padding inputs in
 * the window (TOSA 1.0 semantics). */
typedef enum ref_pool { REF_POOL_MAX, REF_POOL_AVG } ref_pool_t;
void ref_pool2d(const ref_window_t *g, ref_pool_t kind, const float *in,
                float *out);

/* Batched matmul: a [batch][m][k] times b [batch][k][n] -> [batch][m][n]. */
void ref_matmul(const float *a, const float *b, int batch, int m, int k, int n,
                float *out);

/* Element-wise binary op with TOSA broadcasting: operands have the same rank
 * and each dimension equals the output's or is 1. */
typedef enum ref_binary { REF_ADD, REF_SUB, REF_MUL } ref_binary_t;
void ref_broadcast_binary(ref_binary_t op, int rank, const int *out_dims,
                          const float *a, const int *a_dims,
                          const float *b, const int *b_dims, float *out);

/* max(x, 0) in place, as tosa.clamp with min 0 and max FLT_MAX. */
void ref_relu(float *x, size_t count);

/* out[i0..] = in[...] with out dim i = in dim perms[i]. */
void ref_transpose(const float *in, int rank, const int *in_dims,
                   const int *perms, float *out);

/* Concatenates `count` inputs along an axis.  `outer` is the product of the
 * dims before the axis, `inner` of those after it, axis_sizes[i] the axis
 * size of input i. */
void ref_concat(const float *const *inputs, const int *axis_sizes, int count,
                int outer, int inner, float *out);

/* Softmax over rows of `cols` contiguous elements. */
void ref_softmax(const float *in, int rows, int cols, float *out);

#endif /* TINYML_TESTS_E2E_REFERENCE_H */
