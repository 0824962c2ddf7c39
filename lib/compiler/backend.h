/* The interface every code-generation backend implements: a descriptor of
 * all the compiler needs to know about one target.  Nothing in lib/compiler
 * names a target, an ISA or a triple; what differs between targets is a
 * field here.  A backend lives in backends/<name>/, knows nothing of other
 * backends, and is registered with one line in backends/meson.build.
 * Thread-safety: descriptors are immutable constants, shared by every
 * compile. */
#ifndef TINYML_COMPILER_BACKEND_H
#define TINYML_COMPILER_BACKEND_H

#include <llvm-c/Types.h>
#include <stdint.h>

/* One build of the backend's microkernels (lib/ukernels/uk_abi.h) and what
 * a target needs to use it.  A backend lists its builds best first; a
 * compile takes the first one its CPU can run (target.h). */
typedef struct tc_ukernel_build {
  const char *name; /* for messages and tests, e.g. "avx512" */
  /* LLVM bitcode for the backend's triple, linked into every executable
   * whose dispatches call a kernel. */
  const unsigned char *bitcode;
  const unsigned long *bitcode_size;
  /* Who may use it: when the caller gives features, those must name every
   * one of `features` (the kernels' intrinsics need them all, and LLVM
   * aborts on one it cannot select); without features, the CPU must be
   * listed in `cpus` (comma-separated). */
  const char *features;
  const char *cpus;
  /* Features (comma-separated) that some of its functions declare in a
   * `target` attribute beyond `features`: a function keeps them whatever
   * the module's features, since the blob tells it whether to call them
   * (uk_abi.h, dot4).  NULL: none. */
  const char *function_features;
  /* Bytes of im2col scratch per tap of an int8 conv (the kernel's pixels
   * per tile times 2). */
  int scratch_per_k;
  /* 1: its int8 conv sums 4 byte taps per instruction (the blob's dot4). */
  int dot4;
  /* The transform script to use with it; NULL: the backend's. */
  const char *transform_script;
  /* The LLVM CPU that a multi-versioned module's variant of this build is
   * compiled for, with `features` (driver/variants.h); NULL: the build
   * makes no variant (it is the baseline's, or only for --cpu). */
  const char *variant_cpu;
} tc_ukernel_build_t;

/* When an f32 3x3 stride-1 conv runs as Winograd F(2x2, 3x3) or F(4x4,
 * 3x3), and how many tiles a block holds (tosa/uk_wino.c): what the
 * backend's kernels and its CPUs' caches make pay. */
typedef struct tc_wino_tuning {
  int32_t min_channels;    /* fewer input or output channels: the direct sum; 0: never */
  int64_t max_u_bytes;     /* transformed weights U of F(2x2, 3x3) at most */
  int64_t max_u4_bytes;    /* ... of F(4x4, 3x3) */
  int64_t l2_u_bytes;      /* U that stays in a core's L2 across blocks */
  int64_t block_bytes;     /* a block's V and M when U stays in L2 */
  int64_t big_block_bytes; /* ... when every block reads U from memory */
  int32_t tile_rows;       /* tiles per block are a multiple: the register tile's height */
  int32_t max_tiles;       /* tiles per block at most (the kernel's output rows) */
} tc_wino_tuning_t;

/* Sizes that the f32 kernels' tiles and their CPUs' caches make pay, for
 * the f32 selection and fusions on TOSA (tosa/uk_*.c). */
typedef struct tc_f32_tuning {
  /* Pixels of the smallest and the largest register tile of the conv:
   * im2col blocks are a multiple of the first, and a dwpw chunk holds at
   * least the second. */
  int32_t tile_rows, max_tile_rows;
  int64_t im2col_bytes; /* the conv's im2col scratch at most, when taps are many */
  /* dwpw: a chunk of depthwise result, which stays in a core's L2 while
   * the 1x1 conv reads it once per panel of output channels. */
  int64_t chunk_bytes;
  /* dwpw, pwdwpw and convpool: the most scratch of rows and a chunk, which
   * stays in a core's L2 beside the weights. */
  int64_t window_bytes;
  tc_wino_tuning_t winograd;
} tc_f32_tuning_t;

/* The microkernels, when the backend has them. */
typedef struct tc_ukernels {
  const tc_ukernel_build_t *builds; /* best first; NULL: none */
  unsigned build_count;
  /* How int8 conv weights are packed for them (uk_abi.h): blocks of
   * oc_block output channels x k_block taps; k_perm 1: each 4-tap group
   * stored as taps 0, 2, 1, 3. */
  int oc_block, k_block, k_perm;
  /* 1: the int8 conv needs im2col columns only for pixels that exist. */
  int tail_columns;
  /* 1: the builds have the f32 kinds (conv, depthwise, matmul, max pool
   * and their fusions: uk_abi.h), tuned by `f32_tuning`. */
  int f32;
  tc_f32_tuning_t f32_tuning;
  /* 1: each int8 conv and depthwise call runs its own copy of the kernel,
   * which reads the layer's parameter header as constants, so LLVM folds
   * shapes, pads and zero points and unrolls known loops; the kernels read
   * the header through tinyml_uk_header (codegen/uk_specialise.h). */
  int specialise;
  /* 1: the int8 conv reads raw inputs, so its blob's bias (bias[] and
   * chan[].bias) is bias - in_zp * the sum of the channel's weights,
   * modulo 2^32 as the kernel sums (uk_abi.h). */
  int zp_in_bias;
  /* 1: an int8 depthwise with at most UK_MAX_TAPS taps (uk_depthwise.h)
   * gets int16 weights, each full group of 4 channels tap by tap as
   * channels 0, 2, 1, 3 (the lanes of SXTB16 on an input word and on it
   * rotated by 8), then the other channels' taps, then ic bytes of in_zp
   * that taps outside the image read (tosa/uk_pack.c, backends/armv7em). */
  int dw_wide;
  /* 1: int8 conv and depthwise blobs carry tinyml_uk_req_t records
   * (uk_abi.h, req_off) when every channel's shift allows them. */
  int req_records;
  /* Nonzero: an int8 conv with one output pixel per image (a fully
   * connected layer) and at least this many output channels packs its
   * weights in blocks of this many output channels instead of oc_block,
   * for the backend's fully-connected kernel, which recognises the blob by
   * its oc_block, and its scratch has 8 bytes more than the column, for an
   * end mark; 0: oc_block. */
  int fc_oc_block;
} tc_ukernels_t;

/* How an executable's object is made and packaged. */
typedef struct tc_object_rules {
  /* NULL: LLVM's target machine emits the object.  Otherwise clang emits
   * it from the optimised bitcode with these flags besides --target,
   * -mcpu, -fPIC, -O2 and -c: for settings LLVM-C cannot make (a float
   * ABI).  NULL-terminated. */
  const char *const *clang_flags;
  /* Called on the LLVM module before optimisation and again after it, for
   * what only IR can say (calling conventions); NULL: nothing. */
  void (*prepare)(LLVMModuleRef module);
  /* Flags that compile `--emit static-lib`'s generated schedule, besides
   * --target; an item that is exactly "-mcpu=" gets the CPU appended.
   * NULL-terminated. */
  const char *const *schedule_cflags;
  const char *lld_emulation; /* ld.lld -m value, e.g. "elf_x86_64" */
} tc_object_rules_t;

typedef struct tinyml_backend {
  const char *name;             /* what --target takes, e.g. "x86-64" */
  const char *triple;           /* LLVM triple */
  const char *default_cpu;      /* LLVM CPU when the caller gives none */
  /* The CPU names LLVM knows for `triple`, NULL-terminated: generated at
   * build time from llc -mcpu=help (tools/llvm_cpus.py). */
  const char *const *cpus;
  const char *default_features; /* LLVM features when the caller gives none */
  const char *elf_arch;         /* recorded in the module, e.g. "x86_64" */
  unsigned pointer_bits;
  /* 1: the runtime that runs these executables has threads, so dispatches
   * are split into workgroups (codegen/distribute.h); 0 (bare metal): one
   * phase per entry, called once. */
  int threads;
  /* A transform-dialect library (MLIR text) defining @__transform_main.  It
   * is applied to the module of dispatch functions, which arrive in
   * destination-passing style at tensor level, and must leave them fully
   * bufferized with any remaining memref.alloc static and at function top
   * level (the compiler turns those into arena scratch). */
  const char *transform_script;
  /* A pass pipeline (builtin.module(...)) that lowers the bufferized module
   * to the LLVM dialect with bare-pointer calling convention. */
  const char *lowering_pipeline;
  /* When the caller's features leave out `vector_feature`, the strategy is
   * `scalar_transform_script` instead (NULL: the one strategy serves all). */
  const char *vector_feature;
  const char *scalar_transform_script;
  tc_object_rules_t object;
  tc_ukernels_t ukernels;
  /* With `threads`: the least work, in multiply-adds or element operations
   * (codegen/distribute.c estimates them), for which sharing one phase
   * between two threads pays for waking a worker and joining it; a smaller
   * phase keeps one workgroup and runs inline on the invoking thread.
   * Measured on the machine the backend is tuned for (docs/PERF.md,
   * "Threads").  0: every parallel phase is split. */
  int64_t split_min_work;
} tinyml_backend_t;

#endif
