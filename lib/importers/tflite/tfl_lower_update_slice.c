/* DYNAMIC_UPDATE_SLICE (operand, update, start_indices): the operand with
 * `update` written at run-time start indices.  TFLite clamps each start
 * into [0, operand_dim - update_dim] so the update always fits; so do we.
 *
 * TOSA has no dynamic slice, so every element of the output picks, by a
 * mask, either the operand's value or the update's at its clamped offset:
 * per axis, rel = position - start; the element is inside when every rel
 * is in [0, update_dim), and the update's flat index sum(rel * stride) is
 * gathered (clamped, so outside elements read a valid one and drop it). */
#include <string.h>

#include "../../common/alloc.h"
#include "tfl_lower.h"

/* 0, 1, ..., n - 1 along `axis` of a rank-`rank` i32 tensor of 1s elsewhere. */
static te_value_t iota_along(tfl_ctx_t *c, uint32_t rank, uint32_t axis, int64_t n) {
  int32_t *v = tinyml__calloc(c->allocator, (size_t)n, sizeof(int32_t), 4);
  if (!v) {
    tfl_out_of_memory(c);
    return (te_value_t){0};
  }
  for (int64_t i = 0; i < n; ++i) v[i] = (int32_t)i;
  int64_t dims[TE_MAX_RANK];
  for (uint32_t d = 0; d < rank; ++d) dims[d] = d == axis ? n : 1;
  te_type_t t = te_type(TE_I32, rank, dims);
  te_value_t r = te_const(&c->e, &t, v);
  tinyml__free(c->allocator, v);
  return r;
}

/* The start indices clamped as TFLite does, as i32 [rank]. */
static te_value_t clamped_starts(tfl_ctx_t *c, const te_type_t *op, const te_type_t *up) {
  te_value_t s = tfl_value_in(c, 2);
  if (!s.id) return s;
  int64_t hi[TE_MAX_RANK], r = op->rank;
  for (uint32_t d = 0; d < op->rank; ++d) hi[d] = op->dims[d] - up->dims[d];
  te_type_t ht = te_type(s.type.elem, 1, &r);
  te_value_t hv;
  if (s.type.elem == TE_I64) {
    hv = te_const(&c->e, &ht, hi);
  } else {
    int32_t hi32[TE_MAX_RANK];
    for (uint32_t d = 0; d < op->rank; ++d) hi32[d] = (int32_t)hi[d];
    hv = te_const(&c->e, &ht, hi32);
  }
  s = te_binary(&c->e, "tosa.minimum", s, hv);
  s = te_binary(&c->e, "tosa.maximum", s, te_scalar_int(&c->e, s.type.elem, 0));
  return s.type.elem == TE_I32 ? s : te_cast(&c->e, s, TE_I32);
}

static int check_operands(tfl_ctx_t *c, te_type_t *op, te_type_t *up) {
  const tfl_tensor_t *o = tfl_in(c, 0), *u = tfl_in(c, 1), *s = tfl_in(c, 2), *out = tfl_out(c, 0);
  if (!o || !u || !s || !out || !tfl_te_type(o, op) || !tfl_te_type(u, up)) {
    tfl_fail(c, "missing operand, or an unsupported type");
    return 0;
  }
  int ok_type = o->type == TFL_FLOAT32 || o->type == TFL_INT8 || o->type == TFL_INT16 ||
                o->type == TFL_INT32 || o->type == TFL_INT64;
  if (!ok_type || !tfl_quant_matches(o, u) || !tfl_quant_matches(o, out)) {
    tfl_fail(c, "operand %s, update %s, output %s: FLOAT32, INT8, INT16, INT32 or INT64, all "
                "of one type and quantisation, are supported", tfl_type_name(o->type),
             tfl_type_name(u->type), tfl_type_name(out->type));
    return 0;
  }
  if ((s->type != TFL_INT32 && s->type != TFL_INT64) || s->rank != 1 ||
      s->shape[0] != (int64_t)o->rank) {
    tfl_fail(c, "start_indices must be an INT32 or INT64 vector of %u values", o->rank);
    return 0;
  }
  if (u->rank != o->rank || o->rank == 0) {
    tfl_fail(c, "the update must have the operand's rank");
    return 0;
  }
  for (uint32_t d = 0; d < o->rank; ++d)
    if (u->shape[d] > o->shape[d]) {
      tfl_fail(c, "the update is larger than the operand along dimension %u", d);
      return 0;
    }
  return 1;
}

tinyml_status_t tfl_lower_dynamic_update_slice(tfl_ctx_t *c) {
  te_type_t op, up;
  if (!check_operands(c, &op, &up)) return c->error;
  te_value_t x = tfl_value_in(c, 0), u = tfl_value_in(c, 1), s = clamped_starts(c, &op, &up);
  if (!x.id || !u.id || !s.id) return c->error;
  te_value_t idx = {0}, inside = {0}, zero = te_scalar_int(&c->e, TE_I32, 0);
  int64_t stride = 1, ones[TE_MAX_RANK];
  for (uint32_t d = 0; d < op.rank; ++d) ones[d] = 1;
  for (uint32_t d = op.rank; d-- > 0;) {
    te_value_t sd = te_reshape(&c->e, te_slice(&c->e, s, (int64_t[1]){d}, (int64_t[1]){1}),
                               op.rank, ones);
    te_value_t pos = iota_along(c, op.rank, d, op.dims[d]);
    if (!pos.id) return c->error;
    te_value_t rel = te_binary(&c->e, "tosa.sub", pos, sd);
    te_value_t in = te_binary(&c->e, "tosa.logical_and", te_binary(&c->e, "tosa.greater_equal", rel, zero),
                              te_binary(&c->e, "tosa.greater", te_scalar_int(&c->e, TE_I32, up.dims[d]), rel));
    te_value_t part = te_mul(&c->e, te_clamp_int(&c->e, rel, 0, up.dims[d] - 1),
                             te_scalar_int(&c->e, TE_I32, stride), 0);
    idx = idx.id ? te_binary(&c->e, "tosa.add", idx, part) : part;
    inside = inside.id ? te_binary(&c->e, "tosa.logical_and", inside, in) : in;
    stride *= up.dims[d];
  }
  te_value_t g = te_gather_axis(&c->e, u, 1, te_numel(&up), 1, idx, op.rank, op.dims);
  return tfl_set_out(c, 0, te_select(&c->e, inside, g, x));
}
