/* tool_util.c - see tool_util.h. */
#include "tool_util.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static void vreport(const char *fmt, va_list args) {
  fprintf(stderr, "%s: ", tool_name);
  vfprintf(stderr, fmt, args);
}

int tool_error(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vreport(fmt, args);
  va_end(args);
  fputc('\n', stderr);
  return TOOL_EXIT_FAILURE;
}

int tool_usage_error(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  vreport(fmt, args);
  va_end(args);
  fprintf(stderr, "\nTry '%s --help' for more information.\n", tool_name);
  return TOOL_EXIT_USAGE;
}

int tool_bad_option(int opt, char *const argv[]) {
  /* A missing value can only be at the end, so the last word read is the
   * option itself.  An unknown option is named by optopt if it is short
   * (it may sit inside a cluster such as -hx) and by that word if long. */
  const char *word = argv[optind - 1];
  if (opt == ':') return tool_usage_error("option '%s' needs a value", word);
  if (optopt != 0) return tool_usage_error("unknown option '-%c'", optopt);
  return tool_usage_error("unknown option '%s'", word);
}

int tool_check(tinyml_status_t status, const char *fmt, ...) {
  if (status == TINYML_OK) return 0;
  va_list args;
  va_start(args, fmt);
  vreport(fmt, args);
  va_end(args);
  fprintf(stderr, ": %s: %s\n",
          tinyml_status_code_name(tinyml_status_code(status)),
          tinyml_status_message(status));
  tinyml_status_free(status);
  return TOOL_EXIT_FAILURE;
}

int tool_print_version(void) {
  printf("%s (libtinyml %s)\n", tool_name, tinyml_version_string());
  return TOOL_DONE;
}

/* Doubles the capacity of *data (starting at 64 KiB). */
static int grow(char **data, size_t *capacity, const char *path) {
  size_t want = *capacity ? *capacity * 2 : (size_t)64 << 10;
  char *bigger = want > *capacity ? realloc(*data, want) : NULL;
  if (bigger == NULL) return tool_error("%s: file too large for memory", path);
  *data = bigger;
  *capacity = want;
  return 0;
}

/* Reads until end of file rather than trusting a size from fseek/stat, so
 * pipes such as `--input <(generator)` work too.  `hint` (a regular file's
 * size, else 0) sizes the first buffer one byte larger, so a large model
 * is read into one allocation of its size: doubling would reserve up to
 * twice the file (a 1 GiB model needing 2 GiB of address space) and copy
 * it on every step. */
static int read_all(FILE *f, const char *path, size_t hint, char **data, size_t *size) {
  size_t capacity = 0;
  *data = NULL;
  *size = 0;
  if (hint && hint < SIZE_MAX) {
    *data = malloc(hint + 1);
    if (*data == NULL) return tool_error("%s: file too large for memory", path);
    capacity = hint + 1;
  }
  for (;;) {
    if (*size == capacity && grow(data, &capacity, path) != 0) return 1;
    size_t n = fread(*data + *size, 1, capacity - *size, f);
    *size += n;
    if (n == 0) break;
  }
  if (ferror(f)) return tool_error("cannot read %s: %s", path, strerror(errno));
  return 0;
}

int tool_read_file(const char *path, void **out_data, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return tool_error("cannot open %s: %s", path, strerror(errno));
  struct stat st;
  size_t hint = 0;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      (uintmax_t)st.st_size < SIZE_MAX)
    hint = (size_t)st.st_size;
  char *data;
  size_t size;
  int rc = read_all(f, path, hint, &data, &size);
  fclose(f);
  if (rc != 0) {
    free(data);
    return rc;
  }
  *out_data = data;
  *out_size = size;
  return 0;
}

int tool_map_file(const char *path, void **out_data, size_t *out_size, int *out_mapped) {
  *out_mapped = 0;
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      (uintmax_t)st.st_size < SIZE_MAX) {
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      close(fd);
      *out_data = p;
      *out_size = (size_t)st.st_size;
      *out_mapped = 1;
      return 0;
    }
  }
  if (fd >= 0) close(fd);
  return tool_read_file(path, out_data, out_size);
}

void tool_release_file(void *data, size_t size, int mapped) {
  if (mapped) munmap(data, size);
  else free(data);
}

int tool_write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return tool_error("cannot create %s: %s", path, strerror(errno));
  size_t written = fwrite(data, 1, size, f);
  /* fclose flushes, so it can be the call that reports a full disk. */
  int closed = fclose(f);
  if (written != size || closed != 0)
    return tool_error("cannot write %s: %s", path, strerror(errno));
  return 0;
}

int tool_parse_long(const char *text, const char *option, long min, long max,
                    long *out) {
  char *end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || value < min || value > max)
    return tool_usage_error("%s: '%s' is not an integer in %ld..%ld", option,
                            text, min, max);
  *out = value;
  return 0;
}

int tool_parse_positive(const char *text, const char *option, double *out) {
  char *end;
  errno = 0;
  double value = strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !isfinite(value) ||
      !(value > 0))
    return tool_usage_error("%s: '%s' is not a positive number", option, text);
  *out = value;
  return 0;
}
