/* UINT16, UINT32 and UINT64 in ONNX models.
 *
 * TOSA is signless and its ordering, division and int -> float conversion
 * are signed, so these travel as i16/i32/i64 bits (the value's dtype keeps
 * the unsigned type, and the signature marks them tinyml.unsigned) and the
 * few operators that accept them use arith's unsigned operations (maxui,
 * minui, remui, shli/shrui, uitofp), which the compiler's
 * convert-elementwise-to-linalg turns into Linalg as it does arith.divf.
 * Every other operator refuses them rather than compute signed. */
#include <string.h>

#include "onnx_elt_util.h"
#include "onnx_uint.h"

int onnx_is_wide_uint(int32_t dtype) {
  return dtype == ONNX_UINT16 || dtype == ONNX_UINT32 || dtype == ONNX_UINT64;
}

int onnx_uint_elem(int32_t dtype, te_elem_t *elem) {
  switch (dtype) {
    case ONNX_UINT16: *elem = TE_I16; return 1;
    case ONNX_UINT32: *elem = TE_I32; return 1;
    case ONNX_UINT64: *elem = TE_I64; return 1;
    default: return 0;
  }
}

/* Identity moves bits; Pow takes an unsigned exponent only (checked in
 * onnx_uint_pow_exponent's caller). */
static int keeps_unsigned(const char *op) {
  static const char *const ops[] = {"Max", "Min", "Mod", "BitShift", "Pow", "Identity"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; ++i)
    if (strcmp(op, ops[i]) == 0) return 1;
  return 0;
}

tinyml_status_t onnx_uint_check_node(onnx_ctx_t *c) {
  const char *op = c->node->op_type ? c->node->op_type : "";
  for (size_t i = 0; i < c->node->n_input; ++i) {
    const onnx_value_t *v = c->node->input[i][0] ? onnx_find(c, c->node->input[i]) : NULL;
    if (!v || !onnx_is_wide_uint(v->dtype)) continue;
    if (!keeps_unsigned(op))
      return onnx_fail(c, "input %zu is %s; unsigned 16/32/64-bit tensors are supported only by "
                       "Max, Min, Mod, BitShift, Pow (exponent) and Identity", i,
                       onnx_dtype_name(v->dtype));
    if (strcmp(op, "Pow") == 0 && i == 0)
      return onnx_fail(c, "a %s base is not supported (only a float base with an unsigned "
                       "exponent)", onnx_dtype_name(v->dtype));
  }
  return TINYML_OK;
}

/* Inputs [0, n) present and all of input 0's wide unsigned type. */
static int check_same(onnx_ctx_t *c, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    if (!onnx_input(c, i)) return onnx_fail(c, "input %u is missing", i), 0;
    if (dt(c, i) != dt(c, 0)) return onnx_fail(c, "input types differ"), 0;
  }
  return 1;
}

tinyml_status_t onnx_uint_minmax(onnx_ctx_t *c, const char *arith_op) {
  uint32_t n = onnx_input_count(c);
  if (n < 1) return onnx_fail(c, "no inputs");
  if (!check_same(c, n)) return c->error;
  te_value_t acc = onnx_in(c, 0);
  for (uint32_t i = 1; i < n && acc.id; ++i) {
    te_value_t x = onnx_in(c, i);
    if (!x.id) return c->error;
    acc = te_arith_binary(&c->e, arith_op, acc, x);
  }
  return out_like(c, acc, 0);
}

/* fmod=0 and fmod=1 agree when neither operand is negative.  A zero
 * divisor (undefined in ONNX) would trap: it divides by 1 instead. */
tinyml_status_t onnx_uint_mod(onnx_ctx_t *c) {
  int64_t fmod_ = onnx_attr_int(c, "fmod", 0);
  if (fmod_ != 0 && fmod_ != 1) return onnx_fail(c, "fmod=%lld is invalid", (long long)fmod_);
  if (!check_same(c, 2)) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  b = te_select(&c->e, bin(c, "tosa.equal", b, ki(c, b, 0)), ki(c, b, 1), b);
  return out_like(c, te_arith_binary(&c->e, "arith.remui", a, b), 0);
}

/* Logical shifts.  A shift by the width or more (b read as unsigned) is
 * poison in arith; ONNX shifts every bit out, so those give 0. */
tinyml_status_t onnx_uint_bitshift(onnx_ctx_t *c, const char *direction) {
  int left = strcmp(direction, "LEFT") == 0;
  if (!left && strcmp(direction, "RIGHT") != 0)
    return onnx_fail(c, "direction '%s' is invalid", direction);
  if (!check_same(c, 2)) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  int64_t width = (int64_t)te_elem_size(b.type.elem) * 8;
  te_value_t z = ki(c, b, 0);
  te_value_t big = bin(c, "tosa.logical_or", bin(c, "tosa.greater", z, b),
                       bin(c, "tosa.greater_equal", b, ki(c, b, width)));
  te_value_t y = te_arith_binary(&c->e, left ? "arith.shli" : "arith.shrui", a,
                                 te_select(&c->e, big, z, b));
  return out_like(c, te_select(&c->e, big, ki(c, y, 0), y), 0);
}

/* A float base and an unsigned exponent, converted exactly as an unsigned
 * value (rounded to nearest where it has more than 24 bits). */
tinyml_status_t onnx_uint_pow_exponent(onnx_ctx_t *c) {
  if (!onnx_input(c, 0) || !onnx_input(c, 1)) return onnx_fail(c, "missing inputs");
  if (dt(c, 0) != ONNX_FLOAT)
    return onnx_fail(c, "a %s base is not supported (only a float base with an unsigned "
                     "exponent)", onnx_dtype_name(dt(c, 0)));
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  te_type_t t = te_type_with(&b.type, TE_F32);
  te_value_t e = te_op(&c->e, "arith.uitofp", &b, 1, NULL, &t);
  return out_like(c, bin(c, "tosa.pow", a, e), 0);
}
