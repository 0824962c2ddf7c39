/*
 * digits - the quick start: compiles the repo's own digits model with
 * libtinyml, runs it on the 360 digits held back from training, and prints
 * the accuracy.
 *
 *   digits MODEL.tflite TEST.bin [MIN_ACCURACY]
 *   digits MODEL.tmlm TEST.bin [MIN_ACCURACY]
 *
 * A MODEL.tmlm (from tinyml-compile) is loaded as it is, so a libtinyml built
 * without the compiler runs it too (examples/meson-subproject does).
 * With MIN_ACCURACY (e.g. 0.96) it exits 1 when the accuracy is lower.
 * TEST.bin holds records of 64 pixel bytes (8x8, values 0..16) and a label
 * byte, as examples/digits/train.py writes them.  The model's input is the
 * 64 pixels / 16 as float32; its output is 10 class probabilities.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tinyml.h>

enum { kPixels = 64, kClasses = 10, kRecord = kPixels + 1 };

static int fail(tinyml_status_t st, const char *what) {
  fprintf(stderr, "digits: %s: %s\n", what, tinyml_status_message(st));
  tinyml_status_free(st);
  return 1;
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = n > 0 ? malloc((size_t)n) : NULL;
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = data ? (size_t)n : 0;
  return data;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The module uses the blob's bytes in place (constants are not copied), so
 * the blob lives as long as the module.  A compiled module needs no blob. */
static tinyml_status_t load(const char *path, tinyml_blob_t **blob, tinyml_module_t **module) {
  if (ends_with(path, ".tmlm")) return tinyml_module_load_file(path, NULL, module);
  size_t size;
  void *model = read_file(path, &size);
  if (!model) {
    fprintf(stderr, "digits: cannot read %s\n", path);
    exit(1);
  }
  tinyml_status_t st = tinyml_compile(model, size, NULL, blob); /* host target */
  free(model);
  if (!st) st = tinyml_module_load(tinyml_blob_data(*blob), tinyml_blob_size(*blob), NULL, module);
  return st;
}

static int argmax(const float *p) {
  int best = 0;
  for (int i = 1; i < kClasses; ++i)
    if (p[i] > p[best]) best = i;
  return best;
}

#define CHECK(call)                  \
  do {                               \
    tinyml_status_t st_ = (call);    \
    if (st_) return st_;             \
  } while (0)

/* Classifies every record; counts the right answers. */
static tinyml_status_t classify_all(tinyml_context_t *ctx, const uint8_t *records, size_t count,
                                    size_t *right) {
  float pixels[kPixels] = {0}, probs[kClasses] = {0};
  CHECK(tinyml_context_set_input(ctx, 0, pixels, sizeof pixels));
  CHECK(tinyml_context_set_output(ctx, 0, probs, sizeof probs));
  *right = 0;
  for (size_t r = 0; r < count; ++r) {
    const uint8_t *rec = records + r * kRecord;
    for (int i = 0; i < kPixels; ++i) pixels[i] = rec[i] / 16.0f;
    CHECK(tinyml_context_invoke(ctx));
    int guess = argmax(probs);
    *right += guess == rec[kPixels];
    if (r < 5) printf("digit %zu: label %d, predicted %d (p=%.3f)\n", r, rec[kPixels], guess, probs[guess]);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 3 && argc != 4) {
    fprintf(stderr, "usage: digits MODEL.tflite|MODEL.tmlm TEST.bin [MIN_ACCURACY]\n");
    return 2;
  }
  size_t size;
  uint8_t *records = read_file(argv[2], &size);
  if (!records || size % kRecord) {
    fprintf(stderr, "digits: %s is not a file of %d-byte records\n", argv[2], kRecord);
    return 1;
  }
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *module = NULL;
  tinyml_context_t *ctx = NULL;
  tinyml_status_t st = load(argv[1], &blob, &module);
  if (st) return fail(st, "cannot compile or load the model");
  st = tinyml_context_create(module, NULL, &ctx);
  size_t right = 0, count = size / kRecord;
  if (!st) st = classify_all(ctx, records, count, &right);
  tinyml_context_release(ctx);
  tinyml_module_release(module);
  tinyml_blob_release(blob);
  free(records);
  if (st) return fail(st, "inference failed");
  double accuracy = (double)right / (double)count;
  printf("accuracy: %zu/%zu = %.2f%% on held-back digits\n", right, count, 100.0 * accuracy);
  return argc == 4 && accuracy < atof(argv[3]) ? 1 : 0;
}
