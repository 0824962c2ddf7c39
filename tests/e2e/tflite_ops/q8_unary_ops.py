"""int8/uint8 forms of ABS, LEAKY_RELU, HARD_SWISH and ELU for gen_ops.py.

256 input values per model, so TFLite's random input reaches most of the
byte range; the quantisations take each kernel down its branches: ABS with
and without a rescale, LEAKY_RELU with alpha below and above 1,
HARD_SWISH with a relu-ish multiplier that shifts left and one that shifts
right, uint8 where TFLite has it.  Inputs are TFLite's (tflite_run.js);
expected outputs are TFLite Micro's, from the ports below."""
import math

from tflm_fixed import clamp, f32, mbqm, quantize_multiplier, rdbpot, srdhm

CODES = {"LEAKY_RELU": 98, "ABS": 101, "ELU": 111, "HARD_SWISH": 117, "PRELU": 54,
         "MAXIMUM": 55, "MINIMUM": 57}
OPTIONS = {"LEAKY_RELU": "LeakyReluOptions"}

# name, operator, type, input (scale, zero point), output (scale, zero point), options
CASES = [
    ("abs_int8_same_scale", "ABS", "INT8", (0.05, -3), (0.05, -3), {}),
    ("abs_int8_rescale", "ABS", "INT8", (0.05, -3), (0.03, -100), {}),
    ("leaky_relu_int8", "LEAKY_RELU", "INT8", (0.04, 5), (0.03, -20), {"alpha": 0.2}),
    ("leaky_relu_int8_alpha_gt1", "LEAKY_RELU", "INT8", (0.02, -7), (0.05, 9), {"alpha": 1.7}),
    ("leaky_relu_uint8", "LEAKY_RELU", "UINT8", (0.04, 133), (0.03, 110), {"alpha": 0.1}),
    ("hard_swish_int8", "HARD_SWISH", "INT8", (0.05, 10), (0.04, -30), {}),
    ("hard_swish_int8_small_scale", "HARD_SWISH", "INT8", (0.002, 0), (0.001, -5), {}),
    ("hard_swish_uint8", "HARD_SWISH", "UINT8", (0.06, 128), (0.05, 100), {}),
    ("elu_int8", "ELU", "INT8", (0.05, 20), (0.04, -60), {}),
]


# PRELU: alpha per channel (last axis, broadcast), its own quantisation;
# one alpha above 1 and one negative.
PRELU_CASES = [
    ("prelu_int8", "INT8", (0.05, 4), (0.01, -3), [12, -40, 120], (0.04, -10)),
    ("prelu_uint8", "UINT8", (0.03, 120), (0.02, 128), [150, 70, 250], (0.05, 100)),
]


def models(Model, q8):
    out = []
    for seed, (name, kind, ttype, qin, qout, options) in enumerate(CASES, 301):
        m = Model(name, seed)
        x = m.tensor([4, 8, 8], ttype, q8(*qin), name="x")
        y = m.tensor([4, 8, 8], ttype, q8(*qout), name="y")
        m.op(kind, [x], [y], **options)
        m.inputs, m.outputs = [x], [y]
        out.append(m)
    return out


def max_min_models(Model, q8):
    """Integer MAXIMUM and MINIMUM (raw values, one quantisation), with a
    broadcast constant; TFLite's outputs are exact."""
    out = []
    for seed, (ttype, q) in enumerate((("INT8", (0.05, -3)), ("UINT8", (0.04, 130)),
                                      ("INT16", (0.001, 0)), ("INT32", None)), 341):
        m = Model("max_min_%s" % ttype.lower(), seed)
        qq = q8(*q) if q else None
        x = m.tensor([3, 5, 7], ttype, qq, name="x")
        k = m.const([7], ttype, qq, lo=-100, hi=100)
        ys = []
        for op in ("MAXIMUM", "MINIMUM"):
            ys.append(m.tensor([3, 5, 7], ttype, qq, name=op.lower()))
            m.op(op, [x, k], [ys[-1]])
        m.inputs, m.outputs = [x], ys
        out.append(m)
    return out


def error_models(Model, q8):
    m = Model("err_max_int8_quant", 349)  # raw values would not be the real maximum
    x = m.tensor([4], "INT8", q8(0.05, 0), name="x")
    y = m.tensor([4], "INT8", q8(0.1, 0), name="y")
    m.op("MAXIMUM", [x, m.tensor([1], "INT8", q8(0.05, 0), data=[3])], [y])
    m.inputs, m.outputs = [x], [y]
    return [(m, "operator 0 (MAXIMUM): inputs and output must share one quantisation")]


def prelu_models(Model, q8):
    out = []
    for seed, (name, ttype, qin, qa, alpha, qout) in enumerate(PRELU_CASES, 321):
        m = Model(name, seed)
        x = m.tensor([2, 5, 11, 3], ttype, q8(*qin), name="x")
        a = m.tensor([1, 1, 3], ttype, q8(*qa), data=alpha)
        y = m.tensor([2, 5, 11, 3], ttype, q8(*qout), name="y")
        m.op("PRELU", [x, a], [y])
        m.inputs, m.outputs = [x], [y]
        out.append(m)
    return out


def prelu_reference(case, values):
    """TFLite's BroadcastPrelu4DSlow (quantised), alpha along the last axis."""
    _, ttype, (si, zi), (sa, za), alpha, (so, zo) = case
    lo, hi = {"UINT8": (0, 255), "INT16": (-32768, 32767)}.get(ttype, (-128, 127))
    m1 = quantize_multiplier(f32(si) / f32(so))
    m2 = quantize_multiplier(f32(si) * f32(sa) / f32(so))
    out = []
    for i, x in enumerate(values):
        v = x - zi
        y = mbqm(v, *m1) if v >= 0 else mbqm(v * (alpha[i % len(alpha)] - za), *m2)
        out.append(clamp(y + zo, lo, hi))
    return out


# TFLite Micro's kernels in plain Python, for the expected outputs: the
# TFLite build behind tflite_run.js runs these operators through XNNPACK,
# which rounds LEAKY_RELU and ELU differently (by a step).  These ports
# share nothing with the importer; gen_ops checks that they stay within one
# step of TFLite's outputs.
def _srdhm16(a, b):
    if a == b == -32768:
        return 32767
    ab = a * b
    q = ab + ((1 << 14) if ab >= 0 else 1 - (1 << 14))
    return int(q / (1 << 15))


def _sdhm16(a, b):
    if a == b == -32768:
        return 32767
    return int(a * b / (1 << 15))


def _sat_shl16(v, n):
    return clamp(v * (1 << n), -32768, 32767)


def _to16(m):
    return 32767 if m >= 2 ** 31 - 1 - (1 << 15) else (m + (1 << 15)) >> 16


def _round_away(v):
    return math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)


def _hard_swish(x, zi, zo, si, so):
    hires_scale = f32(f32(1.0 / 128.0) * si)
    m, s1 = quantize_multiplier(f32(hires_scale / so))
    m1 = _to16(m)
    m, s2 = quantize_multiplier(f32(hires_scale / f32(3.0 / 32768.0)))
    m2 = _to16(m)
    hires = (x - zi) * 128
    pre = _srdhm16(hires, m1)
    r = hires
    if s2 > 0:
        r = _sat_shl16(r, s2 - 1)
    r = _srdhm16(r, m2)
    if s2 > 0:
        r = _sat_shl16(r, 1)
    if s2 < 0:
        r = rdbpot(r, -s2)
    r = (r + (1 << 15)) >> 1
    return rdbpot(_sdhm16(r, pre), -s1) + zo


def reference(kind, ttype, qin, qout, options, values):
    """TFLM's output for each input byte value (uint8 as stored)."""
    si, so = f32(qin[0]), f32(qout[0])
    zi, zo = qin[1], qout[1]
    lo, hi = (0, 255) if ttype == "UINT8" else (-128, 127)
    out = []
    for x in values:
        if kind == "ABS":
            v = abs(x - zi)
            y = v + zo if si == so else mbqm(v, *quantize_multiplier(si / so)) + zo
        elif kind == "LEAKY_RELU":
            alpha = f32(options["alpha"])
            m = quantize_multiplier(f32(si / so)) if x >= zi else \
                quantize_multiplier(f32(f32(si * alpha) / so))
            y = zo + mbqm(x - zi, *m)
        elif kind == "ELU":
            d = f32(si * (x - zi))
            t = f32(math.expm1(d)) if d < 0 else d
            y = int(f32(_round_away(f32(t * f32(1.0 / so))) + zo))
        else:
            y = _hard_swish(x, zi, zo, si, so)
        out.append(clamp(y, lo, hi))
    return out
