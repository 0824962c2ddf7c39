/* Microkernel selection, on TOSA.  A chain the target's kernels compute
 * exactly (uk_match_s8.h, uk_match_f32.h) becomes one op
 *
 *   %y = "tinyml.uk"(%x, %blob) {kind = "conv_s8"} : (tensor<..xi8>, tensor<Nxi8>) -> tensor<..xi8>
 *
 * where %blob is a constant holding the parameters, the per-channel bias,
 * multipliers and shifts, and the weights packed for the backend's kernel
 * (uk_pack.h, lib/ukernels/uk_abi.h).  Partitioning gives the op a
 * dispatch of its own and codegen/ukernel_lower.c turns that dispatch into
 * a call.  Anything that does not match exactly (other types, rounding
 * modes, zero points on weights, dynamic shapes, channel multipliers) is
 * left to the Linalg path. */
#include "uk_select.h"

#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "uk_match_f32.h"
#include "uk_match_s8.h"
#include "uk_matmul.h"
#include "uk_pack.h"
#include "uk_pool.h"
#include "ukernel_op.h"

/* Inserts TC_UKERNEL_OP {kind, scratch} on (conv input, blob) of type t
 * after c->last. */
static MlirOperation make_uk(MlirContext ctx, const tc_uk_chain_t *c, MlirValue blob, MlirType t,
                             const char *kind) {
  MlirValue x = mlirValueIsNull(c->input) ? mlirOperationGetOperand(c->conv, 0) : c->input;
  MlirOperation uk = tc_uk_op_create(ctx, mlirOperationGetLocation(c->last), x, blob, t, kind,
                                     c->p.scratch_bytes);
  mlirBlockInsertOwnedOperationAfter(mlirOperationGetBlock(c->last), c->last, uk);
  return uk;
}

static int rewrite(MlirContext ctx, tc_uk_chain_t *c, const tc_target_t *target,
                   const tinyml_allocator_t *a) {
  MlirValue blob = tc_uk_blob_s8(ctx, c, target, a, c->conv);
  if (mlirValueIsNull(blob)) return 0;
  MlirType t = mlirValueGetType(mlirOperationGetResult(c->last, 0));
  const char *kind = c->p.kind == TINYML_UK_CONV ? "conv_s8" : "depthwise_s8";
  MlirOperation uk = make_uk(ctx, c, blob, t, kind);
  MlirOperation absorbed[4] = {c->clamp, c->rescale, c->add, c->conv};
  for (int i = 0; i < 4; ++i) tc_uk_take_loc(uk, absorbed[i]);
  mlirValueReplaceAllUsesOfWith(mlirOperationGetResult(c->last, 0), mlirOperationGetResult(uk, 0));
  if (!mlirOperationIsNull(c->clamp)) mlirOperationDestroy(c->clamp);
  mlirOperationDestroy(c->rescale);
  if (!mlirOperationIsNull(c->add)) mlirOperationDestroy(c->add);
  mlirOperationDestroy(c->conv);
  return 1;
}

/* The kernel writes the conv's NHWC result with the epilogue applied.  A
 * transpose the tc_uk_chain went through is re-created on the kernel's result;
 * otherwise the result takes the last op's type (reshapes keep the
 * element order, so the bytes are the same). */
static int rewrite_f32(MlirContext ctx, tc_uk_chain_t *c, const tinyml_allocator_t *a) {
  const int mm = c->p.kind == TINYML_UK_MATMUL_F32;
  MlirValue blob =
      mm ? tc_uk_blob_matmul_f32(ctx, c, a, c->conv) : tc_uk_blob_f32(ctx, c, a, c->conv);
  if (mlirValueIsNull(blob)) return 0;
  MlirOperation typed = mlirOperationIsNull(c->transpose) ? c->last : c->conv;
  MlirType t = mlirValueGetType(mlirOperationGetResult(typed, 0));
  const char *kind = mm                                 ? TC_UK_MATMUL_F32
                     : c->p.kind == TINYML_UK_CONV_F32 ? "conv_f32"
                                                       : "depthwise_f32";
  MlirOperation uk = make_uk(ctx, c, blob, t, kind);
  if (mm) { /* B, which the kernel packs at run time, as its third operand */
    MlirValue ops[3] = {mlirOperationGetOperand(uk, 0), blob, mlirOperationGetOperand(c->conv, 1)};
    mlirOperationSetOperands(uk, 3, ops);
  }
  for (int i = c->n_epi; i-- > 0;) tc_uk_take_loc(uk, c->epi[i]);
  tc_uk_take_loc(uk, c->conv);
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
  count = tc_uk_drop_nested(found, count);
  unsigned n = 0;
  const int f32 = tc_target_has_f32_kernels(target);
  const tc_f32_tuning_t *tuning = &target->backend->ukernels.f32_tuning;
  for (unsigned i = 0; i < count; ++i) {
    tc_uk_chain_t c;
    memset(&c, 0, sizeof(c));
    c.conv = found[i];
    if (f32 && tc_uk_match_f32(&c)) {
      c.tuning = tuning;
      c.winograd = winograd ? &tuning->winograd : NULL;
      n += (unsigned)rewrite_f32(ctx, &c, a);
      continue;
    }
    memset(&c, 0, sizeof(c));
    c.conv = found[i];
    if (tc_uk_match_s8(&c) && rewrite(ctx, &c, target, a)) ++n;
  }
  tinyml__free(a, found);
  if (f32) n += tc_ukernels_select_pools(ctx, m, a);
  if (out_count) *out_count = n;
  return TINYML_OK;
}
