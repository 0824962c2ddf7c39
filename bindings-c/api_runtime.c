/* Public API: version, blobs, modules, contexts.  Validates every argument,
 * then maps onto lib/runtime. */
#include <string.h>
#if !TINYML_FREESTANDING /* bare metal: no files */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#endif

#include "../lib/common/alloc.h"
#include "../lib/common/status.h"
#include "../lib/runtime/runtime.h"
#include "api_internal.h"

uint32_t tinyml_version_number(void) { return TINYML_VERSION_NUMBER; }
const char *tinyml_version_string(void) { return TINYML_VERSION_STRING; }

/* Messages begin with the function's name, either in the text or as a
 * leading "%s" (the _NAMED forms); a freestanding build keeps that name and
 * the text but not the values (status.h), and passes no values. */
#define BAD_ARG(a, ...) TINYML_STATUS_MAKE(a, TINYML_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define BAD_ARG_NAMED(a, ...)                                                  \
  TINYML_STATUS_MAKE_NAMED(a, TINYML_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- blobs ------------------------------------------------------------ */

const void *tinyml_blob_data(const tinyml_blob_t *b) { return b ? b->data : NULL; }
size_t tinyml_blob_size(const tinyml_blob_t *b) { return b ? b->size : 0; }

void tinyml_blob_release(tinyml_blob_t *b) {
  if (!b) return;
  tinyml_allocator_t a = b->allocator;
  tinyml__free(&a, b->data);
  tinyml__free(&a, b);
}

tinyml_status_t tinyml_blob_write_file(const tinyml_blob_t *b, const char *path) {
  if (!b || !path)
    return BAD_ARG(NULL, "tinyml_blob_write_file: %s must not be NULL", !b ? "blob" : "path");
#if TINYML_FREESTANDING
  return tinyml__status_make(&b->allocator, TINYML_STATUS_UNSUPPORTED,
                             "files are not supported by a freestanding runtime");
#else
  FILE *f = fopen(path, "wb");
  if (!f)
    return tinyml__status_make(&b->allocator, TINYML_STATUS_IO_ERROR,
                               "cannot open '%s' for writing: %s", path, strerror(errno));
  size_t n = fwrite(b->data, 1, b->size, f);
  int err = n != b->size ? errno : 0;
  int rc = fclose(f);
  if (rc != 0 && !err) err = errno;
  if (n != b->size || rc != 0)
    return tinyml__status_make(&b->allocator, TINYML_STATUS_IO_ERROR,
                               "cannot write '%s': %s", path, strerror(err));
  return TINYML_OK;
#endif
}

/* ---- options ---------------------------------------------------------- */

void tinyml_tensor_info_init(tinyml_tensor_info_t *info) {
  if (!info) return;
  memset(info, 0, sizeof(*info));
  info->struct_size = sizeof(*info);
}

void tinyml_module_options_init(tinyml_module_options_t *o) {
  if (!o) return;
  memset(o, 0, sizeof(*o));
  o->struct_size = sizeof(*o);
}

void tinyml_context_options_init(tinyml_context_options_t *o) {
  if (!o) return;
  memset(o, 0, sizeof(*o));
  o->struct_size = sizeof(*o);
  o->thread_count = 1;
}

/* Reads the allocator from an options struct that may be older (smaller)
 * than ours: fields past its struct_size take their defaults. */
#define HAS_FIELD(opts, field) \
  ((opts) && (opts)->struct_size >= offsetof(__typeof__(*(opts)), field) + sizeof((opts)->field))

static tinyml_allocator_t module_allocator(const tinyml_module_options_t *o) {
  return tinyml__allocator_or_default(HAS_FIELD(o, allocator) ? &o->allocator : NULL);
}

/* The host's limits from an options struct that may predate them, in *l;
 * none (NULL) on a freestanding runtime (tinyml.h says why). */
static const tinyml__module_limits_t *module_limits(const tinyml_module_options_t *o,
                                                    tinyml__module_limits_t *l) {
#if TINYML_FREESTANDING
  (void)o, (void)l;
  return NULL;
#else
  l->max_arena_size = HAS_FIELD(o, max_arena_size) ? o->max_arena_size : 0;
  l->max_constant_size = HAS_FIELD(o, max_constant_size) ? o->max_constant_size : 0;
  return l;
#endif
}

static tinyml_status_t check_struct_size(size_t got, size_t min, const char *what) {
  if (got < min)
    return BAD_ARG_NAMED(NULL, "%s: struct_size %zu is too small; call the _init() function",
                   what, got);
  return TINYML_OK;
}

/* ---- modules ---------------------------------------------------------- */

tinyml_status_t tinyml_module_load(const void *data, size_t size,
                                   const tinyml_module_options_t *options,
                                   tinyml_module_t **out_module) {
  if (options)
    TINYML_RETURN_IF_ERROR(check_struct_size(options->struct_size, sizeof(size_t),
                                             "tinyml_module_load"));
  tinyml_allocator_t a = module_allocator(options);
  if (!data || !out_module)
    return BAD_ARG(&a, "tinyml_module_load: %s must not be NULL",
                   !data ? "data" : "out_module");
  if ((uintptr_t)data % 16 != 0)
    return BAD_ARG(&a, "tinyml_module_load: module bytes must be 16-byte aligned");
  tinyml__module_limits_t limits;
  return tinyml__module_create(data, size, NULL, module_limits(options, &limits), &a,
                               out_module);
}

static tinyml_status_t read_file(const char *path, const tinyml_allocator_t *a,
                                 uint8_t **out, size_t *out_size) {
#if TINYML_FREESTANDING
  (void)out;
  (void)out_size;
  return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                             "cannot read '%s': a freestanding runtime has no files",
                             path);
#else
  FILE *f = fopen(path, "rb");
  if (!f)
    return tinyml__status_make(a, TINYML_STATUS_IO_ERROR, "cannot open '%s': %s", path,
                               strerror(errno));
  struct stat sb;
  if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
    fclose(f);
    return tinyml__status_make(a, TINYML_STATUS_IO_ERROR, "'%s' is not a regular file",
                               path);
  }
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return tinyml__status_make(a, TINYML_STATUS_IO_ERROR, "cannot size '%s'", path);
  }
  uint8_t *buf = tinyml__alloc(a, (size_t)n, 64);
  if (!buf) {
    fclose(f);
    return tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY,
                               "out of memory reading '%s' (%ld bytes)", path, n);
  }
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  if (got != (size_t)n) {
    tinyml__free(a, buf);
    return tinyml__status_make(a, TINYML_STATUS_IO_ERROR, "cannot read '%s'", path);
  }
  *out = buf;
  *out_size = (size_t)n;
  return TINYML_OK;
#endif
}

tinyml_status_t tinyml_module_load_file(const char *path,
                                        const tinyml_module_options_t *options,
                                        tinyml_module_t **out_module) {
  if (options)
    TINYML_RETURN_IF_ERROR(check_struct_size(options->struct_size, sizeof(size_t),
                                             "tinyml_module_load_file"));
  tinyml_allocator_t a = module_allocator(options);
  if (!path || !out_module)
    return BAD_ARG(&a, "tinyml_module_load_file: %s must not be NULL",
                   !path ? "path" : "out_module");
  uint8_t *bytes = NULL;
  size_t size = 0;
  TINYML_RETURN_IF_ERROR(read_file(path, &a, &bytes, &size));
  tinyml__module_limits_t limits;
  tinyml_status_t st = tinyml__module_create(bytes, size, bytes, module_limits(options, &limits),
                                             &a, out_module);
  return st ? tinyml__status_annotate(st, "%s", path) : TINYML_OK;
}

void tinyml_module_release(tinyml_module_t *m) { tinyml__module_destroy(m); }

size_t tinyml_module_input_count(const tinyml_module_t *m) { return m ? m->desc.input_count : 0; }
size_t tinyml_module_output_count(const tinyml_module_t *m) { return m ? m->desc.output_count : 0; }
const char *tinyml_module_target(const tinyml_module_t *m) { return m ? m->desc.target : ""; }
const char *tinyml_module_cpu(const tinyml_module_t *m) { return m && m->desc.cpu ? m->desc.cpu : ""; }
const char *tinyml_module_features(const tinyml_module_t *m) {
  return m && m->desc.features ? m->desc.features : "";
}
#if TINYML_FREESTANDING /* it reads no variants (module.h) */
size_t tinyml_module_variant_count(const tinyml_module_t *m) { (void)m; return 0; }
#else
size_t tinyml_module_variant_count(const tinyml_module_t *m) { return m ? m->desc.variant_count : 0; }
#endif
size_t tinyml_module_arena_size(const tinyml_module_t *m) { return m ? (size_t)m->desc.arena_size : 0; }
size_t tinyml_module_state_size(const tinyml_module_t *m) { return m ? (size_t)m->desc.state_size : 0; }
size_t tinyml_module_arena_alignment(const tinyml_module_t *m) { return m ? m->desc.arena_alignment : 0; }
size_t tinyml_module_arena_region_count(const tinyml_module_t *m) {
  return m ? m->desc.region_count : 0;
}
size_t tinyml_module_arena_region_size(const tinyml_module_t *m, size_t region) {
  return m && region < m->desc.region_count ? (size_t)m->desc.region_sizes[region] : 0;
}
size_t tinyml_module_constant_size(const tinyml_module_t *m) { return m ? (size_t)m->desc.constants_size : 0; }
size_t tinyml_module_dispatch_count(const tinyml_module_t *m) { return m ? m->desc.step_count : 0; }

const char *tinyml_module_step_label(const tinyml_module_t *m, size_t index) {
  return m && index < m->desc.step_count ? m->desc.steps[index].label : "";
}

#if !TINYML_FREESTANDING
uint32_t tinyml_module_step_workgroups(const tinyml_module_t *m, size_t index) {
  if (!m || index >= m->desc.step_count || m->desc.steps[index].kind == TMOD_STEP_COPY) return 1;
  const tmod_step_t *s = &m->desc.steps[index];
  const tinyml_exe_entry_t *e = &m->libraries[s->executable]->entries[s->entry];
  uint32_t most = 1;
  for (uint32_t p = 0; p < e->phase_count; ++p)
    if (e->workgroups[p] > most) most = e->workgroups[p];
  return most;
}

uint32_t tinyml_module_step_phase_workgroups(const tinyml_module_t *m, size_t index,
                                             size_t phase) {
  if (!m || index >= m->desc.step_count) return 0;
  const tmod_step_t *s = &m->desc.steps[index];
  if (s->kind == TMOD_STEP_COPY) return phase == 0;
  const tinyml_exe_entry_t *e = &m->libraries[s->executable]->entries[s->entry];
  return phase < e->phase_count ? e->workgroups[phase] : 0;
}
#else /* no threads: every step runs on the invoking thread */
uint32_t tinyml_module_step_workgroups(const tinyml_module_t *m, size_t index) {
  (void)m;
  (void)index;
  return 1;
}

uint32_t tinyml_module_step_phase_workgroups(const tinyml_module_t *m, size_t index,
                                             size_t phase) {
  return m && index < m->desc.step_count && phase == 0;
}
#endif

static tinyml_status_t fill_info(const tinyml_module_t *m, const tmod_tensor_t *ts,
                                 size_t count, size_t index, tinyml_tensor_info_t *info,
                                 const char *what) {
  if (!m || !info)
    return BAD_ARG_NAMED(NULL, "%s: %s must not be NULL", what, !m ? "module" : "out_info");
  if (info->struct_size < offsetof(tinyml_tensor_info_t, zero_points) + sizeof(void *))
    return BAD_ARG_NAMED(&m->allocator, "%s: out_info.struct_size is %zu; call "
                   "tinyml_tensor_info_init() first", what, info->struct_size);
  if (index >= count)
    return BAD_ARG_NAMED(&m->allocator, "%s: index %zu out of range (module has %zu)", what,
                   index, count);
  const tmod_tensor_t *t = &ts[index];
  /* Every field is written (none past an older caller's struct_size):
   * the module's dims past the rank are 0, as the reader leaves them. */
  info->name = t->name;
  info->dtype = (tinyml_dtype_t)t->dtype;
  info->rank = t->rank;
  memcpy(info->dims, t->dims, sizeof(info->dims));
  info->byte_size = (size_t)t->byte_size;
  info->quant_count = t->quant_count;
  info->quant_axis = t->quant_axis;
  info->scales = t->scales; /* NULL when not quantised, as the reader leaves them */
  info->zero_points = t->zero_points;
  if (HAS_FIELD(info, fixed_value)) info->fixed_value = t->fixed_value;
  return TINYML_OK;
}

tinyml_status_t tinyml_module_input_info(const tinyml_module_t *m, size_t index,
                                         tinyml_tensor_info_t *out_info) {
  return fill_info(m, m ? m->desc.inputs : NULL, tinyml_module_input_count(m), index,
                   out_info, "tinyml_module_input_info");
}

tinyml_status_t tinyml_module_output_info(const tinyml_module_t *m, size_t index,
                                          tinyml_tensor_info_t *out_info) {
  return fill_info(m, m ? m->desc.outputs : NULL, tinyml_module_output_count(m), index,
                   out_info, "tinyml_module_output_info");
}

/* ---- contexts --------------------------------------------------------- */

_Static_assert(TMOD_MAX_ARENA_REGIONS == TINYML_MAX_ARENA_REGIONS,
               "the module format and the API agree on the most arena regions");

/* The caller's memory for each arena region (options.arena, then
 * arena_regions[]), each checked against the module's size and alignment. */
static tinyml_status_t caller_regions(const tinyml_module_t *module,
                                      const tinyml_context_options_t *o,
                                      const tinyml_allocator_t *a, void **regions) {
  int has_regions = HAS_FIELD(o, arena_region_sizes);
  for (uint32_t r = 0; r < module->desc.region_count; ++r) {
    void *p = has_regions ? o->arena_regions[r] : NULL;
    size_t size = p ? o->arena_region_sizes[r] : 0;
    if (!p && r == 0 && HAS_FIELD(o, arena_size) && o->arena) {
      p = o->arena;
      size = o->arena_size;
    }
    if (!p) continue;
    if (size < module->desc.region_sizes[r] && r == 0)
      return BAD_ARG(a, "tinyml_context_create: arena is %zu bytes, the module needs %llu",
                     size, (unsigned long long)module->desc.region_sizes[0]);
    if (size < module->desc.region_sizes[r])
      return BAD_ARG(a, "tinyml_context_create: arena region %u is %zu bytes, the module "
                     "needs %llu", (unsigned)r, size,
                     (unsigned long long)module->desc.region_sizes[r]);
    /* The reader accepts only a power of two: a mask, not a division. */
    if ((uintptr_t)p & (module->desc.arena_alignment - 1))
      return BAD_ARG(a, "tinyml_context_create: arena must be aligned to %u bytes",
                     module->desc.arena_alignment);
    regions[r] = p;
  }
  return TINYML_OK;
}

tinyml_status_t tinyml_context_create(const tinyml_module_t *module,
                                      const tinyml_context_options_t *o,
                                      tinyml_context_t **out_context) {
  if (o)
    TINYML_RETURN_IF_ERROR(check_struct_size(o->struct_size, sizeof(size_t),
                                             "tinyml_context_create"));
  tinyml_allocator_t a =
      tinyml__allocator_or_default(HAS_FIELD(o, allocator) ? &o->allocator : NULL);
  if (!module || !out_context)
    return BAD_ARG(&a, "tinyml_context_create: %s must not be NULL",
                   !module ? "module" : "out_context");
  void *regions[TMOD_MAX_ARENA_REGIONS] = {NULL};
  TINYML_RETURN_IF_ERROR(caller_regions(module, o, &a, regions));
#if TINYML_FREESTANDING /* no threads: every invoke runs on the caller's */
  uint32_t threads = 1;
#else
  uint32_t threads = HAS_FIELD(o, thread_count) ? o->thread_count : 1;
  if (threads - 1u >= TINYML_MAX_THREADS)
    return BAD_ARG(&a, "tinyml_context_create: thread_count is %u (1 to %u)", threads,
                   TINYML_MAX_THREADS);
#endif
  return tinyml__context_create(module, &a, regions, threads, out_context);
}

void tinyml_context_release(tinyml_context_t *c) { tinyml__context_destroy(c); }

static tinyml_status_t check_io(tinyml_context_t *c, size_t index, const void *data,
                                size_t size, int is_input) {
  const char *what = is_input ? "tinyml_context_set_input" : "tinyml_context_set_output";
  if (!c || !data)
    return BAD_ARG_NAMED(NULL, "%s: %s must not be NULL", what, !c ? "context" : "data");
  const tmod_module_t *d = &c->module->desc;
  /* One choice of side up front, so the checks below exist once. */
  const tmod_tensor_t *ts = is_input ? d->inputs : d->outputs;
  size_t count = is_input ? d->input_count : d->output_count;
  if (index >= count)
    return BAD_ARG_NAMED(&c->allocator, "%s: index %zu out of range (module has %zu)", what,
                   index, count);
  const tmod_tensor_t *t = &ts[index];
  if (size != t->byte_size)
    return TINYML_STATUS_MAKE_NAMED(&c->allocator, TINYML_STATUS_SIZE_MISMATCH,
                                    "%s: '%s' needs %llu bytes, the buffer has %zu (%s", what,
                                    t->name, (unsigned long long)t->byte_size, size,
                                    size < t->byte_size ? "too small)" : "too large)");
  size_t esize = tinyml_dtype_size((tinyml_dtype_t)t->dtype);
  if (esize && ((uintptr_t)data & (esize - 1))) /* sizes are powers of two */
    return BAD_ARG_NAMED(&c->allocator, "%s: '%s' buffer must be aligned to %zu bytes", what,
                   t->name, esize);
  return TINYML_OK;
}

tinyml_status_t tinyml_context_set_input(tinyml_context_t *c, size_t index,
                                         const void *data, size_t size) {
  TINYML_RETURN_IF_ERROR(check_io(c, index, data, size, 1));
  c->inputs[index] = data;
  return TINYML_OK;
}

tinyml_status_t tinyml_context_set_output(tinyml_context_t *c, size_t index, void *data,
                                          size_t size) {
  TINYML_RETURN_IF_ERROR(check_io(c, index, data, size, 0));
  c->outputs[index] = data;
  return TINYML_OK;
}

tinyml_status_t tinyml_context_set_step_hook(tinyml_context_t *c, tinyml_step_hook_t hook,
                                             void *user_data) {
  if (!c) return BAD_ARG(NULL, "tinyml_context_set_step_hook: context must not be NULL");
  c->hook = hook;
  c->hook_user = user_data;
  return TINYML_OK;
}

#if TINYML_STATUS_VALUES
/* Element `k` of `bytes` (dtype `dtype`) as text, for a message. */
static void element_text(uint32_t dtype, const uint8_t *bytes, size_t k, char *out, size_t n) {
  size_t es = tinyml_dtype_size((tinyml_dtype_t)dtype);
  uint8_t raw[8] = {0};
  memcpy(raw, bytes + k * es, es);
  int64_t i = 0;
  float f;
  double d;
  switch (dtype) {
    case TINYML_DTYPE_FLOAT32: memcpy(&f, raw, 4); snprintf(out, n, "%.9g", (double)f); return;
    case TINYML_DTYPE_FLOAT64: memcpy(&d, raw, 8); snprintf(out, n, "%.17g", d); return;
    case TINYML_DTYPE_INT8: i = (int8_t)raw[0]; break;
    case TINYML_DTYPE_INT16: { int16_t v; memcpy(&v, raw, 2); i = v; break; }
    case TINYML_DTYPE_INT32: { int32_t v; memcpy(&v, raw, 4); i = v; break; }
    case TINYML_DTYPE_INT64: memcpy(&i, raw, 8); break;
    case TINYML_DTYPE_UINT8: case TINYML_DTYPE_BOOL: i = raw[0]; break;
    case TINYML_DTYPE_UINT16: case TINYML_DTYPE_UINT32: case TINYML_DTYPE_UINT64: {
      uint64_t u; /* little-endian: the zero-filled high bytes widen it */
      memcpy(&u, raw, 8);
      snprintf(out, n, "%llu", (unsigned long long)u);
      return;
    }
    default: snprintf(out, n, "0x%02x%02x", raw[1], raw[0]); return; /* 16-bit floats */
  }
  snprintf(out, n, "%lld", (long long)i);
}
#endif

/* Input i differs from its fixed value: the error, naming the first
 * differing element where messages keep values. */
static tinyml_status_t fixed_mismatch(tinyml_context_t *c, uint32_t i) {
  const tmod_tensor_t *t = &c->module->desc.inputs[i];
  char got[32] = "", want[32] = "";
  size_t k = 0;
#if TINYML_STATUS_VALUES
  const uint8_t *in = c->inputs[i];
  while (in[k] == t->fixed_value[k]) ++k;
  k /= tinyml_dtype_size((tinyml_dtype_t)t->dtype);
  element_text(t->dtype, in, k, got, sizeof got);
  element_text(t->dtype, t->fixed_value, k, want, sizeof want);
#endif
  return BAD_ARG(&c->allocator, "tinyml_context_invoke: input %u '%s' must equal the value "
                 "fixed at compile time (element %zu is %s, the fixed value has %s)", i,
                 t->name, k, got, want);
}

tinyml_status_t tinyml_context_invoke(tinyml_context_t *c) {
  if (!c) return BAD_ARG(NULL, "tinyml_context_invoke: context must not be NULL");
  const tmod_module_t *d = &c->module->desc;
  for (uint32_t i = 0; i < d->input_count; ++i) {
    if (!c->inputs[i])
      return TINYML_STATUS_MAKE(&c->allocator, TINYML_STATUS_FAILED_PRECONDITION,
                                "tinyml_context_invoke: input %u '%s' is not set", i,
                                 d->inputs[i].name);
    /* A pinned input is checked, never trusted: the compiled code
     * computed with its fixed value, not with the caller's. */
    const tmod_tensor_t *t = &d->inputs[i];
    if (t->fixed_value && memcmp(c->inputs[i], t->fixed_value, (size_t)t->byte_size))
      return fixed_mismatch(c, i);
  }
  for (uint32_t i = 0; i < d->output_count; ++i)
    if (!c->outputs[i])
      return TINYML_STATUS_MAKE(&c->allocator, TINYML_STATUS_FAILED_PRECONDITION,
                                "tinyml_context_invoke: output %u '%s' is not set", i,
                                 d->outputs[i].name);
  tinyml__context_invoke(c);
  return TINYML_OK;
}

tinyml_status_t tinyml_context_reset_state(tinyml_context_t *c) {
  if (!c) return BAD_ARG(NULL, "tinyml_context_reset_state: context must not be NULL");
  tinyml__context_reset(c);
  return TINYML_OK;
}
