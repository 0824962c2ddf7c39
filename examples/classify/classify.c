/*
 * classify - labels an image with an image-classification model, feeding the
 * BMP's pixels straight to the model: resizing, colour conversion,
 * normalisation and quantisation are compiled into the model's graph
 * (tinyml_preprocess_t), and so is picking the top K (tinyml_postprocess_t).
 *
 *   classify MODEL IMAGE.bmp [--mean M] [--std S] [--top K] [--labels FILE]
 *
 * MODEL is a .tflite or .onnx model, compiled here for this image's size and
 * format; or a module (.tmlm) that tinyml-compile made with --input-image
 * (the build compiles one: see meson.build).  Prints the top K classes, best
 * first: `<class-index> <score> [label]`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tinyml.h>

#include "bmp.h"

typedef struct args {
  const char *model, *image, *labels;
  float mean, std;
  uint32_t top;
} args_t;

static int usage(const char *why) {
  if (why) fprintf(stderr, "classify: %s\n", why);
  fprintf(stderr, "usage: classify MODEL IMAGE.bmp [--mean M] [--std S] [--top K] "
                  "[--labels FILE]\n");
  return 2;
}

static int parse_args(int argc, char **argv, args_t *a) {
  *a = (args_t){NULL, NULL, NULL, 0.0f, 1.0f, 1};
  for (int i = 1; i < argc; ++i) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(argv[i], "--mean") == 0 && v) a->mean = strtof(argv[++i], NULL);
    else if (strcmp(argv[i], "--std") == 0 && v) a->std = strtof(argv[++i], NULL);
    else if (strcmp(argv[i], "--top") == 0 && v) a->top = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--labels") == 0 && v) a->labels = argv[++i];
    else if (argv[i][0] == '-') return usage("unknown option or missing value");
    else if (!a->model) a->model = argv[i];
    else if (!a->image) a->image = argv[i];
    else return usage("too many arguments");
  }
  if (!a->model || !a->image) return usage("MODEL and IMAGE are required");
  if (a->top == 0 || a->std == 0.0f) return usage("--top must be > 0 and --std not 0");
  return 0;
}

/* The model with this image's pre-processing and a fused top-K.  The blob
 * holds the module's bytes, which the module uses in place. */
static tinyml_status_t compile_for(const args_t *a, const bmp_image_t *img, tinyml_blob_t **blob,
                                   tinyml_module_t **module) {
  size_t size;
  void *model = read_whole_file(a->model, &size);
  if (!model) {
    fprintf(stderr, "classify: cannot read %s\n", a->model);
    exit(1);
  }
  tinyml_preprocess_t pre;
  tinyml_preprocess_init(&pre);
  pre.kind = TINYML_INPUT_IMAGE;
  pre.pixels = img->channels == 1 ? TINYML_PIXELS_GRAY8 : TINYML_PIXELS_RGB888;
  pre.image_width = img->width;
  pre.image_height = img->height;
  pre.channel_count = 1;
  pre.mean[0] = a->mean;
  pre.std[0] = a->std;
  tinyml_postprocess_t post;
  tinyml_postprocess_init(&post);
  post.dequantize = 1;
  post.top_k = a->top;
  tinyml_compile_options_t o;
  tinyml_compile_options_init(&o);
  o.preprocess = &pre;
  o.postprocess = &post;
  tinyml_status_t st = tinyml_compile(model, size, &o, blob);
  free(model);
  if (!st) st = tinyml_module_load(tinyml_blob_data(*blob), tinyml_blob_size(*blob), NULL, module);
  return st;
}

static int is_module_file(const char *path) {
  FILE *f = fopen(path, "rb");
  char head[8] = {0};
  int yes = f && fread(head, 1, 8, f) == 8 && memcmp(head + 4, "TMLM", 4) == 0;
  if (f) fclose(f);
  return yes;
}

/* Finds output `name`; -1 when the module has none. */
static int output_named(const tinyml_module_t *m, const char *name, tinyml_tensor_info_t *info) {
  for (size_t i = 0; i < tinyml_module_output_count(m); ++i) {
    tinyml_tensor_info_init(info);
    if (!tinyml_module_output_info(m, i, info) && strcmp(info->name, name) == 0) return (int)i;
  }
  return -1;
}

/* Line `index` of the labels file, as a pointer and a length. */
static int label_of(const char *labels, size_t n, uint32_t index, const char **line) {
  const char *p = labels, *end = labels + n;
  for (uint32_t i = 0; p < end; ++i) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t len = (size_t)((nl ? nl : end) - p);
    if (i == index) {
      *line = p;
      return (int)len;
    }
    p += len + 1;
  }
  *line = "";
  return 0;
}

typedef struct results {
  int32_t *indices;
  float *scores;
  size_t k;
} results_t;

static tinyml_status_t run(const tinyml_module_t *m, const bmp_image_t *img, results_t *r) {
  tinyml_tensor_info_t in, idx, sc;
  tinyml_tensor_info_init(&in);
  tinyml_status_t st = tinyml_module_input_info(m, 0, &in);
  if (st) return st;
  int oi = output_named(m, "top_k_indices", &idx), os = output_named(m, "top_k_scores", &sc);
  size_t image_bytes = (size_t)img->width * img->height * img->channels;
  if (oi < 0 || os < 0 || in.byte_size != image_bytes) {
    fprintf(stderr, "classify: the module must take a %ux%u %s image (%zu bytes; it takes %zu) "
                    "and have top-K outputs; compile it with --input-image and --top-k\n",
            img->width, img->height, img->channels == 1 ? "gray8" : "rgb888", image_bytes,
            in.byte_size);
    exit(1);
  }
  r->k = idx.byte_size / sizeof(int32_t);
  r->indices = malloc(idx.byte_size);
  r->scores = malloc(sc.byte_size);
  tinyml_context_t *ctx = NULL;
  st = tinyml_context_create(m, NULL, &ctx);
  if (!st) st = tinyml_context_set_input(ctx, 0, img->pixels, image_bytes);
  if (!st) st = tinyml_context_set_output(ctx, (size_t)oi, r->indices, idx.byte_size);
  if (!st) st = tinyml_context_set_output(ctx, (size_t)os, r->scores, sc.byte_size);
  if (!st) st = tinyml_context_invoke(ctx);
  tinyml_context_release(ctx);
  return st;
}

int main(int argc, char **argv) {
  args_t a;
  int rc = parse_args(argc, argv, &a);
  if (rc) return rc;
  bmp_image_t img;
  char why[512];
  if (bmp_read(a.image, &img, why, sizeof why) != 0) {
    fprintf(stderr, "classify: %s\n", why);
    return 1;
  }
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *module = NULL;
  tinyml_status_t st = is_module_file(a.model)
                           ? tinyml_module_load_file(a.model, NULL, &module)
                           : compile_for(&a, &img, &blob, &module);
  results_t r = {NULL, NULL, 0};
  if (!st) st = run(module, &img, &r);
  if (st) {
    fprintf(stderr, "classify: %s: %s\n", a.model, tinyml_status_message(st));
    tinyml_status_free(st);
    return 1;
  }
  size_t labels_size = 0;
  char *labels = a.labels ? read_whole_file(a.labels, &labels_size) : NULL;
  for (size_t i = 0; i < r.k && i < a.top; ++i) {
    const char *label = "";
    int len = labels ? label_of(labels, labels_size, (uint32_t)r.indices[i], &label) : 0;
    printf("%d %.6f%s%.*s\n", (int)r.indices[i], (double)r.scores[i], labels ? " " : "", len,
           label);
  }
  free(labels);
  free(r.indices);
  free(r.scores);
  tinyml_module_release(module);
  tinyml_blob_release(blob);
  bmp_free(&img);
  return 0;
}
