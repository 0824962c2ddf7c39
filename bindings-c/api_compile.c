/* Public API: compile.  The only place that sees the compiler. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "../lib/common/alloc.h"
#include "../lib/common/status.h"
#include "../lib/runtime/runtime.h"
#include "api_internal.h"

#ifdef TINYML_WITH_COMPILER
#include "../backends/registry.h"
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
  o->max_tensor_bytes = TINYML_DEFAULT_MAX_TENSOR_BYTES;
  o->max_constant_bytes = TINYML_DEFAULT_MAX_CONSTANT_BYTES;
  o->max_ops = TINYML_DEFAULT_MAX_OPS;
  o->max_arena_bytes = TINYML_DEFAULT_MAX_ARENA_BYTES;
}

void tinyml_preprocess_init(tinyml_preprocess_t *p) {
  if (!p) return;
  memset(p, 0, sizeof(*p));
  p->struct_size = sizeof(*p);
  p->channel_count = 1;
  for (int c = 0; c < 4; ++c) p->std[c] = 1.0f;
}

void tinyml_postprocess_init(tinyml_postprocess_t *p) {
  if (!p) return;
  memset(p, 0, sizeof(*p));
  p->struct_size = sizeof(*p);
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
                                 "compile: feature '%.*s' must be +name or -name",
                                 (int)len, item);
    item += len + (item[len] == ',');
  }
  return TINYML_OK;
}

/* Copies the fields an older caller's struct has and defaults the rest, so
 * the compiler always sees a complete struct. */
static tinyml_status_t resolve_pre(const tinyml_preprocess_t *p, const tinyml_allocator_t *a,
                                   tinyml_preprocess_t *out) {
  tinyml_preprocess_init(out);
  if (p->struct_size < offsetof(tinyml_preprocess_t, kind) + sizeof(p->kind))
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: preprocess.struct_size is too small; call "
                               "tinyml_preprocess_init()");
  out->kind = p->kind;
  if (HAS_FIELD(p, pixels)) out->pixels = p->pixels;
  if (HAS_FIELD(p, image_width)) out->image_width = p->image_width;
  if (HAS_FIELD(p, image_height)) out->image_height = p->image_height;
  if (HAS_FIELD(p, resize)) out->resize = p->resize;
  if (HAS_FIELD(p, model_layout)) out->model_layout = p->model_layout;
  if (HAS_FIELD(p, channel_count)) out->channel_count = p->channel_count;
  if (HAS_FIELD(p, std)) {
    memcpy(out->mean, p->mean, sizeof(out->mean));
    memcpy(out->std, p->std, sizeof(out->std));
  }
  return TINYML_OK;
}

static tinyml_status_t resolve_post(const tinyml_postprocess_t *p, const tinyml_allocator_t *a,
                                    tinyml_postprocess_t *out) {
  tinyml_postprocess_init(out);
  if (p->struct_size < offsetof(tinyml_postprocess_t, dequantize) + sizeof(p->dequantize))
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: postprocess.struct_size is too small; call "
                               "tinyml_postprocess_init()");
  out->dequantize = p->dequantize;
  if (HAS_FIELD(p, softmax)) out->softmax = p->softmax;
  if (HAS_FIELD(p, argmax)) out->argmax = p->argmax;
  if (HAS_FIELD(p, top_k)) out->top_k = p->top_k;
  return TINYML_OK;
}

/* Checks that need no model; prepost.c checks the options against it. */
static tinyml_status_t check_pre(const tinyml_preprocess_t *p, const tinyml_allocator_t *a) {
  const char *bad = NULL;
  if ((unsigned)p->kind > TINYML_INPUT_INT16) bad = "kind is not a tinyml_input_kind_t";
  else if ((unsigned)p->pixels > TINYML_PIXELS_GRAY8) bad = "pixels is not a tinyml_pixel_format_t";
  else if ((unsigned)p->resize > TINYML_RESIZE_NEAREST) bad = "resize is not a tinyml_resize_t";
  else if ((unsigned)p->model_layout > TINYML_LAYOUT_NCHW)
    bad = "model_layout is not a tinyml_layout_t";
  else if (p->channel_count < 1 || p->channel_count > 4) bad = "channel_count must be 1..4";
  else if (p->kind == TINYML_INPUT_IMAGE && (p->image_width == 0 || p->image_height == 0 ||
                                             p->image_width > 16384 || p->image_height > 16384))
    bad = "image_width and image_height must be 1..16384";
  for (uint32_t c = 0; !bad && c < p->channel_count; ++c)
    if (!isfinite(p->mean[c]) || !isfinite(p->std[c]) || p->std[c] == 0.0f)
      bad = "mean and std must be finite and std not 0";
  if (!bad) return TINYML_OK;
  return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT, "compile: preprocess: %s",
                             bad);
}

static tinyml_status_t resolve_prepost(const tinyml_compile_options_t *o,
                                       const tinyml_allocator_t *a,
                                       tinyml__compile_request_t *r) {
  if (HAS_FIELD(o, preprocess) && o->preprocess) {
    TINYML_RETURN_IF_ERROR(resolve_pre(o->preprocess, a, &r->pre));
    TINYML_RETURN_IF_ERROR(check_pre(&r->pre, a));
    r->preprocess = r->pre.kind != TINYML_INPUT_AS_MODEL ? &r->pre : NULL;
  }
  if (HAS_FIELD(o, postprocess) && o->postprocess) {
    TINYML_RETURN_IF_ERROR(resolve_post(o->postprocess, a, &r->post));
    const tinyml_postprocess_t *p = &r->post;
    if (p->top_k > 65536)
      return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                                 "compile: postprocess: top_k %u is larger than 65536",
                                 p->top_k);
    int any = p->dequantize || p->softmax || p->argmax || p->top_k;
    r->postprocess = any ? p : NULL;
  }
  return TINYML_OK;
}

/* The caller's backend, or the default: the first built one whose code
 * this library's runtime runs (else the first built one, for compiling
 * on a host none of them targets). */
static tinyml_status_t resolve_backend(const tinyml_compile_options_t *o,
                                       const tinyml_allocator_t *a,
                                       tinyml__compile_request_t *r) {
  const char *name = HAS_FIELD(o, target) ? o->target : NULL;
  r->backend = name ? tinyml__backend_find(name) : tinyml__backend_default(tinyml__runtime_arch());
  if (!r->backend)
    return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                               "compile: unknown target '%s'; this build has: %s",
                               name ? name : "(default)", tinyml__backend_names());
  return TINYML_OK;
}

static tinyml_status_t make_request(const tinyml_compile_options_t *o,
                                    const tinyml_allocator_t *a,
                                    tinyml__compile_request_t *r) {
  r->cpu = HAS_FIELD(o, cpu) ? o->cpu : NULL;
  r->features = HAS_FIELD(o, features) ? o->features : NULL;
  r->opt_level = HAS_FIELD(o, opt_level) ? o->opt_level : 3;
  r->winograd = !(HAS_FIELD(o, no_winograd) && o->no_winograd);
  r->strip = HAS_FIELD(o, strip) && o->strip;
  for (int i = 0; HAS_FIELD(o, arena_regions) && i < TINYML_MAX_ARENA_REGIONS; ++i)
    r->arena_regions[i] = o->arena_regions[i];
  /* 0 (or a field this caller's struct lacks) is the default, which the
   * compiler fills in. */
  r->max_tensor_bytes = HAS_FIELD(o, max_tensor_bytes) ? o->max_tensor_bytes : 0;
  r->max_constant_bytes = HAS_FIELD(o, max_constant_bytes) ? o->max_constant_bytes : 0;
  r->max_ops = HAS_FIELD(o, max_ops) ? o->max_ops : 0;
  r->max_arena_bytes = HAS_FIELD(o, max_arena_bytes) ? o->max_arena_bytes : 0;
  r->split_min_work = HAS_FIELD(o, split_min_work) ? o->split_min_work : 0;
  if (HAS_FIELD(o, dim_count)) r->bindings = (te_bindings_t){.dims = o->dims, .dim_count = o->dim_count};
  if (HAS_FIELD(o, input_shape_count)) {
    r->bindings.input_shapes = o->input_shapes;
    r->bindings.input_shape_count = o->input_shape_count;
  }
  if (HAS_FIELD(o, note_user)) {
    r->bindings.note = o->note;
    r->bindings.note_user = o->note_user;
  }
  if (HAS_FIELD(o, input_value_count)) {
    r->bindings.input_values = o->input_values;
    r->bindings.input_value_count = o->input_value_count;
  }
  if (r->bindings.input_value_count && !r->bindings.input_values)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: input_values is NULL with a non-zero count");
  if ((r->bindings.dim_count && !r->bindings.dims) ||
      (r->bindings.input_shape_count && !r->bindings.input_shapes))
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: dims or input_shapes is NULL with a non-zero count");
  r->emit = HAS_FIELD(o, emit) ? o->emit : TINYML_EMIT_MODULE;
  r->name = HAS_FIELD(o, name) && o->name ? o->name : "model";
  if ((unsigned)r->emit > TINYML_EMIT_STATIC_LIB)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: emit %d is not a tinyml_emit_t", (int)r->emit);
  TINYML_RETURN_IF_ERROR(check_features(r->features, a));
  if (r->opt_level < 0 || r->opt_level > 3)
    return tinyml__status_make(a, TINYML_STATUS_INVALID_ARGUMENT,
                               "compile: opt_level %d is not in 0..3", r->opt_level);
  TINYML_RETURN_IF_ERROR(resolve_prepost(o, a, r));
  return resolve_backend(o, a, r);
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
                               "%s: %s must not be NULL", fn, !model ? "model" : out_name);
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
                               "tinyml_files_write: %s must not be NULL",
                               !f ? "files" : "dir");
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
