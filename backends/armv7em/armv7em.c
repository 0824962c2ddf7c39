/* Armv7E-M (Cortex-M4 / Cortex-M7: Thumb-2, DSP, FPv4-SP / FPv5 single
 * precision), bare metal.  Strategy and lowering beside this file. */
#include <llvm-c/Core.h>

#include "../../lib/compiler/backend.h"

extern const char *const tinyml__armv7em_cpus[];
extern const char tinyml__armv7em_strategy[];
extern const char tinyml__armv7em_lowering[];
extern const unsigned char tinyml__armv7em_ukernels[];
extern const unsigned long tinyml__armv7em_ukernels_size;

/* LLVM-C cannot set TargetOptions::FloatABIType, so a target machine for
 * an Arm "eabihf" triple still defaults to the soft-float procedure call
 * standard.  The hard-float ABI is therefore requested per function and per
 * call, as clang does with arm_aapcs_vfpcc: every definition, declaration
 * (libm imports such as expf take floats in s0) and call site.  Runs before
 * optimisation, so callers and callees agree, and again after it, for calls
 * that LLVM created. */
static void hard_float_calls(LLVMModuleRef m) {
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    if (LLVMGetIntrinsicID(f) != 0) continue;
    LLVMSetFunctionCallConv(f, LLVMARMAAPCSVFPCallConv);
    for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(f); bb;
         bb = LLVMGetNextBasicBlock(bb))
      for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i;
           i = LLVMGetNextInstruction(i)) {
        if (LLVMGetInstructionOpcode(i) != LLVMCall) continue;
        LLVMValueRef callee = LLVMGetCalledValue(i);
        if (LLVMIsAFunction(callee) && LLVMGetIntrinsicID(callee) != 0) continue;
        LLVMSetInstructionCallConv(i, LLVMARMAAPCSVFPCallConv);
      }
  }
}

/* The libcalls LLVM creates while selecting instructions (expf for
 * llvm.exp, roundevenf, ...) follow the target machine's float ABI, which
 * LLVM-C leaves soft: they would pass floats in core registers to a
 * hard-float libm.  clang sets the ABI, so the object is emitted by clang
 * from the optimised bitcode; it also marks the object Tag_ABI_VFP_args,
 * which GNU ld checks when firmware links it.  -meabi gnu keeps
 * memset/memcpy (the loader's imports) instead of __aeabi_memset. */
static const char *const object_clang_flags[] = {"-mfloat-abi=hard", "-meabi", "gnu", 0};

/* Firmware links the schedule at fixed addresses (no -fPIC), with
 * arm-none-eabi-gcc's short enums; -mcpu settles the float ABI, which must
 * match the kernels. */
static const char *const schedule_cflags[] = {"-mcpu=", "-fshort-enums", 0};

static const tc_ukernel_build_t ukernel_builds[] = {{
    .name = "dsp",
    .bitcode = tinyml__armv7em_ukernels,
    .bitcode_size = &tinyml__armv7em_ukernels_size,
    .features = "+dsp",
    .cpus = "cortex-m4,cortex-m7,cortex-m33,cortex-m35p,cortex-m55,cortex-m85",
    .scratch_per_k = 4 * 2, /* 4 pixels' int16 im2col columns */
}};

const tinyml_backend_t tinyml__backend_armv7em = {
    .name = "armv7em",
    .triple = "thumbv7em-none-eabihf",
    .cpus = tinyml__armv7em_cpus,
    .default_cpu = "cortex-m4",
    .default_features = "",
    .elf_arch = "arm",
    .pointer_bits = 32,
    .threads = 0, /* bare metal */
    .transform_script = tinyml__armv7em_strategy,
    .lowering_pipeline = tinyml__armv7em_lowering,
    .object = {.clang_flags = object_clang_flags,
               .prepare = hard_float_calls,
               .schedule_cflags = schedule_cflags,
               .lld_emulation = "armelf"},
    .ukernels = {
        .builds = ukernel_builds,
        .build_count = 1,
        .oc_block = 2, /* SMLAD: 2 channels x 2 pixels x 2 taps */
        .k_block = 4,
        .k_perm = 0,
        .tail_columns = 1,
        .specialise = 1,
        .zp_in_bias = 1,
        .dw_wide = 1,
        .req_records = 1,
        .fc_oc_block = 4, /* ukernels.c: fc_rows, 4 channels per LDM */
    },
};
