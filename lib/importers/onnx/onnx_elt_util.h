/* Helpers shared by the elementwise lowerings (onnx_ops_elementwise.c,
 * onnx_ops_activation.c): operand checks, emit helpers, constant folding.
 * Internal to the ONNX importer. */
#ifndef TINYML_IMPORTERS_ONNX_ELT_UTIL_H
#define TINYML_IMPORTERS_ONNX_ELT_UTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../common/alloc.h"
#include "onnx_lower.h"

/* Dtype classes accepted by a lowering. */
enum { T_F = 1, T_SI = 2, T_I64 = 4, T_U8 = 8, T_B = 16, T_INT = T_SI | T_I64 };

/* ---- operands and types -------------------------------------------------- */

static inline int32_t dt(onnx_ctx_t *c, uint32_t i) {
  const onnx_value_t *v = onnx_input(c, i);
  return v ? v->dtype : 0;
}

static inline int64_t numel_of(const onnx_value_t *v) { return onnx_numel(v->rank, v->dims); }

static inline unsigned dclass(int32_t d) {
  switch (d) {
    case ONNX_FLOAT: return T_F;
    case ONNX_INT8: case ONNX_INT16: case ONNX_INT32: return T_SI;
    case ONNX_INT64: return T_I64;
    case ONNX_UINT8: return T_U8;
    case ONNX_BOOL: return T_B;
    default: return 0;
  }
}

/* Refuses unless inputs [0, n) are present, of an accepted class and (when
 * `same`) of one dtype. */
static inline int check(onnx_ctx_t *c, uint32_t n, unsigned ok, int same) {
  for (uint32_t i = 0; i < n; ++i) {
    if (!onnx_input(c, i)) return onnx_fail(c, "input %u is missing", i), 0;
    if (!(dclass(dt(c, i)) & ok))
      return onnx_fail(c, "input type %s is not supported", onnx_dtype_name(dt(c, i))), 0;
    if (same && dt(c, i) != dt(c, 0)) return onnx_fail(c, "input types differ"), 0;
  }
  return 1;
}

/* The output keeps the input's ONNX dtype (UINT8 is i8 underneath). */
static inline tinyml_status_t out_like(onnx_ctx_t *c, te_value_t v, uint32_t like) {
  if (!v.id) return c->error ? c->error : onnx_fail(c, "no result");
  return onnx_set_out_typed(c, 0, v, v.type.elem == TE_I1 ? ONNX_BOOL : dt(c, like));
}

/* ---- emit helpers -------------------------------------------------------- */

/* A constant broadcastable against x: rank of x, every dim 1. */
static inline te_type_t ones_type(te_value_t x, te_elem_t elem) {
  int64_t d[TE_MAX_RANK];
  for (uint32_t i = 0; i < TE_MAX_RANK; ++i) d[i] = 1;
  return te_type(elem, x.type.rank, d);
}

static inline te_value_t kf(onnx_ctx_t *c, te_value_t x, float v) {
  te_type_t t = ones_type(x, TE_F32);
  return te_splat_f32(&c->e, &t, v);
}

static inline te_value_t ki(onnx_ctx_t *c, te_value_t x, int64_t v) {
  te_type_t t = ones_type(x, x.type.elem);
  return te_splat_int(&c->e, &t, v);
}

static inline te_value_t bin(onnx_ctx_t *c, const char *op, te_value_t a, te_value_t b) {
  return te_binary(&c->e, op, a, b);
}
static inline te_value_t add(onnx_ctx_t *c, te_value_t a, te_value_t b) { return bin(c, "tosa.add", a, b); }
static inline te_value_t sub(onnx_ctx_t *c, te_value_t a, te_value_t b) { return bin(c, "tosa.sub", a, b); }
static inline te_value_t mul(onnx_ctx_t *c, te_value_t a, te_value_t b) { return te_mul(&c->e, a, b, 0); }
static inline te_value_t un(onnx_ctx_t *c, const char *op, te_value_t x) { return te_unary(&c->e, op, x); }
static inline te_value_t mulk(onnx_ctx_t *c, te_value_t x, float k) { return mul(c, x, kf(c, x, k)); }

/* The high half of x's significand (Veltkamp's split). */
static inline te_value_t split_hi(onnx_ctx_t *c, te_value_t x) {
  te_value_t t = mulk(c, x, 4097.0f);
  return sub(c, t, sub(c, t, x));
}

/* a / b.  TOSA has no float divide, and a * (1/b) is off by up to 1.5 ulp,
 * enough to flip a later Round, Floor or Cast.  One correction step with the
 * residual a - q*b computed exactly (Dekker's product) restores the
 * correctly rounded quotient; where the split overflows (huge or non-finite
 * operands) the plain product is kept. */
static inline te_value_t fdiv(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  te_value_t r = un(c, "tosa.reciprocal", b), q = mul(c, a, r), p = mul(c, q, b);
  te_value_t qh = split_hi(c, q), ql = sub(c, q, qh);
  te_value_t bh = split_hi(c, b), bl = sub(c, b, bh);
  te_value_t err = sub(c, mul(c, qh, bh), p);
  err = add(c, add(c, add(c, err, mul(c, qh, bl)), mul(c, ql, bh)), mul(c, ql, bl));
  te_value_t q1 = add(c, q, mul(c, sub(c, sub(c, a, p), err), r));
  te_value_t finite = bin(c, "tosa.equal", sub(c, q1, q1), kf(c, q1, 0.0f));
  return te_select(&c->e, finite, q1, q);
}
static inline te_value_t addk(onnx_ctx_t *c, te_value_t x, float k) { return add(c, x, kf(c, x, k)); }

/* Integers negate as 0 - x, which wraps (-128 stays -128 in int8) as ONNX
 * does, where tosa.negate saturates. */
static inline te_value_t neg(onnx_ctx_t *c, te_value_t x) {
  if (x.type.elem != TE_F32) return sub(c, ki(c, x, 0), x);
  te_value_t zp = te_scalar_f32(&c->e, 0.0f);
  te_value_t ops[3] = {x, zp, zp};
  return te_op(&c->e, "tosa.negate", ops, 3, NULL, &x.type);
}

/* UINT8 (i8 bits) as exact i32 values. */
static inline te_value_t widen_u8(onnx_ctx_t *c, te_value_t x) {
  x = te_cast(&c->e, x, TE_I32);
  return bin(c, "tosa.bitwise_and", x, ki(c, x, 0xFF));
}

/* An integer value as i32 (i64 stays), respecting UINT8. */
static inline te_value_t to_i32(onnx_ctx_t *c, te_value_t x, int32_t dtype) {
  if (dtype == ONNX_UINT8) return widen_u8(c, x);
  return x.type.elem == TE_I64 ? x : te_cast(&c->e, x, TE_I32);
}

/* sqrt(x) = 1 / rsqrt(x) (TOSA has no square root): exact at 0 (1/inf)
 * and NaN below 0. */
static inline te_value_t fsqrt(onnx_ctx_t *c, te_value_t x) {
  return un(c, "tosa.reciprocal", un(c, "tosa.rsqrt", x));
}

static inline te_value_t lnot(onnx_ctx_t *c, te_value_t x) { return un(c, "tosa.logical_not", x); }

/* a / b truncated.  Division by 0 and MIN / -1 are undefined in ONNX but
 * trap on x86: b = 0 divides by 1 instead, and b = -1 negates (wrapping). */
static inline te_value_t intdiv(onnx_ctx_t *c, te_value_t a, te_value_t b) {
  te_value_t m1 = bin(c, "tosa.equal", b, ki(c, b, -1));
  te_value_t odd = bin(c, "tosa.logical_or", bin(c, "tosa.equal", b, ki(c, b, 0)), m1);
  te_value_t q = bin(c, "tosa.intdiv", a, te_select(&c->e, odd, ki(c, b, 1), b));
  return te_select(&c->e, m1, sub(c, ki(c, a, 0), a), q);
}

/* exp(x) - 1 for x <= 0 is what Elu/Selu/Celu need; the absolute error of
 * the subtraction is below the tolerance that matters there. */
static inline te_value_t expm1_(onnx_ctx_t *c, te_value_t x) { return addk(c, un(c, "tosa.exp", x), -1.0f); }

/* Input 1 at run time.  Before opset 7, B broadcasts to A only with
 * broadcast=1, its dims placed at `axis` (default: trailing). */
static inline te_value_t in_b(onnx_ctx_t *c, te_value_t a) {
  te_value_t b = onnx_in(c, 1), none = {0};
  if (!b.id || !a.id || c->opset >= 7) return b;
  uint32_t ra = a.type.rank, rb = b.type.rank;
  int64_t axis = onnx_attr_int(c, "axis", (int64_t)ra - (int64_t)rb), dims[TE_MAX_RANK];
  int same = ra == rb && memcmp(a.type.dims, b.type.dims, ra * sizeof(int64_t)) == 0;
  if (!onnx_attr_int(c, "broadcast", 0))
    return same ? b : (onnx_fail(c, "shapes differ without broadcast=1"), none);
  if (axis < 0) axis += ra;
  if (rb > ra || axis < 0 || axis + rb > ra) return onnx_fail(c, "B cannot broadcast to A"), none;
  for (uint32_t i = 0; i < ra; ++i) {
    dims[i] = i >= axis && i < axis + rb ? b.type.dims[i - axis] : 1;
    if (dims[i] != 1 && dims[i] != a.type.dims[i]) return onnx_fail(c, "B cannot broadcast to A"), none;
  }
  return te_reshape(&c->e, b, ra, dims);
}

/* ---- constant folding ---------------------------------------------------- */

enum fop { F_ADD, F_SUB, F_MUL, F_DIV, F_MAX, F_MIN, F_EQ, F_GT, F_LT, F_GE, F_LE,
           F_AND, F_OR, F_XOR, F_NOT, F_NEG, F_ABS, F_WHERE, F_CAST, F_MOD };

typedef struct num { int64_t i; float f; } num_t;

static inline int foldable_dtype(int32_t d) {
  return d == ONNX_FLOAT || d == ONNX_INT64 || d == ONNX_INT32 || d == ONNX_BOOL ||
         d == ONNX_INT8 || d == ONNX_UINT8 || d == ONNX_INT16;
}

static inline num_t get_num(const onnx_value_t *v, int64_t k) {
  const uint8_t *p = (const uint8_t *)v->data;
  num_t n = {0, 0.0f};
  switch (v->dtype) {
    case ONNX_FLOAT: memcpy(&n.f, p + 4 * k, 4); return n;
    case ONNX_INT64: memcpy(&n.i, p + 8 * k, 8); break;
    case ONNX_INT32: { int32_t x; memcpy(&x, p + 4 * k, 4); n.i = x; break; }
    case ONNX_INT16: { int16_t x; memcpy(&x, p + 2 * k, 2); n.i = x; break; }
    case ONNX_INT8: n.i = (int8_t)p[k]; break;
    default: n.i = p[k]; break; /* UINT8, BOOL */
  }
  n.f = (float)n.i;
  return n;
}

static inline void put_num(int32_t d, void *out, int64_t k, num_t n) {
  uint8_t *p = out;
  switch (d) {
    case ONNX_FLOAT: memcpy(p + 4 * k, &n.f, 4); break;
    case ONNX_INT64: memcpy(p + 8 * k, &n.i, 8); break;
    case ONNX_INT32: { int32_t x = (int32_t)n.i; memcpy(p + 4 * k, &x, 4); break; }
    case ONNX_INT16: { int16_t x = (int16_t)n.i; memcpy(p + 2 * k, &x, 2); break; }
    case ONNX_BOOL: p[k] = n.i != 0; break;
    default: p[k] = (uint8_t)n.i; break;
  }
}

/* The input index of output element `lin` under numpy broadcasting. */
static inline int64_t bcast_index(const onnx_value_t *v, uint32_t rank, const int64_t *dims, int64_t lin) {
  int64_t idx = 0, stride = 1;
  for (int32_t d = (int32_t)rank - 1, vd = (int32_t)v->rank - 1; d >= 0; --d, --vd) {
    int64_t coord = lin % dims[d];
    lin /= dims[d];
    if (vd < 0) continue;
    if (v->dims[vd] != 1) idx += coord * stride;
    stride *= v->dims[vd];
  }
  return idx;
}

static inline num_t fold_one(enum fop op, int is_f, num_t a, num_t b, num_t w, int32_t to) {
  num_t r = {0, 0.0f};
  int fl = is_f;
  switch (op) {
    case F_ADD: r.f = a.f + b.f; r.i = (int64_t)((uint64_t)a.i + (uint64_t)b.i); break;
    case F_SUB: r.f = a.f - b.f; r.i = (int64_t)((uint64_t)a.i - (uint64_t)b.i); break;
    case F_MUL: r.f = a.f * b.f; r.i = (int64_t)((uint64_t)a.i * (uint64_t)b.i); break;
    case F_DIV: r.f = a.f / b.f; r.i = b.i && !(b.i == -1 && a.i == INT64_MIN) ? a.i / b.i : 0; break;
    case F_MOD: r.i = b.i ? a.i % b.i : 0; if (r.i && ((r.i < 0) != (b.i < 0))) r.i += b.i; break;
    case F_MAX: r = fl ? (a.f >= b.f || isnan(a.f) ? a : b) : (a.i >= b.i ? a : b); break;
    case F_MIN: r = fl ? (a.f <= b.f || isnan(a.f) ? a : b) : (a.i <= b.i ? a : b); break;
    case F_EQ: r.i = fl ? a.f == b.f : a.i == b.i; break;
    case F_GT: r.i = fl ? a.f > b.f : a.i > b.i; break;
    case F_LT: r.i = fl ? a.f < b.f : a.i < b.i; break;
    case F_GE: r.i = fl ? a.f >= b.f : a.i >= b.i; break;
    case F_LE: r.i = fl ? a.f <= b.f : a.i <= b.i; break;
    case F_AND: r.i = a.i && b.i; break;
    case F_OR: r.i = a.i || b.i; break;
    case F_XOR: r.i = !a.i != !b.i; break;
    case F_NOT: r.i = !a.i; break;
    case F_NEG: r.f = -a.f; r.i = (int64_t)(0 - (uint64_t)a.i); break;
    case F_ABS: r.f = fabsf(a.f); r.i = a.i < 0 ? (int64_t)(0 - (uint64_t)a.i) : a.i; break;
    case F_WHERE: r = a.i ? b : w; break;
    case F_CAST:
      r = a;
      if (to == ONNX_BOOL) r.i = fl ? a.f != 0.0f : a.i != 0;
      else if (to == ONNX_FLOAT && !fl) r.f = (float)a.i;
      else if (to != ONNX_FLOAT && fl) r.i = (int64_t)a.f;
      break;
  }
  return r;
}

/* A float -> int cast of a value outside the target range is undefined in
 * C (and in ONNX): such constants are lowered at run time instead. */
static inline int castable(const onnx_value_t *v, int32_t to) {
  if (v->dtype != ONNX_FLOAT || to == ONNX_FLOAT || to == ONNX_BOOL) return 1;
  for (int64_t k = 0, n = numel_of(v); k < n; ++k) {
    float f = get_num(v, k).f;
    if (!(fabsf(f) < 9.2e18f)) return 0;
  }
  return 1;
}

static inline int broadcast_dims(const onnx_value_t *const *in, uint32_t n, int64_t *dims) {
  uint32_t rank = 0;
  for (uint32_t i = 0; i < n; ++i)
    if (in[i]->rank > rank) rank = in[i]->rank;
  for (uint32_t d = 0; d < rank; ++d) {
    dims[d] = 1;
    for (uint32_t i = 0; i < n; ++i) {
      int32_t vd = (int32_t)d - (int32_t)(rank - in[i]->rank);
      if (vd < 0 || in[i]->dims[vd] == 1) continue;
      if (dims[d] != 1 && dims[d] != in[i]->dims[vd]) return -1;
      dims[d] = in[i]->dims[vd];
    }
  }
  return (int)rank;
}

/* Folds when inputs [0, n) are all constants.  Returns 1 when it bound the
 * output (or recorded an error), 0 to lower at run time. */
static inline int try_fold(onnx_ctx_t *c, enum fop op, uint32_t n, int32_t out_dtype) {
  const onnx_value_t *in[3] = {NULL, NULL, NULL};
  int64_t dims[TE_MAX_RANK];
  if (c->opset < 7 && onnx_attr_int(c, "broadcast", 0)) return 0;
  for (uint32_t i = 0; i < n; ++i) {
    in[i] = onnx_const_probe(c, i);
    if (!in[i] || !foldable_dtype(in[i]->dtype)) return 0;
  }
  int brank = broadcast_dims(in, n, dims);
  if (brank < 0) return onnx_fail(c, "the input shapes do not broadcast"), 1;
  uint32_t rank = (uint32_t)brank;
  int64_t total = onnx_numel(rank, dims);
  if (total > (1 << 20) || !castable(in[0], out_dtype)) return 0;
  int is_f = (op == F_WHERE ? in[1] : in[0])->dtype == ONNX_FLOAT;
  uint8_t *buf = tinyml__alloc(c->allocator, (size_t)total * 8 + 8, 16);
  if (!buf) return onnx_oom(c), 1;
  num_t zero = {0, 0.0f};
  for (int64_t k = 0; k < total; ++k) {
    num_t a = get_num(in[0], bcast_index(in[0], rank, dims, k));
    num_t b = n > 1 ? get_num(in[1], bcast_index(in[1], rank, dims, k)) : zero;
    num_t w = n > 2 ? get_num(in[2], bcast_index(in[2], rank, dims, k)) : zero;
    put_num(out_dtype, buf, k, fold_one(op, is_f, a, b, w, out_dtype));
  }
  onnx_set_out_const(c, 0, out_dtype, rank, dims, buf);
  tinyml__free(c->allocator, buf);
  return 1;
}


#endif
