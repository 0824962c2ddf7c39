/* Internal to the TFLite importer: the state shared by the operator
 * lowerings, and the lowerings themselves (one function per builtin). */
#ifndef TINYML_IMPORTERS_TFL_LOWER_H
#define TINYML_IMPORTERS_TFL_LOWER_H

#include "../common/import_limits.h"
#include "../common/tosa_emit.h"
#include "tflite_reader.h"

typedef struct tfl_ctx {
  const tinyml_allocator_t *allocator;
  const tfl_model_t *model;
  te_limits_t limits;   /* resolved: no field is 0 */
  te_t e;
  te_value_t *values;   /* per tensor; id 0 = not produced yet */
  uint32_t op_index;    /* the operator being lowered, for messages */
  const tfl_operator_t *op;
  tinyml_status_t error;
  /* The variable tensors live operators read, by first use: each is one
   * extra argument and one extra result of the function (model state). */
  int32_t *states;
  uint32_t state_count;
  /* Resource variables, also state (tfl_variables.h), and the file's bytes
   * for CALL_ONCE's initialiser subgraph. */
  struct tfl_vars *vars;
  const void *bytes;
  size_t size;
  uint64_t inlined_ops; /* IF branch operators lowered so far, against max_ops */
} tfl_ctx_t;

/* Records the first error as "tflite: operator N (NAME): <message>" and
 * returns it; later errors are dropped so the first cause is reported. */
tinyml_status_t tfl_fail(tfl_ctx_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

const tfl_tensor_t *tfl_tensor(tfl_ctx_t *c, int32_t index);
/* The operator's i-th input/output tensor; NULL if omitted (-1) or absent. */
const tfl_tensor_t *tfl_in(tfl_ctx_t *c, uint32_t i);
const tfl_tensor_t *tfl_out(tfl_ctx_t *c, uint32_t i);
/* The TOSA value of input i (constants are materialised on first use);
 * id 0 after recording an error. */
te_value_t tfl_value_in(tfl_ctx_t *c, uint32_t i);
/* Binds the operator's output i to `v` after checking its shape and type. */
tinyml_status_t tfl_set_out(tfl_ctx_t *c, uint32_t i, te_value_t v);
/* Updates the state held by the operator's input i, a variable tensor, to
 * `v` (same checks as tfl_set_out).  Later readers of the tensor and the
 * function's state result see `v`, as TFLite updates variables in place. */
tinyml_status_t tfl_set_state(tfl_ctx_t *c, uint32_t i, te_value_t v);
/* The TOSA type a tensor has (uint8 is carried as i8 + unsigned flags). */
int tfl_te_type(const tfl_tensor_t *t, te_type_t *out);
int tfl_is_quantized(const tfl_tensor_t *t);  /* int8/uint8/int16 with a scale */
float tfl_scale(const tfl_tensor_t *t);        /* first scale, 0 if none */
int32_t tfl_zero_point(const tfl_tensor_t *t); /* first zero point, 0 if none */
/* The raw options table if it has the expected union tag, else NULL
 * (a missing table is fine: every field reads as its default). */
const tfl_table_t *tfl_options(tfl_ctx_t *c, uint8_t type);
/* Quantised type limits: int8 -128..127, uint8 0..255, int16. */
void tfl_qrange(const tfl_tensor_t *t, int32_t *qmin, int32_t *qmax);

/* Clamps `v` for a fused activation (0 none, 1 RELU, 2 RELU_N1_TO_1,
 * 3 RELU6) in the domain of tensor `out`. */
te_value_t tfl_activation(tfl_ctx_t *c, te_value_t v, const tfl_tensor_t *out,
                          int activation);
/* Rescales an i32 accumulator to `out`'s quantisation with TFLite's
 * multipliers for `real` scales (one per channel, or one). */
te_value_t tfl_requantize(tfl_ctx_t *c, te_value_t acc, const double *real,
                          uint32_t n, const tfl_tensor_t *out);
/* table[x + 128] for each element of int8 x (one tosa.table). */
te_value_t tfl_lookup_i8(tfl_ctx_t *c, te_value_t x, const int8_t table[256]);
/* Rounds a float tensor half away from zero (TfLiteRound). */
te_value_t tfl_round_away(tfl_ctx_t *c, te_value_t x);
/* Records OUT_OF_MEMORY as the error (unless one is already recorded) and
 * returns 0. */
int tfl_out_of_memory(tfl_ctx_t *c);
/* Elements of a tensor's shape. */
int64_t tfl_numel(const tfl_tensor_t *t);
/* Reads constant int32/int64 vector operand `input` into `out` (at most
 * `cap` values, the count in *n); 0 after recording an error. */
int tfl_const_ints(tfl_ctx_t *c, uint32_t input, int64_t *out, uint32_t cap, uint32_t *n);
/* Same type, and the same quantisation when either is quantised: a data
 * movement between them copies raw values. */
int tfl_quant_matches(const tfl_tensor_t *a, const tfl_tensor_t *b);
/* Dequantises a constant int8/uint8 tensor to f32 at compile time. */
te_value_t tfl_dequantized_const(tfl_ctx_t *c, const tfl_tensor_t *t,
                                 uint32_t rank, const int64_t *dims);

tinyml_status_t tfl_lower_conv2d(tfl_ctx_t *c);
tinyml_status_t tfl_lower_depthwise(tfl_ctx_t *c);
tinyml_status_t tfl_lower_fully_connected(tfl_ctx_t *c);
tinyml_status_t tfl_lower_avg_pool(tfl_ctx_t *c);
tinyml_status_t tfl_lower_max_pool(tfl_ctx_t *c);
tinyml_status_t tfl_lower_add_sub(tfl_ctx_t *c);
tinyml_status_t tfl_lower_mul(tfl_ctx_t *c);
tinyml_status_t tfl_lower_softmax(tfl_ctx_t *c);
tinyml_status_t tfl_lower_relu(tfl_ctx_t *c);
tinyml_status_t tfl_lower_unary_float(tfl_ctx_t *c);
tinyml_status_t tfl_lower_quantize(tfl_ctx_t *c);
tinyml_status_t tfl_lower_dequantize(tfl_ctx_t *c);
tinyml_status_t tfl_lower_reshape(tfl_ctx_t *c);
tinyml_status_t tfl_lower_gather(tfl_ctx_t *c);
tinyml_status_t tfl_lower_unary_math(tfl_ctx_t *c);
tinyml_status_t tfl_lower_unary_q8(tfl_ctx_t *c, float alpha); /* int8 ABS, LEAKY_RELU, HARD_SWISH, ELU */
tinyml_status_t tfl_lower_prelu_q8(tfl_ctx_t *c);
tinyml_status_t tfl_lower_binary_math(tfl_ctx_t *c);
/* int8/int32 DIV, int8/int16/int32 SQUARED_DIFFERENCE; `act` is DIV's fused activation */
tinyml_status_t tfl_lower_binary_int(tfl_ctx_t *c, int act);
tinyml_status_t tfl_lower_rsqrt_q8(tfl_ctx_t *c);
tinyml_status_t tfl_lower_l2norm_q8(tfl_ctx_t *c);
tinyml_status_t tfl_lower_log_softmax_q8(tfl_ctx_t *c); /* int8 LOG_SOFTMAX (TFLM) */
tinyml_status_t tfl_lower_pad(tfl_ctx_t *c);
tinyml_status_t tfl_lower_concat(tfl_ctx_t *c);
tinyml_status_t tfl_lower_transpose(tfl_ctx_t *c);
tinyml_status_t tfl_lower_strided_slice(tfl_ctx_t *c);
tinyml_status_t tfl_lower_mean(tfl_ctx_t *c);
tinyml_status_t tfl_lower_sum_q(tfl_ctx_t *c); /* int8/int16 SUM, TFLM's QuantizedMeanOrSum */
tinyml_status_t tfl_lower_compare(tfl_ctx_t *c);
tinyml_status_t tfl_lower_logical(tfl_ctx_t *c);
tinyml_status_t tfl_lower_select(tfl_ctx_t *c);
tinyml_status_t tfl_lower_cast(tfl_ctx_t *c);
tinyml_status_t tfl_lower_arg_min_max(tfl_ctx_t *c);
tinyml_status_t tfl_lower_pack(tfl_ctx_t *c);
tinyml_status_t tfl_lower_unpack(tfl_ctx_t *c);
tinyml_status_t tfl_lower_split(tfl_ctx_t *c);
tinyml_status_t tfl_lower_slice(tfl_ctx_t *c);
tinyml_status_t tfl_lower_space_depth(tfl_ctx_t *c);
tinyml_status_t tfl_lower_broadcast(tfl_ctx_t *c);
tinyml_status_t tfl_lower_shape_of(tfl_ctx_t *c);
tinyml_status_t tfl_lower_add_n(tfl_ctx_t *c);
tinyml_status_t tfl_lower_reduce(tfl_ctx_t *c);
tinyml_status_t tfl_lower_resize(tfl_ctx_t *c);
tinyml_status_t tfl_lower_batch_matmul(tfl_ctx_t *c);
tinyml_status_t tfl_lower_prelu(tfl_ctx_t *c);
tinyml_status_t tfl_refuse_uint32(tfl_ctx_t *c);
tinyml_status_t tfl_lower_last_axis_norm(tfl_ctx_t *c);
tinyml_status_t tfl_lower_reverse(tfl_ctx_t *c);
tinyml_status_t tfl_lower_mirror_pad(tfl_ctx_t *c);
tinyml_status_t tfl_lower_gather_nd(tfl_ctx_t *c);
tinyml_status_t tfl_lower_embedding_lookup(tfl_ctx_t *c);
tinyml_status_t tfl_lower_sequence_lstm(tfl_ctx_t *c);
tinyml_status_t tfl_lower_svdf(tfl_ctx_t *c);
/* The int8 x int8 LSTM with an int16 cell, as TFLite Micro computes it. */
tinyml_status_t tfl_lower_sequence_lstm_int(tfl_ctx_t *c);
/* Lowers c->op (op and op_index set by the caller) with its builtin's
 * lowering and checks it produced every output: what the driver does per
 * operator, and IF per branch operator. */
tinyml_status_t tfl_lower_operator(tfl_ctx_t *c);
tinyml_status_t tfl_lower_if(tfl_ctx_t *c);
tinyml_status_t tfl_lower_while(tfl_ctx_t *c);
/* WHILE as one tosa.while_loop (tfl_lower_while_loop.c), for a condition
 * only known at run time: cond and body inlined into its regions. */
tinyml_status_t tfl_lower_while_loop(tfl_ctx_t *c, const tfl_model_t *cond,
                                     const tfl_model_t *body);
/* Lowers subgraph b inline (tfl_lower_if.c): its inputs are `ins` (one per
 * input, of its TOSA types), outs[j] becomes its output j.  Refuses state,
 * variables and nested control flow; its operators count against max_ops;
 * errors read "operator N (IF): subgraph S: ...". */
tinyml_status_t tfl_lower_subgraph(tfl_ctx_t *c, const tfl_model_t *b, const te_value_t *ins,
                                   te_value_t *outs);
tinyml_status_t tfl_lower_var_handle(tfl_ctx_t *c);
tinyml_status_t tfl_lower_read_variable(tfl_ctx_t *c);
tinyml_status_t tfl_lower_assign_variable(tfl_ctx_t *c);
tinyml_status_t tfl_lower_space_to_batch(tfl_ctx_t *c);
tinyml_status_t tfl_lower_batch_to_space(tfl_ctx_t *c);
tinyml_status_t tfl_lower_transpose_conv(tfl_ctx_t *c);
tinyml_status_t tfl_lower_l2_pool(tfl_ctx_t *c);
tinyml_status_t tfl_lower_floor_mod(tfl_ctx_t *c);
tinyml_status_t tfl_lower_cumsum(tfl_ctx_t *c);
tinyml_status_t tfl_lower_broadcast_args(tfl_ctx_t *c);
tinyml_status_t tfl_lower_dynamic_update_slice(tfl_ctx_t *c);
/* The custom operator TFLite_Detection_PostProcess (fast NMS). */
tinyml_status_t tfl_lower_detection(tfl_ctx_t *c);
/* Gives its outputs of rank 0 the shapes TFLite's Prepare sets. */
tinyml_status_t tfl_shape_detection(const tinyml_allocator_t *a, const tfl_operator_t *op,
                                    tfl_tensor_t *tensors);
/* 16x8 (int16 activations, int8 weights) CONV_2D and DEPTHWISE_CONV_2D, from
 * the padded input, the weights in TOSA layout and the i32-accumulator conv
 * properties; and FULLY_CONNECTED (tfl_lower_int16.c). */
tinyml_status_t tfl_lower_16x8(tfl_ctx_t *c, const char *op_name, te_value_t x, te_value_t w,
                               const char *props, const int64_t *acc_dims, int activation,
                               int float_product);
tinyml_status_t tfl_lower_fc_16x8(tfl_ctx_t *c);
/* The sum over each pooling window of int16 x (i32, exact), a depthwise conv
 * of `ones` with `props`; TOSA's would accumulate in i48. */
te_value_t tfl_window_sum_16(tfl_ctx_t *c, te_value_t x, te_value_t ones, const char *props,
                             const te_type_t *sum_t);

/* The 16x8 pieces the integer LSTM and BATCH_MATMUL share (tfl_lower_int16.c): TFLite's
 * int64 MultiplyByQuantizedMultiplier for `real` as a SINGLE_ROUND rescale's
 * multiplier and shift (0 if out of range); and the two i8 x i8 -> i32
 * passes of convolution `op_name` over the high and the low bytes of int16
 * x, whose 256 * hi + lo is the convolution over x, exactly. */
int tfl_reduced_multiplier(double real, int32_t *m, int8_t *s);
void tfl_split_passes(tfl_ctx_t *c, const char *op_name, te_value_t x, te_value_t w,
                      const char *props, const te_type_t *acc_t, te_value_t *hi_acc,
                      te_value_t *lo_acc);

#endif
