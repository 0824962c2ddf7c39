/* Armv7E-M (Cortex-M4 / Cortex-M7: Thumb-2, DSP, FPv4-SP / FPv5 single
 * precision), bare metal.  Strategy and lowering beside this file. */
#include "../../lib/compiler/backend.h"

extern const char tinyml__armv7em_strategy[];
extern const char tinyml__armv7em_lowering[];

const tinyml_backend_t tinyml__backend_armv7em = {
    .name = "armv7em",
    .triple = "thumbv7em-none-eabihf",
    .default_cpu = "cortex-m4",
    .default_features = "",
    .elf_arch = "arm",
    .lld_emulation = "armelf",
    .pointer_bits = 32,
    .transform_script = tinyml__armv7em_strategy,
    .lowering_pipeline = tinyml__armv7em_lowering,
};
