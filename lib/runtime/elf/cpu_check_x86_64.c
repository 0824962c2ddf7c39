/* Refuses an x86-64 module whose code needs a CPU feature this CPU lacks,
 * before any of its code is mapped: running it would end the process on an
 * illegal instruction.  The module records the LLVM CPU and features it was
 * compiled for, and a named CPU implies features beyond its x86-64 level;
 * all are checked with __builtin_cpu_supports (which also
 * checks that the OS saves the vector state).  The x86-64 architecture's
 * check_cpu (arch_x86_64.h); meson compiles it into hosted x86-64 builds
 * only: freestanding runtimes run code built for their one board.
 * It keeps no state of its own. */
#include <string.h>

#include "../../common/list.h"
#include "../../common/status.h"
#include "elf_arch.h"

/* LLVM feature names that gcc 12's and clang 22's __builtin_cpu_supports
 * know by the same name: the vector and bit-manipulation extensions that
 * compiled kernels use.  Others (cx16, sahf, xsave, prfchw, ...) are taken
 * on trust: no compiler can test them, and code generation does not emit
 * them for kernels. */
#define TINYML__CHECKED_FEATURES(X)                                                           \
  X("sse3") X("ssse3") X("sse4.1") X("sse4.2") X("sse4a") X("popcnt") X("avx") X("avx2")   \
  X("fma") X("fma4") X("xop") X("f16c") X("bmi") X("bmi2") X("lzcnt") X("movbe") X("aes") \
  X("pclmul") X("sha") X("adx") X("gfni") X("vaes") X("vpclmulqdq") X("avxvnni")          \
  X("avx512f") X("avx512bw") X("avx512vl") X("avx512dq") X("avx512cd") X("avx512vnni")    \
  X("avx512bf16") X("avx512fp16") X("avx512vbmi") X("avx512vbmi2") X("avx512bitalg")      \
  X("avx512vpopcntdq") X("avx512ifma")

/* 1: this CPU has feature `name` (n bytes), 0: it lacks it, -1: unknown. */
static int has_feature(const char *name, size_t n) {
#define TEST(s) \
  if (n == sizeof(s) - 1 && memcmp(name, s, n) == 0) return __builtin_cpu_supports(s) != 0;
  TINYML__CHECKED_FEATURES(TEST)
#undef TEST
  return -1;
}

/* LLVM CPU names by the x86-64 micro-architecture level they imply. */
static const char *const LEVEL_CPUS[4] = {
    "x86-64,generic,k8,k8-sse3,opteron,athlon64,nocona,core2,penryn,bonnell,atom",
    "x86-64-v2,nehalem,corei7,westmere,sandybridge,corei7-avx,ivybridge,core-avx-i,"
    "silvermont,slm,goldmont,goldmont-plus,tremont,btver2,bdver1,bdver2,bdver3,amdfam10",
    "x86-64-v3,haswell,core-avx2,broadwell,skylake,alderlake,raptorlake,meteorlake,"
    "arrowlake,arrowlake-s,lunarlake,pantherlake,gracemont,sierraforest,grandridge,"
    "clearwaterforest,knl,knm,bdver4,znver1,znver2,znver3",
    "x86-64-v4,skylake-avx512,cascadelake,cooperlake,cannonlake,icelake-client,"
    "icelake-server,rocketlake,tigerlake,sapphirerapids,emeraldrapids,graniterapids,"
    "graniterapids-d,znver4,znver5",
};

/* Vector features LLVM may emit for a named CPU beyond its level, so a
 * module compiled for one needs them too (a --cpu cascadelake module uses
 * vpdpwssd, which a skylake-avx512 lacks).  From LLVM's X86TargetParser.
 * diamondrapids is in no list: its APX and AVX10.2 are beyond what
 * __builtin_cpu_supports can test, so its modules are refused as unknown. */
#define TINYML__ICL_FEATURES                                                        \
  "avx512vnni,avx512ifma,avx512vbmi,avx512vbmi2,avx512bitalg,avx512vpopcntdq,gfni," \
  "vaes,vpclmulqdq"
static const struct {
  const char *cpus, *features;
} CPU_EXTRAS[] = {
    {"cascadelake", "avx512vnni"},
    {"cooperlake", "avx512vnni,avx512bf16"},
    {"cannonlake", "avx512ifma,avx512vbmi"},
    {"icelake-client,icelake-server,rocketlake,tigerlake", TINYML__ICL_FEATURES},
    {"sapphirerapids,emeraldrapids,graniterapids,graniterapids-d",
     TINYML__ICL_FEATURES ",avx512bf16,avx512fp16,avxvnni"},
    {"znver4", TINYML__ICL_FEATURES ",avx512bf16"},
    {"znver5", TINYML__ICL_FEATURES ",avx512bf16,avxvnni"},
    {"alderlake,raptorlake,meteorlake,arrowlake,arrowlake-s,lunarlake,pantherlake,"
     "gracemont,sierraforest,grandridge,clearwaterforest",
     "avxvnni,gfni,vaes,vpclmulqdq"},
    {"znver3", "vaes,vpclmulqdq"},
    {"tremont", "gfni"},
    {"knl,knm", "avx512f,avx512cd"},
    {"sandybridge,corei7-avx", "avx"},
    {"ivybridge,core-avx-i", "avx,f16c"},
    {"btver2", "avx,f16c,bmi,movbe"},
    {"bdver1", "avx,xop,fma4"},
    {"bdver2,bdver3", "avx,xop,fma4,fma,f16c,bmi"},
    {"bdver4", "xop,fma4"},
};

/* The level (1..4) `cpu` implies; 0 when this runtime does not know it. */
static int cpu_level(const char *cpu) {
  for (int i = 0; i < 4; ++i)
    if (tinyml__list_has(LEVEL_CPUS[i], cpu)) return i + 1;
  return 0;
}

static int has_level(int level) {
  switch (level) {
    case 2: return __builtin_cpu_supports("x86-64-v2") != 0;
    case 3: return __builtin_cpu_supports("x86-64-v3") != 0;
    case 4: return __builtin_cpu_supports("x86-64-v4") != 0;
    default: return 1;
  }
}

/* The first feature of comma-separated `list` this CPU lacks (its length in
 * *len), or NULL.  A "+name" entry needs the feature, a "-name" one takes it
 * away (nothing to check), and a bare "name" needs it. */
static const char *first_missing(const char *list, size_t *len) {
  for (const char *s = list; *s;) {
    const size_t n = strcspn(s, ",");
    const size_t plus = s[0] == '+';
    if (n > plus && s[0] != '-' && has_feature(s + plus, n - plus) == 0) {
      *len = n - plus;
      return s + plus;
    }
    s += n + (s[n] == ',');
  }
  return NULL;
}

static tinyml_status_t check_cpu(const char *cpu, const tinyml_allocator_t *a) {
  const int level = cpu_level(cpu);
  if (!level)
    return TINYML_STATUS_MAKE(a, TINYML_STATUS_UNSUPPORTED,
                              "module: compiled for CPU '%s', which this runtime cannot "
                              "check this machine against; recompile with --cpu host or a "
                              "known name such as x86-64-v3", cpu);
  if (!has_level(level))
    return TINYML_STATUS_MAKE(a, TINYML_STATUS_UNSUPPORTED,
                              "module: compiled for CPU '%s' (x86-64-v%d), which this CPU is "
                              "not; recompile with --cpu host", cpu, level);
  for (size_t i = 0; i < sizeof CPU_EXTRAS / sizeof CPU_EXTRAS[0]; ++i) {
    size_t len = 0;
    const char *f = tinyml__list_has(CPU_EXTRAS[i].cpus, cpu) ? first_missing(CPU_EXTRAS[i].features, &len)
                                                    : NULL;
    if (f)
      return TINYML_STATUS_MAKE(a, TINYML_STATUS_UNSUPPORTED,
                                "module: compiled for CPU '%s', whose feature '%.*s' this CPU "
                                "lacks; recompile with --cpu host", cpu, (int)len, f);
  }
  return TINYML_OK;
}

tinyml_status_t tinyml__x86_64_check_cpu(const tmod_module_t *d, const tinyml_allocator_t *a) {
  if (d->executable_count == 0 || strcmp(d->executables[0].arch, "x86_64") != 0)
    return TINYML_OK; /* load_executables refuses other architectures */
  __builtin_cpu_init();
  if (d->cpu && *d->cpu) TINYML_RETURN_IF_ERROR(check_cpu(d->cpu, a));
  size_t len = 0;
  const char *f = first_missing(d->features ? d->features : "", &len);
  if (f)
    return TINYML_STATUS_MAKE(a, TINYML_STATUS_UNSUPPORTED,
                              "module: compiled for CPU feature '%.*s', which this CPU "
                              "lacks; recompile with --cpu host", (int)len, f);
  return TINYML_OK;
}
