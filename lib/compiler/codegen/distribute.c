/* Splits each dispatch into phases whose work the runtime's threads share
 * (executable ABI 2, lib/module/executable_abi.h).
 *
 * Runs on the bufferized dispatch functions, after the backend strategy and
 * the scratch rewrite.  Every function gets three trailing index arguments:
 * (phase, workgroup, workgroup_count).
 *
 *  1. Tiling.  Each linalg op at the top of a function that does enough work
 *     is tiled along its outermost parallel dimension of extent > 1 (the
 *     transform dialect's tile_using_for), so it becomes a loop whose
 *     iterations write disjoint slices of its outputs (tiling.c).
 *  2. Phases.  The ops at the top of the function that touch memory are cut
 *     into phases, in order.  A phase is a parallel loop (one of step 1's,
 *     or a loop of the strategy's loop nest whose iterations provably write
 *     disjoint memory: loop_access.c), or a run of
 *     other ops, which stays on one thread.  Consecutive parallel loops
 *     with the same bounds share a phase when iteration i of each touches
 *     what the other writes only in iteration i's slice.
 *     With several phases, the body becomes `scf.index_switch %phase`; the
 *     runtime runs the phases in order and waits for each before the next.
 *  3. Workgroups.  The parallel loop of a phase is cut into workgroup_count
 *     contiguous blocks of iterations, and workgroup w runs block w
 *     (split_loop).  Iterations keep their arithmetic, so results do not
 *     depend on the split.  The number of iterations is the phase's useful
 *     workgroup count.
 *
 * A microkernel call is one phase whose workgroups the kernel itself cuts
 * into bands of output pixels (distribute_uk.c).
 *
 * Pure ops at the top (constants, views, index arithmetic) stay in front of
 * the phases and run in every call.  A function whose shape does not fit
 * (a value crossing phases, too many phases) keeps one phase of one
 * workgroup. */
#include "distribute.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <string.h>

#include "../../common/status.h"
#include "loop_access.h"
#include "tiling.h"
#include "ukernel_lower.h"

#define MAX_TOP_OPS 256

static void append_index_args(MlirContext ctx, MlirOperation func, MlirBlock body, int n) {
  MlirType index = mlirIndexTypeGet(ctx);
  MlirType ft = mlirTypeAttrGetValue(
      mlirOperationGetAttributeByName(func, tc_str("function_type")));
  intptr_t k = mlirFunctionTypeGetNumInputs(ft);
  MlirType ins[k + n];
  for (intptr_t i = 0; i < k; ++i) ins[i] = mlirFunctionTypeGetInput(ft, i);
  for (int i = 0; i < n; ++i) {
    ins[k + i] = index;
    mlirBlockAddArgument(body, index, mlirLocationUnknownGet(ctx));
  }
  mlirOperationSetAttributeByName(
      func, tc_str("function_type"),
      mlirTypeAttrGet(mlirFunctionTypeGet(ctx, k + n, ins, 0, NULL)));
}

static MlirValue build_binary(MlirContext ctx, const char *name, MlirValue x, MlirValue y,
                              MlirOperation before) {
  MlirType index = mlirIndexTypeGet(ctx);
  MlirOperationState st = mlirOperationStateGet(tc_str(name), mlirLocationUnknownGet(ctx));
  MlirValue operands[2] = {x, y};
  mlirOperationStateAddOperands(&st, 2, operands);
  mlirOperationStateAddResults(&st, 1, &index);
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, op);
  return mlirOperationGetResult(op, 0);
}

typedef struct top_op {
  MlirOperation op;
  MlirOperation loop; /* the loop split over workgroups, or null */
  uint32_t workgroups;
  uint32_t phase;
  int64_t work; /* op_work, before the split */
} top_op_t;

static uint32_t phase_of(const top_op_t *ops, size_t n, MlirOperation user,
                         MlirOperation func) {
  for (MlirOperation p = mlirOperationGetParentOperation(user);
       !mlirOperationIsNull(p) && !mlirOperationEqual(p, func);
       p = mlirOperationGetParentOperation(p))
    user = p;
  for (size_t i = 0; i < n; ++i)
    if (mlirOperationEqual(ops[i].op, user)) return ops[i].phase;
  return UINT32_MAX; /* a pure op or the terminator */
}

static MlirValue build_index(MlirContext ctx, int64_t value, MlirOperation before) {
  MlirType index = mlirIndexTypeGet(ctx);
  MlirOperationState st =
      mlirOperationStateGet(tc_str("arith.constant"), mlirLocationUnknownGet(ctx));
  MlirNamedAttribute v = mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str("value")),
                                               mlirIntegerAttrGet(index, value));
  mlirOperationStateAddAttributes(&st, 1, &v);
  mlirOperationStateAddResults(&st, 1, &index);
  MlirOperation op = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, op);
  return mlirOperationGetResult(op, 0);
}

/* A loop of n iterations, `for i = lb to ub step s`, becomes
 * `for i = lb + (wg*n/count)*s to lb + ((wg+1)*n/count)*s step s`: each
 * workgroup runs one contiguous block of iterations (neighbouring rows
 * share cache lines and stay on one thread), the blocks cover every
 * iteration once, and a workgroup past the n-th runs none. */
static void split_loop(MlirContext ctx, MlirOperation loop, MlirValue wg, MlirValue count) {
  MlirValue lb = mlirOperationGetOperand(loop, 0);
  MlirValue step = mlirOperationGetOperand(loop, 2);
  MlirValue n = build_index(ctx, tc_loop_exact_trips(loop), loop);
  MlirValue one = build_index(ctx, 1, loop);
  MlirValue k0 = build_binary(ctx, "arith.divui", build_binary(ctx, "arith.muli", wg, n, loop),
                              count, loop);
  MlirValue k1 = build_binary(
      ctx, "arith.divui",
      build_binary(ctx, "arith.muli", build_binary(ctx, "arith.addi", wg, one, loop), n, loop),
      count, loop);
  mlirOperationSetOperand(
      loop, 0, build_binary(ctx, "arith.addi", lb, build_binary(ctx, "arith.muli", k0, step, loop), loop));
  mlirOperationSetOperand(
      loop, 1, build_binary(ctx, "arith.addi", lb, build_binary(ctx, "arith.muli", k1, step, loop), loop));
}

static MlirOperation build_switch(MlirContext ctx, MlirValue phase, uint32_t phases,
                                  MlirOperation before) {
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  int64_t cases[TC_MAX_PHASES];
  MlirRegion regions[TC_MAX_PHASES + 1];
  for (uint32_t i = 0; i <= phases; ++i) {
    if (i < phases) cases[i] = i;
    regions[i] = mlirRegionCreate();
    MlirBlock b = mlirBlockCreate(0, NULL, NULL);
    mlirRegionAppendOwnedBlock(regions[i], b);
    MlirOperationState y = mlirOperationStateGet(tc_str("scf.yield"), loc);
    mlirBlockAppendOwnedOperation(b, mlirOperationCreate(&y));
  }
  MlirOperationState st = mlirOperationStateGet(tc_str("scf.index_switch"), loc);
  mlirOperationStateAddOperands(&st, 1, &phase);
  MlirNamedAttribute attr = mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str("cases")),
                                                  mlirDenseI64ArrayGet(ctx, phases, cases));
  mlirOperationStateAddAttributes(&st, 1, &attr);
  mlirOperationStateAddOwnedRegions(&st, phases + 1, regions); /* default first */
  MlirOperation sw = mlirOperationCreate(&st);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(before), before, sw);
  return sw;
}

/* Work estimates, in element operations (a vector op counts its lanes, a
 * loop its trip count times its body, a linalg op its points), saturating
 * at WORK_MAX, which also stands for "unknown": such a phase stays split,
 * as before the estimate existed. */
#define WORK_MAX INT64_MAX

static int64_t work_add(int64_t x, int64_t y) { return x > WORK_MAX - y ? WORK_MAX : x + y; }

static int64_t work_mul(int64_t x, int64_t y) {
  return x && y > WORK_MAX / x ? WORK_MAX : x * y;
}

static int64_t lanes(MlirType t) {
  if (!mlirTypeIsAVector(t) || !mlirShapedTypeHasStaticShape(t)) return 1;
  int64_t n = 1;
  for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); ++i) n *= mlirShapedTypeGetDimSize(t, i);
  return n;
}

static int64_t op_work(MlirOperation op);

static int64_t regions_work(MlirOperation op) {
  int64_t w = 0;
  for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); ++r)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
         !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
      for (MlirOperation o = mlirBlockGetFirstOperation(b); !mlirOperationIsNull(o);
           o = mlirOperationGetNextInBlock(o))
        w = work_add(w, op_work(o));
  return w;
}

/* The bytes of a statically shaped operand, or 0. */
static int64_t value_bytes(MlirValue v) {
  MlirType t = mlirValueGetType(v);
  uint64_t n = mlirTypeIsAShaped(t) ? tc_type_byte_size(t) : 0;
  return n > (uint64_t)WORK_MAX ? WORK_MAX : (int64_t)n;
}

/* A linalg.generic whose body only yields its arguments: a copy, a
 * transpose or a broadcast, spelled out. */
static bool only_yields_arguments(MlirOperation op) {
  if (mlirOperationGetNumRegions(op) != 1) return false;
  MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
  MlirOperation y = mlirBlockIsNull(b) ? (MlirOperation){NULL} : mlirBlockGetFirstOperation(b);
  if (mlirOperationIsNull(y) || !tc_op_is(y, "linalg.yield")) return false;
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(y); ++i)
    if (!mlirValueIsABlockArgument(mlirOperationGetOperand(y, i))) return false;
  return true;
}

/* A copy or transpose waits on memory, not on its one operation a point:
 * like a max pool's call (ukernel_lower.c, moved_bytes), its work is the
 * bytes it moves, its input's plus twice its output's (a store to a line
 * not in cache reads it first).  SqueezeNet-1.1's and MobileNetV2's NCHW
 * -> NHWC input copy, 150 K points, moves 1.8 MB: 31-36 us inline on 2
 * threads, 17 us split (docs/PERF.md, "Threads on Intel (issue 27)").
 * 0 for any other op. */
static int64_t moved_bytes(MlirOperation op, intptr_t inputs) {
  if (!tc_op_is(op, "linalg.transpose") && !tc_op_is(op, "linalg.copy") &&
      !(tc_op_is(op, "linalg.generic") && only_yields_arguments(op)))
    return 0;
  int64_t b = 0;
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i)
    b = work_add(b, work_mul(i < inputs ? 1 : 2, value_bytes(mlirOperationGetOperand(op, i))));
  return b;
}

static int64_t op_work(MlirOperation op) {
  if (tc_op_name_starts(op, "linalg.")) {
    int64_t w = tc_linalg_work(op);
    intptr_t inputs, inits;
    int64_t b = w > 0 && tc_dps_split(op, &inputs, &inits) ? moved_bytes(op, inputs) : 0;
    return w <= 0 ? WORK_MAX : b > w ? b : w;
  }
  if (tc_op_is(op, "scf.for")) {
    int64_t trips = tc_loop_const_trips(op); /* a reduction's carried values too */
    return trips < 0 ? WORK_MAX : work_mul(trips, regions_work(op));
  }
  if (tc_op_is(op, "func.call")) {
    MlirAttribute w = mlirOperationGetAttributeByName(op, tc_str(TC_UKERNEL_WORK));
    return mlirAttributeIsAInteger(w) ? mlirIntegerAttrGetValueInt(w) : WORK_MAX;
  }
  int64_t w = 1;
  for (intptr_t i = 0; i < mlirOperationGetNumResults(op); ++i)
    if (lanes(mlirValueGetType(mlirOperationGetResult(op, i))) > w)
      w = lanes(mlirValueGetType(mlirOperationGetResult(op, i)));
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i)
    if (lanes(mlirValueGetType(mlirOperationGetOperand(op, i))) > w)
      w = lanes(mlirValueGetType(mlirOperationGetOperand(op, i)));
  return work_add(w, regions_work(op));
}

static MlirWalkResult find_banded_call(MlirOperation op, void *user) {
  if (!tc_op_is(op, "func.call") ||
      mlirAttributeIsNull(mlirOperationGetAttributeByName(op, tc_str(TC_UKERNEL_WORK))))
    return MlirWalkResultAdvance;
  *(MlirOperation *)user = op;
  return MlirWalkResultInterrupt;
}

/* Whether `func` calls a microkernel whose work is below `min_work`: too
 * little to share, so it keeps one band (and one scratch copy).  Drops the
 * call's work note, which nothing after this reads. */
static bool small_ukernel(MlirOperation func, int64_t min_work) {
  MlirOperation call = {NULL};
  mlirOperationWalk(func, find_banded_call, &call, MlirWalkPreOrder);
  if (mlirOperationIsNull(call)) return false;
  bool small = op_work(call) < min_work;
  mlirOperationRemoveAttributeByName(call, tc_str(TC_UKERNEL_WORK));
  return small;
}

/* A phase whose ops together do less than `min_work` keeps one useful
 * workgroup: the runtime then runs it inline on the invoking thread.  Its
 * loops stay split, and workgroup 0 of 1 runs every iteration. */
static void keep_small_phases_whole(const top_op_t *ops, size_t n, uint32_t phases,
                                    int64_t min_work, tc_dispatch_t *d) {
  int64_t work[TC_MAX_PHASES] = {0};
  for (size_t i = 0; i < n; ++i) work[ops[i].phase] = work_add(work[ops[i].phase], ops[i].work);
  for (uint32_t p = 0; p < phases; ++p)
    if (work[p] < min_work) d->workgroups[p] = 1;
}

/* Stack buffers (memref.alloca, which tc_op_is_pure lets every call make
 * for itself) hold nothing from one phase to the next, since each phase is
 * a call of its own: every op that reaches one must be in one phase.  Top
 * ops index into `ops`; `first`/`last` are the top ops reaching each. */
#define MAX_ALLOCAS 16

typedef struct alloca_use {
  MlirOperation alloca[MAX_ALLOCAS];
  size_t first[MAX_ALLOCAS], last[MAX_ALLOCAS];
  size_t n;
  size_t current; /* the top op being walked */
  bool overflow;  /* more than MAX_ALLOCAS */
} alloca_use_t;

static MlirWalkResult note_alloca_uses(MlirOperation op, void *user) {
  alloca_use_t *u = user;
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i) {
    MlirOperation root = tc_value_owner_op(mlirOperationGetOperand(op, i));
    while (!mlirOperationIsNull(root) && tc_is_memref_view(root))
      root = tc_value_owner_op(mlirOperationGetOperand(root, 0));
    if (mlirOperationIsNull(root) || !tc_op_is(root, "memref.alloca")) continue;
    size_t k = 0;
    while (k < u->n && !mlirOperationEqual(u->alloca[k], root)) ++k;
    if (k == MAX_ALLOCAS) {
      u->overflow = true; /* too many to follow: keep one phase */
      return MlirWalkResultInterrupt;
    }
    if (k == u->n) {
      u->alloca[u->n++] = root;
      u->first[k] = u->current;
    }
    u->last[k] = u->current;
  }
  return MlirWalkResultAdvance;
}

static bool note_allocas(const top_op_t *ops, size_t n, alloca_use_t *u) {
  *u = (alloca_use_t){.n = 0};
  for (size_t i = 0; i < n && !u->overflow; ++i) {
    u->current = i;
    mlirOperationWalk(ops[i].op, note_alloca_uses, u, MlirWalkPreOrder);
  }
  return !u->overflow;
}

/* A stack buffer written by one top op and read by a later one (x86-64's
 * packed panel of B in a strip that the peel left outside the strip loop,
 * when the k loop folds away: the copy's row loop, then the 8-row loop)
 * makes those ops and any between them one unsplit run, hence one phase;
 * the dispatch's other loops still split.  Before, the whole dispatch
 * kept one workgroup (a 256x256x200 f32 matmul with AVX-512). */
static void keep_alloca_users_together(top_op_t *ops, size_t n) {
  alloca_use_t u;
  if (!note_allocas(ops, n, &u)) return; /* allocas_cross_phases refuses */
  for (size_t k = 0; k < u.n; ++k) {
    if (u.first[k] == u.last[k]) continue; /* one op's own buffer: it may split */
    for (size_t i = u.first[k]; i <= u.last[k]; ++i) {
      ops[i].workgroups = 1;
      ops[i].loop = (MlirOperation){NULL};
    }
  }
}

static bool allocas_cross_phases(const top_op_t *ops, size_t n) {
  alloca_use_t u;
  if (!note_allocas(ops, n, &u)) return true;
  for (size_t k = 0; k < u.n; ++k)
    if (ops[u.first[k]].phase != ops[u.last[k]].phase) return true;
  return false;
}

/* Whether `op` uses a result of one of the first n top ops.  Such a pure
 * op (say the arithmetic between an elementwise step's remainder vector
 * load and store, which the strategy leaves at the top) is one of them
 * too: it runs in its operands' phase, not in front of every phase. */
static bool uses_top_op(MlirOperation op, const top_op_t *ops, size_t n) {
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i) {
    MlirOperation def = tc_value_owner_op(mlirOperationGetOperand(op, i));
    if (mlirOperationIsNull(def)) continue;
    for (size_t k = 0; k < n; ++k)
      if (mlirOperationEqual(ops[k].op, def)) return true;
  }
  return false;
}

/* Decides the phases of one function and rewrites it.  `split`: whether
 * loops may be split at all (targets whose runtime has no threads keep
 * their code as it was). */
static void distribute_function(MlirContext ctx, MlirOperation func, tc_dispatch_t *d,
                                bool split, int64_t min_work, const tinyml_allocator_t *a) {
  MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  intptr_t nargs = mlirBlockGetNumArguments(body);
  append_index_args(ctx, func, body, 3);
  MlirValue phase = mlirBlockGetArgument(body, nargs);
  MlirValue wg = mlirBlockGetArgument(body, nargs + 1);
  MlirValue count = mlirBlockGetArgument(body, nargs + 2);
  d->phase_count = 1;
  d->workgroups[0] = 1;
  bool whole = small_ukernel(func, min_work);
  if (tc_distribute_ukernel(ctx, func, d, split && !whole)) return;

  top_op_t ops[MAX_TOP_OPS];
  size_t n = 0;
  MlirOperation term = mlirBlockGetTerminator(body);
  for (MlirOperation op = mlirBlockGetFirstOperation(body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    bool tiled = !mlirAttributeIsNull(mlirOperationGetAttributeByName(op, tc_str("tinyml.wg")));
    if (tiled) mlirOperationRemoveAttributeByName(op, tc_str("tinyml.wg"));
    if (mlirOperationEqual(op, term) || (tc_op_is_pure(op) && !uses_top_op(op, ops, n)))
      continue;
    if (n == MAX_TOP_OPS) return;
    top_op_t t = {.op = op, .workgroups = 1, .work = op_work(op)};
    if (split && tc_op_is(op, "scf.for")) {
      MlirOperation loop = tiled ? op : tc_pick_loop(op, a);
      uint32_t w = mlirOperationIsNull(loop) ? 1 : tc_loop_trip_count(loop);
      if (w > 1) {
        t.loop = loop;
        t.workgroups = w;
      }
    }
    ops[n++] = t;
  }
  keep_alloca_users_together(ops, n);
  /* Runs of unsplit ops share a phase, and so do runs of split top-level
   * loops that tc_loops_share_phase pairwise; any other op starts a phase. */
  uint32_t phases = 0;
  size_t start = 0; /* first op of the current phase */
  for (size_t i = 0; i < n; ++i) {
    bool joins = i > 0 && ops[i].workgroups == 1 && ops[i - 1].workgroups == 1;
    if (i > 0 && ops[i].workgroups > 1 && ops[i - 1].workgroups > 1) {
      joins = true;
      for (size_t j = start; joins && j < i; ++j)
        joins = mlirOperationEqual(ops[j].loop, ops[j].op) &&
                mlirOperationEqual(ops[i].loop, ops[i].op) &&
                tc_loops_share_phase(ops[j].op, ops[i].op, a);
    }
    if (!joins) start = i;
    ops[i].phase = joins ? phases - 1 : phases++;
  }
  if (phases > TC_MAX_PHASES) return;
  /* Values must not cross phases, and pure ops left in front of the phases
   * must not use what a phase computes. */
  for (size_t i = 0; i < n; ++i)
    for (intptr_t r = 0; r < mlirOperationGetNumResults(ops[i].op); ++r)
      for (MlirOpOperand u = mlirValueGetFirstUse(mlirOperationGetResult(ops[i].op, r));
           !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u))
        if (phase_of(ops, n, mlirOpOperandGetOwner(u), func) != ops[i].phase) return;
  if (allocas_cross_phases(ops, n)) return;
  for (size_t i = 0; i < n; ++i)
    if (!mlirOperationIsNull(ops[i].loop)) split_loop(ctx, ops[i].loop, wg, count);
  for (uint32_t p = 0; p < phases; ++p) d->workgroups[p] = 1;
  for (size_t i = 0; i < n; ++i)
    if (ops[i].workgroups > d->workgroups[ops[i].phase])
      d->workgroups[ops[i].phase] = ops[i].workgroups;
  keep_small_phases_whole(ops, n, phases, min_work, d);
  d->phase_count = phases ? phases : 1;
  if (phases <= 1) return;
  MlirOperation sw = build_switch(ctx, phase, phases, term);
  for (size_t i = 0; i < n; ++i) {
    MlirRegion r = mlirOperationGetRegion(sw, 1 + ops[i].phase);
    mlirOperationMoveBefore(ops[i].op, mlirBlockGetTerminator(mlirRegionGetFirstBlock(r)));
  }
}

tinyml_status_t tc_distribute(MlirContext ctx, const tinyml_backend_t *be, tc_graph_t *g,
                              tc_diag_t *diag, const tinyml_allocator_t *a) {
  /* Runtimes without threads (bare metal) call each entry once: their
   * kernels stay as they are. */
  bool split = be->threads != 0;
  /* An option above INT64_MAX means "never split" as well as INT64_MAX. */
  int64_t min_work = !g->split_min_work                       ? be->split_min_work
                     : g->split_min_work > (uint64_t)INT64_MAX ? INT64_MAX
                                                               : (int64_t)g->split_min_work;
  if (split) TINYML_RETURN_IF_ERROR(tc_tile_large_ops(ctx, g, diag, a));
  MlirBlock mod = mlirModuleGetBody(g->dispatch_module);
  for (MlirOperation f = mlirBlockGetFirstOperation(mod); !mlirOperationIsNull(f);
       f = mlirOperationGetNextInBlock(f)) {
    long idx = tc_op_is(f, "func.func") ? tc_dispatch_index(f, g->dispatch_count) : -1;
      if (idx >= 0) distribute_function(ctx, f, &g->dispatches[idx], split, min_work, a);
  }
  return TINYML_OK;
}
