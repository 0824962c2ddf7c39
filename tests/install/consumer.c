/* A user's program: only the installed header and library.  Compiles a
 * batched matmul model, runs it, and checks every element against a loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <tinyml.h>

static char *read_text(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return buf;
}

static int fail(tinyml_status_t st, const char *what) {
  fprintf(stderr, "consumer: %s: %s\n", what, tinyml_status_message(st));
  tinyml_status_free(st);
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2 || TINYML_VERSION_NUMBER != tinyml_version_number()) return 2;
  size_t size = 0;
  char *text = read_text(argv[1], &size);
  if (!text) return 2;
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *m = NULL;
  tinyml_context_t *c = NULL;
  tinyml_status_t st = tinyml_compile(text, size, NULL, &blob);
  free(text);
  if (st) return fail(st, "compile");
  if ((st = tinyml_module_load(tinyml_blob_data(blob), tinyml_blob_size(blob), NULL, &m)))
    return fail(st, "load");
  if ((st = tinyml_context_create(m, NULL, &c))) return fail(st, "context");
  enum { B = 2, M = 7, K = 13, N = 5 };
  static float a[B * M * K], b[B * K * N], out[B * M * N];
  for (int i = 0; i < B * M * K; ++i) a[i] = (float)(i % 11) / 11.0f - 0.5f;
  for (int i = 0; i < B * K * N; ++i) b[i] = (float)(i % 7) / 7.0f - 0.5f;
  if ((st = tinyml_context_set_input(c, 0, a, sizeof(a))) ||
      (st = tinyml_context_set_input(c, 1, b, sizeof(b))) ||
      (st = tinyml_context_set_output(c, 0, out, sizeof(out))) ||
      (st = tinyml_context_invoke(c)))
    return fail(st, "invoke");
  for (int z = 0; z < B; ++z)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double want = 0;
        for (int k = 0; k < K; ++k) want += a[(z * M + i) * K + k] * b[(z * K + k) * N + j];
        if (fabs(out[(z * M + i) * N + j] - want) > 1e-4) {
          fprintf(stderr, "consumer: mismatch at %d,%d,%d\n", z, i, j);
          return 1;
        }
      }
  printf("consumer: libtinyml %s ran %s correctly\n", tinyml_version_string(), argv[1]);
  tinyml_context_release(c);
  tinyml_module_release(m);
  tinyml_blob_release(blob);
  return 0;
}
