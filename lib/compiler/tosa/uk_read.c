/* Reading the TOSA a microkernel chain is made of (uk_read.h). */
#include "uk_read.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

MlirAttribute tc_uk_const_attr(MlirValue v) {
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

int tc_uk_elem_is(MlirValue v, unsigned bits) {
  MlirType t = mlirValueGetType(v);
  return sane_shape(t) && is_int(mlirShapedTypeGetElementType(t), bits);
}

int64_t tc_uk_dim(MlirValue v, intptr_t i) {
  return mlirShapedTypeGetDimSize(mlirValueGetType(v), i);
}

int64_t tc_uk_numel(MlirAttribute a) { return mlirElementsAttrGetNumElements(a); }

/* A constant scalar (any element count, all read as element 0). */
int tc_uk_const_int(MlirValue v, unsigned bits, int64_t *out) {
  MlirAttribute a = tc_uk_const_attr(v);
  if (mlirAttributeIsNull(a) || !tc_uk_elem_is(v, bits) || tc_uk_numel(a) < 1) return 0;
  *out = bits == 8 ? mlirDenseElementsAttrGetInt8Value(a, 0)
                   : mlirDenseElementsAttrGetInt32Value(a, 0);
  return 1;
}

/* The NHWC shapes and the window (pad, stride, dilation) of a conv or
 * depthwise conv, for either element type; 0 when an attribute is missing
 * or the window is degenerate. */
int tc_uk_read_window(tinyml_uk_params_t *p, MlirOperation op, MlirValue x, MlirValue w,
                       MlirValue y, int depthwise) {
  int64_t pad[4], stride[2], dil[2];
  if (!tc_i64_array(op, "pad", 4, pad) || !tc_i64_array(op, "stride", 2, stride) ||
      !tc_i64_array(op, "dilation", 2, dil))
    return 0;
  p->batch = (int32_t)tc_uk_dim(x, 0);
  p->ih = (int32_t)tc_uk_dim(x, 1);
  p->iw = (int32_t)tc_uk_dim(x, 2);
  p->ic = (int32_t)tc_uk_dim(x, 3);
  p->oh = (int32_t)tc_uk_dim(y, 1);
  p->ow = (int32_t)tc_uk_dim(y, 2);
  p->oc = (int32_t)tc_uk_dim(y, 3);
  p->kh = (int32_t)tc_uk_dim(w, depthwise ? 0 : 1);
  p->kw = (int32_t)tc_uk_dim(w, depthwise ? 1 : 2);
  p->stride_h = (int32_t)stride[0];
  p->stride_w = (int32_t)stride[1];
  p->dil_h = (int32_t)dil[0];
  p->dil_w = (int32_t)dil[1];
  p->pad_top = (int32_t)pad[0];
  p->pad_left = (int32_t)pad[2];
  return p->batch > 0 && p->oh > 0 && p->ow > 0 && p->oc > 0 && p->stride_h > 0 &&
         p->stride_w > 0 && p->dil_h > 0 && p->dil_w > 0 && pad[0] >= 0 && pad[2] >= 0;
}

int tc_uk_is_f32(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  return sane_shape(t) && mlirTypeIsAF32(mlirShapedTypeGetElementType(t));
}

intptr_t tc_uk_rank(MlirValue v) { return mlirShapedTypeGetRank(mlirValueGetType(v)); }

/* Reads element i of a constant f32 attribute (element 0 of a splat). */
float tc_uk_f32_at(MlirAttribute a, int64_t i) {
  if (mlirDenseElementsAttrIsSplat(a)) return mlirDenseElementsAttrGetFloatValue(a, 0);
  float v;
  memcpy(&v, (const char *)mlirDenseElementsAttrGetRawData(a) + 4 * i, 4);
  return v;
}

static int same_element(MlirValue a, MlirValue b) {
  MlirType ta = mlirValueGetType(a), tb = mlirValueGetType(b);
  return mlirTypeIsAShaped(ta) && mlirTypeIsAShaped(tb) &&
         mlirTypeEqual(mlirShapedTypeGetElementType(ta), mlirShapedTypeGetElementType(tb));
}

/* A slice from the origin that keeps batch and channels only drops rows
 * and columns at the end (the ONNX importer cuts those no window reads).
 * With no bottom or right padding, windows never reach the cut, so the
 * kernel can read the whole tensor (it takes the row pitch from iw) and
 * the copy the slice makes is saved (uk_read.h). */
MlirValue tc_uk_unsliced(MlirValue x, MlirOperation conv) {
  MlirOperation sl = tc_value_owner_op(x);
  int64_t pad[4];
  if (mlirOperationIsNull(sl) || !tc_op_is(sl, "tosa.slice") ||
      !tc_i64_array(conv, "pad", 4, pad) || pad[1] != 0 || pad[3] != 0)
    return x;
  MlirValue src = mlirOperationGetOperand(sl, 0);
  MlirOperation start = tc_value_owner_op(mlirOperationGetOperand(sl, 1));
  if (mlirOperationIsNull(start) || !tc_op_is(start, "tosa.const_shape") || !same_element(src, x) ||
      tc_uk_rank(src) != 4 || tc_uk_dim(src, 0) != tc_uk_dim(x, 0) ||
      tc_uk_dim(src, 3) != tc_uk_dim(x, 3))
    return x;
  MlirAttribute v = mlirOperationGetAttributeByName(start, tc_str("values"));
  if (mlirAttributeIsNull(v) || !mlirAttributeIsADenseElements(v) || tc_uk_numel(v) != 4) return x;
  for (intptr_t i = 0; i < 4; ++i)
    if (mlirDenseElementsAttrGetInt64Value(v, i) != 0) return x;
  return src;
}
