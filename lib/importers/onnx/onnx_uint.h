/* UINT16, UINT32 and UINT64 in ONNX models (onnx_uint.c says how they are
 * carried).  Internal to the ONNX importer. */
#ifndef TINYML_IMPORTERS_ONNX_UINT_H
#define TINYML_IMPORTERS_ONNX_UINT_H

#include "onnx_lower.h"

/* UINT16, UINT32 or UINT64. */
int onnx_is_wide_uint(int32_t dtype);
/* Sets *elem to the signless type carrying wide unsigned `dtype`; 0 when
 * `dtype` is not one. */
int onnx_uint_elem(int32_t dtype, te_elem_t *elem);

/* OK, or a refusal when the node being lowered reads a wide unsigned value
 * and is not one of the operators below that keep unsigned semantics. */
tinyml_status_t onnx_uint_check_node(onnx_ctx_t *c);

/* The lowerings of Max/Min (arith_op "arith.maxui" / "arith.minui"), Mod,
 * BitShift and Pow with a float base, for wide unsigned inputs. */
tinyml_status_t onnx_uint_minmax(onnx_ctx_t *c, const char *arith_op);
tinyml_status_t onnx_uint_mod(onnx_ctx_t *c);
tinyml_status_t onnx_uint_bitshift(onnx_ctx_t *c, const char *direction);
tinyml_status_t onnx_uint_pow_exponent(onnx_ctx_t *c);
/* Add/Sub/Mul/Div ("arith.addi", "arith.subi", "arith.muli", "arith.divui"),
 * comparisons (a TOSA compare, operands swapped for < and <=), and Cast or
 * CastLike to `to` where the source or `to` is wide unsigned. */
tinyml_status_t onnx_uint_arith(onnx_ctx_t *c, const char *arith_op);
tinyml_status_t onnx_uint_compare(onnx_ctx_t *c, const char *tosa_op, int swap);
tinyml_status_t onnx_uint_cast(onnx_ctx_t *c, int32_t to);

#endif
