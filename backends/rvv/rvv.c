/* RISC-V 64 with the V extension (RVV 1.0), Linux user mode.  The code is
 * vector-length agnostic: LLVM's loop vectorizer emits scalable vectors, so
 * one executable runs at any VLEN.  Strategy and lowering beside this file. */
#include <llvm-c/Core.h>
#include <string.h>

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

/* Every entry's workgroup_count (its fourth parameter) is at least 1
 * (lib/module/executable_abi.h); the IR says so with range(i32 1, 0), i.e.
 * [1, 2^32).  A split loop runs from wg * n / count to (wg + 1) * n / count
 * (codegen/distribute.c).  With a count that may be 0, LLVM kept an index
 * in the conv loops inside and rebuilt each address from it (slli + add
 * per tap): resnet8_float took 7.30 M instructions per inference at VLEN
 * 128, 5.80 M with the range.  Only here: x86-64 modules stay as they are. */
static void entry_count_range(LLVMModuleRef m) {
  LLVMContextRef c = LLVMGetModuleContext(m);
  unsigned kind = LLVMGetEnumAttributeKindForName("range", 5);
  const uint64_t lower[] = {1}, upper[] = {0};
  LLVMAttributeRef nonzero = LLVMCreateConstantRangeAttribute(c, kind, 32, lower, upper);
  for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
    size_t n;
    const char *name = LLVMGetValueName2(f, &n);
    if (n > 13 && strncmp(name, "tinyml_entry_", 13) == 0 && LLVMCountParams(f) == 4)
      LLVMAddAttributeAtIndex(f, 4, nonzero); /* parameter 3: index 1 + 3 */
  }
}

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
    .object = {.schedule_cflags = schedule_cflags,
               .prepare = entry_count_range,
               .lld_emulation = "elf64lriscv"},
    .ukernels = {
        .builds = ukernel_builds,
        .build_count = 1,
        .oc_block = 32, /* ukernels.c: 32 channels (e32m8) per tap */
        .k_block = 1,
    },
};
