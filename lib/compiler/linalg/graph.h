/* The compiler's view of a model after partitioning: buffers, dispatches in
 * execution order, and the module of outlined dispatch functions. */
#ifndef TINYML_COMPILER_LINALG_GRAPH_H
#define TINYML_COMPILER_LINALG_GRAPH_H

#include <mlir-c/IR.h>
#include <stdint.h>

#include "../../module/executable_abi.h"
#include "../../module/module.h"
#include "../mlir_util.h"

#define TC_SCRATCH UINT32_MAX /* a dispatch argument that is its scratch */
#define TC_MAX_PHASES TINYML_EXE_MAX_PHASES /* phases of one dispatch (distribute.c) */

typedef enum tc_buffer_kind {
  TC_BUFFER_INPUT,    /* a function argument */
  TC_BUFFER_CONSTANT, /* weights stored in the module */
  TC_BUFFER_PRODUCED, /* written by dispatch `producer` */
} tc_buffer_kind_t;

typedef struct tc_buffer {
  tc_buffer_kind_t kind;
  uint32_t index;    /* input number, constant number or producer dispatch */
  uint64_t size;
  int64_t last_use;  /* last dispatch reading it; -1 when none */
  tmod_binding_t binding; /* where it lives, set by the memory plan */
} tc_buffer_t;

typedef struct tc_constant {
  const void *data; /* borrowed from the MLIR context, or owned if `owned` */
  uint64_t size;
  int owned;
} tc_constant_t;

typedef struct tc_dispatch {
  uint32_t input_count, output_count;
  uint32_t *args;        /* inputs then outputs: buffer ids */
  uint64_t scratch_size; /* set after codegen; 0 = no scratch argument */
  /* 1 + the positions in args of an input and an output that may share one
   * place: the kernel reads each element of that input just before it
   * writes the same element of the output, and nothing else (set by
   * tc_ukernels_lower; 0 = none).  The memory plan decides whether they do. */
  uint32_t reuse_in, reuse_out;
  /* 1 + the positions in args of the input and output of a kernel that
   * streams: it writes output pixels in raster order and, once it has
   * written pixel q, reads only input rows that pixel q or a later pixel
   * reads.  The output may then overlap the input if it starts at least
   * stream_lead bytes before it, when the input is not read afterwards and
   * the call is one workgroup (the memory plan checks).  Set by
   * tc_note_inplace; 0 = none. */
  uint32_t stream_in, stream_out;
  uint64_t stream_lead;
  tmod_binding_t scratch;
  /* Set by tc_distribute: the phases the kernel runs in order, and for each
   * how many workgroups it usefully splits into (1 = one thread). */
  uint32_t phase_count;
  uint32_t workgroups[TC_MAX_PHASES];
  /* The source operators it computes (labels.h); NULL when stripped.  Owned. */
  char *label;
} tc_dispatch_t;

typedef struct tc_graph {
  tc_buffer_t *buffers;
  uint32_t buffer_count;
  tc_constant_t *constants;
  uint32_t constant_count;
  tc_dispatch_t *dispatches;
  uint32_t dispatch_count;
  uint32_t *outputs; /* a buffer id per function result */
  tmod_tensor_t *input_info, *output_info;
  uint32_t input_count, output_count;
  /* The last state_count inputs and outputs are the model's state (the
   * `tinyml.state` arguments and results, signature.h), not the caller's:
   * input i's value is read, output i's is kept for the next invoke.
   * state_init holds each state's initial bytes, one after another. */
  uint32_t state_count;
  uint8_t *state_init;
  MlirModule dispatch_module; /* functions named d0, d1, ... */
  uint64_t arena_size;     /* set by the memory plan: region 0's */
  /* Arena regions: capacities the caller asked for (0 ends the list; none:
   * one arena), and what the plan put in each. */
  uint64_t region_caps[TMOD_MAX_ARENA_REGIONS];
  uint32_t region_count;
  uint64_t region_sizes[TMOD_MAX_ARENA_REGIONS];
  uint64_t constants_size; /* set by the memory plan */
  /* The caller's split_min_work (tinyml_compile_options_t); 0: the
   * backend's. */
  uint64_t split_min_work;
} tc_graph_t;

/* Frees everything g holds and zeroes it. */
void tc_graph_free(tc_graph_t *g, const tinyml_allocator_t *a);

#endif
