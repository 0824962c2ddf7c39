/* Splits a microkernel dispatch over workgroups (see distribute.c for the
 * rest of the split).  ukernel_lower.c left its body as one call
 *
 *   func.call @tinyml_uk_<kind>(in, blob, out, scratch, %c0_i32, %c1_i32)
 *       {tinyml.workgroups = W}
 *
 * (the *_add_f32 kinds have a seventh, the residual; matmul_f32 its B)
 * whose kernel computes band wg
 * of count of the output pixels itself
 * (lib/ukernels/uk_abi.h).  On a target with threads the call becomes one
 * phase of W workgroups: it gets the function's workgroup index and
 * min(workgroup_count, W) (the runtime may pass more than W; the extra
 * workgroups then compute nothing), and the scratch argument grows to W
 * copies, one per workgroup.  Elsewhere the call keeps (0, 1) and its
 * scratch, so single-threaded targets (the Cortex-M's) pay nothing. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include "distribute.h"
#include "ukernel_lower.h"

static MlirWalkResult find_call(MlirOperation op, void *user) {
  if (!tc_op_is(op, "func.call") ||
      mlirAttributeIsNull(mlirOperationGetAttributeByName(op, tc_str(TC_UKERNEL_WORKGROUPS))))
    return MlirWalkResultAdvance;
  *(MlirOperation *)user = op;
  return MlirWalkResultInterrupt;
}

static MlirValue build(MlirContext ctx, const char *name, MlirValue *operands, intptr_t n,
                       MlirType type, MlirAttribute value, MlirOperation before) {
  MlirOperationState st = mlirOperationStateGet(tc_str(name), mlirLocationUnknownGet(ctx));
  mlirOperationStateAddOperands(&st, n, operands);
  mlirOperationStateAddResults(&st, 1, &type);
  if (!mlirAttributeIsNull(value)) {
    MlirNamedAttribute v = mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str("value")), value);
    mlirOperationStateAddAttributes(&st, 1, &v);
  }
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, op);
  return mlirOperationGetResult(op, 0);
}

static MlirValue to_i32(MlirContext ctx, MlirValue index, MlirOperation before) {
  return build(ctx, "arith.index_cast", &index, 1, mlirIntegerTypeGet(ctx, 32),
               mlirAttributeGetNull(), before);
}

/* Gives the scratch argument (the last before the index arguments) room
 * for `copies` workgroups; false unless it is what scratch.c makes of the
 * kernel's one allocation: an i8 buffer, viewed once.  The kernel then
 * finds copy wg at wg * its size (TINYML_UK_SCRATCH_STRIDE: scratch.c
 * rounds allocations up to 64 bytes too). */
static bool grow_scratch(MlirContext ctx, MlirOperation func, MlirBlock body, intptr_t index,
                         tc_dispatch_t *d, int64_t copies) {
  if (!d->scratch_size) return true;
  MlirValue arg = mlirBlockGetArgument(body, index);
  MlirType t = mlirValueGetType(arg);
  MlirOpOperand use = mlirValueGetFirstUse(arg);
  if (!mlirTypeIsAMemRef(t) || mlirShapedTypeGetRank(t) != 1 ||
      (uint64_t)mlirShapedTypeGetDimSize(t, 0) != d->scratch_size ||
      mlirOpOperandIsNull(use) || !mlirOpOperandIsNull(mlirOpOperandGetNextUse(use)) ||
      !tc_op_is(mlirOpOperandGetOwner(use), "memref.view"))
    return false;
  int64_t shape[1] = {(int64_t)d->scratch_size * copies};
  MlirType grown =
      mlirMemRefTypeContiguousGet(mlirIntegerTypeGet(ctx, 8), 1, shape, mlirAttributeGetNull());
  mlirValueSetType(arg, grown);
  MlirType ft = mlirTypeAttrGetValue(
      mlirOperationGetAttributeByName(func, tc_str("function_type")));
  intptr_t n = mlirFunctionTypeGetNumInputs(ft);
  MlirType ins[n];
  for (intptr_t i = 0; i < n; ++i) ins[i] = mlirFunctionTypeGetInput(ft, i);
  ins[index] = grown;
  mlirOperationSetAttributeByName(func, tc_str("function_type"),
                                  mlirTypeAttrGet(mlirFunctionTypeGet(ctx, n, ins, 0, NULL)));
  d->scratch_size = (uint64_t)shape[0];
  return true;
}

bool tc_distribute_ukernel(MlirContext ctx, MlirOperation func, tc_dispatch_t *d, bool split) {
  MlirOperation call = {NULL};
  mlirOperationWalk(func, find_call, &call, MlirWalkPreOrder);
  if (mlirOperationIsNull(call)) return false;
  MlirAttribute w = mlirOperationGetAttributeByName(call, tc_str(TC_UKERNEL_WORKGROUPS));
  int64_t bands = mlirAttributeIsAInteger(w) ? mlirIntegerAttrGetValueInt(w) : 1;
  mlirOperationRemoveAttributeByName(call, tc_str(TC_UKERNEL_WORKGROUPS));
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  intptr_t nargs = mlirBlockGetNumArguments(body); /* ends with phase, wg, count */
  if (!split || bands <= 1 || bands > 0xffff || mlirOperationGetNumOperands(call) < 6 ||
      !mlirOperationEqual(mlirOperationGetParentOperation(call), func) ||
      !grow_scratch(ctx, func, body, nargs - 4, d, bands))
    return true;
  MlirType index = mlirIndexTypeGet(ctx);
  MlirValue most = build(ctx, "arith.constant", NULL, 0, index, mlirIntegerAttrGet(index, bands),
                         call);
  MlirValue pair[2] = {mlirBlockGetArgument(body, nargs - 1), most};
  MlirValue count = build(ctx, "arith.minui", pair, 2, index, mlirAttributeGetNull(), call);
  mlirOperationSetOperand(call, 4, to_i32(ctx, mlirBlockGetArgument(body, nargs - 2), call));
  mlirOperationSetOperand(call, 5, to_i32(ctx, count, call));
  d->workgroups[0] = (uint32_t)bands;
  return true;
}
