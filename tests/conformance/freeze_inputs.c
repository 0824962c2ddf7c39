/* Rewrites an ONNX backend test so that chosen graph inputs become
 * initializers holding test_data_set_0's values.  Deployed models carry
 * scales, sizes, shapes and axes as constants, but the node tests feed them
 * at run time, which our importer refuses; the frozen copies exercise the
 * lowerings as real models use them.  Only test_data_set_0 is kept.
 *
 * Usage: freeze_inputs SRC_TEST_DIR DST_TEST_DIR INDEX[,INDEX...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx.pb-c.h"

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc(len > 0 ? (size_t)len : 1);
  if (b && fread(b, 1, (size_t)len, f) != (size_t)len) { free(b); b = NULL; }
  fclose(f);
  *n = (size_t)len;
  return b;
}

static int spill(const char *path, const uint8_t *d, size_t n) {
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(d, 1, n, f) == n;
  if (f) fclose(f);
  return ok;
}

static int copy_file(const char *from, const char *to) {
  size_t n;
  uint8_t *b = slurp(from, &n);
  int ok = b && spill(to, b, n);
  free(b);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 4) return fprintf(stderr, "usage: %s SRC DST INDEX[,INDEX...]\n", argv[0]), 2;
  int freeze[64] = {0};
  for (char *t = strtok(argv[3], ","); t; t = strtok(NULL, ","))
    if (atoi(t) >= 0 && atoi(t) < 64) freeze[atoi(t)] = 1;
  char p[4096], q[4096];
  size_t n;
  snprintf(p, sizeof p, "%s/model.onnx", argv[1]);
  uint8_t *bytes = slurp(p, &n);
  Onnx__ModelProto *m = bytes ? onnx__model_proto__unpack(NULL, n, bytes) : NULL;
  if (!m || !m->graph) return fprintf(stderr, "%s: not an ONNX model\n", p), 1;
  Onnx__GraphProto *g = m->graph;
  Onnx__TensorProto **inits = calloc(g->n_initializer + g->n_input + 1, sizeof *inits);
  memcpy(inits, g->initializer, g->n_initializer * sizeof *inits);
  size_t ninit = g->n_initializer, kept = 0, out_index = 0;
  mkdir(argv[2], 0755);
  snprintf(q, sizeof q, "%s/test_data_set_0", argv[2]);
  mkdir(q, 0755);
  for (size_t i = 0; i < g->n_input; ++i) {
    snprintf(p, sizeof p, "%s/test_data_set_0/input_%zu.pb", argv[1], i);
    if (i < 64 && freeze[i]) {
      size_t tn;
      uint8_t *tb = slurp(p, &tn);
      Onnx__TensorProto *t = tb ? onnx__tensor_proto__unpack(NULL, tn, tb) : NULL;
      if (!t) return fprintf(stderr, "%s: cannot read\n", p), 1;
      t->name = g->input[i]->name;
      inits[ninit++] = t;
      continue;
    }
    g->input[kept++] = g->input[i];
    snprintf(q, sizeof q, "%s/test_data_set_0/input_%zu.pb", argv[2], out_index++);
    if (!copy_file(p, q)) return fprintf(stderr, "%s: cannot copy\n", p), 1;
  }
  g->n_input = kept;
  g->initializer = inits;
  g->n_initializer = ninit;
  for (size_t k = 0;; ++k) {
    snprintf(p, sizeof p, "%s/test_data_set_0/output_%zu.pb", argv[1], k);
    snprintf(q, sizeof q, "%s/test_data_set_0/output_%zu.pb", argv[2], k);
    if (!copy_file(p, q)) break;
  }
  size_t len = onnx__model_proto__get_packed_size(m);
  uint8_t *out = malloc(len);
  onnx__model_proto__pack(m, out);
  snprintf(q, sizeof q, "%s/model.onnx", argv[2]);
  return spill(q, out, len) ? 0 : 1;
}
