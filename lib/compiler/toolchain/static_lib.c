/* `--emit static-lib`: the generated schedule (emit_c.c) compiled for the
 * target and archived with the kernels object, so firmware links one
 * library and calls NAME_invoke().  clang and llvm-ar run as child
 * processes, like ld.lld in lld.c. */
#include "static_lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "spawn.h"

#ifndef TINYML_CLANG_PATH
#define TINYML_CLANG_PATH "clang"
#endif
#ifndef TINYML_AR_PATH
#define TINYML_AR_PATH "llvm-ar"
#endif

static const char *tool(const char *env, const char *fallback) {
  const char *t = getenv(env);
  return t && *t ? t : fallback;
}

static tinyml_status_t compile_schedule(const char *dir, const char *name,
                                        const tc_target_t *tg, const tinyml_allocator_t *a) {
  char src[4200], obj[4200], log[4200], target[160], cpu[160];
  const char *const *flags = tg->backend->object.schedule_cflags;
  size_t nflags = 0;
  while (flags && flags[nflags]) ++nflags;
  snprintf(src, sizeof(src), "%s/%s.c", dir, name);
  snprintf(obj, sizeof(obj), "%s/%s.o", dir, name);
  snprintf(log, sizeof(log), "%s/clang.log", dir);
  snprintf(target, sizeof(target), "--target=%s", tg->backend->triple);
  snprintf(cpu, sizeof(cpu), "-mcpu=%s", tg->cpu);
  /* The schedule is calls and copies: the backend's flags say what must
   * match the kernels (a float ABI) and how the result is linked; no
   * -mcpu otherwise, since CPU names differ between clang and LLVM. */
  const char *head[] = {tool("TINYML_CLANG", TINYML_CLANG_PATH), target, "-ffreestanding",
                        "-O2", "-ffunction-sections", "-fdata-sections", "-w", "-c", src,
                        "-o", obj};
  char *argv[sizeof head / sizeof head[0] + nflags + 1], **arg = argv;
  for (size_t i = 0; i < sizeof head / sizeof head[0]; ++i) *arg++ = (char *)head[i];
  for (size_t i = 0; i < nflags; ++i)
    *arg++ = strcmp(flags[i], "-mcpu=") == 0 ? cpu : (char *)flags[i];
  *arg = NULL;
  return tc_spawn(argv, log, "TINYML_CLANG", a);
}

static tinyml_status_t archive(const char *dir, const char *name, const tinyml_allocator_t *a) {
  char lib[4200], obj[4200], kernels[4200], log[4200];
  snprintf(lib, sizeof(lib), "%s/lib%s.a", dir, name);
  snprintf(obj, sizeof(obj), "%s/%s.o", dir, name);
  snprintf(kernels, sizeof(kernels), "%s/%s_kernels.o", dir, name);
  snprintf(log, sizeof(log), "%s/ar.log", dir);
  char *argv[] = {(char *)tool("TINYML_AR", TINYML_AR_PATH), "rcsD", "--format=gnu", lib,
                  obj, kernels, NULL};
  return tc_spawn(argv, log, "TINYML_AR", a);
}

static tinyml_status_t write_inputs(const char *dir, const char *name,
                                    const tc_c_source_t *c, const uint8_t *kernels,
                                    size_t kernels_size, const tinyml_allocator_t *a) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s.c", dir, name);
  int bad = tc_write_file(path, c->source, c->source_size);
  snprintf(path, sizeof(path), "%s/%s.h", dir, name);
  bad |= tc_write_file(path, c->header, c->header_size);
  snprintf(path, sizeof(path), "%s/%s_kernels.o", dir, name);
  bad |= tc_write_file(path, kernels, kernels_size);
  return bad ? tinyml__status_make(a, TINYML_STATUS_IO_ERROR,
                                   "compiler: cannot write to %s", dir)
             : TINYML_OK;
}

tinyml_status_t tc_build_static_lib(const tc_c_source_t *c, const uint8_t *kernels,
                                    size_t kernels_size, const char *name,
                                    const tc_target_t *tg,
                                    const tinyml_allocator_t *a, uint8_t **out,
                                    size_t *out_size) {
  char dir[4096];
  TINYML_RETURN_IF_ERROR(tc_temp_dir(dir, sizeof(dir), a));
  tinyml_status_t st = write_inputs(dir, name, c, kernels, kernels_size, a);
  if (!st) st = compile_schedule(dir, name, tg, a);
  if (!st) st = archive(dir, name, a);
  if (!st) {
    char lib[4200];
    snprintf(lib, sizeof(lib), "%s/lib%s.a", dir, name);
    st = tc_read_file(lib, a, out, out_size);
  }
  tc_temp_dir_remove(dir);
  return st;
}
