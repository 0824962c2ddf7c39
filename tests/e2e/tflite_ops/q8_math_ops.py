"""Integer DIV (int8, int32), SQUARED_DIFFERENCE (int8, int16, int32),
RSQRT (int8) and L2_NORMALIZATION (int8) for gen_ops.py, against Python ports of TFLite Micro's kernels.

Desktop TFLite has no int8 DIV (only uint8), so every case here makes its
own inputs and takes its expected outputs from the ports below, compared
exactly.  The int8 cases with two inputs run every byte pair ([256, 1] by
[1, 255 or 256], which also tests the broadcast): every rounding edge and
saturation the kernel has for those quantisations.  The ports are read from
TFLM's div.h (DivElementwise, GetReciprocal), squared_difference.cc and
elementwise.cc (RsqrtEvalQuantized, GetInvSqrtQuantizedMultiplierExp) and
reference_integer_ops/l2normalization.h;
nothing here is the importer's code."""
import math
import os
import random

from tflm_fixed import INT32_MAX, INT32_MIN, clamp, f32, mbqm, quantize_multiplier, rdbpot, \
    srdhm, wrap32

CODES, OPTIONS = {}, {}
RANGE = {"INT8": (-128, 127), "INT16": (-32768, 32767), "INT32": (INT32_MIN, INT32_MAX)}


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _clz32(u):
    return 32 - u.bit_length()


def _cls32(x):
    """TFLite's CountLeadingSignBits (x > INT32_MIN)."""
    return _clz32(x) - 1 if x >= 0 else _clz32(2 * -x - 1)


def _sat_pot(x, e):
    """gemmlowp SaturatingRoundingMultiplyByPOT<e> for e > 0."""
    threshold = (1 << (31 - e)) - 1
    return INT32_MAX if x > threshold else INT32_MIN if x < -threshold else x << e


def _one_over_one_plus_x(a):
    """gemmlowp one_over_one_plus_x_for_x_in_0_1 (Q0.31 in and out)."""
    s = a + INT32_MAX  # RoundingHalfSum(a, F0::One())
    half = _trunc_div(s + (1 if s >= 0 else -1), 2)
    x = wrap32(1515870810 + srdhm(half, -1010580540))  # 48/17 - 32/17 * half, F2
    for _ in range(3):
        one_minus = wrap32((1 << 29) - srdhm(half, x))
        x = wrap32(x + _sat_pot(srdhm(x, one_minus), 2))
    return _sat_pot(x, 1)  # Rescale<0>(ExactMulByPot<-1>(x))


def get_reciprocal(x):
    """TFLite's GetReciprocal(x, 31, &num_bits_over_unit)."""
    hp1 = _clz32(x)
    return _one_over_one_plus_x(wrap32((x << hp1) - (1 << 31))), 31 - hp1


def _round_away(v):
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


def act_range_q(act, scale, zp, ttype):
    """CalculateActivationRangeQuantized (NONE, RELU, RELU6)."""
    lo, hi = RANGE[ttype]
    q = lambda v: zp + _round_away(f32(v / scale))  # TfLiteRound of a float division
    if act == "RELU":
        return max(lo, q(0.0)), hi
    if act == "RELU6":
        return max(lo, q(0.0)), min(hi, q(6.0))
    return lo, hi


def div_int8(qa, qb, qo, act):
    """reference_ops::DivElementwise<int8_t> with div.cc's parameters."""
    (sa, za), (sb, zb), (so, zo) = [(f32(s), z) for s, z in (qa, qb, qo)]
    om, os_ = quantize_multiplier(f32(sa / f32(sb * so)))
    lo, hi = act_range_q(act, so, zo, "INT8")

    def f(x, y):
        a, b = x - za, y - zb
        assert b != 0, "TFLM's DIV is undefined for a zero divisor"
        if b < 0:
            a, b = -a, -b
        inv, recip_shift = get_reciprocal(b)
        h = _cls32(a)
        unscaled = srdhm(wrap32(a * (1 << h)), inv)  # ...GreaterThanOne
        total = os_ - recip_shift - h
        # ...SmallerThanOneExp; gemmlowp asserts -total <= 31, where Python's
        # exact shift rounds |v| < 2^31 to 0
        return clamp(zo + rdbpot(srdhm(unscaled, om), -total), lo, hi)
    return f


def div_int32(act):
    lo, hi = {"RELU": (0, INT32_MAX), "RELU6": (0, 6)}.get(act, RANGE["INT32"])
    return lambda a, b: clamp(_trunc_div(a, b), lo, hi)


def squared_difference(ttype, qa, qb, qo):
    """squared_difference.cc: PrepareQuantized and SquaredDifference<T>."""
    if ttype == "INT32":
        return lambda a, b: wrap32((a - b) * (a - b))
    (sa, za), (sb, zb), (so, zo) = [(f32(s), z) for s, z in (qa, qb, qo)]
    ls = 7 if ttype == "INT8" else 0
    twice = 2.0 * max(sa, sb)
    m1, m2 = quantize_multiplier(sa / twice), quantize_multiplier(sb / twice)
    mo = quantize_multiplier(twice * twice / f32((1 << ls * 2) * so))
    lo, hi = RANGE[ttype]

    def scaled(v, m):  # MultiplyByQuantizedMultiplierSmallerThanOneExp
        return rdbpot(srdhm(v * (1 << ls), m[0]), -m[1])

    def f(x, y):
        d = scaled(x - za, m1) - scaled(y - zb, m2)
        return clamp(mbqm(wrap32(d * d), *mo) + zo, lo, hi)
    return f


def inv_sqrt(v):
    """TFLite's GetInvSqrtQuantizedMultiplierExp(v, kReverseShift = -1)."""
    if v <= 1:
        return INT32_MAX, 0
    shift = 11
    while v >= 1 << 29:
        v //= 4
        shift += 1
    pairs = (_clz32(v) - 1) // 2 - 1
    shift -= pairs
    v <<= 2 * pairs
    half_input = rdbpot(v >> 1, 1)  # SaturatingRoundingMultiplyByPOT<-1>, F3
    x = 1 << 28  # F3::One()
    for _ in range(5):
        x3 = _sat_pot(srdhm(srdhm(x, x), x), 6)  # Rescale<3>(x * x * x), F9 -> F3
        x = _sat_pot(wrap32(srdhm((1 << 28) + (1 << 27), x) - srdhm(half_input, x3)), 3)
    x = srdhm(x, 1518500250)
    if shift < 0:
        x = wrap32(x << -shift)
        shift = 0
    return x, -shift


def rsqrt_int8(qi, qo):
    """elementwise.cc RsqrtEvalQuantized.  TFLM's invoke fails on x below the
    zero point; the importer gives 127 there (as for 0), which is what a
    negative-input case checks."""
    (si, zi), (so, zo) = [(f32(s), z) for s, z in (qi, qo)]
    om, os_ = quantize_multiplier(1.0 / f32(f32(si ** 0.5) * so))

    def f(x):
        v = x - zi
        if v <= 0:
            return 127
        inv, s = inv_sqrt(v)
        return clamp(mbqm(mbqm(1, inv, s + 20), om, os_ - 20) + zo, -128, 127)
    return f


def l2norm_int8(zi, xs, depth):
    """reference_integer_ops::L2Normalization: rows of the last axis."""
    out = []
    for r in range(0, len(xs), depth):
        row = [v - zi for v in xs[r:r + depth]]
        m, s = inv_sqrt(sum(v * v for v in row))
        out += [clamp(mbqm(v, m, s + 7), -128, 127) for v in row]
    return out


def broadcast(fn, xs, sx, ys, sy):
    """fn over the numpy-style broadcast of xs (shape sx) and ys (shape sy)."""
    r = max(len(sx), len(sy))
    sx, sy = [1] * (r - len(sx)) + sx, [1] * (r - len(sy)) + sy
    so = [max(a, b) for a, b in zip(sx, sy)]
    out = []
    for flat in range(_numel(so)):
        idx, rem = [], flat
        for d in reversed(so):
            idx.append(rem % d)
            rem //= d
        idx.reverse()
        out.append(fn(xs[_offset(idx, sx)], ys[_offset(idx, sy)]))
    return out


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _offset(idx, shape):
    o = 0
    for i, d in zip(idx, shape):
        o = o * d + (i if d > 1 else 0)
    return o


ALL = list(range(-128, 128))


def _bytes_but(zp):
    return [v for v in ALL if v != zp]


def _values(rng, ttype, n, avoid=None):
    lo, hi = {"INT16": (-32768, 32767), "INT32": (-40000, 40000)}.get(ttype, (-128, 127))
    out = []
    while len(out) < n:
        # a third of the values small, so not everything saturates
        v = rng.randint(lo, hi) if rng.random() < 0.67 else rng.randint(-300, 300)
        v = clamp(v, lo, hi)
        if v != avoid:
            out.append(v)
    return out


# name, operator, type, shapes (x, y), quantisations (x, y, out), activation;
# a None shape for x/y means "every byte" ([256, 1] and [1, n]).
BINARY = [
    ("div_int8_all_pairs", "DIV", "INT8", None, ((0.05, 3), (0.04, -7), (0.06, 10)), "NONE"),
    ("div_int8_all_pairs_small", "DIV", "INT8", None, ((0.01, 0), (0.5, 127), (0.002, -128)),
     "NONE"),
    ("div_int8_bcast_relu6", "DIV", "INT8", ([2, 3, 5, 7], [1, 1, 7]),
     ((0.02, -10), (0.1, 20), (0.03, -128)), "RELU6"),
    ("div_int32_relu", "DIV", "INT32", ([3, 4, 5], [5]), None, "RELU"),
    ("div_int32", "DIV", "INT32", ([3, 1, 5], [4, 1]), None, "NONE"),
    ("sqd_int8_all_pairs", "SQUARED_DIFFERENCE", "INT8", None,
     ((0.05, 3), (0.03, -20), (0.5, -128)), None),
    ("sqd_int8_bcast", "SQUARED_DIFFERENCE", "INT8", ([3, 5, 7], [7]),
     ((0.02, -100), (0.07, 50), (0.04, -60)), None),
    ("sqd_int16_bcast", "SQUARED_DIFFERENCE", "INT16", ([2, 3, 9], [9]),
     ((0.001, 0), (0.0007, 0), (0.005, 0)), None),
    ("sqd_int32", "SQUARED_DIFFERENCE", "INT32", ([4, 6], [6]), None, None),
]
L2 = [
    ("l2norm_int8", [3, 5, 17], (0.05, -3)),
    ("l2norm_int8_rows", [7, 4], (0.1, 100)),
    ("l2norm_int8_long", [2, 9000], (0.01, 127)),
]
UNARY = [
    ("rsqrt_int8_all", (0.02, -128), (0.05, -100)),
    ("rsqrt_int8_negative", (0.1, 0), (0.01, -128)),  # bytes below 0: TFLM errors, we give 127
]


def _l2_inputs(name, zi, shape):
    """Random rows, plus rows whose sum of squares is 0, 1, 2 and 4 (the
    kernel's special case and its largest left shifts) and, for a long
    last axis, one of 2^29 or more (the kernel's division by 4)."""
    rng = random.Random(name)
    depth, rows = shape[-1], _numel(shape) // shape[-1]
    xs = [rng.randint(-128, 127) for _ in range(depth * rows)]
    special = [[zi] * depth, [zi + 1] + [zi] * (depth - 1), [zi - 1, zi + 1] + [zi] * (depth - 2),
               [zi + 2] + [zi] * (depth - 1)]
    if depth > 8256:
        special = [[-128 if zi > 0 else 127] * depth]
    for i, row in enumerate(special[:rows - 1]):
        xs[i * depth:(i + 1) * depth] = row
    return xs


def _port(kind, ttype, q, act):
    if kind == "DIV":
        return div_int8(*q, act) if ttype == "INT8" else div_int32(act)
    return squared_difference(ttype, *(q or (None, None, None)))


def _binary_case(Model, q8, seed, case):
    name, kind, ttype, shapes, q, act = case
    rng = random.Random(seed)
    qq = [q8(*v) for v in q] if q else [None] * 3
    zb = q[1][1] if q else 0
    if shapes is None:
        ys = _bytes_but(zb) if kind == "DIV" else ALL
        sx, sy, xs = [256, 1], [1, len(ys)], ALL
    else:
        (sx, sy) = shapes
        xs = _values(rng, ttype, _numel(sx))
        ys = _values(rng, ttype, _numel(sy), avoid=zb if kind == "DIV" else None)
    so = [max(a, b) for a, b in zip([1] * (len(sy) - len(sx)) + sx, [1] * (len(sx) - len(sy)) + sy)]
    m = Model(name, seed)
    x = m.tensor(sx, ttype, qq[0], name="x")
    y = m.tensor(sy, ttype, qq[1], name="y")
    out = m.tensor(so, ttype, qq[2], name="out")
    opts = {"fused_activation_function": act} if kind == "DIV" else {}
    m.op(kind, [x, y], [out], **opts)
    m.inputs, m.outputs = [x, y], [out]
    return m, [xs, ys], broadcast(_port(kind, ttype, q, act), xs, sx, ys, sy)


def _unary_case(Model, q8, seed, case):
    name, qi, qo = case
    m = Model(name, seed)
    x = m.tensor([4, 64], "INT8", q8(*qi), name="x")
    y = m.tensor([4, 64], "INT8", q8(*qo), name="y")
    m.op("RSQRT", [x], [y])
    m.inputs, m.outputs = [x], [y]
    f = rsqrt_int8(qi, qo)
    return m, [ALL], [f(v) for v in ALL]


def _l2_case(Model, q8, seed, case):
    name, shape, qi = case
    m = Model(name, seed)
    x = m.tensor(shape, "INT8", q8(*qi), name="x")
    y = m.tensor(shape, "INT8", q8(1.0 / 128.0, 0), name="y")
    m.op("L2_NORMALIZATION", [x], [y])
    m.inputs, m.outputs = [x], [y]
    xs = _l2_inputs(name, qi[1], shape)
    return m, [xs], l2norm_int8(qi[1], xs, shape[-1])


def entries(Model, q8, write_model, io_entry, write_values, flatc, schema, outdir):
    """Manifest entries: inputs and exact expected outputs from the ports."""
    pack = {"INT8": "b", "INT16": "h", "INT32": "i"}
    cases = [_binary_case(Model, q8, s, c) for s, c in enumerate(BINARY, 901)]
    cases += [_unary_case(Model, q8, s, c) for s, c in enumerate(UNARY, 951)]
    cases += [_l2_case(Model, q8, s, c) for s, c in enumerate(L2, 961)]
    out = []
    for m, ins, want in cases:
        model = write_model(m, flatc, schema, outdir)
        prefix = os.path.join(outdir, m.name)
        fmt = pack[m.tensors[m.outputs[0]]["type"]]
        inputs = [io_entry(m, t, "input", i, write_values("%s_in_%d.bin" % (prefix, i), v, fmt))
                  for i, (t, v) in enumerate(zip(m.inputs, ins))]
        outputs = [io_entry(m, m.outputs[0], "output", 0,
                            write_values(prefix + "_out_0.bin", want, fmt))]
        out.append({"model": model, "format": "tflite",
                    "cases": [{"label": "tflm-port", "exact": True, "inputs": inputs,
                               "outputs": outputs}]})
    return out


def error_models(Model, q8):
    """Types TFLM does not have for these operators."""
    out = []
    m = Model("err_div_int16", 971)
    x = m.tensor([4], "INT16", q8(0.01, 0), name="x")
    y = m.tensor([4], "INT16", q8(0.01, 0), name="y")
    z = m.tensor([4], "INT16", q8(0.01, 0), name="z")
    m.op("DIV", [x, y], [z], fused_activation_function="NONE")
    m.inputs, m.outputs = [x, y], [z]
    out.append((m, "operator 0 (DIV): unsupported types INT16, INT16 -> INT16 "
                   "(FLOAT32, INT32, quantised INT8)"))
    m = Model("err_rsqrt_int16", 972)
    x = m.tensor([4], "INT16", q8(0.01, 0), name="x")
    y = m.tensor([4], "INT16", q8(0.01, 0), name="y")
    m.op("RSQRT", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (RSQRT): unsupported types INT16 -> INT16 (FLOAT32, quantised INT8)"))
    m = Model("err_l2norm_int8_scale", 973)  # TFLM's Prepare requires the 1/128 output
    x = m.tensor([2, 4], "INT8", q8(0.05, 0), name="x")
    y = m.tensor([2, 4], "INT8", q8(0.01, 0), name="y")
    m.op("L2_NORMALIZATION", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (L2_NORMALIZATION): an INT8 output needs scale 1/128 and zero "
                   "point 0"))
    return out
