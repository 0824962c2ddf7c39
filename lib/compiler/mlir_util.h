/* Small helpers over the MLIR C API used across the compiler. */
#ifndef TINYML_COMPILER_MLIR_UTIL_H
#define TINYML_COMPILER_MLIR_UTIL_H

#include <mlir-c/IR.h>
#include <stdbool.h>
#include <stddef.h>

#include "tinyml.h"

/* Collects MLIR diagnostics into a bounded text buffer so errors can carry
 * the parser's or verifier's own words. */
typedef struct tc_diag {
  char text[2048];
  size_t len;
} tc_diag_t;

/* A context with every dialect, pass and LLVM translation registered, and
 * diagnostics routed to `diag`.  Destroy with mlirContextDestroy. */
MlirContext tc_context_create(tc_diag_t *diag);

bool tc_op_is(MlirOperation op, const char *name);
const char *tc_op_name(MlirOperation op); /* borrowed from the context */
MlirStringRef tc_str(const char *s);
MlirOperation tc_value_owner_op(MlirValue v); /* null op for block args */
/* In a bufferized dispatch function: the argument a tensor operand was read
 * from (through bufferization.to_tensor), or the argument a result is
 * written into (its only use a materialize_in_destination); -1 if none. */
int tc_arg_of_operand(MlirValue v);
int tc_arg_of_result(MlirValue v);

/* The op that is `v`'s only use; null when it has none or several. */
MlirOperation tc_sole_user(MlirValue v);
/* Reads attribute `name` of `op`, a dense i64 array of exactly n elements,
 * into out; false when it is missing or another kind or length. */
bool tc_i64_array(MlirOperation op, const char *name, int n, int64_t *out);
/* Whether attribute `a` (null: false), printed (its first 63 characters),
 * contains `want`: how enum attributes such as nan_mode or an iterator
 * type read from C. */
bool tc_attr_prints_with(MlirAttribute a, const char *want);
/* The same for attribute `name` of `op`. */
bool tc_attr_text_has(MlirOperation op, const char *name, const char *want);

/* An MlirStringCallback that appends what MLIR prints to the strbuf_t
 * `user` points at. */
void tc_print_to_strbuf(MlirStringRef s, void *user);

/* The ops under `root` whose name is one of the null-terminated `names`,
 * in walk order, at most `cap` of them (0: all of them): an array from `a` that the caller
 * frees, its length in *count; NULL when out of memory.  Collected first,
 * so that the caller may rewrite them. */
MlirOperation *tc_collect_ops(MlirOperation root, const char *const *names, unsigned cap,
                              const tinyml_allocator_t *a, unsigned *count);

/* N for a function named dN (how partitioning names dispatches) when N <
 * count; -1 for anything else. */
long tc_dispatch_index(MlirOperation f, uint32_t count);

/* Runs a textual pass pipeline on `op`. */
tinyml_status_t tc_run_pipeline(MlirContext ctx, MlirOperation op,
                                const char *pipeline, tc_diag_t *diag,
                                const tinyml_allocator_t *a, const char *what);

/* Whether op's name starts with `prefix` (a dialect: "linalg."). */
bool tc_op_name_starts(MlirOperation op, const char *prefix);
bool tc_is_memref(MlirValue v);
/* A memref view op: subview, expand/collapse_shape, cast, reinterpret_cast
 * or view. */
bool tc_is_memref_view(MlirOperation op);
bool tc_has_memref_operand(MlirOperation op);
/* The number of inputs and inits of a destination-passing op (linalg):
 * false when its operand segments cannot be read. */
bool tc_dps_split(MlirOperation op, intptr_t *inputs, intptr_t *inits);

/* The @__transform_main of a transform-dialect library; null when none. */
MlirOperation tc_transform_main(MlirModule lib);

/* Maps a tensor/memref element type to a dtype; INVALID when unsupported. */
tinyml_dtype_t tc_dtype_of(MlirType element_type);
/* Byte size of a statically shaped tensor or memref type; 0 if dynamic. */
uint64_t tc_type_byte_size(MlirType shaped);

#endif
