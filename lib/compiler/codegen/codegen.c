/* From the module of dispatch functions to an object file: applies the
 * backend's transform strategy, moves temporaries to scratch, lowers to the
 * LLVM dialect, then adds the executable ABI (lib/module/executable_abi.h)
 * with LLVM-C and emits code for the requested CPU. */
#include "codegen.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/Dialect/Transform/Interpreter.h>
#include <mlir-c/Target/LLVMIR.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/list.h"
#include "../../common/status.h"
#include "../../module/executable_abi.h"
#include "distribute.h"
#include "../tosa/ukernel.h"

static tinyml_status_t diag_status(const tinyml_allocator_t *a, const tc_diag_t *diag,
                                   tinyml_status_code_t code, const char *what) {
  return tinyml__status_make(a, code, "%s: %s", what,
                             diag->len ? diag->text : "(no diagnostic)");
}

static MlirOperation find_transform_main(MlirModule lib) {
  MlirOperation none = {NULL};
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(lib));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute n = mlirOperationGetAttributeByName(op, tc_str("sym_name"));
    if (!mlirAttributeIsNull(n) && mlirAttributeIsAString(n) &&
        mlirStringRefEqual(mlirStringAttrGetValue(n), tc_str("__transform_main")))
      return op;
  }
  return none;
}

static tinyml_status_t apply_strategy(MlirContext ctx, const tc_target_t *t, tc_graph_t *g,
                                      tc_diag_t *diag, const tinyml_allocator_t *a) {
  MlirModule lib = mlirModuleCreateParse(ctx, tc_str(t->transform_script));
  if (mlirModuleIsNull(lib))
    return diag_status(a, diag, TINYML_STATUS_INTERNAL, "backend transform script");
  MlirOperation main = find_transform_main(lib);
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
  TINYML_RETURN_IF_ERROR(tc_run_pipeline(ctx, m,
                                         "builtin.module(canonicalize,eliminate-empty-tensors)",
                                         diag, a, "preparing dispatches"));
  TINYML_RETURN_IF_ERROR(apply_strategy(ctx, t, g, diag, a));
  TINYML_RETURN_IF_ERROR(tc_allocs_to_scratch(ctx, g, a));
  TINYML_RETURN_IF_ERROR(tc_distribute(ctx, t->backend, g, diag, a));
  return tc_run_pipeline(ctx, m, t->backend->lowering_pipeline, diag, a, "lowering to LLVM");
}

/* ---- LLVM side -------------------------------------------------------- */

typedef struct abi_types {
  LLVMContextRef ctx;
  LLVMTypeRef ptr, i32, i64, entry, library;
} abi_types_t;

static abi_types_t abi_types(LLVMContextRef ctx) {
  abi_types_t t = {.ctx = ctx};
  t.ptr = LLVMPointerTypeInContext(ctx, 0);
  t.i32 = LLVMInt32TypeInContext(ctx);
  t.i64 = LLVMInt64TypeInContext(ctx);
  LLVMTypeRef entry[5] = {t.ptr, t.i32, t.i32, t.ptr, t.ptr};
  t.entry = LLVMStructTypeInContext(ctx, entry, 5, 0);
  LLVMTypeRef lib[3] = {t.i32, t.i32, t.ptr};
  t.library = LLVMStructTypeInContext(ctx, lib, 3, 0);
  return t;
}

static LLVMValueRef private_constant(LLVMModuleRef m, LLVMValueRef init, const char *name) {
  LLVMValueRef g = LLVMAddGlobal(m, LLVMTypeOf(init), name);
  LLVMSetInitializer(g, init);
  LLVMSetGlobalConstant(g, 1);
  LLVMSetLinkage(g, LLVMPrivateLinkage);
  return g;
}

/* void tinyml_entry_<d>(void *const *bindings, uint32_t phase,
 *                       uint32_t workgroup, uint32_t workgroup_count)
 * { d<d>(bindings[0], ..., phase, workgroup, workgroup_count); }
 * The kernel takes the three as `index` (i64 or i32 by target). */
static LLVMValueRef make_wrapper(LLVMModuleRef m, const abi_types_t *t,
                                 LLVMValueRef kernel, unsigned d) {
  LLVMTypeRef params[4] = {t->ptr, t->i32, t->i32, t->i32};
  LLVMTypeRef wrap_type = LLVMFunctionType(LLVMVoidTypeInContext(t->ctx), params, 4, 0);
  char name[48];
  snprintf(name, sizeof(name), "tinyml_entry_%u", d);
  LLVMValueRef w = LLVMAddFunction(m, name, wrap_type);
  LLVMSetLinkage(w, LLVMInternalLinkage);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(t->ctx, w, "entry"));
  unsigned n = LLVMCountParams(kernel); /* bindings, then the three indices */
  LLVMValueRef args[n];
  for (unsigned i = 0; i + 3 < n; ++i) {
    LLVMValueRef idx = LLVMConstInt(t->i64, i, 0);
    LLVMValueRef slot = LLVMBuildGEP2(b, t->ptr, LLVMGetParam(w, 0), &idx, 1, "");
    args[i] = LLVMBuildLoad2(b, t->ptr, slot, "");
  }
  for (unsigned i = 0; i < 3; ++i) {
    LLVMTypeRef index = LLVMTypeOf(LLVMGetParam(kernel, n - 3 + i));
    args[n - 3 + i] = LLVMBuildZExtOrBitCast(b, LLVMGetParam(w, 1 + i), index, "");
  }
  LLVMBuildCall2(b, LLVMGlobalGetValueType(kernel), kernel, args, n, "");
  LLVMBuildRetVoid(b);
  LLVMDisposeBuilder(b);
  LLVMSetLinkage(kernel, LLVMInternalLinkage);
  return w;
}

static uint64_t arg_size(const tc_graph_t *g, const tc_dispatch_t *dp, unsigned i) {
  unsigned n = dp->input_count + dp->output_count;
  return i < n ? g->buffers[dp->args[i]].size : dp->scratch_size;
}

static tinyml_status_t add_entry(LLVMModuleRef m, const abi_types_t *t,
                                 const tc_graph_t *g, unsigned d, LLVMValueRef *out,
                                 const tinyml_allocator_t *a) {
  char name[16];
  snprintf(name, sizeof(name), "d%u", d);
  LLVMValueRef kernel = LLVMGetNamedFunction(m, name);
  const tc_dispatch_t *dp = &g->dispatches[d];
  unsigned expect = dp->input_count + dp->output_count + (dp->scratch_size ? 1 : 0);
  if (!kernel || LLVMCountParams(kernel) != expect + 3 || dp->phase_count < 1 ||
      dp->phase_count > TC_MAX_PHASES)
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: kernel %s has %u parameters, expected %u",
                               name, kernel ? LLVMCountParams(kernel) : 0, expect + 3);
  LLVMValueRef sizes[expect ? expect : 1];
  for (unsigned i = 0; i < expect; ++i)
    sizes[i] = LLVMConstInt(t->i64, arg_size(g, dp, i), 0);
  LLVMValueRef size_table =
      private_constant(m, LLVMConstArray2(t->i64, sizes, expect), "tinyml_sizes");
  LLVMValueRef counts[TC_MAX_PHASES];
  for (unsigned p = 0; p < dp->phase_count; ++p)
    counts[p] = LLVMConstInt(t->i32, dp->workgroups[p], 0);
  LLVMValueRef count_table = private_constant(
      m, LLVMConstArray2(t->i32, counts, dp->phase_count), "tinyml_workgroups");
  LLVMValueRef fields[5] = {make_wrapper(m, t, kernel, d),
                            LLVMConstInt(t->i32, expect, 0),
                            LLVMConstInt(t->i32, dp->phase_count, 0), size_table,
                            count_table};
  *out = LLVMConstStructInContext(t->ctx, fields, 5, 0);
  return TINYML_OK;
}

/* const tinyml_exe_library_t *tinyml_query(uint32_t max_abi_version) */
static void add_query(LLVMModuleRef m, const abi_types_t *t, LLVMValueRef library,
                      const char *symbol) {
  LLVMTypeRef qt = LLVMFunctionType(t->ptr, (LLVMTypeRef *)&t->i32, 1, 0);
  LLVMValueRef q = LLVMAddFunction(m, symbol ? symbol : TINYML_EXE_QUERY_SYMBOL, qt);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(t->ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(t->ctx, q, "entry"));
  LLVMValueRef ok = LLVMBuildICmp(b, LLVMIntUGE, LLVMGetParam(q, 0),
                                  LLVMConstInt(t->i32, TINYML_EXE_ABI_VERSION, 0), "");
  LLVMBuildRet(b, LLVMBuildSelect(b, ok, library, LLVMConstNull(t->ptr), ""));
  LLVMDisposeBuilder(b);
}

static tinyml_status_t add_abi(LLVMModuleRef m, const tc_graph_t *g, const char *query,
                               const tinyml_allocator_t *a) {
  abi_types_t t = abi_types(LLVMGetModuleContext(m));
  unsigned n = g->dispatch_count;
  LLVMValueRef entries[n ? n : 1];
  for (unsigned d = 0; d < n; ++d)
    TINYML_RETURN_IF_ERROR(add_entry(m, &t, g, d, &entries[d], a));
  LLVMValueRef table =
      private_constant(m, LLVMConstArray2(t.entry, entries, n), "tinyml_entries");
  LLVMValueRef lib_fields[3] = {LLVMConstInt(t.i32, TINYML_EXE_ABI_VERSION, 0),
                                LLVMConstInt(t.i32, n, 0), table};
  LLVMValueRef library = private_constant(
      m, LLVMConstStructInContext(t.ctx, lib_fields, 3, 0), "tinyml_library");
  add_query(m, &t, library, query);
  return TINYML_OK;
}

/* `features`, plus each item of `keep` that the function's own
 * target-features name and `features` lacks, into buf (room for both).
 * Such a function was declared for a CPU with more (a `target` attribute
 * in the kernels' C), and is called only when the module's CPU has it;
 * emitted with the module's features alone, LLVM could not select its
 * intrinsics. */
static const char *function_features(LLVMValueRef f, const char *features, const char *keep,
                                     char *buf) {
  LLVMAttributeRef own = LLVMGetStringAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                                                       "target-features", 15);
  if (!keep || !own) return features;
  unsigned len = 0;
  const char *have = LLVMGetStringAttributeValue(own, &len);
  size_t used = strlen(features);
  memcpy(buf, features, used + 1);
  for (const char *s = keep; *s;) {
    size_t k = strcspn(s, ",");
    if (tinyml__list_has_n(have, len, s, k) && !tinyml__list_has_n(features, strlen(features), s, k)) {
      if (used) buf[used++] = ',';
      memcpy(buf + used, s, k);
      buf[used += k] = '\0';
    }
    s += k + (s[k] == ',');
  }
  return buf;
}

static void set_function_attrs(LLVMModuleRef m, const char *cpu, const char *features,
                               const char *keep) {
  LLVMContextRef ctx = LLVMGetModuleContext(m);
  char buf[strlen(features) + (keep ? strlen(keep) : 0) + 2];
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMIsDeclaration(f)) continue;
    const char *fs = function_features(f, features, keep, buf);
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(ctx, "target-cpu", 10, cpu,
                                                      (unsigned)strlen(cpu)));
    LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                            LLVMCreateStringAttribute(ctx, "target-features", 15, fs,
                                                      (unsigned)strlen(fs)));
  }
}

#ifndef TINYML_CLANG_PATH
#define TINYML_CLANG_PATH "clang"
#endif

/* The object from clang, for what LLVM-C cannot set (the backend's
 * object.clang_flags say what). */
static tinyml_status_t emit_with_clang(LLVMModuleRef m, const tc_target_t *tg,
                                       const tinyml_allocator_t *a,
                                       LLVMMemoryBufferRef *out_obj) {
  char dir[4096], bc[4200], obj[4200], log[4200], target[160], cpu[160];
  const char *const *flags = tg->backend->object.clang_flags;
  size_t nflags = 0;
  while (flags[nflags]) ++nflags;
  TINYML_RETURN_IF_ERROR(tc_temp_dir(dir, sizeof dir, a));
  snprintf(bc, sizeof bc, "%s/kernels.bc", dir);
  snprintf(obj, sizeof obj, "%s/kernels.o", dir);
  snprintf(log, sizeof log, "%s/clang.log", dir);
  snprintf(target, sizeof target, "--target=%s", tg->backend->triple);
  snprintf(cpu, sizeof cpu, "-mcpu=%s", tg->cpu);
  const char *clang = getenv("TINYML_CLANG");
  char *argv[nflags + 12], **arg = argv;
  *arg++ = (char *)(clang && *clang ? clang : TINYML_CLANG_PATH);
  *arg++ = target;
  *arg++ = cpu;
  for (size_t i = 0; i < nflags; ++i) *arg++ = (char *)flags[i];
  const char *rest[] = {"-fPIC", "-O2", "-c", bc, "-o", obj, NULL};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; ++i) *arg++ = (char *)rest[i];
  tinyml_status_t st = TINYML_OK;
  if (LLVMWriteBitcodeToFile(m, bc) != 0)
    st = tinyml__status_make(a, TINYML_STATUS_IO_ERROR, "compiler: cannot write %s", bc);
  if (!st) st = tc_spawn(argv, log, "TINYML_CLANG", a);
  uint8_t *data = NULL;
  size_t size = 0;
  if (!st) st = tc_read_file(obj, a, &data, &size);
  if (!st) {
    *out_obj = LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)data, size, "kernels.o");
    tinyml__free(a, data);
  }
  tc_temp_dir_remove(dir);
  return st;
}

static tinyml_status_t llvm_error(const tinyml_allocator_t *a, char *msg, const char *what) {
  tinyml_status_t st = tinyml__status_make(a, TINYML_STATUS_INTERNAL, "%s: %s", what,
                                           msg ? msg : "(no message)");
  if (msg) LLVMDisposeMessage(msg);
  return st;
}

static tinyml_status_t make_target_machine(const tc_target_t *tg,
                                           const tinyml_allocator_t *a,
                                           LLVMTargetMachineRef *out) {
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
  LLVMTargetRef target;
  char *err = NULL;
  const char *triple = tg->backend->triple;
  if (LLVMGetTargetFromTriple(triple, &target, &err))
    return llvm_error(a, err, "compiler: LLVM target");
  LLVMCodeGenOptLevel level = tg->opt_level >= 3   ? LLVMCodeGenLevelAggressive
                              : tg->opt_level == 2 ? LLVMCodeGenLevelDefault
                              : tg->opt_level == 1 ? LLVMCodeGenLevelLess
                                                   : LLVMCodeGenLevelNone;
  *out = LLVMCreateTargetMachine(target, triple, tg->cpu, tg->features, level,
                                 LLVMRelocPIC, LLVMCodeModelDefault);
  if (!*out)
    return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                               "compiler: cannot target '%s' with CPU '%s'", triple, tg->cpu);
  return TINYML_OK;
}

static tinyml_status_t optimize_and_emit(LLVMModuleRef m, LLVMTargetMachineRef tm,
                                         const tc_target_t *tg,
                                         const tinyml_allocator_t *a,
                                         LLVMMemoryBufferRef *out_obj) {
  const tc_object_rules_t *rules = &tg->backend->object;
  LLVMSetTarget(m, tg->backend->triple);
  LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
  LLVMSetModuleDataLayout(m, layout);
  LLVMDisposeTargetData(layout);
  set_function_attrs(m, tg->cpu, tg->features,
                     tg->ukernels ? tg->ukernels->function_features : NULL);
  if (rules->prepare) rules->prepare(m);
  char *err = NULL;
  if (LLVMVerifyModule(m, LLVMReturnStatusAction, &err))
    return llvm_error(a, err, "compiler: generated LLVM IR is invalid");
  LLVMDisposeMessage(err);
  err = NULL;
  LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
  LLVMPassBuilderOptionsSetLoopVectorization(po, 1);
  LLVMPassBuilderOptionsSetSLPVectorization(po, 1);
  LLVMPassBuilderOptionsSetLoopUnrolling(po, 1);
  char pipeline[32];
  snprintf(pipeline, sizeof(pipeline), "default<O%d>", tg->opt_level);
  LLVMErrorRef e = LLVMRunPasses(m, pipeline, tm, po);
  LLVMDisposePassBuilderOptions(po);
  if (e) return llvm_error(a, LLVMGetErrorMessage(e), "compiler: LLVM optimisation");
  if (rules->prepare) rules->prepare(m);
  if (rules->clang_flags) return emit_with_clang(m, tg, a, out_obj);
  if (LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, out_obj))
    return llvm_error(a, err, "compiler: LLVM code emission");
  return TINYML_OK;
}

/* Links the microkernels' bitcode into `m` when its dispatches call them,
 * and makes the kernels internal so they inline and unused ones vanish. */
static tinyml_status_t link_ukernels(LLVMModuleRef m, const tc_target_t *tg,
                                     const tinyml_allocator_t *a) {
  int wanted = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    size_t n;
    const char *name = LLVMGetValueName2(f, &n);
    if (LLVMIsDeclaration(f) && n > 10 && strncmp(name, "tinyml_uk_", 10) == 0) wanted = 1;
  }
  if (!wanted) return TINYML_OK;
  if (!tg->ukernels)
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: dispatches call microkernels the target lacks");
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(
      (const char *)tg->ukernels->bitcode, *tg->ukernels->bitcode_size, "ukernels.bc", 0);
  LLVMModuleRef uk = NULL;
  int bad = LLVMParseBitcodeInContext2(LLVMGetModuleContext(m), buf, &uk);
  LLVMDisposeMemoryBuffer(buf);
  if (bad)
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: the microkernel bitcode does not parse");
  /* clang wrote the target's own layout; the translated module may have none. */
  LLVMSetTarget(m, LLVMGetTarget(uk));
  LLVMSetDataLayout(m, LLVMGetDataLayoutStr(uk));
  if (LLVMLinkModules2(m, uk))
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: cannot link the microkernels");
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    size_t n;
    const char *name = LLVMGetValueName2(f, &n);
    if (!LLVMIsDeclaration(f) && n > 10 && strncmp(name, "tinyml_uk_", 10) == 0)
      LLVMSetLinkage(f, LLVMInternalLinkage);
  }
  return TINYML_OK;
}

tinyml_status_t tc_emit_object(const tc_graph_t *g, const tc_target_t *tg,
                               const char *query_symbol, const tinyml_allocator_t *a,
                               uint8_t **out_obj, size_t *out_size) {
  LLVMContextRef lctx = LLVMContextCreate();
  LLVMModuleRef m =
      mlirTranslateModuleToLLVMIR(mlirModuleGetOperation(g->dispatch_module), lctx);
  tinyml_status_t st = TINYML_OK;
  LLVMTargetMachineRef tm = NULL;
  LLVMMemoryBufferRef obj = NULL;
  if (!m)
    st = tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                             "compiler: translation to LLVM IR failed");
  if (!st) st = link_ukernels(m, tg, a);
  if (!st) st = add_abi(m, g, query_symbol, a);
  if (!st) st = make_target_machine(tg, a, &tm);
  if (!st) st = optimize_and_emit(m, tm, tg, a, &obj);
  if (!st) {
    size_t n = LLVMGetBufferSize(obj);
    uint8_t *copy = tinyml__alloc(a, n, 16);
    if (!copy) {
      st = tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
    } else {
      memcpy(copy, LLVMGetBufferStart(obj), n);
      *out_obj = copy;
      *out_size = n;
    }
  }
  if (obj) LLVMDisposeMemoryBuffer(obj);
  if (tm) LLVMDisposeTargetMachine(tm);
  if (m) LLVMDisposeModule(m);
  LLVMContextDispose(lctx);
  return st;
}
