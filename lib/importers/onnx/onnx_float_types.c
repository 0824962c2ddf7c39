/* float16, bfloat16 and float64 (DOUBLE) in ONNX models.
 *
 * Graphs compute these in f32: constants are converted when decoded, graph
 * inputs and outputs keep their type in the signature and are converted at
 * entry and exit, and a Cast to float16 or bfloat16 rounds the f32 value to
 * that precision and back, so what later ops see is exactly representable.
 * Inside the graph every such value is carried as ONNX_FLOAT. */
#include <math.h>
#include <string.h>

#include "../../common/status.h"
#include "onnx_float_types.h"

int onnx_is_wide_float(int32_t dtype) {
  return dtype == ONNX_FLOAT16 || dtype == ONNX_BFLOAT16 || dtype == ONNX_DOUBLE;
}

/* Cast-13 to -18 left bfloat16's rounding unspecified (the reference
 * truncated; we round to nearest even, as Cast-19 says), and float64
 * computed in float32 cannot hold what the opset-6 exports of Debian's
 * suite feed it (uninitialised doubles near 1e198), so both are refused
 * there rather than answer differently. */
tinyml_status_t onnx_check_wide(onnx_ctx_t *c, int32_t dtype, const char *what) {
  if (dtype == ONNX_BFLOAT16 && c->opset < 19)
    return onnx_fail(c, "'%s': BFLOAT16 needs opset 19 or later (earlier Casts left its rounding "
                     "unspecified)", what);
  if (dtype == ONNX_DOUBLE && c->opset < 7)
    return onnx_fail(c, "'%s': DOUBLE needs opset 7 or later (it is computed in float32)", what);
  return TINYML_OK;
}

static te_elem_t boundary_elem(int32_t dtype) {
  return dtype == ONNX_FLOAT16 ? TE_F16 : dtype == ONNX_BFLOAT16 ? TE_BF16 : TE_F64;
}

float onnx_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | man << 13; /* inf, NaN keeps its payload */
  } else if (exp) {
    bits = sign | (exp + 112) << 23 | man << 13;
  } else {
    float f = ldexpf((float)man, -24); /* zero or subnormal: exact in f32 */
    memcpy(&bits, &f, 4);
    bits |= sign;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* Round to nearest, ties to even, as IEEE conversion does. */
uint16_t onnx_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00u | (uint16_t)((ax >> 13) & 0x3ffu);
  if (ax >= 0x477ff000u) return sign | 0x7c00u; /* rounds to 65520 or more: inf */
  if (ax < 0x38800000u) {                       /* below 2^-14: subnormal or zero */
    float m = fabsf(f) * 16777216.0f;           /* units of 2^-24, exact */
    return sign | (uint16_t)lrintf(m);          /* the default mode is to-nearest-even */
  }
  uint32_t r = ax - 0x38000000u; /* rebias the exponent by 112 */
  uint32_t half = r >> 13, rest = r & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;
  return sign | (uint16_t)half;
}

float onnx_bf16_to_f32(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

uint16_t onnx_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
  x += 0x7fffu + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

/* Element k of a stored float16/bfloat16/double tensor, as f32. */
static float wide_element(const Onnx__TensorProto *t, int64_t k) {
  const uint8_t *raw = t->has_raw_data ? t->raw_data.data : NULL;
  if (t->data_type == ONNX_DOUBLE) {
    double d;
    if (raw) memcpy(&d, raw + 8 * k, 8);
    else d = t->double_data[k];
    return (float)d;
  }
  uint16_t h;
  if (raw) memcpy(&h, raw + 2 * k, 2);
  else h = (uint16_t)t->int32_data[k]; /* ONNX keeps 16-bit floats' bits in int32_data */
  return t->data_type == ONNX_FLOAT16 ? onnx_f16_to_f32(h) : onnx_bf16_to_f32(h);
}

int onnx_decode_wide_float(onnx_ctx_t *c, const Onnx__TensorProto *t, onnx_value_t *v) {
  const char *name = t->name ? t->name : "";
  size_t es = t->data_type == ONNX_DOUBLE ? 8 : 2;
  Onnx__TensorProto as_float = *t;
  as_float.data_type = ONNX_FLOAT;
  as_float.has_raw_data = 0;
  as_float.n_float_data = 0; /* decode_tensor checks the shape and limits, no data */
  as_float.n_double_data = 0;
  as_float.n_int32_data = 0;
  int64_t n = 1;
  for (size_t i = 0; i < t->n_dims; ++i) n = onnx_mul_sat(n, t->dims[i] < 0 ? 0 : t->dims[i]);
  size_t stored = t->has_raw_data ? t->raw_data.len / es
                  : t->data_type == ONNX_DOUBLE ? t->n_double_data : t->n_int32_data;
  if ((t->has_raw_data && t->raw_data.len % es) || stored != (size_t)n) {
    onnx_fail(c, "tensor '%s' holds the wrong number of elements", name);
    return 0;
  }
  as_float.n_float_data = (size_t)n;
  float *tmp = tinyml__calloc(c->allocator, (size_t)n + 1, 4, 16);
  if (!tmp) return onnx_oom(c), 0;
  for (int64_t k = 0; k < n; ++k) tmp[k] = wide_element(t, k);
  as_float.float_data = tmp;
  int ok = onnx_decode_tensor(c, &as_float, v);
  tinyml__free(c->allocator, tmp);
  return ok;
}

static te_value_t bitcast(te_t *e, te_value_t x, te_elem_t to) {
  te_type_t t = te_type_with(&x.type, to);
  return te_op(e, "arith.bitcast", &x, 1, NULL, &t);
}

static te_value_t k32(te_t *e, int64_t v) { return te_scalar_int(e, TE_I32, v); }

/* bfloat16 is rounded on the bits, in i32: LLVM lowers an f32 -> bf16
 * truncation to a libcall (__truncsfbf2) on targets without bf16
 * instructions, which the module loader could not bind.  The result is x's
 * bits rounded to the top 16, ties to even, low half 0; NaN becomes the
 * quiet NaN 0x7fc00000. */
static te_value_t bf16_round_bits(te_t *e, te_value_t x) {
  te_value_t bits = bitcast(e, x, TE_I32);
  te_value_t low = te_binary(e, "tosa.logical_right_shift", bits, k32(e, 16));
  te_value_t lsb = te_binary(e, "tosa.bitwise_and", low, k32(e, 1));
  te_value_t sum = te_binary(e, "tosa.add", te_binary(e, "tosa.add", bits, k32(e, 0x7fff)), lsb);
  te_value_t r = te_binary(e, "tosa.bitwise_and", sum, k32(e, (int32_t)0xffff0000u));
  te_value_t number = te_binary(e, "tosa.equal", x, x);
  return te_select(e, number, r, k32(e, 0x7fc00000));
}

te_value_t onnx_round_to(onnx_ctx_t *c, te_value_t x, int32_t dtype) {
  if (dtype == ONNX_BFLOAT16) return bitcast(&c->e, bf16_round_bits(&c->e, x), TE_F32);
  if (dtype != ONNX_FLOAT16) return x;
  te_value_t narrow = te_cast(&c->e, x, TE_F16);
  return te_cast(&c->e, narrow, TE_F32);
}

void onnx_round_data(int32_t dtype, float *data, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    if (dtype == ONNX_FLOAT16) data[k] = onnx_f16_to_f32(onnx_f32_to_f16(data[k]));
    else if (dtype == ONNX_BFLOAT16) data[k] = onnx_bf16_to_f32(onnx_f32_to_bf16(data[k]));
  }
}

/* TOSA has no f64, so float64 converts with arith (made Linalg by the
 * compiler's convert-elementwise-to-linalg, as te_divf's arith.divf is). */
static te_value_t convert(te_t *e, te_value_t x, te_elem_t to) {
  te_type_t t = te_type_with(&x.type, to);
  if (x.type.elem == TE_BF16) {
    te_value_t wide = te_cast(e, bitcast(e, x, TE_I16), TE_I32);
    return bitcast(e, te_binary(e, "tosa.logical_left_shift", wide, k32(e, 16)), TE_F32);
  }
  if (to == TE_BF16) {
    te_value_t top = te_binary_props(e, "tosa.arithmetic_right_shift", bf16_round_bits(e, x),
                                     k32(e, 16), "round = false");
    return bitcast(e, te_cast(e, top, TE_I16), TE_BF16);
  }
  if (x.type.elem == TE_F64) return te_op(e, "arith.truncf", &x, 1, NULL, &t);
  if (to == TE_F64) return te_op(e, "arith.extf", &x, 1, NULL, &t);
  return te_cast(e, x, to);
}

te_value_t onnx_boundary_in(onnx_ctx_t *c, int32_t dtype, uint32_t rank, const int64_t *dims,
                            te_type_t *arg_type, uint32_t *arg_id) {
  *arg_type = te_type(boundary_elem(dtype), rank, dims);
  *arg_id = ++c->e.next_id;
  return convert(&c->e, (te_value_t){*arg_id, *arg_type}, TE_F32);
}

te_value_t onnx_boundary_out(te_t *e, te_value_t v, int32_t dtype) {
  return convert(e, v, boundary_elem(dtype));
}

static int32_t declared_type(const Onnx__ValueInfoProto *vi) {
  const Onnx__TypeProto *t = vi->type;
  return t && t->tensor_type && t->tensor_type->has_elem_type ? t->tensor_type->elem_type : 0;
}

tinyml_status_t onnx_convert_outputs(onnx_ctx_t *c, const Onnx__GraphProto *g) {
  for (size_t i = 0; i < g->n_output && !c->error; ++i) {
    int32_t dtype = declared_type(g->output[i]);
    onnx_value_t *v = g->output[i]->name ? onnx_find(c, g->output[i]->name) : NULL;
    if (!onnx_is_wide_float(dtype) || !v) continue; /* assemble reports a missing one */
    TINYML_RETURN_IF_ERROR(onnx_check_wide(c, dtype, g->output[i]->name));
    te_value_t x = onnx_runtime(c, v);
    if (!x.id) return c->error;
    if (x.type.elem == boundary_elem(dtype)) continue; /* listed twice: done */
    if (x.type.elem != TE_F32)
      return onnx_fail(c, "graph output '%s' is declared %s but computes %s", g->output[i]->name,
                       onnx_dtype_name(dtype), onnx_dtype_name(v->dtype));
    v->v = onnx_boundary_out(&c->e, x, dtype);
  }
  return c->error;
}
