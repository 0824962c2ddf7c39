/* Packaging for firmware: the static library of `--emit static-lib`. */
#ifndef TINYML_COMPILER_TOOLCHAIN_STATIC_LIB_H
#define TINYML_COMPILER_TOOLCHAIN_STATIC_LIB_H

#include "../target/target.h"
#include "emit_c.h"

/* Compiles `c` for the target and archives it with the kernels object into
 * libNAME.a, returned in *out (allocated with `a`). */
tinyml_status_t tc_build_static_lib(const tc_c_source_t *c, const uint8_t *kernels,
                                    size_t kernels_size, const char *name,
                                    const tc_target_t *tg,
                                    const tinyml_allocator_t *a, uint8_t **out,
                                    size_t *out_size);

#endif
