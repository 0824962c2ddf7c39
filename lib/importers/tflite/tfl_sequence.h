/* Internal to the TFLite importer: the time loop the float and integer
 * LSTMs share.  Time is static, so the loop is unrolled: each step's input
 * terms are sliced out of one tensor shaped like the input, the step runs,
 * and the steps' outputs are joined along time. */
#ifndef TINYML_IMPORTERS_TFL_SEQUENCE_H
#define TINYML_IMPORTERS_TFL_SEQUENCE_H

#include "tfl_lower.h"

typedef struct tfl_sequence {
  int64_t batch, time;
  int time_major; /* [time, batch, ...] instead of [batch, time, ...] */
} tfl_sequence_t;

/* Updates *h and *cell from one step's input terms ([batch, width]). */
typedef void (*tfl_step_fn)(tfl_ctx_t *c, const void *layer, te_value_t terms, te_value_t *h,
                            te_value_t *cell);

/* Runs `step` for every time step of `terms` ([batch, time, width], or
 * time major), from *h and *cell (left as the last step's), and returns the
 * steps' h joined along time; id 0 after an error.  After the first step,
 * which says how many ops a step emits, a sequence whose unrolling would
 * pass max_ops is refused before the rest is emitted. */
te_value_t tfl_sequence_unroll(tfl_ctx_t *c, const tfl_sequence_t *s, te_value_t terms,
                               tfl_step_fn step, const void *layer, te_value_t *h,
                               te_value_t *cell);

#endif
