/* Linking runs ld.lld as a child process, as IREE does for its embedded ELF:
 * LLVM's linker has no C API. */
#include "lld.h"

#include <stdio.h>
#include <stdlib.h>

#include "../../common/status.h"
#include "../../module/executable_abi.h"
#include "spawn.h"

#ifndef TINYML_LLD_PATH
#define TINYML_LLD_PATH "ld.lld"
#endif

static tinyml_status_t run_lld(const char *dir, const tc_target_t *tg,
                               const tinyml_allocator_t *a) {
  const char *lld = getenv("TINYML_LLD");
  if (!lld || !*lld) lld = TINYML_LLD_PATH;
  char in[4200], out[4200], log[4200];
  snprintf(in, sizeof(in), "%s/kernels.o", dir);
  snprintf(out, sizeof(out), "%s/kernels.so", dir);
  snprintf(log, sizeof(log), "%s/lld.log", dir);
  /* The flags lib/runtime/elf/elf_loader.c documents and expects. */
  char *argv[] = {(char *)lld, "-m", (char *)tg->backend->object.lld_emulation, "-shared",
                  "-e", TINYML_EXE_QUERY_SYMBOL, "-Bsymbolic", "-z", "now",
                  "-z", "relro", "--hash-style=sysv", "--strip-all",
                  "--gc-sections", "-z", "max-page-size=4096",
                  "-o", out, in, NULL};
  return tc_spawn(argv, log, "TINYML_LLD", a);
}

tinyml_status_t tc_link_shared(const uint8_t *obj, size_t obj_size,
                               const tc_target_t *tg,
                               const tinyml_allocator_t *a, uint8_t **out_so,
                               size_t *out_size) {
  char dir[4096];
  TINYML_RETURN_IF_ERROR(tc_temp_dir(dir, sizeof(dir), a));
  char in[4200];
  snprintf(in, sizeof(in), "%s/kernels.o", dir);
  tinyml_status_t st = TINYML_OK;
  if (tc_write_file(in, obj, obj_size) != 0)
    st = tinyml__status_make(a, TINYML_STATUS_IO_ERROR, "compiler: cannot write %s", in);
  if (!st) st = run_lld(dir, tg, a);
  if (!st) {
    char out[4200];
    snprintf(out, sizeof(out), "%s/kernels.so", dir);
    st = tc_read_file(out, a, out_so, out_size);
  }
  tc_temp_dir_remove(dir);
  return st;
}
