#!/usr/bin/env python3
"""Writes small single-purpose .tflite models that exercise the TFLite
operators and options the models in ../shared do not (padding modes,
strides, dilation, broadcasting, uint8, every activation...).

Each model is described here in Python, written as flatc JSON, and turned
into a .tflite with `flatc -b` against the TFLite schema, so the models are
reproducible from source.  Expected outputs come from TFLite itself
(../shared/tools/reference/tflite_run.js) and live in expected/; the LSTM
ones are also checked against an independent Python LSTM (lstm_ops.py)
every time this runs.  The SVDFs' and the integer LSTMs' expected outputs
are TFLite Micro's, from Python ports of its integer kernels (svdf_ops.py,
lstm_int_ops.py), as desktop TFLite's differ; they must match exactly.
more_ops.py's models are also checked against its Python references of
TFLite's kernels every time this runs, and those desktop TFLite cannot run
(int8 CUMSUM...) take the references' outputs.
The int16 (16x8) layers' are ports of TFLM's int16 kernels (int16_ops.py),
checked against TFLite's builtin int16 kernels.

Models with state (TFLite variable tensors: the LSTMs) run like the rest:
the module keeps the state (tinyml.state), so they have the model's own
signature, one input and one output, and each case starts from the
initial state.

Usage:
  gen_ops.py FLATC SCHEMA OUTDIR            write OUTDIR/<name>.tflite + manifest.json
  gen_ops.py FLATC SCHEMA OUTDIR --refresh  also rerun TFLite into expected/ (needs node)
"""
import json
import os
import random
import struct
import subprocess
import sys

import cast_u32_ops
import control_ops
import detection_ops
import int16_ops
import layout_ops
import logic_ops
import log_softmax_ops
import lstm_int_ops
import lstm_ops
import mean_ops
import more_ops
import nn_ops
import prelu16_ops
import q8_bin_ops
import q8_math_ops
import q8_unary_ops
import q16_unary_ops
import resize_q_ops
import strided_ops
import svdf_ops
import type_ops
import variable_ops
import while_ops

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected")

CODES = {"ADD": 0, "AVERAGE_POOL_2D": 1, "CONCATENATION": 2, "CONV_2D": 3,
         "DEPTHWISE_CONV_2D": 4, "DEQUANTIZE": 6, "FULLY_CONNECTED": 9, "LOGISTIC": 14,
         "MAX_POOL_2D": 17, "MUL": 18, "RELU": 19, "RELU_N1_TO_1": 20, "RELU6": 21,
         "RESHAPE": 22, "SOFTMAX": 25, "TANH": 28, "PAD": 34, "TRANSPOSE": 39, "MEAN": 40,
         "SUB": 41, "STRIDED_SLICE": 45, "QUANTIZE": 114, "GATHER": 36, "CUSTOM": 32,
         "LSTM": 16, "FLOOR": 8, "DIV": 42, "EXP": 47, "MAXIMUM": 55, "MINIMUM": 57,
         "NEG": 59, "SIN": 66, "LOG": 73, "SQRT": 75, "RSQRT": 76, "FLOOR_DIV": 90,
         "SQUARE": 92, "LEAKY_RELU": 98, "SQUARED_DIFFERENCE": 99, "ABS": 101, "CEIL": 104,
         "COS": 108, "ELU": 111, "ROUND": 116, "HARD_SWISH": 117,
         "UNIDIRECTIONAL_SEQUENCE_LSTM": 44, "SVDF": 27}
OPTIONS = {"CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
           "AVERAGE_POOL_2D": "Pool2DOptions", "MAX_POOL_2D": "Pool2DOptions",
           "FULLY_CONNECTED": "FullyConnectedOptions", "SOFTMAX": "SoftmaxOptions",
           "CONCATENATION": "ConcatenationOptions", "ADD": "AddOptions", "SUB": "SubOptions",
           "MUL": "MulOptions", "RESHAPE": "ReshapeOptions", "MEAN": "ReducerOptions",
           "STRIDED_SLICE": "StridedSliceOptions", "PAD": "PadOptions",
           "TRANSPOSE": "TransposeOptions", "GATHER": "GatherOptions", "DIV": "DivOptions",
           "LEAKY_RELU": "LeakyReluOptions",
           "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
           "SVDF": "SVDFOptions"}
# Operator versions other than 1 (TFLite registers BROADCAST_TO from 2).
VERSIONS = {"BROADCAST_TO": 2}
for extra in (logic_ops, layout_ops, nn_ops, q8_unary_ops, resize_q_ops, variable_ops,
              control_ops, more_ops):
    CODES.update(extra.CODES)
    OPTIONS.update(extra.OPTIONS)
CODES.update(type_ops.CODES)
OPTIONS.update(type_ops.OPTIONS)
PACK = {"FLOAT32": "f", "INT8": "b", "UINT8": "B", "INT16": "h", "INT32": "i", "INT64": "q"}
DTYPE = {"FLOAT32": "float32", "INT8": "int8", "UINT8": "uint8", "INT16": "int16",
         "INT32": "int32"}


class Model:
    def __init__(self, name, seed):
        self.name = name
        self.rng = random.Random(seed)
        self.tensors, self.buffers, self.ops, self.codes = [], [{}], [], []
        self.inputs, self.outputs = [], []
        self.data = {}  # tensor index -> its constant's values, as stored

    def tensor(self, shape, ttype="FLOAT32", q=None, data=None, name=None, variable=False):
        t = {"shape": list(shape), "type": ttype, "name": name or "t%d" % len(self.tensors)}
        if variable:
            t["is_variable"] = True
        if q:
            t["quantization"] = {"scale": list(q[0]), "zero_point": list(q[1])}
            if len(q) > 2:
                t["quantization"]["quantized_dimension"] = q[2]
        if data is not None:
            fmt = "<%d%s" % (len(data), PACK[ttype])
            raw = struct.pack(fmt, *data)
            self.data[len(self.tensors)] = list(struct.unpack(fmt, raw))
            self.buffers.append({"data": list(raw)})
            t["buffer"] = len(self.buffers) - 1
        else:
            self.buffers.append({})
            t["buffer"] = len(self.buffers) - 1
        self.tensors.append(t)
        return len(self.tensors) - 1

    def const(self, shape, ttype="FLOAT32", q=None, lo=-1.0, hi=1.0):
        n = 1
        for d in shape:
            n *= d
        if ttype == "FLOAT32":
            data = [self.rng.uniform(lo, hi) for _ in range(n)]
        elif ttype == "INT32":
            data = [self.rng.randint(int(lo), int(hi)) for _ in range(n)]
        elif ttype == "UINT8":
            data = [self.rng.randint(0, 255) for _ in range(n)]
        else:
            data = [self.rng.randint(-127, 127) for _ in range(n)]
        return self.tensor(shape, ttype, q, data)

    def ints(self, values):
        return self.tensor([len(values)], "INT32", data=list(values))

    def op(self, kind, inputs, outputs, **options):
        if kind not in self.codes:
            self.codes.append(kind)
        o = {"opcode_index": self.codes.index(kind), "inputs": inputs, "outputs": outputs}
        if kind in OPTIONS:
            o["builtin_options_type"] = OPTIONS[kind]
            o["builtin_options"] = options
        self.ops.append(o)

    def opcode(self, k):
        if k.startswith("custom:"):
            return {"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                    "custom_code": k[7:], "version": 1}
        # Codes above 127 keep 127 (PLACEHOLDER_FOR_GREATER_OP_CODES) in the
        # old byte field, as TFLite's converter writes them.
        return {"deprecated_builtin_code": min(CODES[k], 127), "builtin_code": k,
                "version": VERSIONS.get(k, 1)}

    def json(self):
        return {"version": 3,
                "operator_codes": [self.opcode(k) for k in self.codes],
                "subgraphs": [{"tensors": self.tensors, "inputs": self.inputs,
                               "outputs": self.outputs, "operators": self.ops,
                               "name": "main"}],
                "description": "libtinyml op test " + self.name,
                "buffers": self.buffers}


def q8(scale, zp):
    return ([scale], [zp])


def per_channel(n, lo=0.002, hi=0.02, axis=0, rng=None):
    rng = rng or random.Random(n)
    return ([rng.uniform(lo, hi) for _ in range(n)], [0] * n, axis)


def conv_model(name, ttype, in_shape, oc, k, stride, padding, dil=1, act="NONE", seed=1):
    m = Model(name, seed)
    n, h, w, c = in_shape
    eff = (k - 1) * dil + 1
    oh = -(-h // stride) if padding == "SAME" else (h - eff) // stride + 1
    ow = -(-w // stride) if padding == "SAME" else (w - eff) // stride + 1
    if ttype == "FLOAT32":
        x = m.tensor(in_shape, name="x")
        wt = m.const([oc, k, k, c])
        b = m.const([oc])
        y = m.tensor([n, oh, ow, oc], name="y")
    else:
        x = m.tensor(in_shape, ttype, q8(0.05, 3 if ttype == "INT8" else 130), name="x")
        if ttype == "UINT8":  # uint8 kernels take per-tensor uint8 weights
            wq = ([0.012] * oc, [0] * oc)
            wt = m.const([oc, k, k, c], "UINT8", q8(0.012, 131))
        else:
            wq = per_channel(oc, rng=m.rng)
            wt = m.const([oc, k, k, c], "INT8", wq)
        b = m.const([oc], "INT32", ([0.05 * s for s in wq[0]], [0] * oc), lo=-500, hi=500)
        y = m.tensor([n, oh, ow, oc], ttype, q8(0.07, -5 if ttype == "INT8" else 120), name="y")
    m.op("CONV_2D", [x, wt, b], [y], padding=padding, stride_w=stride, stride_h=stride,
         dilation_w_factor=dil, dilation_h_factor=dil, fused_activation_function=act)
    m.inputs, m.outputs = [x], [y]
    return m


def depthwise_model(name, ttype, mult, stride, padding, act="RELU6"):
    m = Model(name, 7)
    c = 3
    oh = -(-9 // stride) if padding == "SAME" else (9 - 3) // stride + 1
    if ttype == "FLOAT32":
        x = m.tensor([1, 9, 9, c], name="x")
        wt = m.const([1, 3, 3, c * mult])
        b = m.const([c * mult])
        y = m.tensor([1, oh, oh, c * mult], name="y")
    else:
        x = m.tensor([1, 9, 9, c], "INT8", q8(0.04, -10), name="x")
        wq = per_channel(c * mult, 0.005, 0.03, 3, m.rng)
        wt = m.const([1, 3, 3, c * mult], "INT8", wq)
        b = m.const([c * mult], "INT32", ([0.04 * s for s in wq[0]], [0] * (c * mult)), -300, 300)
        y = m.tensor([1, oh, oh, c * mult], "INT8", q8(0.03, 2), name="y")
    m.op("DEPTHWISE_CONV_2D", [x, wt, b], [y], padding=padding, stride_w=stride, stride_h=stride,
         depth_multiplier=mult, fused_activation_function=act)
    m.inputs, m.outputs = [x], [y]
    return m


def pool_model(name, kind, ttype, k, stride, padding, act="NONE"):
    m = Model(name, 3)
    h = 11
    oh = -(-h // stride) if padding == "SAME" else (h - k) // stride + 1
    q = q8(0.06, -7) if ttype != "FLOAT32" else None
    x = m.tensor([1, h, h, 4], ttype, q, name="x")
    y = m.tensor([1, oh, oh, 4], ttype, q, name="y")
    m.op(kind, [x], [y], padding=padding, stride_w=stride, stride_h=stride, filter_width=k,
         filter_height=k, fused_activation_function=act)
    m.inputs, m.outputs = [x], [y]
    return m


def binary_model(name, kind, ttype, act="NONE", broadcast=True):
    m = Model(name, 5)
    if ttype == "FLOAT32":
        a = m.tensor([1, 5, 5, 3], name="a")
        b = m.const([1, 1, 1, 3]) if broadcast else m.tensor([1, 5, 5, 3], name="b")
        y = m.tensor([1, 5, 5, 3], name="y")
    else:
        off = 128 if ttype == "UINT8" else 0
        a = m.tensor([1, 5, 5, 3], ttype, q8(0.03, 4 + off), name="a")
        bq = q8(0.05, -9 + off)
        b = m.const([1, 1, 1, 3], ttype, bq) if broadcast else m.tensor([1, 5, 5, 3], ttype, bq, name="b")
        y = m.tensor([1, 5, 5, 3], ttype, q8(0.06, 1 + off), name="y")
    m.op(kind, [a, b], [y], fused_activation_function=act)
    m.inputs = [a] if broadcast else [a, b]
    m.outputs = [y]
    return m


def unary_model(name, kind, ttype, qin=(0.05, -3), qout=None):
    m = Model(name, 9)
    x = m.tensor([2, 7, 5], ttype, q8(*qin) if ttype != "FLOAT32" else None, name="x")
    if qout is None and ttype != "FLOAT32":
        qout = (1.0 / 256, -128) if kind == "LOGISTIC" else (1.0 / 128, 0)
    y = m.tensor([2, 7, 5], ttype, q8(*qout) if ttype != "FLOAT32" else None, name="y")
    m.op(kind, [x], [y])
    m.inputs, m.outputs = [x], [y]
    return m


def quant_models():
    out = []
    m = Model("quantize_f32_int8", 11)
    x = m.tensor([3, 10], name="x")
    y = m.tensor([3, 10], "INT8", q8(0.0078125, -1), name="y")
    m.op("QUANTIZE", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("dequantize_int8", 12)
    x = m.tensor([3, 10], "INT8", q8(0.02, 5), name="x")
    y = m.tensor([3, 10], name="y")
    m.op("DEQUANTIZE", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("requantize_int8", 13)
    x = m.tensor([3, 10], "INT8", q8(0.02, 5), name="x")
    y = m.tensor([3, 10], "INT8", q8(0.031, -20), name="y")
    m.op("QUANTIZE", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    # Requantisation between integer types, odd scale ratios (TFLite has
    # no int8 -> int16, which TFLM has).
    for name, tin, qin, tout, qout in (
            ("requantize_int16_int8", "INT16", (0.000197, 0), "INT8", (0.0611, -5)),
            ("requantize_int16_int32", "INT16", (1.0 / 65536, -32768), "INT32",
             (1.0 / 32767, 0)),
            ("requantize_int16_int16", "INT16", (0.00043, 0), "INT16", (0.00029, 0)),
            ("quantize_f32_int16", "FLOAT32", None, "INT16", (0.0000371, 0)),
            ("dequantize_int16", "INT16", (0.00021, 0), "FLOAT32", None)):
        m = Model(name, 14)
        x = m.tensor([3, 10], tin, q8(*qin) if qin else None, name="x")
        y = m.tensor([3, 10], tout, q8(*qout) if qout else None, name="y")
        m.op("DEQUANTIZE" if tout == "FLOAT32" else "QUANTIZE", [x], [y])
        m.inputs, m.outputs = [x], [y]
        out.append(m)
    return out


def shape_models():
    out = []
    m = Model("pad_int8", 21)
    x = m.tensor([1, 4, 5, 2], "INT8", q8(0.1, 7), name="x")
    p = m.tensor([4, 2], "INT32", data=[0, 0, 1, 2, 2, 1, 0, 0])
    y = m.tensor([1, 7, 8, 2], "INT8", q8(0.1, 7), name="y")
    m.op("PAD", [x, p], [y])
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("concat_int8", 22)  # TFLite requires equal int8 quantisation
    a = m.tensor([1, 3, 3, 2], "INT8", q8(0.05, 1), name="a")
    b = m.tensor([1, 3, 3, 3], "INT8", q8(0.05, 1), name="b")
    y = m.tensor([1, 3, 3, 5], "INT8", q8(0.05, 1), name="y")
    m.op("CONCATENATION", [a, b], [y], axis=3)
    m.inputs, m.outputs = [a, b], [y]
    out.append(m)
    m = Model("concat_float_axis1", 23)
    a = m.tensor([2, 3, 4], name="a")
    b = m.tensor([2, 2, 4], name="b")
    y = m.tensor([2, 5, 4], name="y")
    m.op("CONCATENATION", [a, b], [y], axis=1)
    m.inputs, m.outputs = [a, b], [y]
    out.append(m)
    m = Model("transpose_float", 24)
    x = m.tensor([2, 3, 4, 5], name="x")
    p = m.ints([0, 3, 1, 2])
    y = m.tensor([2, 5, 3, 4], name="y")
    m.op("TRANSPOSE", [x, p], [y])
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("strided_slice_int8", 25)
    x = m.tensor([1, 6, 7, 4], "INT8", q8(0.1, 0), name="x")
    y = m.tensor([4, 4, 2], "INT8", q8(0.1, 0), name="y")
    m.op("STRIDED_SLICE", [x, m.ints([0, 1, 2, 1]), m.ints([1, 5, -1, 3]), m.ints([1, 1, 1, 1])],
         [y], begin_mask=0, end_mask=0, shrink_axis_mask=1)
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    for name, ttype, q_in, q_out in (("mean_int8", "INT8", (0.05, -3), (0.05, -3)),
                                     ("mean_int8_rescale", "INT8", (0.05, -3), (0.02, 10)),
                                     ("mean_float", "FLOAT32", None, None)):
        m = Model(name, 26)
        x = m.tensor([1, 6, 5, 8], ttype, q8(*q_in) if q_in else None, name="x")
        y = m.tensor([1, 1, 1, 8], ttype, q8(*q_out) if q_out else None, name="y")
        m.op("MEAN", [x, m.ints([1, 2])], [y], keep_dims=True)
        m.inputs, m.outputs = [x], [y]
        out.append(m)
    return out


def fc_models():
    out = []
    m = Model("fc_float_batch3_relu", 31)
    x = m.tensor([3, 16], name="x")
    y = m.tensor([3, 10], name="y")
    m.op("FULLY_CONNECTED", [x, m.const([10, 16]), m.const([10])], [y],
         fused_activation_function="RELU")
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("fc_int8_nobias", 32)
    x = m.tensor([2, 24], "INT8", q8(0.05, -2), name="x")
    y = m.tensor([2, 7], "INT8", q8(0.3, 3), name="y")
    m.op("FULLY_CONNECTED", [x, m.const([7, 24], "INT8", q8(0.01, 0)), -1], [y])
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("fc_hybrid_batch2", 33)
    x = m.tensor([2, 20], name="x")
    y = m.tensor([2, 6], name="y")
    m.op("FULLY_CONNECTED", [x, m.const([6, 20], "INT8", q8(0.01, 0)), m.const([6])], [y])
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("softmax_float_beta", 34)
    x = m.tensor([3, 9], name="x")
    y = m.tensor([3, 9], name="y")
    m.op("SOFTMAX", [x], [y], beta=1.7)
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("softmax_int8_rows", 35)
    x = m.tensor([4, 11], "INT8", q8(0.09, 5), name="x")
    y = m.tensor([4, 11], "INT8", q8(1.0 / 256, -128), name="y")
    m.op("SOFTMAX", [x], [y], beta=1.0)
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("softmax_int8_int16", 35)  # the keyword models' classifier
    x = m.tensor([3, 7], "INT8", q8(0.07, 2), name="x")
    y = m.tensor([3, 7], "INT16", q8(1.0 / 65536, -32768), name="y")
    m.op("SOFTMAX", [x], [y], beta=1.0)
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    # Indices from the file (random inputs would be out of range, which
    # TFLite refuses); tfls_movie_review in the zoo gathers run-time ones.
    m = Model("gather_float_axis1", 37)
    x = m.tensor([3, 5, 4], name="x")
    y = m.tensor([3, 2, 2, 4], name="y")
    m.op("GATHER", [x, m.tensor([2, 2], "INT32", data=[4, 0, 2, 2])], [y], axis=1)
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    m = Model("gather_int8_i64_axis0", 38)
    x = m.tensor([6, 3], "INT8", q8(0.1, 2), name="x")
    y = m.tensor([4, 3], "INT8", q8(0.1, 2), name="y")
    m.op("GATHER", [x, m.tensor([4], "INT64", data=[5, 0, 3, 5])], [y], axis=0)
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    out += float_math_models()
    # TF1's uint8 classifiers (Coral's MobileNets) end in this.
    m = Model("softmax_uint8_beta", 36)
    x = m.tensor([2, 13], "UINT8", q8(0.11, 133), name="x")
    y = m.tensor([2, 13], "UINT8", q8(1.0 / 256, 0), name="y")
    m.op("SOFTMAX", [x], [y], beta=0.8)
    m.inputs, m.outputs = [x], [y]
    out.append(m)
    return out


def float_math_models():
    """The float elementwise operators, several outputs per model."""
    out = []
    m = Model("float_unary_math", 39)
    x = m.tensor([2, 3, 7], name="x")
    # x * 5 reaches both clamps of HARD_SWISH and rounds to several integers.
    x5 = m.tensor([2, 3, 7], name="x5")
    m.op("MUL", [x, m.tensor([1], data=[5.0])], [x5])
    ys = []
    for k in ("ABS", "NEG", "EXP", "SQUARE", "CEIL", "FLOOR", "ROUND", "SIN", "COS", "ELU",
              "HARD_SWISH"):
        ys.append(m.tensor([2, 3, 7], name=k.lower()))
        m.op(k, [x5], [ys[-1]])
    ys.append(m.tensor([2, 3, 7], name="leaky_relu"))
    m.op("LEAKY_RELU", [x5], [ys[-1]], alpha=0.15)
    m.inputs, m.outputs = [x], ys
    out.append(m)
    m = Model("float_unary_positive", 40)
    x = m.tensor([3, 11], name="x")
    a = m.tensor([3, 11], name="abs")
    m.op("ABS", [x], [a])
    ys = []
    for k in ("SQRT", "RSQRT", "LOG"):
        ys.append(m.tensor([3, 11], name=k.lower()))
        m.op(k, [a], [ys[-1]])
    m.inputs, m.outputs = [x], ys
    out.append(m)
    m = Model("float_binary_math", 41)
    a = m.tensor([2, 3, 5], name="a")
    b = m.tensor([5], name="b")
    ys = []
    for k in ("MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "FLOOR_DIV"):
        ys.append(m.tensor([2, 3, 5], name=k.lower()))
        m.op(k, [a, b], [ys[-1]])
    ys.append(m.tensor([2, 3, 5], name="div_relu"))
    m.op("DIV", [a, b], [ys[-1]], fused_activation_function="RELU")
    m.inputs, m.outputs = [a, b], ys
    out.append(m)
    return out


def error_models():
    """Models that must be refused, with the text the error must contain."""
    out = []
    m = Model("err_gather_batch_dims", 41)
    x = m.tensor([2, 4, 3], name="x")
    y = m.tensor([2, 2, 3], name="y")
    m.op("GATHER", [x, m.tensor([2, 2], "INT32", data=[0, 2, 1, 3])], [y], axis=1, batch_dims=1)
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (GATHER): batch_dims 1 is not supported"))
    m = Model("err_custom", 42)
    x = m.tensor([4], name="x")
    h = m.tensor([4], name="h")
    y = m.tensor([4], name="y")
    m.op("RELU", [x], [h])
    m.op("custom:MyFancyOp", [h], [y])
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 1 (MyFancyOp): custom operators are not supported"))
    m = Model("err_softmax_int8_scale", 43)
    x = m.tensor([1, 8], "INT8", q8(0.1, 0), name="x")
    y = m.tensor([1, 8], "INT8", q8(0.1, 0), name="y")
    m.op("SOFTMAX", [x], [y], beta=1.0)
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (SOFTMAX): unsupported types INT8 -> INT8 (int8 and uint8 need "
                   "output scale 1/256"))
    m = Model("err_fc_shuffled", 44)
    x = m.tensor([1, 16], name="x")
    y = m.tensor([1, 4], name="y")
    m.op("FULLY_CONNECTED", [x, m.const([4, 16]), -1], [y], weights_format="SHUFFLED4x16INT8")
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (FULLY_CONNECTED): shuffled weights formats are not supported"))
    # TFLite Micro refuses these integer LSTM variants, so there is no
    # reference to match.
    m = Model("err_lstm_int8_cifg", 46)
    lstm_int_ops.build(m, lstm_int_ops.Spec("cifg", cifg=True))
    out.append((m, "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): integer LSTM without the input "
                   "gate (CIFG)"))
    m = Model("err_lstm_int8_projection", 48)
    lstm_int_ops.build(m, lstm_int_ops.Spec("projection", projection=True))
    out.append((m, "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): integer LSTM with a projection "
                   "is not supported"))
    m = Model("err_svdf_hybrid", 47)
    x = m.tensor([1, 5], name="x")
    st = m.tensor([1, 12], name="state", variable=True)
    y = m.tensor([1, 3], name="y")
    m.op("SVDF", [x, m.const([3, 5], "INT8", q8(0.01, 0)), m.const([3, 4]), m.const([3]), st],
         [y], rank=1)
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (SVDF): hybrid SVDF (FLOAT32 input with INT8 weights_feature"))
    out += q8_math_ops.error_models(Model, q8)
    return (out + logic_ops.error_models(Model, q8) + layout_ops.error_models(Model, q8) +
            nn_ops.error_models(Model, q8) + variable_ops.error_models(Model, q8) +
            control_ops.error_models(Model) + more_ops.error_models(Model, q8) +
            int16_ops.error_models(Model, q8) + q8_unary_ops.error_models(Model, q8))


def dead_code_model():
    """An unsupported operator whose result nobody uses is pruned, not refused."""
    m = Model("dead_gather", 45)
    x = m.tensor([4, 3], name="x")
    dead = m.tensor([2, 3], name="dead")
    y = m.tensor([4, 3], name="y")
    m.op("GATHER", [x, m.ints([0, 2])], [dead])
    m.op("RELU", [x], [y])
    m.inputs, m.outputs = [x], [y]
    return m


def all_models():
    ms = [
        conv_model("conv_int8_same_s2", "INT8", [1, 9, 9, 3], 5, 3, 2, "SAME", act="RELU"),
        conv_model("conv_int8_valid_s2", "INT8", [1, 10, 10, 2], 4, 3, 2, "VALID", act="RELU6"),
        conv_model("conv_uint8_same", "UINT8", [1, 7, 7, 2], 3, 3, 1, "SAME"),
        conv_model("conv_float_dilated", "FLOAT32", [1, 12, 12, 3], 4, 3, 1, "SAME", dil=2,
                   act="RELU_N1_TO_1"),
        conv_model("conv_float_5x5_s2", "FLOAT32", [1, 13, 13, 2], 3, 5, 2, "SAME", act="RELU6"),
        depthwise_model("depthwise_int8_mult2_s2", "INT8", 2, 2, "SAME"),
        depthwise_model("depthwise_float_mult2", "FLOAT32", 2, 1, "VALID", act="NONE"),
        pool_model("max_pool_int8_same", "MAX_POOL_2D", "INT8", 3, 2, "SAME"),
        pool_model("max_pool_float_valid_relu", "MAX_POOL_2D", "FLOAT32", 2, 2, "VALID", "RELU"),
        pool_model("avg_pool_int8_same", "AVERAGE_POOL_2D", "INT8", 3, 2, "SAME"),
        pool_model("avg_pool_float_same", "AVERAGE_POOL_2D", "FLOAT32", 3, 2, "SAME"),
        pool_model("avg_pool_uint8_valid", "AVERAGE_POOL_2D", "UINT8", 2, 2, "VALID"),
        binary_model("add_int8_broadcast_relu", "ADD", "INT8", "RELU"),
        binary_model("sub_int8", "SUB", "INT8", broadcast=False),
        binary_model("mul_int8_broadcast", "MUL", "INT8"),
        binary_model("add_uint8", "ADD", "UINT8", broadcast=False),
        binary_model("mul_float_relu6", "MUL", "FLOAT32", "RELU6"),
        binary_model("sub_float", "SUB", "FLOAT32", broadcast=False),
        unary_model("logistic_int8", "LOGISTIC", "INT8"),
        unary_model("tanh_int8", "TANH", "INT8"),
        unary_model("logistic_float", "LOGISTIC", "FLOAT32"),
        unary_model("tanh_float", "TANH", "FLOAT32"),
        unary_model("relu_int8", "RELU", "INT8", qout=(0.04, -128)),
        unary_model("relu6_int8", "RELU6", "INT8", qout=(0.03, -128)),
        unary_model("relu_n1_to_1_float", "RELU_N1_TO_1", "FLOAT32"),
    ]
    return (ms + quant_models() + shape_models() + fc_models() + [dead_code_model()] +
            logic_ops.models(Model, q8) + layout_ops.models(Model, q8) +
            nn_ops.models(Model, q8) + control_ops.models(Model) + more_ops.models(Model, q8))


def state_models():
    """The LSTMs: (model, spec, operator inputs) for each lstm_ops case."""
    out = []
    for spec in lstm_ops.CASES:
        m = Model(spec.name, spec.seed)
        out.append((m, spec, lstm_ops.build(m, spec)))
    return out


def svdf_entry(spec, flatc, schema, outdir, invokes=3):
    """An SVDF model with two cases, the first invoke and the third, both
    on one input; svdf_ops gives the input and TFLM's expected outputs."""
    m = Model(spec.name, spec.seed)
    ins = svdf_ops.build(m, spec)
    model = write_model(m, flatc, schema, outdir)
    x = svdf_ops.inputs(spec)
    prefix = os.path.join(outdir, m.name)
    write_values(prefix + "_in_0.bin", x)
    cases = []
    for n in (1, invokes):
        y = svdf_ops.reference(spec, m.data, ins, x, n)
        path = write_values("%s_invoke%d_out_0.bin" % (prefix, n), y)
        case = {"label": "seed1" if n == 1 else "seed1-invoke%d" % n,
                "inputs": [io_entry(m, m.inputs[0], "input", 0, prefix + "_in_0.bin")],
                "outputs": [io_entry(m, m.outputs[0], "output", 0, path)]}
        if n > 1:
            case["invokes"] = n
        cases.append(case)
    if spec.state == "INT8" and svdf_ops.reference(spec, m.data, ins, x, invokes,
                                                   zp_first=False) == y:
        raise SystemExit("%s: cannot tell the two zero-point orders apart" % spec.name)
    return {"model": model, "format": "tflite", "cases": cases}


def write_values(path, values, fmt="b"):
    """values as raw little-endian elements of struct format fmt."""
    with open(path, "wb") as f:
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
    return path


def float_svdf_entry(m, flatc, schema, outdir, refresh, invokes=3):
    """A float SVDF: TFLite's outputs after the first and the third invoke
    on one input (tflite_invokes.js), both checked against svdf_ops'
    float reference."""
    entry = write_case(m, flatc, schema, outdir, refresh)
    first = entry["cases"][0]
    prefix = os.path.join(EXPECTED, m.name)
    later = "%s_invoke%d" % (prefix, invokes)
    if refresh:
        js = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tflite_invokes.js")
        subprocess.run(["node", js, entry["model"], "--in", prefix + "_in_0.bin",
                        "--invokes", str(invokes), "--out", later], check=True)
    x = lstm_ops.read_f32(prefix + "_in_0.bin")
    for n, path in ((1, prefix + "_out_0.bin"), (invokes, later + "_out_0.bin")):
        got, want = lstm_ops.read_f32(path), svdf_ops.float_reference(m, x, n)
        if len(got) != len(want) or any(abs(a - b) > 1e-5 + 1e-5 * abs(b)
                                         for a, b in zip(got, want)):
            raise SystemExit("%s: TFLite's invoke %d differs from the reference" % (m.name, n))
    entry["cases"].append({"label": "seed1-invoke%d" % invokes, "invokes": invokes,
                           "inputs": first["inputs"],
                           "outputs": [dict(first["outputs"][0], file=later + "_out_0.bin")]})
    return entry


def io_entry(m, t, kind, index, path):
    tensor = m.tensors[t]
    return {"kind": kind, "index": index, "name": tensor["name"],
            "dtype": DTYPE[tensor["type"]], "shape": tensor["shape"], "file": path}


def write_model(m, flatc, schema, outdir):
    jpath = os.path.join(outdir, m.name + ".json")
    with open(jpath, "w") as f:
        json.dump(m.json(), f)
    subprocess.run([flatc, "-b", "-o", outdir, schema, jpath], check=True)
    return os.path.join(outdir, m.name + ".tflite")


def write_case(m, flatc, schema, outdir, refresh):
    """Builds m, reruns TFLite on it with --refresh; returns its manifest entry."""
    model = write_model(m, flatc, schema, outdir)
    prefix = os.path.join(EXPECTED, m.name)
    if refresh:
        os.makedirs(EXPECTED, exist_ok=True)
        ref = os.path.join(os.path.dirname(schema), "..", "..", "tools", "reference",
                           "tflite_run.js")
        subprocess.run(["node", ref, model, "--seed", "1", "--out", prefix], check=True,
                       stdout=subprocess.DEVNULL)
    case = {"label": "seed1",
            "inputs": [io_entry(m, t, "input", i, prefix + "_in_%d.bin" % i)
                       for i, t in enumerate(m.inputs)],
            "outputs": [io_entry(m, t, "output", i, prefix + "_out_%d.bin" % i)
                        for i, t in enumerate(m.outputs)]}
    if getattr(m, "reference", None):  # an independent check (more_ops)
        more_ops.check(m, prefix)
    if getattr(m, "exact", False):
        case["exact"] = True
    return {"model": model, "format": "tflite",
            "cases": [case] + more_ops.reference_cases(m, case, outdir)}


def later_invoke(spec, m, ins, first, outdir, invokes=3):
    """A case that invokes the module `invokes` times on the first case's
    input: the state must carry over as in TFLite.  TFLite's tool runs one
    invoke, so the expected output is the Python LSTM's (which agrees with
    TFLite on the first invoke: check_expected)."""
    x = lstm_ops.read_f32(first["inputs"][0]["file"])
    want = lstm_ops.reference(spec, m.data, ins, x, invokes)
    path = write_values(os.path.join(outdir, "%s_invoke%d_out_0.bin" % (m.name, invokes)),
                        want, "f")
    out = dict(first["outputs"][0], file=path)
    return {"label": "seed1-invoke%d" % invokes, "invokes": invokes,
            "inputs": first["inputs"], "outputs": [out]}


def int_lstm_entry(spec, flatc, schema, outdir):
    """An integer LSTM: its input is made here and its expected outputs
    (after 1 and 3 invokes) come from the Python TFLM kernel, which must
    match exactly."""
    m = Model(spec.name, spec.seed)
    ins = lstm_int_ops.build(m, spec)
    model = write_model(m, flatc, schema, outdir)
    scales = {i: lstm_int_ops.f32(t["quantization"]["scale"][0])
              for i, t in enumerate(m.tensors) if "quantization" in t}
    x = lstm_int_ops.input_values(spec)
    prefix = os.path.join(outdir, m.name)
    write_values(prefix + "_in_0.bin", x, spec.fmt)
    cases = []
    for invokes in (1, 3):
        want = lstm_int_ops.reference(spec, m.data, ins, scales, x, invokes)
        path = write_values("%s_invoke%d_out_0.bin" % (prefix, invokes), want, spec.fmt)
        case = {"label": "seed1-invoke%d" % invokes, "invokes": invokes, "exact": True,
                "inputs": [io_entry(m, m.inputs[0], "input", 0, prefix + "_in_0.bin")],
                "outputs": [io_entry(m, m.outputs[0], "output", 0, path)]}
        cases.append(case)
    return {"model": model, "format": "tflite", "cases": cases}


def mean_entry(spec, flatc, schema, outdir):
    """An integer MEAN whose input is made here and whose expected output is
    TFLite Micro's (mean_ops), which must match exactly."""
    m = Model(spec.name, spec.seed)
    mean_ops.build(m, spec)
    model = write_model(m, flatc, schema, outdir)
    x = mean_ops.inputs(spec)
    y = mean_ops.reference(spec, x)[0]
    fmt = mean_ops.PACK[spec.ttype]
    prefix = os.path.join(outdir, m.name)
    write_values(prefix + "_in_0.bin", x, fmt)
    write_values(prefix + "_out_0.bin", y, fmt)
    case = {"label": "seed1", "exact": True,
            "inputs": [io_entry(m, m.inputs[0], "input", 0, prefix + "_in_0.bin")],
            "outputs": [io_entry(m, m.outputs[0], "output", 0, prefix + "_out_0.bin")]}
    return {"model": model, "format": "tflite", "cases": [case]}


def ported_entry(m, ttype, port, flatc, schema, outdir, refresh, tolerance=1):
    """TFLite's input, and the output of `port` (a Python port of TFLite
    Micro's kernel) for it, which must match exactly and stay within one
    step of TFLite's own output (XNNPACK rounds some kernels differently)."""
    entry = write_case(m, flatc, schema, outdir, refresh)
    c = entry["cases"][0]
    fmt = {"UINT8": "B", "INT16": "h"}.get(ttype, "b")
    read = lambda p: list(struct.unpack("<%d%s" % (os.path.getsize(p) // struct.calcsize(fmt), fmt),
                                        open(p, "rb").read()))
    want = port(read(c["inputs"][0]["file"]))
    tflite = read(c["outputs"][0]["file"])
    if len(want) != len(tflite) or max(abs(a - b) for a, b in zip(want, tflite)) > tolerance:
        raise SystemExit("%s: the TFLM port is more than %d step(s) from TFLite"
                         % (m.name, tolerance))
    path = write_values(os.path.join(outdir, m.name + "_tflm_out_0.bin"), want, fmt)
    c["outputs"][0] = dict(c["outputs"][0], file=path)
    c["exact"] = True
    return entry


def write_json(outdir, name, value):
    with open(os.path.join(outdir, name), "w") as f:
        json.dump(value, f, indent=1)


def main():
    flatc, schema, outdir = sys.argv[1:4]
    refresh = "--refresh" in sys.argv[4:]
    os.makedirs(outdir, exist_ok=True)
    manifest = [write_case(m, flatc, schema, outdir, refresh) for m in all_models()]
    for m, spec, ins in state_models():
        entry = write_case(m, flatc, schema, outdir, refresh)
        lstm_ops.check_expected(spec, m.data, ins, os.path.join(EXPECTED, m.name))
        entry["cases"].append(later_invoke(spec, m, ins, entry["cases"][0], outdir))
        manifest.append(entry)
    manifest += [svdf_entry(spec, flatc, schema, outdir) for spec in svdf_ops.CASES]
    manifest += [float_svdf_entry(m, flatc, schema, outdir, refresh)
                 for m in svdf_ops.float_models(Model)]
    manifest += [int_lstm_entry(spec, flatc, schema, outdir) for spec in lstm_int_ops.CASES]
    manifest += [mean_entry(spec, flatc, schema, outdir) for spec in mean_ops.CASES]
    for m, case in zip(q8_unary_ops.models(Model, q8), q8_unary_ops.CASES):
        port = lambda v, case=case: q8_unary_ops.reference(*case[1:], v)
        manifest.append(ported_entry(m, case[2], port, flatc, schema, outdir, refresh))
    for m in q8_unary_ops.max_min_models(Model, q8):
        entry = write_case(m, flatc, schema, outdir, refresh)
        entry["cases"][0]["exact"] = True
        manifest.append(entry)
    for m, case in zip(q8_unary_ops.prelu_models(Model, q8), q8_unary_ops.PRELU_CASES):
        port = lambda v, case=case: q8_unary_ops.prelu_reference(case, v)
        manifest.append(ported_entry(m, case[1], port, flatc, schema, outdir, refresh))
    for m, case in zip(resize_q_ops.models(Model, q8), resize_q_ops.CASES):
        port = lambda v, case=case: resize_q_ops.reference(case, v)
        manifest.append(ported_entry(m, case[1], port, flatc, schema, outdir, refresh))
    manifest += variable_ops.entries(Model, lambda m: write_case(m, flatc, schema, outdir, refresh),
                                     EXPECTED, refresh)
    manifest += [more_ops.tflm_entry(m, write_model(m, flatc, schema, outdir), outdir, io_entry)
                 for m in more_ops.tflm_models(Model, q8)]
    manifest += [write_case(m, flatc, schema, outdir, refresh)
                 for m in detection_ops.models(Model, q8)]
    manifest += detection_ops.entries(Model, write_model, io_entry, flatc, schema, outdir,
                                      EXPECTED, refresh)
    # No XNNPACK here: TFLite's own int16 kernels, which are TFLM's, except
    # that desktop TFLite's bias-less FULLY_CONNECTED rounds a step apart.
    for m, port, exact in int16_ops.models(Model):
        manifest.append(ported_entry(m, "INT16", port, flatc, schema, outdir, refresh,
                                     0 if exact else 1))
    entry = write_case(int16_ops.chain_model(Model), flatc, schema, outdir, refresh)
    entry["cases"][0]["exact"] = True
    manifest.append(entry)
    helpers = {"write_case": lambda m: write_case(m, flatc, schema, outdir, refresh),
               "write_model": lambda m: write_model(m, flatc, schema, outdir),
               "write_values": write_values, "io_entry": io_entry, "outdir": outdir}
    manifest += [q8_bin_ops.entry(m, ttype, port, helpers)
                 for m, ttype, port in q8_bin_ops.models(Model)]
    manifest += [write_case(m, flatc, schema, outdir, refresh) for m in type_ops.models(Model, q8)]
    manifest.append(type_ops.zeros_like_int8_entry(
        Model, q8, lambda m, d: write_model(m, flatc, schema, d), write_values, io_entry, outdir))
    manifest.append(type_ops.greater_int16_entry(
        Model, q8, lambda m, d: write_model(m, flatc, schema, d), write_values, io_entry, outdir))
    for m, case in zip(q16_unary_ops.act_models(Model), q16_unary_ops.ACT_CASES):
        port = lambda v, case=case: q16_unary_ops.act_reference(case, v)
        manifest.append(ported_entry(m, "INT16", port, flatc, schema, outdir, refresh,
                                     q16_unary_ops.act_tolerance(case)))
    for m, case in zip(q16_unary_ops.softmax_models(Model), q16_unary_ops.SOFTMAX_CASES):
        port = lambda v, case=case: q16_unary_ops.softmax_reference(case, v)
        manifest.append(ported_entry(m, "INT16", port, flatc, schema, outdir, refresh, 0))
    for m, case in zip(q16_unary_ops.unary_models(Model), q16_unary_ops.UNARY_CASES):
        port = lambda v, case=case: q16_unary_ops.unary_reference(case, v)
        manifest.append(ported_entry(m, "INT16", port, flatc, schema, outdir, refresh))
    manifest += q8_math_ops.entries(Model, q8, write_model, io_entry, write_values, flatc, schema,
                                    outdir)
    manifest += prelu16_ops.entries(Model, q8, write_model, write_values, io_entry,
                                    flatc, schema, outdir)
    manifest += cast_u32_ops.entries(Model, write_model, io_entry, EXPECTED, flatc, schema,
                                     outdir, refresh)
    manifest += [write_case(m, flatc, schema, outdir, refresh)
                 for m in strided_ops.models(Model, q8)]
    for m, case in log_softmax_ops.models(Model):
        port = lambda v, case=case: log_softmax_ops.reference(case, v)
        manifest.append(ported_entry(m, "INT8", port, flatc, schema, outdir, refresh))
    manifest += log_softmax_ops.edge_entries(Model, write_model, io_entry, write_values, flatc,
                                             schema, outdir)
    manifest += while_ops.entries(Model, lambda m: write_model(m, flatc, schema, outdir),
                                  io_entry, EXPECTED, schema, outdir, refresh)
    write_json(outdir, "manifest.json", manifest)
    errors = [{"model": write_model(m, flatc, schema, outdir), "error": text}
              for m, text in error_models()]
    errors += [{"model": write_model(m, flatc, schema, outdir), "error": text}
               for m, text in detection_ops.error_models(Model)]
    errors += [{"model": write_model(m, flatc, schema, outdir), "error": text}
               for m, text in lstm_int_ops.error_models(Model)]
    errors += [{"model": write_model(m, flatc, schema, outdir), "error": text}
               for m, text in q8_bin_ops.error_models(Model, q8)]
    errors += [{"model": write_model(m, flatc, schema, outdir), "error": text}
               for m, text in q16_unary_ops.error_models(Model)]
    errors += [{"model": write_model(m, flatc, schema, outdir), "error": text}
               for m, text in cast_u32_ops.error_models(Model)]
    errors += [{"model": write_model(m, flatc, schema, outdir), "error": text}
               for m, text in strided_ops.error_models(Model, q8)]
    errors += [{"model": write_model(m, flatc, schema, outdir), "error": text}
               for m, text in log_softmax_ops.error_models(Model)]
    write_json(outdir, "errors.json", errors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
