/*
 * tool_util.h - helpers shared by the command-line tools.  Not installed and
 * not part of the library: the tools only use the public API of tinyml.h.
 */
#ifndef TINYML_TOOL_UTIL_H
#define TINYML_TOOL_UTIL_H

#include <stddef.h>

#include "tinyml.h"

#if defined(__GNUC__)
#define TOOL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define TOOL_PRINTF(fmt, args)
#endif

/* Exit codes, the same for every tool. */
enum {
  TOOL_EXIT_OK = 0,
  TOOL_EXIT_FAILURE = 1, /* the work itself failed */
  TOOL_EXIT_USAGE = 2,   /* bad command line */
  /* Not an exit code: argument parsing already did everything (--help,
   * --version) and the tool should exit with TOOL_EXIT_OK. */
  TOOL_DONE = -1,
};

/* Each tool defines its name; every message starts with it so that errors
 * from pipelines of tools say which one failed. */
extern const char tool_name[];

/* Prints "NAME: message" to stderr and returns TOOL_EXIT_FAILURE, so callers
 * can write `return tool_error(...)`. */
int tool_error(const char *fmt, ...) TOOL_PRINTF(1, 2);

/* As tool_error(), then points at --help; returns TOOL_EXIT_USAGE. */
int tool_usage_error(const char *fmt, ...) TOOL_PRINTF(1, 2);

/* Reports the '?' or ':' that getopt_long() returned (the tools set opterr
 * to 0 and start optstring with ':' so that they word the message themselves,
 * without argv[0]'s full path).  Returns TOOL_EXIT_USAGE. */
int tool_bad_option(int opt, char *const argv[]);

/* Returns 0 for TINYML_OK.  Otherwise prints "NAME: <context>: CODE: message"
 * to stderr, frees `status` and returns TOOL_EXIT_FAILURE. */
int tool_check(tinyml_status_t status, const char *fmt, ...) TOOL_PRINTF(2, 3);

/* Prints "NAME (libtinyml X.Y.Z)" to stdout and returns TOOL_DONE. */
int tool_print_version(void);

/* Reads the whole of `path` (any file, pipes included) into a malloc'd buffer
 * of at least one byte, which malloc aligns for every tinyml dtype.  Returns
 * 0, or prints an error and returns TOOL_EXIT_FAILURE. */
int tool_read_file(const char *path, void **out_data, size_t *out_size);

/* Like tool_read_file, but maps a regular file read-only instead of
 * copying it (falling back to reading for pipes and empty files), so that
 * the pages of a model are only touched as the importer reads them: a
 * model that a limit refuses on its header costs no memory for the rest
 * (a 1 GiB constant: about 0.2 s instead of 4 s of page faults).  Truncating
 * the file while it is mapped is the caller's own SIGBUS.  *out_mapped
 * says which; release with tool_release_file. */
int tool_map_file(const char *path, void **out_data, size_t *out_size, int *out_mapped);
void tool_release_file(void *data, size_t size, int mapped);

/* Writes `size` bytes to `path`, replacing it.  Returns 0 or prints an error
 * and returns TOOL_EXIT_FAILURE. */
int tool_write_file(const char *path, const void *data, size_t size);

/* Parses all of `text` as a decimal integer in [min, max], the argument of
 * `option` (used in the message).  Returns 0 or TOOL_EXIT_USAGE. */
int tool_parse_long(const char *text, const char *option, long min, long max,
                    long *out);

/* Parses all of `text` as a finite number > 0.  Returns 0 or
 * TOOL_EXIT_USAGE. */
int tool_parse_positive(const char *text, const char *option, double *out);

#endif
