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

/* Identity moves bits; Pow takes an unsigned exponent only. */
static int keeps_unsigned(const char *op) {
  static const char *const ops[] = {"Max", "Min", "Mod", "BitShift", "Pow", "Identity", "Add",
                                    "Sub", "Mul", "Div", "Equal", "Greater", "Less",
                                    "GreaterOrEqual", "LessOrEqual", "Cast", "CastLike"};
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
                       "Add, Sub, Mul, Div, Mod, Max, Min, BitShift, Pow (exponent), the "
                       "comparisons, Cast, CastLike and Identity", i,
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

/* pow(a, e) where e above 2^24 was rounded to an even float: its
 * magnitude is within f32 rounding of the exact power's, but an odd e
 * takes a negative base's sign, as pow in double (onnxruntime's) keeps it
 * up to 2^53, where double rounds e too. */
static te_value_t odd_sign(onnx_ctx_t *c, te_value_t a, te_value_t e, te_value_t r) {
  if (e.type.elem == TE_I16) return r; /* exact in f32 */
  te_value_t big = bin(c, "tosa.greater", e, ki(c, e, 1 << 24));
  if (e.type.elem == TE_I32) /* above 2^31 reads negative */
    big = bin(c, "tosa.logical_or", bin(c, "tosa.greater", ki(c, e, 0), e), big);
  else
    big = bin(c, "tosa.logical_and", big, bin(c, "tosa.greater_equal", ki(c, e, 1LL << 53), e));
  te_value_t odd = bin(c, "tosa.equal", bin(c, "tosa.bitwise_and", e, ki(c, e, 1)), ki(c, e, 1));
  te_type_t bits_type = te_type_with(&a.type, TE_I32);
  te_value_t bits = te_op(&c->e, "arith.bitcast", &a, 1, NULL, &bits_type);
  te_value_t negative = bin(c, "tosa.greater", ki(c, bits, 0), bits); /* sign bit, -0 too */
  te_value_t flip = bin(c, "tosa.logical_and", bin(c, "tosa.logical_and", big, odd), negative);
  return te_select(&c->e, flip, neg(c, r), r);
}

/* A float base and an unsigned exponent, converted as an unsigned value
 * (exact up to 2^24, rounded to nearest above). */
tinyml_status_t onnx_uint_pow_exponent(onnx_ctx_t *c) {
  if (!onnx_input(c, 0) || !onnx_input(c, 1)) return onnx_fail(c, "missing inputs");
  if (dt(c, 0) != ONNX_FLOAT)
    return onnx_fail(c, "a %s base is not supported (only a float base with an unsigned "
                     "exponent)", onnx_dtype_name(dt(c, 0)));
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  te_type_t t = te_type_with(&b.type, TE_F32);
  te_value_t e = te_op(&c->e, "arith.uitofp", &b, 1, NULL, &t);
  return out_like(c, odd_sign(c, a, b, bin(c, "tosa.pow", a, e)), 0);
}

/* Add, Sub and Mul wrap the same signed or unsigned (arith.addi/subi/muli
 * keep the bits); Div is arith.divui, a zero divisor (undefined in ONNX,
 * a trap on x86) dividing by 1. */
tinyml_status_t onnx_uint_arith(onnx_ctx_t *c, const char *arith_op) {
  if (!check_same(c, 2)) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  if (strcmp(arith_op, "arith.divui") == 0)
    b = te_select(&c->e, bin(c, "tosa.equal", b, ki(c, b, 0)), ki(c, b, 1), b);
  return out_like(c, te_arith_binary(&c->e, arith_op, a, b), 0);
}

/* Unsigned order is signed order with the sign bit flipped. */
tinyml_status_t onnx_uint_compare(onnx_ctx_t *c, const char *tosa_op, int swap) {
  if (!check_same(c, 2)) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  int64_t sign = a.type.elem == TE_I16 ? INT16_MIN : a.type.elem == TE_I32 ? INT32_MIN : INT64_MIN;
  a = bin(c, "tosa.bitwise_xor", a, ki(c, a, sign));
  b = bin(c, "tosa.bitwise_xor", b, ki(c, b, sign));
  return onnx_set_out(c, 0, swap ? bin(c, tosa_op, b, a) : bin(c, tosa_op, a, b));
}

static te_value_t convert_op(onnx_ctx_t *c, const char *op, te_value_t x, te_elem_t to) {
  te_type_t t = te_type_with(&x.type, to);
  return te_op(&c->e, op, &x, 1, NULL, &t);
}

/* Between integer types a Cast keeps the value modulo 2^width: widening
 * zero-extends an unsigned (or bool) source and sign-extends a signed one,
 * narrowing keeps the low bits. */
static te_value_t int_to_int(onnx_ctx_t *c, te_value_t x, int32_t from, te_elem_t to) {
  size_t wf = x.type.elem == TE_I1 ? 0 : te_elem_size(x.type.elem), wt = te_elem_size(to);
  int zero_extend = from == ONNX_BOOL || from == ONNX_UINT8 || onnx_is_wide_uint(from);
  if (wf == wt) return x;
  if (wf > wt) return convert_op(c, "arith.trunci", x, to);
  return convert_op(c, zero_extend ? "arith.extui" : "arith.extsi", x, to);
}

/* Cast (and CastLike) from or to a wide unsigned type.  Unsigned to float32
 * is arith.uitofp (round to nearest); float to unsigned, and unsigned to
 * float16/bfloat16/double, are refused (out-of-range floats are undefined
 * there, and those targets would round twice). */
tinyml_status_t onnx_uint_cast(onnx_ctx_t *c, int32_t to) {
  int32_t from = dt(c, 0);
  te_elem_t elem;
  if (!onnx_input(c, 0)) return onnx_fail(c, "input 0 is missing");
  int int_from = from != ONNX_FLOAT && (onnx_te_elem(from, &elem) || onnx_is_wide_uint(from));
  int int_to = to != ONNX_FLOAT && (onnx_te_elem(to, &elem) || onnx_uint_elem(to, &elem));
  if (!int_from || !(int_to || (to == ONNX_FLOAT && onnx_is_wide_uint(from))))
    return onnx_fail(c, "casting %s to %s is not supported", onnx_dtype_name(from),
                     onnx_dtype_name(to));
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  te_value_t y;
  if (to == ONNX_FLOAT) y = convert_op(c, "arith.uitofp", x, TE_F32);
  else if (to == ONNX_BOOL) y = un(c, "tosa.logical_not", bin(c, "tosa.equal", x, ki(c, x, 0)));
  else y = int_to_int(c, x, from, elem);
  return onnx_set_out_typed(c, 0, y, to);
}
