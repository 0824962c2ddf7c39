/* Shared by prepost*.c: the model's ports as the stages see them, the
 * message helpers (prepost_util.c) and the emitters of each stage.  The stages write TOSA (and one linalg.generic for
 * the image gather) with tosa_emit into the wrapper function's text. */
#ifndef TINYML_COMPILER_TOSA_PREPOST_INTERNAL_H
#define TINYML_COMPILER_TOSA_PREPOST_INTERNAL_H

#include "../../importers/common/tosa_emit.h"
#include "tinyml.h"

#define PP_MAX_RESULTS 4 /* stage outputs replacing the model's output 0 */

/* One model input or output. */
typedef struct pp_port {
  char name[128];
  te_type_t type;        /* as carried inside the graph: uint8 is i8 */
  int is_unsigned;       /* uint8 carried as i8 (tinyml.unsigned) */
  int is_pinned;         /* its value is fixed at compile time (tinyml.fixed_value) */
  uint32_t quant_count;  /* 0: none, 1: per tensor, more: per axis */
  float scale;
  int64_t zero_point;
} pp_port_t;

/* A value the wrapper returns, with the name the module gives it. */
typedef struct pp_result {
  te_value_t value;
  const char *name;
} pp_result_t;

typedef struct pp {
  const tinyml_allocator_t *a;
  te_t e;
  strbuf_t sb;
  const tinyml_preprocess_t *pre;
  const tinyml_postprocess_t *post;
  pp_port_t in, out; /* the model's input 0 and output 0 */
  uint32_t input_count, output_count;
  char error[320];   /* set by the checks: why the options do not fit */
} pp_t;

/* Each check returns 0 when the options fit the model, else fills p->error. */
int pp_fail(pp_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int pp_check_image(pp_t *p);
int pp_check_post(pp_t *p);

/* "float32", "uint8", ...: the port's dtype as the module shows it. */
const char *pp_dtype_name(const pp_port_t *port);
/* Describes `t`'s dims as "[1, 96, 96, 1]" into out. */
void pp_dims_text(const te_type_t *t, char *out, size_t cap);

/* The type of the module's new input 0 for the image stage. */
te_type_t pp_image_type(const pp_t *p);
/* Model input 0 computed from the image input `image`. */
te_value_t pp_emit_image(pp_t *p, te_value_t image);
/* x (float32, channels on `axis`) normalised and, for a quantised model
 * input, quantised: the model's input 0. */
te_value_t pp_emit_normalise(pp_t *p, te_value_t x, uint32_t axis);
/* The wrapper's results for model output 0 = `out`; returns their count. */
uint32_t pp_emit_post(pp_t *p, te_value_t out, pp_result_t *results);

#endif
