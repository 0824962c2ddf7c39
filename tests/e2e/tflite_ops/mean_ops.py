"""MEAN and SUM test models for gen_ops.py, and TFLite Micro's integer MEAN
and SUM in plain Python, which give their expected outputs.

Desktop TFLite (what tflite_run.js runs) computes an int8 mean over axes 1
and 2 of a 4-D tensor with its own kernel (reference_integer_ops::Mean:
rescale, then divide rounding to nearest); TFLite Micro uses
reference_ops::Mean (raw sum / count, truncated toward zero) when input and
output share their quantisation, and QuantizedMeanOrSum (1/count folded
into the integer multiplier) otherwise.  The two can differ by a step, so
these cases are TFLM's: a port of reduce_common.cc's EvalIntegerMean and
kernels/internal/reference/reduce.h.  It shares nothing with the importer.
"""
import random

from tflm_fixed import INT32_MAX, INT32_MIN, clamp, f32, mbqm, quantize_multiplier, rdbpot, srdhm, wrap32

LIMITS = {"INT8": (-128, 127), "INT16": (-32768, 32767)}
PACK = {"INT8": "b", "INT16": "h"}


class Spec:
    def __init__(self, name, ttype, shape, axes, q_in, q_out, keep_dims=True, seed=71,
                 values=None, op="MEAN"):
        self.name, self.ttype, self.shape, self.axes = name, ttype, shape, axes
        self.op = op
        self.q_in, self.q_out, self.keep_dims, self.seed = q_in, q_out, keep_dims, seed
        self.values = values or LIMITS[ttype]  # the inputs' range


CASES = [
    # Same quantisation: truncation toward zero of negative sums shows.
    Spec("mean_tflm_int8_same", "INT8", [1, 7, 7, 12], [1, 2], (0.05, 5), (0.05, 5)),
    # As a Keras GlobalAveragePooling2D after a ReLU6 layer (MobileNetV2).
    Spec("mean_tflm_int8_gap", "INT8", [1, 7, 7, 24], [1, 2], (0.0235, -128),
         (0.0113, -128), seed=72, values=(-128, -20)),
    Spec("mean_tflm_int8_axis2_nokeep", "INT8", [2, 3, 5], [-1], (0.04, -7), (0.03, 11),
         keep_dims=False, seed=73),
    Spec("mean_tflm_int16", "INT16", [1, 5, 3, 6], [1, 2], (0.0007, 0), (0.0003, 0),
         seed=74, values=(-9000, 9000)),
    # SUM: QuantizedMeanOrSum without the 1/count, shared quantisation or not.
    Spec("sum_tflm_int8_same", "INT8", [3, 4, 5], [1], (0.02, -4), (0.02, -4), op="SUM",
         keep_dims=False, seed=75, values=(-30, 20)),
    Spec("sum_tflm_int8_rescale", "INT8", [2, 6, 7], [0, 2], (0.03, 6), (0.4, -10), op="SUM",
         seed=76),
    Spec("sum_tflm_int16", "INT16", [4, 9], [-1], (0.001, 0), (0.004, 0), op="SUM",
         seed=77, values=(-5000, 5000)),
]


def reference(spec, x):
    """TFLM's EvalIntegerMean on x (flat, row-major)."""
    rank = len(spec.shape)
    axes = sorted({a % rank for a in spec.axes})
    count = 1
    for a in axes:
        count *= spec.shape[a]
    out_shape = [1 if d in axes else n for d, n in enumerate(spec.shape)]
    sums = {}
    for flat, v in enumerate(x):
        idx, rem = [], flat
        for n in reversed(spec.shape):
            idx.append(rem % n)
            rem //= n
        idx.reverse()
        key = tuple(0 if d in axes else i for d, i in enumerate(idx))
        sums[key] = wrap32(sums.get(key, 0) + v)
    keys = sorted(sums)
    lo, hi = LIMITS[spec.ttype]
    if spec.op == "MEAN" and spec.q_in == spec.q_out:  # reference_ops::Mean: C division
        return [int(sums[k] / count) for k in keys], out_shape
    m, s = quantize_multiplier(f32(spec.q_in[0]) / f32(spec.q_out[0]))
    if spec.op == "MEAN":
        k = min(count.bit_length() - 1, 32, 31 + s)
        m, s = ((m << k) // count), s - k
    out = []
    for key in keys:
        shifted = wrap32(sums[key] - spec.q_in[1] * count)
        out.append(clamp(mbqm(shifted, m, s) + spec.q_out[1], lo, hi))
    return out, out_shape


def inputs(spec):
    rng = random.Random(spec.seed)
    n = 1
    for d in spec.shape:
        n *= d
    return [rng.randint(*spec.values) for _ in range(n)]


def build(m, spec):
    """Adds the MEAN to Model m; returns (input, output) tensor indices."""
    x = m.tensor(spec.shape, spec.ttype, ([spec.q_in[0]], [spec.q_in[1]]), name="x")
    out_shape = reference(spec, [0] * len(inputs(spec)))[1]
    if not spec.keep_dims:
        out_shape = [n for d, n in enumerate(out_shape)
                     if d not in {a % len(spec.shape) for a in spec.axes}]
    y = m.tensor(out_shape, spec.ttype, ([spec.q_out[0]], [spec.q_out[1]]), name="y")
    m.op(spec.op, [x, m.ints(spec.axes)], [y], keep_dims=spec.keep_dims)
    m.inputs, m.outputs = [x], [y]
    return x, y
