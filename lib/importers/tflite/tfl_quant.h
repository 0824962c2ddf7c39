/* TFLite's quantisation arithmetic, reproduced bit for bit so that our
 * integer kernels round exactly as TFLite's reference kernels do.  The
 * functions mirror tensorflow/lite/kernels/internal/quantization_util.cc and
 * gemmlowp's fixedpoint.h; they run at compile time, on scalars. */
#ifndef TINYML_IMPORTERS_TFL_QUANT_H
#define TINYML_IMPORTERS_TFL_QUANT_H

#include <stdint.h>

/* real ≈ multiplier * 2^(shift - 31), multiplier in [2^30, 2^31) or 0.
 * Returns 0 (and multiplier 0) when `real` is negative, infinite or NaN. */
int tfl_quantize_multiplier(double real, int32_t *multiplier, int *shift);

/* TOSA's rescale shift for a TFLite (multiplier, shift): 31 - shift.  TOSA
 * DOUBLE_ROUND then equals TFLite's MultiplyByQuantizedMultiplier exactly.
 * Returns 0 if the shift is out of TOSA's [2, 62] range. */
int tfl_tosa_shift(int tflite_shift, int8_t *out);

/* Fused-activation clamp range in the quantised domain
 * (CalculateActivationRangeQuantized): act 0 none, 1 RELU, 2 RELU_N1_TO_1,
 * 3 RELU6.  qmin/qmax are the type's limits. */
void tfl_activation_range_q(int activation, float scale, int32_t zero_point,
                            int32_t qmin, int32_t qmax, int32_t *lo, int32_t *hi);

/* gemmlowp fixed point on int32. */
int32_t tfl_srdhm(int32_t a, int32_t b);           /* SaturatingRoundingDoublingHighMul */
int32_t tfl_rdbpot(int32_t x, int exponent);        /* RoundingDivideByPOT */
int32_t tfl_mbqm(int32_t x, int32_t multiplier, int shift); /* MultiplyByQuantizedMultiplier */
int32_t tfl_exp_on_negative_values(int32_t a_raw, int integer_bits);

/* Int8 softmax parameters (TFLite's PreprocessSoftmaxScaling and
 * CalculateInputRadius with 5 integer bits). */
typedef struct tfl_softmax_params {
  int32_t input_multiplier;
  int input_left_shift;
  int32_t diff_min;
} tfl_softmax_params_t;
void tfl_softmax_params(double beta, double input_scale, tfl_softmax_params_t *p);
/* exp(beta * scale * diff) for diff = x - max_in_row in [-255, 0], as TFLite's
 * int8 softmax computes it: Q0.31 (`q0`) and rescaled to Q12.19 (`q12`).
 * Entries below diff_min are 0, as TFLite skips them. */
void tfl_softmax_exp_tables(const tfl_softmax_params_t *p, int32_t q0[256],
                            int32_t q12[256]);

#endif
