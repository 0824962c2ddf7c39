"""int8 LOG_SOFTMAX for gen_ops.py, against a Python port of TFLite Micro's
kernel: log_softmax.cc (CalculateOpData: PreprocessLogSoftmaxScalingExp,
CalculateInputRadius, beta fixed at 1, output scale 16/256 and zero point
127) and micro/kernels/internal/reference/log_softmax.h
(LogSoftmaxQuantized), with gemmlowp's exp_on_negative_values and TFLite's
log_x_for_x_greater_than_or_equal_to_1 (internal/common.h).  Nothing here is
the importer's code."""
import math
import os

from tflm_fixed import INT32_MAX, INT32_MIN, clamp, mbqm, quantize_multiplier, rdbpot, srdhm, \
    wrap32

CODES, OPTIONS = {}, {}

# name, input shape, input (scale, zero point).  Rows of 1, 2, 10 and 33;
# small scales keep every diff inside the exp's radius, large ones put most
# of a row below diff_min (the -128 branch).
CASES = [
    ("log_softmax_int8_row1", [5, 1], (0.1, 0)),
    ("log_softmax_int8_row2", [7, 2], (0.05, -3)),
    ("log_softmax_int8_row10", [3, 10], (0.02, 5)),
    ("log_softmax_int8_row33", [2, 3, 33], (0.25, -10)),
    ("log_softmax_int8_wide_scale", [4, 10], (1.0, 0)),
    ("log_softmax_int8_tiny_scale", [4, 33], (0.004, 0)),
]


def _clz32(u):
    return 32 - u.bit_length()


def _sat_pot(x, e):
    """SaturatingRoundingMultiplyByPOT(Param) for e >= 0."""
    if e == 0:
        return x
    threshold = (1 << (31 - e)) - 1
    return INT32_MAX if x > threshold else INT32_MIN if x < -threshold else x << e


def _sat_add(a, b):
    return clamp(a + b, INT32_MIN, INT32_MAX)


def _half_sum(a, b):
    """gemmlowp RoundingHalfSum for int32 (C division truncates)."""
    s = a + b
    s += 1 if s >= 0 else -1
    return abs(s) // 2 * (1 if s >= 0 else -1)


def _exp_quarter(a):
    """exp_on_interval_between_negative_one_quarter_and_0_excl (Q0.31)."""
    const_term, one_third = 1895147668, 715827883
    x = wrap32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rdbpot(x4, 2)
    poly = rdbpot(wrap32(srdhm(wrap32(x4_over_4 + x3), one_third) + x2), 1)
    return wrap32(const_term + srdhm(const_term, wrap32(x + poly)))


def exp_on_negative_values(a, integer_bits=5):
    frac = 31 - integer_bits
    quarter = 1 << (frac - 2)
    a_mod = wrap32((a & (quarter - 1)) - quarter)
    result = _exp_quarter(_sat_pot(a_mod, integer_bits))  # Rescale<0>
    remainder = wrap32(a_mod - a)
    for exponent, mult in ((-2, 1672461947), (-1, 1302514674), (0, 790015084),
                           (1, 290630308), (2, 39332535), (3, 720401), (4, 242)):
        if integer_bits > exponent and remainder & (1 << (frac + exponent)):
            result = srdhm(result, mult)
    if integer_bits > 5 and a < -(1 << (36 - integer_bits)):
        result = 0
    return INT32_MAX if a == 0 else result


def _one_over_one_plus_x(a):
    half = _half_sum(a, INT32_MAX)
    x = wrap32(1515870810 + srdhm(half, -1010580540))
    for _ in range(3):
        one_minus = wrap32((1 << 29) - srdhm(half, x))
        x = wrap32(x + _sat_pot(srdhm(x, one_minus), 2))
    return _sat_pot(x, 1)


def log_x(z_a, in_bits=12, out_bits=5):
    """log_x_for_x_greater_than_or_equal_to_1_impl<out_bits, in_bits>."""
    acc_bits = out_bits + 1
    log_2, sqrt_sqrt_half, sqrt_half = 1488522236, 1805811301, 1518500250
    alpha_n, alpha_d, alpha_i, alpha_f = 117049297, 127690142, 1057819769, 638450708
    shifted_quarter = rdbpot(536870912, acc_bits)  # Rescale<acc>(1/4)
    hp1_a = _clz32(z_a & 0xFFFFFFFF)
    r_a_tmp = _sat_pot(z_a, hp1_a - 1)
    r_a = _sat_pot(srdhm(r_a_tmp, sqrt_half), 1)
    pow_a = _sat_add(_sat_pot(in_bits - hp1_a, 31 - acc_bits), shifted_quarter)
    z_b = srdhm(z_a, sqrt_half)
    hr_b = _clz32(z_b & 0xFFFFFFFF) - 1
    r_b = _sat_pot(z_a, hr_b)
    pow_b = clamp(_sat_pot(in_bits - hr_b, 31 - acc_bits) - shifted_quarter, INT32_MIN, INT32_MAX)
    r = min(r_a, r_b)
    pow_adj = max(pow_a, pow_b)
    p = _half_sum(r, sqrt_sqrt_half)
    q = wrap32(r - sqrt_sqrt_half)
    q = wrap32(q + q)
    common_sq = srdhm(q, q)
    num = wrap32(srdhm(q, r) + srdhm(srdhm(q, common_sq), alpha_n))
    inner = wrap32(wrap32(alpha_i + q) + srdhm(alpha_d, common_sq))
    denom_minus_one = wrap32(srdhm(p, inner) + srdhm(alpha_f, q))
    recip = _one_over_one_plus_x(denom_minus_one)
    num_scaled = rdbpot(num, acc_bits)  # Rescale<acc>(num)
    total = wrap32(srdhm(pow_adj, log_2) + srdhm(num_scaled, recip))
    return _sat_pot(total, acc_bits - out_bits)  # Rescale<out>


def params(in_scale):
    """CalculateOpData: (input_multiplier, input_left_shift,
    reverse_scaling_divisor, reverse_scaling_right_shift, diff_min)."""
    real = min(1.0 * in_scale * (1 << 26), (1 << 31) - 1.0)
    mult, left = quantize_multiplier(real)
    assert left >= 0  # QuantizeMultiplierGreaterThanOne
    divisor, rev_left = quantize_multiplier((1 << (31 - left)) / float(mult))
    assert rev_left <= 0  # QuantizeMultiplierSmallerThanOneExp
    radius = 1.0 * ((1 << 5) - 1) * (1 << 26) / (1 << left)
    return mult, left, divisor, -rev_left, -int(math.floor(radius))


def reference(case, values):
    name, shape, (in_scale, _zp) = case
    mult, left, divisor, rev_right, diff_min = params(in_scale)
    depth, out = shape[-1], []
    for i in range(0, len(values), depth):
        row = values[i:i + depth]
        mx = max(row)
        total = 0
        for v in row:
            if v - mx >= diff_min:
                total = wrap32(total + rdbpot(exp_on_negative_values(mbqm(v - mx, mult, left)), 12))
        log_sum = log_x(total)
        adjusted = max(diff_min - 1, mbqm(log_sum + INT32_MIN, divisor, -rev_right))
        for v in row:
            d = v - mx
            if d > adjusted:
                o = rdbpot(mbqm(d, mult, left) - log_sum, 31 - 5 - 4) + 127
                out.append(clamp(o, -128, 127))
            else:
                out.append(-128)
    return out


def models(Model):
    out = []
    for seed, case in enumerate(CASES, 561):
        name, shape, qin = case
        m = Model(name, seed)
        x = m.tensor(shape, "INT8", ([qin[0]], [qin[1]]), name="x")
        y = m.tensor(shape, "INT8", ([16.0 / 256], [127]), name="y")
        m.op("LOG_SOFTMAX", [x], [y])
        m.inputs, m.outputs = [x], [y]
        out.append((m, case))
    return out


def _edge_rows(depth, rng):
    """All-equal rows (the sum is depth * exp(0)), one maximum against the
    minimum (the widest spread), ties at the maximum, a ramp and noise."""
    rows = [[-128] * depth, [127] * depth, [0] * depth, [127] + [-128] * (depth - 1),
            [-128] * (depth - 2) + [127, 127], [127 - (i * 255) // max(depth - 1, 1)
                                                for i in range(depth)]]
    rows += [[rng.randint(-128, 127) for _ in range(depth)] for _ in range(2)]
    return [v for row in rows for v in row]


# name, rows x depth, input scale: made inputs, expected from the port only.
EDGE_CASES = [("log_softmax_int8_edges_row10", 10, 0.1),
              ("log_softmax_int8_edges_row300", 300, 0.01),
              ("log_softmax_int8_edges_row33_wide", 33, 0.5)]


def edge_entries(Model, write_model, io_entry, write_values, flatc, schema, outdir):
    """Manifest entries whose inputs are made here (rows TFLite's random
    input would not produce) and whose expected outputs come from the port."""
    out = []
    for seed, (name, depth, scale) in enumerate(EDGE_CASES, 571):
        m = Model(name, seed)
        values = _edge_rows(depth, m.rng)
        shape = [len(values) // depth, depth]
        x = m.tensor(shape, "INT8", ([scale], [0]), name="x")
        y = m.tensor(shape, "INT8", ([16.0 / 256], [127]), name="y")
        m.op("LOG_SOFTMAX", [x], [y])
        m.inputs, m.outputs = [x], [y]
        want = reference((name, shape, (scale, 0)), values)
        prefix = os.path.join(outdir, name)
        model = write_model(m, flatc, schema, outdir)
        ins = [io_entry(m, x, "input", 0, write_values(prefix + "_in_0.bin", values, "b"))]
        outs = [io_entry(m, y, "output", 0, write_values(prefix + "_out_0.bin", want, "b"))]
        out.append({"model": model, "format": "tflite",
                    "cases": [{"label": "tflm-port", "exact": True, "inputs": ins,
                               "outputs": outs}]})
    return out


def error_models(Model):
    """TFLM needs output scale 16/256 and zero point 127."""
    out = []
    for name, seed, qout in (("err_log_softmax_int8_out_scale", 567, (0.1, 127)),
                             ("err_log_softmax_int8_out_zero_point", 568, (16.0 / 256, 0))):
        m = Model(name, seed)
        x = m.tensor([2, 4], "INT8", ([0.1], [0]), name="x")
        y = m.tensor([2, 4], "INT8", ([qout[0]], [qout[1]]), name="y")
        m.op("LOG_SOFTMAX", [x], [y])
        m.inputs, m.outputs = [x], [y]
        out.append((m, "operator 0 (LOG_SOFTMAX): INT8 -> INT8 needs output scale 16/256 and "
                    "zero point 127"))
    return out
