/* Step 2 of distributing dispatches over threads (distribute.h): which
 * loops of a strategy's nest write disjoint memory in each iteration, so
 * their iterations may run in different workgroups. */
#ifndef TINYML_COMPILER_CODEGEN_LOOP_ACCESS_H
#define TINYML_COMPILER_CODEGEN_LOOP_ACCESS_H

#include <mlir-c/IR.h>
#include <stdbool.h>
#include <stdint.h>

#include "tinyml.h"

/* No memory effects and no regions: safe to run in every phase. */
bool tc_op_is_pure(MlirOperation op);

/* Constant bounds and step of scf.for `loop`; false when not constant,
 * or when the loop carries values (its iterations are not independent). */
bool tc_loop_bounds(MlirOperation loop, int64_t *lb, int64_t *ub, int64_t *step);

/* Iterations of scf.for `loop` with constant bounds, whether it carries
 * values or not; -1 when they are not constant. */
int64_t tc_loop_const_trips(MlirOperation loop);

/* Iterations of `loop` (1 when its bounds are not constant), and the same
 * as a workgroup count: more than 65535 are not useful. */
int64_t tc_loop_exact_trips(MlirOperation loop);
uint32_t tc_loop_trip_count(MlirOperation loop);

/* Whether every buffer `loop` writes is reached, by every access inside
 * it, through a slice at the induction variable no wider than the step. */
bool tc_loop_is_parallel(MlirOperation loop, const tinyml_allocator_t *a);

/* Whether parallel loops x and y (same bounds) may share a phase:
 * iteration i of each touches what the other writes only in iteration
 * i's slice. */
bool tc_loops_share_phase(MlirOperation x, MlirOperation y, const tinyml_allocator_t *a);

/* The loop of a strategy's nest to split: the outermost parallel one with
 * at least 8 iterations, else the parallel one with the most, looking
 * inside loops whose body is one loop plus pure ops; null: none. */
MlirOperation tc_pick_loop(MlirOperation loop, const tinyml_allocator_t *a);

#endif
