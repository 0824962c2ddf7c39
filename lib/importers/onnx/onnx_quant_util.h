/* Quantised convolutions and matrix products on the int8 microkernels
 * (onnx_ops_qconv.c), shared by QLinearConv / QLinearMatMul / QGemm and the
 * QDQ patterns (onnx_ops_qdq.c).  Internal to the ONNX importer. */
#ifndef TINYML_IMPORTERS_ONNX_QUANT_UTIL_H
#define TINYML_IMPORTERS_ONNX_QUANT_UTIL_H

#include "onnx_lower.h"

/* Everything an int8 kernel call needs, all known at compile time but the
 * input tensor.  Scales and zero points are those of the ONNX model (uint8
 * values as 0..255); per-channel arrays hold `w_count` entries (1 or the
 * output channels). */
typedef struct onnx_qconv {
  onnx_value_t *x;            /* run-time INT8 or UINT8 input */
  float x_scale, y_scale;
  int32_t x_zp, y_zp, y_dtype;
  const onnx_value_t *w;      /* constant INT8 or UINT8 weights */
  const float *w_scale;       /* w_count scales */
  const onnx_value_t *w_zp;   /* constant, 1 or per-channel; NULL for 0 */
  int64_t w_count;
  const int32_t *bias;        /* output-channel INT32 bias, or NULL */
  int32_t act_lo, act_hi;     /* a fused clamp, in the output's values */
  int transpose_w;            /* matmul: weights are [N, K] (Gemm transB) */
} onnx_qconv_t;

/* The node c->node's convolution (its window attributes) on the int8
 * kernel: 1 with *out bound to the quantised NCHW result (carried as i8),
 * 0 (no error) when this form does not apply and the caller computes it
 * another way, 0 with c->error set on failure. */
int onnx_qconv_s8(onnx_ctx_t *c, const onnx_qconv_t *q, te_value_t *out);
/* x [.., K] times constant weights [K, N] ([N, K] with transpose_w) on the
 * int8 kernel, as a 1x1 convolution over the rows; returns as above. */
int onnx_qmatmul_s8(onnx_ctx_t *c, const onnx_qconv_t *q, te_value_t *out);

/* Element i of a constant tensor as float / int; 0 if not readable. */
int onnx_qval_float(const onnx_value_t *v, int64_t i, float *out);
int onnx_qval_int(const onnx_value_t *v, int64_t i, int32_t *out);
/* 1 when input i, a zero point, is absent or of `want`, the dtype of the
 * tensor it quantises; else 0 with a refusal naming the input (read as
 * another type, an INT32 zero point would be silently truncated). */
int onnx_zero_point_ok(onnx_ctx_t *c, uint32_t i, int32_t want);

/* QuantizeLinear (c->node) of a DequantizeLinear -> Conv/MatMul/Gemm
 * [-> Relu/Clip] chain, computed on the int8 kernel: 1 with output 0
 * bound, 0 when the chain does not match exactly (onnx_ops_qdq.c). */
int onnx_qdq_fuse(onnx_ctx_t *c);

#endif
