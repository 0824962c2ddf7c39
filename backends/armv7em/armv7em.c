/* Armv7E-M (Cortex-M4 / Cortex-M7: Thumb-2, DSP, FPv4-SP / FPv5 single
 * precision), bare metal.  Strategy and lowering beside this file. */
#include "../../lib/compiler/backend.h"

extern const char *const tinyml__armv7em_cpus[];
extern const char tinyml__armv7em_strategy[];
extern const char tinyml__armv7em_lowering[];
extern const unsigned char tinyml__armv7em_ukernels[];
extern const unsigned long tinyml__armv7em_ukernels_size;

const tinyml_backend_t tinyml__backend_armv7em = {
    .name = "armv7em",
    .triple = "thumbv7em-none-eabihf",
    .cpus = tinyml__armv7em_cpus,
    .default_cpu = "cortex-m4",
    .default_features = "",
    .elf_arch = "arm",
    .lld_emulation = "armelf",
    .pointer_bits = 32,
    .transform_script = tinyml__armv7em_strategy,
    .lowering_pipeline = tinyml__armv7em_lowering,
    .ukernel_bitcode = tinyml__armv7em_ukernels,
    .ukernel_bitcode_size = &tinyml__armv7em_ukernels_size,
    .ukernel_oc_block = 2, /* SMLAD: 2 channels x 2 pixels x 2 taps */
    .ukernel_k_block = 4,
    .ukernel_k_perm = 1,
    .ukernel_tail_columns = 1,
    .ukernel_scratch_per_k = 2 * 2, /* 2 pixels' int16 im2col columns */
    .ukernel_feature = "+dsp",
    .ukernel_cpus = "cortex-m4,cortex-m7,cortex-m33,cortex-m35p,cortex-m55,cortex-m85",
};
