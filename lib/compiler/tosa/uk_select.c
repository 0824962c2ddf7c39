/* Microkernel selection, on TOSA.  int8: a quantised conv2d, depthwise_conv2d or
 * matmul whose int32 result only feeds a per-channel rescale to int8 (and
 * optionally a clamp) becomes one op
 *
 *   %y = "tinyml.uk"(%x, %blob) {kind = "conv_s8"} : (tensor<..xi8>, tensor<Nxi8>) -> tensor<..xi8>
 *
 * where %blob is a constant holding the parameters, the per-channel bias,
 * multipliers and shifts, and the weights packed for the backend's kernel
 * (lib/ukernels/uk_abi.h).  Partitioning gives the op a dispatch of its own
 * and ukernel_lower.c turns that dispatch into a call.  Anything that does
 * not match exactly (other types, rounding modes, zero points on weights,
 * dynamic shapes, channel multipliers) is left to the Linalg path.
 *
 * f32 (backends whose kernels have the f32 kinds): a float conv2d, depthwise_conv2d or matmul
 * with constant weights and zero points 0, and the per-channel ops after
 * it that the kernel applies as it stores (uk_abi.h, "f32 kinds"): a
 * multiply, an add, a clamp, each optional, in that order.  The ONNX
 * importer puts a transpose to NCHW between the conv and those ops; it is
 * moved after the kernel, where the canonicaliser cancels it against the
 * transpose back to NHWC that the next conv reads through. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../../ukernels/uk_abi.h"
#include "ukernel.h"

typedef struct chain {
  MlirOperation conv, add, rescale, clamp, last;
  MlirValue input;     /* what the kernel reads; null: the conv's input */
  MlirValue acc;       /* the int32 sum the rescale reads */
  int w_transposed;    /* matmul weights are [K][N], not [N][K] */
  tinyml_uk_params_t p;
  MlirAttribute weights, bias, mult, shift;
  /* f32: the ops after the conv that the kernel absorbs, in order; the
   * first may be a transpose, which moves after the kernel instead. */
  MlirOperation epi[8];
  int n_epi, chan_axis;
  MlirOperation transpose;
  MlirAttribute scale, offset; /* per-channel multiply and add, or null */
  float lo, hi;                /* the clamp */
  /* f32: the backend's tuning, and Winograd's when allowed (ukernel_wino.c) */
  const tc_f32_tuning_t *tuning;
  const tc_wino_tuning_t *winograd;
} chain_t;

/* ---- reading TOSA ------------------------------------------------------ */

static MlirAttribute const_attr(MlirValue v) {
  MlirOperation op = tc_value_owner_op(v);
  MlirAttribute none = {NULL};
  /* A reshape keeps element order, and the importers reshape weights. */
  while (!mlirOperationIsNull(op) && tc_op_is(op, "tosa.reshape"))
    op = tc_value_owner_op(mlirOperationGetOperand(op, 0));
  if (mlirOperationIsNull(op) || !tc_op_is(op, "tosa.const")) return none;
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str("values"));
  return !mlirAttributeIsNull(a) && mlirAttributeIsADenseElements(a) ? a : none;
}

static int is_int(MlirType t, unsigned bits) {
  return mlirTypeIsAInteger(t) && mlirIntegerTypeGetWidth(t) == bits;
}

/* Static, and small enough that every size and offset the kernels and the
 * blob use fits in int32: the parameters are int32 on every target. */
static int sane_shape(MlirType t) {
  if (!mlirTypeIsARankedTensor(t) || !mlirShapedTypeHasStaticShape(t)) return 0;
  int64_t n = 1;
  for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); ++i) {
    int64_t d = mlirShapedTypeGetDimSize(t, i);
    if (d < 1 || d > (1 << 24) || (n *= d) > (1 << 30)) return 0;
  }
  return 1;
}

static int elem_is(MlirValue v, unsigned bits) {
  MlirType t = mlirValueGetType(v);
  return sane_shape(t) && is_int(mlirShapedTypeGetElementType(t), bits);
}

static int64_t dim(MlirValue v, intptr_t i) {
  return mlirShapedTypeGetDimSize(mlirValueGetType(v), i);
}

static int64_t numel(MlirAttribute a) { return mlirElementsAttrGetNumElements(a); }

/* A constant scalar (any element count, all read as element 0). */
static int const_int(MlirValue v, unsigned bits, int64_t *out) {
  MlirAttribute a = const_attr(v);
  if (mlirAttributeIsNull(a) || !elem_is(v, bits) || numel(a) < 1) return 0;
  *out = bits == 8 ? mlirDenseElementsAttrGetInt8Value(a, 0)
                   : mlirDenseElementsAttrGetInt32Value(a, 0);
  return 1;
}

static int bool_attr(MlirOperation op, const char *name, int want) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str(name));
  return !mlirAttributeIsNull(a) && mlirAttributeIsABool(a) && mlirBoolAttrGetValue(a) == want;
}

static int fits_i32(int64_t v) { return v >= -2147483647 && v <= 2147483647; }

/* ---- matching ---------------------------------------------------------- */

/* The NHWC shapes and the window (pad, stride, dilation) of a conv or
 * depthwise conv, for either element type; 0 when an attribute is missing
 * or the window is degenerate. */
static int read_window(tinyml_uk_params_t *p, MlirOperation op, MlirValue x, MlirValue w,
                       MlirValue y, int depthwise) {
  int64_t pad[4], stride[2], dil[2];
  if (!tc_i64_array(op, "pad", 4, pad) || !tc_i64_array(op, "stride", 2, stride) ||
      !tc_i64_array(op, "dilation", 2, dil))
    return 0;
  p->batch = (int32_t)dim(x, 0);
  p->ih = (int32_t)dim(x, 1);
  p->iw = (int32_t)dim(x, 2);
  p->ic = (int32_t)dim(x, 3);
  p->oh = (int32_t)dim(y, 1);
  p->ow = (int32_t)dim(y, 2);
  p->oc = (int32_t)dim(y, 3);
  p->kh = (int32_t)dim(w, depthwise ? 0 : 1);
  p->kw = (int32_t)dim(w, depthwise ? 1 : 2);
  p->stride_h = (int32_t)stride[0];
  p->stride_w = (int32_t)stride[1];
  p->dil_h = (int32_t)dil[0];
  p->dil_w = (int32_t)dil[1];
  p->pad_top = (int32_t)pad[0];
  p->pad_left = (int32_t)pad[2];
  return p->batch > 0 && p->oh > 0 && p->ow > 0 && p->oc > 0 && p->stride_h > 0 &&
         p->stride_w > 0 && p->dil_h > 0 && p->dil_w > 0 && pad[0] >= 0 && pad[2] >= 0;
}

/* conv2d / depthwise_conv2d operands and attributes. */
static int match_conv(chain_t *c) {
  MlirOperation op = c->conv;
  int depthwise = tc_op_is(op, "tosa.depthwise_conv2d");
  if ((!depthwise && !tc_op_is(op, "tosa.conv2d")) || mlirOperationGetNumOperands(op) != 5)
    return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), w = mlirOperationGetOperand(op, 1);
  MlirValue b = mlirOperationGetOperand(op, 2), y = mlirOperationGetResult(op, 0);
  int64_t in_zp, w_zp;
  c->weights = const_attr(w);
  c->bias = const_attr(b);
  if (!elem_is(x, 8) || !elem_is(w, 8) || !elem_is(b, 32) || !elem_is(y, 32) ||
      mlirAttributeIsNull(c->weights) || mlirAttributeIsNull(c->bias) ||
      !mlirAttributeIsNull(const_attr(x)) ||
      !const_int(mlirOperationGetOperand(op, 3), 8, &in_zp) ||
      !const_int(mlirOperationGetOperand(op, 4), 8, &w_zp) || w_zp != 0)
    return 0;
  tinyml_uk_params_t *p = &c->p;
  p->kind = depthwise ? TINYML_UK_DEPTHWISE : TINYML_UK_CONV;
  if (!read_window(p, op, x, w, y, depthwise)) return 0;
  if (depthwise && p->ic == 1 && dim(w, 2) == 1 && dim(w, 3) == p->oc) {
    /* One input channel times a multiplier is an ordinary conv whose
     * [kh][kw][1][oc] weights are the transpose of OHWI. */
    p->kind = TINYML_UK_CONV;
    c->w_transposed = 1;
  } else if (depthwise ? dim(w, 2) != p->ic || dim(w, 3) != 1 || p->oc != p->ic
                       : dim(w, 3) != p->ic || dim(w, 0) != p->oc) {
    return 0;
  }
  int64_t nb = numel(c->bias);
  if (nb != 1 && nb != p->oc) return 0;
  p->in_zp = (int32_t)in_zp;
  c->acc = y;
  return 1;
}

/* A fully-connected layer: matmul [1,M,K] x const [1,K,N], then an add of
 * an N-element constant bias (or none).  It runs as a 1x1 conv over M
 * pixels, which is the same memory layout. */
static int match_matmul(chain_t *c) {
  MlirOperation op = c->conv;
  if (!tc_op_is(op, "tosa.matmul") || mlirOperationGetNumOperands(op) != 4) return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), w = mlirOperationGetOperand(op, 1);
  MlirValue y = mlirOperationGetResult(op, 0);
  int64_t in_zp, w_zp;
  c->weights = const_attr(w);
  if (!elem_is(x, 8) || !elem_is(w, 8) || !elem_is(y, 32) || mlirAttributeIsNull(c->weights) ||
      !mlirAttributeIsNull(const_attr(x)) || dim(x, 0) != 1 || dim(w, 0) != 1 ||
      !const_int(mlirOperationGetOperand(op, 2), 8, &in_zp) ||
      !const_int(mlirOperationGetOperand(op, 3), 8, &w_zp) || w_zp != 0)
    return 0;
  tinyml_uk_params_t *p = &c->p;
  p->kind = TINYML_UK_CONV;
  p->batch = p->ih = p->oh = 1;
  p->iw = p->ow = (int32_t)dim(x, 1);
  p->ic = (int32_t)dim(x, 2);
  p->oc = (int32_t)dim(w, 2);
  p->kh = p->kw = p->stride_h = p->stride_w = p->dil_h = p->dil_w = 1;
  p->in_zp = (int32_t)in_zp;
  c->w_transposed = 1;
  c->acc = y;
  MlirOperation add = tc_sole_user(y);
  if (!mlirOperationIsNull(add) && tc_op_is(add, "tosa.add")) {
    MlirValue a0 = mlirOperationGetOperand(add, 0), a1 = mlirOperationGetOperand(add, 1);
    MlirValue b = mlirValueEqual(a0, y) ? a1 : a0;
    c->bias = const_attr(b);
    if (mlirAttributeIsNull(c->bias) || !elem_is(b, 32) ||
        (numel(c->bias) != 1 && numel(c->bias) != p->oc) ||
        !elem_is(mlirOperationGetResult(add, 0), 32))
      return 0;
    c->add = add;
    c->acc = mlirOperationGetResult(add, 0);
  }
  return dim(w, 1) == p->ic && p->iw > 0 && p->oc > 0;
}

/* The rescale to int8 TFLite's quantised kernels end with, then a clamp. */
static int match_rescale(chain_t *c) {
  MlirOperation r = tc_sole_user(c->acc);
  if (mlirOperationIsNull(r) || !tc_op_is(r, "tosa.rescale") ||
      mlirOperationGetNumOperands(r) != 5)
    return 0;
  MlirValue y = mlirOperationGetResult(r, 0);
  int64_t in_zp, out_zp;
  c->mult = const_attr(mlirOperationGetOperand(r, 1));
  c->shift = const_attr(mlirOperationGetOperand(r, 2));
  if (!elem_is(y, 8) || mlirAttributeIsNull(c->mult) || mlirAttributeIsNull(c->shift) ||
      !elem_is(mlirOperationGetOperand(r, 1), 32) || !elem_is(mlirOperationGetOperand(r, 2), 8) ||
      !const_int(mlirOperationGetOperand(r, 3), 32, &in_zp) || in_zp != 0 ||
      !const_int(mlirOperationGetOperand(r, 4), 8, &out_zp) ||
      !bool_attr(r, "scale32", 1) || !bool_attr(r, "input_unsigned", 0) ||
      !bool_attr(r, "output_unsigned", 0) ||
      !tc_attr_text_has(r, "rounding_mode", "DOUBLE_ROUND"))
    return 0;
  int64_t n = numel(c->mult);
  if ((n != 1 && n != c->p.oc) || numel(c->shift) != n) return 0;
  for (int64_t i = 0; i < n; ++i) {
    int32_t m = mlirDenseElementsAttrGetInt32Value(c->mult, i);
    int8_t s = mlirDenseElementsAttrGetInt8Value(c->shift, i);
    if (m < 0 || s < 2 || s > 62) return 0; /* apply_scale_32's domain */
  }
  c->rescale = c->last = r;
  c->p.out_zp = (int32_t)out_zp;
  c->p.act_min = -128;
  c->p.act_max = 127;
  MlirOperation k = tc_sole_user(y);
  int64_t lo, hi;
  if (!mlirOperationIsNull(k) && tc_op_is(k, "tosa.clamp") &&
      elem_is(mlirOperationGetResult(k, 0), 8)) {
    MlirAttribute a = mlirOperationGetAttributeByName(k, tc_str("min_val"));
    MlirAttribute b = mlirOperationGetAttributeByName(k, tc_str("max_val"));
    if (!mlirAttributeIsNull(a) && !mlirAttributeIsNull(b) && mlirAttributeIsAInteger(a) &&
        mlirAttributeIsAInteger(b)) {
      lo = mlirIntegerAttrGetValueInt(a);
      hi = mlirIntegerAttrGetValueInt(b);
      if (fits_i32(lo) && fits_i32(hi) && lo <= hi) {
        c->p.act_min = lo > -128 ? (int32_t)lo : -128;
        c->p.act_max = hi < 127 ? (int32_t)hi : 127;
        c->clamp = c->last = k;
      }
    }
  }
  return c->p.act_min <= c->p.act_max;
}

/* ---- matching f32 ---------------------------------------------------- */

static int is_f32(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  return sane_shape(t) && mlirTypeIsAF32(mlirShapedTypeGetElementType(t));
}

static intptr_t rank(MlirValue v) { return mlirShapedTypeGetRank(mlirValueGetType(v)); }

/* Reads element i of a constant f32 attribute (element 0 of a splat). */
static float f32_at(MlirAttribute a, int64_t i) {
  if (mlirDenseElementsAttrIsSplat(a)) return mlirDenseElementsAttrGetFloatValue(a, 0);
  float v;
  memcpy(&v, (const char *)mlirDenseElementsAttrGetRawData(a) + 4 * i, 4);
  return v;
}

static int const_f32_zero(MlirValue v) {
  MlirAttribute a = const_attr(v);
  return !mlirAttributeIsNull(a) && is_f32(v) && numel(a) == 1 && f32_at(a, 0) == 0.0f;
}

/* A slice from the origin that keeps batch and channels only drops rows
 * and columns at the end (the ONNX importer cuts those no window reads).
 * With no bottom or right padding, windows never reach the cut, so the
 * kernel can read the whole tensor (it takes the row pitch from iw) and
 * the copy the slice makes is saved. */
static MlirValue unsliced(MlirValue x, MlirOperation conv) {
  MlirOperation sl = tc_value_owner_op(x);
  int64_t pad[4];
  if (mlirOperationIsNull(sl) || !tc_op_is(sl, "tosa.slice") ||
      !tc_i64_array(conv, "pad", 4, pad) || pad[1] != 0 || pad[3] != 0)
    return x;
  MlirValue src = mlirOperationGetOperand(sl, 0);
  MlirOperation start = tc_value_owner_op(mlirOperationGetOperand(sl, 1));
  if (mlirOperationIsNull(start) || !tc_op_is(start, "tosa.const_shape") || !is_f32(src) ||
      rank(src) != 4 || dim(src, 0) != dim(x, 0) || dim(src, 3) != dim(x, 3))
    return x;
  MlirAttribute v = mlirOperationGetAttributeByName(start, tc_str("values"));
  if (mlirAttributeIsNull(v) || !mlirAttributeIsADenseElements(v) || numel(v) != 4) return x;
  for (intptr_t i = 0; i < 4; ++i)
    if (mlirDenseElementsAttrGetInt64Value(v, i) != 0) return x;
  return src;
}

static int match_conv_f32(chain_t *c) {
  MlirOperation op = c->conv;
  int depthwise = tc_op_is(op, "tosa.depthwise_conv2d");
  if ((!depthwise && !tc_op_is(op, "tosa.conv2d")) || mlirOperationGetNumOperands(op) != 5)
    return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), w = mlirOperationGetOperand(op, 1);
  MlirValue b = mlirOperationGetOperand(op, 2), y = mlirOperationGetResult(op, 0);
  c->weights = const_attr(w);
  c->bias = const_attr(b);
  if (!is_f32(x) || !is_f32(w) || !is_f32(b) || !is_f32(y) || rank(x) != 4 ||
      mlirAttributeIsNull(c->weights) || mlirAttributeIsNull(c->bias) ||
      !mlirAttributeIsNull(const_attr(x)) || !const_f32_zero(mlirOperationGetOperand(op, 3)) ||
      !const_f32_zero(mlirOperationGetOperand(op, 4)) ||
      !tc_attr_text_has(op, "acc_type", "f32"))
    return 0;
  tinyml_uk_params_t *p = &c->p;
  p->kind = depthwise ? TINYML_UK_DEPTHWISE_F32 : TINYML_UK_CONV_F32;
  c->input = unsliced(x, op);
  if (!read_window(p, op, c->input, w, y, depthwise)) return 0;
  if (depthwise ? dim(w, 2) != p->ic || dim(w, 3) != 1 || p->oc != p->ic
                : dim(w, 3) != p->ic || dim(w, 0) != p->oc)
    return 0;
  int64_t nb = numel(c->bias);
  if (nb != 1 && nb != p->oc) return 0;
  c->acc = y;
  c->chan_axis = 3;
  return 1;
}

/* matmul [1,M,K] x const [1,K,N]: a 1x1 conv over M pixels. */
static int match_matmul_f32(chain_t *c) {
  MlirOperation op = c->conv;
  if (!tc_op_is(op, "tosa.matmul") || mlirOperationGetNumOperands(op) != 4) return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), w = mlirOperationGetOperand(op, 1);
  MlirValue y = mlirOperationGetResult(op, 0);
  c->weights = const_attr(w);
  if (!is_f32(x) || !is_f32(w) || !is_f32(y) || mlirAttributeIsNull(c->weights) ||
      !mlirAttributeIsNull(const_attr(x)) || dim(x, 0) != 1 || dim(w, 0) != 1 ||
      !const_f32_zero(mlirOperationGetOperand(op, 2)) ||
      !const_f32_zero(mlirOperationGetOperand(op, 3)))
    return 0;
  tinyml_uk_params_t *p = &c->p;
  p->kind = TINYML_UK_CONV_F32;
  p->batch = p->ih = p->oh = 1;
  p->iw = p->ow = (int32_t)dim(x, 1);
  p->ic = (int32_t)dim(x, 2);
  p->oc = (int32_t)dim(w, 2);
  p->kh = p->kw = p->stride_h = p->stride_w = p->dil_h = p->dil_w = 1;
  c->w_transposed = 1;
  c->acc = y;
  c->chan_axis = 2;
  return dim(w, 1) == p->ic && p->iw > 0 && p->ic > 0 && p->oc > 0;
}

/* A constant operand of a per-channel op on `like`: its shape is like's
 * rank, all 1 but `axis`, which is 1 or oc. */
static MlirAttribute channel_const(const chain_t *c, MlirValue v, MlirValue like, int axis) {
  MlirAttribute none = {NULL}, a = const_attr(v);
  if (mlirAttributeIsNull(a) || !is_f32(v) || rank(v) != rank(like)) return none;
  for (intptr_t i = 0; i < rank(v); ++i) {
    int64_t d = dim(v, i);
    if (i == axis ? d != 1 && d != c->p.oc : d != 1) return none;
  }
  return numel(a) == 1 || numel(a) == c->p.oc ? a : none;
}

/* The operand of a binary op that is not `cur` (which must be exactly one). */
static int other_operand(MlirOperation op, MlirValue cur, MlirValue *other) {
  MlirValue a0 = mlirOperationGetOperand(op, 0), a1 = mlirOperationGetOperand(op, 1);
  int e0 = mlirValueEqual(a0, cur), e1 = mlirValueEqual(a1, cur);
  if (e0 == e1) return 0;
  *other = e0 ? a1 : a0;
  return 1;
}

/* A float attribute as float; 0 when absent or not a float. */
static int float_attr(MlirOperation op, const char *name, float *out) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str(name));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAFloat(a)) return 0;
  *out = (float)mlirFloatAttrGetValueDouble(a);
  return 1;
}

/* Collects the ops after the conv that the kernel can apply (chain_t.epi).
 * Layout ops (a transpose right after the conv, or reshapes that keep the
 * channels last) join only when a per-channel op follows them. */
static void match_epilogue_f32(chain_t *c) {
  MlirOperation ops[8];
  MlirValue cur = c->acc;
  int axis = c->chan_axis, stage = 0, n = 0, kept = 0, transposed = 0;
  c->lo = -__builtin_inff();
  c->hi = __builtin_inff();
  while (n < 8) {
    MlirOperation u = tc_sole_user(cur);
    if (mlirOperationIsNull(u) || mlirOperationGetNumResults(u) != 1) break;
    MlirValue r = mlirOperationGetResult(u, 0);
    int same = mlirTypeEqual(mlirValueGetType(r), mlirValueGetType(cur));
    MlirValue other;
    if (!is_f32(r)) break;
    if (tc_op_is(u, "tosa.transpose")) {
      MlirAttribute perms = mlirOperationGetAttributeByName(u, tc_str("perms"));
      if (n != 0 || mlirAttributeIsNull(perms) || !mlirAttributeIsADenseI32Array(perms) ||
          mlirDenseArrayGetNumElements(perms) != rank(cur))
        break;
      int to = -1;
      for (intptr_t i = 0; i < rank(cur); ++i)
        if (mlirDenseI32ArrayGetElement(perms, i) == axis) to = (int)i;
      if (to < 0) break;
      axis = to;
      transposed = 1;
    } else if (tc_op_is(u, "tosa.reshape")) {
      if (transposed || axis != rank(cur) - 1 || rank(r) < 1 || dim(r, rank(r) - 1) != c->p.oc)
        break;
      axis = (int)rank(r) - 1;
    } else if (tc_op_is(u, "tosa.mul") && stage < 1) {
      int64_t shift;
      MlirAttribute k;
      if (!same || mlirOperationGetNumOperands(u) != 3 || !other_operand(u, cur, &other) ||
          !const_int(mlirOperationGetOperand(u, 2), 8, &shift) || shift != 0 ||
          mlirAttributeIsNull(k = channel_const(c, other, cur, axis)))
        break;
      c->scale = k;
      stage = 1;
    } else if (tc_op_is(u, "tosa.add") && stage < 2) {
      MlirAttribute k;
      if (!same || mlirOperationGetNumOperands(u) != 2 || !other_operand(u, cur, &other) ||
          mlirAttributeIsNull(k = channel_const(c, other, cur, axis)))
        break;
      c->offset = k;
      stage = 2;
    } else if (tc_op_is(u, "tosa.clamp") && stage < 3) {
      float lo, hi;
      if (!same || mlirOperationGetNumOperands(u) != 1 || !float_attr(u, "min_val", &lo) ||
          !float_attr(u, "max_val", &hi) || !(lo <= hi) ||
          tc_attr_text_has(u, "nan_mode", "IGNORE"))
        break;
      c->lo = lo;
      c->hi = hi;
      stage = 3;
    } else {
      break;
    }
    ops[n++] = u;
    cur = r;
    if (!tc_op_is(u, "tosa.transpose") && !tc_op_is(u, "tosa.reshape")) kept = n;
  }
  c->n_epi = kept;
  for (int i = 0; i < kept; ++i) c->epi[i] = ops[i];
  c->transpose = kept && tc_op_is(ops[0], "tosa.transpose") ? ops[0] : (MlirOperation){NULL};
  c->last = kept ? ops[kept - 1] : c->conv;
}

/* ---- the blob ---------------------------------------------------------- */

static int32_t round_up(int32_t v, int32_t m) { return (v + m - 1) / m * m; }

/* Where tap k of channel o goes in the packed conv weights. */
static size_t packed_at(const tinyml_uk_params_t *p, const tc_ukernels_t *uk, int32_t o,
                        int32_t k) {
  static const int perm4[4] = {0, 2, 1, 3};
  const int32_t ob = p->oc_block, kb = p->k_block;
  int32_t t = k % kb;
  if (uk->k_perm) t = (t & ~3) | perm4[t & 3];
  return (size_t)(o / ob) * ob * p->k_padded + (size_t)(k / kb) * ob * kb +
         (size_t)(o % ob) * kb + (size_t)t;
}

static void pack_conv(const chain_t *c, const tc_ukernels_t *uk, int8_t *dst) {
  const tinyml_uk_params_t *p = &c->p;
  for (int32_t o = 0; o < p->oc; ++o)
    for (int32_t k = 0; k < p->k; ++k) {
      intptr_t from = c->w_transposed ? (intptr_t)k * p->oc + o : (intptr_t)o * p->k + k;
      dst[packed_at(p, uk, o, k)] = mlirDenseElementsAttrGetInt8Value(c->weights, from);
    }
}

/* dot4's bias - (in_zp + 128) * sum w (uk_abi.h), modulo 2^32 as the kernel
 * sums, from the bias and the packed weights already in the blob. */
static void fill_dot4_bias(const tinyml_uk_params_t *p, const tc_ukernels_t *uk,
                           uint8_t *blob) {
  const int32_t *bias = (const int32_t *)(const void *)(blob + p->bias_off);
  const int8_t *w = (const int8_t *)(blob + p->weights_off);
  uint32_t *bias4 = (uint32_t *)(void *)(blob + p->dot4);
  for (int32_t o = 0; o < p->oc; ++o) {
    uint32_t sum = 0;
    for (int32_t k = 0; k < p->k; ++k) sum += (uint32_t)w[packed_at(p, uk, o, k)];
    bias4[o] = (uint32_t)bias[o] - (uint32_t)(p->in_zp + 128) * sum;
  }
}

static void fill_channels(const chain_t *c, uint8_t *blob) {
  const tinyml_uk_params_t *p = &c->p;
  int32_t *bias = (int32_t *)(void *)(blob + p->bias_off);
  int32_t *mult = (int32_t *)(void *)(blob + p->mult_off);
  int32_t *shift = (int32_t *)(void *)(blob + p->shift_off);
  int64_t nb = mlirAttributeIsNull(c->bias) ? 0 : numel(c->bias), nm = numel(c->mult);
  for (int32_t o = 0; o < p->oc; ++o) {
    bias[o] = nb ? mlirDenseElementsAttrGetInt32Value(c->bias, nb == 1 ? 0 : o) : 0;
    mult[o] = mlirDenseElementsAttrGetInt32Value(c->mult, nm == 1 ? 0 : o);
    shift[o] = mlirDenseElementsAttrGetInt8Value(c->shift, nm == 1 ? 0 : o);
  }
  int32_t n16 = round_up(p->oc_padded, 16);
  for (int32_t o = p->oc; o < n16; ++o) shift[o] = 2;
  int64_t *round = (int64_t *)(void *)(blob + p->round_off);
  for (int32_t o = 0; o < n16; ++o) {
    int64_t r = (int64_t)1 << (shift[o] - 1), d = shift[o] > 31 ? (int64_t)1 << 30 : 0;
    round[o] = r + d;
    round[n16 + o] = r - d;
  }
  tinyml_uk_chan_t *ch = (tinyml_uk_chan_t *)(void *)(blob + p->chan_off);
  for (int32_t o = 0; o < p->oc_padded; ++o) {
    int32_t zp_sum = 0;
    for (int32_t t = 0; p->kind == TINYML_UK_DEPTHWISE && t < p->kh * p->kw; ++t)
      zp_sum += p->in_zp * mlirDenseElementsAttrGetInt8Value(c->weights, (intptr_t)t * p->ic + o);
    ch[o] = (tinyml_uk_chan_t){bias[o], mult[o], shift[o], zp_sum, round[o], round[n16 + o]};
  }
}

/* Lays out the blob; returns its size (0 when too large for int32 offsets). */
static size_t layout(chain_t *c, const tc_target_t *t) {
  const tc_ukernels_t *uk = &t->backend->ukernels;
  tinyml_uk_params_t *p = &c->p;
  p->version = TINYML_UK_VERSION;
  int64_t k = (int64_t)p->kh * p->kw * p->ic;
  if (k > (1 << 24) || p->oc > (1 << 20)) return 0;
  p->k = (int32_t)k;
  if (p->kind == TINYML_UK_CONV) {
    p->oc_block = uk->oc_block;
    p->k_block = uk->k_block;
    p->k_padded = round_up(round_up(p->k, p->k_block), 4);
    p->oc_padded = round_up(p->oc, p->oc_block);
    int64_t cols = t->ukernels->scratch_per_k / 2, pixels = (int64_t)p->oh * p->ow;
    if (uk->tail_columns && pixels < cols) cols = pixels;
    p->scratch_bytes = (int32_t)(2 * cols * p->k_padded);
  } else {
    p->oc_block = p->k_block = 1;
    p->k_padded = p->k;
    p->oc_padded = p->oc;
    p->scratch_bytes = 0;
  }
  /* Vector kernels read channel arrays 8 or 16 at a time. */
  int64_t chan = (int64_t)round_up(p->oc_padded, 16) * 4;
  int64_t w = p->kind == TINYML_UK_CONV ? (int64_t)p->oc_padded * p->k_padded : k;
  int64_t off = round_up((int32_t)sizeof(tinyml_uk_params_t), 16);
  p->bias_off = (int32_t)off;
  p->mult_off = (int32_t)(off += chan);
  p->shift_off = (int32_t)(off += chan);
  p->round_off = (int32_t)(off += chan);
  p->chan_off = (int32_t)(off += 4 * chan);
  off += (int64_t)p->oc_padded * (int64_t)sizeof(tinyml_uk_chan_t);
  if (p->kind == TINYML_UK_CONV && t->ukernels->dot4) {
    p->dot4 = (int32_t)off;
    off += chan;
  }
  p->weights_off = (int32_t)off;
  int64_t total = off + w;
  return total < (1LL << 30) ? (size_t)total : 0;
}

static MlirValue make_blob(MlirContext ctx, chain_t *c, const tc_target_t *t,
                           const tinyml_allocator_t *a, MlirOperation before) {
  MlirValue none = {NULL};
  size_t size = layout(c, t);
  uint8_t *blob = size ? tinyml__calloc(a, size, 1, 16) : NULL;
  if (!blob) return none;
  memcpy(blob, &c->p, sizeof(c->p));
  fill_channels(c, blob);
  int8_t *w = (int8_t *)(blob + c->p.weights_off);
  if (c->p.kind == TINYML_UK_CONV) {
    pack_conv(c, &t->backend->ukernels, w);
    if (c->p.dot4) fill_dot4_bias(&c->p, &t->backend->ukernels, blob);
  } else {
    for (int32_t i = 0; i < c->p.k; ++i) w[i] = mlirDenseElementsAttrGetInt8Value(c->weights, i);
  }
  return tc_uk_blob_const(ctx, blob, size, a, before);
}

MlirValue tc_uk_blob_const(MlirContext ctx, uint8_t *blob, size_t size,
                           const tinyml_allocator_t *a, MlirOperation before) {
  int64_t n = (int64_t)size;
  MlirType t = mlirRankedTensorTypeGet(1, &n, mlirIntegerTypeGet(ctx, 8), mlirAttributeGetNull());
  MlirAttribute values = mlirDenseElementsAttrRawBufferGet(t, size, blob);
  tinyml__free(a, blob);
  MlirLocation loc = mlirOperationGetLocation(before);
  MlirOperationState st = mlirOperationStateGet(tc_str("tosa.const"), loc);
  MlirNamedAttribute na = mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str("values")), values);
  mlirOperationStateAddAttributes(&st, 1, &na);
  mlirOperationStateAddResults(&st, 1, &t);
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, op);
  return mlirOperationGetResult(op, 0);
}


/* ---- the f32 blob ------------------------------------------------------ */

enum { F32_MB = TINYML_UK_F32_BLOCK }; /* pixels per im2col block */

/* Lays out an f32 blob (uk_abi.h, "f32 kinds"); returns its size, or 0. */
static size_t layout_f32(chain_t *c) {
  tinyml_uk_params_t *p = &c->p;
  p->version = TINYML_UK_VERSION;
  int64_t k = (int64_t)p->kh * p->kw * p->ic;
  if (k > (1 << 24) || p->oc > (1 << 20)) return 0;
  p->k = p->k_padded = (int32_t)k;
  p->k_block = 1;
  int64_t wfloats = k;
  p->scratch_bytes = 0;
  if (p->kind == TINYML_UK_CONV_F32) {
    p->oc_block = 16;
    p->oc_padded = round_up(p->oc, 8);
    wfloats = (int64_t)p->oc_padded * k;
    int direct = tinyml_uk_direct_1x1(p);
    p->wino_m = c->winograd ? tc_wino_m(c->winograd, p) : 0;
    p->wino_tiles = p->wino_m ? tc_wino_tiles(c->winograd, p) : 0;
    if (p->wino_tiles) {
      wfloats = (int64_t)(p->wino_m + 2) * (p->wino_m + 2) * p->ic * p->oc_padded;
      int64_t scratch = tc_wino_scratch(p);
      if (scratch > (1LL << 30)) return 0;
      p->scratch_bytes = (int32_t)scratch;
    } else if (!direct) {
      int64_t pixels = (int64_t)p->batch * p->oh * p->ow, mb = F32_MB;
      const int64_t most = c->tuning->im2col_bytes, mr = c->tuning->tile_rows;
      if (mb * k * 4 > most) mb = most / (k * 4) / mr * mr;
      if (mb < mr) mb = mr;
      if (mb > pixels) mb = pixels;
      if (mb * k * 4 > (1LL << 30)) return 0;
      p->scratch_bytes = (int32_t)(mb * k * 4);
    }
  } else {
    p->oc_block = 1;
    p->oc_padded = p->oc;
  }
  int64_t chan = (int64_t)round_up(p->oc_padded, 16) * 4;
  int64_t off = round_up((int32_t)sizeof(tinyml_uk_params_t), 64);
  p->bias_off = (int32_t)off;
  p->mult_off = (int32_t)(off += chan);
  p->shift_off = (int32_t)(off += chan);
  off += chan;
  p->weights_off = (int32_t)((off + 63) / 64 * 64);
  p->round_off = p->chan_off = 0;
  memcpy(&p->act_min, &c->lo, 4);
  memcpy(&p->act_max, &c->hi, 4);
  int64_t total = p->weights_off + 4 * wfloats;
  return total < (1LL << 30) ? (size_t)total : 0;
}

/* Where tap t of channel o goes among a conv's f32 weights of k taps. */
static int64_t f32_w_at(const tinyml_uk_params_t *p, int64_t k, int64_t t, int32_t o) {
  const int64_t ocp = p->oc_padded, k0 = t / TINYML_UK_F32_KC * TINYML_UK_F32_KC;
  const int64_t kc = tinyml_uk_f32_chunk((int32_t)k, (int32_t)k0);
  const int32_t o0 = o / 16 * 16, width = p->oc_padded - o0 >= 16 ? 16 : 8;
  return k0 * ocp + o0 * kc + (t - k0) * width + (o - o0);
}

/* U, (m + 2)^2 matrices of ic taps, each packed as a conv's weights with
 * k = ic. */
static void fill_wino(const chain_t *c, float *w) {
  const tinyml_uk_params_t *p = &c->p;
  const int64_t plane = (int64_t)p->ic * p->oc_padded;
  const int nn = (p->wino_m + 2) * (p->wino_m + 2);
  for (int32_t o = 0; o < p->oc; ++o)
    for (int32_t i = 0; i < p->ic; ++i) {
      float g[9], u[36];
      for (int32_t t = 0; t < 9; ++t) g[t] = f32_at(c->weights, ((int64_t)o * 9 + t) * p->ic + i);
      tc_wino_filter(g, p->wino_m, u);
      for (int xi = 0; xi < nn; ++xi) w[xi * plane + f32_w_at(p, p->ic, i, o)] = u[xi];
    }
}

static void fill_f32(const chain_t *c, uint8_t *blob) {
  const tinyml_uk_params_t *p = &c->p;
  float *bias = (float *)(void *)(blob + p->bias_off);
  float *scale = (float *)(void *)(blob + p->mult_off);
  float *offset = (float *)(void *)(blob + p->shift_off);
  float *w = (float *)(void *)(blob + p->weights_off);
  int64_t nb = mlirAttributeIsNull(c->bias) ? 0 : numel(c->bias);
  int64_t ns = mlirAttributeIsNull(c->scale) ? 0 : numel(c->scale);
  int64_t no = mlirAttributeIsNull(c->offset) ? 0 : numel(c->offset);
  int32_t n16 = round_up(p->oc_padded, 16);
  for (int32_t o = 0; o < n16; ++o) {
    int in = o < p->oc;
    bias[o] = in && nb ? f32_at(c->bias, nb == 1 ? 0 : o) : 0.0f;
    scale[o] = in && ns ? f32_at(c->scale, ns == 1 ? 0 : o) : 1.0f;
    offset[o] = in && no ? f32_at(c->offset, no == 1 ? 0 : o) : -0.0f;
  }
  if (p->kind != TINYML_UK_CONV_F32) {
    for (int32_t i = 0; i < p->k; ++i) w[i] = f32_at(c->weights, i);
    return;
  }
  const int64_t k = p->k;
  if (p->wino_tiles) {
    fill_wino(c, w);
    return;
  }
  for (int32_t o = 0; o < p->oc; ++o)
    for (int64_t t = 0; t < k; ++t)
      w[f32_w_at(p, k, t, o)] = f32_at(c->weights, c->w_transposed ? t * p->oc + o : o * k + t);
}

static MlirValue make_blob_f32(MlirContext ctx, chain_t *c, const tinyml_allocator_t *a,
                               MlirOperation before) {
  MlirValue none = {NULL};
  size_t size = layout_f32(c);
  uint8_t *blob = size ? tinyml__calloc(a, size, 1, 64) : NULL;
  if (!blob) return none;
  memcpy(blob, &c->p, sizeof(c->p));
  fill_f32(c, blob);
  return tc_uk_blob_const(ctx, blob, size, a, before);
}

/* ---- rewriting --------------------------------------------------------- */

MlirOperation tc_uk_op_create(MlirContext ctx, MlirLocation loc, MlirValue x, MlirValue blob,
                              MlirType t, const char *kind, int64_t scratch) {
  MlirValue ops[2] = {x, blob};
  MlirNamedAttribute attrs[2] = {
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str("kind")),
                            mlirStringAttrGet(ctx, tc_str(kind))),
      mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str("scratch")),
                            mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), scratch))};
  MlirOperationState st = mlirOperationStateGet(tc_str(TC_UKERNEL_OP), loc);
  mlirOperationStateAddOperands(&st, 2, ops);
  mlirOperationStateAddResults(&st, 1, &t);
  mlirOperationStateAddAttributes(&st, 2, attrs);
  return mlirOperationCreate(&st);
}

/* Inserts TC_UKERNEL_OP {kind, scratch} on (conv input, blob) of type t
 * after c->last. */
static MlirOperation make_uk(MlirContext ctx, const chain_t *c, MlirValue blob, MlirType t,
                             const char *kind) {
  MlirValue x = mlirValueIsNull(c->input) ? mlirOperationGetOperand(c->conv, 0) : c->input;
  MlirOperation uk = tc_uk_op_create(ctx, mlirOperationGetLocation(c->last), x, blob, t, kind,
                                     c->p.scratch_bytes);
  mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(c->last), c->last, uk);
  return uk;
}

static int rewrite(MlirContext ctx, chain_t *c, const tc_target_t *target,
                   const tinyml_allocator_t *a) {
  MlirValue blob = make_blob(ctx, c, target, a, c->conv);
  if (mlirValueIsNull(blob)) return 0;
  MlirType t = mlirValueGetType(mlirOperationGetResult(c->last, 0));
  const char *kind = c->p.kind == TINYML_UK_CONV ? "conv_s8" : "depthwise_s8";
  MlirOperation uk = make_uk(ctx, c, blob, t, kind);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(c->last, 0), mlirOperationGetResult(uk, 0));
  if (!mlirOperationIsNull(c->clamp)) mlirOperationDestroy(c->clamp);
  mlirOperationDestroy(c->rescale);
  if (!mlirOperationIsNull(c->add)) mlirOperationDestroy(c->add);
  mlirOperationDestroy(c->conv);
  return 1;
}

/* The kernel writes the conv's NHWC result with the epilogue applied.  A
 * transpose the chain went through is re-created on the kernel's result;
 * otherwise the result takes the last op's type (reshapes keep the
 * element order, so the bytes are the same). */
static int rewrite_f32(MlirContext ctx, chain_t *c, const tinyml_allocator_t *a) {
  MlirValue blob = make_blob_f32(ctx, c, a, c->conv);
  if (mlirValueIsNull(blob)) return 0;
  MlirOperation typed = mlirOperationIsNull(c->transpose) ? c->last : c->conv;
  MlirType t = mlirValueGetType(mlirOperationGetResult(typed, 0));
  const char *kind = c->p.kind == TINYML_UK_CONV_F32 ? "conv_f32" : "depthwise_f32";
  MlirOperation uk = make_uk(ctx, c, blob, t, kind);
  MlirValue result = mlirOperationGetResult(uk, 0);
  if (!mlirOperationIsNull(c->transpose)) {
    MlirOperation tr = mlirOperationClone(c->transpose);
    mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(uk), uk, tr);
    mlirOperationSetOperand(tr, 0, result);
    result = mlirOperationGetResult(tr, 0);
  }
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(c->last, 0), result);
  for (int i = c->n_epi; i-- > 0;) mlirOperationDestroy(c->epi[i]);
  mlirOperationDestroy(c->conv);
  return 1;
}

tinyml_status_t tc_ukernels_select(MlirContext ctx, MlirModule m, const tc_target_t *target,
                                   int winograd, const tinyml_allocator_t *a,
                                   unsigned *out_count) {
  mlirContextSetAllowUnregisteredDialects(ctx, true);
  static const char *const convs[] = {"tosa.conv2d", "tosa.depthwise_conv2d", "tosa.matmul",
                                       NULL};
  unsigned count;
  MlirOperation *found = tc_collect_ops(mlirModuleGetOperation(m), convs, 4096, a, &count);
  if (!found)
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  unsigned n = 0;
  const int f32 = tc_target_has_f32_kernels(target);
  const tc_f32_tuning_t *tuning = &target->backend->ukernels.f32_tuning;
  for (unsigned i = 0; i < count; ++i) {
    chain_t c;
    memset(&c, 0, sizeof(c));
    c.conv = found[i];
    if (f32 && (match_conv_f32(&c) || match_matmul_f32(&c))) {
      match_epilogue_f32(&c);
      c.tuning = tuning;
      c.winograd = winograd ? &tuning->winograd : NULL;
      n += (unsigned)rewrite_f32(ctx, &c, a);
      continue;
    }
    memset(&c, 0, sizeof(c));
    c.conv = found[i];
    if ((match_conv(&c) || match_matmul(&c)) && match_rescale(&c) && rewrite(ctx, &c, target, a))
      ++n;
  }
  tinyml__free(a, found);
  if (f32) n += tc_ukernels_select_pools(ctx, m, a); /* ukernel_pool.c */
  if (out_count) *out_count = n;
  return TINYML_OK;
}
