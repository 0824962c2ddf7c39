/* From the module of dispatch functions to the LLVM dialect (lower.h):
 * the backend's transform strategy, temporaries moved to scratch, the
 * split into phases and workgroups, then the backend's lowering. */
#include "lower.h"

#include <mlir-c/Dialect/Transform/Interpreter.h>

#include "../../common/status.h"
#include "../linalg/scratch.h"
#include "distribute.h"
#include "uk_specialise.h"
#include "ukernel_lower.h"

static tinyml_status_t diag_status(const tinyml_allocator_t *a, const tc_diag_t *diag,
                                   tinyml_status_code_t code, const char *what) {
  return tinyml__status_make(a, code, "%s: %s", what,
                             diag->len ? diag->text : "(no diagnostic)");
}

static tinyml_status_t apply_strategy(MlirContext ctx, const tc_target_t *t, tc_graph_t *g,
                                      tc_diag_t *diag, const tinyml_allocator_t *a) {
  MlirModule lib = mlirModuleCreateParse(ctx, tc_str(t->transform_script));
  if (mlirModuleIsNull(lib))
    return diag_status(a, diag, TINYML_STATUS_INTERNAL, "backend transform script");
  MlirOperation main = tc_transform_main(lib);
  tinyml_status_t st = TINYML_OK;
  if (mlirOperationIsNull(main)) {
    st = tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                             "backend '%s': transform script has no @__transform_main",
                             t->backend->name);
  } else {
    MlirTransformOptions opts = mlirTransformOptionsCreate();
    MlirLogicalResult r = mlirTransformApplyNamedSequence(
        mlirModuleGetOperation(g->dispatch_module), main,
        mlirModuleGetOperation(lib), opts);
    mlirTransformOptionsDestroy(opts);
    if (mlirLogicalResultIsFailure(r))
      st = diag_status(a, diag, TINYML_STATUS_UNSUPPORTED, "code generation strategy");
  }
  mlirModuleDestroy(lib);
  return st;
}

tinyml_status_t tc_lower_dispatches(MlirContext ctx, const tc_target_t *t, tc_graph_t *g,
                                    tc_diag_t *diag, const tinyml_allocator_t *a) {
  MlirOperation m = mlirModuleGetOperation(g->dispatch_module);
  TINYML_RETURN_IF_ERROR(tc_ukernels_lower(ctx, g, diag, a));
  tc_ukernels_specialise(ctx, t, g);
  TINYML_RETURN_IF_ERROR(tc_run_pipeline(ctx, m,
                                         "builtin.module(canonicalize,eliminate-empty-tensors)",
                                         diag, a, "preparing dispatches"));
  TINYML_RETURN_IF_ERROR(apply_strategy(ctx, t, g, diag, a));
  /* A run-time loop's temporaries (scf.while, partition.c) are allocated
   * inside it, and an scf.if's (tosa.cond_if in TOSA text) in its
   * branches: moved out, once, they become scratch like any other. */
  TINYML_RETURN_IF_ERROR(tc_run_pipeline(ctx, m,
                                         "builtin.module(func.func(buffer-hoisting,buffer-loop-hoisting))",
                                         diag, a, "hoisting loop buffers"));
  TINYML_RETURN_IF_ERROR(tc_allocs_to_scratch(ctx, g, a));
  TINYML_RETURN_IF_ERROR(tc_distribute(ctx, t->backend, g, diag, a));
  return tc_run_pipeline(ctx, m, t->backend->lowering_pipeline, diag, a, "lowering to LLVM");
}
