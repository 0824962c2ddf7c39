/* Matching an int8 chain (uk_match_s8.h): a quantised conv2d,
 * depthwise_conv2d or matmul whose int32 result only feeds a per-channel
 * rescale to int8, optionally then a clamp. */
#include "uk_match_s8.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "uk_read.h"

static int bool_attr(MlirOperation op, const char *name, int want) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str(name));
  return !mlirAttributeIsNull(a) && mlirAttributeIsABool(a) && mlirBoolAttrGetValue(a) == want;
}

static int fits_i32(int64_t v) { return v >= -2147483647 && v <= 2147483647; }

/* conv2d / depthwise_conv2d operands and attributes. */
static int match_conv(tc_uk_chain_t *c) {
  MlirOperation op = c->conv;
  int depthwise = tc_op_is(op, "tosa.depthwise_conv2d");
  if ((!depthwise && !tc_op_is(op, "tosa.conv2d")) || mlirOperationGetNumOperands(op) != 5)
    return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), w = mlirOperationGetOperand(op, 1);
  MlirValue b = mlirOperationGetOperand(op, 2), y = mlirOperationGetResult(op, 0);
  int64_t in_zp, w_zp;
  c->weights = tc_uk_const_attr(w);
  c->bias = tc_uk_const_attr(b);
  if (!tc_uk_elem_is(x, 8) || !tc_uk_elem_is(w, 8) || !tc_uk_elem_is(b, 32) ||
      !tc_uk_elem_is(y, 32) || mlirAttributeIsNull(c->weights) || mlirAttributeIsNull(c->bias) ||
      !mlirAttributeIsNull(tc_uk_const_attr(x)) ||
      !tc_uk_const_int(mlirOperationGetOperand(op, 3), 8, &in_zp) ||
      !tc_uk_const_int(mlirOperationGetOperand(op, 4), 8, &w_zp) || w_zp != 0)
    return 0;
  tinyml_uk_params_t *p = &c->p;
  p->kind = depthwise ? TINYML_UK_DEPTHWISE : TINYML_UK_CONV;
  /* ResNet-8's 1x1 stride-2 shortcuts read a 31x31 cut of 32x32: without
   * the copy, no second image of that size is alive in the arena. */
  c->input = tc_uk_unsliced(x, op);
  if (!tc_uk_read_window(p, op, c->input, w, y, depthwise)) return 0;
  if (depthwise && p->ic == 1 && tc_uk_dim(w, 2) == 1 && tc_uk_dim(w, 3) == p->oc) {
    /* One input channel times a multiplier is an ordinary conv whose
     * [kh][kw][1][oc] weights are the transpose of OHWI. */
    p->kind = TINYML_UK_CONV;
    c->w_transposed = 1;
  } else if (depthwise ? tc_uk_dim(w, 2) != p->ic || tc_uk_dim(w, 3) != 1 || p->oc != p->ic
                       : tc_uk_dim(w, 3) != p->ic || tc_uk_dim(w, 0) != p->oc) {
    return 0;
  }
  int64_t nb = tc_uk_numel(c->bias);
  if (nb != 1 && nb != p->oc) return 0;
  p->in_zp = (int32_t)in_zp;
  c->acc = y;
  return 1;
}

/* A fully-connected layer: matmul [1,M,K] x const [1,K,N], then an add of
 * an N-element constant bias (or none).  It runs as a 1x1 conv over M
 * pixels, which is the same memory layout. */
static int match_matmul(tc_uk_chain_t *c) {
  MlirOperation op = c->conv;
  if (!tc_op_is(op, "tosa.matmul") || mlirOperationGetNumOperands(op) != 4) return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), w = mlirOperationGetOperand(op, 1);
  MlirValue y = mlirOperationGetResult(op, 0);
  int64_t in_zp, w_zp;
  c->weights = tc_uk_const_attr(w);
  if (!tc_uk_elem_is(x, 8) || !tc_uk_elem_is(w, 8) || !tc_uk_elem_is(y, 32) ||
      mlirAttributeIsNull(c->weights) || !mlirAttributeIsNull(tc_uk_const_attr(x)) ||
      tc_uk_dim(x, 0) != 1 || tc_uk_dim(w, 0) != 1 ||
      !tc_uk_const_int(mlirOperationGetOperand(op, 2), 8, &in_zp) ||
      !tc_uk_const_int(mlirOperationGetOperand(op, 3), 8, &w_zp) || w_zp != 0)
    return 0;
  tinyml_uk_params_t *p = &c->p;
  p->kind = TINYML_UK_CONV;
  p->batch = p->ih = p->oh = 1;
  p->iw = p->ow = (int32_t)tc_uk_dim(x, 1);
  p->ic = (int32_t)tc_uk_dim(x, 2);
  p->oc = (int32_t)tc_uk_dim(w, 2);
  p->kh = p->kw = p->stride_h = p->stride_w = p->dil_h = p->dil_w = 1;
  p->in_zp = (int32_t)in_zp;
  c->w_transposed = 1;
  c->acc = y;
  MlirOperation add = tc_sole_user(y);
  if (!mlirOperationIsNull(add) && tc_op_is(add, "tosa.add")) {
    MlirValue a0 = mlirOperationGetOperand(add, 0), a1 = mlirOperationGetOperand(add, 1);
    MlirValue b = mlirValueEqual(a0, y) ? a1 : a0;
    c->bias = tc_uk_const_attr(b);
    if (mlirAttributeIsNull(c->bias) || !tc_uk_elem_is(b, 32) ||
        (tc_uk_numel(c->bias) != 1 && tc_uk_numel(c->bias) != p->oc) ||
        !tc_uk_elem_is(mlirOperationGetResult(add, 0), 32))
      return 0;
    c->add = add;
    c->acc = mlirOperationGetResult(add, 0);
  }
  return tc_uk_dim(w, 1) == p->ic && p->iw > 0 && p->oc > 0;
}

/* The rescale to int8 TFLite's quantised kernels end with, then a clamp. */
static int match_rescale(tc_uk_chain_t *c) {
  MlirOperation r = tc_sole_user(c->acc);
  if (mlirOperationIsNull(r) || !tc_op_is(r, "tosa.rescale") ||
      mlirOperationGetNumOperands(r) != 5)
    return 0;
  MlirValue y = mlirOperationGetResult(r, 0);
  int64_t in_zp, out_zp;
  c->mult = tc_uk_const_attr(mlirOperationGetOperand(r, 1));
  c->shift = tc_uk_const_attr(mlirOperationGetOperand(r, 2));
  if (!tc_uk_elem_is(y, 8) || mlirAttributeIsNull(c->mult) || mlirAttributeIsNull(c->shift) ||
      !tc_uk_elem_is(mlirOperationGetOperand(r, 1), 32) ||
      !tc_uk_elem_is(mlirOperationGetOperand(r, 2), 8) ||
      !tc_uk_const_int(mlirOperationGetOperand(r, 3), 32, &in_zp) || in_zp != 0 ||
      !tc_uk_const_int(mlirOperationGetOperand(r, 4), 8, &out_zp) || !bool_attr(r, "scale32", 1) ||
      !bool_attr(r, "input_unsigned", 0) || !bool_attr(r, "output_unsigned", 0) ||
      !tc_attr_text_has(r, "rounding_mode", "DOUBLE_ROUND"))
    return 0;
  int64_t n = tc_uk_numel(c->mult);
  if ((n != 1 && n != c->p.oc) || tc_uk_numel(c->shift) != n) return 0;
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
      tc_uk_elem_is(mlirOperationGetResult(k, 0), 8)) {
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

int tc_uk_match_s8(tc_uk_chain_t *c) {
  return (match_conv(c) || match_matmul(c)) && match_rescale(c);
}
