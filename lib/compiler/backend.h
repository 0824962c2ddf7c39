/* The interface every code-generation backend implements.  A backend lives in
 * backends/<name>/, knows nothing of other backends, and is registered with
 * one line in backends/registry.c. */
#ifndef TINYML_COMPILER_BACKEND_H
#define TINYML_COMPILER_BACKEND_H

typedef struct tinyml_backend {
  const char *name;             /* what --target takes, e.g. "x86-64" */
  const char *triple;           /* LLVM triple */
  const char *default_cpu;      /* LLVM CPU when the caller gives none */
  /* The CPU names LLVM knows for `triple`, NULL-terminated: generated at
   * build time from llc -mcpu=help (tools/llvm_cpus.py). */
  const char *const *cpus;
  const char *default_features; /* LLVM features when the caller gives none */
  const char *elf_arch;         /* recorded in the module, e.g. "x86_64" */
  const char *lld_emulation;    /* ld.lld -m value, e.g. "elf_x86_64" */
  unsigned pointer_bits;
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
  /* The int8 microkernels (lib/ukernels/uk_abi.h) as LLVM bitcode for this
   * target, linked into every executable; NULL when the backend has none. */
  const unsigned char *ukernel_bitcode;
  const unsigned long *ukernel_bitcode_size;
  /* How conv weights are packed for them, and what they need of scratch. */
  int ukernel_oc_block, ukernel_k_block, ukernel_scratch_per_k;
  int ukernel_k_perm; /* 1: each 4-tap group stored as taps 0,2,1,3 */
  /* 1: the conv kernel needs im2col columns only for pixels that exist. */
  int ukernel_tail_columns;
  /* The kernels use these CPU features (comma-separated): used only when
   * the caller's features name all of them, or the CPU is the default or
   * listed here. */
  const char *ukernel_feature;
  const char *ukernel_cpus; /* comma-separated */
  /* Optionally the same kernels built for CPUs with more (e.g. wider
   * vectors), on the same packed weights: linked instead of
   * `ukernel_bitcode` when the caller's features name every feature of
   * `ukernel_wide_feature` or, without features, the CPU is listed in
   * `ukernel_wide_cpus`.  NULL when there is none. */
  const unsigned char *ukernel_wide_bitcode;
  const unsigned long *ukernel_wide_bitcode_size;
  const char *ukernel_wide_feature;
  const char *ukernel_wide_cpus; /* comma-separated */
  int ukernel_wide_scratch_per_k; /* the wide kernels'; 0: ukernel_scratch_per_k */
  /* The transform script for the same CPUs as the wide kernels (e.g. larger
   * register tiles for more, wider registers); NULL: `transform_script`. */
  const char *wide_transform_script;
  /* The wide kernels' int8 conv may sum 4 byte taps per instruction (the
   * blob's dot4, uk_abi.h) when the caller's features name every feature
   * of `ukernel_dot4_feature` or, without features, the CPU is listed in
   * `ukernel_dot4_cpus`.  NULL: never.  `ukernel_dot4` is the compiler's
   * answer for the target at hand, on its copy of the backend; backends
   * leave it 0. */
  const char *ukernel_dot4_feature;
  const char *ukernel_dot4_cpus; /* comma-separated */
  int ukernel_dot4;
} tinyml_backend_t;

/* Finds a built backend by name; NULL when it was not built. */
const tinyml_backend_t *tinyml__backend_find(const char *name);
/* Comma-separated names of the built backends. */
const char *tinyml__backend_names(void);

#endif
