/* float16, bfloat16 and float64 at the ONNX importer's edges: graphs
 * compute them in f32 (onnx_float_types.c says how). */
#ifndef TINYML_IMPORTERS_ONNX_FLOAT_TYPES_H
#define TINYML_IMPORTERS_ONNX_FLOAT_TYPES_H

#include "../../common/alloc.h"
#include "onnx_lower.h"

/* FLOAT16, BFLOAT16 or DOUBLE. */
int onnx_is_wide_float(int32_t dtype);

/* OK, or an error naming `what` where `dtype` is refused at this opset. */
tinyml_status_t onnx_check_wide(onnx_ctx_t *c, int32_t dtype, const char *what);

/* Bit-exact conversions; narrowing rounds to nearest, ties to even. */
float onnx_f16_to_f32(uint16_t h);
uint16_t onnx_f32_to_f16(float f);
float onnx_bf16_to_f32(uint16_t b);
uint16_t onnx_f32_to_bf16(float f);

/* Decodes a FLOAT16/BFLOAT16/DOUBLE TensorProto into an f32 constant
 * (v->dtype ONNX_FLOAT), as onnx_decode_tensor does. */
int onnx_decode_wide_float(onnx_ctx_t *c, const Onnx__TensorProto *t, onnx_value_t *v);
/* Rounds an f32 value (or n host floats) to `dtype`'s precision when that
 * is FLOAT16 or BFLOAT16; DOUBLE and others are left as they are. */
te_value_t onnx_round_to(onnx_ctx_t *c, te_value_t x, int32_t dtype);
void onnx_round_data(int32_t dtype, float *data, int64_t n);

/* A graph input of wide type `dtype`: sets its argument's type and id and
 * returns the f32 value converted from it at entry. */
te_value_t onnx_boundary_in(onnx_ctx_t *c, int32_t dtype, uint32_t rank, const int64_t *dims,
                            te_type_t *arg_type, uint32_t *arg_id);
/* Converts f32 value `v` to wide type `dtype` for the return. */
te_value_t onnx_boundary_out(te_t *e, te_value_t v, int32_t dtype);
/* Converts each graph output declared FLOAT16/BFLOAT16/DOUBLE from the f32
 * the graph computed, so the signature keeps the declared type. */
tinyml_status_t onnx_convert_outputs(onnx_ctx_t *c, const Onnx__GraphProto *g);

#endif
