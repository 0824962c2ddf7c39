/* The "tinyml.uk" op toolkit (ukernel_op.h). */
#include "ukernel_op.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/alloc.h"

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

int tc_uk_blob_params(MlirValue v, tinyml_uk_params_t *p, MlirAttribute *out) {
  MlirOperation c = tc_value_owner_op(v);
  if (mlirOperationIsNull(c) || !tc_op_is(c, "tosa.const")) return 0;
  MlirAttribute a = mlirOperationGetAttributeByName(c, tc_str("values"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseElements(a) ||
      mlirDenseElementsAttrIsSplat(a) || mlirElementsAttrGetNumElements(a) < (int64_t)sizeof(*p))
    return 0;
  memcpy(p, mlirDenseElementsAttrGetRawData(a), sizeof(*p));
  *out = a;
  return p->version == TINYML_UK_VERSION;
}

void tc_uk_drop_if_unused(MlirValue v) {
  MlirOperation op = tc_value_owner_op(v);
  if (!mlirOperationIsNull(op) && mlirOpOperandIsNull(mlirValueGetFirstUse(v)))
    mlirOperationDestroy(op);
}

int tc_uk_kind_is(MlirOperation op, const char *kind) {
  if (!tc_op_is(op, TC_UKERNEL_OP)) return 0;
  MlirAttribute k = mlirOperationGetAttributeByName(op, tc_str("kind"));
  return !mlirAttributeIsNull(k) && mlirAttributeIsAString(k) &&
         mlirStringRefEqual(mlirStringAttrGetValue(k), tc_str(kind));
}

/* Changes `op` (fuses or erases it, then returns 1) or leaves the IR as
 * it is (returns 0): a 1 without a change would never end the walk. */
typedef int (*top_op_fn)(MlirOperation op, void *arg);

/* Calls `visit` on each function's top-level ops in order, and starts
 * the function over after each change: a fusion erases ops around the
 * visited one, and an erased kernel may leave one before it that fed
 * only it dead.  Returns the changes. */
static unsigned walk_top_ops(MlirModule m, top_op_fn visit, void *arg) {
  unsigned n = 0;
  for (MlirOperation f = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
       !mlirOperationIsNull(f); f = mlirOperationGetNextInBlock(f)) {
    if (!tc_op_is(f, "func.func")) continue;
    MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
    if (mlirBlockIsNull(b)) continue;
    for (MlirOperation op = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(op);) {
      if (visit(op, arg)) {
        ++n;
        op = mlirBlockGetFirstOperation(b);
      } else {
        op = mlirOperationGetNextInBlock(op);
      }
    }
  }
  return n;
}

typedef struct fuse_walk {
  const tc_uk_pass_t *pass;
  const char *kind, *kind2;
  tc_uk_fuse_fn fuse;
} fuse_walk_t;

static int fuse_matching(MlirOperation op, void *arg) {
  const fuse_walk_t *w = arg;
  return (tc_uk_kind_is(op, w->kind) || (w->kind2 && tc_uk_kind_is(op, w->kind2))) &&
         w->fuse(w->pass, op);
}

unsigned tc_uk_fuse_all(const tc_uk_pass_t *pass, MlirModule m, const char *kind,
                        const char *kind2, tc_uk_fuse_fn fuse) {
  fuse_walk_t w = {pass, kind, kind2, fuse};
  return walk_top_ops(m, fuse_matching, &w);
}

static int erase_if_dead(MlirOperation op, void *arg) {
  (void)arg;
  if (!tc_op_is(op, TC_UKERNEL_OP) ||
      !mlirOpOperandIsNull(mlirValueGetFirstUse(mlirOperationGetResult(op, 0))))
    return 0;
  mlirOperationDestroy(op);
  return 1;
}

unsigned tc_uk_erase_dead(MlirModule m) { return walk_top_ops(m, erase_if_dead, NULL); }

MlirValue tc_uk_fused_blob(MlirContext ctx, MlirAttribute da, MlirAttribute ca, int32_t kind,
                           int64_t scratch, MlirOperation before, const tinyml_allocator_t *al) {
  MlirValue none = {NULL};
  size_t dn = (size_t)mlirElementsAttrGetNumElements(da);
  size_t cn = (size_t)mlirElementsAttrGetNumElements(ca);
  size_t off = (dn + 63) / 64 * 64;
  if (off + cn > INT32_MAX || scratch > INT32_MAX) return none;
  uint8_t *blob = tinyml__calloc(al, 1, off + cn, 64);
  if (!blob) return none;
  memcpy(blob, mlirDenseElementsAttrGetRawData(da), dn);
  memcpy(blob + off, mlirDenseElementsAttrGetRawData(ca), cn);
  tinyml_uk_params_t *p = (tinyml_uk_params_t *)(void *)blob;
  p->kind = kind;
  p->next_off = (int32_t)off;
  p->scratch_bytes = (int32_t)scratch;
  return tc_uk_blob_const(ctx, blob, off + cn, al, before);
}

void tc_uk_take_loc(MlirOperation into, MlirOperation from) {
  if (mlirOperationIsNull(from)) return;
  MlirLocation locs[2] = {mlirOperationGetLocation(from), mlirOperationGetLocation(into)};
  mlirOperationSetLocation(into, mlirLocationFusedGet(mlirOperationGetContext(into), 2, locs,
                                                      mlirAttributeGetNull()));
}

void tc_uk_retarget(MlirContext ctx, MlirOperation into, MlirOperation from, MlirValue blob,
                    const char *kind, int64_t scratch) {
  tc_uk_take_loc(into, from);
  MlirValue old_from = mlirOperationGetOperand(from, 1),
            old_into = mlirOperationGetOperand(into, 1);
  mlirOperationSetOperand(into, 0, mlirOperationGetOperand(from, 0));
  mlirOperationSetOperand(into, 1, blob);
  mlirOperationSetAttributeByName(into, tc_str("kind"), mlirStringAttrGet(ctx, tc_str(kind)));
  mlirOperationSetAttributeByName(
      into, tc_str("scratch"), mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), scratch));
  mlirOperationDestroy(from);
  tc_uk_drop_if_unused(old_from);
  tc_uk_drop_if_unused(old_into);
}

unsigned tc_uk_drop_nested(MlirOperation *ops, unsigned count) {
  unsigned kept = 0;
  for (unsigned i = 0; i < count; ++i)
    if (tc_op_is(mlirOperationGetParentOperation(ops[i]), "func.func")) ops[kept++] = ops[i];
  return kept;
}
