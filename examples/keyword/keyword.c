/*
 * keyword - spots the spoken word in 49 frames x 10 MFCC features with the
 * MLPerf Tiny keyword-spotting model.  The features arrive as int16 (Q8.8:
 * value / 256), as a fixed-point front end produces them; scaling and
 * quantising them to the model's int8 input is compiled into the model
 * (tinyml_preprocess_t, INT16), and so are dequantising and picking the
 * best class (tinyml_postprocess_t, top-1).
 *
 *   keyword MODEL.tflite FEATURES.bin [--std S]
 *
 * FEATURES.bin: 490 little-endian int16.  --std: the int16 value of 1.0
 * (default 256).  Prints `<word> <class-index> <score>`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tinyml.h>

/* The MLPerf Tiny KWS classes, in the model's output order. */
static const char *const kWords[] = {"down", "go",   "left", "no", "off",     "on",
                                     "right", "stop", "up",  "yes", "silence", "unknown"};
enum { kWordCount = sizeof kWords / sizeof kWords[0] };

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

static tinyml_status_t compile(const char *path, float std, tinyml_blob_t **blob,
                               tinyml_module_t **module) {
  size_t size;
  void *model = read_file(path, &size);
  if (!model) {
    fprintf(stderr, "keyword: cannot read %s\n", path);
    exit(1);
  }
  tinyml_preprocess_t pre;
  tinyml_preprocess_init(&pre);
  pre.kind = TINYML_INPUT_INT16;
  pre.channel_count = 1;
  pre.std[0] = std;
  tinyml_postprocess_t post;
  tinyml_postprocess_init(&post);
  post.dequantize = 1;
  post.top_k = 1;
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.preprocess = &pre;
  o.postprocess = &post;
  tinyml_status_t st = tinyml_compile(model, size, &o, blob);
  free(model);
  /* The module uses the blob's bytes in place: keep the blob until the end. */
  if (!st) st = tinyml_module_load(tinyml_blob_data(*blob), tinyml_blob_size(*blob), NULL, module);
  return st;
}

static tinyml_status_t spot(const tinyml_module_t *m, const void *features, size_t size,
                            int32_t *word, float *score) {
  tinyml_tensor_info_t in;
  tinyml_tensor_info_init(&in);
  tinyml_status_t st = tinyml_module_input_info(m, 0, &in);
  if (st) return st;
  if (in.byte_size != size) {
    fprintf(stderr, "keyword: the model takes %zu bytes of int16 features; the file has %zu\n",
            in.byte_size, size);
    exit(1);
  }
  tinyml_context_t *ctx = NULL;
  st = tinyml_context_create(m, NULL, &ctx);
  if (!st) st = tinyml_context_set_input(ctx, 0, features, size);
  if (!st) st = tinyml_context_set_output(ctx, 0, word, sizeof *word);
  if (!st) st = tinyml_context_set_output(ctx, 1, score, sizeof *score);
  if (!st) st = tinyml_context_invoke(ctx);
  tinyml_context_release(ctx);
  return st;
}

int main(int argc, char **argv) {
  float std = 256.0f;
  if (argc == 5 && strcmp(argv[3], "--std") == 0) std = strtof(argv[4], NULL);
  if ((argc != 3 && argc != 5) || std == 0.0f) {
    fprintf(stderr, "usage: keyword MODEL.tflite FEATURES.bin [--std S]\n");
    return 2;
  }
  size_t size;
  void *features = read_file(argv[2], &size);
  if (!features) {
    fprintf(stderr, "keyword: cannot read %s\n", argv[2]);
    return 1;
  }
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *module = NULL;
  int32_t word = -1;
  float score = 0.0f;
  tinyml_status_t st = compile(argv[1], std, &blob, &module);
  if (!st) st = spot(module, features, size, &word, &score);
  tinyml_module_release(module);
  tinyml_blob_release(blob);
  free(features);
  if (st) {
    fprintf(stderr, "keyword: %s\n", tinyml_status_message(st));
    tinyml_status_free(st);
    return 1;
  }
  printf("%s %d %.4f\n", word >= 0 && word < kWordCount ? kWords[word] : "?", (int)word,
         (double)score);
  return 0;
}
