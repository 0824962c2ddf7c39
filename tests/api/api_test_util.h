/* Shared by the public-API tests: files, models, status checks, a counting
 * allocator and I/O buffers sized from a module's own description.  Uses only
 * the public header (tinyml.h), so the tests exercise the shared library the
 * way a user does. */
#ifndef TINYML_TESTS_API_TEST_UTIL_H
#define TINYML_TESTS_API_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml.h"

#define API_MAX_IO 8

/* ---- files and models ---------------------------------------------------- */

/* The directory of the *.mlir models (tests/e2e/models), from argv[1] or the
 * environment variable TINYML_API_MODELS.  Exits with a usage message when
 * neither is given.  Call first in main(). */
void api_init_model_dir(int argc, char **argv);
const char *api_model_dir(void);

/* Reads a whole file into malloc'd memory (NUL-terminated); NULL if it
 * cannot be read.  Free with free(). */
char *api_read_file(const char *path, size_t *size);
/* Whether `<shared>/<rel>` (a file or directory of ../shared) exists.  When
 * it does not: cmocka-fails under CI=true, which must provide ../shared,
 * else prints "SKIP: ... is missing" and returns 0. */
int api_shared_present(const char *shared, const char *rel);
/* Reads `<model dir>/<name>.mlir`; cmocka-fails when it cannot. */
char *api_read_model(const char *name, size_t *size);

/* A unique path under $TMPDIR (or /tmp) ending in `suffix`; the caller
 * removes the file.  `buf` must hold at least 256 bytes. */
const char *api_temp_path(char *buf, size_t cap, const char *suffix);
/* The same for a new, empty directory; the caller removes it. */
const char *api_temp_dir(char *buf, size_t cap);

/* Threads of this process, from /proc/self/task; -1 without /proc. */
int api_process_threads(void);

/* ---- statuses ------------------------------------------------------------ */

/* Returns the status of `expr` from the calling function if it is not OK. */
#define API_RETURN_IF_ERROR(expr)                                              \
  do {                                                                         \
    tinyml_status_t api__st = (expr);                                          \
    if (api__st) return api__st;                                               \
  } while (0)

/* cmocka-fails (printing code and message) unless `status` is TINYML_OK. */
void api_assert_ok(tinyml_status_t status, const char *what);
/* cmocka-asserts the code and that the message contains every one of the
 * NULL-terminated `needles`, then frees the status. */
void api_expect_error_v(tinyml_status_t status, tinyml_status_code_t code,
                        const char *const *needles);
#define api_expect_error(status, code, ...)                                    \
  api_expect_error_v((status), (code), (const char *const[]){__VA_ARGS__, NULL})

/* Out parameters must keep this value when a call fails. */
#define API_SENTINEL ((void *)(uintptr_t)0x5a5a5a50)

/* ---- compile and load ---------------------------------------------------- */

/* Compiles the model file at `path` with `options` (NULL = defaults);
 * cmocka-fails on error. */
tinyml_blob_t *api_compile_file(const char *path,
                                const tinyml_compile_options_t *options);
/* The same for `<model dir>/<name>.mlir`. */
tinyml_blob_t *api_compile_model(const char *name,
                                 const tinyml_compile_options_t *options);
/* Loads `blob` (which must outlive the module) with default options. */
tinyml_module_t *api_load_blob(const tinyml_blob_t *blob);

/* A model of the model dir compiled and loaded once for a cmocka group. */
typedef struct api_fixture {
  const char *model;
  tinyml_blob_t *blob;
  tinyml_module_t *module;
} api_fixture_t;

/* The two models the contract tests share (test_api_contract.c,
 * test_api_context.c): api_add, three inputs and one output, no arena; and
 * api_conv, one input with weights and an arena.  api_fixtures_setup, a
 * cmocka group setup, compiles and loads both once for the group
 * (cmocka-fails on error); api_fixtures_teardown releases them. */
extern api_fixture_t api_add, api_conv;
int api_fixtures_setup(void **state);
int api_fixtures_teardown(void **state);

/* `size` bytes copied to an address that is `offset` bytes past a multiple
 * of `alignment`.  Free with api_aligned_free(). */
uint8_t *api_aligned_copy(const void *data, size_t size, size_t alignment,
                          size_t offset);
void api_aligned_free(void *p);

/* ---- a counting, failing allocator --------------------------------------- */

typedef struct api_counting_alloc {
  tinyml_allocator_t allocator; /* pass this to the library */
  size_t allocs, frees;         /* successful allocations, frees */
  size_t calls;                 /* alloc calls, including failed ones */
  size_t live_bytes;            /* bytes allocated and not yet freed */
  size_t fail_at;               /* call number to fail (1-based), 0 = none */
  int fail_after;               /* also fail every call after fail_at */
  size_t bad_requests;          /* alignments the contract does not allow */
  size_t max_size;              /* larger requests fail; 0 = no limit */
} api_counting_alloc_t;

/* Counts from zero, with no size limit. */
void api_counting_alloc_init(api_counting_alloc_t *c, size_t fail_at,
                             int fail_after);

/* ---- I/O buffers --------------------------------------------------------- */

/* One exactly sized, 64-byte aligned buffer per input and output of a
 * module, sized from the module's own tensor info.  Inputs are filled with
 * deterministic values: float32 in [-1, 1), bools 0 or 1, and every other
 * element made of bytes 1 and 2 (never zero, so integer divisors are safe). */
typedef struct api_io {
  size_t input_count, output_count;
  void *inputs[API_MAX_IO], *outputs[API_MAX_IO];
  size_t input_sizes[API_MAX_IO], output_sizes[API_MAX_IO];
} api_io_t;

/* Returns 0 and leaves `io` empty (safe to free) when the module has more
 * than API_MAX_IO tensors or a tensor is larger than `max_bytes`. */
int api_io_alloc(const tinyml_module_t *module, size_t max_bytes,
                 uint32_t seed, api_io_t *io);
void api_io_free(api_io_t *io);
/* Binds every buffer; returns the first error. */
tinyml_status_t api_io_bind(tinyml_context_t *context, const api_io_t *io);
/* Fills every output with `byte`, so a later compare sees what was written. */
void api_io_poison_outputs(api_io_t *io, uint8_t byte);
/* 1 when both have the same output sizes and bytes. */
int api_io_outputs_equal(const api_io_t *a, const api_io_t *b);

/* Creates a context (with `options`, may be NULL), binds `io`, invokes
 * `invokes` times and releases the context; returns the first error. */
tinyml_status_t api_run(const tinyml_module_t *module,
                        const tinyml_context_options_t *options, api_io_t *io,
                        int invokes);

/* Allocates `io` for `module` with inputs from `seed`, poisons its outputs
 * and runs it once in a fresh context; cmocka-fails on error.  The caller
 * frees `io`. */
void api_run_seeded(const tinyml_module_t *module, uint32_t seed, api_io_t *io);

/* Monotonic seconds. */
double api_now(void);

#endif
