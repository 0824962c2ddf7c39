/* RISC-V 64 with the V extension (RVV 1.0), Linux user mode.  The code is
 * vector-length agnostic: LLVM's loop vectorizer emits scalable vectors, so
 * one executable runs at any VLEN.  Strategy and lowering beside this file. */
#include "../../lib/compiler/backend.h"

extern const char *const tinyml__rvv_cpus[];
extern const char tinyml__rvv_strategy[];
extern const char tinyml__rvv_lowering[];
extern const char tinyml__rvv_strategy_scalar[];
extern const unsigned char tinyml__rvv_ukernels[];
extern const unsigned long tinyml__rvv_ukernels_size;

const tinyml_backend_t tinyml__backend_rvv = {
    .name = "rvv",
    .triple = "riscv64-unknown-linux-gnu",
    .cpus = tinyml__rvv_cpus,
    .default_cpu = "generic-rv64",
    .default_features = "+m,+a,+f,+d,+c,+v",
    .elf_arch = "riscv64",
    .lld_emulation = "elf64lriscv",
    .pointer_bits = 64,
    .transform_script = tinyml__rvv_strategy,
    .lowering_pipeline = tinyml__rvv_lowering,
    .vector_feature = "+v",
    .scalar_transform_script = tinyml__rvv_strategy_scalar,
    .ukernel_bitcode = tinyml__rvv_ukernels,
    .ukernel_bitcode_size = &tinyml__rvv_ukernels_size,
    .ukernel_oc_block = 32, /* ukernels.c: 32 channels (e32m8) per tap */
    .ukernel_k_block = 1,
    .ukernel_scratch_per_k = 6, /* ukernels.c: three int16 im2col columns */
    .ukernel_feature = "+v",
    .ukernel_cpus = "",
};
