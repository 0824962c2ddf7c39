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
extern const unsigned char tinyml__x86_ukernels_vnni[];
extern const unsigned long tinyml__x86_ukernels_vnni_size;

/* The microkernel builds, best first (backend.h).  AVX-512 has two
 * bitcodes, with VNNI and without (meson.build), so a module can carry
 * both and an AVX-512 CPU without VNNI still runs the AVX-512 kernels. */
#define AVX512 "+avx512f,+avx512bw,+avx512vl,+avx512dq"
static const tc_ukernel_build_t ukernel_builds[] = {
    {
        /* vpdpbusd (conv_s8_vnni.c); not skylake-avx512 or x86-64-v4. */
        .name = "avx512-vnni",
        .bitcode = tinyml__x86_ukernels_vnni,
        .bitcode_size = &tinyml__x86_ukernels_vnni_size,
        .features = AVX512 ",+avx512vnni",
        .cpus = "cascadelake,cooperlake,icelake-server,icelake-client,tigerlake,"
                "rocketlake,sapphirerapids,emeraldrapids,graniterapids,znver4,znver5",
        .scratch_per_k = 8 * 2, /* the int8 conv's 8-pixel tiles */
        .dot4 = 1,
        .transform_script = tinyml__x86_strategy_avx512, /* 8x32 matmul tiles */
        .variant_cpu = "x86-64-v4", /* with .features: LLVM has no v4+VNNI level */
    },
    {
        /* The same kernels with 12x32 zmm f32 tiles (conv_f32_avx512.c). */
        .name = "avx512",
        .bitcode = tinyml__x86_ukernels_avx512,
        .bitcode_size = &tinyml__x86_ukernels_avx512_size,
        .features = AVX512,
        .cpus = "x86-64-v4,skylake-avx512,cascadelake,cooperlake,icelake-server,"
                "icelake-client,tigerlake,rocketlake,sapphirerapids,emeraldrapids,"
                "graniterapids,znver4,znver5",
        .scratch_per_k = 8 * 2,
        .transform_script = tinyml__x86_strategy_avx512,
        .variant_cpu = "x86-64-v4",
    },
    {
        .name = "avx2",
        .bitcode = tinyml__x86_ukernels,
        .bitcode_size = &tinyml__x86_ukernels_size,
        .features = "+avx2,+fma",
        .cpus = "x86-64-v3,x86-64-v4,haswell,broadwell,skylake,skylake-avx512,"
                "cascadelake,icelake-server,icelake-client,tigerlake,alderlake,"
                "sapphirerapids,znver1,znver2,znver3,znver4,znver5",
        .scratch_per_k = 4 * 2, /* 4 pixels' int16 im2col columns */
    },
};

static const char *const schedule_cflags[] = {"-fPIC", 0};

const tinyml_backend_t tinyml__backend_x86 = {
    .name = "x86-64",
    .triple = "x86_64-unknown-linux-gnu",
    .cpus = tinyml__x86_cpus,
    .default_cpu = "x86-64-v3",
    .default_features = "",
    .elf_arch = "x86_64",
    .pointer_bits = 64,
    .threads = 1,
    .transform_script = tinyml__x86_strategy,
    .lowering_pipeline = tinyml__x86_lowering,
    .object = {.schedule_cflags = schedule_cflags, .lld_emulation = "elf_x86_64"},
    .ukernels = {
        .builds = ukernel_builds,
        .build_count = sizeof(ukernel_builds) / sizeof(ukernel_builds[0]),
        .oc_block = 8, /* AVX2: 8 int32 lanes, vpmaddwd over tap pairs */
        .k_block = 2,
        .f32 = 1,
        .f32_tuning = {
            .tile_rows = 6,      /* the AVX2 f32 tile's height */
            .max_tile_rows = 12, /* ... and AVX-512's */
            .im2col_bytes = 1 << 20,
            .chunk_bytes = 128 << 10,
            .window_bytes = 512 << 10,
            /* Measured on ResNet-50 and SqueezeNet (docs/PERF.md, Winograd). */
            .winograd = {
                .min_channels = 16, /* SqueezeNet's fire2-3 under F(4x4, 3x3) */
                .max_u_bytes = 4 << 20, /* ResNet-50's 7x7 stage (16 MB) gains 1% */
                .max_u4_bytes = 5 << 19,
                .l2_u_bytes = 1 << 20,
                .block_bytes = 256 << 10,
                .big_block_bytes = 2 << 20,
                .tile_rows = 12, /* the AVX-512 f32 tile's height */
                .max_tiles = 96, /* within the kernel's FB_MAX output rows */
            },
        },
    },
    /* About 15 us of the fastest kernel here (int8 1x1 conv, ~65 G
     * multiply-adds/s), more of the others.  On this 2-vCPU VM, shared with
     * other builds, a split 9 us phase of vww_96 int8 took 0.79x of its
     * one-thread time, and kws f32's 8-15 us loop phases gained nothing
     * (docs/PERF.md, "Threads"); with both vCPUs ours (chrt -f 1), 15-30 us
     * phases gain 1.3-1.8x split, and an inline phase after a split one
     * reads its input from both cores' caches (SqueezeNet-1.1's 27x27 pool:
     * 17 us alone, 29 inline on 2 threads, 12 split).  2^20 instead of
     * 2^21 made the zoo's SSD, mobilenet_v1 and fastestdet 6-20% faster on
     * 2 threads (docs/PERF.md, "Threads on Intel (issue 27)"). */
    .split_min_work = 1 << 20,
};
