/* x86-64 with AVX2/FMA (and AVX-512 microkernels when the CPU has it).  The strategy and lowering live in strategy.mlir and
 * lowering.txt beside this file, embedded at build time. */
#include "../../lib/compiler/backend.h"

extern const char *const tinyml__x86_cpus[];
extern const char tinyml__x86_strategy[];
extern const char tinyml__x86_strategy_avx512[];
extern const char tinyml__x86_lowering[];
extern const unsigned char tinyml__x86_ukernels[];
extern const unsigned long tinyml__x86_ukernels_size;
extern const unsigned char tinyml__x86_ukernels_avx512[];
extern const unsigned long tinyml__x86_ukernels_avx512_size;

const tinyml_backend_t tinyml__backend_x86 = {
    .name = "x86-64",
    .triple = "x86_64-unknown-linux-gnu",
    .cpus = tinyml__x86_cpus,
    .default_cpu = "x86-64-v3",
    .default_features = "",
    .elf_arch = "x86_64",
    .lld_emulation = "elf_x86_64",
    .pointer_bits = 64,
    .transform_script = tinyml__x86_strategy,
    .lowering_pipeline = tinyml__x86_lowering,
    .ukernel_bitcode = tinyml__x86_ukernels,
    .ukernel_bitcode_size = &tinyml__x86_ukernels_size,
    .ukernel_oc_block = 8, /* AVX2: 8 int32 lanes, vpmaddwd over tap pairs */
    .ukernel_k_block = 2,
    .ukernel_scratch_per_k = 4 * 2, /* 4 pixels' int16 im2col columns */
    .ukernel_feature = "+avx2,+fma",
    .ukernel_cpus = "x86-64-v3,x86-64-v4,haswell,broadwell,skylake,skylake-avx512,"
                    "cascadelake,icelake-server,icelake-client,tigerlake,alderlake,"
                    "sapphirerapids,znver1,znver2,znver3,znver4,znver5",
    /* The same kernels with 12x32 zmm f32 tiles (conv_f32_avx512.c). */
    .ukernel_wide_bitcode = tinyml__x86_ukernels_avx512,
    .ukernel_wide_bitcode_size = &tinyml__x86_ukernels_avx512_size,
    .ukernel_wide_feature = "+avx512f,+avx512bw,+avx512vl,+avx512dq",
    .ukernel_wide_cpus = "x86-64-v4,skylake-avx512,cascadelake,cooperlake,icelake-server,"
                         "icelake-client,tigerlake,rocketlake,sapphirerapids,emeraldrapids,"
                         "graniterapids,znver4,znver5",
    .ukernel_wide_scratch_per_k = 8 * 2, /* the int8 conv's 8-pixel tiles */
    .wide_transform_script = tinyml__x86_strategy_avx512, /* 8x32 matmul tiles */
    /* vpdpbusd (conv_s8_vnni.c); not skylake-avx512 or x86-64-v4. */
    .ukernel_dot4_feature = "+avx512vnni",
    .ukernel_dot4_cpus = "cascadelake,cooperlake,icelake-server,icelake-client,tigerlake,"
                         "rocketlake,sapphirerapids,emeraldrapids,graniterapids,znver4,znver5",
};
