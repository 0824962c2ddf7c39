/* The compile's resource limits on the TOSA graph and on the memory plan
 * (tinyml_compile_options_t; docs/SECURITY.md, "Limits (the contract)").
 * The importers check the same limits on their own files first, before
 * copying anything; these checks hold them for every format (TOSA text
 * included) and for what the compiler itself adds (pre/post-processing). */
#ifndef TINYML_COMPILER_DRIVER_LIMITS_H
#define TINYML_COMPILER_DRIVER_LIMITS_H

#include <mlir-c/IR.h>
#include <stdint.h>

#include "../../importers/common/import_limits.h"
#include "tinyml.h"

typedef struct tc_limits {
  te_limits_t import;       /* tensor bytes, constant bytes, op count */
  uint64_t max_arena_bytes; /* the planned arena, all regions together */
} tc_limits_t;

/* `l` with each 0 replaced by its default. */
tc_limits_t tc_limits_resolve(const tc_limits_t *l);

/* Walks the TOSA module `m` once, before lowering: the op count, each
 * result's and each function argument's byte size (static shape times
 * element size) and the bytes of all tosa.const results.  UNSUPPORTED,
 * naming the op (its location: "CONV_2D name", "Add 'x'", "tosa.add line
 * 7") and the limit. */
tinyml_status_t tc_check_graph_limits(MlirModule m, const tc_limits_t *l,
                                      const tinyml_allocator_t *a);

/* The planned arena (`region_count` sizes) against max_arena_bytes. */
tinyml_status_t tc_check_arena_limit(const uint64_t *region_sizes, uint32_t region_count,
                                     const tc_limits_t *l, const tinyml_allocator_t *a);

#endif
