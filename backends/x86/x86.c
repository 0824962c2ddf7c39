/* x86-64 with AVX2/FMA.  The strategy and lowering live in strategy.mlir and
 * lowering.txt beside this file, embedded at build time. */
#include "../../lib/compiler/backend.h"

extern const char tinyml__x86_strategy[];
extern const char tinyml__x86_lowering[];

const tinyml_backend_t tinyml__backend_x86 = {
    .name = "x86-64",
    .triple = "x86_64-unknown-linux-gnu",
    .default_cpu = "x86-64-v3",
    .default_features = "",
    .elf_arch = "x86_64",
    .lld_emulation = "elf_x86_64",
    .pointer_bits = 64,
    .transform_script = tinyml__x86_strategy,
    .lowering_pipeline = tinyml__x86_lowering,
};
