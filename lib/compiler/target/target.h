/* The target of one compile, resolved once from the backend and the
 * caller's CPU and features, and passed down to every stage: what the CPU
 * enables (which microkernel build, which transform script) is decided
 * here and nowhere else.
 * Ownership: a tc_target_t borrows the backend and the caller's strings
 * and owns what `--cpu host` asked LLVM for; release it with
 * tc_target_release.  Thread-safety: read-only once resolved. */
#ifndef TINYML_COMPILER_TARGET_TARGET_H
#define TINYML_COMPILER_TARGET_TARGET_H

#include "tinyml.h"

#include "../backend.h"
#include "host_cpu.h"

typedef struct tc_target {
  const tinyml_backend_t *backend;
  const char *cpu;      /* never NULL: the caller's, the host's or the default */
  const char *features; /* never NULL; may be empty */
  int opt_level;
  /* The microkernel build the CPU runs (the backend's first it can);
   * NULL: none, every op takes the Linalg path. */
  const tc_ukernel_build_t *ukernels;
  /* The transform script for the dispatches: the build's, the backend's
   * scalar one when the features lack its vector feature, or its own. */
  const char *transform_script;
  tc_host_cpu_t host; /* LLVM's strings for --cpu host */
  /* Counts the int8 blobs packed with a dot4 block (tosa/uk_pack.c), for
   * driver/variants.c; NULL: not counted. */
  unsigned *dot4_blobs;
  /* Counts the int8 conv blobs, whose scratch and dot4 block the build
   * decides (tosa/uk_pack.c), for driver/variants.c; NULL: not counted. */
  unsigned *conv_blobs;
} tc_target_t;

/* Resolves `backend` for `cpu` and `features` (NULL: the backend's
 * defaults; cpu "host": this machine's, see host_cpu.h).  Errors name an
 * unknown CPU or a host of another architecture. */
tinyml_status_t tc_target_resolve(const tinyml_backend_t *backend, const char *cpu,
                                  const char *features, int opt_level,
                                  const tinyml_allocator_t *a, tc_target_t *out);
void tc_target_release(tc_target_t *target);

/* Registers LLVM's targets, target machines, MCs and asm printers, once
 * per process.  LLVM's registry is a plain list that "clients are
 * responsible" for filling without races (TargetRegistry.cpp): two
 * compiles registering at once could lose a target or link the list into
 * a cycle.  Call this, never LLVMInitializeAll*(), before looking a target
 * up.  Thread-safe. */
void tc_llvm_targets_init(void);

/* Whether the target's microkernels include the f32 kinds. */
int tc_target_has_f32_kernels(const tc_target_t *target);

#endif
