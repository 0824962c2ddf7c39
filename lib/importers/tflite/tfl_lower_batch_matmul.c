/* BATCH_MATMUL: float32, and int8 and int16 as TFLite Micro's
 * reference_ops::BatchMatMul computes them.  Both forms share the operand
 * handling: adj_x / adj_y as a transpose of the last two axes, the batch
 * axes broadcast (tiled) and folded into one, one tosa.matmul.
 *
 * The integer forms: sum over k of (lhs - lhs_zp) * (rhs - rhs_zp), accumulated in
 * int32 (int8) or int64 (int16), then MultiplyByQuantizedMultiplier with the
 * multiplier of lhs_scale * rhs_scale (a float product, as
 * GetQuantizedConvolutionMultipler forms it) over the output scale, plus the
 * output zero point, clamped to the type's range (no fused activation).
 *
 * int8 is one tosa.matmul with both zero points, exact in i32, and the same
 * DOUBLE_ROUND rescale as FULLY_CONNECTED (tfl_requantize).  int16 (every
 * zero point 0, as TFLM requires) cannot use TOSA's i16 matmul, which
 * accumulates in i48 that the compiler does not carry; as for the 16x8
 * convolutions (tfl_lower_int16.c) both operands are split exactly into
 * bytes, x = 256 * hi + lo, giving four i8 matmuls exact in i32 whose
 * weighted sum in i64 is TFLM's accumulator.  The rescale is TFLM's int64
 * MultiplyByQuantizedMultiplier (tfl_reduced_multiplier). */
#include "../../common/status.h"
#include "tfl_lower.h"

enum { OPT_BATCH_MATMUL = 101 };
/* Each byte matmul sums at most 255 * 255 per term in int32. */
enum { MAX_DEPTH_16 = 32768 };

static te_value_t swap_last(tfl_ctx_t *c, te_value_t x) {
  int32_t perm[TE_MAX_RANK];
  for (uint32_t d = 0; d < x.type.rank; ++d) perm[d] = (int32_t)d;
  perm[x.type.rank - 2] = (int32_t)x.type.rank - 1;
  perm[x.type.rank - 1] = (int32_t)x.type.rank - 2;
  return te_transpose(&c->e, x, perm);
}

/* x's batch axes broadcast (tiled) to `batch` and folded into one:
 * [b, rows, cols]. */
static te_value_t as_batches(tfl_ctx_t *c, te_value_t x, const int64_t *batch, uint32_t nb,
                             int64_t b) {
  int64_t dims[TE_MAX_RANK] = {0}, times[TE_MAX_RANK] = {0}, full[TE_MAX_RANK] = {0};
  uint32_t lead = nb + 2 - x.type.rank;
  int tile = 0;
  for (uint32_t d = 0; d < nb + 2; ++d) {
    dims[d] = d < lead ? 1 : x.type.dims[d - lead];
    full[d] = d < nb ? batch[d] : dims[d];
    times[d] = dims[d] == full[d] ? 1 : full[d];
    tile |= times[d] != 1;
    if (dims[d] != full[d] && dims[d] != 1) {
      tfl_fail(c, "batch dimension %u (%lld) does not broadcast to %lld", d,
               (long long)dims[d], (long long)full[d]);
      return (te_value_t){0};
    }
  }
  x = te_reshape(&c->e, x, nb + 2, dims);
  if (tile) {
    te_value_t ops[2] = {x, te_shape(&c->e, nb + 2, times)};
    te_type_t r = te_type(x.type.elem, nb + 2, full);
    x = te_op(&c->e, "tosa.tile", ops, 2, NULL, &r);
  }
  return te_reshape(&c->e, x, 3, (int64_t[3]){b, dims[nb], dims[nb + 1]});
}

static te_value_t matmul_i8(tfl_ctx_t *c, te_value_t a, te_value_t b, int64_t azp, int64_t bzp) {
  te_value_t ops[4] = {a, b, te_scalar_int(&c->e, TE_I8, azp), te_scalar_int(&c->e, TE_I8, bzp)};
  te_type_t r = te_type(TE_I32, 3, (int64_t[3]){a.type.dims[0], a.type.dims[1], b.type.dims[2]});
  return te_op(&c->e, "tosa.matmul", ops, 4, NULL, &r);
}

/* The high byte of int16 x and its low byte as lo - 128 (a signed byte
 * read with zero point -128). */
static void split_bytes(tfl_ctx_t *c, te_value_t x, te_value_t *hi, te_value_t *lo) {
  *hi = te_cast(&c->e, te_binary_props(&c->e, "tosa.arithmetic_right_shift", x,
                                       te_scalar_int(&c->e, TE_I16, 8), "round = false"),
                TE_I8);
  *lo = te_cast(&c->e, te_binary(&c->e, "tosa.bitwise_xor", x, te_scalar_int(&c->e, TE_I16, 0x80)),
                TE_I8);
}

static te_value_t shifted_i64(tfl_ctx_t *c, te_value_t v, int bits) {
  v = te_cast(&c->e, v, TE_I64);
  return bits ? te_binary(&c->e, "tosa.logical_left_shift", v, te_scalar_int(&c->e, TE_I64, bits))
              : v;
}

/* sum_k a * b in int64 for int16 a [B, M, K] and b [B, K, N]. */
static te_value_t matmul_i16(tfl_ctx_t *c, te_value_t a, te_value_t b) {
  te_value_t ah, al, bh, bl;
  split_bytes(c, a, &ah, &al);
  split_bytes(c, b, &bh, &bl);
  te_value_t hh = shifted_i64(c, matmul_i8(c, ah, bh, 0, 0), 16);
  te_value_t hl = shifted_i64(c, matmul_i8(c, ah, bl, 0, -128), 8);
  te_value_t lh = shifted_i64(c, matmul_i8(c, al, bh, -128, 0), 8);
  te_value_t ll = shifted_i64(c, matmul_i8(c, al, bl, -128, -128), 0);
  te_value_t acc = te_binary(&c->e, "tosa.add", hh, hl);
  acc = te_binary(&c->e, "tosa.add", acc, lh);
  return te_binary(&c->e, "tosa.add", acc, ll);
}

/* TFLM's Prepare checks: same type everywhere, one scale and zero point
 * each, and zero points 0 for int16. */
static int check_types(tfl_ctx_t *c, const tfl_tensor_t *l, const tfl_tensor_t *r,
                       const tfl_tensor_t *out) {
  if (!l || !r || !out || l->type != r->type || l->type != out->type ||
      (l->type != TFL_INT8 && l->type != TFL_INT16) || !tfl_is_quantized(l) ||
      !tfl_is_quantized(r) || !tfl_is_quantized(out)) {
    tfl_fail(c, "unsupported types %s x %s -> %s (BATCH_MATMUL takes FLOAT32, or quantised "
                "INT8 or INT16 throughout)",
             l ? tfl_type_name(l->type) : "none", r ? tfl_type_name(r->type) : "none",
             out ? tfl_type_name(out->type) : "none");
    return 0;
  }
  if (l->quant.scale_count != 1 || r->quant.scale_count != 1 || out->quant.scale_count != 1) {
    tfl_fail(c, "per-channel quantisation is not supported (TFLM reads one scale)");
    return 0;
  }
  if (l->type == TFL_INT16 && (tfl_zero_point(l) || tfl_zero_point(r) || tfl_zero_point(out))) {
    tfl_fail(c, "INT16 operands need zero point 0 (got %d, %d, %d)", (int)tfl_zero_point(l),
             (int)tfl_zero_point(r), (int)tfl_zero_point(out));
    return 0;
  }
  if (l->rank < 2 || l->rank > 5 || r->rank < 2 || r->rank > 5) {
    tfl_fail(c, "inputs need rank 2 to 5 (got %u and %u)", l->rank, r->rank);
    return 0;
  }
  return 1;
}

/* acc scaled to the output as TFLM's BatchMatMul does. */
static te_value_t requantize(tfl_ctx_t *c, te_value_t acc, const tfl_tensor_t *l,
                             const tfl_tensor_t *r, const tfl_tensor_t *out) {
  double real = (double)(tfl_scale(l) * tfl_scale(r)) / (double)tfl_scale(out);
  if (out->type == TFL_INT8) return tfl_requantize(c, acc, &real, 1, out);
  int32_t m;
  int8_t s;
  if (!tfl_reduced_multiplier(real, &m, &s)) {
    tfl_fail(c, "output scale ratio %g of '%s' is out of range", real, out->name);
    return (te_value_t){0};
  }
  return te_rescale(&c->e, acc, TE_I16, &m, &s, 1, 0, 0, 0, 0, 0);
}

/* The operands as [b, m, k] and [b, k, n] and the output type t; 0 after
 * recording an error. */
static int operands(tfl_ctx_t *c, te_value_t *x, te_value_t *y, te_type_t *t) {
  const tfl_table_t *o = tfl_options(c, OPT_BATCH_MATMUL);
  int bad = 0;
  if (!o) return 0;
  int adj_x = tfl_table_bool(o, 0, 0, &bad), adj_y = tfl_table_bool(o, 1, 0, &bad);
  if (bad || !tfl_te_type(tfl_out(c, 0), t) || t->rank < 2)
    return tfl_fail(c, "malformed options or output"), 0;
  *x = tfl_value_in(c, 0), *y = tfl_value_in(c, 1);
  if (!x->id || !y->id) return 0;
  if (x->type.rank < 2 || y->type.rank < 2) return tfl_fail(c, "inputs need rank 2 or more"), 0;
  if (adj_x) *x = swap_last(c, *x);
  if (adj_y) *y = swap_last(c, *y);
  uint32_t nb = t->rank - 2;
  int64_t b = 1, m = t->dims[nb], n = t->dims[nb + 1], k = x->type.dims[x->type.rank - 1];
  for (uint32_t d = 0; d < nb; ++d) b *= t->dims[d];
  if (x->type.dims[x->type.rank - 2] != m || y->type.dims[y->type.rank - 1] != n ||
      y->type.dims[y->type.rank - 2] != k || x->type.rank > t->rank || y->type.rank > t->rank)
    return tfl_fail(c, "the inputs' shapes do not multiply to the output's"), 0;
  if (tfl_out(c, 0)->type == TFL_INT16 && k > MAX_DEPTH_16)
    return tfl_fail(c, "depth %lld is more than the %d the INT16 form sums exactly",
                    (long long)k, MAX_DEPTH_16), 0;
  *x = as_batches(c, *x, t->dims, nb, b);
  *y = as_batches(c, *y, t->dims, nb, b);
  return x->id && y->id;
}

static tinyml_status_t batch_matmul_f32(tfl_ctx_t *c) {
  const tfl_tensor_t *l = tfl_in(c, 0), *r = tfl_in(c, 1), *out = tfl_out(c, 0);
  if (!r || r->type != TFL_FLOAT32 || !out || out->type != TFL_FLOAT32)
    return tfl_fail(c, "unsupported types %s x %s -> %s (BATCH_MATMUL takes FLOAT32, or "
                       "quantised INT8 or INT16 throughout)", tfl_type_name(l->type),
                    r ? tfl_type_name(r->type) : "none", out ? tfl_type_name(out->type) : "none");
  te_value_t x, y;
  te_type_t t;
  if (!operands(c, &x, &y, &t)) return c->error;
  te_value_t zero = te_scalar_f32(&c->e, 0.0f);
  te_value_t ops[4] = {x, y, zero, zero};
  te_type_t rt = te_type(TE_F32, 3, (int64_t[3]){x.type.dims[0], x.type.dims[1], y.type.dims[2]});
  return tfl_set_out(c, 0, te_reshape(&c->e, te_op(&c->e, "tosa.matmul", ops, 4, NULL, &rt),
                                      t.rank, t.dims));
}

tinyml_status_t tfl_lower_batch_matmul(tfl_ctx_t *c) {
  const tfl_tensor_t *l = tfl_in(c, 0), *r = tfl_in(c, 1), *out = tfl_out(c, 0);
  if (l && l->type == TFL_FLOAT32) return batch_matmul_f32(c);
  if (!check_types(c, l, r, out)) return c->error;
  te_value_t x, y;
  te_type_t t;
  if (!operands(c, &x, &y, &t)) return c->error;
  te_value_t acc = out->type == TFL_INT8
                       ? matmul_i8(c, x, y, tfl_zero_point(l), tfl_zero_point(r))
                       : matmul_i16(c, x, y);
  te_value_t v = requantize(c, acc, l, r, out);
  if (!v.id) return c->error;
  return tfl_set_out(c, 0, te_reshape(&c->e, v, t.rank, t.dims));
}
