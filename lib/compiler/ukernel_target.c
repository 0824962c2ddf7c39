/* Whether a compile target can run a backend's microkernels, and which of
 * its bitcodes: decided from the caller's --cpu and --features alone, so
 * the selection on TOSA (ukernel_match.c) and the linking (codegen.c) agree. */
#include <string.h>

#include "ukernel.h"

/* Whether the n bytes at tok are one of the comma-separated items of list. */
static int listed_n(const char *list, const char *tok, size_t n) {
  for (const char *s = list; s && *s;) {
    size_t len = strcspn(s, ",");
    if (len == n && strncmp(s, tok, n) == 0) return 1;
    s += len + (s[len] == ',');
  }
  return 0;
}

int tc_feature_listed(const char *list, const char *tok) { return listed_n(list, tok, strlen(tok)); }

/* 1 when every feature of `required` (comma-separated) is in `list`: the
 * kernels' intrinsics need all of them, and LLVM aborts on one it cannot
 * select. */
static int features_all(const char *list, const char *required) {
  for (const char *s = required; s && *s;) {
    size_t len = strcspn(s, ",");
    if (!listed_n(list, s, len)) return 0;
    s += len + (s[len] == ',');
  }
  return 1;
}

int tc_ukernels_wide(const tinyml_backend_t *be, const char *cpu, const char *features) {
  if (!be->ukernel_wide_bitcode) return 0;
  if (features && *features) return features_all(features, be->ukernel_wide_feature);
  return cpu && tc_feature_listed(be->ukernel_wide_cpus, cpu);
}

int tc_ukernels_dot4(const tinyml_backend_t *be, const char *cpu, const char *features) {
  if (!be->ukernel_dot4_feature || !tc_ukernels_wide(be, cpu, features)) return 0;
  if (features && *features) return features_all(features, be->ukernel_dot4_feature);
  return cpu && tc_feature_listed(be->ukernel_dot4_cpus, cpu);
}

int tc_ukernels_usable(const tinyml_backend_t *be, const char *cpu, const char *features) {
  if (!be->ukernel_bitcode) return 0;
  if (features && *features)
    return features_all(features, be->ukernel_feature) || tc_ukernels_wide(be, cpu, features);
  return cpu && (strcmp(cpu, be->default_cpu) == 0 || tc_feature_listed(be->ukernel_cpus, cpu));
}
