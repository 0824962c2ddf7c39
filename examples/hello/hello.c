/*
 * hello.c - a complete libtinyml program in one file.
 *
 * Compiles model.mlir, a tiny CNN that tells which way a line drawn on an 8x8
 * image runs (see gen_model.py), at run time; loads the module; runs it on a
 * drawing; prints the class probabilities; and checks them against the same
 * network written in plain C below.
 *
 * Usage: hello MODEL.mlir     e.g. build/examples/hello/hello
 *                                  examples/hello/model.mlir
 * Exit status: 0 when the module agrees with the C reference, 1 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <tinyml.h>

#define SIZE 8    /* the image is SIZE x SIZE x 1 */
#define POOLED 4  /* after the 2x2 max pool */
#define CLASSES 4 /* one per direction; also the conv's filter count */
#define CONV_BIAS (-0.5f)
/* The module and the reference round differently (vectorised sums, exp). */
#define TOLERANCE 1e-5f

static const char *const kClassNames[CLASSES] = {
    "vertical |", "horizontal -", "diagonal \\", "diagonal /"};

/* The input: '#' is ink (1.0), '.' is paper (0.0).  A long \ and a short |
 * give four different probabilities, so the check also catches a transposed
 * or mirrored filter, which would swap two of them. */
static const char *const kDrawing[SIZE] = {
    "........", ".#....#.", "..#...#.", "...#..#.",
    "....#...", ".....#..", "......#.", "........",
};

/* ---------------------------------------------------------------------------
 * The weights: the same formulas as gen_model.py, which wrote them into
 * model.mlir
 * ------------------------------------------------------------------------- */

/* Filter o is +1 on its direction's line through the 3x3 window, else -0.5. */
static float conv_weight(int o, int y, int x) {
  const int on[CLASSES] = {x == 1, y == 1, y == x, x + y == 2};
  return on[o] ? 1.0f : -0.5f;
}

/* Element i of the flattened NHWC [4, 4, 4] map is channel i % 4. */
static float dense_weight(int i, int k) {
  return i % CLASSES == k ? 0.5f : 0.0f;
}

/* ---------------------------------------------------------------------------
 * The C reference of the network
 * ------------------------------------------------------------------------- */

/* conv2d 3x3 with zero padding 1, then relu, at output pixel (y, x). */
static float conv_relu(const float *image, int o, int y, int x) {
  float sum = CONV_BIAS;
  for (int ky = 0; ky < 3; ++ky)
    for (int kx = 0; kx < 3; ++kx) {
      int iy = y + ky - 1, ix = x + kx - 1;
      if (iy >= 0 && iy < SIZE && ix >= 0 && ix < SIZE)
        sum += image[iy * SIZE + ix] * conv_weight(o, ky, kx);
    }
  return sum > 0.0f ? sum : 0.0f;
}

/* 2x2 max pool of the conv output at pooled pixel (py, px), channel o. */
static float pooled(const float *image, int o, int py, int px) {
  float best = conv_relu(image, o, 2 * py, 2 * px);
  for (int d = 1; d < 4; ++d)
    best = fmaxf(best, conv_relu(image, o, 2 * py + d / 2, 2 * px + d % 2));
  return best;
}

static void softmax(float *x, int n) {
  float top = x[0], sum = 0.0f;
  for (int i = 1; i < n; ++i) top = fmaxf(top, x[i]);
  for (int i = 0; i < n; ++i) sum += x[i] = expf(x[i] - top);
  for (int i = 0; i < n; ++i) x[i] /= sum;
}

static void reference(const float *image, float probs[CLASSES]) {
  for (int k = 0; k < CLASSES; ++k) probs[k] = 0.0f;
  /* Flattening NHWC: element i = (py * POOLED + px) * CLASSES + o. */
  for (int i = 0; i < POOLED * POOLED * CLASSES; ++i) {
    int o = i % CLASSES, p = i / CLASSES;
    float v = pooled(image, o, p / POOLED, p % POOLED);
    for (int k = 0; k < CLASSES; ++k) probs[k] += v * dense_weight(i, k);
  }
  softmax(probs, CLASSES);
}

/* ---------------------------------------------------------------------------
 * Running the model with libtinyml
 * ------------------------------------------------------------------------- */

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *text = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n))) {
    if (fread(text, 1, (size_t)n, f) != (size_t)n) {
      free(text);
      text = NULL;
    }
  }
  fclose(f);
  *size = (size_t)n;
  return text;
}

/* Compiles the model at `path` and runs it once: image -> probs. */
static int run_model(const char *path, const float *image, float *probs) {
  size_t size;
  char *text = read_file(path, &size);
  if (text == NULL) {
    fprintf(stderr, "hello: cannot read %s\n", path);
    return 1;
  }
  tinyml_blob_t *blob = NULL;
  tinyml_module_t *module = NULL;
  tinyml_context_t *context = NULL;
  /* Each step runs only if all before it succeeded; the first error wins. */
  tinyml_status_t st = tinyml_compile(text, size, NULL, &blob);
  free(text); /* the module does not refer to the model text */
  if (!st) st = tinyml_module_load(tinyml_blob_data(blob),
                                   tinyml_blob_size(blob), NULL, &module);
  if (!st) st = tinyml_context_create(module, NULL, &context);
  /* The library checks the byte sizes against the model's signature. */
  if (!st) st = tinyml_context_set_input(context, 0, image,
                                         SIZE * SIZE * sizeof(float));
  if (!st) st = tinyml_context_set_output(context, 0, probs,
                                          CLASSES * sizeof(float));
  if (!st) st = tinyml_context_invoke(context);
  if (st) fprintf(stderr, "hello: %s\n", tinyml_status_message(st));
  int rc = st ? 1 : 0;
  tinyml_status_free(st);
  /* The module reads the blob in place, so release in reverse order. */
  tinyml_context_release(context);
  tinyml_module_release(module);
  tinyml_blob_release(blob);
  return rc;
}

static void draw(float *image) {
  printf("input (%dx%d):\n", SIZE, SIZE);
  for (int y = 0; y < SIZE; ++y) {
    printf("  %s\n", kDrawing[y]);
    for (int x = 0; x < SIZE; ++x)
      image[y * SIZE + x] = kDrawing[y][x] == '#' ? 1.0f : 0.0f;
  }
}

static int argmax(const float *x, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

/* Prints both results side by side; returns the largest difference. */
static float print_results(const float *probs, const float *want) {
  float worst = 0.0f;
  printf("probabilities (libtinyml, C reference):\n");
  for (int k = 0; k < CLASSES; ++k) {
    printf("  %-12s  %.6f  %.6f\n", kClassNames[k], probs[k], want[k]);
    float diff = fabsf(probs[k] - want[k]);
    /* !(diff <= worst) also catches NaN. */
    if (!(diff <= worst)) worst = diff;
  }
  int best = argmax(probs, CLASSES);
  printf("prediction: %s (class %d)\n", kClassNames[best], best);
  return worst;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.mlir\n", argv[0]);
    return 1;
  }
  printf("libtinyml %s\n", tinyml_version_string());
  float image[SIZE * SIZE], probs[CLASSES], want[CLASSES];
  draw(image);
  if (run_model(argv[1], image, probs) != 0) return 1;
  reference(image, want);
  float worst = print_results(probs, want);
  if (!(worst <= TOLERANCE)) {
    printf("FAILED: differs from the C reference by %g\n", (double)worst);
    return 1;
  }
  printf("OK: matches the C reference (largest difference %g)\n", (double)worst);
  return 0;
}
