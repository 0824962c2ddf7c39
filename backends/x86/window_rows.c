/* The plan of a window kernel's interior taps (window_rows.h), built
 * into both bitcodes. */
#include "window_rows.h"

void dw_plan(const tinyml_uk_params_t *p, dw_plan_t *pl) {
  const int32_t ic = p->ic;
  pl->taps = p->kh * p->kw;
  for (int32_t t = 0; t < pl->taps && t < UK_MAX_TAPS; ++t) {
    pl->io[t] = ((t / p->kw) * p->dil_h * p->iw + (t % p->kw) * p->dil_w) * ic;
    pl->iwo[t] = t * ic;
  }
  finterior(p, &pl->x_lo, &pl->x_hi);
}
