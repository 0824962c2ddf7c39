/* Reads a fixture built by meson (passed to the tests as arguments). */
#ifndef TESTS_RUNTIME_FIXTURE_FILE_H
#define TESTS_RUNTIME_FIXTURE_FILE_H

#include <stddef.h>
#include <stdint.h>

/* Reads `path` into a malloc'ed buffer; aborts the test run on failure. */
uint8_t *fixture_read(const char *path, size_t *size);

#endif
