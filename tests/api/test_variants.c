/* Multi-versioned x86 modules (Module.variants): a default compile carries
 * the baseline (x86-64-v3) and better variants, --cpu pins one; the loader
 * runs the first variant the CPU has (checked with a stand-in CPU check
 * that lacks AVX-512 or VNNI); and every variant computes what the baseline
 * does: each is cut out into a module of its own (the writer, white-box)
 * and run on the same inputs, int8 models bit-identical and f32 within the
 * shared-model tolerance, 1e-4 + 1e-3 * |baseline| (their tiles differ).
 * argv[1] = e2e models, argv[2] = ../shared (its models skip with a printed
 * reason only where it is missing, and fail instead when CI=true). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/common/alloc.h"
#include "../../lib/common/status.h"
#include "../../lib/runtime/runtime.h"
#include "api_test_util.h"

/* The loader's own check (lib/runtime/elf/arch_x86_64.h). */
tinyml_status_t tinyml__x86_64_check_cpu(const tmod_module_t *d, const tinyml_allocator_t *a);

static char g_shared[4096];

static tinyml_blob_t *compile_pinned(const char *path, const char *cpu) {
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.cpu = cpu;
  return api_compile_file(path, cpu ? &o : NULL);
}

static tmod_module_t read_desc(const tinyml_blob_t *blob) {
  tmod_module_t d;
  api_assert_ok(tmod_read(tinyml_blob_data(blob), tinyml_blob_size(blob), NULL, &d), "read");
  return d;
}

/* A module of d's schedule with variant v's executables (-1: the
 * baseline's) and no other variant. */
static uint8_t *cut_out(const tmod_module_t *d, int v, size_t *size) {
  tmod_module_t one = *d;
  if (v >= 0) {
    one.cpu = d->variants[v].cpu;
    one.features = d->variants[v].features;
    one.executables = d->variants[v].executables;
  }
  one.variant_count = 0;
  one.variants = NULL;
  uint8_t *bytes = NULL;
  api_assert_ok(tmod_write(&one, NULL, &bytes, size), "write");
  return bytes;
}

static void free_bytes(uint8_t *bytes) {
  const tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  tinyml__free(&a, bytes);
}

/* Runs a single-variant module; 0 (and says why) when this host's CPU
 * cannot run it, as the loader refuses it (UNSUPPORTED). */
static int run_bytes(const uint8_t *bytes, size_t size, api_io_t *io) {
  tinyml_module_t *m = NULL;
  tinyml_status_t st = tinyml_module_load(bytes, size, NULL, &m);
  if (st && tinyml_status_code(st) == TINYML_STATUS_UNSUPPORTED) {
    printf("skipped, this CPU cannot run it: %s\n", tinyml_status_message(st));
    tinyml_status_free(st);
    return 0;
  }
  api_assert_ok(st, "load");
  assert_int_equal(0, tinyml_module_variant_count(m));
  api_assert_ok(api_run(m, NULL, io, 1), "run");
  tinyml_module_release(m);
  return 1;
}

/* Output o of `got` against `want`: bytes, or f32 within tolerance. */
static void compare(const api_io_t *want, const api_io_t *got, int f32, const char *what) {
  for (size_t o = 0; o < want->output_count; ++o) {
    if (!f32) {
      if (memcmp(want->outputs[o], got->outputs[o], want->output_sizes[o]))
        fail_msg("%s: output %zu differs from the baseline's", what, o);
      continue;
    }
    const float *w = want->outputs[o], *g = got->outputs[o];
    for (size_t i = 0; i < want->output_sizes[o] / 4; ++i)
      if (!(fabsf(g[i] - w[i]) <= 1e-4f + 1e-3f * fabsf(w[i])))
        fail_msg("%s: output %zu [%zu] is %g, the baseline's %g", what, o, i, (double)g[i],
                 (double)w[i]);
  }
}

static tinyml_status_t no_vnni(const tmod_module_t *d, const tinyml_allocator_t *a);

/* Every variant of the default compile of `path` against its baseline. */
static void check_model(const char *path, int f32, unsigned want_variants) {
  tinyml_blob_t *blob = compile_pinned(path, NULL);
  tmod_module_t d = read_desc(blob);
  printf("%s: %u variants besides the baseline\n", path, d.variant_count);
  assert_int_equal(want_variants, d.variant_count);
  assert_string_equal("x86-64-v3", d.cpu);
  size_t size;
  uint8_t *bytes = cut_out(&d, -1, &size);
  tinyml_module_t *probe = NULL;
  api_assert_ok(tinyml_module_load(bytes, size, NULL, &probe), "load");
  api_io_t want, got;
  assert_true(api_io_alloc(probe, 64u << 20, 7, &want));
  assert_true(api_io_alloc(probe, 64u << 20, 7, &got));
  tinyml_module_release(probe);
  assert_true(run_bytes(bytes, size, &want)); /* the x86-64-v3 baseline */
  free_bytes(bytes);
  for (uint32_t v = 0; v < d.variant_count; ++v) {
    bytes = cut_out(&d, (int)v, &size);
    api_io_poison_outputs(&got, 0x5a);
    int ran = run_bytes(bytes, size, &got);
    char what[256];
    snprintf(what, sizeof what, "%s variant %s %s", path, d.variants[v].cpu,
             d.variants[v].features);
    /* Other code than the baseline's; AVX-512 in all, VNNI in an int8
     * model's first only: its second is for AVX-512 CPUs without VNNI. */
    const tmod_executable_t *x = &d.variants[v].executables[0];
    assert_false(x->image_size == d.executables[0].image_size &&
                 !memcmp(x->image, d.executables[0].image, (size_t)x->image_size));
    assert_int_equal(!f32 && v == 0, strstr(d.variants[v].features, "avx512vnni") != NULL);
    assert_non_null(strstr(d.variants[v].features, "avx512f"));
    if (ran) compare(&want, &got, f32, what);
    free_bytes(bytes);
  }
  /* An AVX-512 CPU without VNNI gets the AVX-512 build, not the baseline. */
  int i = tinyml__module_pick_variant(&d, no_vnni, NULL);
  assert_true(i >= 0);
  assert_null(strstr(d.variants[i].features, "avx512vnni"));
  api_io_free(&want);
  api_io_free(&got);
  tmod_read_free(&d, NULL);
  tinyml_blob_release(blob);
}

static void shared_model(const char *rel, int f32, unsigned want_variants) {
  if (!api_shared_present(g_shared, rel)) return;
  char path[4300];
  snprintf(path, sizeof path, "%s/%s", g_shared, rel);
  check_model(path, f32, want_variants);
}

static void model_path(char *out, size_t cap, const char *name) {
  snprintf(out, cap, "%s/%s.mlir", api_model_dir(), name);
}

/* f32: one AVX-512 variant (VNNI would be the same code); int8 convs: the
 * VNNI one and the plain AVX-512 one, whose kernels never read the blobs'
 * dot4 block (UK_VNNI, backends/x86/conv_s8.h). */
static void test_variants_compute_the_same(void **state) {
  (void)state;
  char path[4300];
  model_path(path, sizeof path, "conv2d");
  check_model(path, 1, 1);
  model_path(path, sizeof path, "matmul512");
  check_model(path, 1, 1);
  shared_model("models/mlperf-tiny/resnet8_float.tflite", 1, 1);
  shared_model("models/mlperf-tiny/kws_ref_model.tflite", 0, 2);
  shared_model("models/mlperf-tiny/vww_96_int8.tflite", 0, 2);
  shared_model("models/mlperf-tiny/resnet8_int8.tflite", 0, 2);
}

/* Stand-in CPU checks: a CPU without VNNI, without AVX-512, with both. */
static tinyml_status_t lacks(const tmod_module_t *d, const char *feature) {
  if (d->features && strstr(d->features, feature))
    return tinyml__status_make(NULL, TINYML_STATUS_UNSUPPORTED, "lacks %s", feature);
  return TINYML_OK;
}
static tinyml_status_t no_vnni(const tmod_module_t *d, const tinyml_allocator_t *a) {
  (void)a;
  return lacks(d, "avx512vnni");
}
static tinyml_status_t no_avx512(const tmod_module_t *d, const tinyml_allocator_t *a) {
  (void)a;
  return lacks(d, "avx512f");
}
static tinyml_status_t any_cpu(const tmod_module_t *d, const tinyml_allocator_t *a) {
  (void)d;
  (void)a;
  return TINYML_OK;
}

static void test_pick_variant(void **state) {
  (void)state;
  tmod_variant_t v[2] = {{"x86-64-v4", "+avx512f,+avx512vnni", NULL},
                         {"x86-64-v4", "+avx512f", NULL}};
  tmod_module_t d = {.cpu = "x86-64-v3", .features = "", .variant_count = 2, .variants = v};
  assert_int_equal(0, tinyml__module_pick_variant(&d, any_cpu, NULL));
  assert_int_equal(1, tinyml__module_pick_variant(&d, no_vnni, NULL));
  assert_int_equal(-1, tinyml__module_pick_variant(&d, no_avx512, NULL));
  assert_int_equal(-1, tinyml__module_pick_variant(&d, NULL, NULL));
  d.variant_count = 0;
  assert_int_equal(-1, tinyml__module_pick_variant(&d, any_cpu, NULL));
}

/* The loader on this CPU: the first variant it runs, which
 * tinyml_module_cpu names; --cpu x86-64-v3 has no variants and is smaller. */
static void test_load_and_pin(void **state) {
  (void)state;
  char path[4300];
  model_path(path, sizeof path, "conv2d");
  tinyml_blob_t *multi = compile_pinned(path, NULL);
  tinyml_blob_t *pinned = compile_pinned(path, "x86-64-v3");
  tmod_module_t d = read_desc(multi);
  tinyml_module_t *m = api_load_blob(multi);
  int i = tinyml__module_pick_variant(&d, tinyml__x86_64_check_cpu, NULL);
  assert_string_equal(i < 0 ? d.cpu : d.variants[i].cpu, tinyml_module_cpu(m));
  assert_string_equal(i < 0 ? d.features : d.variants[i].features, tinyml_module_features(m));
  assert_int_equal(d.variant_count, tinyml_module_variant_count(m));
  printf("this CPU runs %s of %u variants\n", tinyml_module_cpu(m), d.variant_count + 1);
  tinyml_module_release(m);
  m = api_load_blob(pinned);
  assert_string_equal("x86-64-v3", tinyml_module_cpu(m));
  assert_string_equal("", tinyml_module_features(m));
  assert_int_equal(0, tinyml_module_variant_count(m));
  tinyml_module_release(m);
  assert_true(tinyml_blob_size(pinned) < tinyml_blob_size(multi));
  tmod_read_free(&d, NULL);
  tinyml_blob_release(multi);
  tinyml_blob_release(pinned);
}

/* A variant's executable that the ELF loader refuses (its magic broken,
 * the checksum made anew by the writer) is named as the variant's, not
 * taken for the baseline's executable 0. */
static void test_bad_variant_image_named(void **state) {
  (void)state;
  char path[4300];
  model_path(path, sizeof path, "conv2d");
  tinyml_blob_t *blob = compile_pinned(path, NULL);
  tmod_module_t d = read_desc(blob);
  assert_int_equal(1, d.executable_count); /* `bad` stands for all of them */
  if (tinyml__module_pick_variant(&d, tinyml__x86_64_check_cpu, NULL) != 0) {
    printf("skipped, this CPU does not run variant 0 (%s %s)\n", d.variants[0].cpu,
           d.variants[0].features);
  } else {
    const tmod_executable_t *x = &d.variants[0].executables[0];
    uint8_t *image = malloc((size_t)x->image_size);
    assert_non_null(image);
    memcpy(image, x->image, (size_t)x->image_size);
    image[1] ^= 0x20; /* "\x7fELF" -> "\x7feLF" */
    tmod_executable_t bad = *x;
    bad.image = image;
    tmod_variant_t v = d.variants[0];
    v.executables = &bad;
    tmod_module_t one = d;
    one.variant_count = 1;
    one.variants = &v;
    uint8_t *bytes = NULL;
    size_t size = 0;
    api_assert_ok(tmod_write(&one, NULL, &bytes, &size), "write");
    tinyml_module_t *m = NULL;
    tinyml_status_t st = tinyml_module_load(bytes, size, NULL, &m);
    assert_int_equal(TINYML_STATUS_INVALID_MODULE, tinyml_status_code(st));
    char want[128];
    snprintf(want, sizeof want, "module: variant 0 (%s) executable 0", d.variants[0].cpu);
    if (!strstr(tinyml_status_message(st), want))
      fail_msg("'%s' lacks '%s'", tinyml_status_message(st), want);
    tinyml_status_free(st);
    free_bytes(bytes);
    free(image);
  }
  tmod_read_free(&d, NULL);
  tinyml_blob_release(blob);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  if (argc > 2) snprintf(g_shared, sizeof g_shared, "%s", argv[2]);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pick_variant),
      cmocka_unit_test(test_load_and_pin),
      cmocka_unit_test(test_bad_variant_image_named),
      cmocka_unit_test(test_variants_compute_the_same),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
