/* Hostile input (issue 29): every public entry point of include/tinyml.h
 * against every class of bad input that applies to it, as one table.
 *
 * Each status row calls one function with one bad input and asserts
 *   - the status CODE,
 *   - that the MESSAGE names the problem (every `want` substring: the
 *     argument, the size, the path, the tensor...), and, where the call has
 *     several pointer arguments, does NOT name the ones that were fine
 *     (`not`), so "a and b must not be NULL" does not pass for either,
 *   - that every out_ parameter still holds its sentinel.
 * Value rows call the functions that return values rather than statuses
 * (counts, names, labels, _init and _release of NULL) and assert the
 * documented value.  Every row runs; failures are listed together and the
 * test ends with one summary line giving the number of rows.
 *
 * test_api_contract.c checks many of the same calls in depth (older option
 * structs, rebinding, round trips); this table is complete on its own so a
 * new entry point or class shows up as a missing row here.
 *
 * Usage: test_bad_input MODEL_DIR   (tests/e2e/models)
 * TINYML_BAD_INPUT_VERBOSE=1 prints every status row's message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "api_test_util.h"

/* ==== fixtures ============================================================ */

static struct {
  /* add_mul_broadcast: three float inputs, one output, no arena. */
  char *text;
  size_t text_size;
  tinyml_blob_t *blob;
  tinyml_module_t *module;
  /* conv2d: an arena, for the caller-arena rows. */
  tinyml_blob_t *conv_blob;
  tinyml_module_t *conv;
  uint8_t *arena; /* aligned, arena_size + alignment bytes */
  size_t arena_need, arena_align;
  /* conv2d's text (constants and an arena, for the limit rows), its module
   * in a file, and a copy whose constants vector claims more bytes than
   * the module has. */
  char *conv_text;
  size_t conv_text_size;
  char conv_path[600];
  uint8_t *conv_big_constants;
  /* EMIT_MODULE through tinyml_compile_files: one file. */
  tinyml_files_t *files;
  /* A context with nothing bound, and one with only the inputs bound. */
  tinyml_context_t *ctx, *ctx_inputs;
  api_io_t io;
  uint8_t *in_buf, *out_buf; /* 64-aligned copies with 8 spare bytes */
  size_t in_size, out_size, in_elements, out_elements;
  /* Module bytes: at offsets 1 and 8 past 64, and non-module bytes. */
  uint8_t *mis1, *mis8, *text_bytes, *random_bytes;
  size_t random_size;
  /* Files and directories. */
  char dir[400], empty[512], truncated[512], not_module[512], file_as_dir[600];
} g;

/* Strings the messages must contain, filled in setup. */
static char g_in_name[128], g_out_name[128], g_in_bytes[64], g_out_bytes[64];
static char g_arena_need[64], g_arena_align[64], g_missing[] = "/nonexistent-tinyml-dir/m.tmlm";
static char g_missing_dir[] = "/nonexistent-tinyml-dir";
static char g_arena_max[64], g_constants[64];
/* "has N" for each wrong buffer size the rows pass. */
static char g_in_short[32], g_in_long[32], g_in_int8[32], g_in_f64[32];
static char g_out_short[32], g_out_long[32], g_out_int8[32];

/* Out parameters, reset to API_SENTINEL before every row. */
static tinyml_blob_t *o_blob;
static tinyml_files_t *o_files;
static tinyml_module_t *o_module;
static tinyml_context_t *o_ctx;
static tinyml_tensor_info_t o_info, o_info_before;

static void write_bytes(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, 1, size, f), size);
  assert_int_equal(fclose(f), 0);
}

/* Sets the length of a module's constants vector (root table field 8,
 * schema/module.fbs) to 2^30 bytes, far past the end of the module, so
 * a reader that trusted it would read (or copy) a gigabyte. */
static void claim_constants(uint8_t *m, size_t size) {
  uint32_t root, len, off16;
  int32_t vt_back;
  memcpy(&root, m, 4);
  memcpy(&vt_back, m + root, 4);
  size_t vt = (size_t)((int64_t)root - vt_back);
  uint16_t vsize, off;
  memcpy(&vsize, m + vt, 2);
  assert_true(4 + 2 * 8 < vsize);
  memcpy(&off, m + vt + 4 + 2 * 8, 2);
  assert_true(off != 0);
  off16 = root + off;
  memcpy(&len, m + off16, 4);
  size_t vec = off16 + len;
  assert_true(vec + 4 <= size);
  uint32_t claim = 1u << 30;
  memcpy(m + vec, &claim, 4);
}

static int setup_group(void **state) {
  (void)state;
  g.text = api_read_model("add_mul_broadcast", &g.text_size);
  g.blob = api_compile_model("add_mul_broadcast", NULL);
  g.module = api_load_blob(g.blob);
  g.conv_blob = api_compile_model("conv2d", NULL);
  g.conv = api_load_blob(g.conv_blob);
  g.arena_need = tinyml_module_arena_size(g.conv);
  g.arena_align = tinyml_module_arena_alignment(g.conv);
  assert_true(g.arena_need > 0 && g.arena_align >= 2);
  assert_int_equal(posix_memalign((void **)&g.arena, g.arena_align,
                                  g.arena_need + g.arena_align), 0);
  snprintf(g_arena_need, sizeof g_arena_need, "%zu", g.arena_need);
  snprintf(g_arena_max, sizeof g_arena_max, "max_arena_size (%zu)", g.arena_need - 1);
  snprintf(g_constants, sizeof g_constants, "%zu bytes", tinyml_module_constant_size(g.conv));
  assert_true(tinyml_module_constant_size(g.conv) > 1);
  g.conv_text = api_read_model("conv2d", &g.conv_text_size);
  g.conv_big_constants = api_aligned_copy(tinyml_blob_data(g.conv_blob),
                                          tinyml_blob_size(g.conv_blob), 64, 0);
  claim_constants(g.conv_big_constants, tinyml_blob_size(g.conv_blob));
  snprintf(g_arena_align, sizeof g_arena_align, "%zu", g.arena_align);

  tinyml_compile_options_t co;
  tinyml_compile_options_init(&co);
  api_assert_ok(tinyml_compile_files(g.text, g.text_size, &co, &g.files),
                "tinyml_compile_files");
  assert_true(tinyml_files_count(g.files) >= 1);

  assert_true(api_io_alloc(g.module, SIZE_MAX, 1, &g.io));
  g.in_size = g.io.input_sizes[0];
  g.out_size = g.io.output_sizes[0];
  g.in_buf = api_aligned_copy(g.io.inputs[0], g.in_size + 8, 64, 0);
  g.out_buf = api_aligned_copy(g.io.outputs[0], g.out_size + 8, 64, 0);
  tinyml_tensor_info_t info;
  tinyml_tensor_info_init(&info);
  api_assert_ok(tinyml_module_input_info(g.module, 0, &info), "input_info");
  assert_int_equal(info.dtype, TINYML_DTYPE_FLOAT32);
  snprintf(g_in_name, sizeof g_in_name, "'%s'", info.name);
  snprintf(g_in_bytes, sizeof g_in_bytes, "%zu bytes", info.byte_size);
  g.in_elements = info.byte_size / 4;
  api_assert_ok(tinyml_module_output_info(g.module, 0, &info), "output_info");
  snprintf(g_out_name, sizeof g_out_name, "'%s'", info.name);
  snprintf(g_out_bytes, sizeof g_out_bytes, "%zu bytes", info.byte_size);
  g.out_elements = info.byte_size / 4;

  api_assert_ok(tinyml_context_create(g.module, NULL, &g.ctx), "context");
  api_assert_ok(tinyml_context_create(g.module, NULL, &g.ctx_inputs), "context");
  for (size_t i = 0; i < g.io.input_count; ++i)
    api_assert_ok(tinyml_context_set_input(g.ctx_inputs, i, g.io.inputs[i],
                                           g.io.input_sizes[i]), "set_input");

  const uint8_t *bytes = tinyml_blob_data(g.blob);
  size_t size = tinyml_blob_size(g.blob);
  g.mis1 = api_aligned_copy(bytes, size, 64, 1);
  g.mis8 = api_aligned_copy(bytes, size, 64, 8);
  g.text_bytes = api_aligned_copy(g.text, g.text_size, 64, 0);
  g.random_size = size;
  g.random_bytes = api_aligned_copy(bytes, size, 64, 0);
  uint32_t s = 29;
  for (size_t i = 0; i < size; ++i) {
    s = s * 1103515245u + 12345u;
    g.random_bytes[i] = (uint8_t)(s >> 16);
  }
  snprintf(g_in_short, sizeof g_in_short, "has %zu", g.in_size - 4);
  snprintf(g_in_long, sizeof g_in_long, "has %zu", g.in_size + 4);
  snprintf(g_in_int8, sizeof g_in_int8, "has %zu", g.in_elements);
  snprintf(g_in_f64, sizeof g_in_f64, "has %zu", g.in_elements * 8);
  snprintf(g_out_short, sizeof g_out_short, "has %zu", g.out_size - 4);
  snprintf(g_out_long, sizeof g_out_long, "has %zu", g.out_size + 4);
  snprintf(g_out_int8, sizeof g_out_int8, "has %zu", g.out_elements);

  api_temp_dir(g.dir, sizeof g.dir);
  snprintf(g.empty, sizeof g.empty, "%s/empty.tmlm", g.dir);
  snprintf(g.truncated, sizeof g.truncated, "%s/truncated.tmlm", g.dir);
  snprintf(g.not_module, sizeof g.not_module, "%s/model.mlir", g.dir);
  snprintf(g.file_as_dir, sizeof g.file_as_dir, "%s/", g.empty);
  write_bytes(g.empty, "", 0);
  write_bytes(g.truncated, bytes, size / 2);
  write_bytes(g.not_module, g.text, g.text_size);
  snprintf(g.conv_path, sizeof g.conv_path, "%s/conv.tmlm", g.dir);
  write_bytes(g.conv_path, tinyml_blob_data(g.conv_blob), tinyml_blob_size(g.conv_blob));
  return 0;
}

static int teardown_group(void **state) {
  (void)state;
  remove(g.empty);
  remove(g.truncated);
  remove(g.not_module);
  remove(g.conv_path);
  api_aligned_free(g.conv_big_constants);
  free(g.conv_text);
  for (size_t i = 0; i < tinyml_files_count(g.files); ++i) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", g.dir, tinyml_files_name(g.files, i));
    remove(path);
  }
  rmdir(g.dir);
  api_aligned_free(g.mis1);
  api_aligned_free(g.mis8);
  api_aligned_free(g.text_bytes);
  api_aligned_free(g.random_bytes);
  api_aligned_free(g.in_buf);
  api_aligned_free(g.out_buf);
  api_io_free(&g.io);
  tinyml_context_release(g.ctx);
  tinyml_context_release(g.ctx_inputs);
  tinyml_files_release(g.files);
  free(g.arena);
  tinyml_module_release(g.conv);
  tinyml_blob_release(g.conv_blob);
  tinyml_module_release(g.module);
  tinyml_blob_release(g.blob);
  free(g.text);
  return 0;
}

/* ==== the calls =========================================================== */

/* A status row's call and a value row's check, one line each. */
#define CALL(id, expr) \
  static tinyml_status_t id(void) { return (expr); }
#define CHECK(id, expr) \
  static int id(void) { return (expr); }

static tinyml_compile_options_t copts(void) {
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  return o;
}

static tinyml_status_t compile_with(const tinyml_compile_options_t *o) {
  return tinyml_compile(g.text, g.text_size, o, &o_blob);
}

static tinyml_status_t compile_files_with(const tinyml_compile_options_t *o) {
  return tinyml_compile_files(g.text, g.text_size, o, &o_files);
}

/* Options with one field set; `files` picks tinyml_compile_files. */
#define COMPILE_OPT(id, files, field, value)                               \
  static tinyml_status_t id(void) {                                        \
    tinyml_compile_options_t o = copts();                                  \
    o.field = value;                                                       \
    return files ? compile_files_with(&o) : compile_with(&o);              \
  }

/* ---- tinyml_compile ---- */
CALL(compile_null_model, tinyml_compile(NULL, g.text_size, NULL, &o_blob))
CALL(compile_null_out, tinyml_compile(g.text, g.text_size, NULL, NULL))
CALL(compile_empty, tinyml_compile(g.text, 0, NULL, &o_blob))
CALL(compile_truncated, tinyml_compile(g.text, g.text_size / 2, NULL, &o_blob))
CALL(compile_random, tinyml_compile(g.random_bytes, g.random_size, NULL, &o_blob))
COMPILE_OPT(compile_struct_size, 0, struct_size, 0)
COMPILE_OPT(compile_struct_size_4, 0, struct_size, 4)
COMPILE_OPT(compile_target, 0, target, "riscv-9000")
COMPILE_OPT(compile_cpu, 0, cpu, "not-a-cpu")
COMPILE_OPT(compile_features, 0, features, "avx2")
COMPILE_OPT(compile_opt_level, 0, opt_level, 4)
COMPILE_OPT(compile_opt_level_neg, 0, opt_level, -1)
COMPILE_OPT(compile_emit, 0, emit, (tinyml_emit_t)99)
COMPILE_OPT(compile_emit_c, 0, emit, TINYML_EMIT_C)
COMPILE_OPT(compile_name, 0, name, "9lives")
COMPILE_OPT(compile_name_long, 0, name,
            "a_name_of_forty_nine_characters_xxxxxxxxxxxxxxxxx")
COMPILE_OPT(compile_name_empty, 0, name, "")

static tinyml_status_t compile_pre(uint32_t kind, size_t struct_size) {
  tinyml_preprocess_t p;
  tinyml_preprocess_init(&p);
  p.kind = (tinyml_input_kind_t)kind;
  p.image_width = p.image_height = 8;
  p.struct_size = struct_size;
  tinyml_compile_options_t o = copts();
  o.preprocess = &p;
  return compile_with(&o);
}

static tinyml_status_t compile_post(uint32_t top_k, size_t struct_size) {
  tinyml_postprocess_t p;
  tinyml_postprocess_init(&p);
  p.top_k = top_k;
  p.struct_size = struct_size;
  tinyml_compile_options_t o = copts();
  o.postprocess = &p;
  return compile_with(&o);
}

/* ---- the resource limits ---- */
COMPILE_OPT(compile_max_tensor_bytes, 0, max_tensor_bytes, 4)
COMPILE_OPT(compile_max_ops, 0, max_ops, 1)
COMPILE_OPT(files_compile_max_ops, 1, max_ops, 1)

/* conv2d (constants, an arena) with one limit set. */
static tinyml_status_t compile_conv(uint64_t max_constant_bytes, uint64_t max_arena_bytes) {
  tinyml_compile_options_t o = copts();
  o.max_constant_bytes = max_constant_bytes;
  o.max_arena_bytes = max_arena_bytes;
  return tinyml_compile(g.conv_text, g.conv_text_size, &o, &o_blob);
}
CALL(compile_max_constant_bytes, compile_conv(4, 0))
CALL(compile_max_arena_bytes, compile_conv(0, 1))

static int compile_limits_init(void) {
  tinyml_compile_options_t o = copts();
  return o.max_tensor_bytes == TINYML_DEFAULT_MAX_TENSOR_BYTES &&
         o.max_constant_bytes == TINYML_DEFAULT_MAX_CONSTANT_BYTES &&
         o.max_ops == TINYML_DEFAULT_MAX_OPS &&
         o.max_arena_bytes == TINYML_DEFAULT_MAX_ARENA_BYTES;
}

/* A limit of 0, or one past an older caller's struct_size (garbage
 * there), is the default: the model compiles. */
static int compile_limits_default(size_t struct_size, uint64_t garbage) {
  tinyml_compile_options_t o = copts();
  o.struct_size = struct_size;
  o.max_tensor_bytes = o.max_constant_bytes = o.max_ops = o.max_arena_bytes = garbage;
  tinyml_blob_t *blob = NULL;
  tinyml_status_t st = tinyml_compile(g.conv_text, g.conv_text_size, &o, &blob);
  int ok = st == TINYML_OK && blob != NULL;
  tinyml_status_free(st);
  tinyml_blob_release(blob);
  return ok;
}
CHECK(compile_limits_zero, compile_limits_default(sizeof(tinyml_compile_options_t), 0))
CHECK(compile_limits_old_struct,
      compile_limits_default(offsetof(tinyml_compile_options_t, max_tensor_bytes), 1))

CALL(compile_pre_struct_size, compile_pre(TINYML_INPUT_IMAGE, 0))
CALL(compile_pre_kind, compile_pre(7, sizeof(tinyml_preprocess_t)))
CALL(compile_pre_several_inputs, compile_pre(TINYML_INPUT_IMAGE, sizeof(tinyml_preprocess_t)))
CALL(compile_post_struct_size, compile_post(1, 0))
CALL(compile_post_top_k, compile_post(70000, sizeof(tinyml_postprocess_t)))

/* ---- tinyml_compile_files ---- */
CALL(files_compile_null_model, tinyml_compile_files(NULL, g.text_size, NULL, &o_files))
CALL(files_compile_null_out, tinyml_compile_files(g.text, g.text_size, NULL, NULL))
CALL(files_compile_empty, tinyml_compile_files(g.text, 0, NULL, &o_files))
CALL(files_compile_truncated, tinyml_compile_files(g.text, g.text_size / 2, NULL, &o_files))
CALL(files_compile_random,
     tinyml_compile_files(g.random_bytes, g.random_size, NULL, &o_files))
COMPILE_OPT(files_compile_struct_size, 1, struct_size, 0)
COMPILE_OPT(files_compile_target, 1, target, "riscv-9000")
COMPILE_OPT(files_compile_cpu, 1, cpu, "not-a-cpu")
COMPILE_OPT(files_compile_opt_level, 1, opt_level, 9)
COMPILE_OPT(files_compile_emit, 1, emit, (tinyml_emit_t)-1)
COMPILE_OPT(files_compile_name, 1, name, "has space")

/* ---- files_* ---- */
CHECK(files_count_null, tinyml_files_count(NULL) == 0)
CHECK(files_name_null, tinyml_files_name(NULL, 0) == NULL)
CHECK(files_name_index, tinyml_files_name(g.files, tinyml_files_count(g.files)) == NULL)
CHECK(files_name_index_max, tinyml_files_name(g.files, SIZE_MAX) == NULL)
CHECK(files_blob_null, tinyml_files_blob(NULL, 0) == NULL)
CHECK(files_blob_index, tinyml_files_blob(g.files, tinyml_files_count(g.files)) == NULL)
CHECK(files_blob_index_max, tinyml_files_blob(g.files, SIZE_MAX) == NULL)
CALL(files_write_null_files, tinyml_files_write(NULL, g.dir))
CALL(files_write_null_dir, tinyml_files_write(g.files, NULL))
CALL(files_write_missing_dir, tinyml_files_write(g.files, g_missing_dir))
CALL(files_write_not_dir, tinyml_files_write(g.files, g.empty))
CHECK(files_release_null, (tinyml_files_release(NULL), 1))

/* ---- blob_* ---- */
CHECK(blob_data_null, tinyml_blob_data(NULL) == NULL)
CHECK(blob_size_null, tinyml_blob_size(NULL) == 0)
CALL(blob_write_null_blob, tinyml_blob_write_file(NULL, g.truncated))
CALL(blob_write_null_path, tinyml_blob_write_file(g.blob, NULL))
CALL(blob_write_missing_dir, tinyml_blob_write_file(g.blob, g_missing))
CALL(blob_write_directory, tinyml_blob_write_file(g.blob, g.dir))
CHECK(blob_release_null, (tinyml_blob_release(NULL), 1))

/* ---- tinyml_module_load ---- */
static tinyml_status_t load(const void *data, size_t size) {
  return tinyml_module_load(data, size, NULL, &o_module);
}

static tinyml_status_t load_struct_size(size_t struct_size, int file) {
  tinyml_module_options_t o;
  tinyml_module_options_init(&o);
  o.struct_size = struct_size;
  return file ? tinyml_module_load_file(g.truncated, &o, &o_module)
              : tinyml_module_load(tinyml_blob_data(g.blob), tinyml_blob_size(g.blob), &o,
                                   &o_module);
}

/* conv2d's module loaded with limits; `file` loads it from its file. */
static tinyml_status_t load_conv_limited(size_t max_arena, size_t max_constants, int file,
                                         tinyml_module_t **out) {
  tinyml_module_options_t o;
  tinyml_module_options_init(&o);
  o.max_arena_size = max_arena;
  o.max_constant_size = max_constants;
  return file ? tinyml_module_load_file(g.conv_path, &o, out)
              : tinyml_module_load(tinyml_blob_data(g.conv_blob),
                                   tinyml_blob_size(g.conv_blob), &o, out);
}
CALL(load_max_arena, load_conv_limited(g.arena_need - 1, 0, 0, &o_module))
CALL(load_file_max_arena, load_conv_limited(g.arena_need - 1, 0, 1, &o_module))
CALL(load_max_constants, load_conv_limited(0, 1, 0, &o_module))
CALL(load_constants_past_end, load(g.conv_big_constants, tinyml_blob_size(g.conv_blob)))

/* Limits the module fits exactly (and 0, no limit) load it; an options
 * struct from before the limits ignores what lies past its struct_size. */
static int load_conv_fits(size_t max_arena, size_t max_constants, size_t struct_size) {
  tinyml_module_options_t o;
  tinyml_module_options_init(&o);
  o.max_arena_size = max_arena;
  o.max_constant_size = max_constants;
  o.struct_size = struct_size;
  tinyml_module_t *m = NULL;
  tinyml_status_t st = tinyml_module_load(tinyml_blob_data(g.conv_blob),
                                          tinyml_blob_size(g.conv_blob), &o, &m);
  int ok = st == TINYML_OK && m != NULL && tinyml_module_arena_size(m) == g.arena_need;
  tinyml_context_t *c = NULL;
  if (ok) { /* and a context allocates that arena */
    tinyml_status_t cs = tinyml_context_create(m, NULL, &c);
    ok = cs == TINYML_OK;
    tinyml_status_free(cs);
  }
  tinyml_context_release(c);
  tinyml_module_release(m);
  tinyml_status_free(st);
  return ok;
}
CHECK(load_limits_fit, load_conv_fits(g.arena_need, tinyml_module_constant_size(g.conv),
                                      sizeof(tinyml_module_options_t)))
CHECK(load_limits_zero, load_conv_fits(0, 0, sizeof(tinyml_module_options_t)))
CHECK(load_limits_old_struct,
      load_conv_fits(1, 1, offsetof(tinyml_module_options_t, max_arena_size)))

CALL(load_null_data, load(NULL, tinyml_blob_size(g.blob)))
CALL(load_null_out, tinyml_module_load(tinyml_blob_data(g.blob), tinyml_blob_size(g.blob),
                                       NULL, NULL))
CALL(load_struct_size_0, load_struct_size(0, 0))
CALL(load_misaligned_1, load(g.mis1, tinyml_blob_size(g.blob)))
CALL(load_misaligned_8, load(g.mis8, tinyml_blob_size(g.blob)))
CALL(load_empty, load(tinyml_blob_data(g.blob), 0))
CALL(load_header_only, load(tinyml_blob_data(g.blob), 16))
CALL(load_truncated_half, load(tinyml_blob_data(g.blob), tinyml_blob_size(g.blob) / 2))
CALL(load_truncated_1, load(tinyml_blob_data(g.blob), tinyml_blob_size(g.blob) - 1))
CALL(load_model_text, load(g.text_bytes, g.text_size))
CALL(load_random, load(g.random_bytes, g.random_size))

/* ---- tinyml_module_load_file ---- */
static tinyml_status_t load_file(const char *path) {
  return tinyml_module_load_file(path, NULL, &o_module);
}
CALL(load_file_null_path, load_file(NULL))
CALL(load_file_null_out, tinyml_module_load_file(g.truncated, NULL, NULL))
CALL(load_file_struct_size_0, load_struct_size(0, 1))
CALL(load_file_missing, load_file(g_missing))
CALL(load_file_empty, load_file(g.empty))
CALL(load_file_truncated, load_file(g.truncated))
CALL(load_file_model_text, load_file(g.not_module))
CALL(load_file_directory, load_file(g.dir))
CALL(load_file_not_dir, load_file(g.file_as_dir))
CHECK(module_release_null, (tinyml_module_release(NULL), 1))

/* ---- module queries ---- */
CHECK(input_count_null, tinyml_module_input_count(NULL) == 0)
CHECK(output_count_null, tinyml_module_output_count(NULL) == 0)
CHECK(target_null, strcmp(tinyml_module_target(NULL), "") == 0)
CHECK(arena_size_null, tinyml_module_arena_size(NULL) == 0)
CHECK(arena_alignment_null, tinyml_module_arena_alignment(NULL) == 0)
CHECK(constant_size_null, tinyml_module_constant_size(NULL) == 0)
CHECK(dispatch_count_null, tinyml_module_dispatch_count(NULL) == 0)
CHECK(step_label_null, strcmp(tinyml_module_step_label(NULL, 0), "") == 0)
CHECK(region_count_null, tinyml_module_arena_region_count(NULL) == 0)
CHECK(region_count_one, tinyml_module_arena_region_count(g.module) == 1)
CHECK(region_size_null, tinyml_module_arena_region_size(NULL, 0) == 0)
CHECK(region_size_index, tinyml_module_arena_region_size(g.module, 1) == 0)
CHECK(region_size_index_max, tinyml_module_arena_region_size(g.module, SIZE_MAX) == 0)
CHECK(step_label_index,
      strcmp(tinyml_module_step_label(g.module, tinyml_module_dispatch_count(g.module)), "") == 0)
CHECK(step_label_index_max, strcmp(tinyml_module_step_label(g.module, SIZE_MAX), "") == 0)
CHECK(phase_wg_null, tinyml_module_step_phase_workgroups(NULL, 0, 0) == 0)
CHECK(phase_wg_index, tinyml_module_step_phase_workgroups(
                          g.module, tinyml_module_dispatch_count(g.module), 0) == 0)
CHECK(phase_wg_phase_max, tinyml_module_step_phase_workgroups(g.module, 0, SIZE_MAX) == 0)

typedef tinyml_status_t (*info_fn)(const tinyml_module_t *, size_t, tinyml_tensor_info_t *);

static tinyml_status_t info(int input, const tinyml_module_t *m, size_t index,
                            size_t struct_size, int null_out) {
  info_fn f = input ? tinyml_module_input_info : tinyml_module_output_info;
  o_info.struct_size = struct_size;
  o_info_before = o_info;
  return f(m, index, null_out ? NULL : &o_info);
}

#define S (sizeof(tinyml_tensor_info_t))
CALL(input_info_null_module, info(1, NULL, 0, S, 0))
CALL(input_info_null_out, info(1, g.module, 0, S, 1))
CALL(input_info_struct_size, info(1, g.module, 0, 0, 0))
CALL(input_info_index, info(1, g.module, tinyml_module_input_count(g.module), S, 0))
CALL(input_info_index_max, info(1, g.module, SIZE_MAX, S, 0))
CALL(output_info_null_module, info(0, NULL, 0, S, 0))
CALL(output_info_null_out, info(0, g.module, 0, S, 1))
CALL(output_info_struct_size, info(0, g.module, 0, offsetof(tinyml_tensor_info_t, scales), 0))
CALL(output_info_index, info(0, g.module, tinyml_module_output_count(g.module), S, 0))
CALL(output_info_index_max, info(0, g.module, SIZE_MAX, S, 0))
#undef S

/* ---- tinyml_context_create ---- */
static tinyml_status_t create(size_t struct_size, size_t arena_offset, size_t arena_size,
                              uint32_t threads) {
  tinyml_context_options_t o;
  tinyml_context_options_init(&o);
  o.struct_size = struct_size;
  o.arena = g.arena + arena_offset;
  o.arena_size = arena_size;
  o.thread_count = threads;
  return tinyml_context_create(g.conv, &o, &o_ctx);
}
#define XS (sizeof(tinyml_context_options_t))
CALL(create_null_module, tinyml_context_create(NULL, NULL, &o_ctx))
CALL(create_null_out, tinyml_context_create(g.conv, NULL, NULL))
CALL(create_struct_size, create(0, 0, g.arena_need, 1))
CALL(create_arena_small, create(XS, 0, g.arena_need - 1, 1))
CALL(create_arena_zero, create(XS, 0, 0, 1))
CALL(create_arena_misaligned_1, create(XS, 1, g.arena_need, 1))
CALL(create_arena_misaligned_half, create(XS, g.arena_align / 2, g.arena_need, 1))
CALL(create_threads_0, create(XS, 0, g.arena_need, 0))
CALL(create_threads_33, create(XS, 0, g.arena_need, TINYML_MAX_THREADS + 1))
CALL(create_threads_max, create(XS, 0, g.arena_need, UINT32_MAX))
#undef XS
CHECK(context_release_null, (tinyml_context_release(NULL), 1))

/* ---- set_input / set_output ---- */
CALL(in_null_context, tinyml_context_set_input(NULL, 0, g.in_buf, g.in_size))
CALL(in_null_data, tinyml_context_set_input(g.ctx, 0, NULL, g.in_size))
CALL(in_index, tinyml_context_set_input(g.ctx, g.io.input_count, g.in_buf, g.in_size))
CALL(in_index_max, tinyml_context_set_input(g.ctx, SIZE_MAX, g.in_buf, g.in_size))
CALL(in_too_small, tinyml_context_set_input(g.ctx, 0, g.in_buf, g.in_size - 4))
CALL(in_too_large, tinyml_context_set_input(g.ctx, 0, g.in_buf, g.in_size + 4))
CALL(in_size_0, tinyml_context_set_input(g.ctx, 0, g.in_buf, 0))
CALL(in_int8_sized, tinyml_context_set_input(g.ctx, 0, g.in_buf, g.in_elements))
CALL(in_float64_sized, tinyml_context_set_input(g.ctx, 0, g.in_buf, g.in_elements * 8))
CALL(in_misaligned_1, tinyml_context_set_input(g.ctx, 0, g.in_buf + 1, g.in_size))
CALL(in_misaligned_2, tinyml_context_set_input(g.ctx, 0, g.in_buf + 2, g.in_size))
CALL(out_null_context, tinyml_context_set_output(NULL, 0, g.out_buf, g.out_size))
CALL(out_null_data, tinyml_context_set_output(g.ctx, 0, NULL, g.out_size))
CALL(out_index, tinyml_context_set_output(g.ctx, g.io.output_count, g.out_buf, g.out_size))
CALL(out_index_max, tinyml_context_set_output(g.ctx, SIZE_MAX, g.out_buf, g.out_size))
CALL(out_too_small, tinyml_context_set_output(g.ctx, 0, g.out_buf, g.out_size - 4))
CALL(out_too_large, tinyml_context_set_output(g.ctx, 0, g.out_buf, g.out_size + 4))
CALL(out_size_0, tinyml_context_set_output(g.ctx, 0, g.out_buf, 0))
CALL(out_int8_sized, tinyml_context_set_output(g.ctx, 0, g.out_buf, g.out_elements))
CALL(out_misaligned_1, tinyml_context_set_output(g.ctx, 0, g.out_buf + 1, g.out_size))
CALL(out_misaligned_3, tinyml_context_set_output(g.ctx, 0, g.out_buf + 3, g.out_size))

/* ---- invoke, step hook ---- */
static void hook(void *user, size_t step, int done) {
  (void)user;
  (void)step;
  (void)done;
}
CALL(invoke_null, tinyml_context_invoke(NULL))
CALL(invoke_unbound_input, tinyml_context_invoke(g.ctx))
CALL(invoke_unbound_output, tinyml_context_invoke(g.ctx_inputs))
CALL(hook_null_context, tinyml_context_set_step_hook(NULL, hook, NULL))

/* ---- status, dtype, version ---- */
CHECK(status_code_null, tinyml_status_code(TINYML_OK) == TINYML_STATUS_OK)
CHECK(status_message_null, strcmp(tinyml_status_message(TINYML_OK), "OK") == 0)
CHECK(status_code_name_bad,
      tinyml_status_code_name((tinyml_status_code_t)1000) != NULL &&
          tinyml_status_code_name((tinyml_status_code_t)1000)[0] != '\0')
CHECK(status_code_name_negative,
      tinyml_status_code_name((tinyml_status_code_t)-1) != NULL)
CHECK(status_free_null, (tinyml_status_free(NULL), 1))
CHECK(dtype_name_bad, tinyml_dtype_name((tinyml_dtype_t)99) != NULL)
CHECK(dtype_size_invalid, tinyml_dtype_size(TINYML_DTYPE_INVALID) == 0)
CHECK(dtype_size_bad, tinyml_dtype_size((tinyml_dtype_t)-1) == 0)

/* ---- _init(NULL): documented as a no-op ---- */
CHECK(tensor_info_init_null, (tinyml_tensor_info_init(NULL), 1))
CHECK(compile_options_init_null, (tinyml_compile_options_init(NULL), 1))
CHECK(preprocess_init_null, (tinyml_preprocess_init(NULL), 1))
CHECK(postprocess_init_null, (tinyml_postprocess_init(NULL), 1))
CHECK(module_options_init_null, (tinyml_module_options_init(NULL), 1))
CHECK(context_options_init_null, (tinyml_context_options_init(NULL), 1))

/* ==== the table =========================================================== */

typedef struct row {
  const char *fn;  /* the entry point */
  const char *bad; /* the bad-input class */
  tinyml_status_t (*call)(void);
  tinyml_status_code_t code;
  const char *want[4]; /* the message contains each */
  const char *not[2];  /* ... and none of these */
  int (*check)(void);  /* value rows: 1 when the documented value came back */
} row_t;

#define IA TINYML_STATUS_INVALID_ARGUMENT
#define SIZE TINYML_STATUS_SIZE_MISMATCH
#define MODULE TINYML_STATUS_INVALID_MODULE
#define MODEL TINYML_STATUS_INVALID_MODEL
#define UNSUP TINYML_STATUS_UNSUPPORTED
#define IO TINYML_STATUS_IO_ERROR
#define PRECOND TINYML_STATUS_FAILED_PRECONDITION
#define W(...) .want = {__VA_ARGS__}
#define NOT(...) .not = {__VA_ARGS__}
#define ROW(f, b, c, cd, ...) {.fn = f, .bad = b, .call = c, .code = cd, __VA_ARGS__}
#define VAL(f, b, c) {.fn = f, .bad = b, .check = c}

static const row_t rows[] = {
    /* tinyml_compile */
    ROW("tinyml_compile", "NULL model", compile_null_model, IA, W("model"), NOT("out_module")),
    ROW("tinyml_compile", "NULL out_module", compile_null_out, IA, W("out_module"),
        NOT("model and")),
    ROW("tinyml_compile", "empty model", compile_empty, MODEL, W("empty")),
    ROW("tinyml_compile", "truncated model", compile_truncated, MODEL,
        W("cannot parse", "expected")),
    ROW("tinyml_compile", "non-model bytes", compile_random, MODEL, W("format")),
    ROW("tinyml_compile", "struct_size 0", compile_struct_size, IA, W("struct_size")),
    ROW("tinyml_compile", "struct_size 4", compile_struct_size_4, IA, W("struct_size")),
    ROW("tinyml_compile", "wrong target", compile_target, UNSUP, W("riscv-9000")),
    ROW("tinyml_compile", "wrong cpu", compile_cpu, IA, W("not-a-cpu")),
    ROW("tinyml_compile", "bad features", compile_features, IA, W("avx2")),
    ROW("tinyml_compile", "opt_level 4", compile_opt_level, IA, W("opt_level", "4")),
    ROW("tinyml_compile", "opt_level -1", compile_opt_level_neg, IA, W("opt_level", "-1")),
    ROW("tinyml_compile", "emit 99", compile_emit, IA, W("emit", "99")),
    ROW("tinyml_compile", "emit C (several files)", compile_emit_c, IA,
        W("tinyml_compile_files")),
    ROW("tinyml_compile", "name not an identifier", compile_name, IA, W("name", "9lives")),
    ROW("tinyml_compile", "name of 49 characters", compile_name_long, IA, W("name", "48")),
    ROW("tinyml_compile", "empty name", compile_name_empty, IA, W("name")),
    ROW("tinyml_compile", "max_tensor_bytes 4", compile_max_tensor_bytes, UNSUP,
        W("max_tensor_bytes (4)", "'main': argument 0")),
    ROW("tinyml_compile", "max_ops 1", compile_max_ops, UNSUP, W("max_ops (1)")),
    ROW("tinyml_compile", "max_constant_bytes 4", compile_max_constant_bytes, UNSUP,
        W("max_constant_bytes (4)", "tosa.const line")),
    ROW("tinyml_compile", "max_arena_bytes 1", compile_max_arena_bytes, UNSUP,
        W("max_arena_bytes (1)", "arena of")),
    VAL("tinyml_compile_options_init", "sets the default limits", compile_limits_init),
    VAL("tinyml_compile", "limits 0 -> the defaults", compile_limits_zero),
    VAL("tinyml_compile", "limits past an older struct_size -> the defaults",
        compile_limits_old_struct),
    ROW("tinyml_compile", "preprocess.struct_size 0", compile_pre_struct_size, IA,
        W("preprocess.struct_size")),
    ROW("tinyml_compile", "preprocess.kind 7", compile_pre_kind, IA, W("kind")),
    ROW("tinyml_compile", "image preprocess, 3-input model", compile_pre_several_inputs, IA,
        W("one input", "has 3")),
    ROW("tinyml_compile", "postprocess.struct_size 0", compile_post_struct_size, IA,
        W("postprocess.struct_size")),
    ROW("tinyml_compile", "postprocess.top_k 70000", compile_post_top_k, IA,
        W("top_k", "70000")),
    /* tinyml_compile_files */
    ROW("tinyml_compile_files", "NULL model", files_compile_null_model, IA,
        W("tinyml_compile_files", "model"), NOT("out_files")),
    ROW("tinyml_compile_files", "NULL out_files", files_compile_null_out, IA,
        W("out_files"), NOT("model and")),
    ROW("tinyml_compile_files", "empty model", files_compile_empty, MODEL, W("empty")),
    ROW("tinyml_compile_files", "truncated model", files_compile_truncated, MODEL,
        W("cannot parse", "expected")),
    ROW("tinyml_compile_files", "non-model bytes", files_compile_random, MODEL, W("format")),
    ROW("tinyml_compile_files", "struct_size 0", files_compile_struct_size, IA,
        W("struct_size")),
    ROW("tinyml_compile_files", "wrong target", files_compile_target, UNSUP,
        W("riscv-9000")),
    ROW("tinyml_compile_files", "wrong cpu", files_compile_cpu, IA, W("not-a-cpu")),
    ROW("tinyml_compile_files", "opt_level 9", files_compile_opt_level, IA,
        W("opt_level", "9"), NOT("tinyml_compile:")),
    ROW("tinyml_compile_files", "max_ops 1", files_compile_max_ops, UNSUP, W("max_ops (1)")),
    ROW("tinyml_compile_files", "emit -1", files_compile_emit, IA, W("emit", "-1"),
        NOT("tinyml_compile:")),
    ROW("tinyml_compile_files", "name with a space", files_compile_name, IA,
        W("name", "has space")),
    /* files_* */
    VAL("tinyml_files_count", "NULL files -> 0", files_count_null),
    VAL("tinyml_files_name", "NULL files -> NULL", files_name_null),
    VAL("tinyml_files_name", "index = count -> NULL", files_name_index),
    VAL("tinyml_files_name", "index SIZE_MAX -> NULL", files_name_index_max),
    VAL("tinyml_files_blob", "NULL files -> NULL", files_blob_null),
    VAL("tinyml_files_blob", "index = count -> NULL", files_blob_index),
    VAL("tinyml_files_blob", "index SIZE_MAX -> NULL", files_blob_index_max),
    ROW("tinyml_files_write", "NULL files", files_write_null_files, IA, W("files"),
        NOT("dir")),
    ROW("tinyml_files_write", "NULL dir", files_write_null_dir, IA, W("dir"),
        NOT("files and")),
    ROW("tinyml_files_write", "missing directory", files_write_missing_dir, IO,
        W(g_missing_dir, "No such file")),
    ROW("tinyml_files_write", "dir is a file", files_write_not_dir, IO, W(g.empty, "Not a directory")),
    VAL("tinyml_files_release", "NULL is a no-op", files_release_null),
    /* blob_* */
    VAL("tinyml_blob_data", "NULL blob -> NULL", blob_data_null),
    VAL("tinyml_blob_size", "NULL blob -> 0", blob_size_null),
    ROW("tinyml_blob_write_file", "NULL blob", blob_write_null_blob, IA, W("blob"),
        NOT("path")),
    ROW("tinyml_blob_write_file", "NULL path", blob_write_null_path, IA, W("path"),
        NOT("blob and")),
    ROW("tinyml_blob_write_file", "missing directory", blob_write_missing_dir, IO,
        W(g_missing, "No such file")),
    ROW("tinyml_blob_write_file", "path is a directory", blob_write_directory, IO,
        W(g.dir, "Is a directory")),
    VAL("tinyml_blob_release", "NULL is a no-op", blob_release_null),
    /* tinyml_module_load */
    ROW("tinyml_module_load", "NULL data", load_null_data, IA, W("data"),
        NOT("out_module")),
    ROW("tinyml_module_load", "NULL out_module", load_null_out, IA, W("out_module"),
        NOT("data and")),
    ROW("tinyml_module_load", "options.struct_size 0", load_struct_size_0, IA,
        W("struct_size")),
    ROW("tinyml_module_load", "misaligned by 1", load_misaligned_1, IA, W("16-byte aligned")),
    ROW("tinyml_module_load", "misaligned by 8", load_misaligned_8, IA, W("16-byte aligned")),
    ROW("tinyml_module_load", "size 0", load_empty, MODULE, W("0 bytes", "too few")),
    ROW("tinyml_module_load", "truncated to the header", load_header_only, MODULE,
        W("root table", "out of bounds")),
    ROW("tinyml_module_load", "truncated to half", load_truncated_half, MODULE, W("overruns the module")),
    ROW("tinyml_module_load", "truncated by 1 byte", load_truncated_1, MODULE, W("overruns the module")),
    ROW("tinyml_module_load", "arena over max_arena_size", load_max_arena, UNSUP,
        W(g_arena_max, g_arena_need)),
    ROW("tinyml_module_load", "constants over max_constant_size", load_max_constants, UNSUP,
        W("max_constant_size (1)", g_constants)),
    ROW("tinyml_module_load", "constants claim 1 GiB past the end", load_constants_past_end,
        MODULE, W("constants", "overruns the module")),
    VAL("tinyml_module_load", "limits the module fits -> loads, context allocates",
        load_limits_fit),
    VAL("tinyml_module_load", "limits 0 -> no limit", load_limits_zero),
    VAL("tinyml_module_load", "limits past an older struct_size -> ignored",
        load_limits_old_struct),
    ROW("tinyml_module_load", "model text, not a module", load_model_text, MODULE,
        W("file identifier", "TMLM")),
    ROW("tinyml_module_load", "random bytes", load_random, MODULE, W("file identifier", "TMLM")),
    /* tinyml_module_load_file */
    ROW("tinyml_module_load_file", "NULL path", load_file_null_path, IA, W("path"),
        NOT("out_module")),
    ROW("tinyml_module_load_file", "NULL out_module", load_file_null_out, IA,
        W("out_module"), NOT("path and")),
    ROW("tinyml_module_load_file", "options.struct_size 0", load_file_struct_size_0, IA,
        W("struct_size")),
    ROW("tinyml_module_load_file", "missing file", load_file_missing, IO, W(g_missing, "No such file")),
    ROW("tinyml_module_load_file", "empty file", load_file_empty, MODULE, W(g.empty, "too few")),
    ROW("tinyml_module_load_file", "truncated file", load_file_truncated, MODULE,
        W(g.truncated, "overruns the module")),
    ROW("tinyml_module_load_file", "model file, not a module", load_file_model_text, MODULE,
        W(g.not_module, "file identifier")),
    ROW("tinyml_module_load_file", "a directory", load_file_directory, IO, W(g.dir, "not a regular file")),
    ROW("tinyml_module_load_file", "arena over max_arena_size", load_file_max_arena, UNSUP,
        W(g.conv_path, g_arena_max)),
    ROW("tinyml_module_load_file", "file used as a directory", load_file_not_dir, IO,
        W(g.file_as_dir, "Not a directory")),
    VAL("tinyml_module_release", "NULL is a no-op", module_release_null),
    /* module queries */
    VAL("tinyml_module_input_count", "NULL module -> 0", input_count_null),
    VAL("tinyml_module_output_count", "NULL module -> 0", output_count_null),
    VAL("tinyml_module_target", "NULL module -> \"\"", target_null),
    VAL("tinyml_module_arena_size", "NULL module -> 0", arena_size_null),
    VAL("tinyml_module_arena_alignment", "NULL module -> 0", arena_alignment_null),
    VAL("tinyml_module_constant_size", "NULL module -> 0", constant_size_null),
    VAL("tinyml_module_dispatch_count", "NULL module -> 0", dispatch_count_null),
    VAL("tinyml_module_step_label", "NULL module -> \"\"", step_label_null),
    VAL("tinyml_module_arena_region_count", "NULL module -> 0", region_count_null),
    VAL("tinyml_module_arena_region_count", "one-arena module -> 1", region_count_one),
    VAL("tinyml_module_arena_region_size", "NULL module -> 0", region_size_null),
    VAL("tinyml_module_arena_region_size", "region = count -> 0", region_size_index),
    VAL("tinyml_module_arena_region_size", "region SIZE_MAX -> 0", region_size_index_max),
    VAL("tinyml_module_step_label", "index = count -> \"\"", step_label_index),
    VAL("tinyml_module_step_label", "index SIZE_MAX -> \"\"", step_label_index_max),
    VAL("tinyml_module_step_phase_workgroups", "NULL module -> 0", phase_wg_null),
    VAL("tinyml_module_step_phase_workgroups", "index = count -> 0", phase_wg_index),
    VAL("tinyml_module_step_phase_workgroups", "phase SIZE_MAX -> 0", phase_wg_phase_max),
    ROW("tinyml_module_input_info", "NULL module", input_info_null_module, IA, W("module"),
        NOT("out_info")),
    ROW("tinyml_module_input_info", "NULL out_info", input_info_null_out, IA, W("out_info"),
        NOT("module and")),
    ROW("tinyml_module_input_info", "out_info.struct_size 0", input_info_struct_size, IA,
        W("struct_size")),
    ROW("tinyml_module_input_info", "index = count", input_info_index, IA,
        W("index 3", "out of range", "has 3")),
    ROW("tinyml_module_input_info", "index SIZE_MAX", input_info_index_max, IA,
        W("out of range")),
    ROW("tinyml_module_output_info", "NULL module", output_info_null_module, IA, W("module"),
        NOT("out_info")),
    ROW("tinyml_module_output_info", "NULL out_info", output_info_null_out, IA,
        W("out_info"), NOT("module and")),
    ROW("tinyml_module_output_info", "out_info.struct_size before scales",
        output_info_struct_size, IA, W("struct_size")),
    ROW("tinyml_module_output_info", "index = count", output_info_index, IA,
        W("index 1", "out of range", "has 1")),
    ROW("tinyml_module_output_info", "index SIZE_MAX", output_info_index_max, IA,
        W("out of range")),
    /* tinyml_context_create */
    ROW("tinyml_context_create", "NULL module", create_null_module, IA, W("module"),
        NOT("out_context")),
    ROW("tinyml_context_create", "NULL out_context", create_null_out, IA, W("out_context"),
        NOT("module and")),
    ROW("tinyml_context_create", "options.struct_size 0", create_struct_size, IA,
        W("struct_size")),
    ROW("tinyml_context_create", "arena one byte too small", create_arena_small, IA,
        W("arena", g_arena_need)),
    ROW("tinyml_context_create", "arena_size 0", create_arena_zero, IA,
        W("arena", g_arena_need)),
    ROW("tinyml_context_create", "arena misaligned by 1", create_arena_misaligned_1, IA,
        W("arena", "aligned", g_arena_align)),
    ROW("tinyml_context_create", "arena misaligned by half", create_arena_misaligned_half,
        IA, W("arena", "aligned", g_arena_align)),
    ROW("tinyml_context_create", "thread_count 0", create_threads_0, IA,
        W("thread_count", "0")),
    ROW("tinyml_context_create", "thread_count 33", create_threads_33, IA,
        W("thread_count", "33")),
    ROW("tinyml_context_create", "thread_count UINT32_MAX", create_threads_max, IA,
        W("thread_count", "4294967295")),
    VAL("tinyml_context_release", "NULL is a no-op", context_release_null),
    /* tinyml_context_set_input */
    ROW("tinyml_context_set_input", "NULL context", in_null_context, IA, W("context"),
        NOT("data")),
    ROW("tinyml_context_set_input", "NULL data", in_null_data, IA, W("data"),
        NOT("context and")),
    ROW("tinyml_context_set_input", "index = count", in_index, IA,
        W("index 3", "out of range")),
    ROW("tinyml_context_set_input", "index SIZE_MAX", in_index_max, IA, W("out of range")),
    ROW("tinyml_context_set_input", "buffer 4 bytes short", in_too_small, SIZE,
        W(g_in_name, g_in_bytes, g_in_short, "too small")),
    ROW("tinyml_context_set_input", "buffer 4 bytes long", in_too_large, SIZE,
        W(g_in_name, g_in_bytes, g_in_long, "too large")),
    ROW("tinyml_context_set_input", "size 0", in_size_0, SIZE, W(g_in_name, g_in_bytes, "has 0 (")),
    ROW("tinyml_context_set_input", "wrong dtype (int8-sized)", in_int8_sized, SIZE,
        W(g_in_name, g_in_bytes, g_in_int8)),
    ROW("tinyml_context_set_input", "wrong dtype (float64-sized)", in_float64_sized, SIZE,
        W(g_in_name, g_in_bytes, g_in_f64)),
    ROW("tinyml_context_set_input", "misaligned by 1", in_misaligned_1, IA,
        W(g_in_name, "aligned to 4")),
    ROW("tinyml_context_set_input", "misaligned by 2", in_misaligned_2, IA,
        W(g_in_name, "aligned to 4")),
    /* tinyml_context_set_output */
    ROW("tinyml_context_set_output", "NULL context", out_null_context, IA, W("context"),
        NOT("data")),
    ROW("tinyml_context_set_output", "NULL data", out_null_data, IA, W("data"),
        NOT("context and")),
    ROW("tinyml_context_set_output", "index = count", out_index, IA,
        W("index 1", "out of range")),
    ROW("tinyml_context_set_output", "index SIZE_MAX", out_index_max, IA, W("out of range")),
    ROW("tinyml_context_set_output", "buffer 4 bytes short", out_too_small, SIZE,
        W(g_out_name, g_out_bytes, g_out_short, "too small")),
    ROW("tinyml_context_set_output", "buffer 4 bytes long", out_too_large, SIZE,
        W(g_out_name, g_out_bytes, g_out_long, "too large")),
    ROW("tinyml_context_set_output", "size 0", out_size_0, SIZE, W(g_out_name, g_out_bytes, "has 0 (")),
    ROW("tinyml_context_set_output", "wrong dtype (int8-sized)", out_int8_sized, SIZE,
        W(g_out_name, g_out_bytes, g_out_int8)),
    ROW("tinyml_context_set_output", "misaligned by 1", out_misaligned_1, IA,
        W(g_out_name, "aligned to 4")),
    ROW("tinyml_context_set_output", "misaligned by 3", out_misaligned_3, IA,
        W(g_out_name, "aligned to 4")),
    /* tinyml_context_invoke, tinyml_context_set_step_hook */
    ROW("tinyml_context_invoke", "NULL context", invoke_null, IA, W("context")),
    ROW("tinyml_context_invoke", "before binding inputs", invoke_unbound_input, PRECOND,
        W("input 0", g_in_name, "not set")),
    ROW("tinyml_context_invoke", "before binding outputs", invoke_unbound_output, PRECOND,
        W("output 0", g_out_name, "not set")),
    ROW("tinyml_context_set_step_hook", "NULL context", hook_null_context, IA,
        W("context")),
    /* status, dtype */
    VAL("tinyml_status_code", "NULL (OK) -> TINYML_STATUS_OK", status_code_null),
    VAL("tinyml_status_message", "NULL (OK) -> \"OK\"", status_message_null),
    VAL("tinyml_status_code_name", "code 1000 -> a name", status_code_name_bad),
    VAL("tinyml_status_code_name", "code -1 -> a name", status_code_name_negative),
    VAL("tinyml_status_free", "NULL is a no-op", status_free_null),
    VAL("tinyml_dtype_name", "dtype 99 -> a name", dtype_name_bad),
    VAL("tinyml_dtype_size", "TINYML_DTYPE_INVALID -> 0", dtype_size_invalid),
    VAL("tinyml_dtype_size", "dtype -1 -> 0", dtype_size_bad),
    /* _init */
    VAL("tinyml_tensor_info_init", "NULL is a no-op", tensor_info_init_null),
    VAL("tinyml_compile_options_init", "NULL is a no-op", compile_options_init_null),
    VAL("tinyml_preprocess_init", "NULL is a no-op", preprocess_init_null),
    VAL("tinyml_postprocess_init", "NULL is a no-op", postprocess_init_null),
    VAL("tinyml_module_options_init", "NULL is a no-op", module_options_init_null),
    VAL("tinyml_context_options_init", "NULL is a no-op", context_options_init_null),
};

/* Runs one row; returns 1 when it holds, printing why it does not. */
static int run_row(const row_t *r) {
  o_blob = API_SENTINEL;
  o_files = API_SENTINEL;
  o_module = API_SENTINEL;
  o_ctx = API_SENTINEL;
  memset(&o_info, 0x77, sizeof o_info);
  o_info_before = o_info;
  if (r->check) {
    if (r->check()) return 1;
    print_error("%s, %s: not the documented value\n", r->fn, r->bad);
    return 0;
  }
  tinyml_status_t st = r->call();
  int ok = 1;
  const char *msg = tinyml_status_message(st);
  if (getenv("TINYML_BAD_INPUT_VERBOSE"))
    print_message("%s, %s: %s: %s\n", r->fn, r->bad,
                  tinyml_status_code_name(tinyml_status_code(st)), msg);
  if (tinyml_status_code(st) != r->code) {
    print_error("%s, %s: expected %s, got %s: %s\n", r->fn, r->bad,
                tinyml_status_code_name(r->code),
                tinyml_status_code_name(tinyml_status_code(st)), msg);
    ok = 0;
  }
  for (size_t i = 0; i < 4 && r->want[i]; ++i)
    if (!strstr(msg, r->want[i])) {
      print_error("%s, %s: the message does not name '%s': %s\n", r->fn, r->bad,
                  r->want[i], msg);
      ok = 0;
    }
  for (size_t i = 0; i < 2 && r->not[i]; ++i)
    if (strstr(msg, r->not[i])) {
      print_error("%s, %s: the message names '%s', which was fine: %s\n", r->fn, r->bad,
                  r->not[i], msg);
      ok = 0;
    }
  if (o_blob != API_SENTINEL || o_files != API_SENTINEL || o_module != API_SENTINEL ||
      o_ctx != API_SENTINEL || memcmp(&o_info, &o_info_before, sizeof o_info) != 0) {
    print_error("%s, %s: an out_ parameter was written on error\n", r->fn, r->bad);
    ok = 0;
  }
  tinyml_status_free(st);
  return ok;
}

static void test_bad_input_table(void **state) {
  (void)state;
  size_t n = sizeof rows / sizeof rows[0], failed = 0, values = 0;
  for (size_t i = 0; i < n; ++i) {
    values += rows[i].check != NULL;
    failed += !run_row(&rows[i]);
  }
  /* The table itself: every status row names what its message must say. */
  for (size_t i = 0; i < n; ++i)
    assert_true(rows[i].check || rows[i].want[0]);
  print_message("bad input: %zu rows (%zu status, %zu value), %zu failed\n", n, n - values,
                values, failed);
  assert_int_equal(failed, 0);
}

int main(int argc, char **argv) {
  api_init_model_dir(argc, argv);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bad_input_table),
  };
  return cmocka_run_group_tests(tests, setup_group, teardown_group);
}
