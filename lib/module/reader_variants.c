/* tmod_read's variants (module.h, tmod_variant_t): field 15, read after
 * the baseline's executables with the same checks (reader.c describes
 * them).  Hosted builds only: the M4 runtime runs the baseline and has no
 * room for this. */
#include <inttypes.h>
#include <stdio.h>

#include "lib/common/alloc.h"
#include "reader_internal.h"

/* Variant i: its cpu, features and the baseline's count of executables. */
static void read_variant(reader_t *r, const vec_t *v, uint32_t i, tmod_variant_t *out,
                         tmod_executable_t *exes, uint32_t count) {
  table_t t;
  vec_t e;
  tmod__element_table(r, v, i, "variant %u", &t);
  out->cpu = tmod__string(&t, 0);
  out->features = tmod__string(&t, 1);
  out->executables = exes;
  /* An empty cpu would pass any CPU's check. */
  if (!out->cpu[0]) tbad(&t, "names no cpu");
  tmod__vector(&t, 2, 4, &e);
  if (e.count != count)
    tbad(&t, "has %" PRIu32 " executables, the baseline %" PRIu32, e.count, count);
  char scope[64];
  snprintf(scope, sizeof(scope), "variant %" PRIu32 " (%s) ", i, out->cpu);
  r->scope = scope;
  for (uint32_t k = 0; k < e.count && !r->status; k++)
    tmod__read_executable(r, &e, k, &exes[k]);
  r->scope = "";
}

/* After the baseline's executables, whose count each variant repeats; one
 * allocation holds the variants and then their executables. */
void tmod__read_variants(table_t *root, tmod_module_t *m) {
  reader_t *r = root->r;
  vec_t v;
  root->name.what = "variants";
  tmod__vector(root, 15, 4, &v);
  if (v.count > TMOD_MAX_VARIANTS)
    bad(r, "%u variants exceed the maximum %u", v.count, TMOD_MAX_VARIANTS);
  if (r->status || !v.count) return;
  uint32_t n = m->executable_count;
  size_t bytes = v.count * (sizeof(tmod_variant_t) + (size_t)n * sizeof(tmod_executable_t));
  tmod_variant_t *vars = tinyml__calloc(&r->alloc, 1, bytes, _Alignof(tmod_variant_t));
  if (!vars) {
    tmod__out_of_memory(r, "variants", bytes);
    return;
  }
  m->variants = vars;
  m->variant_count = v.count;
  tmod_executable_t *exes = (tmod_executable_t *)(void *)(vars + v.count);
  for (uint32_t i = 0; i < v.count && !r->status; i++)
    read_variant(r, &v, i, &vars[i], exes + (size_t)i * n, n);
}
