/* Writes TOSA (MLIR 22, TOSA 1.0 syntax) as text, in MLIR's generic op form
 * so the output does not depend on each op's custom assembly format.  Shared
 * by the importers; knows nothing of any model format or target.
 *
 * Values are SSA names %v<id>; each carries its tensor type so helpers can
 * derive result types.  Text goes to a strbuf, which latches allocation
 * failure (see strbuf.h).  Thread-safety: none; one emitter per import. */
#ifndef TINYML_IMPORTERS_TOSA_EMIT_H
#define TINYML_IMPORTERS_TOSA_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "../../common/strbuf.h"

#define TE_MAX_RANK 8

typedef enum te_elem { TE_F32, TE_I8, TE_I16, TE_I32, TE_I64, TE_I1, TE_SHAPE,
  /* Boundary types only: graphs compute in f32 and convert at entry/exit. */
  TE_F16, TE_BF16, TE_F64 } te_elem_t;

typedef struct te_type {
  te_elem_t elem;
  uint32_t rank;
  int64_t dims[TE_MAX_RANK];
} te_type_t;

typedef struct te_value {
  uint32_t id; /* 0 = no value */
  te_type_t type;
} te_value_t;

#define TE_LOC_MAX 160
typedef struct te {
  strbuf_t *sb;
  uint32_t next_id;
  /* Written as every op's location, loc("..."), when not empty: the source
   * operator being lowered, so the compiler can name what each dispatch
   * computes (profiles).  Set with te_set_loc. */
  char loc[TE_LOC_MAX];
} te_t;

/* Names the source operator the next ops come from: "KIND NAME", NAME up
 * to its first ';' (it may be NULL or empty), truncated to TE_LOC_MAX - 1
 * bytes; kind NULL clears. */
void te_set_loc(te_t *e, const char *kind, const char *name);
te_type_t te_type(te_elem_t elem, uint32_t rank, const int64_t *dims);
te_type_t te_type_with(const te_type_t *t, te_elem_t elem);
int64_t te_numel(const te_type_t *t);
size_t te_elem_size(te_elem_t elem);
const char *te_elem_name(te_elem_t elem);
void te_print_type(te_t *e, const te_type_t *t);

/* Constants.  `data` holds te_numel(t) little-endian elements. */
te_value_t te_const(te_t *e, const te_type_t *t, const void *data);
/* Writes `dense<...> : TYPE` of `data` (t's elements, host order), as an
 * attribute value; a tensor with no elements is `dense<>`. */
void te_print_dense(te_t *e, const te_type_t *t, const void *data);
te_value_t te_splat_int(te_t *e, const te_type_t *t, int64_t v);
te_value_t te_splat_f32(te_t *e, const te_type_t *t, float v);
/* tensor<1xT> scalars, the form TOSA wants for zero points and shifts. */
te_value_t te_scalar_int(te_t *e, te_elem_t elem, int64_t v);
te_value_t te_scalar_f32(te_t *e, float v);
te_value_t te_shape(te_t *e, uint32_t n, const int64_t *values);

/* A generic op: "name"(operands) <{props}> : (types) -> result.  `props`
 * may be NULL. */
te_value_t te_op(te_t *e, const char *name, const te_value_t *operands,
                 uint32_t n, const char *props, const te_type_t *result);

/* Formats a float as an exact MLIR attribute, e.g. "0x40C00000 : f32". */
void te_f32_attr(float v, char out[32]);
/* Formats "array<i64: a, b, ...>" (or i32 with `bits` = 32) into out. */
void te_array_attr(int bits, const int64_t *v, uint32_t n, char *out, size_t cap);

/* Common ops. */
te_value_t te_reshape(te_t *e, te_value_t x, uint32_t rank, const int64_t *dims);
/* x[start : start + size] along every axis. */
te_value_t te_slice(te_t *e, te_value_t x, const int64_t *start, const int64_t *size);
/* The n values (same rank and element type) joined along `axis`. */
te_value_t te_concat(te_t *e, const te_value_t *xs, uint32_t n, int32_t axis);
te_value_t te_transpose(te_t *e, te_value_t x, const int32_t *perms);
te_value_t te_cast(te_t *e, te_value_t x, te_elem_t elem);
te_value_t te_clamp_int(te_t *e, te_value_t x, int64_t lo, int64_t hi);
te_value_t te_clamp_f32(te_t *e, te_value_t x, float lo, float hi);
/* Elementwise binary op with TOSA broadcasting; ranks are equalised with a
 * reshape first.  Comparisons (greater, greater_equal, equal) give i1. */
te_value_t te_binary(te_t *e, const char *name, te_value_t a, te_value_t b);
te_value_t te_binary_props(te_t *e, const char *name, te_value_t a, te_value_t b,
                           const char *props);
te_value_t te_mul(te_t *e, te_value_t a, te_value_t b, int shift);
/* a / b rounded once, as IEEE division (TOSA has no float division; this
 * emits arith.divf on tensors after tiling both operands to the broadcast
 * shape, which the compiler turns into Linalg). */
te_value_t te_divf(te_t *e, te_value_t a, te_value_t b);
/* a OP b for a binary arith op (e.g. "arith.remui") of a's element type:
 * arith has no broadcasting, so both are tiled to the broadcast shape. */
te_value_t te_arith_binary(te_t *e, const char *name, te_value_t a, te_value_t b);
te_value_t te_select(te_t *e, te_value_t cond, te_value_t a, te_value_t b);
te_value_t te_unary(te_t *e, const char *name, te_value_t x);
te_value_t te_reduce(te_t *e, const char *name, te_value_t x, int32_t axis);
/* The i32 index of the first maximum along `axis`, which is dropped. */
te_value_t te_argmax(te_t *e, te_value_t x, int32_t axis);
/* Rounds a float tensor half to even (TFLite's RoundToNearest, ONNX Round). */
te_value_t te_round_half_even(te_t *e, te_value_t x);
/* A float tensor converted to integer `elem` rounding toward zero, as a C
 * cast does (TFLite's CAST, ONNX's Cast); tosa.cast alone rounds to
 * nearest even. */
te_value_t te_trunc_to_int(te_t *e, te_value_t x, te_elem_t elem);
/* Gather along one axis with run-time indices: x seen as [outer, dim,
 * inner], `idx` any i32 tensor of indices in [0, dim) (the compiler clamps
 * others), tiled over outer; one tosa.gather, reshaped to `dims`. */
te_value_t te_gather_axis(te_t *e, te_value_t x, int64_t outer, int64_t dim, int64_t inner,
                          te_value_t idx, uint32_t rank, const int64_t *dims);
/* Rescale with `n` (1 = per tensor) multipliers and TOSA shifts. */
te_value_t te_rescale(te_t *e, te_value_t x, te_elem_t out_elem,
                      const int32_t *multipliers, const int8_t *shifts,
                      uint32_t n, int64_t input_zp, int64_t output_zp,
                      int double_round, int input_unsigned, int output_unsigned);
/* The same in two parts, for a rescale repeated with the same multipliers
 * (an unrolled loop): their constants once, then each rescale using them. */
void te_rescale_params(te_t *e, const int32_t *multipliers, const int8_t *shifts, uint32_t n,
                       te_value_t *out_multipliers, te_value_t *out_shifts);
te_value_t te_rescale_with(te_t *e, te_value_t x, te_elem_t out_elem, te_value_t multipliers,
                           te_value_t shifts, int64_t input_zp, int64_t output_zp,
                           int double_round, int input_unsigned, int output_unsigned);

#endif
