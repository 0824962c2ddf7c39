/* Linking a module's executable with ld.lld. */
#ifndef TINYML_COMPILER_TOOLCHAIN_LLD_H
#define TINYML_COMPILER_TOOLCHAIN_LLD_H

#include <stddef.h>
#include <stdint.h>

#include "../target/target.h"

/* Links a relocatable object into the ELF shared object the runtime's loader
 * takes, with ld.lld (path from $TINYML_LLD or the build's configuration)
 * and the backend's emulation. */
tinyml_status_t tc_link_shared(const uint8_t *obj, size_t obj_size, const tc_target_t *target,
                               const tinyml_allocator_t *a, uint8_t **out_so, size_t *out_size);

#endif
