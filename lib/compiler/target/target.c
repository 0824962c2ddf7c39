/* Resolving a compile's target (target.h).  Which microkernels a target
 * gets is decided from the caller's --cpu and --features alone, so the
 * selection on TOSA and the linking of the bitcode agree. */
#include "target.h"

#include <llvm-c/Target.h>
#include <pthread.h>
#include <string.h>

#include "../../common/list.h"
#include "../../common/status.h"

static pthread_once_t llvm_targets_once = PTHREAD_ONCE_INIT;

static void llvm_targets_register(void) {
  LLVMInitializeAllTargetInfos();
  LLVMInitializeAllTargets();
  LLVMInitializeAllTargetMCs();
  LLVMInitializeAllAsmPrinters();
}

void tc_llvm_targets_init(void) { pthread_once(&llvm_targets_once, llvm_targets_register); }

/* Whether the target can use `b`: the caller's features decide when given. */
static int can_use(const tc_ukernel_build_t *b, const char *cpu, const char *features) {
  if (*features) return tinyml__list_has_all(features, b->features);
  return tinyml__list_has(b->cpus, cpu);
}

static const tc_ukernel_build_t *pick_ukernels(const tinyml_backend_t *be, const char *cpu,
                                               const char *features) {
  for (unsigned i = 0; i < be->ukernels.build_count; ++i)
    if (can_use(&be->ukernels.builds[i], cpu, features)) return &be->ukernels.builds[i];
  return NULL;
}

/* OK when LLVM knows `cpu` for the backend's triple (be->cpus): LLVM only
 * warns about an unknown CPU and may then end the process (x86-64: no
 * 64-bit mode on such a subtarget). */
static tinyml_status_t check_cpu(const tinyml_backend_t *be, const char *cpu,
                                 const tinyml_allocator_t *a) {
  if (!be->cpus) return TINYML_OK;
  for (const char *const *c = be->cpus; *c; ++c)
    if (strcmp(*c, cpu) == 0) return TINYML_OK;
  return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                             "compile: unknown CPU '%s' for target %s (LLVM names such as "
                             "'%s', or 'host' for this machine's)",
                             cpu, be->name, be->default_cpu);
}

tinyml_status_t tc_target_resolve(const tinyml_backend_t *be, const char *cpu,
                                  const char *features, int opt_level,
                                  const tinyml_allocator_t *a, tc_target_t *out) {
  memset(out, 0, sizeof(*out));
  TINYML_RETURN_IF_ERROR(tc_host_cpu_resolve(be, &cpu, &features, &out->host, a));
  out->backend = be;
  out->cpu = cpu ? cpu : be->default_cpu;
  out->features = features ? features : be->default_features;
  out->opt_level = opt_level;
  tinyml_status_t st = check_cpu(be, out->cpu, a);
  if (st) {
    tc_target_release(out);
    return st;
  }
  out->transform_script = be->transform_script;
  if (be->scalar_transform_script && !tinyml__list_has(out->features, be->vector_feature))
    out->transform_script = be->scalar_transform_script;
  out->ukernels = pick_ukernels(be, out->cpu, out->features);
  if (out->ukernels && out->ukernels->transform_script)
    out->transform_script = out->ukernels->transform_script;
  return TINYML_OK;
}

void tc_target_release(tc_target_t *target) { tc_host_cpu_release(&target->host); }

int tc_target_has_f32_kernels(const tc_target_t *target) {
  return target->ukernels && target->backend->ukernels.f32;
}
