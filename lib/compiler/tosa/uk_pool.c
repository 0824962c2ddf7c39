/* Microkernel selection for max pools, on TOSA (the rest of the selection
 * is in uk_select.c).  A float tosa.max_pool2d on a static NHWC tensor
 * that propagates NaN becomes
 *
 *   %y = "tinyml.uk"(%x, %blob) {kind = "maxpool_f32", scratch = 0}
 *
 * whose blob is the parameter header alone (uk_abi.h, "f32 kinds").  The
 * Linalg path pads a copy of the input with the lowest float and then
 * pools it: three passes over memory where the kernel makes one.  Only
 * backends whose kernels have the f32 kinds get here.
 *
 * After the other fusions, a direct-sum conv_f32 whose result only such a
 * pool reads goes into it as kind "convpool_f32": SqueezeNet's and
 * ResNet's first conv writes 3 MB (111x111x64, 112x112x64 floats) that
 * the pool reads back, more than a core's L2, and on threads the two
 * phases' kernels slow most against one thread.  The kernel computes the
 * conv rows each band of pool rows needs into a window in its scratch. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../ukernels/uk_abi.h"
#include "uk_dwpw.h"
#include "uk_pool.h"

static int64_t dim(MlirValue v, intptr_t i) {
  return mlirShapedTypeGetDimSize(mlirValueGetType(v), i);
}

/* Static f32 of rank 4 and small enough for the int32 parameters. */
static int f32_nhwc(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  if (!mlirTypeIsARankedTensor(t) || !mlirShapedTypeHasStaticShape(t) ||
      mlirShapedTypeGetRank(t) != 4 || !mlirTypeIsAF32(mlirShapedTypeGetElementType(t)))
    return 0;
  int64_t n = 1;
  for (intptr_t i = 0; i < 4; ++i) {
    int64_t d = dim(v, i);
    if (d < 1 || d > (1 << 24) || (n *= d) > (1 << 30)) return 0;
  }
  return 1;
}

/* NaN propagation is the default; IGNORE lowers to other Linalg. */
static int propagates_nan(MlirOperation op) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str("nan_mode"));
  return mlirAttributeIsNull(a) || tc_attr_text_has(op, "nan_mode", "PROPAGATE");
}

/* The parameters of a pool the kernel takes; 0 when it does not. */
static int match_pool(MlirOperation op, tinyml_uk_params_t *p) {
  if (!tc_op_is(op, "tosa.max_pool2d") || mlirOperationGetNumOperands(op) != 1 ||
      mlirOperationGetNumResults(op) != 1)
    return 0;
  MlirValue x = mlirOperationGetOperand(op, 0), y = mlirOperationGetResult(op, 0);
  int64_t k[2], s[2], pad[4];
  if (!f32_nhwc(x) || !f32_nhwc(y) || !tc_i64_array(op, "kernel", 2, k) ||
      !tc_i64_array(op, "stride", 2, s) || !tc_i64_array(op, "pad", 4, pad) || !propagates_nan(op))
    return 0;
  for (int i = 0; i < 4; ++i)
    if (pad[i] < 0 || pad[i] > (1 << 24)) return 0;
  if (k[0] < 1 || k[1] < 1 || k[0] > (1 << 24) || k[1] > (1 << 24) || s[0] < 1 || s[1] < 1 ||
      s[0] > (1 << 24) || s[1] > (1 << 24) || dim(y, 0) != dim(x, 0) || dim(y, 3) != dim(x, 3))
    return 0;
  memset(p, 0, sizeof(*p));
  p->version = TINYML_UK_VERSION;
  p->kind = TINYML_UK_MAXPOOL_F32;
  p->batch = (int32_t)dim(x, 0);
  p->ih = (int32_t)dim(x, 1);
  p->iw = (int32_t)dim(x, 2);
  p->ic = p->oc = (int32_t)dim(x, 3);
  p->oh = (int32_t)dim(y, 1);
  p->ow = (int32_t)dim(y, 2);
  p->kh = (int32_t)k[0];
  p->kw = (int32_t)k[1];
  p->stride_h = (int32_t)s[0];
  p->stride_w = (int32_t)s[1];
  p->dil_h = p->dil_w = 1;
  p->pad_top = (int32_t)pad[0];
  p->pad_left = (int32_t)pad[2];
  p->k = p->k_padded = p->kh * p->kw <= (1 << 24) ? p->kh * p->kw : 0;
  p->oc_padded = p->oc;
  p->oc_block = p->k_block = 1;
  return p->k > 0;
}

/* Replaces the pool with the kernel op on a blob of its parameters. */
static int rewrite_pool(MlirContext ctx, MlirOperation op, const tinyml_uk_params_t *p,
                        const tinyml_allocator_t *a) {
  const size_t size = (sizeof(*p) + 63) / 64 * 64;
  uint8_t *blob = tinyml__calloc(a, size, 1, 64);
  if (!blob) return 0;
  memcpy(blob, p, sizeof(*p));
  MlirValue ops[2] = {mlirOperationGetOperand(op, 0), tc_uk_blob_const(ctx, blob, size, a, op)};
  MlirType t = mlirValueGetType(mlirOperationGetResult(op, 0));
  MlirOperation uk = tc_uk_op_create(ctx, mlirOperationGetLocation(op), ops[0], ops[1], t,
                                     "maxpool_f32", 0);
  mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(op), op, uk);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(op, 0), mlirOperationGetResult(uk, 0));
  mlirOperationDestroy(op);
  return 1;
}

unsigned tc_ukernels_select_pools(MlirContext ctx, MlirModule m, const tinyml_allocator_t *a) {
  static const char *const pools[] = {"tosa.max_pool2d", NULL};
  unsigned count, n = 0;
  MlirOperation *found = tc_collect_ops(mlirModuleGetOperation(m), pools, 1024, a, &count);
  if (!found) return 0; /* the Linalg path serves */
  count = tc_uk_drop_nested(found, count);
  for (unsigned i = 0; i < count; ++i) {
    tinyml_uk_params_t p;
    if (match_pool(found[i], &p)) n += (unsigned)rewrite_pool(ctx, found[i], &p, a);
  }
  tinyml__free(a, found);
  return n;
}

/* The convpool kernel's scratch: the pool's kh conv rows, then the conv's
 * im2col columns (uk_abi.h); at most the tuning's window_bytes, which stay
 * in a core's L2 beside the weights. */
static int64_t window_bytes(const tinyml_uk_params_t *c, const tinyml_uk_params_t *q) {
  return (int64_t)q->kh * q->iw * q->ic * 4 + (int64_t)tinyml_uk_window_cols(c) * c->k * 4;
}

static int fuse_conv(const tc_uk_pass_t *ps, MlirOperation pool) {
  MlirContext ctx = ps->ctx;
  const tinyml_allocator_t *al = ps->a;
  tinyml_uk_params_t c, q;
  MlirAttribute ca, qa;
  MlirValue x = mlirOperationGetOperand(pool, 0);
  MlirOperation cv = tc_value_owner_op(x);
  if (mlirOperationIsNull(cv) || !tc_uk_kind_is(cv, "conv_f32") ||
      mlirOperationGetNumOperands(cv) != 2 || !mlirOperationEqual(tc_sole_user(x), pool) ||
      !tc_uk_blob_params(mlirOperationGetOperand(cv, 1), &c, &ca) ||
      c.kind != TINYML_UK_CONV_F32 || c.wino_tiles != 0 ||
      !tc_uk_blob_params(mlirOperationGetOperand(pool, 1), &q, &qa) ||
      q.kind != TINYML_UK_MAXPOOL_F32 || c.batch != q.batch || c.oh != q.ih || c.ow != q.iw ||
      c.oc != q.ic || q.ih < TC_PWDWPW_ROWS)
    return 0;
  const int64_t scratch = window_bytes(&c, &q);
  if (scratch > ps->tuning->window_bytes) return 0;
  MlirValue blob = tc_uk_fused_blob(ctx, ca, qa, TINYML_UK_CONVPOOL_F32, scratch, pool, al);
  if (mlirValueIsNull(blob)) return 0;
  tc_uk_retarget(ctx, pool, cv, blob, "convpool_f32", scratch);
  return 1;
}

unsigned tc_ukernels_fuse_pool(const tc_uk_pass_t *pass, MlirModule m) {
  return tc_uk_fuse_all(pass, m, "maxpool_f32", NULL, fuse_conv);
}
