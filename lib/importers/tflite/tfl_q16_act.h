/* TFLite Micro's int16 sigmoid and tanh (reference_integer_ops::Logistic
 * and Tanh for int16), as TOSA integer ops, for LOGISTIC and TANH and for
 * any lowering that applies them to an already scaled input (the integer
 * LSTM's gates use the same two functions).  Internal to the importer. */
#ifndef TINYML_IMPORTERS_TFL_Q16_ACT_H
#define TINYML_IMPORTERS_TFL_Q16_ACT_H

#include "tfl_lower.h"

/* One of TFLM's two interpolated lookups of sigmoid_table_uint16: |d| >>
 * bits picks the segment and its low bits interpolate (bits 9 for the
 * sigmoid, 8 for the tanh).  base[k] = table[k] << bits, step[k] =
 * table[k+1] - table[k]; entry 255 holds TFLM's saturated value with step
 * 0, reached by clamping |d|. */
typedef struct tfl_q16_lut {
  int bits;
  te_value_t base, step;
} tfl_q16_lut_t;

tfl_q16_lut_t tfl_q16_sigmoid_lut(tfl_ctx_t *c);
tfl_q16_lut_t tfl_q16_tanh_lut(tfl_ctx_t *c);

/* Logistic / Tanh of d, TFLM's input after its input multiplier (i32, any
 * shape); the result is the int16 output value in i32. */
te_value_t tfl_q16_sigmoid(tfl_ctx_t *c, const tfl_q16_lut_t *t, te_value_t d);
te_value_t tfl_q16_tanh(tfl_ctx_t *c, const tfl_q16_lut_t *t, te_value_t d);

/* LOGISTIC (logistic != 0) or TANH with int16 input and output. */
tinyml_status_t tfl_lower_q16_logistic_tanh(tfl_ctx_t *c, int logistic);

#endif
