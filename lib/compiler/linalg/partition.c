/* Dispatch formation: outlines the ops of the model function into one
 * function per dispatch, in destination-passing style on memref arguments,
 * and records which buffer each argument is.  The planner (memory_plan.c)
 * later decides where each buffer lives. */
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "../tosa/ukernel_op.h"
#include "partition.h"
#include "signature.h"

#define NONE UINT32_MAX
#define SMALL_CONSTANT_BYTES 64 /* cloned into kernels instead of bound */

typedef enum op_kind { K_RETURN, K_CONST, K_CLONE, K_ALIAS, K_COMPUTE } op_kind_t;

typedef struct vmap_entry {
  MlirValue key;
  MlirValue value;
  uint32_t buffer;
} vmap_entry_t;

typedef struct part {
  const tinyml_allocator_t *a;
  MlirContext ctx;
  MlirBlock body;
  MlirOperation *ops;
  op_kind_t *kind;
  uint32_t *group; /* dispatch index of each compute op */
  uint32_t n;
  vmap_entry_t *buf; /* value -> buffer, for every value with storage */
  uint32_t buf_count, buf_cap;
  tc_graph_t *g;
} part_t;

/* ---- small lookups ---------------------------------------------------- */

static uint32_t op_index(const part_t *p, MlirOperation op) {
  while (!mlirOperationIsNull(op) &&
         !mlirBlockEqual(mlirOperationGetBlock(op), p->body))
    op = mlirOperationGetParentOperation(op);
  for (uint32_t i = 0; i < p->n && !mlirOperationIsNull(op); ++i)
    if (mlirOperationEqual(p->ops[i], op)) return i;
  return NONE;
}

/* Index of the top-level op defining `v`, or NONE for a function argument. */
static uint32_t def_index(const part_t *p, MlirValue v) {
  if (mlirValueIsAOpResult(v)) return op_index(p, mlirOpResultGetOwner(v));
  MlirBlock b = mlirBlockArgumentGetOwner(v);
  if (mlirBlockEqual(b, p->body)) return NONE;
  return op_index(p, mlirBlockGetParentOperation(b));
}

static uint32_t buffer_of(const part_t *p, MlirValue v) {
  for (uint32_t i = 0; i < p->buf_count; ++i)
    if (mlirValueEqual(p->buf[i].key, v)) return p->buf[i].buffer;
  return NONE;
}

static int is_tensor(MlirType t) { return mlirTypeIsARankedTensor(t); }

static int has_tensor_result(MlirOperation op) {
  for (intptr_t i = 0; i < mlirOperationGetNumResults(op); ++i)
    if (is_tensor(mlirValueGetType(mlirOperationGetResult(op, i)))) return 1;
  return 0;
}

/* Users of all results of op i, as top-level indices; returns the count and
 * the single user when there is exactly one distinct user op and one use. */
static uint32_t sole_user(const part_t *p, uint32_t i, uint32_t *out_user) {
  uint32_t uses = 0, user = NONE;
  MlirOperation op = p->ops[i];
  for (intptr_t r = 0; r < mlirOperationGetNumResults(op); ++r) {
    MlirOpOperand u = mlirValueGetFirstUse(mlirOperationGetResult(op, r));
    for (; !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
      ++uses;
      user = op_index(p, mlirOpOperandGetOwner(u));
    }
  }
  *out_user = user;
  return uses;
}

/* ---- classification --------------------------------------------------- */

static int is_reshape(MlirOperation op) {
  return tc_op_is(op, "tensor.collapse_shape") ||
         tc_op_is(op, "tensor.expand_shape") || tc_op_is(op, "tensor.reshape");
}

static op_kind_t classify_constant(MlirOperation op) {
  MlirValue r = mlirOperationGetResult(op, 0);
  MlirAttribute v = mlirOperationGetAttributeByName(op, tc_str("value"));
  if (!is_tensor(mlirValueGetType(r)) || mlirAttributeIsNull(v) ||
      !mlirAttributeIsADenseElements(v) || mlirDenseElementsAttrIsSplat(v))
    return K_CLONE;
  if (tc_dtype_of(mlirShapedTypeGetElementType(mlirValueGetType(r))) ==
      TINYML_DTYPE_BOOL)
    return K_CLONE; /* i1 storage is bit-packed in attributes */
  return tc_type_byte_size(mlirValueGetType(r)) > SMALL_CONSTANT_BYTES ? K_CONST
                                                                       : K_CLONE;
}

static op_kind_t classify(const part_t *p, uint32_t i) {
  MlirOperation op = p->ops[i];
  if (tc_op_is(op, "func.return")) return K_RETURN;
  if (tc_op_is(op, "arith.constant")) return classify_constant(op);
  if (tc_op_is(op, "tensor.empty") || !has_tensor_result(op)) return K_CLONE;
  if (is_reshape(op)) {
    uint32_t src = def_index(p, mlirOperationGetOperand(op, 0));
    if (src != NONE && p->kind[src] == K_CLONE) return K_CLONE;
    return K_ALIAS;
  }
  return K_COMPUTE;
}

/* A producer worth recomputing inside its only consumer rather than
 * materialising: fills, pads, broadcasts. */
static int is_cheap_producer(MlirOperation op) {
  if (tc_op_is(op, "linalg.fill") || tc_op_is(op, "tensor.pad") ||
      tc_op_is(op, "linalg.broadcast"))
    return 1;
  if (!tc_op_is(op, "linalg.generic") || mlirOperationGetNumOperands(op) != 2)
    return 0;
  /* A generic whose body only yields its input is pure data movement. */
  MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
  MlirOperation first = mlirBlockGetFirstOperation(b);
  if (!tc_op_is(first, "linalg.yield") || mlirOperationGetNumOperands(first) != 1)
    return 0;
  MlirValue y = mlirOperationGetOperand(first, 0);
  return mlirValueIsABlockArgument(y) && mlirBlockArgumentGetArgNumber(y) == 0;
}

/* An elementwise generic: every loop parallel, so it can join its producer
 * in one dispatch and later be fused into its tiles. */
static int is_elementwise(MlirOperation op) {
  if (!tc_op_is(op, "linalg.generic")) return 0;
  MlirAttribute it = mlirOperationGetAttributeByName(op, tc_str("iterator_types"));
  if (mlirAttributeIsNull(it) || !mlirAttributeIsAArray(it)) return 0;
  for (intptr_t i = 0; i < mlirArrayAttrGetNumElements(it); ++i)
    if (tc_attr_prints_with(mlirArrayAttrGetElement(it, i), "reduction")) return 0;
  return 1;
}

/* A concat lowers to insert_slices chained through their destinations.
 * Apart, each would copy the whole destination it gets into a new buffer;
 * together they write each element of one buffer once. */
static int extends_concat(const part_t *p, uint32_t k, uint32_t user) {
  return tc_op_is(p->ops[k], "tensor.insert_slice") &&
         tc_op_is(p->ops[user], "tensor.insert_slice") &&
         mlirValueEqual(mlirOperationGetOperand(p->ops[user], 1),
                        mlirOperationGetResult(p->ops[k], 0));
}

static int is_loop(MlirOperation op) { return tc_op_is(op, "scf.while"); }

/* tosa-to-scf also makes scf.if (tosa.cond_if) and scf.for (tosa.scatter)
 * from TOSA text: kept apart like a loop, whole. */
static int is_control_flow(MlirOperation op) {
  return is_loop(op) || tc_op_is(op, "scf.if") || tc_op_is(op, "scf.for");
}

static void assign_groups(part_t *p) {
  uint32_t next = 0;
  for (uint32_t k = p->n; k-- > 0;) {
    p->group[k] = NONE;
    if (p->kind[k] != K_COMPUTE) continue;
    uint32_t user;
    uint32_t uses = sole_user(p, k, &user);
    int joinable = uses == 1 && user != NONE && p->kind[user] == K_COMPUTE &&
                   mlirOperationGetNumResults(p->ops[k]) == 1;
    /* A microkernel is all of its dispatch (ukernel_lower.c). */
    if (joinable && (tc_op_is(p->ops[k], TC_UKERNEL_OP) || tc_op_is(p->ops[user], TC_UKERNEL_OP)))
      joinable = 0;
    /* A run-time loop (WHILE) is one dispatch by itself, everything it
     * nests included: the later stages tile and distribute the ops of a
     * dispatch, and a loop's body must run as a whole once per trip. */
    if (joinable && (is_control_flow(p->ops[k]) || is_control_flow(p->ops[user]))) joinable = 0;
    if (joinable && (is_cheap_producer(p->ops[k]) || is_elementwise(p->ops[user]) ||
                     extends_concat(p, k, user)))
      p->group[k] = p->group[user];
    else
      p->group[k] = next++;
  }
  /* Groups were numbered from the end; renumber in execution order. */
  for (uint32_t k = 0; k < p->n; ++k)
    if (p->group[k] != NONE) p->group[k] = next - 1 - p->group[k];
  p->g->dispatch_count = next;
}

/* ---- buffers ---------------------------------------------------------- */

static tinyml_status_t oom(const part_t *p) {
  return tinyml__status_make(p->a, TINYML_STATUS_OUT_OF_MEMORY,
                             "compiler: out of memory while partitioning");
}

static void map_value(part_t *p, MlirValue v, uint32_t buffer) {
  p->buf[p->buf_count].key = v;
  p->buf[p->buf_count].buffer = buffer;
  ++p->buf_count;
}

static uint32_t new_buffer(part_t *p, MlirValue v, tc_buffer_kind_t kind,
                           uint32_t index) {
  tc_graph_t *g = p->g;
  tc_buffer_t *b = &g->buffers[g->buffer_count];
  memset(b, 0, sizeof(*b));
  b->kind = kind;
  b->index = index;
  b->size = tc_type_byte_size(mlirValueGetType(v));
  b->last_use = -1;
  map_value(p, v, g->buffer_count);
  return g->buffer_count++;
}

static tinyml_status_t add_constant(part_t *p, MlirValue v) {
  MlirOperation op = mlirOpResultGetOwner(v);
  MlirAttribute attr = mlirOperationGetAttributeByName(op, tc_str("value"));
  tc_constant_t *c = &p->g->constants[p->g->constant_count];
  c->data = mlirDenseElementsAttrGetRawData(attr);
  c->size = tc_type_byte_size(mlirValueGetType(v));
  c->owned = 0;
  new_buffer(p, v, TC_BUFFER_CONSTANT, p->g->constant_count++);
  return TINYML_OK;
}

/* Whether result `v` of compute op i is read outside its own dispatch. */
static int used_outside(const part_t *p, uint32_t i, MlirValue v) {
  MlirOpOperand u = mlirValueGetFirstUse(v);
  for (; !mlirOpOperandIsNull(u); u = mlirOpOperandGetNextUse(u)) {
    uint32_t k = op_index(p, mlirOpOperandGetOwner(u));
    if (k == NONE || p->group[k] != p->group[i]) return 1;
  }
  return 0;
}

static tinyml_status_t assign_buffers(part_t *p) {
  MlirBlock body = p->body;
  for (intptr_t i = 0; i < mlirBlockGetNumArguments(body); ++i)
    new_buffer(p, mlirBlockGetArgument(body, i), TC_BUFFER_INPUT, (uint32_t)i);
  for (uint32_t i = 0; i < p->n; ++i) {
    MlirOperation op = p->ops[i];
    if (p->kind[i] == K_CONST) {
      TINYML_RETURN_IF_ERROR(add_constant(p, mlirOperationGetResult(op, 0)));
    } else if (p->kind[i] == K_ALIAS) {
      uint32_t src = buffer_of(p, mlirOperationGetOperand(op, 0));
      if (src == NONE)
        return tinyml__status_make(p->a, TINYML_STATUS_INTERNAL,
                                   "compiler: reshape of a value without storage");
      map_value(p, mlirOperationGetResult(op, 0), src);
    } else if (p->kind[i] == K_COMPUTE) {
      for (intptr_t r = 0; r < mlirOperationGetNumResults(op); ++r) {
        MlirValue v = mlirOperationGetResult(op, r);
        if (used_outside(p, i, v)) new_buffer(p, v, TC_BUFFER_PRODUCED, p->group[i]);
      }
    }
  }
  return TINYML_OK;
}

/* Element k of a dense attribute, stored little-endian at `out`. */
static void store_element(MlirAttribute a, MlirType elem, intptr_t k, uint8_t *out) {
  if (mlirTypeIsAF32(elem)) {
    float f = mlirDenseElementsAttrGetFloatValue(a, k);
    memcpy(out, &f, 4);
    return;
  }
  unsigned w = mlirIntegerTypeGetWidth(elem);
  int64_t v = w == 1    ? mlirDenseElementsAttrGetBoolValue(a, k)
              : w == 8  ? mlirDenseElementsAttrGetInt8Value(a, k)
              : w == 16 ? mlirDenseElementsAttrGetInt16Value(a, k)
              : w == 32 ? mlirDenseElementsAttrGetInt32Value(a, k)
                        : mlirDenseElementsAttrGetInt64Value(a, k);
  unsigned bytes = w == 1 ? 1 : w / 8;
  for (unsigned b = 0; b < bytes; ++b) out[b] = (uint8_t)((uint64_t)v >> (8 * b));
}

/* A result that is a small or splat constant (normally folded into the
 * code that reads it) gets its own expanded copy in the module so the
 * COPY step that writes the output has a source. */
static uint32_t returned_constant(part_t *p, MlirValue v) {
  if (!mlirValueIsAOpResult(v)) return NONE;
  MlirOperation op = mlirOpResultGetOwner(v);
  MlirAttribute a = mlirOperationGetAttributeByName(op, tc_str("value"));
  if (!tc_op_is(op, "arith.constant") || mlirAttributeIsNull(a) ||
      !mlirAttributeIsADenseElements(a))
    return NONE;
  MlirType t = mlirValueGetType(v), elem = mlirShapedTypeGetElementType(t);
  if (!mlirTypeIsAF32(elem) && !mlirTypeIsAInteger(elem)) return NONE;
  uint64_t size = tc_type_byte_size(t);
  intptr_t n = 1;
  for (intptr_t d = 0; d < mlirShapedTypeGetRank(t); ++d) n *= mlirShapedTypeGetDimSize(t, d);
  uint8_t *data = tinyml__calloc(p->a, size + 1, 1, 64);
  if (!data || n <= 0) {
    tinyml__free(p->a, data);
    return NONE;
  }
  size_t es = (size_t)size / (size_t)n;
  for (intptr_t k = 0; k < n; ++k) store_element(a, elem, k, data + (size_t)k * es);
  tc_constant_t *c = &p->g->constants[p->g->constant_count];
  c->data = data;
  c->size = size;
  c->owned = 1;
  return new_buffer(p, v, TC_BUFFER_CONSTANT, p->g->constant_count++);
}

static tinyml_status_t assign_outputs(part_t *p) {
  MlirOperation ret = p->ops[p->n - 1];
  tc_graph_t *g = p->g;
  g->output_count = (uint32_t)mlirOperationGetNumOperands(ret);
  g->outputs = tinyml__calloc(p->a, g->output_count, sizeof(uint32_t), 4);
  if (!g->outputs) return oom(p);
  for (uint32_t j = 0; j < g->output_count; ++j) {
    MlirValue v = mlirOperationGetOperand(ret, j);
    g->outputs[j] = buffer_of(p, v);
    if (g->outputs[j] == NONE) g->outputs[j] = returned_constant(p, v);
    if (g->outputs[j] == NONE)
      return tinyml__status_make(p->a, TINYML_STATUS_UNSUPPORTED,
                                 "compiler: result %u is a constant folded into "
                                 "code; returning constants is not supported", j);
  }
  return TINYML_OK;
}

/* ---- outlining -------------------------------------------------------- */

typedef struct outline {
  part_t *p;
  uint32_t d;
  MlirValue *inputs; /* external values with storage, in first-use order */
  uint32_t input_count;
  uint8_t *clone;    /* per top-level op: must be cloned into the dispatch */
  vmap_entry_t *map; /* original value -> value inside the new function */
  uint32_t map_count;
  int overflow;
} outline_t;

static void note_operand(outline_t *o, MlirValue v);

static void note_clone(outline_t *o, uint32_t k) {
  if (o->clone[k]) return;
  o->clone[k] = 1;
  MlirOperation op = o->p->ops[k];
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i)
    note_operand(o, mlirOperationGetOperand(op, i));
}

static void note_operand(outline_t *o, MlirValue v) {
  part_t *p = o->p;
  uint32_t k = def_index(p, v);
  if (k != NONE && p->group[k] == o->d) return; /* defined inside */
  if (k != NONE && p->kind[k] == K_CLONE) {
    note_clone(o, k);
    return;
  }
  for (uint32_t i = 0; i < o->input_count; ++i)
    if (mlirValueEqual(o->inputs[i], v)) return;
  if (o->input_count >= p->buf_cap) {
    o->overflow = 1;
    return;
  }
  o->inputs[o->input_count++] = v;
}

static MlirWalkResult note_op_operands(MlirOperation op, void *user) {
  outline_t *o = user;
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i)
    note_operand(o, mlirOperationGetOperand(op, i));
  return MlirWalkResultAdvance;
}

static void map_add(outline_t *o, MlirValue from, MlirValue to) {
  o->map[o->map_count].key = from;
  o->map[o->map_count].value = to;
  ++o->map_count;
}

static MlirWalkResult remap_op_operands(MlirOperation op, void *user) {
  outline_t *o = user;
  for (intptr_t i = 0; i < mlirOperationGetNumOperands(op); ++i) {
    MlirValue v = mlirOperationGetOperand(op, i);
    for (uint32_t k = 0; k < o->map_count; ++k)
      if (mlirValueEqual(o->map[k].key, v)) {
        mlirOperationSetOperand(op, i, o->map[k].value);
        break;
      }
  }
  return MlirWalkResultAdvance;
}

static MlirNamedAttribute named(MlirContext ctx, const char *name, MlirAttribute a) {
  return mlirNamedAttributeGet(mlirIdentifierGet(ctx, tc_str(name)), a);
}

static MlirOperation append_op(MlirBlock block, MlirOperationState *st) {
  MlirOperation op = mlirOperationCreate(st);
  mlirBlockAppendOwnedOperation(block, op);
  return op;
}

static MlirType memref_of(MlirType tensor) {
  intptr_t rank = mlirShapedTypeGetRank(tensor);
  int64_t shape[TINYML_MAX_RANK * 2];
  for (intptr_t i = 0; i < rank && i < (intptr_t)(sizeof(shape) / sizeof(shape[0])); ++i)
    shape[i] = mlirShapedTypeGetDimSize(tensor, i);
  return mlirMemRefTypeContiguousGet(mlirShapedTypeGetElementType(tensor), rank,
                                     shape, mlirAttributeGetNull());
}

static void clone_into(outline_t *o, MlirBlock block, MlirOperation op) {
  MlirOperation c = mlirOperationClone(op);
  mlirBlockAppendOwnedOperation(block, c);
  mlirOperationWalk(c, remap_op_operands, o, MlirWalkPreOrder);
  for (intptr_t r = 0; r < mlirOperationGetNumResults(op); ++r)
    map_add(o, mlirOperationGetResult(op, r), mlirOperationGetResult(c, r));
}

static void emit_to_tensor(outline_t *o, MlirBlock block, MlirValue arg,
                           MlirValue original) {
  MlirContext ctx = o->p->ctx;
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirOperationState st = mlirOperationStateGet(tc_str("bufferization.to_tensor"), loc);
  MlirType t = mlirValueGetType(original);
  MlirNamedAttribute attr = named(ctx, "restrict", mlirUnitAttrGet(ctx));
  mlirOperationStateAddOperands(&st, 1, &arg);
  mlirOperationStateAddResults(&st, 1, &t);
  mlirOperationStateAddAttributes(&st, 1, &attr);
  map_add(o, original, mlirOperationGetResult(append_op(block, &st), 0));
}

static void emit_store(outline_t *o, MlirBlock block, MlirValue result,
                       MlirValue dest) {
  MlirContext ctx = o->p->ctx;
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  MlirOperationState st =
      mlirOperationStateGet(tc_str("bufferization.materialize_in_destination"), loc);
  MlirValue operands[2] = {result, dest};
  MlirNamedAttribute attrs[2] = {named(ctx, "restrict", mlirUnitAttrGet(ctx)),
                                 named(ctx, "writable", mlirUnitAttrGet(ctx))};
  mlirOperationStateAddOperands(&st, 2, operands);
  mlirOperationStateAddAttributes(&st, 2, attrs);
  append_op(block, &st);
}

/* One-shot bufferization keeps an scf.while on tensors only if each value
 * its body yields is in the buffer of the loop value it replaces (else:
 * "Yield operand #0 is not equivalent to the corresponding iter bbArg").
 * So each yielded value is materialised in its body argument: a copy at
 * the end of a trip, unless written there in place.  tosa-to-scf passes
 * the loop values to the body in order, which is checked. */
static void yield_in_place(MlirContext ctx, MlirOperation loop) {
  MlirBlock before = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 0));
  MlirBlock after = mlirRegionGetFirstBlock(mlirOperationGetRegion(loop, 1));
  MlirOperation cond = mlirBlockGetTerminator(before), y = mlirBlockGetTerminator(after);
  intptr_t n = mlirOperationGetNumOperands(y);
  if (mlirOperationGetNumOperands(cond) != n + 1 || mlirBlockGetNumArguments(after) != n)
    return;
  for (intptr_t i = 0; i < n; ++i)
    if (!mlirValueEqual(mlirOperationGetOperand(cond, i + 1), mlirBlockGetArgument(before, i)))
      return;
  for (intptr_t i = 0; i < n; ++i) {
    MlirValue v = mlirOperationGetOperand(y, i), arg = mlirBlockGetArgument(after, i);
    MlirType t = mlirValueGetType(arg);
    if (mlirValueEqual(v, arg) || !is_tensor(t)) continue;
    MlirOperationState st = mlirOperationStateGet(
        tc_str("bufferization.materialize_in_destination"), mlirLocationUnknownGet(ctx));
    MlirValue operands[2] = {v, arg};
    mlirOperationStateAddOperands(&st, 2, operands);
    mlirOperationStateAddResults(&st, 1, &t);
    MlirOperation m = mlirOperationCreate(&st);
    mlirBlockInsertOwnedOperationBefore(after, y, m);
    mlirOperationSetOperand(y, i, mlirOperationGetResult(m, 0));
  }
}

static MlirWalkResult loops_in_place(MlirOperation op, void *user) {
  if (is_loop(op)) yield_in_place(*(MlirContext *)user, op);
  return MlirWalkResultAdvance;
}

static MlirValue mapped(const outline_t *o, MlirValue v) {
  for (uint32_t k = 0; k < o->map_count; ++k)
    if (mlirValueEqual(o->map[k].key, v)) return o->map[k].value;
  return v;
}

/* Builds func.func @d<d>(inputs..., outputs...) and records its buffers. */
static tinyml_status_t build_function(outline_t *o, const uint32_t *out_buffers,
                                      const MlirValue *outs, uint32_t out_count) {
  part_t *p = o->p;
  MlirContext ctx = p->ctx;
  MlirLocation loc = mlirLocationUnknownGet(ctx);
  uint32_t nargs = o->input_count + out_count;
  MlirType types[nargs ? nargs : 1];
  MlirLocation locs[nargs ? nargs : 1];
  for (uint32_t i = 0; i < nargs; ++i) {
    MlirValue v = i < o->input_count ? o->inputs[i] : outs[i - o->input_count];
    types[i] = memref_of(mlirValueGetType(v));
    locs[i] = loc;
  }
  MlirBlock block = mlirBlockCreate(nargs, types, locs);
  for (uint32_t i = 0; i < o->input_count; ++i)
    emit_to_tensor(o, block, mlirBlockGetArgument(block, i), o->inputs[i]);
  for (uint32_t k = 0; k < p->n; ++k)
    if (o->clone[k] || p->group[k] == o->d) clone_into(o, block, p->ops[k]);
  for (MlirOperation op = mlirBlockGetFirstOperation(block); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    mlirOperationWalk(op, loops_in_place, &ctx, MlirWalkPostOrder);
  for (uint32_t j = 0; j < out_count; ++j)
    emit_store(o, block, mapped(o, outs[j]),
               mlirBlockGetArgument(block, o->input_count + j));
  MlirOperationState ret = mlirOperationStateGet(tc_str("func.return"), loc);
  append_op(block, &ret);

  char name[32];
  snprintf(name, sizeof(name), "d%u", o->d);
  MlirRegion region = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(region, block);
  MlirOperationState fs = mlirOperationStateGet(tc_str("func.func"), loc);
  MlirNamedAttribute fattrs[2] = {
      named(ctx, "sym_name", mlirStringAttrGet(ctx, tc_str(name))),
      named(ctx, "function_type",
            mlirTypeAttrGet(mlirFunctionTypeGet(ctx, nargs, types, 0, NULL)))};
  mlirOperationStateAddAttributes(&fs, 2, fattrs);
  mlirOperationStateAddOwnedRegions(&fs, 1, &region);
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(p->g->dispatch_module),
                                mlirOperationCreate(&fs));

  tc_dispatch_t *dp = &p->g->dispatches[o->d];
  dp->input_count = o->input_count;
  dp->output_count = out_count;
  dp->args = tinyml__calloc(p->a, nargs ? nargs : 1, sizeof(uint32_t), 4);
  if (!dp->args) return oom(p);
  for (uint32_t i = 0; i < o->input_count; ++i) {
    dp->args[i] = buffer_of(p, o->inputs[i]);
    tc_buffer_t *b = &p->g->buffers[dp->args[i]];
    if (b->last_use < (int64_t)o->d) b->last_use = o->d;
  }
  memcpy(dp->args + o->input_count, out_buffers, out_count * sizeof(uint32_t));
  return TINYML_OK;
}

static tinyml_status_t outline_dispatch(part_t *p, outline_t *o, uint32_t d) {
  o->d = d;
  o->input_count = o->map_count = 0;
  o->overflow = 0;
  memset(o->clone, 0, p->n);
  for (uint32_t k = 0; k < p->n; ++k)
    if (p->group[k] == d) mlirOperationWalk(p->ops[k], note_op_operands, o, MlirWalkPreOrder);
  if (o->overflow)
    return tinyml__status_make(p->a, TINYML_STATUS_INTERNAL,
                               "compiler: dispatch %u has too many operands", d);
  MlirValue outs[p->buf_cap ? p->buf_cap : 1];
  uint32_t out_buffers[p->buf_cap ? p->buf_cap : 1];
  uint32_t out_count = 0;
  for (uint32_t b = 0; b < p->buf_count; ++b) {
    tc_buffer_t *buf = &p->g->buffers[p->buf[b].buffer];
    if (buf->kind == TC_BUFFER_PRODUCED && buf->index == d &&
        mlirValueIsAOpResult(p->buf[b].key) &&
        def_index(p, p->buf[b].key) != NONE &&
        p->kind[def_index(p, p->buf[b].key)] == K_COMPUTE) {
      outs[out_count] = p->buf[b].key;
      out_buffers[out_count++] = p->buf[b].buffer;
    }
  }
  return build_function(o, out_buffers, outs, out_count);
}

static tinyml_status_t outline_all(part_t *p) {
  outline_t o = {.p = p};
  tinyml_status_t st = TINYML_OK;
  o.inputs = tinyml__calloc(p->a, p->buf_cap, sizeof(MlirValue), 8);
  o.clone = tinyml__calloc(p->a, p->n, 1, 1);
  o.map = tinyml__calloc(p->a, p->buf_cap * 4 + 16, sizeof(vmap_entry_t), 8);
  p->g->dispatches = tinyml__calloc(p->a, p->g->dispatch_count ? p->g->dispatch_count : 1,
                                    sizeof(tc_dispatch_t), 8);
  if (!o.inputs || !o.clone || !o.map || !p->g->dispatches) st = oom(p);
  for (uint32_t d = 0; !st && d < p->g->dispatch_count; ++d)
    st = outline_dispatch(p, &o, d);
  tinyml__free(p->a, o.inputs);
  tinyml__free(p->a, o.clone);
  tinyml__free(p->a, o.map);
  return st;
}

/* ---- entry ------------------------------------------------------------ */

static tinyml_status_t check_types(const part_t *p, uint32_t i) {
  MlirOperation op = p->ops[i];
  const char *name = tc_op_name(op);
  if (strncmp(name, "tosa.", 5) == 0)
    return tinyml__status_make(p->a, TINYML_STATUS_UNSUPPORTED,
                               "compiler: op '%s' has no lowering to Linalg for "
                               "these operand types", name);
  for (intptr_t r = 0; r < mlirOperationGetNumResults(op); ++r) {
    MlirType t = mlirValueGetType(mlirOperationGetResult(op, r));
    if (!mlirTypeIsAShaped(t)) continue;
    if (!mlirTypeIsARankedTensor(t) || !mlirShapedTypeHasStaticShape(t))
      return tinyml__status_make(p->a, TINYML_STATUS_UNSUPPORTED,
                                 "compiler: op '%s' has a dynamic shape; only "
                                 "static shapes are supported", name);
    if (tc_dtype_of(mlirShapedTypeGetElementType(t)) == TINYML_DTYPE_INVALID)
      return tinyml__status_make(p->a, TINYML_STATUS_UNSUPPORTED,
                                 "compiler: op '%s' has an unsupported element type",
                                 name);
  }
  return TINYML_OK;
}

static tinyml_status_t collect_ops(part_t *p, MlirOperation func) {
  p->body = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  uint32_t n = 0, results = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(p->body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op)) {
    ++n;
    results += (uint32_t)mlirOperationGetNumResults(op);
  }
  p->n = n;
  p->buf_cap = results + (uint32_t)mlirBlockGetNumArguments(p->body) + 1;
  p->ops = tinyml__calloc(p->a, n + 1, sizeof(MlirOperation), 8);
  p->kind = tinyml__calloc(p->a, n + 1, sizeof(op_kind_t), 4);
  p->group = tinyml__calloc(p->a, n + 1, sizeof(uint32_t), 4);
  p->buf = tinyml__calloc(p->a, p->buf_cap, sizeof(vmap_entry_t), 8);
  p->g->buffers = tinyml__calloc(p->a, p->buf_cap, sizeof(tc_buffer_t), 8);
  p->g->constants = tinyml__calloc(p->a, n + 1, sizeof(tc_constant_t), 8);
  if (!p->ops || !p->kind || !p->group || !p->buf || !p->g->buffers || !p->g->constants)
    return oom(p);
  uint32_t i = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(p->body); !mlirOperationIsNull(op);
       op = mlirOperationGetNextInBlock(op))
    p->ops[i++] = op;
  for (i = 0; i < n; ++i) {
    TINYML_RETURN_IF_ERROR(check_types(p, i));
    p->kind[i] = classify(p, i);
  }
  if (n == 0 || p->kind[n - 1] != K_RETURN)
    return tinyml__status_make(p->a, TINYML_STATUS_INVALID_MODEL,
                               "compiler: function body does not end in return");
  return TINYML_OK;
}

static tinyml_status_t find_function(const part_t *p, MlirModule m,
                                     MlirOperation *out) {
  MlirOperation found = {NULL};
  int count = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(mlirModuleGetBody(m));
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op)) {
    if (!tc_op_is(op, "func.func")) continue;
    MlirAttribute vis = mlirOperationGetAttributeByName(op, tc_str("sym_visibility"));
    if (!mlirAttributeIsNull(vis)) continue; /* private helpers */
    found = op;
    ++count;
  }
  if (count != 1)
    return tinyml__status_make(p->a, TINYML_STATUS_INVALID_MODEL,
                               "compiler: the model must have exactly one public "
                               "function, found %d", count);
  if (mlirRegionIsNull(mlirOperationGetRegion(found, 0)) ||
      mlirBlockIsNull(mlirRegionGetFirstBlock(mlirOperationGetRegion(found, 0))))
    return tinyml__status_make(p->a, TINYML_STATUS_INVALID_MODEL,
                               "compiler: the model function has no body");
  *out = found;
  return TINYML_OK;
}

static void part_free(part_t *p) {
  tinyml__free(p->a, p->ops);
  tinyml__free(p->a, p->kind);
  tinyml__free(p->a, p->group);
  tinyml__free(p->a, p->buf);
}

tinyml_status_t tc_partition(MlirContext ctx, MlirModule module,
                             const tinyml_allocator_t *a, tc_graph_t *g) {
  part_t p = {.a = a, .ctx = ctx, .g = g};
  MlirOperation func = {NULL};
  tinyml_status_t st = find_function(&p, module, &func);
  if (!st) st = collect_ops(&p, func);
  if (!st) {
    assign_groups(&p);
    g->dispatch_module = mlirModuleCreateEmpty(mlirLocationUnknownGet(ctx));
    st = assign_buffers(&p);
  }
  if (!st) st = assign_outputs(&p);
  if (!st) st = outline_all(&p);
  if (!st) st = tc_signature_read(func, a, g);
  part_free(&p);
  return st;
}
