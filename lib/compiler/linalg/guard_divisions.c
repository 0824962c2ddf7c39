#include "guard_divisions.h"

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
