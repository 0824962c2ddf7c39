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

static const tc_ukernel_build_t ukernel_builds[] = {{
    .name = "rvv",
    .bitcode = tinyml__rvv_ukernels,
    .bitcode_size = &tinyml__rvv_ukernels_size,
    .features = "+v",
    .cpus = "generic-rv64",
    .scratch_per_k = 6, /* ukernels.c: three int16 im2col columns */
}};

static const char *const schedule_cflags[] = {"-fPIC", 0};

const tinyml_backend_t tinyml__backend_rvv = {
    .name = "rvv",
    .triple = "riscv64-unknown-linux-gnu",
    .cpus = tinyml__rvv_cpus,
    .default_cpu = "generic-rv64",
    .default_features = "+m,+a,+f,+d,+c,+v",
    .elf_arch = "riscv64",
    .pointer_bits = 64,
    .threads = 1,
    .transform_script = tinyml__rvv_strategy,
    .lowering_pipeline = tinyml__rvv_lowering,
    .vector_feature = "+v",
    .scalar_transform_script = tinyml__rvv_strategy_scalar,
    .object = {.schedule_cflags = schedule_cflags, .lld_emulation = "elf64lriscv"},
    .ukernels = {
        .builds = ukernel_builds,
        .build_count = 1,
        .oc_block = 32, /* ukernels.c: 32 channels (e32m8) per tap */
        .k_block = 1,
    },
};
