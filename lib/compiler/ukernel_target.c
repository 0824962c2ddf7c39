/* Whether a compile target can run a backend's microkernels, and which of
 * its bitcodes: decided from the caller's --cpu and --features alone, so
 * the selection on TOSA (ukernel_match.c) and the linking (codegen.c) agree. */
#include <string.h>

#include "ukernel.h"

int tc_feature_listed(const char *list, const char *tok) {
  size_t n = strlen(tok);
  for (const char *s = list; s && *s;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len == n && strncmp(s, tok, n) == 0) return 1;
    s = e ? e + 1 : NULL;
  }
  return 0;
}

/* 1 when every feature of `required` (comma-separated) is in `list`: the
 * kernels' intrinsics need all of them, and LLVM aborts on one it cannot
 * select. */
static int features_all(const char *list, const char *required) {
  char tok[64];
  for (const char *s = required; s && *s;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    if (len >= sizeof tok) return 0;
    memcpy(tok, s, len);
    tok[len] = '\0';
    if (!tc_feature_listed(list, tok)) return 0;
    s = e ? e + 1 : NULL;
  }
  return 1;
}

int tc_ukernels_wide(const tinyml_backend_t *be, const char *cpu, const char *features) {
  if (!be->ukernel_wide_bitcode) return 0;
  if (features && *features) return features_all(features, be->ukernel_wide_feature);
  return cpu && tc_feature_listed(be->ukernel_wide_cpus, cpu);
}

int tc_ukernels_usable(const tinyml_backend_t *be, const char *cpu, const char *features) {
  if (!be->ukernel_bitcode) return 0;
  if (features && *features)
    return features_all(features, be->ukernel_feature) || tc_ukernels_wide(be, cpu, features);
  return cpu && (strcmp(cpu, be->default_cpu) == 0 || tc_feature_listed(be->ukernel_cpus, cpu));
}
