/* Public API: compile.  The only place that sees the compiler. */
#include <stddef.h>
#include <string.h>

#include "../lib/common/alloc.h"
#include "../lib/common/status.h"
#include "api_internal.h"

#ifdef TINYML_WITH_COMPILER
#include "../lib/compiler/backend.h"
#include "../lib/compiler/compiler.h"
#endif

#define HAS_FIELD(opts, field) \
  ((opts) && (opts)->struct_size >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))

void tinyml_compile_options_init(tinyml_compile_options_t *o) {
  if (!o) return;
  memset(o, 0, sizeof(*o));
  o->struct_size = sizeof(*o);
  o->opt_level = 3;
}

const char *tinyml_compile_targets(void) {
#ifdef TINYML_WITH_COMPILER
  return tinyml__backend_names();
#else
  return "";
#endif
}

#ifdef TINYML_WITH_COMPILER
/* LLVM treats a feature without a sign as invalid IR much later; catch it
 * here where the message can name it. */
static tinyml_status_t check_features(const char *f, const tinyml_allocator_t *a) {
  for (const char *item = f; item && *item;) {
    size_t len = strcspn(item, ",");
    if (len < 2 || (item[0] != '+' && item[0] != '-'))
      return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                                 "tinyml_compile: feature '%.*s' must be +name or -name",
                                 (int)len, item);
    item += len + (item[len] == ',');
  }
  return TINYML_OK;
}

static tinyml_status_t make_request(const tinyml_compile_options_t *o,
                                    const tinyml_allocator_t *a,
                                    tinyml__compile_request_t *r) {
  r->target = HAS_FIELD(o, target) && o->target ? o->target : "x86-64";
  r->cpu = HAS_FIELD(o, cpu) ? o->cpu : NULL;
  r->features = HAS_FIELD(o, features) ? o->features : NULL;
  r->opt_level = HAS_FIELD(o, opt_level) ? o->opt_level : 3;
  TINYML_RETURN_IF_ERROR(check_features(r->features, a));
  if (r->opt_level < 0 || r->opt_level > 3)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "tinyml_compile: opt_level %d is not in 0..3", r->opt_level);
  return TINYML_OK;
}
#endif

tinyml_status_t tinyml_compile(const void *model, size_t model_size,
                               const tinyml_compile_options_t *o,
                               tinyml_blob_t **out_module) {
  if (o && o->struct_size < sizeof(size_t))
    return tinyml__status_make(NULL, TINYML_STATUS_INVALID_ARGUMENT,
                               "tinyml_compile: options.struct_size is too small; call "
                               "tinyml_compile_options_init()");
  tinyml_allocator_t a =
      tinyml__allocator_or_default(HAS_FIELD(o, allocator) ? &o->allocator : NULL);
  if (!model || !out_module)
    return tinyml__status_make(&a, TINYML_STATUS_INVALID_ARGUMENT,
                               "tinyml_compile: model and out_module must not be NULL");
  if (!model_size)
    return tinyml__status_make(&a, TINYML_STATUS_INVALID_MODEL, "tinyml_compile: model is empty");
#ifdef TINYML_WITH_COMPILER
  tinyml__compile_request_t req = {0};
  TINYML_RETURN_IF_ERROR(make_request(o, &a, &req));
  tinyml_blob_t *blob = tinyml__calloc(&a, 1, sizeof(*blob), 16);
  if (!blob) return tinyml__status_make(&a, TINYML_STATUS_OUT_OF_MEMORY, "tinyml_compile: out of memory");
  uint8_t *data = NULL;
  tinyml_status_t st = tinyml__compile(model, model_size, &req, &a, &data, &blob->size);
  if (st) {
    tinyml__free(&a, blob);
    return st;
  }
  blob->allocator = a;
  blob->data = data;
  *out_module = blob;
  return TINYML_OK;
#else
  return tinyml__status_make(&a, TINYML_STATUS_UNSUPPORTED,
                             "tinyml_compile: this libtinyml was built without the compiler");
#endif
}
