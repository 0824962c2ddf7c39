/* ONNX lowerings: elementwise family (arithmetic, comparisons, logic, math
 * Cast; unary math, activations and Clip are in onnx_ops_activation.c).
 * See onnx_lower.h for the contract.
 *
 * UINT8 travels as i8: add, sub, mul, equality and shifts work on the bits
 * as they are; division, min/max, ordering and casts first widen the bits
 * to exact i32 values.  When every input is a compile-time constant the
 * common arithmetic is folded (shape subgraphs). */
#include "onnx_elt_util.h"
#include "onnx_float_types.h"
#include "onnx_uint.h"

/* ---- binary arithmetic --------------------------------------------------- */

static tinyml_status_t arith(onnx_ctx_t *c, enum fop op, const char *tosa, unsigned ok) {
  if (onnx_is_wide_uint(dt(c, 0))) {
    static const char *const ops[] = {[F_ADD] = "arith.addi", [F_SUB] = "arith.subi",
                                      [F_MUL] = "arith.muli"};
    return onnx_uint_arith(c, ops[op]);
  }
  if (!check(c, 2, ok, 1)) return c->error;
  if (try_fold(c, op, 2, dt(c, 0))) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  te_value_t y = op == F_MUL ? mul(c, a, b) : bin(c, tosa, a, b);
  return out_like(c, y, 0);
}

static tinyml_status_t lower_add(onnx_ctx_t *c) {
  return arith(c, F_ADD, "tosa.add", T_F | T_INT | T_U8);
}
static tinyml_status_t lower_sub(onnx_ctx_t *c) {
  return arith(c, F_SUB, "tosa.sub", T_F | T_INT | T_U8);
}
static tinyml_status_t lower_mul(onnx_ctx_t *c) {
  return arith(c, F_MUL, "tosa.mul", T_F | T_INT | T_U8);
}

static tinyml_status_t lower_div(onnx_ctx_t *c) {
  if (onnx_is_wide_uint(dt(c, 0))) return onnx_uint_arith(c, "arith.divui");
  if (!check(c, 2, T_F | T_INT | T_U8, 1)) return c->error;
  if (try_fold(c, F_DIV, 2, dt(c, 0))) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  if (a.type.elem == TE_F32) return out_like(c, fdiv(c, a, b), 0);
  /* intdiv is i32/i64 only; narrower quotients fit back exactly. */
  te_value_t q = intdiv(c, to_i32(c, a, dt(c, 0)), to_i32(c, b, dt(c, 0)));
  return out_like(c, te_cast(&c->e, q, a.type.elem), 0);
}

/* C fmod(x, y): q = trunc(x / y), then x - q*y with q*y split exactly
 * into p + err (Dekker), so the remainder is exact; a quotient rounded up
 * to the next integer leaves a remainder of the wrong sign, which one step
 * of |y| mends.  Exact while |x / y| < 2^24 (q an exact float). */
static te_value_t fmod_f32(onnx_ctx_t *c, te_value_t x, te_value_t y) {
  te_value_t q = te_cast(&c->e, te_trunc_to_int(&c->e, fdiv(c, x, y), TE_I32), TE_F32);
  te_value_t big = bin(c, "tosa.greater", un(c, "tosa.abs", fdiv(c, x, y)), kf(c, x, 16777216.0f));
  q = te_select(&c->e, big, fdiv(c, x, y), q);
  te_value_t p = mul(c, q, y);
  te_value_t qh = split_hi(c, q), ql = sub(c, q, qh), yh = split_hi(c, y), yl = sub(c, y, yh);
  te_value_t err = sub(c, mul(c, qh, yh), p);
  err = add(c, add(c, add(c, err, mul(c, qh, yl)), mul(c, ql, yh)), mul(c, ql, yl));
  te_value_t r = sub(c, sub(c, x, p), err);
  te_value_t ay = un(c, "tosa.abs", y), z = kf(c, x, 0.0f);
  te_value_t xneg = bin(c, "tosa.greater", z, x);
  te_value_t low = bin(c, "tosa.logical_and", lnot(c, xneg), bin(c, "tosa.greater", z, r));
  te_value_t high = bin(c, "tosa.logical_and", xneg, bin(c, "tosa.greater", r, z));
  r = te_select(&c->e, low, add(c, r, ay), te_select(&c->e, high, sub(c, r, ay), r));
  /* The sign of a zero remainder is x's, as C's fmod gives it. */
  te_value_t zero = bin(c, "tosa.equal", r, z);
  return te_select(&c->e, zero, mul(c, x, z), r);
}

/* ONNX Mod: fmod=0 takes the divisor's sign (integers only), fmod=1 the
 * dividend's (C fmod).  Float fmod cannot be had exactly from TOSA. */
static tinyml_status_t lower_mod(onnx_ctx_t *c) {
  if (onnx_is_wide_uint(dt(c, 0))) return onnx_uint_mod(c);
  int64_t fmod_ = onnx_attr_int(c, "fmod", 0);
  if (!check(c, 2, T_SI | T_I64 | T_U8 | T_F, 1)) return c->error;
  if (fmod_ != 0 && fmod_ != 1) return onnx_fail(c, "fmod=%lld is invalid", (long long)fmod_);
  if (dt(c, 0) == ONNX_FLOAT) {
    /* The spec requires fmod=1 for floats. */
    if (!fmod_) return onnx_fail(c, "float Mod requires fmod=1");
    te_value_t x = onnx_in(c, 0), y = in_b(c, x);
    return x.id && y.id ? out_like(c, fmod_f32(c, x, y), 0) : c->error;
  }
  if (!fmod_ && try_fold(c, F_MOD, 2, dt(c, 0))) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  te_elem_t elem = a.type.elem;
  a = to_i32(c, a, dt(c, 0));
  b = to_i32(c, b, dt(c, 0));
  te_value_t r = sub(c, a, mul(c, intdiv(c, a, b), b));
  if (!fmod_) {
    /* Move a nonzero remainder whose sign differs from b's into b's sign. */
    te_value_t z = ki(c, r, 0);
    te_value_t rneg = bin(c, "tosa.greater", z, r), bneg = bin(c, "tosa.greater", z, b);
    te_value_t fix = bin(c, "tosa.logical_and", lnot(c, bin(c, "tosa.equal", r, z)),
                         bin(c, "tosa.logical_xor", rneg, bneg));
    r = te_select(&c->e, fix, add(c, r, b), r);
  }
  return out_like(c, te_cast(&c->e, r, elem), 0);
}

/* x ** e for an integer base x and an i32 exponent e >= 0, exactly (with
 * wrap-around where the power overflows): square and multiply over e's 31
 * bits. */
static te_value_t int_pow_bits(onnx_ctx_t *c, te_value_t x, te_value_t e) {
  te_value_t acc = ki(c, x, 1), one = ki(c, e, 1);
  for (int k = 0; k < 31; ++k) {
    te_value_t bit = bin(c, "tosa.equal", bin(c, "tosa.bitwise_and", e, one), one);
    acc = te_select(&c->e, bit, mul(c, acc, x), acc);
    if (k < 30) x = mul(c, x, x), e = bin(c, "tosa.logical_right_shift", e, one);
  }
  return acc;
}

/* An integer base with integer exponent e (its own type, `odd` its
 * parity).  A negative e gives what onnxruntime's truncated double pow
 * gives: 1 for x = 1, +-1 for x = -1, 0 otherwise (0 ** -n included, which
 * is undefined there). */
static te_value_t int_pow(onnx_ctx_t *c, te_value_t x, te_value_t e, te_value_t odd) {
  te_value_t ec = te_clamp_int(&c->e, e, 0, INT32_MAX);
  if (ec.type.elem != TE_I32) ec = te_cast(&c->e, ec, TE_I32);
  te_value_t pos = int_pow_bits(c, x, ec);
  te_value_t m1 = te_select(&c->e, odd, ki(c, x, -1), ki(c, x, 1));
  te_value_t small = te_select(&c->e, bin(c, "tosa.equal", x, ki(c, x, 1)), ki(c, x, 1), ki(c, x, 0));
  small = te_select(&c->e, bin(c, "tosa.equal", x, ki(c, x, -1)), m1, small);
  return te_select(&c->e, bin(c, "tosa.greater", ki(c, e, 0), e), small, pos);
}

/* Integer base: onnxruntime computes pow in double and truncates to the
 * base's type.  Integral exponents (also as floats) go through int_pow,
 * exact; a fractional one truncates the f32 pow, which can differ from
 * the double one only where the power is within f32 rounding of an
 * integer. */
static tinyml_status_t lower_int_pow(onnx_ctx_t *c) {
  te_value_t x = onnx_in(c, 0), y = in_b(c, x);
  if (!x.id || !y.id) return c->error;
  if (dt(c, 0) == ONNX_UINT8 || dt(c, 1) == ONNX_UINT8)
    return onnx_fail(c, "uint8 Pow is not supported");
  if (y.type.elem != TE_F32) {
    te_value_t half = intdiv(c, y, ki(c, y, 2));
    te_value_t odd = lnot(c, bin(c, "tosa.equal", y, mul(c, half, ki(c, y, 2))));
    return out_like(c, int_pow(c, x, y, odd), 0);
  }
  te_value_t integral = bin(c, "tosa.equal", un(c, "tosa.floor", y), y);
  te_value_t yc = te_clamp_f32(&c->e, y, -2147483648.0f, 2147483520.0f);
  te_value_t e = te_trunc_to_int(&c->e, yc, TE_I32);
  te_value_t half = intdiv(c, e, ki(c, e, 2));
  te_value_t odd = lnot(c, bin(c, "tosa.equal", e, mul(c, half, ki(c, e, 2))));
  te_value_t exact = int_pow(c, x, e, odd);
  te_value_t xf = te_cast(&c->e, x, TE_F32);
  te_value_t approx = te_trunc_to_int(&c->e, bin(c, "tosa.pow", xf, y), x.type.elem);
  return out_like(c, te_select(&c->e, integral, exact, approx), 0);
}

static tinyml_status_t lower_pow(onnx_ctx_t *c) {
  if (onnx_is_wide_uint(dt(c, 1))) return onnx_uint_pow_exponent(c);
  if (!check(c, 2, T_F | T_INT, 0)) return c->error;
  if (dt(c, 0) != ONNX_FLOAT) return lower_int_pow(c);
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  /* Integer exponents are exact in f32 up to 2^24; larger ones overflow
   * (or underflow) the result either way. */
  return out_like(c, bin(c, "tosa.pow", a, te_cast(&c->e, b, TE_F32)), 0);
}

/* Max, Min, Sum, Mean: a left fold over any number of inputs. */
static tinyml_status_t variadic(onnx_ctx_t *c, enum fop op, const char *tosa, unsigned ok, int mean) {
  uint32_t n = onnx_input_count(c);
  if (n < 1) return onnx_fail(c, "no inputs");
  if (!check(c, n, ok, 1)) return c->error;
  const onnx_value_t *k = onnx_const_input(c, 0);
  if (n == 1 && k) return onnx_set_out_const(c, 0, k->dtype, k->rank, k->dims, k->data);
  if (n == 2 && try_fold(c, op, 2, dt(c, 0))) return c->error;
  int u8 = dt(c, 0) == ONNX_UINT8;
  te_value_t acc = onnx_in(c, 0);
  if (u8 && acc.id) acc = widen_u8(c, acc);
  for (uint32_t i = 1; i < n && acc.id; ++i) {
    te_value_t x = onnx_in(c, i);
    if (!x.id) return c->error;
    if (u8) x = widen_u8(c, x);
    acc = op == F_ADD ? add(c, acc, x) : bin(c, tosa, acc, x);
  }
  if (!acc.id) return c->error;
  if (u8) acc = te_cast(&c->e, acc, TE_I8);
  if (mean && n > 1) acc = fdiv(c, acc, kf(c, acc, (float)n));
  return out_like(c, acc, 0);
}

static tinyml_status_t lower_max(onnx_ctx_t *c) {
  if (onnx_is_wide_uint(dt(c, 0))) return onnx_uint_minmax(c, "arith.maxui");
  return variadic(c, F_MAX, "tosa.maximum", T_F | T_INT | T_U8, 0);
}
static tinyml_status_t lower_min(onnx_ctx_t *c) {
  if (onnx_is_wide_uint(dt(c, 0))) return onnx_uint_minmax(c, "arith.minui");
  return variadic(c, F_MIN, "tosa.minimum", T_F | T_INT | T_U8, 0);
}
static tinyml_status_t lower_sum(onnx_ctx_t *c) { return variadic(c, F_ADD, "tosa.add", T_F, 0); }
static tinyml_status_t lower_mean(onnx_ctx_t *c) { return variadic(c, F_ADD, "tosa.add", T_F, 1); }

/* ---- comparisons and logic ----------------------------------------------- */

/* a OP b via greater / greater_equal / equal, swapping for < and <=. */
static tinyml_status_t compare(onnx_ctx_t *c, enum fop op) {
  if (onnx_is_wide_uint(dt(c, 0))) {
    const char *tosa = op == F_EQ ? "tosa.equal" : op == F_GT || op == F_LT ? "tosa.greater"
                                                                             : "tosa.greater_equal";
    return onnx_uint_compare(c, tosa, op == F_LT || op == F_LE);
  }
  unsigned ok = T_F | T_INT | T_U8 | (op == F_EQ ? T_B : 0);
  if (!check(c, 2, ok, 1)) return c->error;
  if (try_fold(c, op, 2, ONNX_BOOL)) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  if (dt(c, 0) == ONNX_UINT8 && op != F_EQ) a = widen_u8(c, a), b = widen_u8(c, b);
  te_value_t y;
  switch (op) {
    case F_GT: y = bin(c, "tosa.greater", a, b); break;
    case F_LT: y = bin(c, "tosa.greater", b, a); break;
    case F_GE: y = bin(c, "tosa.greater_equal", a, b); break;
    case F_LE: y = bin(c, "tosa.greater_equal", b, a); break;
    default:
      y = a.type.elem == TE_I1 ? lnot(c, bin(c, "tosa.logical_xor", a, b))
                               : bin(c, "tosa.equal", a, b);
  }
  return onnx_set_out(c, 0, y);
}

static tinyml_status_t lower_equal(onnx_ctx_t *c) { return compare(c, F_EQ); }
static tinyml_status_t lower_greater(onnx_ctx_t *c) { return compare(c, F_GT); }
static tinyml_status_t lower_less(onnx_ctx_t *c) { return compare(c, F_LT); }
static tinyml_status_t lower_greater_equal(onnx_ctx_t *c) { return compare(c, F_GE); }
static tinyml_status_t lower_less_equal(onnx_ctx_t *c) { return compare(c, F_LE); }

static tinyml_status_t logic(onnx_ctx_t *c, enum fop op, const char *tosa) {
  if (!check(c, 2, T_B, 1)) return c->error;
  if (try_fold(c, op, 2, ONNX_BOOL)) return c->error;
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  return onnx_set_out(c, 0, bin(c, tosa, a, b));
}

static tinyml_status_t lower_and(onnx_ctx_t *c) { return logic(c, F_AND, "tosa.logical_and"); }
static tinyml_status_t lower_or(onnx_ctx_t *c) { return logic(c, F_OR, "tosa.logical_or"); }
static tinyml_status_t lower_xor(onnx_ctx_t *c) { return logic(c, F_XOR, "tosa.logical_xor"); }

static tinyml_status_t lower_not(onnx_ctx_t *c) {
  if (!check(c, 1, T_B, 0)) return c->error;
  if (try_fold(c, F_NOT, 1, ONNX_BOOL)) return c->error;
  te_value_t x = onnx_in(c, 0);
  return x.id ? onnx_set_out(c, 0, lnot(c, x)) : c->error;
}

static tinyml_status_t lower_where(onnx_ctx_t *c) {
  if (!check(c, 1, T_B, 0)) return c->error;
  if (!onnx_input(c, 1) || !onnx_input(c, 2)) return onnx_fail(c, "missing inputs");
  if (dt(c, 1) != dt(c, 2)) return onnx_fail(c, "input types differ");
  if (!(dclass(dt(c, 1)) & (T_F | T_INT | T_U8 | T_B)))
    return onnx_fail(c, "input type %s is not supported", onnx_dtype_name(dt(c, 1)));
  if (try_fold(c, F_WHERE, 3, dt(c, 1))) return c->error;
  te_value_t k = onnx_in(c, 0), a = onnx_in(c, 1), b = onnx_in(c, 2);
  if (!k.id || !a.id || !b.id) return c->error;
  return out_like(c, te_select(&c->e, k, a, b), 1);
}

static tinyml_status_t lower_bitshift(onnx_ctx_t *c) {
  char dir[16];
  const char *d = onnx_attr_string(c, "direction", "", dir, sizeof dir);
  if (onnx_is_wide_uint(dt(c, 0))) return onnx_uint_bitshift(c, d);
  if (!check(c, 2, T_U8, 1)) return c->error;
  int left = strcmp(d, "LEFT") == 0;
  if (!left && strcmp(d, "RIGHT") != 0) return onnx_fail(c, "direction '%s' is invalid", d);
  te_value_t a = onnx_in(c, 0), b = in_b(c, a);
  if (!a.id || !b.id) return c->error;
  /* Logical shifts treat the i8 bits as unsigned, as UINT8 wants; a shift
   * by 8 or more (unsigned) gives 0 rather than LLVM poison. */
  te_value_t y = bin(c, left ? "tosa.logical_left_shift" : "tosa.logical_right_shift", a, b);
  te_value_t z = ki(c, b, 0);
  te_value_t big = bin(c, "tosa.logical_or", bin(c, "tosa.greater", z, b),
                       bin(c, "tosa.greater_equal", b, ki(c, b, 8)));
  return out_like(c, te_select(&c->e, big, ki(c, y, 0), y), 0);
}

/* ---- Cast ---------------------------------------------------------------- */

/* Converts x (of ONNX dtype `from`) to `to`.  TOSA rounds float->int to
 * nearest even where ONNX truncates, so truncate first; UINT8 is widened
 * through i32 with a mask since TOSA would sign-extend the i8 bits. */
static te_value_t convert(onnx_ctx_t *c, te_value_t x, int32_t from, int32_t to) {
  te_elem_t elem;
  onnx_te_elem(to, &elem);
  if (from == to) return x;
  if (to == ONNX_BOOL) {
    te_value_t z = x.type.elem == TE_F32 ? kf(c, x, 0.0f) : ki(c, x, 0);
    return lnot(c, bin(c, "tosa.equal", x, z));
  }
  if (from == ONNX_UINT8) x = widen_u8(c, x), from = ONNX_INT32;
  if (from == ONNX_FLOAT && to != ONNX_FLOAT)
    x = te_trunc_to_int(&c->e, x, to == ONNX_UINT8 ? TE_I32 : elem);
  return te_cast(&c->e, x, elem);
}

static tinyml_status_t cast_to(onnx_ctx_t *c, int32_t to) {
  int32_t from = dt(c, 0);
  if (!onnx_input(c, 0)) return onnx_fail(c, "input 0 is missing");
  if (!dclass(from) || !dclass(to))
    return onnx_fail(c, "casting %s to %s is not supported", onnx_dtype_name(from),
                     onnx_dtype_name(to));
  if (try_fold(c, F_CAST, 1, to)) return c->error;
  te_value_t x = onnx_in(c, 0);
  if (!x.id) return c->error;
  te_value_t y = convert(c, x, from, to);
  if (!y.id) return c->error;
  return onnx_set_out_typed(c, 0, y, to);
}

/* float16/bfloat16/double are carried as f32: cast to f32, then round. */
static tinyml_status_t cast_to_wide(onnx_ctx_t *c, int32_t to) {
  tinyml_status_t st = onnx_check_wide(c, to, c->node->output[0]);
  if (!st) st = cast_to(c, ONNX_FLOAT);
  if (st) return st;
  onnx_value_t *y = c->node->output[0][0] ? onnx_find(c, c->node->output[0]) : NULL;
  if (!y) return TINYML_OK; /* unused */
  if (y->data) onnx_round_data(to, y->data, numel_of(y));
  else y->v = onnx_round_to(c, y->v, to);
  return c->error;
}

static tinyml_status_t lower_cast(onnx_ctx_t *c) {
  /* "saturate" only affects float8 targets, which are refused. */
  if (onnx_attr(c, "round_mode")) return onnx_fail(c, "round_mode is not supported");
  int32_t to = (int32_t)onnx_attr_int(c, "to", 0);
  if (onnx_is_wide_uint(dt(c, 0)) || onnx_is_wide_uint(to)) return onnx_uint_cast(c, to);
  if (onnx_is_wide_float(to)) return cast_to_wide(c, to);
  return cast_to(c, to);
}

static tinyml_status_t lower_cast_like(onnx_ctx_t *c) {
  if (!onnx_input(c, 1)) return onnx_fail(c, "input 1 is missing");
  if (onnx_is_wide_uint(dt(c, 0)) || onnx_is_wide_uint(dt(c, 1))) return onnx_uint_cast(c, dt(c, 1));
  return cast_to(c, dt(c, 1));
}

/* ---- the table ----------------------------------------------------------- */

const onnx_lowering_t onnx_lowerings_elementwise[] = {
    {"Add", 1, 23, lower_add},
    {"Sub", 1, 23, lower_sub},
    {"Mul", 1, 23, lower_mul},
    {"Div", 1, 23, lower_div},
    {"Mod", 10, 23, lower_mod},
    {"Pow", 1, 23, lower_pow},
    {"Max", 6, 23, lower_max},
    {"Min", 6, 23, lower_min},
    {"Sum", 6, 23, lower_sum},
    {"Mean", 6, 23, lower_mean},
    {"Equal", 1, 23, lower_equal},
    {"Greater", 1, 23, lower_greater},
    {"Less", 1, 23, lower_less},
    {"GreaterOrEqual", 12, 23, lower_greater_equal},
    {"LessOrEqual", 12, 23, lower_less_equal},
    {"And", 1, 23, lower_and},
    {"Or", 1, 23, lower_or},
    {"Xor", 1, 23, lower_xor},
    {"Not", 1, 23, lower_not},
    {"Where", 9, 23, lower_where},
    {"BitShift", 11, 23, lower_bitshift},
    {"Cast", 6, 23, lower_cast},
    {"CastLike", 15, 23, lower_cast_like},
    {NULL, 0, 0, NULL},
};
