/* Data layout and reductions beyond tfl_lower_shape.c: PACK, UNPACK, SPLIT,
 * SPLIT_V, SLICE, REVERSE_V2, MIRROR_PAD, SPACE_TO_DEPTH, DEPTH_TO_SPACE,
 * BROADCAST_TO, SHAPE, ZEROS_LIKE, FILL, ADD_N and SUM / REDUCE_MAX /
 * REDUCE_MIN / REDUCE_PROD / REDUCE_ANY / REDUCE_ALL.
 * Shape operands must be constants.  Moving quantised values needs the
 * same quantisation on both sides (raw values are copied); refused
 * otherwise. */
#include <stdio.h>
#include <string.h>

#include "../../common/status.h"
#include "tfl_lower.h"

enum {
  OP_DEPTH_TO_SPACE = 5, OP_SPACE_TO_DEPTH = 26, OP_SPLIT = 49, OP_SLICE = 65, OP_SUM = 74,
  OP_SHAPE = 77, OP_REDUCE_PROD = 81, OP_REDUCE_MAX = 82, OP_PACK = 83, OP_UNPACK = 88,
  OP_REDUCE_MIN = 89, OP_ZEROS_LIKE = 93, OP_FILL = 94, OP_SPLIT_V = 102, OP_ADD_N = 106,
  OP_BROADCAST_TO = 130, OP_REDUCE_ANY = 91, OP_REDUCE_ALL = 140
};
enum { MAX_PIECES = 512 };
enum {
  OPT_SPACE_TO_DEPTH = 19, OPT_MIRROR_PAD = 77, OPT_SPLIT = 35, OPT_PACK = 59, OPT_UNPACK = 64,
  OPT_SPLIT_V = 79, OPT_DEPTH_TO_SPACE = 94
};

static int axis_in(int64_t axis, uint32_t rank, int32_t *out) {
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= (int64_t)rank) return 0;
  *out = (int32_t)axis;
  return 1;
}

/* Output i's TOSA type, checked to move `in`'s values unchanged. */
static int moved_type(tfl_ctx_t *c, const tfl_tensor_t *in, uint32_t i, te_type_t *t) {
  const tfl_tensor_t *out = tfl_out(c, i);
  if (!in || !out || !tfl_te_type(out, t) || !tfl_quant_matches(in, out)) {
    tfl_fail(c, "output %u: missing, of an unsupported type, or quantised unlike the input", i);
    return 0;
  }
  return 1;
}

/* One int option (field 0 or 1) of the operator's options table. */
static int option_i32(tfl_ctx_t *c, uint8_t type, unsigned field, int32_t def, int32_t *v) {
  const tfl_table_t *o = tfl_options(c, type);
  int bad = 0;
  if (!o) return 0;
  *v = tfl_table_i32(o, field, def, &bad);
  if (bad) tfl_fail(c, "malformed options");
  return !bad;
}

tinyml_status_t tfl_lower_pack(tfl_ctx_t *c) {
  int32_t axis = 0;
  uint32_t n = c->op->input_count;
  te_type_t t;
  if (!option_i32(c, OPT_PACK, 1, 0, &axis)) return c->error;
  if (!moved_type(c, tfl_in(c, 0), 0, &t)) return c->error;
  if (n == 0 || n > 64 || !axis_in(axis, t.rank, &axis))
    return tfl_fail(c, "%u inputs or axis %d are not supported", n, axis);
  te_value_t xs[64];
  for (uint32_t i = 0; i < n; ++i) {
    if (!tfl_in(c, i) || !tfl_quant_matches(tfl_in(c, i), tfl_out(c, 0)))
      return tfl_fail(c, "input %u is quantised unlike the output", i);
    te_value_t x = tfl_value_in(c, i);
    if (!x.id) return c->error;
    te_type_t one = t;
    one.dims[axis] = 1;
    if (te_numel(&one) != te_numel(&x.type)) return tfl_fail(c, "input %u has the wrong size", i);
    xs[i] = te_reshape(&c->e, x, one.rank, one.dims);
  }
  return tfl_set_out(c, 0, te_concat(&c->e, xs, n, axis));
}

/* The pieces of `x` along `axis` of the given sizes, each reshaped to its
 * output's shape. */
static tinyml_status_t set_pieces(tfl_ctx_t *c, te_value_t x, int32_t axis,
                                  const int64_t *sizes, uint32_t n) {
  int64_t start[TE_MAX_RANK] = {0}, size[TE_MAX_RANK];
  memcpy(size, x.type.dims, sizeof(int64_t) * x.type.rank);
  for (uint32_t i = 0; i < n; ++i) {
    te_type_t t;
    if (!moved_type(c, tfl_in(c, c->op->builtin_code == OP_SPLIT ? 1 : 0), i, &t))
      return c->error;
    size[axis] = sizes[i];
    te_value_t y = te_slice(&c->e, x, start, size);
    if (te_numel(&t) != te_numel(&y.type)) return tfl_fail(c, "output %u has the wrong size", i);
    TINYML_RETURN_IF_ERROR(tfl_set_out(c, i, te_reshape(&c->e, y, t.rank, t.dims)));
    start[axis] += sizes[i];
  }
  return TINYML_OK;
}

tinyml_status_t tfl_lower_unpack(tfl_ctx_t *c) {
  int32_t axis = 0;
  const tfl_tensor_t *in = tfl_in(c, 0);
  if (!in || !option_i32(c, OPT_UNPACK, 1, 0, &axis)) return c->error ? c->error : tfl_fail(c, "missing input");
  if (!axis_in(axis, in->rank, &axis) || in->shape[axis] != (int64_t)c->op->output_count ||
      c->op->output_count > MAX_PIECES)
    return tfl_fail(c, "axis %d does not split into %u outputs", axis, c->op->output_count);
  int64_t ones[MAX_PIECES];
  for (uint32_t i = 0; i < c->op->output_count; ++i) ones[i] = 1;
  te_value_t x = tfl_value_in(c, 0);
  return x.id ? set_pieces(c, x, axis, ones, c->op->output_count) : c->error;
}

/* SPLIT: (axis, input), equal parts; SPLIT_V: (input, sizes, axis), one
 * size may be -1 for the rest. */
tinyml_status_t tfl_lower_split(tfl_ctx_t *c) {
  int v = c->op->builtin_code == OP_SPLIT_V;
  uint32_t data = v ? 0 : 1, n = c->op->output_count, count = 0;
  const tfl_tensor_t *in = tfl_in(c, data);
  int64_t ax, sizes[MAX_PIECES];
  int32_t axis;
  if (!in || n == 0 || n > MAX_PIECES) return tfl_fail(c, "missing input or %u outputs", n);
  if (!tfl_const_ints(c, v ? 2 : 0, &ax, 1, &count)) return c->error;
  if (count != 1 || !axis_in(ax, in->rank, &axis)) return tfl_fail(c, "the axis is out of range");
  int64_t dim = in->shape[axis], rest = dim, unknown = -1;
  if (!v) {
    if (dim % n) return tfl_fail(c, "dimension %lld does not split into %u", (long long)dim, n);
    for (uint32_t i = 0; i < n; ++i) sizes[i] = dim / n;
  } else {
    if (!tfl_const_ints(c, 1, sizes, MAX_PIECES, &count)) return c->error;
    if (count != n) return tfl_fail(c, "%u sizes for %u outputs", count, n);
    for (uint32_t i = 0; i < n; ++i) {
      if (sizes[i] == -1 && unknown < 0) unknown = i;
      else if (sizes[i] < 0) return tfl_fail(c, "size %lld is invalid", (long long)sizes[i]);
      else rest -= sizes[i];
    }
    if (unknown >= 0) sizes[unknown] = rest, rest = 0;
    if (rest != 0 || (unknown >= 0 && sizes[unknown] < 0))
      return tfl_fail(c, "the sizes do not add up to dimension %lld", (long long)dim);
  }
  te_value_t x = tfl_value_in(c, data);
  return x.id ? set_pieces(c, x, axis, sizes, n) : c->error;
}

tinyml_status_t tfl_lower_slice(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0);
  int64_t begin[TE_MAX_RANK], size[TE_MAX_RANK];
  uint32_t nb = 0, ns = 0;
  te_type_t t;
  if (!in || !moved_type(c, in, 0, &t)) return c->error;
  if (!tfl_const_ints(c, 1, begin, TE_MAX_RANK, &nb) || !tfl_const_ints(c, 2, size, TE_MAX_RANK, &ns))
    return c->error;
  if (nb != in->rank || ns != in->rank) return tfl_fail(c, "begin and size need %u values", in->rank);
  for (uint32_t d = 0; d < in->rank; ++d) {
    if (size[d] == -1) size[d] = in->shape[d] - begin[d];
    if (begin[d] < 0 || size[d] < 1 || begin[d] + size[d] > in->shape[d])
      return tfl_fail(c, "slice out of range along dimension %u", d);
  }
  te_value_t x = tfl_value_in(c, 0);
  return x.id ? tfl_set_out(c, 0, te_slice(&c->e, x, begin, size)) : c->error;
}

static te_value_t reverse(tfl_ctx_t *c, te_value_t x, int32_t axis) {
  char props[32];
  snprintf(props, sizeof props, "axis = %d : i32", axis);
  return te_op(&c->e, "tosa.reverse", &x, 1, props, &x.type);
}

tinyml_status_t tfl_lower_reverse(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0);
  int64_t axes[TE_MAX_RANK];
  uint32_t n = 0, done = 0;
  te_type_t t;
  if (!in || !moved_type(c, in, 0, &t) || !tfl_const_ints(c, 1, axes, TE_MAX_RANK, &n))
    return c->error;
  te_value_t x = tfl_value_in(c, 0);
  for (uint32_t i = 0; x.id && i < n; ++i) {
    int32_t a;
    if (!axis_in(axes[i], in->rank, &a)) return tfl_fail(c, "axis %lld out of range", (long long)axes[i]);
    if (!((done >> a) & 1)) x = reverse(c, x, a);
    done |= 1u << a;
  }
  return x.id ? tfl_set_out(c, 0, x) : c->error;
}

/* x padded along `axis` with mirrored copies of its own edges: REFLECT
 * leaves the edge element out, SYMMETRIC repeats it. */
static te_value_t mirror_axis(tfl_ctx_t *c, te_value_t x, int32_t axis, int64_t before,
                              int64_t after, int symmetric) {
  te_value_t parts[3];
  uint32_t n = 0;
  int64_t start[TE_MAX_RANK] = {0}, size[TE_MAX_RANK], len = x.type.dims[axis];
  memcpy(size, x.type.dims, sizeof(int64_t) * x.type.rank);
  if (before) {
    start[axis] = symmetric ? 0 : 1;
    size[axis] = before;
    parts[n++] = reverse(c, te_slice(&c->e, x, start, size), axis);
  }
  parts[n++] = x;
  if (after) {
    start[axis] = len - after - (symmetric ? 0 : 1);
    size[axis] = after;
    parts[n++] = reverse(c, te_slice(&c->e, x, start, size), axis);
  }
  return n == 1 ? x : te_concat(&c->e, parts, n, axis);
}

tinyml_status_t tfl_lower_mirror_pad(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0);
  int64_t pads[2 * TE_MAX_RANK];
  uint32_t n = 0;
  int32_t mode = 0;
  te_type_t t;
  const tfl_table_t *o = tfl_options(c, OPT_MIRROR_PAD);
  int bad = 0;
  if (!o || !in || !moved_type(c, in, 0, &t)) return c->error ? c->error : tfl_fail(c, "missing input");
  mode = tfl_table_i8(o, 0, 0, &bad);
  if (bad || (mode != 0 && mode != 1)) return tfl_fail(c, "mode %d is not REFLECT or SYMMETRIC", mode);
  if (!tfl_const_ints(c, 1, pads, 2 * TE_MAX_RANK, &n)) return c->error;
  if (n != 2 * in->rank) return tfl_fail(c, "paddings need %u values", 2 * in->rank);
  for (uint32_t d = 0; d < 2 * in->rank; ++d)
    if (pads[d] < 0 || pads[d] > in->shape[d / 2] - (mode ? 0 : 1))
      return tfl_fail(c, "padding %lld is too large for dimension %u", (long long)pads[d], d / 2);
  te_value_t x = tfl_value_in(c, 0);
  for (uint32_t d = 0; x.id && d < in->rank; ++d)
    x = mirror_axis(c, x, (int32_t)d, pads[2 * d], pads[2 * d + 1], mode);
  return x.id ? tfl_set_out(c, 0, x) : c->error;
}

/* NHWC blocks of b x b pixels to and from channels: TFLite orders the
 * channels of a block as (row in block, column in block, channel). */
tinyml_status_t tfl_lower_space_depth(tfl_ctx_t *c) {
  int to_depth = c->op->builtin_code == OP_SPACE_TO_DEPTH;
  const tfl_tensor_t *in = tfl_in(c, 0);
  int32_t b = 0;
  te_type_t t;
  if (!option_i32(c, to_depth ? OPT_SPACE_TO_DEPTH : OPT_DEPTH_TO_SPACE, 0, 0, &b)) return c->error;
  if (!in || !moved_type(c, in, 0, &t)) return c->error;
  int64_t s[4];
  for (uint32_t d = 0; d < 4 && d < in->rank; ++d) s[d] = in->shape[d];
  if (in->rank != 4 || b < 1 || (to_depth ? (s[1] % b || s[2] % b) : s[3] % ((int64_t)b * b)))
    return tfl_fail(c, "block size %d does not fit the shape", b);
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  static const int32_t perm[6] = {0, 1, 3, 2, 4, 5};
  if (to_depth)
    x = te_reshape(&c->e, x, 6, (int64_t[6]){s[0], s[1] / b, b, s[2] / b, b, s[3]});
  else
    x = te_reshape(&c->e, x, 6, (int64_t[6]){s[0], s[1], s[2], b, b, s[3] / ((int64_t)b * b)});
  x = te_transpose(&c->e, x, perm);
  return tfl_set_out(c, 0, te_reshape(&c->e, x, t.rank, t.dims));
}

/* x repeated to `t` (TFLite broadcasting: trailing axes aligned). */
static te_value_t broadcast(tfl_ctx_t *c, te_value_t x, const te_type_t *t) {
  int64_t dims[TE_MAX_RANK], times[TE_MAX_RANK];
  uint32_t lead = t->rank - x.type.rank;
  for (uint32_t d = 0; d < t->rank; ++d) {
    dims[d] = d < lead ? 1 : x.type.dims[d - lead];
    times[d] = dims[d] == t->dims[d] ? 1 : t->dims[d];
  }
  te_value_t ops[2] = {te_reshape(&c->e, x, t->rank, dims), te_shape(&c->e, t->rank, times)};
  te_type_t r = te_type(x.type.elem, t->rank, t->dims);
  return te_op(&c->e, "tosa.tile", ops, 2, NULL, &r);
}

static int broadcastable(const te_type_t *from, const te_type_t *to) {
  if (from->rank > to->rank) return 0;
  for (uint32_t d = 0; d < from->rank; ++d) {
    int64_t f = from->dims[from->rank - 1 - d], g = to->dims[to->rank - 1 - d];
    if (f != g && f != 1) return 0;
  }
  return 1;
}

/* BROADCAST_TO (input, shape) and FILL (dims, value). */
tinyml_status_t tfl_lower_broadcast(tfl_ctx_t *c) {
  int fill = c->op->builtin_code == OP_FILL;
  const tfl_tensor_t *in = tfl_in(c, fill ? 1 : 0), *out = tfl_out(c, 0);
  te_type_t t;
  if (!in || !out || !tfl_te_type(out, &t) || !tfl_quant_matches(in, out))
    return tfl_fail(c, "missing operand, or an unsupported type");
  te_value_t x = tfl_value_in(c, fill ? 1 : 0);
  if (!x.id) return c->error;
  if (!broadcastable(&x.type, &t)) return tfl_fail(c, "the input does not broadcast to the output");
  return tfl_set_out(c, 0, broadcast(c, x, &t));
}

/* SHAPE is known at compile time; ZEROS_LIKE is zeros of the input's type:
 * raw zeros for int8 too, whatever its zero point, as TFLM's kernel does. */
tinyml_status_t tfl_lower_shape_of(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  te_type_t t;
  if (!in || !out || !tfl_te_type(out, &t)) return tfl_fail(c, "missing or unsupported operand");
  if (c->op->builtin_code == OP_ZEROS_LIKE) {
    if (in->type != out->type || t.elem == TE_I1 ||
        (tfl_is_quantized(out) && out->type != TFL_INT8))
      return tfl_fail(c, "unsupported types %s -> %s", tfl_type_name(in->type), tfl_type_name(out->type));
    return tfl_set_out(c, 0, t.elem == TE_F32 ? te_splat_f32(&c->e, &t, 0.0f) : te_splat_int(&c->e, &t, 0));
  }
  if ((t.elem != TE_I32 && t.elem != TE_I64) || te_numel(&t) != (int64_t)in->rank)
    return tfl_fail(c, "the output must be INT32 or INT64 with one value per dimension");
  int64_t dims[TE_MAX_RANK];
  int32_t dims32[TE_MAX_RANK];
  for (uint32_t d = 0; d < in->rank; ++d) dims[d] = in->shape[d], dims32[d] = (int32_t)in->shape[d];
  return tfl_set_out(c, 0, te_const(&c->e, &t, t.elem == TE_I64 ? (const void *)dims : (const void *)dims32));
}

/* TFLite Micro's int8 ADD_N (add_n.cc): every input of one quantisation,
 * each (x - zp) << 20 rescaled by 1/2 (its scale over twice itself, a Q31
 * multiplier of 2^30: exact, (x - zp) << 19), summed in int32 after a first
 * term of -zp << 19 (reference_ops::AddN starts from the input offset
 * rescaled, not from 0), then one rescale by 2 * scale / (2^20 * output
 * scale) to the output.  So the int32 sum is (sum x - (n + 1) * zp) << 19,
 * which wraps in int32 beyond 15 inputs exactly as TFLM's does. */
static tinyml_status_t add_n_int8(tfl_ctx_t *c, const tfl_tensor_t *out) {
  const tfl_tensor_t *first = tfl_in(c, 0);
  uint32_t n = c->op->input_count;
  if (n < 2) return tfl_fail(c, "INT8 needs at least two inputs (got %u)", n);
  for (uint32_t i = 0; i < n; ++i)
    if (!tfl_in(c, i) || tfl_in(c, i)->type != TFL_INT8 ||
        !tfl_quant_matches(tfl_in(c, i), first) || first->quant.scale_count != 1)
      return tfl_fail(c, "input %u is quantised unlike input 0 (TFLM sums INT8 inputs of "
                         "one scale and zero point)", i);
  te_value_t acc = te_cast(&c->e, tfl_value_in(c, 0), TE_I32);
  for (uint32_t i = 1; acc.id && i < n; ++i) {
    te_value_t x = tfl_value_in(c, i);
    if (!x.id) return c->error;
    acc = te_binary(&c->e, "tosa.add", acc, te_cast(&c->e, x, TE_I32));
  }
  if (!acc.id) return c->error;
  int64_t offset = -(int64_t)(n + 1) * tfl_zero_point(first);
  acc = te_binary(&c->e, "tosa.add", acc, te_scalar_int(&c->e, TE_I32, offset));
  acc = te_binary(&c->e, "tosa.logical_left_shift", acc, te_scalar_int(&c->e, TE_I32, 19));
  double twice = 2.0 * (double)tfl_scale(first);
  double real = twice / ((double)(1 << 20) * (double)tfl_scale(out));
  te_value_t y = tfl_requantize(c, acc, &real, 1, out);
  return y.id ? tfl_set_out(c, 0, y) : c->error;
}

tinyml_status_t tfl_lower_add_n(tfl_ctx_t *c) {
  const tfl_tensor_t *out = tfl_out(c, 0);
  if (out && out->type == TFL_INT8 && tfl_is_quantized(out) && out->quant.scale_count == 1)
    return add_n_int8(c, out);
  if (!out || (out->type != TFL_FLOAT32 && out->type != TFL_INT32) || c->op->input_count == 0)
    return tfl_fail(c, "unsupported type %s (FLOAT32, INT32 and quantised INT8 sums of at "
                       "least one input are supported)", out ? tfl_type_name(out->type) : "none");
  te_value_t acc = tfl_value_in(c, 0);
  for (uint32_t i = 1; acc.id && i < c->op->input_count; ++i) {
    te_value_t x = tfl_value_in(c, i);
    if (!x.id) return c->error;
    acc = te_binary(&c->e, "tosa.add", acc, x);
  }
  return acc.id ? tfl_set_out(c, 0, acc) : c->error;
}

static const char *reducer(int code) {
  switch (code) {
    case OP_SUM: return "tosa.reduce_sum";
    case OP_REDUCE_PROD: return "tosa.reduce_product";
    case OP_REDUCE_MAX: return "tosa.reduce_max";
    case OP_REDUCE_ANY: return "tosa.reduce_max"; /* of 0/1 bytes, see tfl_lower_reduce */
    case OP_REDUCE_ALL: return "tosa.reduce_min"; /* also bool REDUCE_MIN */
    default: return "tosa.reduce_min";
  }
}

/* Over constant axes; keep_dims only changes the output's shape, which the
 * final reshape takes from the model.  MAX and MIN of quantised values
 * (int8, uint8, int16) are exact on raw values when the output shares the
 * input's quantisation, which TFLite Micro requires.  Bool MAX and MIN are
 * ANY and ALL. */
tinyml_status_t tfl_lower_reduce(tfl_ctx_t *c) {
  const tfl_tensor_t *in = tfl_in(c, 0), *out = tfl_out(c, 0);
  int code = (int)c->op->builtin_code;
  int64_t axes[TE_MAX_RANK];
  uint32_t n = 0, done = 0;
  te_type_t t;
  if (!in || !out || !tfl_te_type(out, &t)) return tfl_fail(c, "missing or unsupported operand");
  int min_max = code == OP_REDUCE_MAX || code == OP_REDUCE_MIN;
  if (code == OP_SUM && (in->type == TFL_INT8 || in->type == TFL_INT16)) return tfl_lower_sum_q(c);
  int logical = code == OP_REDUCE_ANY || code == OP_REDUCE_ALL; /* BOOL only, as in TFLite */
  if (min_max && in->type == TFL_BOOL) logical = 1;
  if (logical != (in->type == TFL_BOOL) ||
      !(in->type == TFL_FLOAT32 || in->type == TFL_INT32 || logical ||
        (min_max && tfl_is_quantized(in))) ||
      !tfl_quant_matches(in, out))
    return tfl_fail(c, "unsupported types %s -> %s", tfl_type_name(in->type), tfl_type_name(out->type));
  if (!tfl_const_ints(c, 1, axes, TE_MAX_RANK, &n)) return c->error;
  te_value_t x = tfl_value_in(c, 0);
  if (!x.id) return c->error;
  /* ANY and ALL reduce 0/1 bytes: chained i1 reductions whose result keeps
   * its rank came out wrong from the compiler (reduce_all over axes 0 then
   * 2 of [3, 4, 5]). */
  if (logical) x = te_cast(&c->e, x, TE_I8);
  for (uint32_t i = 0; i < n; ++i) {
    int32_t a;
    if (!axis_in(axes[i], in->rank, &a)) return tfl_fail(c, "axis %lld out of range", (long long)axes[i]);
    if ((done >> a) & 1) continue;
    done |= 1u << a;
    x = te_reduce(&c->e, reducer(code), x, a);
  }
  if (logical) x = te_cast(&c->e, x, TE_I1);
  if (te_numel(&t) != te_numel(&x.type)) return tfl_fail(c, "the output disagrees with the reduced axes");
  return tfl_set_out(c, 0, te_reshape(&c->e, x, t.rank, t.dims));
}
