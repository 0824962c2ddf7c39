/* Resource limits on the TOSA graph and the memory plan (limits.h). */
#include "limits.h"

#include <inttypes.h>
#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>
#include <stdio.h>
#include <string.h>

#include "../../common/status.h"

tc_limits_t tc_limits_resolve(const tc_limits_t *l) {
  tc_limits_t r = *l;
  r.import = te_limits_resolve(&l->import);
  if (!r.max_arena_bytes) r.max_arena_bytes = TINYML_DEFAULT_MAX_ARENA_BYTES;
  return r;
}

/* Bits per element of a scalar type; 0 when unknown (then the tensor is
 * left to the later stages, which refuse such types anyway). */
static uint64_t element_bits(MlirType t) {
  if (mlirTypeIsAComplex(t)) return 2 * element_bits(mlirComplexTypeGetElementType(t));
  if (mlirTypeIsAInteger(t)) return mlirIntegerTypeGetWidth(t);
  if (mlirTypeIsAFloat(t)) return mlirFloatTypeGetWidth(t);
  if (mlirTypeIsAIndex(t)) return 64;
  return 0;
}

/* Bytes of a statically shaped tensor type, saturating at UINT64_MAX; 0
 * for anything else. */
static uint64_t tensor_bytes(MlirType t) {
  if (!mlirTypeIsARankedTensor(t) || !mlirShapedTypeHasStaticShape(t)) return 0;
  uint64_t bits = element_bits(mlirShapedTypeGetElementType(t));
  uint64_t n = 1;
  for (intptr_t i = 0; i < mlirShapedTypeGetRank(t); ++i) {
    uint64_t d = (uint64_t)mlirShapedTypeGetDimSize(t, i);
    if (d == 0) return 0;
    if (n > UINT64_MAX / d) return UINT64_MAX;
    n *= d;
  }
  if (n > UINT64_MAX / (bits ? bits : 1)) return UINT64_MAX;
  return (n * bits + 7) / 8;
}

typedef struct walk {
  const tc_limits_t *l;
  const tinyml_allocator_t *a;
  uint64_t ops, constants;
  tinyml_status_t st;
} walk_t;

/* The op's name for a message: its location's name (the importers name
 * each op after the model's operator), else a function's symbol (for its
 * arguments, the model's inputs), else its kind. */
static void op_name(MlirOperation op, char *out, size_t size) {
  MlirLocation loc = mlirOperationGetLocation(op);
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
  MlirAttribute sym = mlirOperationGetAttributeByName(op, mlirStringRefCreateFromCString("sym_name"));
  if (mlirLocationIsAName(loc)) s = mlirIdentifierStr(mlirLocationNameGetName(loc));
  else if (!mlirAttributeIsNull(sym) && mlirAttributeIsAString(sym)) s = mlirStringAttrGetValue(sym);
  snprintf(out, size, "%.*s", (int)(s.length > 120 ? 120 : s.length), s.data);
}

static tinyml_status_t too_large(walk_t *w, MlirOperation op, const char *what, unsigned i,
                                 uint64_t bytes) {
  char name[128];
  op_name(op, name, sizeof name);
  return tinyml__status_make(w->a, TINYML_STATUS_UNSUPPORTED,
                             "compile: '%s': %s %u is %" PRIu64 " bytes, more than "
                             "max_tensor_bytes (%" PRIu64 ")",
                             name, what, i, bytes, w->l->import.max_tensor_bytes);
}

static MlirWalkResult check_op(MlirOperation op, void *user) {
  walk_t *w = user;
  MlirStringRef kind = mlirIdentifierStr(mlirOperationGetName(op));
  /* The module and function wrappers are not operators of the model. */
  if (strncmp(kind.data, "builtin.", 8) == 0 || strncmp(kind.data, "func.", 5) == 0) {
    if (kind.length == 9 && strncmp(kind.data, "func.func", 9) == 0) {
      MlirBlock body = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, 0));
      for (intptr_t i = 0; !mlirBlockIsNull(body) && i < mlirBlockGetNumArguments(body); ++i) {
        uint64_t bytes = tensor_bytes(mlirValueGetType(mlirBlockGetArgument(body, i)));
        if (bytes > w->l->import.max_tensor_bytes) {
          w->st = too_large(w, op, "argument", (unsigned)i, bytes);
          return MlirWalkResultInterrupt;
        }
      }
    }
    return MlirWalkResultAdvance;
  }
  if (++w->ops > w->l->import.max_ops) {
    char name[128];
    op_name(op, name, sizeof name);
    w->st = tinyml__status_make(w->a, TINYML_STATUS_UNSUPPORTED,
                                "compile: the graph has more than max_ops (%" PRIu64
                                ") operations; '%s' is one too many",
                                w->l->import.max_ops, name);
    return MlirWalkResultInterrupt;
  }
  int is_const = kind.length == 10 && strncmp(kind.data, "tosa.const", 10) == 0;
  for (intptr_t i = 0; i < mlirOperationGetNumResults(op); ++i) {
    uint64_t bytes = tensor_bytes(mlirValueGetType(mlirOperationGetResult(op, i)));
    if (bytes > w->l->import.max_tensor_bytes) {
      w->st = too_large(w, op, "result", (unsigned)i, bytes);
      return MlirWalkResultInterrupt;
    }
    if (!is_const) continue;
    w->constants += bytes; /* each <= max_tensor_bytes <= 2^64 / 2^32 ops: practically */
    if (w->constants > w->l->import.max_constant_bytes) {
      char name[128];
      op_name(op, name, sizeof name);
      w->st = tinyml__status_make(w->a, TINYML_STATUS_UNSUPPORTED,
                                  "compile: constants reach %" PRIu64 " bytes at '%s', more "
                                  "than max_constant_bytes (%" PRIu64 ")",
                                  w->constants, name, w->l->import.max_constant_bytes);
      return MlirWalkResultInterrupt;
    }
  }
  return MlirWalkResultAdvance;
}

tinyml_status_t tc_check_graph_limits(MlirModule m, const tc_limits_t *l,
                                      const tinyml_allocator_t *a) {
  walk_t w = {l, a, 0, 0, TINYML_OK};
  mlirOperationWalk(mlirModuleGetOperation(m), check_op, &w, MlirWalkPreOrder);
  return w.st;
}

tinyml_status_t tc_check_arena_limit(const uint64_t *region_sizes, uint32_t region_count,
                                     const tc_limits_t *l, const tinyml_allocator_t *a) {
  uint64_t total = 0;
  for (uint32_t r = 0; r < region_count; ++r)
    total = region_sizes[r] > UINT64_MAX - total ? UINT64_MAX : total + region_sizes[r];
  if (total > l->max_arena_bytes)
    return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                               "compile: the memory plan needs an arena of %" PRIu64
                               " bytes, more than max_arena_bytes (%" PRIu64 ")",
                               total, l->max_arena_bytes);
  return TINYML_OK;
}
