/* Kernels never allocate: every temporary that bufferization left as a
 * memref.alloc becomes a slice of one scratch argument, which the memory
 * planner places in the arena for the lifetime of that dispatch. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/status.h"
#include "scratch.h"

#define SCRATCH_ALIGN 64u

typedef struct nested_alloc {
  MlirOperation func;
  int found;
} nested_alloc_t;

static MlirWalkResult find_nested_alloc(MlirOperation op, void *user) {
  nested_alloc_t *n = user;
  if (!tc_op_is(op, "memref.alloc")) return MlirWalkResultAdvance;
  MlirOperation parent = mlirOperationGetParentOperation(op);
  if (!mlirOperationEqual(parent, n->func)) {
    n->found = 1;
    return MlirWalkResultInterrupt;
  }
  return MlirWalkResultAdvance;
}

static MlirValue index_constant(MlirContext ctx, MlirBlock block,
                                MlirOperation before, uint64_t value) {
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirType index = mlirIndexTypeGet(ctx);
  MlirOperationState st = mlirOperationStateGet(tc_str("arith.constant"), loc);
  MlirNamedAttribute v = mlirNamedAttributeGet(
      mlirIdentifierGet(ctx, tc_str("value")), mlirIntegerAttrGet(index, (int64_t)value));
  mlirOperationStateAddAttributes(&st, 1, &v);
  mlirOperationStateAddResults(&st, 1, &index);
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(block, before, op);
  return mlirOperationGetResult(op, 0);
}

static void replace_with_view(MlirContext ctx, MlirBlock block, MlirOperation alloc,
                              MlirValue scratch, uint64_t offset) {
  MlirValue off = index_constant(ctx, block, alloc, offset);
  MlirValue result = mlirOperationGetResult(alloc, 0);
  MlirType type = mlirValueGetType(result);
  MlirOperationState st =
      mlirOperationStateGet(tc_str("memref.view"), mlirLocationUnknownGet(ctx));
  MlirValue operands[2] = {scratch, off};
  mlirOperationStateAddOperands(&st, 2, operands);
  mlirOperationStateAddResults(&st, 1, &type);
  MlirOperation view = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(block, alloc, view);
  mlirValueReplaceAllUsesOfWith(result, mlirOperationGetResult(view, 0));
  mlirOperationDestroy(alloc);
}

static uint64_t alloc_bytes(MlirOperation alloc) {
  MlirType t = mlirValueGetType(mlirOperationGetResult(alloc, 0));
  uint64_t n = tc_type_byte_size(t);
  return (n + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
}

static void append_argument(MlirContext ctx, MlirOperation func, MlirType type) {
  MlirType ft = mlirTypeAttrGetValue(
      mlirOperationGetAttributeByName(func, tc_str("function_type")));
  intptr_t n = mlirFunctionTypeGetNumInputs(ft);
  MlirType ins[n + 1];
  for (intptr_t i = 0; i < n; ++i) ins[i] = mlirFunctionTypeGetInput(ft, i);
  ins[n] = type;
  mlirOperationSetAttributeByName(
      func, tc_str("function_type"),
      mlirTypeAttrGet(mlirFunctionTypeGet(ctx, n + 1, ins, 0, NULL)));
}

static tinyml_status_t rewrite_function(MlirContext ctx, MlirOperation func,
                                        tc_dispatch_t *d, const tinyml_allocator_t *a) {
  nested_alloc_t n = {func, 0};
  mlirOperationWalk(func, find_nested_alloc, &n, MlirWalkPreOrder);
  if (n.found)
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: a kernel allocates inside a loop; the "
                               "backend strategy must hoist allocations");
  MlirBlock block = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  uint64_t total = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    if (!tc_op_is(op, "memref.alloc")) continue;
    if (mlirOperationGetNumOperands(op) != 0 || !alloc_bytes(op))
      return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                                 "compiler: a kernel needs a dynamically sized buffer");
    total += alloc_bytes(op);
  }
  d->scratch_size = total;
  if (!total) return TINYML_OK;
  int64_t shape[1] = {(int64_t)total};
  MlirType st = mlirMemRefTypeContiguousGet(mlirIntegerTypeGet(ctx, 8), 1, shape,
                                           mlirAttributeGetNull());
  MlirValue scratch = mlirBlockAddArgument(block, st, mlirLocationUnknownGet(ctx));
  append_argument(ctx, func, st);
  uint64_t offset = 0;
  MlirOperation op = mlirBlockGetFirstOperation(block);
  while (!mlirOperationIsNull(op)) {
    MlirOperation next = mlirOperationGetNextInBlock(op);
    if (tc_op_is(op, "memref.alloc")) {
      uint64_t bytes = alloc_bytes(op);
      replace_with_view(ctx, block, op, scratch, offset);
      offset += bytes;
    } else if (tc_op_is(op, "memref.dealloc")) {
      mlirOperationDestroy(op);
    }
    op = next;
  }
  return TINYML_OK;
}

tinyml_status_t tc_allocs_to_scratch(MlirContext ctx, tc_graph_t *g,
                                     const tinyml_allocator_t *a) {
  MlirBlock body = mlirModuleGetBody(g->dispatch_module);
  for (MlirOperation f = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(f);
       f = mlirOperationGetNextInBlock(f)) {
    if (!tc_op_is(f, "func.func")) continue;
    const long idx = tc_dispatch_index(f, g->dispatch_count);
    if (idx < 0) continue;
    TINYML_RETURN_IF_ERROR(rewrite_function(ctx, f, &g->dispatches[idx], a));
  }
  return TINYML_OK;
}
