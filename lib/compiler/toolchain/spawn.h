/* Running the LLVM tools that have no C API (ld.lld, clang, llvm-ar) as
 * child processes, on files in a private temp directory. */
#ifndef TINYML_COMPILER_TOOLCHAIN_SPAWN_H
#define TINYML_COMPILER_TOOLCHAIN_SPAWN_H

#include <stddef.h>
#include <stdint.h>

#include "tinyml.h"

/* 0 when all `size` bytes reached `path`. */
int tc_write_file(const char *path, const void *data, size_t size);
/* The whole of `path`, allocated with `a`; an error when missing or empty. */
tinyml_status_t tc_read_file(const char *path, const tinyml_allocator_t *a, uint8_t **out,
                             size_t *out_size);
/* A new private directory under $TMPDIR (or /tmp) in `dir`. */
tinyml_status_t tc_temp_dir(char *dir, size_t cap, const tinyml_allocator_t *a);
/* Removes `dir` and the files in it. */
void tc_temp_dir_remove(const char *dir);
/* Runs argv[0] with its output to `log` and waits; a failure quotes the
 * log and names `env_hint`, the environment variable that overrides the
 * tool. */
tinyml_status_t tc_spawn(char *const *argv, const char *log, const char *env_hint,
                         const tinyml_allocator_t *a);

#endif
