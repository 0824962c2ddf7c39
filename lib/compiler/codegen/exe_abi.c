/* The executable ABI (lib/module/executable_abi.h) in LLVM IR: a wrapper
 * entry per dispatch, the tables of argument sizes and workgroups, and
 * the exported query function (exe_abi.h). */
#include "exe_abi.h"

#include <stdio.h>

#include "../../common/status.h"
#include "../../module/executable_abi.h"

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

/* The ABI's workgroup_count is at least 1 (lib/module/executable_abi.h);
 * the IR says so with range(i32 1, 0), i.e. [1, 2^32).  A split loop runs
 * from wg * n / count to (wg + 1) * n / count (distribute.c), and with a
 * count that may be 0 LLVM kept an index in the loops inside and rebuilt
 * each address from it: on RVV (VLEN 128) resnet8_float took 7.30 M
 * instructions per inference without the range, 5.80 M with it. */
static void count_is_nonzero(LLVMValueRef w, const abi_types_t *t) {
  unsigned kind = LLVMGetEnumAttributeKindForName("range", 5);
  const uint64_t lower[] = {1}, upper[] = {0};
  LLVMAddAttributeAtIndex(w, 4, /* parameter 3: index 1 + 3 */
                          LLVMCreateConstantRangeAttribute(t->ctx, kind, 32, lower, upper));
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
  count_is_nonzero(w, t);
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

tinyml_status_t tc_add_exe_abi(LLVMModuleRef m, const tc_graph_t *g, const char *query,
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
