/* gemmlowp's fixed-point steps as TOSA ops (tfl_gemmlowp.h). */
#include "tfl_gemmlowp.h"

#include <stdint.h>

static te_value_t k32(tfl_ctx_t *c, int64_t v) { return te_scalar_int(&c->e, TE_I32, v); }

te_value_t tfl_gl_srdhm(tfl_ctx_t *c, te_value_t a, te_value_t b) {
  return te_mul(&c->e, a, b, 31);
}

te_value_t tfl_gl_sat_shl(tfl_ctx_t *c, te_value_t x, int e) {
  int64_t thr = (1LL << (31 - e)) - 1;
  te_value_t shifted = te_binary(&c->e, "tosa.logical_left_shift", x, k32(c, e));
  te_value_t hi = te_binary(&c->e, "tosa.greater", x, k32(c, thr));
  te_value_t lo = te_binary(&c->e, "tosa.greater", k32(c, -thr), x);
  te_value_t r = te_select(&c->e, hi, k32(c, INT32_MAX), shifted);
  return te_select(&c->e, lo, k32(c, INT32_MIN), r);
}

te_value_t tfl_gl_one_over_one_plus(tfl_ctx_t *c, te_value_t half) {
  te_value_t x = te_binary(&c->e, "tosa.add", k32(c, 1515870810),
                           tfl_gl_srdhm(c, half, k32(c, -1010580540)));
  for (int i = 0; i < 3; ++i) {
    te_value_t one_minus = te_binary(&c->e, "tosa.sub", k32(c, 1 << 29),
                                     tfl_gl_srdhm(c, half, x));
    x = te_binary(&c->e, "tosa.add", x, tfl_gl_sat_shl(c, tfl_gl_srdhm(c, x, one_minus), 2));
  }
  return tfl_gl_sat_shl(c, x, 1);
}
