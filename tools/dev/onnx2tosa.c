/* Developer tool, not installed: prints the TOSA text the ONNX importer
 * makes of a model, or with --graph the model's nodes, for debugging.
 * Usage: onnx2tosa [--graph] MODEL.onnx */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/importers/onnx/onnx_import.h"
#include "onnx.pb-c.h"

static unsigned char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = malloc(len > 0 ? (size_t)len : 1);
  if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) { free(buf); buf = NULL; }
  fclose(f);
  *n = (size_t)len;
  return buf;
}

static void dump_value_info(const char *what, const Onnx__ValueInfoProto *v) {
  printf("%s %s:", what, v->name);
  const Onnx__TypeProto *t = v->type;
  if (t && t->tensor_type) {
    printf(" type %d [", t->tensor_type->elem_type);
    const Onnx__TensorShapeProto *s = t->tensor_type->shape;
    for (size_t i = 0; s && i < s->n_dim; ++i)
      if (s->dim[i]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
        printf("%s%lld", i ? "," : "", (long long)s->dim[i]->dim_value);
      else
        printf("%s?", i ? "," : "");
    printf("]");
  }
  printf("\n");
}

static void dump_graph(const Onnx__ModelProto *m) {
  for (size_t i = 0; i < m->n_opset_import; ++i)
    printf("opset %s %lld\n", m->opset_import[i]->domain ? m->opset_import[i]->domain : "",
           (long long)m->opset_import[i]->version);
  const Onnx__GraphProto *g = m->graph;
  for (size_t i = 0; i < g->n_input; ++i) dump_value_info("input", g->input[i]);
  for (size_t i = 0; i < g->n_output; ++i) dump_value_info("output", g->output[i]);
  for (size_t i = 0; i < g->n_initializer; ++i) {
    const Onnx__TensorProto *t = g->initializer[i];
    printf("initializer %s: type %d [", t->name, t->data_type);
    for (size_t d = 0; d < t->n_dims; ++d) printf("%s%lld", d ? "," : "", (long long)t->dims[d]);
    printf("]\n");
  }
  for (size_t k = 0; k < g->n_node; ++k) {
    const Onnx__NodeProto *n = g->node[k];
    printf("node %zu %s(", k, n->op_type);
    for (size_t i = 0; i < n->n_input; ++i) printf("%s%s", i ? ", " : "", n->input[i]);
    printf(") -> (");
    for (size_t i = 0; i < n->n_output; ++i) printf("%s%s", i ? ", " : "", n->output[i]);
    printf(")");
    for (size_t a = 0; a < n->n_attribute; ++a) {
      const Onnx__AttributeProto *at = n->attribute[a];
      printf(" %s=", at->name);
      if (at->has_i) printf("%lld", (long long)at->i);
      else if (at->has_f) printf("%g", (double)at->f);
      else if (at->has_s) printf("'%.*s'", (int)at->s.len, (const char *)at->s.data);
      else if (at->n_ints) {
        for (size_t j = 0; j < at->n_ints; ++j) printf("%s%lld", j ? "," : "[", (long long)at->ints[j]);
        printf("]");
      } else if (at->n_floats) {
        for (size_t j = 0; j < at->n_floats; ++j) printf("%s%g", j ? "," : "[", (double)at->floats[j]);
        printf("]");
      }
      else if (at->t) printf("<tensor type %d>", at->t->data_type);
      else printf("?");
    }
    printf("\n");
  }
}

int main(int argc, char **argv) {
  int graph = argc == 3 && strcmp(argv[1], "--graph") == 0;
  if (argc != 2 && !graph) {
    fprintf(stderr, "usage: %s [--graph] MODEL.onnx\n", argv[0]);
    return 2;
  }
  size_t n;
  unsigned char *buf = slurp(argv[argc - 1], &n);
  if (!buf) { perror(argv[argc - 1]); return 1; }
  if (graph) {
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, n, buf);
    if (!m || !m->graph) { fprintf(stderr, "not an ONNX model\n"); return 1; }
    dump_graph(m);
    onnx__model_proto__free_unpacked(m, NULL);
    free(buf);
    return 0;
  }
  char *text = NULL;
  size_t len = 0;
  tinyml_status_t st = onnx_import(buf, n, NULL, &text, &len);
  free(buf);
  if (st) {
    fprintf(stderr, "%s\n", tinyml_status_message(st));
    tinyml_status_free(st);
    return 1;
  }
  fwrite(text, 1, len, stdout);
  free(text);
  return 0;
}
