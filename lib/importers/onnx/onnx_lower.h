/* Internal to the ONNX importer: the state shared by the operator
 * lowerings, helpers to read operands and attributes, and the per-family
 * tables of lowerings.
 *
 * A lowering reads its node's operands (onnx_in / onnx_const_*), writes TOSA
 * through c->e (see ../common/tosa_emit.h) and binds each output with
 * onnx_set_out.  It must refuse, with onnx_fail, anything it does not
 * implement exactly (an attribute value, a dtype, an opset range): a refusal
 * is "unsupported", a wrong answer is a bug. */
#ifndef TINYML_IMPORTERS_ONNX_LOWER_H
#define TINYML_IMPORTERS_ONNX_LOWER_H

#include <stdint.h>

#include "../common/import_limits.h"
#include "../common/import_bindings.h"
#include "../common/tosa_emit.h"
#include "onnx.pb-c.h"

/* Element counts of fuzzed or hostile shapes overflow int64: saturate, so a
 * product that would overflow compares unequal to any real size. */
static inline int64_t onnx_mul_sat(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return -1;
  if (a && b > INT64_MAX / a) return INT64_MAX;
  return a * b;
}

static inline int64_t onnx_numel(uint32_t rank, const int64_t *dims) {
  for (uint32_t i = 0; i < rank; ++i)
    if (dims[i] == 0) return 0;
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; ++i) n = onnx_mul_sat(n, dims[i]);
  return n;
}

/* TensorProto.DataType values used here. */
enum {
  ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_UINT16 = 4, ONNX_INT16 = 5,
  ONNX_INT32 = 6, ONNX_INT64 = 7, ONNX_STRING = 8, ONNX_BOOL = 9, ONNX_FLOAT16 = 10,
  ONNX_DOUBLE = 11, ONNX_UINT32 = 12, ONNX_UINT64 = 13
};
/* Not a TensorProto type: a compile-time sequence or optional (onnx_seq.h). */
enum { ONNX_SEQUENCE = 1000 };
enum { ONNX_BFLOAT16 = 16 };

/* A named value of the graph.  Either a runtime tensor (`v` set) or a
 * constant (initializer, Constant node or a folded result; `data` set and
 * `v` materialised on first runtime use), or both. */
typedef struct onnx_value {
  const char *name;      /* borrowed from the ModelProto */
  int32_t dtype;         /* ONNX data type */
  te_value_t v;          /* id 0 until used at run time */
  uint32_t rank;
  int64_t dims[TE_MAX_RANK];
  void *data;            /* owned host-order copy of a constant, or NULL;
                            int64/int32/float/int8/uint8/bool element types */
} onnx_value_t;

typedef struct onnx_ctx {
  const tinyml_allocator_t *allocator;
  te_t e;
  onnx_value_t *values;
  uint32_t value_count, value_capacity;
  int64_t opset;                 /* default-domain opset */
  const Onnx__NodeProto *node;   /* the node being lowered */
  uint32_t node_index;
  tinyml_status_t error;
  te_limits_t limits;            /* resolved: no field is 0 */
  uint64_t constant_bytes;       /* of the constants decoded or folded so far */
  const te_bindings_t *bindings; /* the caller's dynamic-dimension bindings, or NULL */
  uint32_t graph_depth;          /* If branches being lowered, nested */
  int64_t training_opset;        /* of ai.onnx.preview.training; -1 if not imported */
  /* 1 + the input of the node being lowered that onnx_const_input last
   * found not constant, or 0: a refusal for want of a constant names the
   * graph inputs it derives from (onnx_bind_hint). */
  uint32_t wanted_const;
  const Onnx__GraphProto *graph; /* the graph whose nodes are being lowered */
  /* Graph inputs pinned to the one value the declared shapes allow, or
   * empty (onnx_derive.c), and the declared value that decided each. */
  const char *pinned_input[16];
  const char *pinned_by[16];
  uint32_t pinned_count;
} onnx_ctx_t;

typedef tinyml_status_t (*onnx_lower_fn)(onnx_ctx_t *c);

typedef struct onnx_lowering {
  const char *op_type;  /* default domain only */
  int min_opset;        /* the lowering implements opsets [min, max] */
  int max_opset;
  onnx_lower_fn fn;
} onnx_lowering_t;

/* Per-family tables, each terminated by an entry with op_type NULL. */
extern const onnx_lowering_t onnx_lowerings_elementwise[];
extern const onnx_lowering_t onnx_lowerings_activation[];
extern const onnx_lowering_t onnx_lowerings_nn[];
extern const onnx_lowering_t onnx_lowerings_norm[];
extern const onnx_lowering_t onnx_lowerings_shape[];
extern const onnx_lowering_t onnx_lowerings_shape_index[];
extern const onnx_lowering_t onnx_lowerings_resize[];
extern const onnx_lowering_t onnx_lowerings_reduce[];
extern const onnx_lowering_t onnx_lowerings_quant[];
extern const onnx_lowering_t onnx_lowerings_loss[];
extern const onnx_lowering_t onnx_lowerings_control[];
extern const onnx_lowering_t onnx_lowerings_rnn[];
extern const onnx_lowering_t onnx_lowerings_misc[];
/* Lowers a node of domain ai.onnx.preview.training (onnx_ops_training.c). */
tinyml_status_t onnx_lower_training(onnx_ctx_t *c);
extern const onnx_lowering_t onnx_lowerings_attention[];
extern const onnx_lowering_t onnx_lowerings_select[];
extern const onnx_lowering_t onnx_lowerings_sequence[];
extern const onnx_lowering_t onnx_lowerings_loop[];
extern const onnx_lowering_t onnx_lowerings_legacy[];
extern const onnx_lowering_t onnx_lowerings_scatter[];
extern const onnx_lowering_t onnx_lowerings_qms[];
extern const onnx_lowering_t onnx_lowerings_sample[];
extern const onnx_lowering_t onnx_lowerings_einsum[];
extern const onnx_lowering_t onnx_lowerings_text[];
extern const onnx_lowering_t onnx_lowerings_pool[];
extern const onnx_lowering_t onnx_lowerings_qpool[];
/* Whether com.microsoft's `op` is lowered by onnx_lowerings_qpool
 * (QLinearAveragePool, onnx_ops_qpool.c; its lowering checks the domain). */
int onnx_qpool_op(const char *op);
/* QuantizeLinear (c->node) of a DequantizeLinear -> AveragePool chain,
 * computed as QLinearAveragePool: 1 with output 0 bound, 0 when the chain
 * does not match (onnx_ops_qpool.c). */
int onnx_qdq_pool_fuse(onnx_ctx_t *c);
/* Whether com.microsoft's `op` is one of the quantised ops lowered (in
 * onnx_lowerings_qms, which check the domain themselves). */
int onnx_qms_op(const char *op);
/* DFT, STFT, the windows and MelWeightMatrix (onnx_ops_signal.c). */
extern const onnx_lowering_t onnx_lowerings_signal[];

/* Records the first error as "onnx: node N (OpType 'name'): <message>",
 * with code UNSUPPORTED, and returns it. */
tinyml_status_t onnx_fail(onnx_ctx_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Out of memory; returns the status. */
tinyml_status_t onnx_oom(onnx_ctx_t *c);

/* ---- operands ---------------------------------------------------------- */

uint32_t onnx_input_count(onnx_ctx_t *c);   /* including trailing "" */
/* Input i, or NULL when absent (index past the end, or the name ""). */
onnx_value_t *onnx_input(onnx_ctx_t *c, uint32_t i);
/* Input i as a runtime TOSA value (a constant is materialised); id 0 and
 * an error recorded when it is missing or its dtype has no TOSA type. */
te_value_t onnx_in(onnx_ctx_t *c, uint32_t i);
/* Input i if it is a constant (NULL otherwise). */
const onnx_value_t *onnx_const_input(onnx_ctx_t *c, uint32_t i);
/* Input i if it is a constant, for a lowering that merely folds when it
 * can: unlike onnx_const_input, a runtime input is no refusal's cause
 * (the bind hint) and derives nothing. */
const onnx_value_t *onnx_const_probe(onnx_ctx_t *c, uint32_t i);
/* Reads a constant integer tensor (int32/int64) input into out[cap];
 * returns its element count, or -1 (no error recorded) if it is not a
 * constant integer tensor or holds more than cap elements. */
int64_t onnx_const_ints(onnx_ctx_t *c, uint32_t i, int64_t *out, uint32_t cap);
/* Reads a constant scalar/1-element float input; 0 if not constant. */
int onnx_const_float(onnx_ctx_t *c, uint32_t i, float *out);

uint32_t onnx_output_count(onnx_ctx_t *c);
/* Binds output i to a runtime value. */
tinyml_status_t onnx_set_out(onnx_ctx_t *c, uint32_t i, te_value_t v);
/* The same with an explicit ONNX dtype, for UINT8 (carried as i8). */
tinyml_status_t onnx_set_out_typed(onnx_ctx_t *c, uint32_t i, te_value_t v, int32_t dtype);
/* Binds output i to a compile-time constant (host-order `data`, copied). */
tinyml_status_t onnx_set_out_const(onnx_ctx_t *c, uint32_t i, int32_t dtype, uint32_t rank,
                                   const int64_t *dims, const void *data);

/* Decodes a TensorProto (initializer or attribute) into v's dtype, rank,
 * dims and an owned host-order copy in v->data; 0 with an error recorded
 * (and v->data NULL) when its type or storage is unsupported. */
int onnx_decode_tensor(onnx_ctx_t *c, const Onnx__TensorProto *t, onnx_value_t *v);
/* Counts `bytes` of constant `name` (a tensor or a node output) against
 * max_tensor_bytes and max_constant_bytes; 0, recording the error, when
 * over one. */
int onnx_check_constant(onnx_ctx_t *c, const char *name, uint64_t bytes);
/* Checks the node count and each initializer's claimed size (and their
 * sum) against c->limits on the raw protobuf bytes, before they are
 * unpacked (onnx_prescan.c).  A status naming the initializer, or OK
 * (also for bytes it cannot read: the unpacker reports those). */
tinyml_status_t onnx_prescan(onnx_ctx_t *c, const void *bytes, size_t size);

/* Lowers subgraph `g` (an If branch) in this context: its initializers
 * and nodes, which may read every value lowered so far.  Restores c->node. */
tinyml_status_t onnx_lower_graph(onnx_ctx_t *c, const Onnx__GraphProto *g);
/* The value named `name`, or NULL. */
onnx_value_t *onnx_find(onnx_ctx_t *c, const char *name);
/* Output i's new value entry, or NULL (unused output, or an error
 * recorded: reassigned name, out of memory). */
onnx_value_t *onnx_out_slot(onnx_ctx_t *c, uint32_t i);
/* Appends a value named `name` that hides any older one of that name until
 * onnx_pop_values drops it (Loop and Scan bodies, lowered once per step);
 * NULL on out of memory (recorded). */
onnx_value_t *onnx_push_value(onnx_ctx_t *c, const char *name);
/* Drops (and frees) every value added after the first `mark`. */
void onnx_pop_values(onnx_ctx_t *c, uint32_t mark);
/* `v` as a runtime TOSA value (a constant is materialised); id 0 and an
 * error recorded when its dtype has no TOSA type. */
te_value_t onnx_runtime(onnx_ctx_t *c, onnx_value_t *v);

/* ---- attributes -------------------------------------------------------- */

const Onnx__AttributeProto *onnx_attr(onnx_ctx_t *c, const char *name);
int64_t onnx_attr_int(onnx_ctx_t *c, const char *name, int64_t def);
float onnx_attr_float(onnx_ctx_t *c, const char *name, float def);
/* Copies an INTS attribute; returns its length or -1 when absent (or
 * longer than cap, after recording an error). */
int64_t onnx_attr_ints(onnx_ctx_t *c, const char *name, int64_t *out, uint32_t cap);
/* A STRING attribute as a NUL-terminated copy in out[cap]; `def` if absent. */
const char *onnx_attr_string(onnx_ctx_t *c, const char *name, const char *def,
                             char *out, size_t cap);

/* ---- types ------------------------------------------------------------- */

/* The TOSA element type for an ONNX dtype; 0 if none (sets *elem). */
int onnx_te_elem(int32_t dtype, te_elem_t *elem);
int32_t onnx_dtype_of(te_elem_t elem);      /* the reverse (int8 → INT8) */
size_t onnx_dtype_size(int32_t dtype);      /* 0 if unsupported */
const char *onnx_dtype_name(int32_t dtype);
/* Normalises a possibly negative axis against `rank`; -1 if invalid. */
int32_t onnx_axis(int64_t axis, uint32_t rank);

#endif
