/* Child processes and their files (spawn.h).  Files live in a private
 * temp directory that the caller always removes. */
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../common/alloc.h"
#include "../../common/status.h"

extern char **environ;

int tc_write_file(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t n = fwrite(data, 1, size, f);
  int rc = fclose(f);
  return (n == size && rc == 0) ? 0 : -1;
}

tinyml_status_t tc_read_file(const char *path, const tinyml_allocator_t *a, uint8_t **out,
                             size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return tinyml__status_make(a, TINYML_STATUS_INTERNAL, "compiler: %s was not produced", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = n > 0 ? tinyml__alloc(a, (size_t)n, 64) : NULL;
  tinyml_status_t st = TINYML_OK;
  if (n <= 0) st = tinyml__status_make(a, TINYML_STATUS_INTERNAL, "compiler: %s is empty", path);
  else if (!buf) st = tinyml__status_make(a, TINYML_STATUS_OUT_OF_MEMORY, "compiler: out of memory");
  else if (fread(buf, 1, (size_t)n, f) != (size_t)n)
    st = tinyml__status_make(a, TINYML_STATUS_IO_ERROR, "compiler: cannot read %s", path);
  fclose(f);
  if (st) {
    tinyml__free(a, buf);
    return st;
  }
  *out = buf;
  *out_size = (size_t)n;
  return TINYML_OK;
}

tinyml_status_t tc_temp_dir(char *dir, size_t cap, const tinyml_allocator_t *a) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, cap, "%s/tinyml-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir))
    return tinyml__status_make(a, TINYML_STATUS_IO_ERROR,
                               "compiler: cannot create a temp directory: %s", strerror(errno));
  return TINYML_OK;
}

void tc_temp_dir_remove(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    char path[4400];
    for (struct dirent *e; (e = readdir(d));) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* The tool's output goes to `log`, whose start becomes the error message. */
tinyml_status_t tc_spawn(char *const *argv, const char *log, const char *env_hint,
                         const tinyml_allocator_t *a) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return tinyml__status_make(a, TINYML_STATUS_INTERNAL,
                               "compiler: cannot run '%s': %s (set %s)", argv[0],
                               strerror(rc), env_hint);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return TINYML_OK;
  char text[1024] = "";
  FILE *f = fopen(log, "r");
  if (f) {
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
  }
  return tinyml__status_make(a, TINYML_STATUS_INTERNAL, "compiler: %s failed: %s", argv[0], text);
}
