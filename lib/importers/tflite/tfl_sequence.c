/* The unrolled time loop of the recurrent layers (tfl_sequence.h). */
#include "tfl_sequence.h"

#include "../../common/alloc.h"

/* Step t of `terms` as [batch, width]. */
static te_value_t step_terms(tfl_ctx_t *c, const tfl_sequence_t *s, te_value_t terms,
                             int64_t t) {
  int64_t width = terms.type.dims[2];
  int64_t start[3] = {0, t, 0}, size[3] = {s->batch, 1, width};
  if (s->time_major) {
    start[0] = t, start[1] = 0;
    size[0] = 1, size[1] = s->batch;
  }
  return te_reshape(&c->e, te_slice(&c->e, terms, start, size), 2,
                    (int64_t[2]){s->batch, width});
}

/* The steps' outputs [batch, width] joined along time. */
static te_value_t join_steps(tfl_ctx_t *c, const tfl_sequence_t *s, te_value_t *hs) {
  int64_t width = hs[0].type.dims[1];
  int64_t one_step[3] = {s->batch, 1, width};
  if (s->time_major) one_step[0] = 1, one_step[1] = s->batch;
  for (int64_t t = 0; t < s->time; ++t) hs[t] = te_reshape(&c->e, hs[t], 3, one_step);
  return s->time == 1 ? hs[0] : te_concat(&c->e, hs, (uint32_t)s->time, s->time_major ? 0 : 1);
}

static int unroll_fits(tfl_ctx_t *c, const tfl_sequence_t *s, uint64_t step_ops) {
  uint64_t ops = (uint64_t)s->time * step_ops;
  if (ops <= c->limits.max_ops) return 1;
  tfl_fail(c, "unrolling %lld time steps emits %llu TOSA ops, more than max_ops (%llu)",
           (long long)s->time, (unsigned long long)ops, (unsigned long long)c->limits.max_ops);
  return 0;
}

te_value_t tfl_sequence_unroll(tfl_ctx_t *c, const tfl_sequence_t *s, te_value_t terms,
                               tfl_step_fn step, const void *layer, te_value_t *h,
                               te_value_t *cell) {
  te_value_t *hs = tinyml__calloc(c->allocator, (size_t)s->time, sizeof(te_value_t), 8);
  if (!hs) tfl_out_of_memory(c);
  uint32_t first = c->e.next_id;
  for (int64_t t = 0; t < s->time && !c->error; ++t) {
    step(c, layer, step_terms(c, s, terms, t), h, cell);
    hs[t] = *h;
    if (t == 0) unroll_fits(c, s, c->e.next_id - first);
  }
  te_value_t y = c->error ? (te_value_t){0} : join_steps(c, s, hs);
  tinyml__free(c->allocator, hs);
  return y;
}
