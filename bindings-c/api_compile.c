/* Public API: compile.  The only place that sees the compiler. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../lib/common/alloc.h"
#include "../lib/common/status.h"
#include "api_internal.h"

#ifdef TINYML_WITH_COMPILER
#include "../lib/compiler/backend.h"
#include "../lib/compiler/compiler.h"
_Static_assert(TINYML__MAX_FILES <= TINYML_FILES_MAX, "tinyml_files_t is too small");
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
  r->emit = HAS_FIELD(o, emit) ? o->emit : TINYML_EMIT_MODULE;
  r->name = HAS_FIELD(o, name) && o->name ? o->name : "model";
  if ((unsigned)r->emit > TINYML_EMIT_STATIC_LIB)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "tinyml_compile: emit %d is not a tinyml_emit_t", (int)r->emit);
  TINYML_RETURN_IF_ERROR(check_features(r->features, a));
  if (r->opt_level < 0 || r->opt_level > 3)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "tinyml_compile: opt_level %d is not in 0..3", r->opt_level);
  return TINYML_OK;
}
#endif

/* The checks both compile entry points make before touching the model. */
static tinyml_status_t check_call(const void *model, size_t model_size,
                                  const tinyml_compile_options_t *o, const void *out,
                                  const char *fn, const char *out_name, tinyml_allocator_t *a) {
  if (o && o->struct_size < sizeof(size_t))
    return tinyml__status_make(NULL, TINYML_STATUS_INVALID_ARGUMENT,
                               "%s: options.struct_size is too small; call "
                               "tinyml_compile_options_init()", fn);
  *a = tinyml__allocator_or_default(HAS_FIELD(o, allocator) ? &o->allocator : NULL);
  if (!model || !out)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "%s: model and %s must not be NULL", fn, out_name);
  if (!model_size)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_MODEL, "%s: model is empty", fn);
  return TINYML_OK;
}

tinyml_status_t tinyml_compile(const void *model, size_t model_size,
                               const tinyml_compile_options_t *o,
                               tinyml_blob_t **out_module) {
  tinyml_allocator_t a;
  TINYML_RETURN_IF_ERROR(
      check_call(model, model_size, o, out_module, "tinyml_compile", "out_module", &a));
#ifdef TINYML_WITH_COMPILER
  tinyml__compile_request_t req = {0};
  TINYML_RETURN_IF_ERROR(make_request(o, &a, &req));
  if (req.emit != TINYML_EMIT_MODULE)
    return tinyml__status_make(&a, TINYML_STATUS_INVALID_ARGUMENT,
                               "tinyml_compile: emit C or a static library with "
                               "tinyml_compile_files(); they are several files");
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

tinyml_status_t tinyml_compile_files(const void *model, size_t model_size,
                                     const tinyml_compile_options_t *o,
                                     tinyml_files_t **out_files) {
  tinyml_allocator_t a;
  TINYML_RETURN_IF_ERROR(
      check_call(model, model_size, o, out_files, "tinyml_compile_files", "out_files", &a));
#ifdef TINYML_WITH_COMPILER
  tinyml__compile_request_t req = {0};
  TINYML_RETURN_IF_ERROR(make_request(o, &a, &req));
  tinyml_files_t *files = tinyml__calloc(&a, 1, sizeof(*files), 16);
  if (!files)
    return tinyml__status_make(&a, TINYML_STATUS_OUT_OF_MEMORY, "tinyml_compile_files: out of memory");
  tinyml__files_t out;
  tinyml_status_t st = tinyml__compile_files(model, model_size, &req, &a, &out);
  if (st) {
    tinyml__free(&a, files);
    return st;
  }
  files->allocator = a;
  files->count = out.count;
  for (uint32_t i = 0; i < out.count; ++i) {
    memcpy(files->names[i], out.file[i].name, sizeof(files->names[i]));
    files->blobs[i] = (tinyml_blob_t){a, out.file[i].data, out.file[i].size};
  }
  *out_files = files;
  return TINYML_OK;
#else
  return tinyml__status_make(&a, TINYML_STATUS_UNSUPPORTED,
                             "tinyml_compile_files: this libtinyml was built without the compiler");
#endif
}

size_t tinyml_files_count(const tinyml_files_t *f) { return f ? f->count : 0; }

const char *tinyml_files_name(const tinyml_files_t *f, size_t i) {
  return f && i < f->count ? f->names[i] : NULL;
}

const tinyml_blob_t *tinyml_files_blob(const tinyml_files_t *f, size_t i) {
  return f && i < f->count ? &f->blobs[i] : NULL;
}

tinyml_status_t tinyml_files_write(const tinyml_files_t *f, const char *dir) {
  if (!f || !dir)
    return tinyml__status_make(NULL, TINYML_STATUS_INVALID_ARGUMENT,
                               "tinyml_files_write: files and dir must not be NULL");
  for (size_t i = 0; i < f->count; ++i) {
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, f->names[i]);
    TINYML_RETURN_IF_ERROR(tinyml_blob_write_file(&f->blobs[i], path));
  }
  return TINYML_OK;
}

void tinyml_files_release(tinyml_files_t *f) {
  if (!f) return;
  tinyml_allocator_t a = f->allocator;
  for (size_t i = 0; i < f->count; ++i) tinyml__free(&a, f->blobs[i].data);
  tinyml__free(&a, f);
}
