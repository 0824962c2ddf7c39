"""int16 (zero point 0) forms of LOGISTIC, TANH and SOFTMAX for gen_ops.py,
with TFLite Micro's kernels in plain Python for the expected outputs:
logistic_common.cc / tanh.cc's Prepare (input multiplier and left shift,
with the power-of-two special case) in front of reference_integer_ops'
int16 Logistic and Tanh (lstm_int_ops.logistic16 / tanh16, the same
kernel the integer LSTM uses), and softmax_common.cc's Prepare with
gen_lut in float in front of reference_ops::SoftmaxInt16.  TFLite's random
int16 input spans the whole range, so most values saturate the functions;
the scales put a few hundred into the interpolated middle.  Nothing here
is the importer's code."""
import math

from lstm_int_ops import logistic16, tanh16
from tflm_fixed import clamp, f32, mbqm, quantize_multiplier

CODES = {"LOGISTIC": 14, "TANH": 28, "SOFTMAX": 25}
OPTIONS = {}

# name, operator, input scale, shape.  Output scale 1/32768 (TFLM's only).
# 2^-12 (and 2^-11 for TANH) take TFLM's power-of-two path; 2^-12 * 1.0004
# takes it too (CheckedLog2 accepts 1e-3 of error), which multiplies by
# exactly 3 where the general path would not; 2^-10 is a power of two that
# takes the general path.
ACT_CASES = [
    ("logistic_int16_pot", "LOGISTIC", 2.0 ** -12, [3, 5, 7]),
    ("logistic_int16_scale", "LOGISTIC", 0.00031, [2, 33]),
    ("logistic_int16_near_pot", "LOGISTIC", 2.0 ** -12 * 1.0004, [5, 13]),
    ("logistic_int16_pot_general", "LOGISTIC", 2.0 ** -10, [61]),
    ("tanh_int16_pot11", "TANH", 2.0 ** -11, [3, 5, 7]),
    ("tanh_int16_pot12", "TANH", 2.0 ** -12, [1, 9, 11]),
    ("tanh_int16_scale", "TANH", 0.00071, [2, 33]),
    ("tanh_int16_small_scale", "TANH", 0.000013, [4, 25]),
]


def checked_log2(x):
    """TFLite's CheckedLog2 in float: (rounded log2, is a power of two)."""
    l2 = f32(f32(math.log(x)) * f32(1.0 / f32(math.log(2.0))))
    r = float(math.floor(abs(l2) + 0.5)) * (1 if l2 >= 0 else -1)
    return int(r), abs(f32(l2 - r)) < f32(1e-3)


def act_params(kind, scale):
    """TFLM's int16 LOGISTIC / TANH Prepare: (input_multiplier, input_left_shift)."""
    l2, pot = checked_log2(f32(scale))
    left = 12 + l2
    pot = pot and (left == 0 or (kind == "TANH" and left == 1))
    if pot:
        return 0, left
    m, left = f32(scale) * 4096.0 * 3.0, 0
    while m <= 32767.0 / 2.0 and left <= 30:
        left += 1
        m *= 2.0
    return int(m), left


def act_tolerance(case):
    """Steps allowed between the port and desktop TFLite.  For a general
    scale TFLite runs the same table kernel (0 steps).  For 2^-12 (2^-11)
    it runs gemmlowp's fixed-point logistic/tanh instead, measured up to 9
    steps from TFLM's table (whose error there is the table's)."""
    return 0 if act_params(case[1], case[2])[0] else 10


def act_reference(case, values):
    _, kind, scale, _ = case
    mult, left = act_params(kind, scale)
    f = logistic16 if kind == "LOGISTIC" else tanh16
    return [f(x, mult, left) for x in values]


def act_models(Model):
    out = []
    for seed, (name, kind, scale, shape) in enumerate(ACT_CASES, 501):
        m = Model(name, seed)
        x = m.tensor(shape, "INT16", ([scale], [0]), name="x")
        y = m.tensor(shape, "INT16", ([2.0 ** -15], [0]), name="y")
        m.op(kind, [x], [y])
        m.inputs, m.outputs = [x], [y]
        out.append(m)
    return out


def error_models(Model):
    out = []
    m = Model("err_logistic_int16_out_scale", 541)
    x = m.tensor([4], "INT16", ([0.001], [0]), name="x")
    y = m.tensor([4], "INT16", ([1.0 / 256], [0]), name="y")
    m.op("LOGISTIC", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (LOGISTIC): INT16 -> INT16 needs output scale 1/32768"))
    m = Model("err_tanh_int16_zero_point", 542)
    x = m.tensor([4], "INT16", ([0.001], [3]), name="x")
    y = m.tensor([4], "INT16", ([2.0 ** -15], [0]), name="y")
    m.op("TANH", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (TANH): INT16 -> INT16 needs zero point 0"))
    m = Model("err_softmax_int16_out_zero_point", 543)
    x = m.tensor([4], "INT16", ([0.001], [0]), name="x")
    y = m.tensor([4], "INT16", ([1.0 / 65536], [-32768]), name="y")
    m.op("SOFTMAX", [x], [y], beta=1.0)
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (SOFTMAX): unsupported types INT16 -> INT16"))
    m = Model("err_abs_int16_zero_point", 544)
    x = m.tensor([4], "INT16", ([0.001], [5]), name="x")
    y = m.tensor([4], "INT16", ([0.001], [5]), name="y")
    m.op("ABS", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (ABS): INT16 -> INT16 ABS needs zero point 0"))
    return out


# SOFTMAX int16 -> int16: name, input scale, beta, shape (the last axis
# is the softmax's).  Output scale 1/32768, zero point 0 (TFLM's only).
SOFTMAX_CASES = [
    ("softmax_int16", 0.0004, 1.0, [3, 5, 7]),
    ("softmax_int16_beta", 0.00013, 2.5, [2, 33]),
    ("softmax_int16_wide", 0.003, 1.0, [1, 4, 3, 17]),
    ("softmax_int16_depth1", 0.001, 1.0, [5, 1]),
]


def _round(v):
    """TfLiteRound (std::round) on a float."""
    return float(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def gen_lut(func, lo, hi):
    """TFLM's gen_lut<float, int16_t, int16_t>(func, lo, hi, -1, 1) with
    every step rounded to float as the C++ does."""
    lo, hi = f32(lo), f32(hi)
    step = f32(f32(hi - lo) / 512)
    half = f32(step / 2)
    inv = f32(65536.0 / 2.0)
    sat = lambda v: int(min(max(v, -32768.0), 32767.0))
    lut = []
    for i in range(512):
        at = f32(lo + f32(i * step))
        val, mid = func(at), func(f32(at + half))
        nxt = func(f32(lo + f32((i + 1) * step)))
        sample = _round(f32(val * inv))
        interp = _round(f32(f32(f32(nxt * inv) + sample) / 2))
        bias = _round(f32(f32(interp - _round(f32(mid * inv))) / 2))
        lut.append(sat(f32(sample - bias)))
    lut.append(sat(_round(f32(func(hi) * inv))))
    return lut


def _exp(v):
    return f32(math.exp(v))


def _one_over_one_plus(v):
    return f32(1.0 / f32(1.0 + v))


def lut_lookup(value, lut):
    """TFLM's lut_lookup_with_interpolation for int16."""
    index = 256 + (value >> 7)
    base, slope = lut[index], lut[index + 1] - lut[index]
    return base + ((slope * (value & 0x7F) + 64) >> 7)


def softmax_reference(case, values):
    """softmax_common.cc's Prepare and reference_ops::SoftmaxInt16."""
    _, scale, beta, shape = case
    exp_lut, recip_lut = gen_lut(_exp, -10.0, 0.0), gen_lut(_one_over_one_plus, 0.0, 1.0)
    mult, shift = quantize_multiplier(f32(scale) * f32(beta) / (10.0 / 65535.0))
    depth, out = shape[-1], []
    for r in range(0, len(values), depth):
        row = values[r:r + depth]
        mx = max(row)
        exps = [lut_lookup(clamp(mbqm(x - mx, mult, shift) + 32767, -32768, 32767), exp_lut)
                for x in row]
        total = sum(exps)
        hp1 = 32 - total.bit_length()
        shifted = ((total << (hp1 - 1)) + (1 << 13)) >> 14
        recip = lut_lookup(clamp(shifted - ((1 << 15) + (1 << 16)), -32768, 32767), recip_lut)
        rs = 31 - hp1
        out += [clamp((e * recip + (1 << (rs - 1))) >> rs, 0, 32767) for e in exps]
    return out


def softmax_models(Model):
    out = []
    for seed, (name, scale, beta, shape) in enumerate(SOFTMAX_CASES, 521):
        m = Model(name, seed)
        x = m.tensor(shape, "INT16", ([scale], [0]), name="x")
        y = m.tensor(shape, "INT16", ([1.0 / 32768], [0]), name="y")
        m.op("SOFTMAX", [x], [y], beta=beta)
        m.inputs, m.outputs = [x], [y]
        out.append(m)
    return out


# ABS and LEAKY_RELU int16: name, operator, input (scale, zero point),
# output (scale, zero point), options.  TFLM's int16 ABS needs zero point 0.
UNARY_CASES = [
    ("abs_int16_same_scale", "ABS", (0.001, 0), (0.001, 0), {}),
    ("abs_int16_rescale", "ABS", (0.001, 0), (0.0007, 0), {}),
    ("leaky_relu_int16", "LEAKY_RELU", (0.0005, 0), (0.0004, 0), {"alpha": 0.2}),
    ("leaky_relu_int16_alpha_gt1", "LEAKY_RELU", (0.0002, 0), (0.0006, 0), {"alpha": 1.7}),
]


def unary_reference(case, values):
    """elementwise.cc's AbsEvalQuantized<int16_t> and QuantizeLeakyRelu<int16_t>,
    with their Prepare's multipliers (LEAKY_RELU's in float first)."""
    _, kind, (si, zi), (so, zo), options = case
    si, so = f32(si), f32(so)
    out = []
    for x in values:
        if kind == "ABS":
            v = abs(x - zi)
            y = v + zo if si == so else mbqm(v, *quantize_multiplier(si / so)) + zo
        else:
            alpha = f32(options["alpha"])
            m = quantize_multiplier(f32(si / so)) if x >= zi else \
                quantize_multiplier(f32(f32(si * alpha) / so))
            y = zo + mbqm(x - zi, *m)
        out.append(clamp(y, -32768, 32767))
    return out


def unary_models(Model):
    out = []
    for seed, (name, kind, qin, qout, options) in enumerate(UNARY_CASES, 531):
        m = Model(name, seed)
        x = m.tensor([3, 7, 9], "INT16", ([qin[0]], [qin[1]]), name="x")
        y = m.tensor([3, 7, 9], "INT16", ([qout[0]], [qout[1]]), name="y")
        m.op(kind, [x], [y], **options)
        m.inputs, m.outputs = [x], [y]
        out.append(m)
    return out
