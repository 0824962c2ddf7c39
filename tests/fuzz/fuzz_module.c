/* libFuzzer target for loading modules: tinyml_module_load (reader, ELF
 * loader, schedule checks), every query, and a context created, bound and
 * invoked on the loaded module, all through a counting allocator so a leak
 * on any path aborts.
 *
 * Built with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, under which the
 * reader does not compare CRC-32s: otherwise almost every mutation of an
 * ELF image or of the constants would stop at the checksum, and the ELF
 * loader's structure checks (overlapping segments, relocation tables)
 * would never see a mutated image.  The price is that mutated code could
 * run, and a module's code is trusted by design (docs/SECURITY.md); the
 * loader already runs an image's query function.  So in this build the
 * loader asks tinyml__fuzz_may_run() before it runs an image, and this
 * target says yes only for an image byte-identical to one of a trusted
 * module: the seed corpus the target was built with (FUZZ_MODULE_TRUSTED,
 * a directory) or $FUZZ_MODULE_TRUSTED.  The constants are trusted in the
 * same way before an invoke (they hold kernel parameters).  Everything
 * else (signature, schedule, bindings, arena sizes, quantisation) may be
 * mutated and still run: that is what the schedule checks make safe.
 *
 * Built for another architecture's loader (TINYML_ELF_ARCH names
 * arch_riscv64.h), it loads that architecture's images
 * without ever running them. */
#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/runtime/runtime.h"
#include "fuzz_alloc.h"
#include "tinyml.h"

#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#error "build with -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION (tests/fuzz/meson.build)"
#endif

/* A context's arena and the bound buffers are allocated; a module that
 * claims more is loaded and queried but not run, as a host with this
 * much memory to spare would refuse it. */
#define MAX_RUN_BYTES (64u << 20)

/* ---- trusted images ----------------------------------------------------- */

typedef struct image {
  uint8_t *bytes;
  size_t size;
} image_t;

static image_t *trusted; /* executable images */
static size_t trusted_count;
static image_t *trusted_constants;
static size_t trusted_constants_count;

static void trust(image_t **list, size_t *count, const uint8_t *bytes, size_t size) {
  image_t *grown = realloc(*list, (*count + 1) * sizeof(**list));
  if (!grown) abort();
  *list = grown;
  grown[*count].bytes = malloc(size ? size : 1);
  if (!grown[*count].bytes) abort();
  if (size) memcpy(grown[*count].bytes, bytes, size);
  grown[(*count)++].size = size;
}

static bool is_trusted(const image_t *list, size_t count, const uint8_t *bytes, size_t size) {
  for (size_t i = 0; i < count; ++i)
    if (list[i].size == size && (!size || !memcmp(list[i].bytes, bytes, size))) return true;
  return false;
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *buf = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = aligned_alloc(16, ((size_t)n + 15) & ~(size_t)15))) {
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
      free(buf);
      buf = NULL;
    }
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static void trust_module(const uint8_t *bytes, size_t size) {
  tmod_module_t desc;
  tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  tinyml_status_t st = tmod_read(bytes, size, &a, &desc);
  if (st) {
    tinyml_status_free(st);
    return;
  }
  for (uint32_t i = 0; i < desc.executable_count; ++i)
    trust(&trusted, &trusted_count, desc.executables[i].image, desc.executables[i].image_size);
  trust(&trusted_constants, &trusted_constants_count, desc.constants, desc.constants_size);
  tmod_read_free(&desc, &a);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  const char *dir = getenv("FUZZ_MODULE_TRUSTED");
  if (!dir) dir = FUZZ_MODULE_TRUSTED;
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "fuzz_module: no trusted modules in %s; nothing will be invoked\n", dir);
    return 0;
  }
  for (struct dirent *e; (e = readdir(d));) {
    /* Only the compiled seeds (*.tmlm): the inputs runs found and merged
     * in beside them may carry mutated images, which the reader of this
     * build does not refuse. */
    size_t n = strlen(e->d_name);
    if (e->d_name[0] == '.' || n < 5 || strcmp(e->d_name + n - 5, ".tmlm") != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    if (bytes) trust_module(bytes, size);
    free(bytes);
  }
  closedir(d);
  fprintf(stderr, "fuzz_module: %zu trusted executable images from %s\n", trusted_count, dir);
  return 0;
}

/* Called by the ELF loader (in this build only) before it runs an image's
 * code: true for an image byte-identical to a trusted one, when this
 * build's loader is the host's. */
bool tinyml__fuzz_may_run(const uint8_t *image, size_t size);
bool tinyml__fuzz_may_run(const uint8_t *image, size_t size) {
  return TINYML_ELF_CAN_RUN && is_trusted(trusted, trusted_count, image, size);
}

/* ---- the target ----------------------------------------------------------- */

static void query(const tinyml_module_t *m) {
  tinyml_tensor_info_t info;
  size_t n = tinyml_module_input_count(m);
  for (size_t i = 0; i <= n; ++i) { /* one past the end too */
    tinyml_tensor_info_init(&info);
    tinyml_status_t st = tinyml_module_input_info(m, i, &info);
    if (st) tinyml_status_free(st);
  }
  n = tinyml_module_output_count(m);
  for (size_t i = 0; i <= n; ++i) {
    tinyml_tensor_info_init(&info);
    tinyml_status_t st = tinyml_module_output_info(m, i, &info);
    if (st) tinyml_status_free(st);
  }
  volatile size_t sink = strlen(tinyml_module_target(m)) + tinyml_module_arena_size(m) +
                         tinyml_module_arena_alignment(m) + tinyml_module_constant_size(m);
  for (size_t r = 0; r <= tinyml_module_arena_region_count(m); ++r)
    sink += tinyml_module_arena_region_size(m, r);
  for (size_t s = 0; s <= tinyml_module_dispatch_count(m); ++s)
    sink += strlen(tinyml_module_step_label(m, s));
  (void)sink;
}

/* Sum of what running `m` would allocate, saturating. */
static size_t run_bytes(const tinyml_module_t *m) {
  size_t total = 0;
  for (size_t r = 0; r < tinyml_module_arena_region_count(m); ++r) {
    size_t b = tinyml_module_arena_region_size(m, r);
    total = b > SIZE_MAX - total ? SIZE_MAX : total + b;
  }
  tinyml_tensor_info_t info;
  for (size_t io = 0; io < 2; ++io) {
    size_t n = io ? tinyml_module_output_count(m) : tinyml_module_input_count(m);
    for (size_t i = 0; i < n; ++i) {
      tinyml_tensor_info_init(&info);
      tinyml_status_t st = io ? tinyml_module_output_info(m, i, &info)
                              : tinyml_module_input_info(m, i, &info);
      if (st) {
        tinyml_status_free(st);
        return SIZE_MAX;
      }
      total = info.byte_size > SIZE_MAX - total ? SIZE_MAX : total + info.byte_size;
    }
  }
  return total;
}

/* Binds a buffer of each input and output, filled from `seed`, and runs. */
static void bind_and_invoke(tinyml_context_t *ctx, const tinyml_module_t *m, uint8_t seed,
                            const tinyml_allocator_t *a) {
  size_t nin = tinyml_module_input_count(m), nout = tinyml_module_output_count(m);
  void **bufs = tinyml__calloc(a, nin + nout + 1, sizeof(void *), 8);
  if (!bufs) abort();
  int bound = 1;
  for (size_t k = 0; k < nin + nout && bound; ++k) {
    tinyml_tensor_info_t info;
    tinyml_tensor_info_init(&info);
    int out = k >= nin;
    size_t i = out ? k - nin : k;
    tinyml_status_t st = out ? tinyml_module_output_info(m, i, &info)
                             : tinyml_module_input_info(m, i, &info);
    if (!st) {
      bufs[k] = tinyml__alloc(a, info.byte_size ? info.byte_size : 1, 64);
      if (!bufs[k]) abort();
      memset(bufs[k], seed + (int)k, info.byte_size);
      st = out ? tinyml_context_set_output(ctx, i, bufs[k], info.byte_size)
               : tinyml_context_set_input(ctx, i, bufs[k], info.byte_size);
    }
    if (st) {
      tinyml_status_free(st);
      bound = 0;
    }
  }
  tinyml_status_t st = tinyml_context_invoke(ctx); /* unbound: FAILED_PRECONDITION */
  if (st) tinyml_status_free(st);
  for (size_t k = 0; k < nin + nout; ++k) tinyml__free(a, bufs[k]);
  tinyml__free(a, bufs);
}

static void run(const tinyml_module_t *m, uint8_t seed, const tinyml_allocator_t *a) {
  if (run_bytes(m) > MAX_RUN_BYTES) return;
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.allocator = *a;
  o.thread_count = (seed & 1) ? 2 : 1; /* the pool's tile split too */
  tinyml_context_t *ctx = NULL;
  tinyml_status_t st = tinyml_context_create(m, &o, &ctx);
  if (st) {
    tinyml_status_free(st);
    return;
  }
  /* Loaded, so its code is trusted.  Its constants hold the microkernels'
   * parameters (shapes and offsets: lib/ukernels/uk_abi.h) as well as the
   * weights, so they are trusted as the code is (docs/SECURITY.md). */
  if (is_trusted(trusted_constants, trusted_constants_count, m->desc.constants,
                 m->desc.constants_size))
    bind_and_invoke(ctx, m, seed, a);
  tinyml_context_release(ctx);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_counter_t c = {0};
  tinyml_allocator_t a = fuzz_counting_allocator(&c);
  /* The bytes must be 16-byte aligned and outlive the module. */
  uint8_t *bytes = tinyml__alloc(&a, size ? size : 1, 16);
  if (!bytes) abort();
  if (size) memcpy(bytes, data, size);
  tinyml_module_options_t mo;
  tinyml_module_options_init(&mo);
  mo.allocator = a;
  tinyml_module_t *m = NULL;
  tinyml_status_t st = tinyml_module_load(bytes, size, &mo, &m);
  if (st) {
    tinyml_status_free(st);
  } else {
    query(m);
    run(m, size ? data[size - 1] : 0, &a);
    tinyml_module_release(m);
  }
  tinyml__free(&a, bytes);
  if (c.live != 0) abort(); /* a leak on this path */
  return 0;
}
