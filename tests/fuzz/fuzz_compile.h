/* The compile step shared by fuzz_tflite and fuzz_onnx (fuzz_compile.c). */
#ifndef TINYML_TESTS_FUZZ_COMPILE_H
#define TINYML_TESTS_FUZZ_COMPILE_H

#include <stddef.h>
#include <stdint.h>

/* Compiles `data` through tinyml_compile() when it is small enough to
 * compile in well under the fuzzer's timeout, then loads the module and
 * invokes it once, and for one input in eight (by a hash of its bytes) also
 * compiles it to C; aborts on any broken promise (a leak, a status and a
 * module together, a compiled module that does not load or run, a C form
 * that fails where the module compiled). */
void fuzz_compile(const uint8_t *data, size_t size);

#endif
