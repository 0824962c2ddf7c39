/* `--cpu host` through LLVM-C (see host_cpu.h). */
#include "host_cpu.h"

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>
#include <string.h>

#include "../../common/status.h"
#include "target.h"

/* Whether LLVM generates code for both triples with one target: the same
 * architecture, whatever the vendor and system. */
static int same_arch(const char *t1, const char *t2) {
  tc_llvm_targets_init();
  LLVMTargetRef a = NULL, b = NULL;
  char *err = NULL;
  if (LLVMGetTargetFromTriple(t1, &a, &err)) LLVMDisposeMessage(err);
  err = NULL;
  if (LLVMGetTargetFromTriple(t2, &b, &err)) LLVMDisposeMessage(err);
  return a && a == b;
}

tinyml_status_t tc_host_cpu_resolve(const tinyml_backend_t *be, const char **cpu,
                                    const char **features, tc_host_cpu_t *host,
                                    const tinyml_allocator_t *a) {
  memset(host, 0, sizeof(*host));
  if (!*cpu || strcmp(*cpu, "host") != 0) return TINYML_OK;
  char *triple = LLVMGetDefaultTargetTriple();
  const int same = same_arch(triple, be->triple);
  tinyml_status_t st = TINYML_OK;
  if (!same)
    st = tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                             "compile: --cpu host needs a target of this machine's "
                             "architecture (%s), but target '%s' is %s; name its CPU instead",
                             triple, be->name, be->triple);
  LLVMDisposeMessage(triple);
  if (st) return st;
  host->cpu = LLVMGetHostCPUName();
  *cpu = host->cpu;
  /* The caller's features stand: they may take some of the host's away. */
  if (!*features) {
    host->features = LLVMGetHostCPUFeatures();
    *features = host->features;
  }
  return TINYML_OK;
}

void tc_host_cpu_release(tc_host_cpu_t *host) {
  if (host->cpu) LLVMDisposeMessage(host->cpu);
  if (host->features) LLVMDisposeMessage(host->features);
  memset(host, 0, sizeof(*host));
}
