/* Per-layer copies of the int8 microkernels (uk_specialise.h).
 *
 * The kernels read their header through tinyml_uk_header(blob), a function
 * they only declare (backends/armv7em/ukernels.c).  A copy is the kernels'
 * bitcode linked once more with its entry renamed tinyml_uk_<kind>.c<N>
 * and its hook renamed tinyml_uk_header.c<N>, which is defined to return a
 * constant global holding constant N's header: once inlined, every load of
 * a header field is a load from a constant, which LLVM folds before it
 * decides what to unroll.  The copy's helpers are its own internal
 * functions called from one place with constant arguments, so they inline
 * and fold too.  The generic hook returns the blob itself. */
#include "uk_specialise.h"

#include <llvm-c/BitReader.h>
#include <llvm-c/Core.h>
#include <llvm-c/Linker.h>
#include <mlir-c/BuiltinAttributes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/status.h"
#include "../../ukernels/uk_abi.h"
#include "object.h"
#include "ukernel_lower.h"

#define HOOK "tinyml_uk_header"

/* The kernels that read their header through the hook, and the kind their
 * header must name. */
static int specialised_kind(MlirStringRef callee) {
  if (mlirStringRefEqual(callee, tc_str("tinyml_uk_conv_s8"))) return TINYML_UK_CONV;
  if (mlirStringRefEqual(callee, tc_str("tinyml_uk_depthwise_s8"))) return TINYML_UK_DEPTHWISE;
  return 0;
}

static MlirWalkResult find_call(MlirOperation op, void *user) {
  if (!tc_op_is(op, "func.call") ||
      mlirAttributeIsNull(mlirOperationGetAttributeByName(op, tc_str(TC_UKERNEL_WORKGROUPS))))
    return MlirWalkResultAdvance;
  *(MlirOperation *)user = op;
  return MlirWalkResultInterrupt;
}

/* The function argument behind the call's blob pointer, through the
 * chain ukernel_lower.c writes: extract_aligned_pointer_as_index,
 * index_cast, inttoptr.  -1 when it is not that chain. */
static int blob_arg(MlirValue v) {
  static const char *const chain[] = {"llvm.inttoptr", "arith.index_cast",
                                      "memref.extract_aligned_pointer_as_index"};
  for (int i = 0; i < 3; ++i) {
    MlirOperation d = tc_value_owner_op(v);
    if (mlirOperationIsNull(d) || !tc_op_is(d, chain[i])) return -1;
    v = mlirOperationGetOperand(d, 0);
  }
  return mlirValueIsABlockArgument(v) ? (int)mlirBlockArgumentGetArgNumber(v) : -1;
}

/* The module constant that is dispatch `d`'s argument `arg`, when it holds
 * a header of `kind` at this ABI version; -1 otherwise. */
static long header_constant(const tc_graph_t *g, long d, int arg, int kind) {
  const tc_dispatch_t *dp = &g->dispatches[d];
  if (arg < 0 || (uint32_t)arg >= dp->input_count + dp->output_count) return -1;
  const tc_buffer_t *b = &g->buffers[dp->args[arg]];
  if (b->kind != TC_BUFFER_CONSTANT || b->index >= g->constant_count) return -1;
  const tc_constant_t *c = &g->constants[b->index];
  tinyml_uk_params_t p;
  if (c->size < sizeof p) return -1;
  memcpy(&p, c->data, sizeof p);
  return p.version == TINYML_UK_VERSION && p.kind == kind ? (long)b->index : -1;
}

static MlirOperation find_symbol(MlirModule m, MlirStringRef name) {
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute s = mlirOperationGetAttributeByName(op, tc_str("sym_name"));
    if (!mlirAttributeIsNull(s) && mlirStringRefEqual(mlirStringAttrGetValue(s), name))
      return op;
  }
  return (MlirOperation){NULL};
}

/* Points the call at the copy for constant n, declared like the kernel. */
static void retarget(MlirContext ctx, MlirModule m, MlirOperation call, MlirStringRef callee,
                     long n) {
  MlirOperation decl = find_symbol(m, callee);
  if (mlirOperationIsNull(decl)) return;
  char name[96];
  snprintf(name, sizeof name, "%.*s.c%ld", (int)callee.length, callee.data, n);
  if (mlirOperationIsNull(find_symbol(m, tc_str(name)))) {
    MlirOperation copy = mlirOperationClone(decl);
    mlirOperationSetAttributeByName(copy, tc_str("sym_name"), mlirStringAttrGet(ctx, tc_str(name)));
    mlirBlockInsertOwnedOperation(mlirModuleGetBody(m), 0, copy);
  }
  mlirOperationSetAttributeByName(call, tc_str("callee"),
                                  mlirFlatSymbolRefAttrGet(ctx, tc_str(name)));
}

void tc_ukernels_specialise(MlirContext ctx, const tc_target_t *t, tc_graph_t *g) {
  if (!t->ukernels || !t->backend->ukernels.specialise) return;
  MlirModule m = g->dispatch_module;
  for (MlirOperation f = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
       !mlirOperationIsNull(f); f = mlirOperationGetNextInBlock(f)) {
    MlirOperation call = {NULL};
    if (tc_op_is(f, "func.func")) mlirOperationWalk(f, find_call, &call, MlirWalkPreOrder);
    const long d = mlirOperationIsNull(call) ? -1 : tc_dispatch_index(f, g->dispatch_count);
    if (d < 0 || mlirOperationGetNumOperands(call) < 2) continue;
    MlirStringRef callee = mlirFlatSymbolRefAttrGetValue(
        mlirOperationGetAttributeByName(call, tc_str("callee")));
    const int kind = specialised_kind(callee);
    const long n = kind ? header_constant(g, d, blob_arg(mlirOperationGetOperand(call, 1)), kind)
                        : -1;
    if (n >= 0) retarget(ctx, m, call, callee, n);
  }
}

/* Gives `f`, a declaration, a body: return `value`, or its argument when
 * `value` is NULL; internal and always inlined. */
static void define_hook(LLVMValueRef f, LLVMValueRef value) {
  LLVMContextRef ctx = LLVMGetModuleContext(LLVMGetGlobalParent(f));
  LLVMBuilderRef b = LLVMCreateBuilderInContext(ctx);
  LLVMPositionBuilderAtEnd(b, LLVMAppendBasicBlockInContext(ctx, f, "entry"));
  LLVMBuildRet(b, value ? value : LLVMGetParam(f, 0));
  LLVMDisposeBuilder(b);
  LLVMSetLinkage(f, LLVMInternalLinkage);
  unsigned always = LLVMGetEnumAttributeKindForName("alwaysinline", 12);
  LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(ctx, always, 0));
}

/* Constant n's header as an internal constant global. */
static LLVMValueRef header_global(LLVMModuleRef m, const tc_graph_t *g, unsigned long n) {
  enum { WORDS = sizeof(tinyml_uk_params_t) / 4 };
  int32_t words[WORDS];
  memcpy(words, g->constants[n].data, sizeof words);
  LLVMTypeRef i32 = LLVMInt32TypeInContext(LLVMGetModuleContext(m));
  LLVMValueRef v[WORDS];
  for (int i = 0; i < WORDS; ++i) v[i] = LLVMConstInt(i32, (unsigned long long)(uint32_t)words[i], 0);
  char name[48];
  snprintf(name, sizeof name, "tinyml_uk_params.c%lu", n);
  LLVMValueRef gv = LLVMAddGlobal(m, LLVMArrayType2(i32, WORDS), name);
  LLVMSetInitializer(gv, LLVMConstArray2(i32, v, WORDS));
  LLVMSetGlobalConstant(gv, 1);
  LLVMSetLinkage(gv, LLVMInternalLinkage);
  LLVMSetUnnamedAddress(gv, LLVMGlobalUnnamedAddr);
  LLVMSetAlignment(gv, 4);
  return gv;
}

/* Drops the copy's other entry points (each module copy would define them
 * again) and renames its entry and hook after constant n. */
static int prepare_copy(LLVMModuleRef uk, const char *entry, size_t entry_len,
                        const char *name) {
  LLVMValueRef want = NULL;
  for (LLVMValueRef f = LLVMGetFirstFunction(uk), next; f; f = next) {
    next = LLVMGetNextFunction(f);
    size_t n;
    const char *fn = LLVMGetValueName2(f, &n);
    if (n == entry_len && memcmp(fn, entry, n) == 0) want = f;
    else if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage &&
             !LLVMGetFirstUse(f))
      LLVMDeleteFunction(f);
  }
  if (!want || LLVMIsDeclaration(want)) return 0;
  LLVMSetValueName2(want, name, strlen(name));
  LLVMValueRef hook = LLVMGetNamedFunction(uk, HOOK);
  if (hook) {
    char hook_name[96];
    snprintf(hook_name, sizeof hook_name, HOOK "%s", strrchr(name, '.'));
    LLVMSetValueName2(hook, hook_name, strlen(hook_name));
  }
  return 1;
}

static tinyml_status_t clone_one(LLVMModuleRef m, const tc_graph_t *g, const tc_target_t *tg,
                                 const char *name, const tinyml_allocator_t *a) {
  const char *dot = strrchr(name, '.');
  char *end = NULL;
  unsigned long n = strtoul(dot + 2, &end, 10);
  if (*end || n >= g->constant_count || g->constants[n].size < sizeof(tinyml_uk_params_t))
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: kernel copy %s names no parameter header", name);
  LLVMModuleRef uk = NULL;
  TINYML_RETURN_IF_ERROR(tc_parse_ukernels(m, tg, a, &uk));
  if (!prepare_copy(uk, name, (size_t)(dot - name), name)) {
    LLVMDisposeModule(uk);
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: kernel copy %s: the kernels define no %.*s", name,
                               (int)(dot - name), name);
  }
  if (LLVMLinkModules2(m, uk))
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: cannot link the kernel copy %s", name);
  LLVMSetLinkage(LLVMGetNamedFunction(m, name), LLVMInternalLinkage);
  char hook_name[96];
  snprintf(hook_name, sizeof hook_name, HOOK "%s", dot);
  LLVMValueRef hook = LLVMGetNamedFunction(m, hook_name);
  if (hook && LLVMIsDeclaration(hook)) define_hook(hook, header_global(m, g, n));
  return TINYML_OK;
}

/* A kernel copy's name: tinyml_uk_<kind>.c<N> (not a copy's hook). */
static int is_copy(LLVMValueRef f) {
  size_t n;
  const char *name = LLVMGetValueName2(f, &n);
  const char *dot = strrchr(name, '.');
  return LLVMIsDeclaration(f) && n > 10 && strncmp(name, "tinyml_uk_", 10) == 0 && dot &&
         dot[1] == 'c' && dot[2] >= '0' && dot[2] <= '9' &&
         strncmp(name, HOOK ".", sizeof HOOK) != 0;
}

tinyml_status_t tc_ukernels_clone(LLVMModuleRef m, const tc_graph_t *g, const tc_target_t *tg,
                                  const tinyml_allocator_t *a) {
  if (!tg->ukernels) return TINYML_OK;
  /* Linking adds functions: find the next copy from the start each time. */
  for (;;) {
    LLVMValueRef f = LLVMGetFirstFunction(m);
    while (f && !is_copy(f)) f = LLVMGetNextFunction(f);
    if (!f) break;
    char name[96];
    size_t n;
    const char *s = LLVMGetValueName2(f, &n);
    if (n >= sizeof name)
      return tinyml__status_make(a, TINYML_STATUS_INTERNAL, "compiler: kernel copy name too long");
    memcpy(name, s, n);
    name[n] = '\0';
    TINYML_RETURN_IF_ERROR(clone_one(m, g, tg, name, a));
  }
  LLVMValueRef hook = LLVMGetNamedFunction(m, HOOK);
  if (hook && LLVMIsDeclaration(hook)) define_hook(hook, NULL);
  return TINYML_OK;
}
