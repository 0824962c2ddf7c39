/* Arithmetic on a model's data that could crash the caller's process is
 * made total here, on Linalg on tensors after TOSA lowering: integer
 * divisions that trap, and indices read from the data (run-time gathers)
 * that could point outside their tensor. */
#include "guards.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdint.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../mlir_util.h"

/* Where new ops go: just before the division. */
typedef struct at {
  MlirContext ctx;
  MlirBlock block;
  MlirOperation before;
  MlirLocation loc;
} at_t;

static MlirValue emit(const at_t *at, const char *name, intptr_t n, const MlirValue *operands,
                      MlirType result, const MlirNamedAttribute *attr) {
  MlirOperationState st = mlirOperationStateGet(tc_str(name), at->loc);
  mlirOperationStateAddOperands(&st, n, operands);
  mlirOperationStateAddResults(&st, 1, &result);
  if (attr) mlirOperationStateAddAttributes(&st, 1, attr);
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(at->block, at->before, op);
  return mlirOperationGetResult(op, 0);
}

static MlirValue constant(const at_t *at, MlirType t, int64_t v) {
  MlirNamedAttribute value =
      mlirNamedAttributeGet(mlirIdentifierGet(at->ctx, tc_str("value")), mlirIntegerAttrGet(t, v));
  return emit(at, "arith.constant", 0, NULL, t, &value);
}

static MlirValue equal(const at_t *at, MlirValue x, MlirValue y) {
  MlirNamedAttribute eq = mlirNamedAttributeGet(
      mlirIdentifierGet(at->ctx, tc_str("predicate")),
      mlirIntegerAttrGet(mlirIntegerTypeGet(at->ctx, 64), 0)); /* arith::CmpIPredicate::eq */
  const MlirValue operands[2] = {x, y};
  return emit(at, "arith.cmpi", 2, operands, mlirIntegerTypeGet(at->ctx, 1), &eq);
}

static MlirValue both(const at_t *at, const char *name, MlirValue x, MlirValue y) {
  const MlirValue operands[2] = {x, y};
  return emit(at, name, 2, operands, mlirIntegerTypeGet(at->ctx, 1), NULL);
}

static void guard(MlirOperation op, int is_signed) {
  MlirValue a = mlirOperationGetOperand(op, 0), b = mlirOperationGetOperand(op, 1);
  MlirType t = mlirValueGetType(b);
  if (!mlirTypeIsAInteger(t)) return; /* index math and vectors: not from TOSA data */
  const unsigned w = mlirIntegerTypeGetWidth(t);
  const at_t at = {mlirTypeGetContext(t), mlirOperationGetBlock(op), op,
                   mlirOperationGetLocation(op)};
  MlirValue bad = equal(&at, b, constant(&at, t, 0));
  if (is_signed && w >= 2 && w <= 64) {
    const int64_t min = w == 64 ? INT64_MIN : -((int64_t)1 << (w - 1));
    MlirValue overflow = both(&at, "arith.andi", equal(&at, a, constant(&at, t, min)),
                              equal(&at, b, constant(&at, t, -1)));
    bad = both(&at, "arith.ori", bad, overflow);
  }
  const MlirValue select[3] = {bad, constant(&at, t, 1), b};
  mlirOperationSetOperand(op, 1, emit(&at, "arith.select", 3, select, t, NULL));
}

static const char *const divisions[] = {"arith.divsi", "arith.remsi", "arith.floordivsi",
                                        "arith.ceildivsi", "arith.divui", "arith.remui",
                                        "arith.ceildivui", NULL};

tinyml_status_t tc_guard_divisions(MlirModule m, const tinyml_allocator_t *a) {
  unsigned count = 0;
  MlirOperation *ops = tc_collect_ops(mlirModuleGetOperation(m), divisions, 0, a, &count);
  if (!ops)
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY,
                               "compiler: out of memory guarding divisions");
  for (unsigned i = 0; i < count; ++i) {
    MlirStringRef n = mlirIdentifierStr(mlirOperationGetName(ops[i]));
    guard(ops[i], !(n.length >= 2 && n.data[n.length - 2] == 'u' && n.data[n.length - 1] == 'i'));
  }
  tinyml__free(a, ops);
  return TINYML_OK;
}

/* ---- data-dependent indices ------------------------------------------------ */

/* min(max(x, 0), hi) for an integer x. */
static MlirValue clamp(const at_t *at, MlirValue x, int64_t hi) {
  MlirType t = mlirValueGetType(x);
  const MlirValue lo_ops[2] = {x, constant(at, t, 0)};
  MlirValue y = emit(at, "arith.maxsi", 2, lo_ops, t, NULL);
  const MlirValue hi_ops[2] = {y, constant(at, t, hi)};
  return emit(at, "arith.minsi", 2, hi_ops, t, NULL);
}

/* Clamps each index of `op` (tensor.extract or tensor.insert, whose indices
 * start at operand `first`) that is an integer cast to index, that is, a
 * value computed from the data, to the static extent of its dimension. */
static void guard_indices(MlirOperation op, intptr_t first) {
  MlirType tt = mlirValueGetType(mlirOperationGetOperand(op, first - 1));
  if (!mlirTypeIsARankedTensor(tt)) return;
  const at_t at = {mlirTypeGetContext(tt), mlirOperationGetBlock(op), op,
                   mlirOperationGetLocation(op)};
  for (intptr_t d = 0; d < mlirShapedTypeGetRank(tt); ++d) {
    MlirValue idx = mlirOperationGetOperand(op, first + d);
    if (!mlirValueIsAOpResult(idx)) continue;
    MlirOperation cast = mlirOpResultGetOwner(idx);
    if (!tc_op_is(cast, "arith.index_cast") || mlirShapedTypeIsDynamicDim(tt, d)) continue;
    MlirValue x = mlirOperationGetOperand(cast, 0);
    if (!mlirTypeIsAInteger(mlirValueGetType(x))) continue;
    int64_t extent = mlirShapedTypeGetDimSize(tt, d);
    MlirValue safe = clamp(&at, x, extent > 0 ? extent - 1 : 0);
    mlirOperationSetOperand(op, first + d,
                            emit(&at, "arith.index_cast", 1, &safe, mlirValueGetType(idx), NULL));
  }
}

static const char *const indexed[] = {"tensor.extract", "tensor.insert", NULL};

tinyml_status_t tc_guard_indices(MlirModule m, const tinyml_allocator_t *a) {
  unsigned count = 0;
  MlirOperation *ops = tc_collect_ops(mlirModuleGetOperation(m), indexed, 0, a, &count);
  if (!ops)
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY,
                               "compiler: out of memory guarding indices");
  /* tensor.extract %t[...]; tensor.insert %v into %t[...] */
  for (unsigned i = 0; i < count; ++i)
    guard_indices(ops[i], tc_op_is(ops[i], "tensor.extract") ? 1 : 2);
  tinyml__free(a, ops);
  return TINYML_OK;
}
