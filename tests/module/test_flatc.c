/* Cross-checks the hand-written writer and reader against flatc:
 *   our bytes --flatc--> JSON --flatc--> flatc's bytes --tmod_read--> module
 * flatc's builder lays buffers out back to front, shares vtables and omits
 * default-valued fields, so this exercises the reader on a layout the
 * writer never produces.  Also feeds the reader hostile modules that are
 * easiest to express as JSON.
 *
 * Usage: test_module_flatc FLATC SCHEMA
 *
 * Stock flatc (FLATBUFFERS_MAX_ALIGNMENT 32, e.g. Debian's 2.0.8) refuses
 * force_align: 64 when building from JSON, so the JSON-to-binary step uses
 * a copy of the schema with 32 instead.  Its blobs are then 64-aligned only
 * when the layout happens to put them there.  So the test checks that
 * flatc's buffer as built is accepted if its blobs are 64-aligned and
 * otherwise rejected for exactly that reason; then it moves each blob to
 * the end of the buffer, 64-aligned, repointing its offset (the rest of
 * flatc's layout is left as it is), and checks that this reads back equal
 * to the module written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "module_test_util.h"

static const char *flatc_path;
static const char *schema_path;
static char dir[64];
static char schema32[128];

static void run(const char *const *argv) {
  fflush(stdout);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  assert_int_equal(pid, waitpid(pid, &status, 0));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_msg("%s %s failed (status %d)", argv[0], argv[1], status);
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) fail_msg("cannot open %s", path);
  assert_int_equal(0, fseek(f, 0, SEEK_END));
  long n = ftell(f);
  assert_true(n >= 0);
  rewind(f);
  uint8_t *data = malloc((size_t)n + 1);
  assert_non_null(data);
  assert_int_equal((size_t)n, fread(data, 1, (size_t)n, f));
  fclose(f);
  data[n] = 0;
  *size = (size_t)n;
  return data;
}

static void write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) fail_msg("cannot create %s", path);
  assert_int_equal(size, fwrite(data, 1, size, f));
  assert_int_equal(0, fclose(f));
}

/* The schema with every "force_align: 64" lowered to 32 (see above). */
static void make_schema32(void) {
  size_t size;
  char *text = (char *)read_file(schema_path, &size);
  int replaced = 0;
  for (char *p = strstr(text, "force_align: 64"); p; p = strstr(p, "force_align: 64")) {
    memcpy(p + strlen("force_align: "), "32", 2);
    replaced++;
  }
  assert_int_equal(3, replaced);
  snprintf(schema32, sizeof(schema32), "%s/schema32.fbs", dir);
  write_file(schema32, text, size);
  free(text);
}

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof(dir), "/tmp/tmod-flatc-XXXXXX");
  if (!mkdtemp(dir)) return -1;
  make_schema32();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  const char *const argv[] = {"/bin/rm", "-rf", dir, NULL};
  run(argv);
  return 0;
}

/* Positions of the uoffset fields that point at blobs: the constants, the
 * state and each image.  Returns how many. */
static size_t blob_fields(const uint8_t *b, size_t fields[8]) {
  size_t n = 0, root = fb_root(b);
  size_t field = fb_field(b, root, 8);
  if (field) fields[n++] = field;
  field = fb_field(b, root, 13);
  if (field) fields[n++] = field;
  field = fb_field(b, root, 11);
  if (!field) return n;
  size_t exes = fb_deref(b, field);
  for (uint32_t i = 0; i < fb_u32(b, exes) && n < 8; i++) {
    size_t image = fb_field(b, fb_element(b, exes, i), 2);
    if (image) fields[n++] = image;
  }
  return n;
}

/* 1 when every blob of `b` starts 64-aligned. */
static int blobs_aligned(const uint8_t *b) {
  size_t fields[8], n = blob_fields(b, fields);
  for (size_t i = 0; i < n; i++)
    if ((fb_deref(b, fields[i]) + 4) % 64) return 0;
  return 1;
}

/* A copy of `b` with each blob (length and bytes) appended at the end so
 * that its bytes start 64-aligned, and its offset repointed there.  uoffsets
 * only point forward, so moving a vector later keeps the buffer valid. */
static uint8_t *realign_blobs(const uint8_t *b, size_t size, size_t *out_size) {
  size_t fields[8], n = blob_fields(b, fields), end = size;
  for (size_t i = 0; i < n; i++)
    end = (end + 4 + 63) / 64 * 64 + fb_u32(b, fb_deref(b, fields[i]));
  uint8_t *out = calloc(1, end);
  assert_non_null(out);
  memcpy(out, b, size);
  end = size;
  for (size_t i = 0; i < n; i++) {
    size_t vector = fb_deref(b, fields[i]), len = fb_u32(b, vector);
    size_t moved = (end + 4 + 63) / 64 * 64 - 4;
    memcpy(out + moved, b + vector, 4 + len);
    fb_put_u32(out, fields[i], (uint32_t)(moved - fields[i]));
    end = moved + 4 + len;
  }
  *out_size = end;
  return out;
}

/* JSON -> flatc binary, with optional extra flag; returns the bytes. */
static uint8_t *flatc_build(const char *json, const char *name, const char *flag,
                            size_t *size) {
  char out[160], path[200];
  snprintf(out, sizeof(out), "%s/%s", dir, name);
  const char *const plain[] = {flatc_path, "-b", "-o", out, schema32, json, NULL};
  const char *const flagged[] = {flatc_path, "-b", flag, "-o", out, schema32, json, NULL};
  run(flag ? flagged : plain);
  const char *base = strrchr(json, '/') + 1;
  snprintf(path, sizeof(path), "%s/%.*s.tmlm", out, (int)(strlen(base) - 5), base);
  return read_file(path, size);
}

static void read_equal(const uint8_t *data, size_t size, const tmod_module_t *expected) {
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, NULL, &m);
  if (status) fail_msg("flatc's buffer: %s", tinyml_status_message(status));
  assert_modules_equal(expected, &m);
  tmod_read_free(&m, NULL);
}

/* flatc's buffer as built: read back equal if 64-aligned, else rejected
 * for that.  Returns whether it was aligned. */
static int read_as_built(const uint8_t *data, size_t size, const tmod_module_t *expected) {
  if (blobs_aligned(data)) {
    read_equal(data, size, expected);
    return 1;
  }
  tmod_module_t m;
  tinyml_status_t status = tmod_read(data, size, NULL, &m);
  if (!status) fail_msg("a misaligned flatc buffer was accepted");
  assert_int_equal(TINYML_STATUS_INVALID_MODULE, tinyml_status_code(status));
  assert_non_null(strstr(tinyml_status_message(status), "is not 64-byte aligned"));
  tinyml_status_free(status);
  return 0;
}

static void test_flatc_roundtrip(void **state) {
  (void)state;
  sample_t s;
  sample_init(&s);
  with_state(&s); /* so flatc checks the state fields against the schema too */
  static const uint8_t kPinned[10] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  s.inputs[1].fixed_value = kPinned; /* and the fixed_value field */
  size_t size;
  uint8_t *ours = write_module(&s.module, &size);
  char module_path[128], json_dir[128], json_path[160];
  snprintf(module_path, sizeof(module_path), "%s/sample.tmlm", dir);
  snprintf(json_dir, sizeof(json_dir), "%s/json", dir);
  snprintf(json_path, sizeof(json_path), "%s/sample.json", json_dir);
  write_file(module_path, ours, size);
  const char *const to_json[] = {flatc_path, "--json", "--raw-binary",
                                 "--strict-json", "-o", json_dir, schema_path,
                                 "--", module_path, NULL};
  run(to_json);

  const char *flags[] = {NULL, "--force-defaults"};
  for (int i = 0; i < 2; i++) {
    size_t theirs_size, moved_size;
    char name[16];
    snprintf(name, sizeof(name), "bin%d", i);
    uint8_t *theirs = flatc_build(json_path, name, flags[i], &theirs_size);
    assert_memory_equal(theirs + 4, "TMLM", 4);
    int aligned = read_as_built(theirs, theirs_size, &s.module);
    uint8_t *moved = realign_blobs(theirs, theirs_size, &moved_size);
    assert_true(blobs_aligned(moved));
    read_equal(moved, moved_size, &s.module);
    print_message("flatc -b %s: %zu bytes, blobs %s; with blobs moved: equal\n",
                  flags[i] ? flags[i] : "", theirs_size,
                  aligned ? "64-aligned, reads back equal"
                          : "not 64-aligned, rejected as such");
    free(moved);
    free(theirs);
  }
  free_module_bytes(ours);
}

/* Hostile modules built by flatc from JSON, and the message expected. */
typedef struct json_case {
  const char *json;
  const char *message; /* NULL: must be accepted */
} json_case_t;

#define TENSOR(fields) "{\"format_version\": 1, \"arena_alignment\": 16, " \
                       "\"inputs\": [{\"name\": \"x\", " fields "}]}"

static const json_case_t json_cases[] = {
    {"{\"format_version\": 1, \"arena_alignment\": 16}", NULL},
    {TENSOR("\"dtype\": \"INT16\", \"dims\": [2, 0, 3], \"byte_size\": 0"), NULL},
    {"{\"arena_alignment\": 16}", "format version 0 is not supported"},
    {"{\"format_version\": 2, \"arena_alignment\": 16}", NULL},
    {"{\"format_version\": 3, \"arena_alignment\": 16}",
     "format version 3 is not supported (expected 1 or 2)"},
    {"{\"format_version\": 1}", "arena alignment 0 is not a power of two"},
    {TENSOR("\"dtype\": \"INT8\", \"dims\": [1, 1, 1, 1, 1, 1, 1, 1, 1], \"byte_size\": 1"),
     "input 0: rank 9 exceeds the maximum 8"},
    {TENSOR("\"dtype\": \"INT8\", \"dims\": [2], \"byte_size\": 2, "
            "\"quantization\": {\"scales\": [1.0, 2.0], \"zero_points\": [0]}"),
     "input 0: 2 quantisation scales but 1 zero points"},
    {TENSOR("\"dims\": [2], \"byte_size\": 2"), "input 0: dtype 0 is invalid"},
    {TENSOR("\"dtype\": \"INT8\", \"dims\": [-2], \"byte_size\": 2"),
     "input 0: dimension 0 is negative (-2)"},
    {"{\"format_version\": 1, \"arena_alignment\": 16, \"arena_size\": 100, "
     "\"steps\": [{\"kind\": \"COPY\", \"bindings\": [{\"kind\": \"ARENA\", "
     "\"index\": 0, \"offset\": 0, \"size\": 8}, {\"kind\": \"ARENA\", \"index\": 0, "
     "\"offset\": 96, \"size\": 8}]}]}",
     "step 0 binding 1: arena range [96, 104) exceeds arena size 100"},
    {TENSOR("\"dtype\": \"INT8\", \"dims\": [2], \"byte_size\": 2, \"fixed_value\": [7, 9]"),
     NULL},
    {TENSOR("\"dtype\": \"INT64\", \"dims\": [0], \"byte_size\": 0, \"fixed_value\": []"),
     NULL},
    {TENSOR("\"dtype\": \"INT8\", \"dims\": [2], \"byte_size\": 2, \"fixed_value\": [7]"),
     "input 0: 'x' has a fixed value of 1 bytes; only an input may have one, of its byte size 2"},
    {"{\"format_version\": 1, \"arena_alignment\": 16, \"outputs\": [{\"name\": \"y\", "
     "\"dtype\": \"INT8\", \"dims\": [1], \"byte_size\": 1, \"fixed_value\": [3]}]}",
     "output 0: 'y' has a fixed value of 1 bytes; only an input may have one"},
};

static void test_flatc_hostile(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
    char json[160];
    snprintf(json, sizeof(json), "%s/case%zu.json", dir, i);
    write_file(json, json_cases[i].json, strlen(json_cases[i].json));
    size_t size;
    uint8_t *data = flatc_build(json, "cases", NULL, &size);
    tmod_module_t m;
    tinyml_status_t status = tmod_read(data, size, NULL, &m);
    const char *expected = json_cases[i].message;
    if (!expected) {
      if (status) fail_msg("case %zu: %s", i, tinyml_status_message(status));
      assert_string_equal("", m.target); /* absent strings read as "" */
      tmod_read_free(&m, NULL);
    } else {
      if (!status) fail_msg("case %zu accepted, expected \"%s\"", i, expected);
      if (!strstr(tinyml_status_message(status), expected))
        fail_msg("case %zu: got \"%s\", expected \"%s\"", i,
                 tinyml_status_message(status), expected);
      tinyml_status_free(status);
    }
    free(data);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FLATC SCHEMA\n", argv[0]);
    return 2;
  }
  flatc_path = argv[1];
  schema_path = argv[2];
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_flatc_roundtrip),
      cmocka_unit_test(test_flatc_hostile),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
