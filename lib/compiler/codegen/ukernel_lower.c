/* Lowers microkernel dispatches.  Partitioning leaves each TC_UKERNEL_OP
 * alone in its dispatch function, between bufferization.to_tensor of its
 * two arguments and a materialize_in_destination into its output argument.
 * That body is replaced, before the backend strategy runs, by
 *
 *   %s = memref.alloc() : memref<Nxi8>          (becomes arena scratch)
 *   func.call @tinyml_uk_<kind>(ptr(in), ptr(blob), ptr(out), ptr(s), 0, 1)
 *       {tinyml.workgroups = W}
 *
 * (a kernel with a third operand, the residual of conv_add_f32,
 * dwpw_add_f32 or pwdwpw_add_f32, or matmul_f32's B, gets it as a seventh
 * pointer argument)
 * with the pointers taken as !llvm.ptr, so one declaration serves every
 * shape.  The last two arguments are the workgroup and the workgroup count
 * (lib/ukernels/uk_abi.h): here the whole output.  W is how many bands of
 * output pixels are worth running apart; distribute.c, which knows whether
 * the target has threads, passes the real workgroup and count and gives
 * each workgroup its own N bytes of scratch.  The kernel's bitcode is
 * linked in by object.c. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../../common/strbuf.h"
#include "../tosa/uk_dwpw.h"
#include "../tosa/uk_matmul.h"
#include "../tosa/ukernel_op.h"
#include "ukernel_lower.h"

static MlirWalkResult find_uk(MlirOperation op, void *user) {
  if (!tc_op_is(op, TC_UKERNEL_OP)) return MlirWalkResultAdvance;
  *(MlirOperation *)user = op;
  return MlirWalkResultInterrupt;
}

static void string_attr(MlirOperation op, const char *name, char *out, size_t cap) {
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str(name));
  out[0] = '\0';
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAString(a)) return;
  MlirStringRef r = mlirStringAttrGetValue(a);
  if (r.length < cap) {
    if (r.length) memcpy(out, r.data, r.length);
    out[r.length] = '\0';
  }
}

/* The replacement function, as text: same signature, new body. */
static void write_body(strbuf_t *t, MlirBlock body, const char *kind, int64_t scratch,
                       const int *args, int nptr, int64_t workgroups) {
  const int res = nptr > 3; /* args[3]: the residual */
  strbuf_printf(t,
                "module {\nfunc.func private @tinyml_uk_%s(!llvm.ptr, !llvm.ptr, !llvm.ptr, "
                "!llvm.ptr, i32, i32%s)\nfunc.func @f(",
                kind, res ? ", !llvm.ptr" : "");
  intptr_t n = mlirBlockGetNumArguments(body);
  for (intptr_t i = 0; i < n; ++i) {
    strbuf_printf(t, "%s%%a%ld: ", i ? ", " : "", (long)i);
    mlirTypePrint(mlirValueGetType(mlirBlockGetArgument(body, i)), tc_print_to_strbuf, t);
  }
  strbuf_append(t, ") {\n");
  for (int i = 0; i < nptr; ++i) {
    const int v = i == 3 ? 4 : i; /* %p3 is the scratch */
    strbuf_printf(t, "%%i%d = memref.extract_aligned_pointer_as_index %%a%d : ", v, args[i]);
    mlirTypePrint(mlirValueGetType(mlirBlockGetArgument(body, args[i])), tc_print_to_strbuf, t);
    strbuf_printf(t,
                  " -> index\n%%j%d = arith.index_cast %%i%d : index to i64\n"
                  "%%p%d = llvm.inttoptr %%j%d : i64 to !llvm.ptr\n",
                  v, v, v, v);
  }
  if (scratch > 0)
    strbuf_printf(t,
                  "%%s = memref.alloc() {alignment = 64 : i64} : memref<%lldxi8>\n"
                  "%%i3 = memref.extract_aligned_pointer_as_index %%s : memref<%lldxi8> -> index\n"
                  "%%j3 = arith.index_cast %%i3 : index to i64\n"
                  "%%p3 = llvm.inttoptr %%j3 : i64 to !llvm.ptr\n",
                  (long long)scratch, (long long)scratch);
  else
    strbuf_append(t, "%p3 = llvm.mlir.zero : !llvm.ptr\n");
  strbuf_printf(t,
                "%%wg = arith.constant 0 : i32\n%%count = arith.constant 1 : i32\n"
                "func.call @tinyml_uk_%s(%%p0, %%p1, %%p2, %%p3, %%wg, %%count%s) "
                "{" TC_UKERNEL_WORKGROUPS " = %lld : i64} : "
                "(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32%s) -> ()\nreturn\n}\n}\n",
                kind, res ? ", %p4" : "", (long long)workgroups, res ? ", !llvm.ptr" : "");
}

/* Bands of output pixels worth running apart: each should have at least
 * UK_BAND_WORK multiply-adds (about a microsecond) and one pixel.  The
 * types do not show the kernel window: a conv's work is counted without it
 * (a lower bound, exact for 1x1 convs and matmuls), a depthwise conv's
 * with 3x3, the usual window.  UK_MAX_BANDS bounds the scratch, which each
 * band needs its own copy of; the runtime cuts a phase into at most 2
 * workgroups per thread, so 8 serve 4 threads. */
#define UK_BAND_WORK 16384
#define UK_MAX_BANDS 8

static int64_t numel(MlirType t) {
  if (!mlirTypeIsAShaped(t) || !mlirShapedTypeHasStaticShape(t)) return 0;
  int64_t n = 1;
  for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); ++i) n *= mlirShapedTypeGetDimSize(t, i);
  return n;
}

static int64_t last_dim(MlirType t) {
  intptr_t r = mlirTypeIsAShaped(t) && mlirShapedTypeHasRank(t) ? mlirShapedTypeGetRank(t) : 0;
  return r > 0 ? mlirShapedTypeGetDimSize(t, r - 1) : 1;
}

/* Rows of an NHWC tensor (its dimension 1). */
static int64_t rows(MlirType t) {
  return mlirTypeIsAShaped(t) && mlirShapedTypeHasRank(t) && mlirShapedTypeGetRank(t) == 4
             ? mlirShapedTypeGetDimSize(t, 1)
             : 1;
}

/* The output is NHWC with channels last (a matmul's [b, M, N] is M pixels
 * of N channels); the input's last dimension is the conv's input channels.
 * Bands are of pixels, or for an f32 conv with more channels than pixels
 * of TINYML_UK_F32_GROUP channels (uk_abi.h), as a run-time-B matmul's
 * always are (each band packs its own columns of B).  A depthwise conv
 * fused with its 1x1 conv (dwpw) and a whole block (pwdwpw) count the
 * last 1x1 conv's outputs times the input's channels, a lower bound of
 * their work; a block has bands of at least TC_PWDWPW_ROWS / 2 input rows:
 * each band computes again the expansion rows its first output row shares
 * with the band before (two for a 3x3 window at stride 1, one in seven of
 * a 14-row band's). */
static int64_t uk_work(MlirOperation uk, const char *kind) {
  MlirType in = mlirValueGetType(mlirOperationGetOperand(uk, 0));
  int64_t outs = numel(mlirValueGetType(mlirOperationGetResult(uk, 0)));
  const int conv = strncmp(kind, "conv", 4) == 0, dwpw = strncmp(kind, "dwpw", 4) == 0;
  const int block = strncmp(kind, "pwdwpw", 6) == 0, mm = strcmp(kind, TC_UK_MATMUL_F32) == 0;
  return outs * (conv || dwpw || block || mm ? last_dim(in) : 9);
}

static int64_t useful_bands(MlirOperation uk, const char *kind) {
  MlirType in = mlirValueGetType(mlirOperationGetOperand(uk, 0));
  MlirType out = mlirValueGetType(mlirOperationGetResult(uk, 0));
  int64_t outs = numel(out), chans = last_dim(out);
  if (outs <= 0 || chans <= 0) return 1;
  int64_t pixels = outs / chans, most = pixels;
  const int f32_conv = strncmp(kind, "conv", 4) == 0 && strstr(kind, "f32");
  const int mm = strcmp(kind, TC_UK_MATMUL_F32) == 0;
  if (mm || (f32_conv && chans > pixels))
    most = (chans + TINYML_UK_F32_GROUP - 1) / TINYML_UK_F32_GROUP;
  if (strncmp(kind, "pwdwpw", 6) == 0) most = rows(in) / (TC_PWDWPW_ROWS / 2);
  int64_t n = uk_work(uk, kind) / UK_BAND_WORK;
  if (n > most) n = most;
  return n < 1 ? 1 : n > UK_MAX_BANDS ? UK_MAX_BANDS : n;
}

/* The multiply-adds of one blob's kernel (a max pool: its comparisons). */
static int64_t blob_work(const tinyml_uk_params_t *p) {
  int64_t pixels = (int64_t)p->batch * p->oh * p->ow, window = (int64_t)p->kh * p->kw;
  switch (p->kind) {
  case TINYML_UK_DEPTHWISE: case TINYML_UK_DEPTHWISE_F32: case TINYML_UK_MAXPOOL_F32:
  case TINYML_UK_DWPW_F32:
    return pixels * p->ic * window;
  default:
    return pixels * p->oc * p->ic * window;
  }
}

/* The constant the call's blob argument (args[1]) names, or NULL when it
 * is not a constant (or there is no graph to look in). */
static const tc_constant_t *call_blob(const tc_graph_t *g, const tc_dispatch_t *dp,
                                      const int *args) {
  if (!g || !dp || (uint32_t)args[1] >= dp->input_count + dp->output_count) return NULL;
  const tc_buffer_t *blob = &g->buffers[dp->args[args[1]]];
  return blob->kind == TC_BUFFER_CONSTANT ? &g->constants[blob->index] : NULL;
}

/* A fused f32 kernel's whole work, summed over its chain of blobs
 * (uk_abi.h: next_off), or 0 for any other call.  uk_work's lower bound
 * misses a block's expansion and a first conv's window by 10-200x
 * (ResNet-50's 7x7 conv and pool: 0.6 M for 118 M), which kept those
 * calls, among the heaviest of their models, on one thread. */
static int64_t fused_work(const tc_graph_t *g, const tc_dispatch_t *dp, const int *args) {
  const tc_constant_t *c = call_blob(g, dp, args);
  tinyml_uk_params_t p;
  if (!c || c->size < sizeof p) return 0;
  memcpy(&p, c->data, sizeof p);
  if (p.kind < TINYML_UK_DWPW_F32 || p.kind > TINYML_UK_CONVPOOL_F32) return 0;
  int64_t work = 0;
  for (uint64_t off = 0, n = 0; n < 4; ++n) {
    memcpy(&p, (const uint8_t *)c->data + off, sizeof p);
    work += blob_work(&p);
    if (p.next_off <= 0 || off + (uint64_t)p.next_off + sizeof p > c->size) break;
    off += (uint64_t)p.next_off;
  }
  return work;
}

/* The bytes of the call's blob (weights, bias, parameters), which every
 * call reads whole, or 0 when it is not a constant.  Where they outnumber
 * the multiply-adds (a matmul of one or a few rows, e.g. MobileNetV2's
 * 1280 x 1000 Gemm: 1.3 M multiply-adds, 5.1 MB), the call waits on them,
 * each byte from L3 or memory costing more than a multiply-add (that Gemm:
 * 214 us on one thread on Emerald Rapids, 1/7 the rate of 1x1 convs), so
 * its work is counted as its bytes: split, each thread streams half. */
static int64_t blob_bytes(const tc_graph_t *g, const tc_dispatch_t *dp, const int *args) {
  const tc_constant_t *c = call_blob(g, dp, args);
  if (!c) return 0;
  return c->size > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)c->size;
}

/* A max pool's call waits on memory, not on its comparisons (9 an output
 * for 3x3): its work is counted as the bytes it moves, each input byte
 * read once and each output byte twice (a store to a line not in cache
 * reads the line first, then writes it back).  On Emerald Rapids that
 * matches its time at the 1x1 convs' rate of about 70 multiply-adds a
 * nanosecond within 15%: SqueezeNet-1.1's 55x55x128 pool, 2.3 M, 35-43 us
 * against 33; the input's NCHW -> NHWC copy, 1.8 M, 22-30 us against 26.
 * 0 for every other kind. */
static int64_t moved_bytes(MlirOperation uk, const char *kind) {
  if (strcmp(kind, "maxpool_f32") != 0) return 0;
  int64_t in = numel(mlirValueGetType(mlirOperationGetOperand(uk, 0)));
  int64_t out = numel(mlirValueGetType(mlirOperationGetResult(uk, 0)));
  return (int64_t)sizeof(float) * (in + 2 * out);
}

static int has_symbol(MlirModule m, const char *name) {
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    MlirAttribute s = mlirOperationGetAttributeByName(op, tc_str("sym_name"));
    if (!mlirAttributeIsNull(s) && mlirStringRefEqual(mlirStringAttrGetValue(s), tc_str(name)))
      return 1;
  }
  return 0;
}

/* Moves the parsed body into `func` and the declaration into `dispatches`. */
static void splice(MlirModule dispatches, MlirOperation func, MlirModule parsed,
                   const char *kind) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  /* Users before producers; partitioning left only a handful of ops here. */
  MlirOperation old[64];
  unsigned n = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op) && n < 64;
       op = mlirOperationGetNextInBlock(op))
    old[n++] = op;
  while (n > 0) mlirOperationDestroy(old[--n]);
  MlirOperation decl = mlirBlockGetFirstOperation(mlirModuleGetBody(parsed));
  MlirOperation f = mlirOperationGetNextInBlock(decl);
  MlirBlock src = mlirRegionGetFirstBlock(mlirOperationGetRegion(f, 0));
  for (intptr_t i = 0; i < mlirBlockGetNumArguments(src); ++i)
    mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(src, i), mlirBlockGetArgument(body, i));
  for (MlirOperation op = mlirBlockGetFirstOperation(src); !mlirOperationIsNull(op);) {
    MlirOperation next = mlirOperationGetNextInBlock(op);
    mlirOperationRemoveFromParent(op);
    mlirBlockAppendOwnedOperation(body, op);
    op = next;
  }
  char sym[64];
  snprintf(sym, sizeof sym, "tinyml_uk_%s", kind);
  if (!has_symbol(dispatches, sym)) {
    mlirOperationRemoveFromParent(decl);
    mlirBlockInsertOwnedOperation(mlirModuleGetBody(dispatches), 0, decl);
  }
}

/* conv_add_f32 reads each residual element just before it stores the
 * output element at the same index, in the same workgroup, so the output
 * may overwrite the residual, unless the taps take more than one chunk
 * (partial sums go to the output first) or the conv reads the residual as
 * its input too.  args: the function arguments of input, blob, output,
 * residual. */
static void note_reuse(const tc_graph_t *g, tc_dispatch_t *dp, const char *kind,
                       const int *args) {
  const uint32_t nargs = dp->input_count + dp->output_count;
  for (int i = 0; i < 4; ++i)
    if ((uint32_t)args[i] >= nargs) return;
  if (strcmp(kind, "conv_add_f32") != 0) return;
  const tc_buffer_t *blob = &g->buffers[dp->args[args[1]]];
  tinyml_uk_params_t p;
  if (blob->kind != TC_BUFFER_CONSTANT || g->constants[blob->index].size < sizeof p) return;
  memcpy(&p, g->constants[blob->index].data, sizeof p);
  if (p.k > TINYML_UK_F32_KC || dp->args[args[0]] == dp->args[args[3]]) return;
  dp->reuse_in = (uint32_t)args[3] + 1;
  dp->reuse_out = (uint32_t)args[2] + 1;
}

static MlirWalkResult find_banded_call(MlirOperation op, void *user) {
  if (!tc_op_is(op, "func.call") ||
      mlirAttributeIsNull(mlirOperationGetAttributeByName(op, tc_str(TC_UKERNEL_WORKGROUPS))))
    return MlirWalkResultAdvance;
  *(MlirOperation *)user = op;
  return MlirWalkResultInterrupt;
}

/* Records on the call the work that distribute.c weighs against the
 * backend's split_min_work: the same estimate as the bands'. */
static void note_work(MlirContext ctx, MlirModule parsed, int64_t work) {
  MlirOperation call = {NULL};
  mlirOperationWalk(mlirModuleGetOperation(parsed), find_banded_call, &call, MlirWalkPreOrder);
  if (!mlirOperationIsNull(call))
    mlirOperationSetAttributeByName(call, tc_str(TC_UKERNEL_WORK),
                                    mlirIntegerAttrGet(mlirIntegerTypeGet(ctx, 64), work));
}

static int64_t max_i64(int64_t x, int64_t y) { return x > y ? x : y; }

static tinyml_status_t lower_one(MlirContext ctx, MlirModule dispatches, MlirOperation func,
                                 MlirOperation uk, tc_diag_t *diag,
                                 const tinyml_allocator_t *a, const tc_graph_t *g,
                                 tc_dispatch_t *dp) {
  const intptr_t nin = mlirOperationGetNumOperands(uk);
  int args[4] = {tc_arg_of_operand(mlirOperationGetOperand(uk, 0)),
                 tc_arg_of_operand(mlirOperationGetOperand(uk, 1)),
                 tc_arg_of_result(mlirOperationGetResult(uk, 0)),
                 nin > 2 ? tc_arg_of_operand(mlirOperationGetOperand(uk, 2)) : 0};
  char kind[32];
  string_attr(uk, "kind", kind, sizeof kind);
  MlirAttribute sa = mlirOperationGetAttributeByName(uk, tc_str("scratch"));
  if (nin < 2 || nin > 3 || args[0] < 0 || args[1] < 0 || args[2] < 0 || args[3] < 0 ||
      !kind[0] || mlirAttributeIsNull(sa))
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: a microkernel dispatch has an unexpected form");
  if (dp && nin == 3) note_reuse(g, dp, kind, args);
  strbuf_t t;
  strbuf_init(&t, a);
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  write_body(&t, body, kind, mlirIntegerAttrGetValueInt(sa), args, (int)nin + 1,
             useful_bands(uk, kind));
  size_t len = 0;
  char *text = strbuf_take(&t, &len);
  strbuf_free(&t);
  if (!text) return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  tinyml_status_t st = TINYML_OK;
  MlirModule parsed = mlirModuleCreateParse(ctx, mlirStringRefCreate(text, len));
  if (mlirModuleIsNull(parsed))
    st = tinyml__status_make(a, TINYML_STATUS_INTERNAL, "compiler: microkernel call: %s",
                             diag->len ? diag->text : "(no diagnostic)");
  else {
    /* The largest of the estimates: each one alone can miss the cost. */
    int64_t work = max_i64(max_i64(uk_work(uk, kind), fused_work(g, dp, args)),
                           max_i64(blob_bytes(g, dp, args), moved_bytes(uk, kind)));
    note_work(ctx, parsed, work);
    splice(dispatches, func, parsed, kind);
  }
  if (!mlirModuleIsNull(parsed)) mlirModuleDestroy(parsed);
  tinyml__free(a, text);
  return st;
}

tinyml_status_t tc_ukernels_lower(MlirContext ctx, tc_graph_t *g, tc_diag_t *diag,
                                  const tinyml_allocator_t *a) {
  MlirModule dispatches = g->dispatch_module;
  MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(dispatches));
  while (!mlirOperationIsNull(op)) {
    MlirOperation next = mlirOperationGetNextInBlock(op);
    MlirOperation uk = {NULL};
    if (tc_op_is(op, "func.func")) mlirOperationWalk(op, find_uk, &uk, MlirWalkPreOrder);
    if (!mlirOperationIsNull(uk)) {
      const long d = tc_dispatch_index(op, g->dispatch_count);
      TINYML_RETURN_IF_ERROR(
          lower_one(ctx, dispatches, op, uk, diag, a, g, d < 0 ? NULL : &g->dispatches[d]));
    }
    op = next;
  }
  return TINYML_OK;
}
