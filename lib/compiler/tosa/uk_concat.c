/* Two f32 conv kernels of one input into the channel concat that joins
 * them, after the layout sink (uk_abi.h, convcat_f32).
 *
 * SqueezeNet's fire modules end in a 1x1 and a 3x3 expansion of the same
 * squeezed tensor and a concat on channels.  Apart, each conv writes a
 * tensor of its own and the concat's copies read both and write them
 * again, a pass over memory and (on threads) two phases more.  So
 *
 *   %a = "tinyml.uk"(%x, %ablob) {kind = "conv_f32"}
 *   %b = "tinyml.uk"(%x, %bblob) {kind = "conv_f32"}
 *   %y = tosa.concat %a, %b {axis = <channels>}
 *
 * becomes "tinyml.uk"(%x, %blob) {kind = "convcat_f32"}, each conv
 * writing its channels of %y.  Only NHWC concats on the last dimension,
 * of convs with no other use and the same output pixels, qualify. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/alloc.h"
#include "uk_concat.h"

/* The conv kernel behind concat operand i: a plain conv_f32 whose only
 * user is the concat; its header in *p and elements in *blob. */
static MlirOperation conv_operand(MlirOperation cat, intptr_t i, tinyml_uk_params_t *p,
                                  MlirAttribute *blob) {
  MlirOperation none = {NULL};
  MlirValue v = mlirOperationGetOperand(cat, i);
  MlirOperation k = tc_value_owner_op(v);
  if (mlirOperationIsNull(k) || !tc_uk_kind_is(k, "conv_f32") ||
      mlirOperationGetNumOperands(k) != 2 || !mlirOperationEqual(tc_sole_user(v), cat) ||
      !tc_uk_blob_params(mlirOperationGetOperand(k, 1), p, blob) ||
      p->kind != TINYML_UK_CONV_F32)
    return none;
  return k;
}

/* Whether `cat` joins NHWC tensors on channels. */
static int on_channels(MlirOperation cat) {
  MlirType t = mlirValueGetType(mlirOperationGetResult(cat, 0));
  MlirAttribute axis = mlirOperationGetAttributeByName(cat, tc_str("axis"));
  return mlirTypeIsARankedTensor(t) && mlirShapedTypeGetRank(t) == 4 &&
         mlirShapedTypeHasStaticShape(t) && !mlirAttributeIsNull(axis) &&
         mlirAttributeIsAInteger(axis) && mlirIntegerAttrGetValueInt(axis) == 3;
}

/* The blob: a header (kind, scratch_bytes, next_off), conv a's blob with
 * next_off to conv b's, each at a 64-byte boundary. */
static MlirValue cat_blob(MlirContext ctx, MlirAttribute ea, MlirAttribute eb, int64_t scratch,
                          MlirOperation before, const tinyml_allocator_t *al) {
  MlirValue none = {NULL};
  size_t an = (size_t)mlirElementsAttrGetNumElements(ea);
  size_t bn = (size_t)mlirElementsAttrGetNumElements(eb);
  size_t ha = (sizeof(tinyml_uk_params_t) + 63) / 64 * 64, ab = (an + 63) / 64 * 64;
  if (ha + ab + bn > INT32_MAX) return none;
  uint8_t *blob = tinyml__calloc(al, 1, ha + ab + bn, 64);
  if (!blob) return none;
  tinyml_uk_params_t h;
  memset(&h, 0, sizeof(h));
  h.version = TINYML_UK_VERSION;
  h.kind = TINYML_UK_CONVCAT_F32;
  h.scratch_bytes = (int32_t)scratch;
  h.next_off = (int32_t)ha;
  memcpy(blob, &h, sizeof(h));
  memcpy(blob + ha, mlirDenseElementsAttrGetRawData(ea), an);
  memcpy(blob + ha + ab, mlirDenseElementsAttrGetRawData(eb), bn);
  tinyml_uk_params_t *a = (tinyml_uk_params_t *)(void *)(blob + ha);
  a->next_off = (int32_t)ab;
  return tc_uk_blob_const(ctx, blob, ha + ab + bn, al, before);
}

static int fuse_concat(const tc_uk_pass_t *ps, MlirOperation cat) {
  MlirContext ctx = ps->ctx;
  const tinyml_allocator_t *al = ps->a;
  tinyml_uk_params_t pa, pb;
  MlirAttribute ea, eb;
  if (mlirOperationGetNumOperands(cat) != 2 || !on_channels(cat)) return 0;
  MlirOperation a = conv_operand(cat, 0, &pa, &ea), b = conv_operand(cat, 1, &pb, &eb);
  if (mlirOperationIsNull(a) || mlirOperationIsNull(b) || mlirOperationEqual(a, b) ||
      !mlirValueEqual(mlirOperationGetOperand(a, 0), mlirOperationGetOperand(b, 0)) ||
      pa.batch != pb.batch || pa.oh != pb.oh || pa.ow != pb.ow)
    return 0;
  const int64_t scratch = pa.scratch_bytes > pb.scratch_bytes ? pa.scratch_bytes : pb.scratch_bytes;
  MlirValue blob = cat_blob(ctx, ea, eb, scratch, cat, al);
  if (mlirValueIsNull(blob)) return 0;
  MlirType t = mlirValueGetType(mlirOperationGetResult(cat, 0));
  MlirOperation uk =
      tc_uk_op_create(ctx, mlirOperationGetLocation(cat), mlirOperationGetOperand(a, 0), blob, t,
                      "convcat_f32", scratch);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(cat), cat, uk);
  tc_uk_take_loc(uk, b);
  tc_uk_take_loc(uk, a);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(cat, 0), mlirOperationGetResult(uk, 0));
  MlirValue old[2] = {mlirOperationGetOperand(a, 1), mlirOperationGetOperand(b, 1)};
  mlirOperationDestroy(cat);
  mlirOperationDestroy(a);
  mlirOperationDestroy(b);
  tc_uk_drop_if_unused(old[0]);
  if (!mlirValueEqual(old[1], old[0])) tc_uk_drop_if_unused(old[1]);
  return 1;
}

unsigned tc_ukernels_fuse_concat(const tc_uk_pass_t *pass, MlirModule m) {
  const tinyml_allocator_t *a = pass->a;
  static const char *const names[] = {"tosa.concat", NULL};
  unsigned count, n = 0;
  MlirOperation *found = tc_collect_ops(mlirModuleGetOperation(m), names, 4096, a, &count);
  if (!found) return 0;
  count = tc_uk_drop_nested(found, count);
  for (unsigned i = 0; i < count; ++i) n += (unsigned)fuse_concat(pass, found[i]);
  tinyml__free(a, found);
  return n;
}
