/* Residual adds into f32 conv kernels, after the layout sink.
 *
 * A ResNet block ends in add(conv(...), skip) and a ReLU; MobileNetV2's
 * inverted residuals in add(conv(...), skip).  Left alone, the add (and
 * clamp) is a dispatch of its own that reads two activations and writes a
 * third, all of them too large for the caches.  The conv kernel can add the
 * skip tensor as it stores instead (uk_abi.h, tinyml_uk_conv_add_f32), so
 *
 *   %y = "tinyml.uk"(%x, %blob) {kind = "conv_f32"}
 *   %s = tosa.add %y, %skip          (either order)
 *   %r = tosa.clamp %s               (optional)
 *
 * becomes "tinyml.uk"(%x, %blob', %skip) {kind = "conv_add_f32"}, where
 * %blob' is %blob with the clamp's bounds.  Only a kernel whose own chain
 * has no clamp qualifies: TOSA clamps after the add, and so must the
 * kernel.  This runs after the layout sink because only then do the add's
 * operands meet in NHWC, the layout the kernel writes; and %skip must be
 * computed before the conv's op in the block, where the call will be. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../ukernels/uk_abi.h"
#include "uk_residual.h"

/* Whether `v` is available at `op`: a block argument, or made by an op
 * before `op` in the same block. */
static int defined_before(MlirValue v, MlirOperation op) {
  MlirOperation d = tc_value_owner_op(v);
  if (mlirOperationIsNull(d)) return mlirValueIsABlockArgument(v);
  if (!mlirBlockEqual(mlirOperationGetBlock(d), mlirOperationGetBlock(op))) return 0;
  for (MlirOperation o = mlirOperationGetNextInBlock(d); !mlirOperationIsNull(o);
       o = mlirOperationGetNextInBlock(o))
    if (mlirOperationEqual(o, op)) return 1;
  return 0;
}

static int is_inf_bits(int32_t bits, int negative) {
  float f;
  memcpy(&f, &bits, 4);
  return negative ? f == -__builtin_inff() : f == __builtin_inff();
}

/* The clamp after `sum` the kernel can take: bounds in *lo, *hi. */
static MlirOperation clamp_after(MlirValue sum, float *lo, float *hi) {
  MlirOperation k = tc_sole_user(sum), none = {NULL};
  if (mlirOperationIsNull(k) || !tc_op_is(k, "tosa.clamp") ||
      !mlirTypeEqual(mlirValueGetType(mlirOperationGetResult(k, 0)), mlirValueGetType(sum)))
    return none;
  MlirAttribute a = mlirOperationGetAttributeByName(k, tc_str("min_val"));
  MlirAttribute b = mlirOperationGetAttributeByName(k, tc_str("max_val"));
  /* nan_mode is an enum attribute: read as text, as the epilogue does. */
  if (mlirAttributeIsNull(a) || mlirAttributeIsNull(b) || !mlirAttributeIsAFloat(a) ||
      !mlirAttributeIsAFloat(b) || tc_attr_text_has(k, "nan_mode", "IGNORE"))
    return none;
  *lo = (float)mlirFloatAttrGetValueDouble(a);
  *hi = (float)mlirFloatAttrGetValueDouble(b);
  return *lo <= *hi ? k : none;
}

/* A copy of blob `a` with the clamp bounds, as a tosa.const before `at`. */
static MlirValue patched_blob(MlirContext ctx, MlirAttribute a, float lo, float hi,
                              MlirOperation at, const tinyml_allocator_t *al) {
  MlirValue none = {NULL};
  size_t size = (size_t)mlirElementsAttrGetNumElements(a);
  uint8_t *blob = tinyml__alloc(al, size, 64);
  if (!blob) return none;
  memcpy(blob, mlirDenseElementsAttrGetRawData(a), size);
  tinyml_uk_params_t *p = (tinyml_uk_params_t *)(void *)blob;
  memcpy(&p->act_min, &lo, 4);
  memcpy(&p->act_max, &hi, 4);
  return tc_uk_blob_const(ctx, blob, size, al, at);
}

static int fuse_one(const tc_uk_pass_t *ps, MlirOperation uk) {
  MlirContext ctx = ps->ctx;
  const tinyml_allocator_t *al = ps->a;
  tinyml_uk_params_t p;
  MlirAttribute blob;
  MlirValue y = mlirOperationGetResult(uk, 0), skip;
  MlirOperation add = tc_sole_user(y);
  if (mlirOperationGetNumOperands(uk) != 2 || mlirOperationIsNull(add) ||
      !tc_op_is(add, "tosa.add") || mlirOperationGetNumOperands(add) != 2 ||
      !tc_uk_blob_params(mlirOperationGetOperand(uk, 1), &p, &blob) ||
      p.kind != TINYML_UK_CONV_F32 || !is_inf_bits(p.act_min, 1) || !is_inf_bits(p.act_max, 0))
    return 0;
  MlirValue a0 = mlirOperationGetOperand(add, 0), a1 = mlirOperationGetOperand(add, 1);
  skip = mlirValueEqual(a0, y) ? a1 : a0;
  MlirValue sum = mlirOperationGetResult(add, 0);
  MlirType t = mlirValueGetType(y);
  if (mlirValueEqual(skip, y) || !mlirTypeEqual(mlirValueGetType(skip), t) ||
      !mlirTypeEqual(mlirValueGetType(sum), t) || !defined_before(skip, uk))
    return 0;
  float lo = -__builtin_inff(), hi = __builtin_inff();
  MlirOperation clamp = clamp_after(sum, &lo, &hi);
  MlirValue nb = mlirOperationIsNull(clamp) ? mlirOperationGetOperand(uk, 1)
                                            : patched_blob(ctx, blob, lo, hi, uk, al);
  if (mlirValueIsNull(nb)) return 0;
  MlirValue ops[3] = {mlirOperationGetOperand(uk, 0), nb, skip};
  mlirOperationSetOperands(uk, 3, ops);
  mlirOperationSetAttributeByName(uk, tc_str("kind"),
                                  mlirStringAttrGet(ctx, tc_str("conv_add_f32")));
  MlirLocation mine = mlirOperationGetLocation(uk);
  tc_uk_take_loc(uk, clamp);
  tc_uk_take_loc(uk, add);
  /* The kernel's own operators first, then those it absorbed. */
  MlirLocation locs[2] = {mine, mlirOperationGetLocation(uk)};
  mlirOperationSetLocation(uk, mlirLocationFusedGet(ctx, 2, locs, mlirAttributeGetNull()));
  MlirOperation last = mlirOperationIsNull(clamp) ? add : clamp;
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(last, 0), y);
  if (!mlirOperationIsNull(clamp)) mlirOperationDestroy(clamp);
  mlirOperationDestroy(add);
  return 1;
}

unsigned tc_ukernels_fuse_residual(const tc_uk_pass_t *pass, MlirModule m) {
  return tc_uk_fuse_all(pass, m, "conv_f32", NULL, fuse_one);
}
