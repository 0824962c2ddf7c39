/* Whether a compile target can run a backend's microkernels, and which of
 * its bitcodes: decided from the caller's --cpu and --features alone, so
 * the selection on TOSA (ukernel_match.c) and the linking (codegen.c) agree. */
#include <string.h>

#include "../common/list.h"
#include "ukernel.h"

int tc_ukernels_wide(const tinyml_backend_t *be, const char *cpu, const char *features) {
  if (!be->ukernel_wide_bitcode) return 0;
  if (features && *features) return tinyml__list_has_all(features, be->ukernel_wide_feature);
  return cpu && tinyml__list_has(be->ukernel_wide_cpus, cpu);
}

int tc_ukernels_dot4(const tinyml_backend_t *be, const char *cpu, const char *features) {
  if (!be->ukernel_dot4_feature || !tc_ukernels_wide(be, cpu, features)) return 0;
  if (features && *features) return tinyml__list_has_all(features, be->ukernel_dot4_feature);
  return cpu && tinyml__list_has(be->ukernel_dot4_cpus, cpu);
}

int tc_ukernels_usable(const tinyml_backend_t *be, const char *cpu, const char *features) {
  if (!be->ukernel_bitcode) return 0;
  if (features && *features)
    return tinyml__list_has_all(features, be->ukernel_feature) || tc_ukernels_wide(be, cpu, features);
  return cpu && (strcmp(cpu, be->default_cpu) == 0 || tinyml__list_has(be->ukernel_cpus, cpu));
}
