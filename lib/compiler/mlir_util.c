#include "mlir_util.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <mlir-c/Diagnostics.h>
#include <mlir-c/Pass.h>
#include <mlir-c/RegisterEverything.h>
#include <mlir-c/Support.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../common/alloc.h"
#include "../common/status.h"
#include "../common/strbuf.h"

static void diag_append(void *user, const char *s, size_t n) {
  tc_diag_t *d = user;
  size_t room = sizeof(d->text) - 1 - d->len;
  if (n > room) n = room;
  memcpy(d->text + d->len, s, n);
  d->len += n;
  d->text[d->len] = '\0';
}

static void diag_print_cb(MlirStringRef s, void *user) {
  diag_append(user, s.data, s.length);
}

static MlirLogicalResult on_diagnostic(MlirDiagnostic d, void *user) {
  tc_diag_t *diag = user;
  if (mlirDiagnosticGetSeverity(d) != MlirDiagnosticError)
    return mlirLogicalResultSuccess();
  if (diag->len) diag_append(diag, "; ", 2);
  mlirLocationPrint(mlirDiagnosticGetLocation(d), diag_print_cb, diag);
  diag_append(diag, ": ", 2);
  mlirDiagnosticPrint(d, diag_print_cb, diag);
  return mlirLogicalResultSuccess();
}

/* MLIR's pass registry is process-wide; fill it exactly once. */
static pthread_once_t passes_once = PTHREAD_ONCE_INIT;
static void register_passes(void) { mlirRegisterAllPasses(); }

MlirContext tc_context_create(tc_diag_t *diag) {
  pthread_once(&passes_once, register_passes);
  MlirContext ctx = mlirContextCreateWithThreading(false);
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  mlirRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(ctx, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(ctx);
  mlirRegisterAllLLVMTranslations(ctx);
  diag->len = 0;
  diag->text[0] = '\0';
  mlirContextAttachDiagnosticHandler(ctx, on_diagnostic, diag, NULL);
  return ctx;
}

bool tc_op_is(MlirOperation op, const char *name) {
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
  return s.length == strlen(name) && memcmp(s.data, name, s.length) == 0;
}

const char *tc_op_name(MlirOperation op) {
  /* Identifiers are uniqued and NUL-terminated in the context. */
  return mlirIdentifierStr(mlirOperationGetName(op)).data;
}

MlirStringRef tc_str(const char *s) { return mlirStringRefCreateFromCString(s); }

MlirOperation tc_value_owner_op(MlirValue v) {
  if (mlirValueIsAOpResult(v)) return mlirOpResultGetOwner(v);
  MlirOperation none = {NULL};
  return none;
}

tinyml_status_t tc_run_pipeline(MlirContext ctx, MlirOperation op,
                                const char *pipeline, tc_diag_t *diag,
                                const tinyml_allocator_t *a, const char *what) {
  MlirPassManager pm = mlirPassManagerCreate(ctx);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  tc_diag_t perr = {.len = 0};
  MlirLogicalResult r =
      mlirParsePassPipeline(opm, tc_str(pipeline), diag_print_cb, &perr);
  tinyml_status_t st = TINYML_OK;
  if (mlirLogicalResultIsFailure(r)) {
    st = tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                             "%s: bad pass pipeline: %s", what, perr.text);
  } else if (mlirLogicalResultIsFailure(mlirPassManagerRunOnOp(pm, op))) {
    st = tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED, "%s failed: %s", what,
                             diag->len ? diag->text : "(no diagnostic)");
  }
  mlirPassManagerDestroy(pm);
  return st;
}

tinyml_dtype_t tc_dtype_of(MlirType t) {
  if (mlirTypeIsAF32(t)) return TINYML_DTYPE_FLOAT32;
  if (mlirTypeIsAF16(t)) return TINYML_DTYPE_FLOAT16;
  if (mlirTypeIsAF64(t)) return TINYML_DTYPE_FLOAT64;
  if (mlirTypeIsABF16(t)) return TINYML_DTYPE_BFLOAT16;
  if (!mlirTypeIsAInteger(t)) return TINYML_DTYPE_INVALID;
  unsigned w = mlirIntegerTypeGetWidth(t);
  bool u = mlirIntegerTypeIsUnsigned(t);
  switch (w) {
    case 1: return TINYML_DTYPE_BOOL;
    case 8: return u ? TINYML_DTYPE_UINT8 : TINYML_DTYPE_INT8;
    case 16: return u ? TINYML_DTYPE_INVALID : TINYML_DTYPE_INT16;
    case 32: return u ? TINYML_DTYPE_INVALID : TINYML_DTYPE_INT32;
    case 64: return u ? TINYML_DTYPE_INVALID : TINYML_DTYPE_INT64;
    default: return TINYML_DTYPE_INVALID;
  }
}

uint64_t tc_type_byte_size(MlirType shaped) {
  if (!mlirShapedTypeHasStaticShape(shaped)) return 0;
  size_t esize = tinyml_dtype_size(tc_dtype_of(mlirShapedTypeGetElementType(shaped)));
  if (!esize) return 0;
  uint64_t n = esize;
  intptr_t rank = mlirShapedTypeGetRank(shaped);
  for (intptr_t i = 0; i < rank; ++i) n *= (uint64_t)mlirShapedTypeGetDimSize(shaped, i);
  return n;
}

MlirOperation tc_sole_user(MlirValue v) {
  MlirOperation none = {NULL};
  MlirOpOperand u = mlirValueGetFirstUse(v);
  if (mlirOpOperandIsNull(u) || !mlirOpOperandIsNull(mlirOpOperandGetNextUse(u))) return none;
  return mlirOpOperandGetOwner(u);
}

bool tc_i64_array(MlirOperation op, const char *name, int n, int64_t *out) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str(name));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsADenseI64Array(a) ||
      mlirDenseArrayGetNumElements(a) != n)
    return false;
  for (int i = 0; i < n; ++i) out[i] = mlirDenseI64ArrayGetElement(a, i);
  return true;
}

static void attr_print_cb(MlirStringRef s, void *user) {
  char *buf = user;
  size_t n = strlen(buf), room = 63 - n, k = s.length < room ? s.length : room;
  memcpy(buf + n, s.data, k);
  buf[n + k] = '\0';
}

bool tc_attr_prints_with(MlirAttribute a, const char *want) {
  char buf[64] = "";
  if (mlirAttributeIsNull(a)) return false;
  mlirAttributePrint(a, attr_print_cb, buf);
  return strstr(buf, want) != NULL;
}

bool tc_attr_text_has(MlirOperation op, const char *name, const char *want) {
  return tc_attr_prints_with(mlirOperationGetAttributeByName(op, tc_str(name)), want);
}

void tc_print_to_strbuf(MlirStringRef s, void *user) {
  strbuf_printf(user, "%.*s", (int)s.length, s.data);
}

typedef struct op_list {
  const char *const *names;
  MlirOperation *ops;
  unsigned n, cap;
} op_list_t;

static MlirWalkResult collect_named(MlirOperation op, void *user) {
  op_list_t *l = user;
  for (const char *const *name = l->names; *name && l->n < l->cap; ++name)
    if (tc_op_is(op, *name)) {
      l->ops[l->n++] = op;
      break;
    }
  return MlirWalkResultAdvance;
}

static MlirWalkResult count_named(MlirOperation op, void *user) {
  op_list_t *l = user;
  for (const char *const *name = l->names; *name; ++name)
    if (tc_op_is(op, *name)) {
      ++l->n;
      break;
    }
  return MlirWalkResultAdvance;
}

MlirOperation *tc_collect_ops(MlirOperation root, const char *const *names, unsigned cap,
                              const tinyml_allocator_t *a, unsigned *count) {
  if (cap == 0) { /* all of them: count first */
    op_list_t all = {names, NULL, 0, 0};
    mlirOperationWalk(root, count_named, &all, MlirWalkPreOrder);
    cap = all.n;
  }
  op_list_t l = {names, tinyml__calloc(a, cap, sizeof(MlirOperation), 8), 0, cap};
  *count = 0;
  if (!l.ops) return NULL;
  mlirOperationWalk(root, collect_named, &l, MlirWalkPreOrder);
  *count = l.n;
  return l.ops;
}

long tc_dispatch_index(MlirOperation f, uint32_t count) {
  MlirAttribute n = mlirOperationGetAttributeByName(f, tc_str("sym_name"));
  if (mlirAttributeIsNull(n) || mlirOperationGetNumRegions(f) != 1 ||
      mlirRegionIsNull(mlirOperationGetRegion(f, 0)) ||
      mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0))))
    return -1;
  MlirStringRef s = mlirStringAttrGetValue(n);
  char text[32];
  if (s.length < 2 || s.length >= sizeof(text) || s.data[0] != 'd') return -1;
  memcpy(text, s.data, s.length);
  text[s.length] = '\0';
  char *end = NULL;
  long idx = strtol(text + 1, &end, 10);
  return *end == '\0' && idx >= 0 && (unsigned long)idx < count ? idx : -1;
}

bool tc_op_name_starts(MlirOperation op, const char *prefix) {
  return strncmp(tc_op_name(op), prefix, strlen(prefix)) == 0;
}

bool tc_is_memref(MlirValue v) { return mlirTypeIsAMemRef(mlirValueGetType(v)); }

bool tc_is_memref_view(MlirOperation op) {
  return tc_op_is(op, "memref.subview") || tc_op_is(op, "memref.expand_shape") ||
         tc_op_is(op, "memref.collapse_shape") || tc_op_is(op, "memref.cast") ||
         tc_op_is(op, "memref.reinterpret_cast") || tc_op_is(op, "memref.view");
}

bool tc_has_memref_operand(MlirOperation op) {
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i)
    if (tc_is_memref(mlirOperationGetOperand(op, i))) return true;
  return false;
}

/* Inputs then inits of a structured op on buffers. */
bool tc_dps_split(MlirOperation op, intptr_t *inputs, intptr_t *inits) {
  intptr_t n = mlirOperationGetNumOperands(op);
  MlirAttribute seg = mlirOperationGetAttributeByName(op, tc_str("operandSegmentSizes"));
  if (!mlirAttributeIsNull(seg) && mlirAttributeIsADenseI32Array(seg) &&
      mlirDenseArrayGetNumElements(seg) == 2) {
    *inputs = mlirDenseI32ArrayGetElement(seg, 0);
    *inits = mlirDenseI32ArrayGetElement(seg, 1);
  } else if (tc_op_is(op, "linalg.reduce")) {
    *inputs = *inits = n / 2;
  } else if (tc_op_is(op, "linalg.transpose") || tc_op_is(op, "linalg.broadcast") ||
             tc_op_is(op, "linalg.map")) {
    *inputs = n - 1;
    *inits = 1;
  } else {
    return false;
  }
  return *inputs + *inits == n && *inits >= 1;
}

MlirOperation tc_transform_main(MlirModule lib) {
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(lib));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute n = mlirOperationGetAttributeByName(op, tc_str("sym_name"));
    if (!mlirAttributeIsNull(n) && mlirAttributeIsAString(n) &&
        mlirStringRefEqual(mlirStringAttrGetValue(n), tc_str("__transform_main")))
      return op;
  }
  MlirOperation none = {NULL};
  return none;
}

int tc_arg_of_operand(MlirValue v) {
  MlirOperation d = tc_value_owner_op(v);
  if (mlirOperationIsNull(d) || !tc_op_is(d, "bufferization.to_tensor")) return -1;
  MlirValue src = mlirOperationGetOperand(d, 0);
  return mlirValueIsABlockArgument(src) ? (int)mlirBlockArgumentGetArgNumber(src) : -1;
}

int tc_arg_of_result(MlirValue v) {
  MlirOpOperand u = mlirValueGetFirstUse(v);
  if (mlirOpOperandIsNull(u) || !mlirOpOperandIsNull(mlirOpOperandGetNextUse(u))) return -1;
  MlirOperation m = mlirOpOperandGetOwner(u);
  if (!tc_op_is(m, "bufferization.materialize_in_destination")) return -1;
  MlirValue dst = mlirOperationGetOperand(m, 1);
  return mlirValueIsABlockArgument(dst) ? (int)mlirBlockArgumentGetArgNumber(dst) : -1;
}
