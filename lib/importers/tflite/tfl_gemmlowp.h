/* gemmlowp's fixed-point steps (fixedpoint.h) as TOSA i32 ops, shared by
 * the integer SOFTMAX and LOG_SOFTMAX lowerings.  Internal to the importer. */
#ifndef TINYML_IMPORTERS_TFL_GEMMLOWP_H
#define TINYML_IMPORTERS_TFL_GEMMLOWP_H

#include "tfl_lower.h"

/* SaturatingRoundingDoublingHighMul: TOSA's i32 mul with shift 31 is
 * (a*b + 2^30) >> 31 in 64 bits, gemmlowp's rounding for either sign; only
 * INT32_MIN * INT32_MIN differs, which the callers never pass. */
te_value_t tfl_gl_srdhm(tfl_ctx_t *c, te_value_t a, te_value_t b);
/* SaturatingRoundingMultiplyByPOT<e> for a constant e > 0. */
te_value_t tfl_gl_sat_shl(tfl_ctx_t *c, te_value_t x, int e);
/* one_over_one_plus_x_for_x_in_0_1 from its half sum RoundingHalfSum(x,
 * One) (Q0.31): three Newton-Raphson steps, then times 2. */
te_value_t tfl_gl_one_over_one_plus(tfl_ctx_t *c, te_value_t half);

#endif
