#include "tosa_emit.h"

#include <stdio.h>
#include <string.h>

/* TFLite joins the names of the TensorFlow ops it fused with ';'; the first
 * is the one the tensor is known by. */
void te_set_loc(te_t *e, const char *kind, const char *name) {
  if (!kind) {
    e->loc[0] = 0;
    return;
  }
  if (!name) name = "";
  int n = (int)strcspn(name, ";");
  snprintf(e->loc, sizeof e->loc, "%s%s%.*s", kind, n ? " " : "", n, name);
}

/* Ends an op's line with its location, if one is set. */
static void end_op(te_t *e) {
  if (e->loc[0]) {
    strbuf_append(e->sb, " loc(");
    strbuf_mlir_string(e->sb, e->loc);
    strbuf_append(e->sb, ")");
  }
  strbuf_append(e->sb, "\n");
}

te_type_t te_type(te_elem_t elem, uint32_t rank, const int64_t *dims) {
  te_type_t t;
  memset(&t, 0, sizeof t);
  t.elem = elem;
  t.rank = rank > TE_MAX_RANK ? TE_MAX_RANK : rank;
  for (uint32_t i = 0; i < t.rank; ++i) t.dims[i] = dims[i];
  return t;
}

te_type_t te_type_with(const te_type_t *t, te_elem_t elem) {
  te_type_t r = *t;
  r.elem = elem;
  return r;
}

/* Saturates at INT64_MAX so absurd shapes cannot overflow; importers
 * refuse tensors far below that. */
int64_t te_numel(const te_type_t *t) {
  int64_t n = 1;
  for (uint32_t i = 0; i < t->rank; ++i)
    if (t->dims[i] == 0) return 0; /* before any saturation below */
  for (uint32_t i = 0; i < t->rank; ++i) {
    if (t->dims[i] < 0) return -1;
    if (t->dims[i] && n > INT64_MAX / t->dims[i]) return INT64_MAX;
    n *= t->dims[i];
  }
  return n;
}

size_t te_elem_size(te_elem_t elem) {
  switch (elem) {
    case TE_I8: case TE_I1: return 1;
    case TE_I16: return 2;
    case TE_F32: case TE_I32: return 4;
    case TE_I64: case TE_SHAPE: return 8;
    case TE_F16: case TE_BF16: return 2;
    case TE_F64: return 8;
  }
  return 1;
}

const char *te_elem_name(te_elem_t elem) {
  switch (elem) {
    case TE_F32: return "f32";
    case TE_I8: return "i8";
    case TE_I16: return "i16";
    case TE_I32: return "i32";
    case TE_I64: return "i64";
    case TE_I1: return "i1";
    case TE_SHAPE: return "index";
    case TE_F16: return "f16";
    case TE_BF16: return "bf16";
    case TE_F64: return "f64";
  }
  return "?";
}

void te_print_type(te_t *e, const te_type_t *t) {
  if (t->elem == TE_SHAPE) {
    strbuf_printf(e->sb, "!tosa.shape<%lld>", (long long)t->dims[0]);
    return;
  }
  strbuf_append(e->sb, "tensor<");
  for (uint32_t i = 0; i < t->rank; ++i) strbuf_printf(e->sb, "%lldx", (long long)t->dims[i]);
  strbuf_printf(e->sb, "%s>", te_elem_name(t->elem));
}

static te_value_t new_value(te_t *e, const te_type_t *t) {
  te_value_t v = {++e->next_id, *t};
  strbuf_printf(e->sb, "    %%v%u = ", v.id);
  return v;
}

/* Hex dense literals are exact and parse quickly; a single element's bytes
 * means a splat. */
static void put_dense_hex(te_t *e, const te_type_t *t, const void *data) {
  size_t es = te_elem_size(t->elem), n = (size_t)te_numel(t);
  const uint8_t *p = data;
  int splat = n > 0;
  for (size_t i = 1; splat && i < n; ++i) splat = memcmp(p, p + i * es, es) == 0;
  strbuf_append(e->sb, "dense<\"0x");
  strbuf_hex(e->sb, p, splat ? es : n * es);
  strbuf_append(e->sb, "\"> : ");
  te_print_type(e, t);
}

/* i1 hex literals are bit-packed in MLIR; spell booleans out, nested by
 * dimension as MLIR's dense syntax wants (a splat when all agree). */
static void put_bools(te_t *e, const te_type_t *t, const uint8_t *b, uint32_t dim,
                      int64_t *index) {
  if (dim == t->rank) {
    strbuf_append(e->sb, b[(*index)++] ? "true" : "false");
    return;
  }
  strbuf_append(e->sb, "[");
  for (int64_t i = 0; i < t->dims[dim]; ++i) {
    if (i) strbuf_append(e->sb, ", ");
    put_bools(e, t, b, dim + 1, index);
  }
  strbuf_append(e->sb, "]");
}

static void put_dense_bools(te_t *e, const te_type_t *t, const uint8_t *b) {
  int64_t n = te_numel(t), index = 0;
  int splat = n > 0;
  for (int64_t i = 1; splat && i < n; ++i) splat = (b[i] != 0) == (b[0] != 0);
  strbuf_append(e->sb, "dense<");
  if (splat) strbuf_append(e->sb, b[0] ? "true" : "false");
  else put_bools(e, t, b, 0, &index);
  strbuf_append(e->sb, "> : ");
  te_print_type(e, t);
}

void te_print_dense(te_t *e, const te_type_t *t, const void *data) {
  if (te_numel(t) == 0) {
    strbuf_append(e->sb, "dense<> : ");
    te_print_type(e, t);
  } else if (t->elem == TE_I1) {
    put_dense_bools(e, t, data);
  } else {
    put_dense_hex(e, t, data);
  }
}

te_value_t te_const(te_t *e, const te_type_t *t, const void *data) {
  te_value_t v = new_value(e, t);
  strbuf_append(e->sb, "\"tosa.const\"() <{values = ");
  if (t->elem == TE_I1) put_dense_bools(e, t, data);
  else put_dense_hex(e, t, data);
  strbuf_append(e->sb, "}> : () -> ");
  te_print_type(e, t);
  end_op(e);
  return v;
}

static void store_int(te_elem_t elem, int64_t v, uint8_t out[8]) {
  size_t es = te_elem_size(elem);
  for (size_t i = 0; i < es; ++i) out[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

/* Splats go through te_const with one element repeated; put_dense_hex then
 * writes a single element.  The scratch is sized for the splat check only. */
static te_value_t splat_bytes(te_t *e, const te_type_t *t, const uint8_t elem[8]) {
  te_value_t v = new_value(e, t);
  strbuf_append(e->sb, "\"tosa.const\"() <{values = dense<\"0x");
  strbuf_hex(e->sb, elem, te_elem_size(t->elem));
  strbuf_append(e->sb, "\"> : ");
  te_print_type(e, t);
  strbuf_append(e->sb, "}> : () -> ");
  te_print_type(e, t);
  end_op(e);
  return v;
}

te_value_t te_splat_int(te_t *e, const te_type_t *t, int64_t v) {
  uint8_t b[8];
  store_int(t->elem, v, b);
  if (t->elem != TE_I1) return splat_bytes(e, t, b);
  te_value_t r = new_value(e, t);
  strbuf_printf(e->sb, "\"tosa.const\"() <{values = dense<%s> : ", v ? "true" : "false");
  te_print_type(e, t);
  strbuf_append(e->sb, "}> : () -> ");
  te_print_type(e, t);
  end_op(e);
  return r;
}

te_value_t te_splat_f32(te_t *e, const te_type_t *t, float v) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  uint8_t b[8];
  store_int(TE_I32, bits, b);
  return splat_bytes(e, t, b);
}

te_value_t te_scalar_int(te_t *e, te_elem_t elem, int64_t v) {
  int64_t one = 1;
  te_type_t t = te_type(elem, 1, &one);
  return te_splat_int(e, &t, v);
}

te_value_t te_scalar_f32(te_t *e, float v) {
  int64_t one = 1;
  te_type_t t = te_type(TE_F32, 1, &one);
  return te_splat_f32(e, &t, v);
}

te_value_t te_shape(te_t *e, uint32_t n, const int64_t *values) {
  int64_t len = n;
  te_type_t t = te_type(TE_SHAPE, 1, &len);
  te_value_t v = new_value(e, &t);
  strbuf_append(e->sb, "\"tosa.const_shape\"() <{values = dense<[");
  for (uint32_t i = 0; i < n; ++i) strbuf_printf(e->sb, "%s%lld", i ? ", " : "", (long long)values[i]);
  strbuf_printf(e->sb, "]> : tensor<%uxindex>}> : () -> !tosa.shape<%u>", n, n);
  end_op(e);
  return v;
}

te_value_t te_op(te_t *e, const char *name, const te_value_t *operands,
                 uint32_t n, const char *props, const te_type_t *result) {
  te_value_t v = new_value(e, result);
  strbuf_printf(e->sb, "\"%s\"(", name);
  for (uint32_t i = 0; i < n; ++i) strbuf_printf(e->sb, "%s%%v%u", i ? ", " : "", operands[i].id);
  strbuf_append(e->sb, ")");
  if (props && props[0]) strbuf_printf(e->sb, " <{%s}>", props);
  strbuf_append(e->sb, " : (");
  for (uint32_t i = 0; i < n; ++i) {
    if (i) strbuf_append(e->sb, ", ");
    te_print_type(e, &operands[i].type);
  }
  strbuf_append(e->sb, ") -> ");
  te_print_type(e, result);
  end_op(e);
  return v;
}

void te_f32_attr(float v, char out[32]) {
  uint32_t bits;
  memcpy(&bits, &v, 4);
  snprintf(out, 32, "0x%08X : f32", bits);
}

void te_array_attr(int bits, const int64_t *v, uint32_t n, char *out, size_t cap) {
  size_t len = (size_t)snprintf(out, cap, "array<i%d", bits);
  for (uint32_t i = 0; i < n && len < cap; ++i)
    len += (size_t)snprintf(out + len, cap - len, "%s%lld", i ? ", " : ": ", (long long)v[i]);
  if (len < cap) snprintf(out + len, cap - len, ">");
}

te_value_t te_reshape(te_t *e, te_value_t x, uint32_t rank, const int64_t *dims) {
  te_type_t t = te_type(x.type.elem, rank, dims);
  if (t.rank == x.type.rank && memcmp(t.dims, x.type.dims, sizeof(int64_t) * t.rank) == 0)
    return x;
  te_value_t ops[2] = {x, te_shape(e, rank, dims)};
  return te_op(e, "tosa.reshape", ops, 2, NULL, &t);
}

te_value_t te_trunc_to_int(te_t *e, te_value_t x, te_elem_t elem) {
  te_value_t zero = te_scalar_f32(e, 0.0f);
  te_value_t t = te_select(e, te_binary(e, "tosa.greater_equal", x, zero),
                           te_unary(e, "tosa.floor", x), te_unary(e, "tosa.ceil", x));
  return te_cast(e, t, elem);
}

te_value_t te_round_half_even(te_t *e, te_value_t x) {
  te_value_t r = te_unary(e, "tosa.floor", x), half = te_scalar_f32(e, 0.5f);
  te_value_t d = te_binary(e, "tosa.sub", x, r), half_r = te_mul(e, r, half, 0);
  te_value_t odd = te_unary(e, "tosa.logical_not",
                            te_binary(e, "tosa.equal", te_unary(e, "tosa.floor", half_r), half_r));
  te_value_t up = te_binary(e, "tosa.logical_or", te_binary(e, "tosa.greater", d, half),
                            te_binary(e, "tosa.logical_and", te_binary(e, "tosa.equal", d, half), odd));
  return te_select(e, up, te_binary(e, "tosa.add", r, te_scalar_f32(e, 1.0f)), r);
}

te_value_t te_gather_axis(te_t *e, te_value_t x, int64_t outer, int64_t dim, int64_t inner,
                          te_value_t idx, uint32_t rank, const int64_t *dims) {
  int64_t ni = te_numel(&idx.type);
  idx = te_reshape(e, idx, 2, (int64_t[2]){1, ni});
  if (outer > 1) {
    te_type_t tt = te_type(TE_I32, 2, (int64_t[2]){outer, ni});
    te_value_t ops[2] = {idx, te_shape(e, 2, (int64_t[2]){outer, 1})};
    idx = te_op(e, "tosa.tile", ops, 2, NULL, &tt);
  }
  x = te_reshape(e, x, 3, (int64_t[3]){outer, dim, inner});
  te_type_t gt = te_type(x.type.elem, 3, (int64_t[3]){outer, ni, inner});
  te_value_t ops[2] = {x, idx};
  return te_reshape(e, te_op(e, "tosa.gather", ops, 2, NULL, &gt), rank, dims);
}

te_value_t te_slice(te_t *e, te_value_t x, const int64_t *start, const int64_t *size) {
  uint32_t r = x.type.rank;
  te_type_t t = te_type(x.type.elem, r, size);
  te_value_t ops[3] = {x, te_shape(e, r, start), te_shape(e, r, size)};
  return te_op(e, "tosa.slice", ops, 3, NULL, &t);
}

te_value_t te_concat(te_t *e, const te_value_t *xs, uint32_t n, int32_t axis) {
  te_type_t t = xs[0].type;
  for (uint32_t i = 1; i < n; ++i) t.dims[axis] += xs[i].type.dims[axis];
  char props[32];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  return te_op(e, "tosa.concat", xs, n, props, &t);
}

te_value_t te_transpose(te_t *e, te_value_t x, const int32_t *perms) {
  te_type_t t = x.type;
  int64_t p[TE_MAX_RANK];
  for (uint32_t i = 0; i < t.rank; ++i) {
    p[i] = perms[i];
    t.dims[i] = x.type.dims[perms[i]];
  }
  char arr[160], props[200];
  te_array_attr(32, p, t.rank, arr, sizeof arr);
  snprintf(props, sizeof props, "perms = %s", arr);
  return te_op(e, "tosa.transpose", &x, 1, props, &t);
}

te_value_t te_cast(te_t *e, te_value_t x, te_elem_t elem) {
  if (x.type.elem == elem) return x;
  te_type_t t = te_type_with(&x.type, elem);
  return te_op(e, "tosa.cast", &x, 1, NULL, &t);
}

te_value_t te_clamp_int(te_t *e, te_value_t x, int64_t lo, int64_t hi) {
  char props[160];
  const char *ty = te_elem_name(x.type.elem);
  snprintf(props, sizeof props, "min_val = %lld : %s, max_val = %lld : %s",
           (long long)lo, ty, (long long)hi, ty);
  return te_op(e, "tosa.clamp", &x, 1, props, &x.type);
}

te_value_t te_clamp_f32(te_t *e, te_value_t x, float lo, float hi) {
  char a[32], b[32], props[100];
  te_f32_attr(lo, a);
  te_f32_attr(hi, b);
  snprintf(props, sizeof props, "min_val = %s, max_val = %s", a, b);
  return te_op(e, "tosa.clamp", &x, 1, props, &x.type);
}

/* Reshapes the lower-rank operand with leading 1s so ranks agree. */
static te_value_t lift_rank(te_t *e, te_value_t x, uint32_t rank) {
  if (x.type.rank >= rank) return x;
  int64_t dims[TE_MAX_RANK];
  uint32_t pad = rank - x.type.rank;
  for (uint32_t i = 0; i < rank; ++i) dims[i] = i < pad ? 1 : x.type.dims[i - pad];
  return te_reshape(e, x, rank, dims);
}

static int is_compare(const char *name) {
  return strcmp(name, "tosa.greater") == 0 || strcmp(name, "tosa.greater_equal") == 0 ||
         strcmp(name, "tosa.equal") == 0;
}

static te_type_t broadcast_type(te_value_t a, te_value_t b, te_elem_t elem) {
  te_type_t t = a.type;
  t.elem = elem;
  for (uint32_t i = 0; i < t.rank; ++i)
    if (t.dims[i] == 1) t.dims[i] = b.type.dims[i];
  return t;
}

te_value_t te_binary_props(te_t *e, const char *name, te_value_t a, te_value_t b,
                           const char *props) {
  uint32_t r = a.type.rank > b.type.rank ? a.type.rank : b.type.rank;
  te_value_t ops[2] = {lift_rank(e, a, r), lift_rank(e, b, r)};
  te_type_t t = broadcast_type(ops[0], ops[1], is_compare(name) ? TE_I1 : a.type.elem);
  t = broadcast_type((te_value_t){0, t}, ops[0], t.elem);
  return te_op(e, name, ops, 2, props, &t);
}

te_value_t te_binary(te_t *e, const char *name, te_value_t a, te_value_t b) {
  return te_binary_props(e, name, a, b, NULL);
}

te_value_t te_mul(te_t *e, te_value_t a, te_value_t b, int shift) {
  uint32_t r = a.type.rank > b.type.rank ? a.type.rank : b.type.rank;
  te_value_t ops[3] = {lift_rank(e, a, r), lift_rank(e, b, r), te_scalar_int(e, TE_I8, shift)};
  te_type_t t = broadcast_type(ops[0], ops[1], a.type.elem);
  return te_op(e, "tosa.mul", ops, 3, NULL, &t);
}

/* Tiles x up to `t`'s dims (x has equal rank, dims 1 or equal). */
static te_value_t tile_to(te_t *e, te_value_t x, const te_type_t *t) {
  int64_t mult[TE_MAX_RANK];
  int need = 0;
  for (uint32_t i = 0; i < t->rank; ++i) {
    mult[i] = x.type.dims[i] == t->dims[i] ? 1 : t->dims[i];
    need |= mult[i] != 1;
  }
  if (!need) return x;
  te_type_t r = te_type_with(t, x.type.elem);
  te_value_t ops[2] = {x, te_shape(e, t->rank, mult)};
  return te_op(e, "tosa.tile", ops, 2, NULL, &r);
}

te_value_t te_divf(te_t *e, te_value_t a, te_value_t b) {
  uint32_t r = a.type.rank > b.type.rank ? a.type.rank : b.type.rank;
  te_value_t x = lift_rank(e, a, r), y = lift_rank(e, b, r);
  te_type_t t = broadcast_type(x, y, TE_F32);
  t = broadcast_type((te_value_t){0, t}, x, TE_F32);
  te_value_t ops[2] = {tile_to(e, x, &t), tile_to(e, y, &t)};
  return te_op(e, "arith.divf", ops, 2, NULL, &t);
}

te_value_t te_arith_binary(te_t *e, const char *name, te_value_t a, te_value_t b) {
  uint32_t r = a.type.rank > b.type.rank ? a.type.rank : b.type.rank;
  te_value_t x = lift_rank(e, a, r), y = lift_rank(e, b, r);
  te_type_t t = broadcast_type(x, y, a.type.elem);
  t = broadcast_type((te_value_t){0, t}, x, a.type.elem);
  te_value_t ops[2] = {tile_to(e, x, &t), tile_to(e, y, &t)};
  return te_op(e, name, ops, 2, NULL, &t);
}

te_value_t te_select(te_t *e, te_value_t cond, te_value_t a, te_value_t b) {
  uint32_t r = cond.type.rank;
  if (a.type.rank > r) r = a.type.rank;
  if (b.type.rank > r) r = b.type.rank;
  te_value_t ops[3] = {lift_rank(e, cond, r), lift_rank(e, a, r), lift_rank(e, b, r)};
  te_type_t t = broadcast_type(ops[1], ops[2], a.type.elem);
  t = broadcast_type((te_value_t){0, t}, ops[0], a.type.elem);
  return te_op(e, "tosa.select", ops, 3, NULL, &t);
}

te_value_t te_unary(te_t *e, const char *name, te_value_t x) {
  return te_op(e, name, &x, 1, NULL, &x.type);
}

te_value_t te_argmax(te_t *e, te_value_t x, int32_t axis) {
  te_type_t t = x.type;
  t.elem = TE_I32;
  for (uint32_t d = (uint32_t)axis; d + 1 < t.rank; ++d) t.dims[d] = t.dims[d + 1];
  t.rank--;
  char props[32];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  return te_op(e, "tosa.argmax", &x, 1, props, &t);
}

te_value_t te_reduce(te_t *e, const char *name, te_value_t x, int32_t axis) {
  te_type_t t = x.type;
  t.dims[axis] = 1;
  char props[40];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  return te_op(e, name, &x, 1, props, &t);
}

te_value_t te_rescale(te_t *e, te_value_t x, te_elem_t out_elem,
                      const int32_t *multipliers, const int8_t *shifts,
                      uint32_t n, int64_t input_zp, int64_t output_zp,
                      int double_round, int input_unsigned, int output_unsigned) {
  te_value_t m, s;
  te_rescale_params(e, multipliers, shifts, n, &m, &s);
  return te_rescale_with(e, x, out_elem, m, s, input_zp, output_zp, double_round,
                         input_unsigned, output_unsigned);
}

void te_rescale_params(te_t *e, const int32_t *multipliers, const int8_t *shifts, uint32_t n,
                       te_value_t *out_multipliers, te_value_t *out_shifts) {
  int64_t len = n;
  te_type_t mt = te_type(TE_I32, 1, &len), st = te_type(TE_I8, 1, &len);
  *out_multipliers = te_const(e, &mt, multipliers);
  *out_shifts = te_const(e, &st, shifts);
}

te_value_t te_rescale_with(te_t *e, te_value_t x, te_elem_t out_elem, te_value_t multipliers,
                           te_value_t shifts, int64_t input_zp, int64_t output_zp,
                           int double_round, int input_unsigned, int output_unsigned) {
  te_value_t ops[5] = {x, multipliers, shifts, te_scalar_int(e, x.type.elem, input_zp),
                       te_scalar_int(e, out_elem, output_zp)};
  char props[256];
  snprintf(props, sizeof props,
           "scale32 = true, rounding_mode = #tosa.rounding_mode<%s>, per_channel = %s, "
           "input_unsigned = %s, output_unsigned = %s",
           double_round ? "DOUBLE_ROUND" : "SINGLE_ROUND",
           multipliers.type.dims[0] > 1 ? "true" : "false",
           input_unsigned ? "true" : "false", output_unsigned ? "true" : "false");
  te_type_t t = te_type_with(&x.type, out_elem);
  return te_op(e, "tosa.rescale", ops, 5, props, &t);
}
