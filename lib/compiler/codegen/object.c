/* From the lowered dispatches to a relocatable object (object.h): LLVM IR,
 * the microkernels' bitcode, the executable ABI, the target's CPU and
 * features on every function, LLVM's O3 pipeline and code emission (by
 * LLVM, or by clang where the backend's object rules say so). */
#include "object.h"

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <llvm-c/Transforms/PassBuilder.h>
#include <mlir-c/Target/LLVMIR.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/list.h"
#include "../../common/status.h"
#include "../toolchain/spawn.h"
#include "exe_abi.h"
#include "uk_specialise.h"

#ifndef TINYML_CLANG_PATH
#define TINYML_CLANG_PATH "clang"
#endif

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
  tc_llvm_targets_init();
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

tinyml_status_t tc_parse_ukernels(LLVMModuleRef m, const tc_target_t *tg,
                                  const tinyml_allocator_t *a, LLVMModuleRef *out) {
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(
      (const char *)tg->ukernels->bitcode, *tg->ukernels->bitcode_size, "ukernels.bc", 0);
  *out = NULL;
  int bad = LLVMParseBitcodeInContext2(LLVMGetModuleContext(m), buf, out);
  LLVMDisposeMemoryBuffer(buf);
  return bad ? tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                                   "compiler: the microkernel bitcode does not parse")
             : TINYML_OK;
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
  LLVMModuleRef uk = NULL;
  TINYML_RETURN_IF_ERROR(tc_parse_ukernels(m, tg, a, &uk));
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
  if (!st) st = tc_ukernels_clone(m, g, tg, a);
  if (!st) st = tc_add_exe_abi(m, g, query_symbol, a);
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
