/* The TFLite importer's driver: verify the file, prune dead operators, write
 * the function signature, lower each live operator to TOSA, and return. */
#include "tflite_import.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../common/alloc.h"
#include "../../common/status.h"
#include "tfl_lower.h"
#include "tfl_quant.h"
#include "tfl_variables.h"

typedef tinyml_status_t (*lower_fn)(tfl_ctx_t *c);

typedef struct lowering {
  int32_t code;
  lower_fn fn;
} lowering_t;

static const lowering_t kLowerings[] = {
    {0, tfl_lower_add_sub},           /* ADD */
    {1, tfl_lower_avg_pool},          /* AVERAGE_POOL_2D */
    {2, tfl_lower_concat},            /* CONCATENATION */
    {3, tfl_lower_conv2d},            /* CONV_2D */
    {4, tfl_lower_depthwise},         /* DEPTHWISE_CONV_2D */
    {5, tfl_lower_space_depth},       /* DEPTH_TO_SPACE */
    {6, tfl_lower_dequantize},        /* DEQUANTIZE */
    {7, tfl_lower_embedding_lookup},  /* EMBEDDING_LOOKUP */
    {8, tfl_lower_unary_math},        /* FLOOR */
    {9, tfl_lower_fully_connected},   /* FULLY_CONNECTED */
    {11, tfl_lower_last_axis_norm},   /* L2_NORMALIZATION */
    {14, tfl_lower_unary_float},      /* LOGISTIC */
    {17, tfl_lower_max_pool},         /* MAX_POOL_2D */
    {18, tfl_lower_mul},              /* MUL */
    {19, tfl_lower_relu},             /* RELU */
    {20, tfl_lower_relu},             /* RELU_N1_TO_1 */
    {21, tfl_lower_relu},             /* RELU6 */
    {22, tfl_lower_reshape},          /* RESHAPE */
    {23, tfl_lower_resize},           /* RESIZE_BILINEAR */
    {25, tfl_lower_softmax},          /* SOFTMAX */
    {26, tfl_lower_space_depth},      /* SPACE_TO_DEPTH */
    {27, tfl_lower_svdf},             /* SVDF */
    {28, tfl_lower_unary_float},      /* TANH */
    {34, tfl_lower_pad},              /* PAD */
    {36, tfl_lower_gather},           /* GATHER */
    {39, tfl_lower_transpose},        /* TRANSPOSE */
    {40, tfl_lower_mean},             /* MEAN */
    {41, tfl_lower_add_sub},          /* SUB */
    {42, tfl_lower_binary_math},      /* DIV */
    {43, tfl_lower_reshape},          /* SQUEEZE */
    {44, tfl_lower_sequence_lstm},    /* UNIDIRECTIONAL_SEQUENCE_LSTM */
    {45, tfl_lower_strided_slice},    /* STRIDED_SLICE */
    {47, tfl_lower_unary_math},       /* EXP */
    {49, tfl_lower_split},            /* SPLIT */
    {50, tfl_lower_last_axis_norm},   /* LOG_SOFTMAX */
    {53, tfl_lower_cast},             /* CAST */
    {54, tfl_lower_prelu},            /* PRELU */
    {55, tfl_lower_binary_math},      /* MAXIMUM */
    {56, tfl_lower_arg_min_max},      /* ARG_MAX */
    {57, tfl_lower_binary_math},      /* MINIMUM */
    {58, tfl_lower_compare},          /* LESS */
    {59, tfl_lower_unary_math},       /* NEG */
    {60, tfl_lower_pad},              /* PADV2 */
    {61, tfl_lower_compare},          /* GREATER */
    {62, tfl_lower_compare},          /* GREATER_EQUAL */
    {63, tfl_lower_compare},          /* LESS_EQUAL */
    {64, tfl_lower_select},           /* SELECT */
    {65, tfl_lower_slice},            /* SLICE */
    {66, tfl_lower_unary_math},       /* SIN */
    {70, tfl_lower_reshape},          /* EXPAND_DIMS */
    {71, tfl_lower_compare},          /* EQUAL */
    {72, tfl_lower_compare},          /* NOT_EQUAL */
    {73, tfl_lower_unary_math},       /* LOG */
    {74, tfl_lower_reduce},           /* SUM */
    {75, tfl_lower_unary_math},       /* SQRT */
    {76, tfl_lower_unary_math},       /* RSQRT */
    {77, tfl_lower_shape_of},         /* SHAPE */
    {79, tfl_lower_arg_min_max},      /* ARG_MIN */
    {81, tfl_lower_reduce},           /* REDUCE_PROD */
    {82, tfl_lower_reduce},           /* REDUCE_MAX */
    {83, tfl_lower_pack},             /* PACK */
    {84, tfl_lower_logical},          /* LOGICAL_OR */
    {86, tfl_lower_logical},          /* LOGICAL_AND */
    {87, tfl_lower_logical},          /* LOGICAL_NOT */
    {88, tfl_lower_unpack},           /* UNPACK */
    {89, tfl_lower_reduce},           /* REDUCE_MIN */
    {90, tfl_lower_binary_math},      /* FLOOR_DIV */
    {92, tfl_lower_unary_math},       /* SQUARE */
    {93, tfl_lower_shape_of},         /* ZEROS_LIKE */
    {94, tfl_lower_broadcast},        /* FILL */
    {97, tfl_lower_resize},           /* RESIZE_NEAREST_NEIGHBOR */
    {98, tfl_lower_unary_math},       /* LEAKY_RELU */
    {99, tfl_lower_binary_math},      /* SQUARED_DIFFERENCE */
    {100, tfl_lower_mirror_pad},      /* MIRROR_PAD */
    {101, tfl_lower_unary_math},     /* ABS */
    {102, tfl_lower_split},           /* SPLIT_V */
    {104, tfl_lower_unary_math},     /* CEIL */
    {105, tfl_lower_reverse},         /* REVERSE_V2 */
    {106, tfl_lower_add_n},           /* ADD_N */
    {107, tfl_lower_gather_nd},       /* GATHER_ND */
    {108, tfl_lower_unary_math},     /* COS */
    {111, tfl_lower_unary_math},     /* ELU */
    {114, tfl_lower_quantize},        /* QUANTIZE */
    {116, tfl_lower_unary_math},     /* ROUND */
    {117, tfl_lower_unary_math},     /* HARD_SWISH */
    {123, tfl_lower_select},          /* SELECT_V2 */
    {126, tfl_lower_batch_matmul},    /* BATCH_MATMUL */
    {130, tfl_lower_broadcast},       /* BROADCAST_TO */
    {142, tfl_lower_var_handle},      /* VAR_HANDLE */
    {143, tfl_lower_read_variable},   /* READ_VARIABLE */
    {144, tfl_lower_assign_variable}, /* ASSIGN_VARIABLE */
    {118, tfl_lower_if},              /* IF */
    {119, tfl_lower_while},           /* WHILE */
    {37, tfl_lower_batch_to_space},   /* BATCH_TO_SPACE_ND */
    {38, tfl_lower_space_to_batch},   /* SPACE_TO_BATCH_ND */
    {67, tfl_lower_transpose_conv},   /* TRANSPOSE_CONV */
    {12, tfl_lower_l2_pool},          /* L2_POOL_2D */
    {91, tfl_lower_reduce},           /* REDUCE_ANY */
    {95, tfl_lower_floor_mod},        /* FLOOR_MOD */
    {128, tfl_lower_cumsum},          /* CUMSUM */
    {140, tfl_lower_reduce},          /* REDUCE_ALL */
    {145, tfl_lower_broadcast_args},  /* BROADCAST_ARGS */
    {151, tfl_lower_dynamic_update_slice}, /* DYNAMIC_UPDATE_SLICE */
};

/* Custom operators, by custom_code.  `shape` gives outputs the file leaves
 * without a shape the one TFLite's Prepare would set (NULL: none). */
typedef struct custom_lowering {
  const char *code;
  lower_fn fn;
  tinyml_status_t (*shape)(const tinyml_allocator_t *a, const tfl_operator_t *op,
                           tfl_tensor_t *tensors);
} custom_lowering_t;

static const custom_lowering_t kCustomLowerings[] = {
    {"TFLite_Detection_PostProcess", tfl_lower_detection, tfl_shape_detection},
};

static const custom_lowering_t *find_custom(const char *code) {
  for (size_t i = 0; code && i < sizeof kCustomLowerings / sizeof kCustomLowerings[0]; ++i)
    if (strcmp(kCustomLowerings[i].code, code) == 0) return &kCustomLowerings[i];
  return NULL;
}

/* Before the signature is written: custom operators' unset output shapes. */
static tinyml_status_t custom_shapes(tfl_model_t *m, const tinyml_allocator_t *a) {
  for (uint32_t k = 0; k < m->operator_count; ++k) {
    const custom_lowering_t *l = find_custom(m->operators[k].custom_code);
    if (l && l->shape) TINYML_RETURN_IF_ERROR(l->shape(a, &m->operators[k], m->tensors));
  }
  return TINYML_OK;
}

/* ---- helpers shared by the lowerings --------------------------------- */

tinyml_status_t tfl_fail(tfl_ctx_t *c, const char *fmt, ...) {
  if (c->error) return c->error;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (c->op)
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_UNSUPPORTED,
                                   "tflite: operator %u (%s): %s", c->op_index,
                                   c->op->custom_code ? c->op->custom_code
                                                      : tfl_builtin_name(c->op->builtin_code),
                                   msg);
  else
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_UNSUPPORTED,
                                   "tflite: %s", msg);
  return c->error;
}

const tfl_tensor_t *tfl_tensor(tfl_ctx_t *c, int32_t index) {
  if (index < 0 || (uint32_t)index >= c->model->tensor_count) return NULL;
  return &c->model->tensors[index];
}

const tfl_tensor_t *tfl_in(tfl_ctx_t *c, uint32_t i) {
  return i < c->op->input_count ? tfl_tensor(c, c->op->inputs[i]) : NULL;
}

const tfl_tensor_t *tfl_out(tfl_ctx_t *c, uint32_t i) {
  return i < c->op->output_count ? tfl_tensor(c, c->op->outputs[i]) : NULL;
}

int tfl_out_of_memory(tfl_ctx_t *c) {
  if (!c->error)
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_OUT_OF_MEMORY, "tflite: out of memory");
  return 0;
}

int64_t tfl_numel(const tfl_tensor_t *t) {
  int64_t n = 1;
  for (uint32_t d = 0; d < t->rank; ++d) n *= t->shape[d];
  return n;
}

int tfl_te_type(const tfl_tensor_t *t, te_type_t *out) {
  te_elem_t elem;
  switch (t->type) {
    case TFL_FLOAT32: elem = TE_F32; break;
    case TFL_INT8: case TFL_UINT8: elem = TE_I8; break;
    case TFL_INT16: elem = TE_I16; break;
    case TFL_INT32: elem = TE_I32; break;
    case TFL_UINT32: elem = TE_I32; break; /* bits; only around CAST */
    case TFL_INT64: elem = TE_I64; break;
    case TFL_BOOL: elem = TE_I1; break;
    default: return 0;
  }
  if (t->rank > TE_MAX_RANK) return 0;
  int64_t dims[TE_MAX_RANK];
  for (uint32_t i = 0; i < t->rank; ++i) dims[i] = t->shape[i];
  *out = te_type(elem, t->rank, dims);
  return 1;
}

int tfl_is_quantized(const tfl_tensor_t *t) {
  return (t->type == TFL_INT8 || t->type == TFL_UINT8 || t->type == TFL_INT16) &&
         t->quant.scale_count > 0;
}

float tfl_scale(const tfl_tensor_t *t) {
  return t->quant.scale_count ? t->quant.scale[0] : 0.0f;
}

/* uint8 tensors are carried as int8 (value - 128) inside the graph, as
 * TOSA 1.0 has no unsigned arithmetic; their zero point moves with them. */
int32_t tfl_zero_point(const tfl_tensor_t *t) {
  int32_t z = t->quant.zero_point_count ? (int32_t)t->quant.zero_point[0] : 0;
  return t->type == TFL_UINT8 ? z - 128 : z;
}

void tfl_qrange(const tfl_tensor_t *t, int32_t *qmin, int32_t *qmax) {
  switch (t->type) {
    case TFL_INT16: *qmin = -32768; *qmax = 32767; break;
    default: *qmin = -128; *qmax = 127; break;
  }
}

const tfl_table_t *tfl_options(tfl_ctx_t *c, uint8_t type) {
  static const tfl_table_t kAbsent = {NULL, 0, 0};
  if (c->op->options_type == type) return &c->op->options;
  if (c->op->options_type != 0) {
    tfl_fail(c, "unexpected options type %u", c->op->options_type);
    return NULL;
  }
  return &kAbsent;
}

static int same_type(const te_type_t *a, const te_type_t *b) {
  return a->elem == b->elem && a->rank == b->rank &&
         memcmp(a->dims, b->dims, sizeof(int64_t) * a->rank) == 0;
}

static te_value_t materialise_const(tfl_ctx_t *c, const tfl_tensor_t *t) {
  te_type_t ty;
  if (!tfl_te_type(t, &ty)) {
    tfl_fail(c, "constant '%s' has unsupported type %s", t->name, tfl_type_name(t->type));
    return (te_value_t){0};
  }
  if ((int64_t)t->data_size != te_numel(&ty) * (int64_t)te_elem_size(ty.elem)) {
    tfl_fail(c, "constant '%s' holds %zu bytes, its shape needs %lld", t->name,
             t->data_size, (long long)(te_numel(&ty) * (int64_t)te_elem_size(ty.elem)));
    return (te_value_t){0};
  }
  if (t->type != TFL_UINT8) return te_const(&c->e, &ty, t->data);
  uint8_t *shifted = tinyml__alloc(c->allocator, t->data_size, 16);
  if (!shifted) {
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_OUT_OF_MEMORY,
                                   "tflite: out of memory");
    return (te_value_t){0};
  }
  for (size_t k = 0; k < t->data_size; ++k) shifted[k] = t->data[k] ^ 0x80;
  te_value_t v = te_const(&c->e, &ty, shifted);
  tinyml__free(c->allocator, shifted);
  return v;
}

te_value_t tfl_value_in(tfl_ctx_t *c, uint32_t i) {
  if (i >= c->op->input_count || c->op->inputs[i] < 0) {
    tfl_fail(c, "input %u is missing", i);
    return (te_value_t){0};
  }
  int32_t idx = c->op->inputs[i];
  if (c->values[idx].id) return c->values[idx];
  const tfl_tensor_t *t = &c->model->tensors[idx];
  /* A variable's bytes, if any, are not its value: its state argument is
   * (every variable a live operator reads has one). */
  if (!t->data || t->is_variable) {
    tfl_fail(c, "input %u ('%s') is not produced by any earlier operator", i, t->name);
    return (te_value_t){0};
  }
  c->values[idx] = materialise_const(c, t);
  return c->values[idx];
}

/* `v` reshaped to tensor t's type; id 0 if its type or size differs.
 * `what` names t in messages ("output", "state"). */
static te_value_t fit_to(tfl_ctx_t *c, const char *what, const tfl_tensor_t *t, te_value_t v) {
  te_type_t want;
  if (!tfl_te_type(t, &want)) {
    tfl_fail(c, "%s '%s' has unsupported type %s", what, t->name, tfl_type_name(t->type));
    return (te_value_t){0};
  }
  if (same_type(&want, &v.type)) return v;
  if (want.elem != v.type.elem || te_numel(&want) != te_numel(&v.type)) {
    tfl_fail(c, "%s '%s': computed shape or type disagrees with the model", what, t->name);
    return (te_value_t){0};
  }
  return te_reshape(&c->e, v, want.rank, want.dims);
}

tinyml_status_t tfl_set_out(tfl_ctx_t *c, uint32_t i, te_value_t v) {
  const tfl_tensor_t *t = tfl_out(c, i);
  if (c->error) return c->error;
  if (!t || !v.id) return tfl_fail(c, "output %u is missing", i);
  v = fit_to(c, "output", t, v);
  if (!v.id) return c->error;
  c->values[c->op->outputs[i]] = v;
  return TINYML_OK;
}

tinyml_status_t tfl_set_state(tfl_ctx_t *c, uint32_t i, te_value_t v) {
  const tfl_tensor_t *t = tfl_in(c, i);
  if (c->error) return c->error;
  if (!t || !v.id) return tfl_fail(c, "state input %u is missing", i);
  if (!t->is_variable)
    return tfl_fail(c, "input %u ('%s') must be a variable tensor (it holds state)", i, t->name);
  v = fit_to(c, "state", t, v);
  if (!v.id) return c->error;
  c->values[c->op->inputs[i]] = v;
  return TINYML_OK;
}

te_value_t tfl_activation(tfl_ctx_t *c, te_value_t v, const tfl_tensor_t *out,
                          int activation) {
  if (activation < 0 || activation > 3) {
    tfl_fail(c, "fused activation %d is not supported", activation);
    return (te_value_t){0};
  }
  if (v.type.elem == TE_F32) {
    static const float lo[4] = {0, 0, -1, 0}, hi[4] = {0, 3.4028235e38f, 1, 6};
    return activation ? te_clamp_f32(&c->e, v, lo[activation], hi[activation]) : v;
  }
  int32_t qmin, qmax, a, b;
  tfl_qrange(out, &qmin, &qmax);
  tfl_activation_range_q(activation, tfl_scale(out), tfl_zero_point(out), qmin, qmax, &a, &b);
  if (a == qmin && b == qmax) return v;
  return te_clamp_int(&c->e, v, a, b);
}

te_value_t tfl_lookup_i8(tfl_ctx_t *c, te_value_t x, const int8_t table[256]) {
  int64_t n = 256;
  te_type_t tt = te_type(TE_I8, 1, &n);
  te_value_t ops[2] = {x, te_const(&c->e, &tt, table)};
  return te_op(&c->e, "tosa.table", ops, 2, NULL, &x.type);
}

te_value_t tfl_requantize(tfl_ctx_t *c, te_value_t acc, const double *real,
                          uint32_t n, const tfl_tensor_t *out) {
  int32_t *mult = tinyml__calloc(c->allocator, n, sizeof(int32_t), 4);
  int8_t *shift = tinyml__calloc(c->allocator, n, 1, 1);
  te_value_t v = {0};
  if (!mult || !shift) {
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_OUT_OF_MEMORY, "tflite: out of memory");
  } else {
    uint32_t k = 0;
    for (; k < n; ++k) {
      int s;
      if (!tfl_quantize_multiplier(real[k], &mult[k], &s) || !tfl_tosa_shift(s, &shift[k]))
        break;
    }
    if (k < n)
      tfl_fail(c, "output scale ratio %g of '%s' is out of range", real[k], out->name);
    else
      v = te_rescale(&c->e, acc, TE_I8, mult, shift, n, 0, tfl_zero_point(out), 1, 0, 0);
  }
  tinyml__free(c->allocator, mult);
  tinyml__free(c->allocator, shift);
  return v;
}

te_value_t tfl_dequantized_const(tfl_ctx_t *c, const tfl_tensor_t *t,
                                 uint32_t rank, const int64_t *dims) {
  te_type_t ty = te_type(TE_F32, rank, dims);
  size_t n = t->data_size;
  if ((t->type != TFL_INT8 && t->type != TFL_UINT8) || !t->data ||
      (int64_t)n != te_numel(&ty) || t->quant.scale_count == 0) {
    tfl_fail(c, "cannot dequantize constant '%s' (%s)", t->name, tfl_type_name(t->type));
    return (te_value_t){0};
  }
  /* Channel k of axis `qd` is element (i / inner) % extent. */
  uint32_t qd = (uint32_t)t->quant.quantized_dimension;
  size_t inner = 1, extent = t->quant.scale_count;
  for (uint32_t d = qd + 1; d < t->rank; ++d) inner *= (size_t)t->shape[d];
  float *f = tinyml__alloc(c->allocator, n * sizeof(float), 16);
  if (!f) {
    c->error = tinyml__status_make(c->allocator, TINYML_STATUS_OUT_OF_MEMORY, "tflite: out of memory");
    return (te_value_t){0};
  }
  for (size_t i = 0; i < n; ++i) {
    size_t ch = extent > 1 ? (i / inner) % extent : 0;
    int32_t q = t->type == TFL_INT8 ? (int8_t)t->data[i] : t->data[i];
    int32_t z = t->quant.zero_point_count > ch ? (int32_t)t->quant.zero_point[ch] : 0;
    f[i] = (float)(q - z) * t->quant.scale[ch];
  }
  te_value_t v = te_const(&c->e, &ty, f);
  tinyml__free(c->allocator, f);
  return v;
}

/* ---- the driver -------------------------------------------------------- */

static const lowering_t *find_lowering(int32_t code) {
  for (size_t i = 0; i < sizeof kLowerings / sizeof kLowerings[0]; ++i)
    if (kLowerings[i].code == code) return &kLowerings[i];
  return NULL;
}

/* Marks the operators whose results reach an output; the rest are dead and
 * never lowered (so an unsupported dead op is no error). */
static uint8_t *live_operators(tfl_ctx_t *c) {
  const tfl_model_t *m = c->model;
  uint8_t *needed = tinyml__calloc(c->allocator, m->tensor_count + 1, 1, 1);
  uint8_t *live = tinyml__calloc(c->allocator, m->operator_count + 1, 1, 1);
  if (!needed || !live) {
    tinyml__free(c->allocator, needed);
    tinyml__free(c->allocator, live);
    return NULL;
  }
  for (uint32_t i = 0; i < m->output_count; ++i) needed[m->outputs[i]] = 1;
  for (uint32_t k = m->operator_count; k-- > 0;) {
    const tfl_operator_t *op = &m->operators[k];
    live[k] = (uint8_t)tfl_has_side_effect(op);
    for (uint32_t j = 0; j < op->output_count && !live[k]; ++j) live[k] = needed[op->outputs[j]];
    for (uint32_t j = 0; live[k] && j < op->input_count; ++j)
      if (op->inputs[j] >= 0) needed[op->inputs[j]] = 1;
  }
  tinyml__free(c->allocator, needed);
  return live;
}

static void put_tensor_attrs(tfl_ctx_t *c, const tfl_tensor_t *t) {
  strbuf_t *sb = c->e.sb;
  strbuf_append(sb, " {tinyml.name = ");
  strbuf_mlir_string(sb, t->name);
  if (t->type == TFL_UINT8) strbuf_append(sb, ", tinyml.unsigned");
  if (tfl_is_quantized(t)) {
    strbuf_append(sb, ", tinyml.scale = array<f32");
    for (uint32_t k = 0; k < t->quant.scale_count; ++k)
      strbuf_printf(sb, "%s%.9e", k ? ", " : ": ", (double)t->quant.scale[k]);
    strbuf_append(sb, ">, tinyml.zero_point = array<i64");
    for (uint32_t k = 0; k < t->quant.scale_count; ++k)
      strbuf_printf(sb, "%s%lld", k ? ", " : ": ",
                    (long long)(k < t->quant.zero_point_count ? t->quant.zero_point[k] : 0));
    strbuf_append(sb, ">");
    if (t->quant.scale_count > 1)
      strbuf_printf(sb, ", tinyml.quant_axis = %d : i32", t->quant.quantized_dimension);
  }
  strbuf_append(sb, "}");
}

static tinyml_status_t io_type(tfl_ctx_t *c, int32_t idx, const char *what, te_type_t *ty) {
  const tfl_tensor_t *t = &c->model->tensors[idx];
  if (t->type == TFL_UINT32)
    return tfl_fail(c, "%s '%s' is UINT32, which only CASTs inside the model may use", what, t->name);
  if (!tfl_te_type(t, ty) || ty->elem == TE_I1 || ty->elem == TE_I64)
    return tfl_fail(c, "%s '%s' has unsupported type %s", what, t->name, tfl_type_name(t->type));
  /* A -1 in shape_signature (usually the batch) is resolved the way TFLite
   * Micro resolves it: `shape` holds the size the model was converted at. */
  return TINYML_OK;
}

/* uint8 crosses the boundary as raw bytes and is carried as int8 inside:
 * flipping the top bit maps u to u - 128. */
static te_value_t flip_sign_bit(tfl_ctx_t *c, te_value_t v) {
  return te_binary(&c->e, "tosa.bitwise_xor", v, te_scalar_int(&c->e, TE_I8, -128));
}

/* The variable tensors live operators read, in order of first use: the
 * state TFLite keeps between invokes.  Each becomes an extra argument and
 * an extra result, so the runtime can keep it. */
static tinyml_status_t find_states(tfl_ctx_t *c, const uint8_t *live) {
  const tfl_model_t *m = c->model;
  uint8_t *seen = tinyml__calloc(c->allocator, m->tensor_count + 1, 1, 1);
  c->states = tinyml__calloc(c->allocator, m->tensor_count + 1, sizeof(int32_t), 4);
  if (!seen || !c->states) {
    tinyml__free(c->allocator, seen);
    return tinyml__status_make(c->allocator, TINYML_STATUS_OUT_OF_MEMORY, "tflite: out of memory");
  }
  enum { STATE = 1, MODEL_INPUT = 2 };
  for (uint32_t i = 0; i < m->input_count; ++i) seen[m->inputs[i]] = MODEL_INPUT;
  tinyml_status_t st = TINYML_OK;
  for (uint32_t k = 0; k < m->operator_count && !st; ++k)
    for (uint32_t j = 0; live[k] && j < m->operators[k].input_count && !st; ++j) {
      int32_t t = m->operators[k].inputs[j];
      if (t < 0 || !m->tensors[t].is_variable || seen[t] == STATE) continue;
      if (seen[t] == MODEL_INPUT)
        st = tfl_fail(c, "variable tensor '%s' is also a model input", m->tensors[t].name);
      seen[t] = STATE;
      c->states[c->state_count++] = t;
    }
  tinyml__free(c->allocator, seen);
  return st;
}

/* uint8 would need the sign flip at the boundary, and its reset value is
 * no byte fill of the int8 it is carried as; no model has uint8 state. */
static tinyml_status_t state_type(tfl_ctx_t *c, int32_t idx, te_type_t *ty) {
  const tfl_tensor_t *t = &c->model->tensors[idx];
  if (t->type == TFL_UINT8)
    return tfl_fail(c, "variable tensor '%s' is UINT8 (uint8 state is not supported)", t->name);
  return io_type(c, idx, "variable tensor", ty);
}

/* The byte TFLite Micro's ResetVariableTensors writes over a state: an
 * int8 tensor's zero point, else 0.  The runtime fills with it at reset. */
static unsigned state_fill(const tfl_tensor_t *t) {
  if (t->type != TFL_INT8 || t->quant.zero_point_count == 0) return 0;
  return (unsigned)((uint64_t)t->quant.zero_point[0] & 0xFF);
}

static void put_state_attrs(tfl_ctx_t *c, const tfl_tensor_t *t, int is_arg) {
  strbuf_t *sb = c->e.sb;
  strbuf_append(sb, " {tinyml.name = ");
  strbuf_mlir_string(sb, t->name);
  strbuf_append(sb, ", tinyml.state");
  if (is_arg) strbuf_printf(sb, ", tinyml.state_fill = %u : i64", state_fill(t));
  strbuf_append(sb, "}");
}

/* The model's inputs, then one argument per state. */
static tinyml_status_t write_args(tfl_ctx_t *c) {
  const tfl_model_t *m = c->model;
  te_type_t ty;
  for (uint32_t i = 0; i < m->input_count + c->state_count; ++i) {
    int is_state = i >= m->input_count;
    int32_t idx = is_state ? c->states[i - m->input_count] : m->inputs[i];
    TINYML_RETURN_IF_ERROR(is_state ? state_type(c, idx, &ty) : io_type(c, idx, "input", &ty));
    te_value_t v = {++c->e.next_id, ty};
    strbuf_printf(c->e.sb, "%s%%v%u: ", i ? ", " : "", v.id);
    te_print_type(&c->e, &ty);
    if (is_state) put_state_attrs(c, &m->tensors[idx], 1);
    else put_tensor_attrs(c, &m->tensors[idx]);
    c->values[idx] = v;
  }
  return tfl_vars_write_args(c, m->input_count + c->state_count > 0);
}

/* The model's outputs, then one result per state. */
static tinyml_status_t write_results(tfl_ctx_t *c) {
  const tfl_model_t *m = c->model;
  te_type_t ty;
  for (uint32_t i = 0; i < m->output_count + c->state_count; ++i) {
    int is_state = i >= m->output_count;
    int32_t idx = is_state ? c->states[i - m->output_count] : m->outputs[i];
    TINYML_RETURN_IF_ERROR(is_state ? state_type(c, idx, &ty) : io_type(c, idx, "output", &ty));
    if (i) strbuf_append(c->e.sb, ", ");
    te_print_type(&c->e, &ty);
    if (is_state) put_state_attrs(c, &m->tensors[idx], 0);
    else put_tensor_attrs(c, &m->tensors[idx]);
  }
  return tfl_vars_write_results(c, m->output_count + c->state_count > 0);
}

static tinyml_status_t write_signature(tfl_ctx_t *c) {
  const tfl_model_t *m = c->model;
  strbuf_append(c->e.sb, "module {\n  func.func @main(");
  TINYML_RETURN_IF_ERROR(write_args(c));
  strbuf_append(c->e.sb, ") -> (");
  TINYML_RETURN_IF_ERROR(write_results(c));
  strbuf_append(c->e.sb, ") {\n");
  for (uint32_t i = 0; i < m->input_count; ++i)
    if (m->tensors[m->inputs[i]].type == TFL_UINT8)
      c->values[m->inputs[i]] = flip_sign_bit(c, c->values[m->inputs[i]]);
  return TINYML_OK;
}

/* The value of model output i, or of state i - output_count (variable
 * tensors, then resource variables): its value after the last operator
 * that updated it, else its argument. */
static te_value_t result_value(tfl_ctx_t *c, uint32_t i) {
  const tfl_model_t *m = c->model;
  if (i >= m->output_count + c->state_count)
    return tfl_vars_value(c, i - m->output_count - c->state_count);
  if (i >= m->output_count) return c->values[c->states[i - m->output_count]];
  const tfl_tensor_t *t = &m->tensors[m->outputs[i]];
  te_value_t v = c->values[m->outputs[i]];
  if (!v.id && t->data) v = materialise_const(c, t);
  if (!v.id && !c->error) tfl_fail(c, "output '%s' is never computed", t->name);
  if (v.id && t->type == TFL_UINT8) v = flip_sign_bit(c, v);
  return v;
}

static tinyml_status_t write_return(tfl_ctx_t *c) {
  uint32_t n = c->model->output_count + c->state_count + tfl_vars_count(c);
  te_value_t *res = tinyml__calloc(c->allocator, n + 1, sizeof(te_value_t), 8);
  if (!res) return tinyml__status_make(c->allocator, TINYML_STATUS_OUT_OF_MEMORY, "tflite: out of memory");
  for (uint32_t i = 0; i < n && !c->error; ++i) res[i] = result_value(c, i);
  if (!c->error) {
    strbuf_append(c->e.sb, "    return");
    for (uint32_t i = 0; i < n; ++i) strbuf_printf(c->e.sb, "%s %%v%u", i ? "," : "", res[i].id);
    strbuf_append(c->e.sb, " : ");
    for (uint32_t i = 0; i < n; ++i) {
      if (i) strbuf_append(c->e.sb, ", ");
      te_print_type(&c->e, &res[i].type);
    }
    strbuf_append(c->e.sb, "\n  }\n}\n");
  }
  tinyml__free(c->allocator, res);
  return c->error;
}

/* Every op the lowering writes is located at "BUILTIN first-output-name". */
static void set_loc(tfl_ctx_t *c) {
  const tfl_operator_t *op = c->op;
  const char *kind = op->custom_code ? op->custom_code : tfl_builtin_name(op->builtin_code);
  const tfl_tensor_t *out = op->output_count ? tfl_out(c, 0) : NULL;
  te_set_loc(&c->e, kind, out ? out->name : NULL);
}

tinyml_status_t tfl_lower_operator(tfl_ctx_t *c) {
  set_loc(c);
  const lowering_t *l = c->op->custom_code ? NULL : find_lowering(c->op->builtin_code);
  const custom_lowering_t *custom = find_custom(c->op->custom_code);
  if (tfl_refuse_uint32(c)) return c->error;
  tinyml_status_t st = custom ? custom->fn(c)
                       : l    ? l->fn(c)
                              : tfl_fail(c, "%s", c->op->custom_code ? "custom operators are not supported"
                                                                     : "operator not supported");
  for (uint32_t j = 0; !st && !c->error && j < c->op->output_count; ++j)
    if (!c->values[c->op->outputs[j]].id) st = tfl_fail(c, "output %u was not produced", j);
  return st;
}

static tinyml_status_t lower_all(tfl_ctx_t *c) {
  const tfl_model_t *m = c->model;
  uint8_t *live = live_operators(c);
  if (!live) return tinyml__status_make(c->allocator, TINYML_STATUS_OUT_OF_MEMORY, "tflite: out of memory");
  tinyml_status_t st = find_states(c, live);
  if (!st) st = tfl_vars_find(c, live);
  if (!st) st = write_signature(c);
  for (uint32_t k = 0; k < m->operator_count && !st && !c->error; ++k) {
    if (!live[k]) continue;
    c->op_index = k;
    c->op = &m->operators[k];
    st = tfl_lower_operator(c);
  }
  c->op = NULL;
  te_set_loc(&c->e, NULL, NULL);
  tinyml__free(c->allocator, live);
  if (!st && !c->error) st = write_return(c);
  return st ? st : c->error;
}

/* Rescales divide by activation scales, and tensors this large cannot be
 * real on our targets; both are refused up front. */
static tinyml_status_t check_tensors(tfl_ctx_t *c) {
  const tfl_model_t *m = c->model;
  for (uint32_t i = 0; i < m->tensor_count; ++i) {
    const tfl_tensor_t *t = &m->tensors[i];
    te_type_t ty;
    if (tfl_te_type(t, &ty) && te_numel(&ty) > ((int64_t)1 << 31))
      return tfl_fail(c, "tensor '%s' has more than 2^31 elements", t->name);
    for (uint32_t k = 0; !t->data && k < t->quant.scale_count; ++k)
      if (!(t->quant.scale[k] > 0.0f))
        return tfl_fail(c, "tensor '%s' has a non-positive scale", t->name);
  }
  return TINYML_OK;
}

static tinyml_status_t check_model(tfl_ctx_t *c) {
  const tfl_model_t *m = c->model;
  TINYML_RETURN_IF_ERROR(check_tensors(c));
  if (m->version != 3)
    return tfl_fail(c, "schema version %u is not supported (expected 3)", m->version);
  if (m->input_count == 0 || m->output_count == 0)
    return tfl_fail(c, "subgraph 0 has no inputs or no outputs");
  for (uint32_t k = 0; k < m->operator_count; ++k)
    for (uint32_t j = 0; j < m->operators[k].output_count; ++j)
      if (m->tensors[m->operators[k].outputs[j]].data)
        return tfl_fail(c, "operator %u writes to constant tensor '%s'", k,
                        m->tensors[m->operators[k].outputs[j]].name);
  return TINYML_OK;
}

static tinyml_status_t over_limit(const tinyml_allocator_t *a, const tfl_model_t *m,
                                  uint32_t t, int64_t op, uint64_t bytes, uint64_t limit) {
  const tfl_tensor_t *x = &m->tensors[t];
  char by[96] = "";
  if (op >= 0)
    snprintf(by, sizeof by, ", the output of operator %lld (%s)", (long long)op,
             tfl_builtin_name(m->operators[op].builtin_code));
  return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                             "tflite: tensor %" PRIu32 " '%s'%s is %" PRIu64 " bytes, more "
                             "than max_tensor_bytes (%" PRIu64 ")",
                             t, x->name, by, bytes, limit);
}

/* The limits, on the shapes and sizes the file claims: the reader only
 * borrows constant data, so nothing proportional to a tensor has been
 * allocated yet.  Operator outputs first, so that an intermediate is
 * named with the operator that makes it. */
static tinyml_status_t check_limits(const tfl_model_t *m, const te_limits_t *l,
                                    const tinyml_allocator_t *a) {
  if (m->operator_count > l->max_ops)
    return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                               "tflite: subgraph 0 has %" PRIu32 " operators, more than "
                               "max_ops (%" PRIu64 ")", m->operator_count, l->max_ops);
  for (uint32_t k = 0; k < m->operator_count; ++k)
    for (uint32_t j = 0; j < m->operators[k].output_count; ++j) {
      int32_t t = m->operators[k].outputs[j];
      uint64_t bytes = t >= 0 ? tfl_tensor_bytes(&m->tensors[t]) : 0;
      if (bytes > l->max_tensor_bytes)
        return over_limit(a, m, (uint32_t)t, k, bytes, l->max_tensor_bytes);
    }
  uint64_t constants = 0;
  for (uint32_t t = 0; t < m->tensor_count; ++t) {
    const tfl_tensor_t *x = &m->tensors[t];
    uint64_t bytes = tfl_tensor_bytes(x);
    if (bytes < x->data_size) bytes = x->data_size; /* e.g. a type without a fixed size */
    if (bytes > l->max_tensor_bytes) return over_limit(a, m, t, -1, bytes, l->max_tensor_bytes);
    /* Each tensor's data is emitted on its own, shared buffer or not. */
    constants += x->data_size; /* each <= the file size: no overflow */
    if (constants > l->max_constant_bytes)
      return tinyml__status_make(a, TINYML_STATUS_UNSUPPORTED,
                                 "tflite: constants reach %" PRIu64 " bytes at tensor %" PRIu32
                                 " '%s', more than max_constant_bytes (%" PRIu64 ")",
                                 constants, t, x->name, l->max_constant_bytes);
  }
  return TINYML_OK;
}

tinyml_status_t tfl_import(const void *bytes, size_t size,
                           const tinyml_allocator_t *allocator, char **text,
                           size_t *length) {
  return tfl_import_limited(bytes, size, NULL, allocator, text, length);
}

tinyml_status_t tfl_import_limited(const void *bytes, size_t size, const te_limits_t *limits,
                                   const tinyml_allocator_t *allocator, char **text,
                                   size_t *length) {
  tinyml_allocator_t a = tinyml__allocator_or_default(allocator);
  *text = NULL;
  *length = 0;
  const te_limits_t l = te_limits_resolve(limits);
  tfl_model_t *m = NULL;
  TINYML_RETURN_IF_ERROR(tfl_read(bytes, size, &a, &m));
  tinyml_status_t lst = custom_shapes(m, &a);
  if (!lst) lst = check_limits(m, &l, &a);
  if (lst) {
    tfl_model_free(m, &a);
    return lst;
  }
  strbuf_t sb;
  strbuf_init(&sb, &a);
  tfl_ctx_t c = {.allocator = &a, .model = m, .limits = l, .e = {.sb = &sb},
                 .bytes = bytes, .size = size};
  c.values = tinyml__calloc(&a, m->tensor_count + 1, sizeof(te_value_t), 8);
  tinyml_status_t st = c.values ? check_model(&c)
                                : tinyml__status_make(&a, TINYML_STATUS_OUT_OF_MEMORY,
                                                      "tflite: out of memory");
  if (!st) st = lower_all(&c);
  if (!st) {
    *text = strbuf_take(&sb, length);
    if (!*text) st = tinyml__status_make(&a, TINYML_STATUS_OUT_OF_MEMORY, "tflite: out of memory");
  }
  /* A failed import keeps exactly one status: the first error. */
  if (st != c.error && c.error) tinyml_status_free(c.error);
  strbuf_free(&sb);
  tinyml__free(&a, c.values);
  tinyml__free(&a, c.states);
  tfl_vars_free(&c);
  tfl_model_free(m, &a);
  return st;
}
