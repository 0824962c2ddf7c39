/* tflite_dump: prints what tfl_read decoded from a .tflite file as JSON, for
 * check_flatc.py to compare with flatc's own reading of the file.
 *
 * Usage: tflite_dump MODEL.tflite   (or --names: the name tables as JSON;
 *        or --tosa MODEL.tflite: the importer's TOSA text, for check_state.py)
 * Exit 0 with JSON on stdout, or 1 with "<code name>: <message>" on stderr.
 *
 * Strings are printed byte by byte, bytes >= 0x80 as \u00XX, so the output
 * is valid JSON whatever the file holds.  Constant data is summarised as its
 * size and a 32-bit FNV-1a hash.  For options tables, each field 0..15 that
 * is present is printed read every way the accessors can (i8, i32, f32,
 * bool, int vector); the checker picks the one the schema's type calls for. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/common/alloc.h"
#include "lib/importers/tflite/tflite_import.h"
#include "lib/importers/tflite/tflite_reader.h"

#define OPTION_FIELDS 16
#define MAX_VECTOR 64

static void put_string(const char *s) {
  putchar('"');
  for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
    if (*p == '"' || *p == '\\') printf("\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f) printf("\\u%04x", *p);
    else putchar(*p);
  }
  putchar('"');
}

static void put_float(double f) {
  if (isnan(f)) printf("\"nan\"");
  else if (isinf(f)) printf(f > 0 ? "\"inf\"" : "\"-inf\"");
  else printf("%.9g", f);
}

static void put_i32s(const int32_t *v, uint32_t n) {
  putchar('[');
  for (uint32_t i = 0; i < n; i++) printf("%s%d", i ? "," : "", (int)v[i]);
  putchar(']');
}

static uint32_t fnv1a(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static void put_tensor(const tfl_tensor_t *t) {
  printf("{\"name\":");
  put_string(t->name);
  printf(",\"type\":%d,\"shape\":", (int)t->type);
  put_i32s(t->shape, t->rank);
  printf(",\"dynamic\":%d,\"sparsity\":%d,\"variable\":%d,\"buffer\":%u",
         t->has_dynamic_dims, t->has_sparsity, t->is_variable, t->buffer);
  printf(",\"data_size\":%zu,\"data_hash\":%u", t->data_size,
         t->data ? fnv1a(t->data, t->data_size) : 0u);
  printf(",\"scale\":[");
  for (uint32_t i = 0; i < t->quant.scale_count; i++) {
    if (i) putchar(',');
    put_float(t->quant.scale[i]);
  }
  printf("],\"zero_point\":[");
  for (uint32_t i = 0; i < t->quant.zero_point_count; i++)
    printf("%s%lld", i ? "," : "", (long long)t->quant.zero_point[i]);
  printf("],\"quantized_dimension\":%d,\"details\":%d}",
         (int)t->quant.quantized_dimension, t->quant.has_details);
}

/* A field is present when two different defaults give the same value. */
static int present(const tfl_table_t *t, unsigned f) {
  return tfl_table_i8(t, f, 0, NULL) == tfl_table_i8(t, f, 1, NULL);
}

static void put_options(const tfl_table_t *t) {
  if (!t->buf) {
    printf("null");
    return;
  }
  putchar('{');
  int first = 1;
  for (unsigned f = 0; f < OPTION_FIELDS; f++) {
    if (!present(t, f)) continue;
    int bad = 0;
    int32_t vec[MAX_VECTOR];
    uint32_t n = tfl_table_i32_vector(t, f, vec, MAX_VECTOR, &bad);
    printf("%s\"%u\":{\"i8\":%d,\"bool\":%d,\"i32\":%d,\"f32\":", first ? "" : ",",
           f, tfl_table_i8(t, f, 0, NULL), tfl_table_bool(t, f, 0, NULL),
           (int)tfl_table_i32(t, f, 0, NULL));
    put_float(tfl_table_f32(t, f, 0, NULL));
    printf(",\"vector\":");
    if (bad || n > MAX_VECTOR) printf("null");
    else put_i32s(vec, n);
    putchar('}');
    first = 0;
  }
  putchar('}');
}

static void put_operator(const tfl_operator_t *op) {
  printf("{\"opcode_index\":%u,\"builtin_code\":%d,\"builtin_name\":\"%s\",\"custom_code\":",
         op->opcode_index, (int)op->builtin_code, tfl_builtin_name(op->builtin_code));
  if (op->custom_code) put_string(op->custom_code);
  else printf("null");
  printf(",\"version\":%d,\"inputs\":", (int)op->version);
  put_i32s(op->inputs, op->input_count);
  printf(",\"outputs\":");
  put_i32s(op->outputs, op->output_count);
  printf(",\"intermediates\":%u,\"options_type\":%u,\"options\":",
         op->intermediate_count, op->options_type);
  put_options(&op->options);
  printf(",\"custom_options\":%d,\"options2_type\":%u,\"options2\":",
         op->has_custom_options, op->options2_type);
  put_options(&op->options2);
  putchar('}');
}

static void dump(const tfl_model_t *m) {
  printf("{\"version\":%u,\"description\":", m->version);
  put_string(m->description);
  printf(",\"subgraphs\":%u,\"custom_codes\":[", m->subgraph_count);
  for (uint32_t i = 0; i < m->opcode_count; i++) {
    if (i) putchar(',');
    if (m->custom_codes[i]) put_string(m->custom_codes[i]);
    else printf("null");
  }
  printf("],\n\"tensors\":[");
  for (uint32_t i = 0; i < m->tensor_count; i++) {
    printf(i ? ",\n" : "\n");
    put_tensor(&m->tensors[i]);
  }
  printf("],\n\"inputs\":");
  put_i32s(m->inputs, m->input_count);
  printf(",\"outputs\":");
  put_i32s(m->outputs, m->output_count);
  printf(",\n\"operators\":[");
  for (uint32_t i = 0; i < m->operator_count; i++) {
    printf(i ? ",\n" : "\n");
    put_operator(&m->operators[i]);
  }
  printf("]}\n");
}

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *data = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0)
    data = malloc((size_t)n + 1);
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

/* --names: every name tfl_builtin_name and tfl_type_name know, for the
 * checker to compare with the schema's enums. */
static void dump_names(void) {
  printf("{\"builtin\":[");
  for (int32_t i = 0; strcmp(tfl_builtin_name(i), "UNKNOWN") != 0; i++)
    printf("%s\"%s\"", i ? "," : "", tfl_builtin_name(i));
  printf("],\"type\":[");
  for (int32_t i = 0; strcmp(tfl_type_name(i), "UNKNOWN") != 0; i++)
    printf("%s\"%s\"", i ? "," : "", tfl_type_name(i));
  printf("]}\n");
}

static int report(tinyml_status_t status) {
  fprintf(stderr, "%s: %s\n", tinyml_status_code_name(tinyml_status_code(status)),
          tinyml_status_message(status));
  tinyml_status_free(status);
  return 1;
}

/* --tosa: what tfl_import makes of the model. */
static int print_tosa(const uint8_t *data, size_t size) {
  char *text = NULL;
  size_t length = 0;
  tinyml_status_t status = tfl_import(data, size, NULL, &text, &length);
  if (status) return report(status);
  fwrite(text, 1, length, stdout);
  tinyml_allocator_t a = tinyml__allocator_or_default(NULL);
  tinyml__free(&a, text);
  return 0;
}

int main(int argc, char **argv) {
  int tosa = argc == 3 && strcmp(argv[1], "--tosa") == 0;
  /* --subgraph N: that subgraph, decoded by tfl_read_subgraph. */
  int sub = argc == 4 && strcmp(argv[1], "--subgraph") == 0;
  if (argc != 2 && !tosa && !sub) {
    fprintf(stderr, "usage: %s MODEL.tflite | --names | --tosa MODEL.tflite | "
            "--subgraph N MODEL.tflite\n", argv[0]);
    return 2;
  }
  if (strcmp(argv[1], "--names") == 0) {
    dump_names();
    return 0;
  }
  size_t size = 0;
  uint8_t *data = read_file(argv[argc - 1], &size);
  if (!data) {
    fprintf(stderr, "cannot read %s\n", argv[argc - 1]);
    return 2;
  }
  int rc = 0;
  tfl_model_t *m = NULL;
  tinyml_status_t status = TINYML_OK;
  uint32_t index = sub ? (uint32_t)strtoul(argv[2], NULL, 10) : 0;
  if (tosa) rc = print_tosa(data, size);
  else if ((status = tfl_read_subgraph(data, size, index, NULL, &m)) != TINYML_OK)
    rc = report(status);
  else dump(m);
  tfl_model_free(m, NULL);
  free(data);
  return rc;
}
