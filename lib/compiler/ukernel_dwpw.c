/* Depthwise convs into the 1x1 conv kernel that reads them, after the
 * residual adds went into theirs (ukernel_residual.c).
 *
 * MobileNetV2's blocks are a 1x1 expansion, a depthwise conv and a 1x1
 * projection.  Apart, the depthwise result (up to 56x56x144 floats, more
 * than a core's L2) is written by one dispatch and read back by the next,
 * and on threads the two are two phases, each a barrier and a pass over
 * memory the other core may hold.  So
 *
 *   %d = "tinyml.uk"(%x, %dblob) {kind = "depthwise_f32"}
 *   %y = "tinyml.uk"(%d, %cblob[, %skip]) {kind = "conv_f32" | "conv_add_f32"}
 *
 * becomes "tinyml.uk"(%x, %blob[, %skip]) {kind = "dwpw_f32" |
 * "dwpw_add_f32"} when %y's conv is 1x1, stride 1, unpadded and %d has no
 * other use; %blob is the two blobs as uk_abi.h lays them out, and the
 * kernel computes the depthwise result a chunk of pixels at a time in its
 * scratch. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../common/alloc.h"
#include "ukernel.h"

/* A chunk of the depthwise result: at most MID_PIXELS pixels (the
 * kernels' most per run, FB_MAX) and MID_BYTES, which stays in a core's
 * L2 while the conv reads it once per panel of output channels. */
enum { MID_PIXELS = 120, MID_BYTES = 128 << 10 };

/* Whether conv `c` reads depthwise `d`'s output as a 1x1 conv whose input
 * rows are its columns. */
static int pointwise_after(const tinyml_uk_params_t *c, const tinyml_uk_params_t *d) {
  return c->kh == 1 && c->kw == 1 && c->stride_h == 1 && c->stride_w == 1 && c->dil_h == 1 &&
         c->dil_w == 1 && c->pad_top == 0 && c->pad_left == 0 && c->scratch_bytes == 0 &&
         c->batch == d->batch && c->ih == d->oh && c->iw == d->ow && c->ic == d->ic &&
         c->oh == d->oh && c->ow == d->ow && c->k == d->ic;
}

/* Bytes of scratch for a chunk: enough pixels for a kernel's register
 * tiles (12) even when channels are many, never more than the image. */
static int32_t mid_bytes(const tinyml_uk_params_t *d) {
  int64_t pixels = (int64_t)d->batch * d->oh * d->ow, per = 4 * (int64_t)d->ic;
  int64_t n = MID_BYTES / per;
  n = n < 12 ? 12 : n > MID_PIXELS ? MID_PIXELS : n;
  return (int32_t)((n < pixels ? n : pixels) * per);
}

/* The fused blob: the depthwise one, retagged, then the conv's at a
 * 64-byte boundary. */
static MlirValue fused_blob(MlirContext ctx, MlirAttribute da, MlirAttribute ca,
                            MlirOperation before, const tinyml_allocator_t *al) {
  MlirValue none = {NULL};
  size_t dn = (size_t)mlirElementsAttrGetNumElements(da);
  size_t cn = (size_t)mlirElementsAttrGetNumElements(ca);
  size_t off = (dn + 63) / 64 * 64;
  if (off + cn > INT32_MAX) return none;
  uint8_t *blob = tinyml__calloc(al, 1, off + cn, 64);
  if (!blob) return none;
  memcpy(blob, mlirDenseElementsAttrGetRawData(da), dn);
  memcpy(blob + off, mlirDenseElementsAttrGetRawData(ca), cn);
  tinyml_uk_params_t *p = (tinyml_uk_params_t *)(void *)blob;
  p->kind = TINYML_UK_DWPW_F32;
  p->next_off = (int32_t)off;
  p->scratch_bytes = mid_bytes(p);
  return tc_uk_blob_const(ctx, blob, off + cn, al, before);
}

/* Erases the constant behind `v` once nothing uses it. */
static void drop_if_unused(MlirValue v) {
  MlirOperation op = tc_value_owner_op(v);
  if (!mlirOperationIsNull(op) && mlirOpOperandIsNull(mlirValueGetFirstUse(v)))
    mlirOperationDestroy(op);
}

static int fuse_one(MlirContext ctx, MlirOperation dw, const tinyml_allocator_t *al) {
  tinyml_uk_params_t d, c;
  MlirAttribute da, ca;
  MlirValue mid = mlirOperationGetResult(dw, 0);
  MlirOperation pw = tc_sole_user(mid);
  if (mlirOperationGetNumOperands(dw) != 2 || mlirOperationIsNull(pw)) return 0;
  const int add = tc_uk_kind_is(pw, "conv_add_f32");
  if ((!add && !tc_uk_kind_is(pw, "conv_f32")) ||
      !mlirValueEqual(mlirOperationGetOperand(pw, 0), mid) ||
      !tc_uk_blob_params(mlirOperationGetOperand(dw, 1), &d, &da) ||
      d.kind != TINYML_UK_DEPTHWISE_F32 ||
      !tc_uk_blob_params(mlirOperationGetOperand(pw, 1), &c, &ca) ||
      c.kind != TINYML_UK_CONV_F32 || !pointwise_after(&c, &d))
    return 0;
  MlirValue blob = fused_blob(ctx, da, ca, pw, al);
  if (mlirValueIsNull(blob)) return 0;
  MlirValue dblob = mlirOperationGetOperand(dw, 1), cblob = mlirOperationGetOperand(pw, 1);
  mlirOperationSetOperand(pw, 0, mlirOperationGetOperand(dw, 0));
  mlirOperationSetOperand(pw, 1, blob);
  mlirOperationSetAttributeByName(pw, tc_str("kind"),
                                  mlirStringAttrGet(ctx, tc_str(add ? "dwpw_add_f32" : "dwpw_f32")));
  mlirOperationSetAttributeByName(
      pw, tc_str("scratch"), mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), mid_bytes(&d)));
  mlirOperationDestroy(dw);
  drop_if_unused(dblob);
  drop_if_unused(cblob);
  return 1;
}

unsigned tc_ukernels_fuse_dwpw(MlirContext ctx, MlirModule m, const tinyml_allocator_t *a) {
  unsigned n = 0;
  for (MlirOperation f = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
       !mlirOperationIsNull(f); f = mlirOperationGetNextInBlock(f)) {
    if (!tc_op_is(f, "func.func")) continue;
    MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
    if (mlirBlockIsNull(b)) continue;
    /* A fusion erases ops around `op`: start over after each. */
    for (MlirOperation op = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(op);) {
      if (tc_uk_kind_is(op, "depthwise_f32") && fuse_one(ctx, op, a)) {
        ++n;
        op = mlirBlockGetFirstOperation(b);
      } else {
        op = mlirOperationGetNextInBlock(op);
      }
    }
  }
  return n;
}
