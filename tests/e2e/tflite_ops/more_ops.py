"""SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, TRANSPOSE_CONV, L2_POOL_2D, CUMSUM,
FLOOR_MOD, REDUCE_ALL, DYNAMIC_UPDATE_SLICE and BROADCAST_ARGS for
gen_ops.py: odd sizes, padding and crops, 3-D inputs, strides, negative
values, out-of-range start indices.

Each model also carries an independent reference (`m.reference`: plain
Python loops written from TFLite's reference kernels, not from the
importer) that gen_ops.py runs on the expected inputs every time; it must
agree with TFLite's expected outputs exactly for integers and within float
rounding otherwise.  Integer models are compared bit-exactly (`m.exact`).
CUMSUM int8 exists only in TFLite Micro, so its expected outputs come from
the Python port of TFLM's kernel (tflm_models).
"""
import math
import os
import random
import struct

import tflm_fixed as fx

CODES = {"L2_POOL_2D": 12, "BATCH_TO_SPACE_ND": 37, "SPACE_TO_BATCH_ND": 38,
         "TRANSPOSE_CONV": 67, "REDUCE_ANY": 91, "FLOOR_MOD": 95, "CUMSUM": 128, "REDUCE_ALL": 140,
         "BROADCAST_ARGS": 145, "DYNAMIC_UPDATE_SLICE": 151}
OPTIONS = {"L2_POOL_2D": "Pool2DOptions", "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
           "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
           "TRANSPOSE_CONV": "TransposeConvOptions", "FLOOR_MOD": "FloorModOptions",
           "CUMSUM": "CumsumOptions", "REDUCE_ALL": "ReducerOptions", "REDUCE_ANY": "ReducerOptions",
           "DYNAMIC_UPDATE_SLICE": "DynamicUpdateSliceOptions"}
PACK = {"float32": "f", "int8": "b", "int16": "h", "int32": "i", "int64": "q"}


# ---- helpers: flat lists with a shape --------------------------------------

def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def strides(shape):
    s, out = 1, []
    for d in reversed(shape):
        out.append(s)
        s *= d
    return out[::-1]


def index(shape, pos):
    return sum(p * s for p, s in zip(pos, strides(shape)))


def positions(shape):
    """Every index tuple of `shape`, row-major."""
    out = [()]
    for d in shape:
        out = [p + (i,) for p in out for i in range(d)]
    return out


# ---- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND ---------------------------------

def as4d(shape):
    return list(shape) if len(shape) == 4 else [shape[0], shape[1], 1, shape[2]]


def space_to_batch_ref(x, shape, block, pads, pad_value):
    n, h, w, c = as4d(shape)
    bh, bw = block[0], block[1] if len(block) > 1 else 1
    pt, pl = pads[0], pads[2] if len(pads) > 2 else 0
    oh = (h + pads[0] + pads[1]) // bh
    ow = (w + (pads[2] + pads[3] if len(pads) > 2 else 0)) // bw
    out = []
    for ob in range(n * bh * bw):
        b, shift = ob % n, ob // n
        sy, sx = shift // bw, shift % bw
        for oy in range(oh):
            for ox in range(ow):
                iy, ix = oy * bh + sy - pt, ox * bw + sx - pl
                for ch in range(c):
                    inside = 0 <= iy < h and 0 <= ix < w
                    out.append(x[((b * h + iy) * w + ix) * c + ch] if inside else pad_value)
    return out


def batch_to_space_ref(x, shape, block, crops):
    nb, h, w, c = as4d(shape)
    bh, bw = block[0], block[1] if len(block) > 1 else 1
    ct, cl = crops[0], crops[2] if len(crops) > 2 else 0
    n = nb // (bh * bw)
    oh = h * bh - crops[0] - crops[1]
    ow = w * bw - (crops[2] + crops[3] if len(crops) > 2 else 0)
    out = []
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                y, xx = oy + ct, ox + cl
                ib = ((y % bh) * bw + xx % bw) * n + b
                for ch in range(c):
                    out.append(x[((ib * h + y // bh) * w + xx // bw) * c + ch])
    return out


def space_batch(Model, q8, ttype, name, seed):
    m = Model(name, seed)
    q = q8(0.1, 7) if ttype == "INT8" else None
    pad = 7 if q else 0.0
    refs = []

    def s2b(shape, block, pads, out_shape):
        x = m.tensor(shape, ttype, q, name="s2b_in%d" % len(refs))
        y = m.tensor(out_shape, ttype, q, name="space_to_batch_%d" % len(refs))
        npads = len(pads) // 2
        m.op("SPACE_TO_BATCH_ND", [x, m.ints(block), m.tensor([npads, 2], "INT32", data=pads)],
             [y])
        refs.append(lambda v: space_to_batch_ref(v, shape, block, pads, pad))
        return x, y

    def b2s(shape, block, crops, out_shape):
        x = m.tensor(shape, ttype, q, name="b2s_in%d" % len(refs))
        y = m.tensor(out_shape, ttype, q, name="batch_to_space_%d" % len(refs))
        m.op("BATCH_TO_SPACE_ND", [x, m.ints(block),
                                   m.tensor([len(crops) // 2, 2], "INT32", data=crops)], [y])
        refs.append(lambda v: batch_to_space_ref(v, shape, block, crops))
        return x, y

    pairs = [s2b([2, 5, 4, 3], [2, 3], [1, 0, 1, 1], [12, 3, 2, 3]),
             s2b([1, 7, 2], [3], [0, 2], [3, 3, 2]),
             b2s([8, 2, 3, 2], [2, 2], [0, 1, 2, 0], [2, 3, 4, 2]),
             b2s([6, 2, 2, 3], [3, 2], [1, 1, 0, 1], [1, 4, 3, 3]),
             b2s([4, 3, 5], [2], [1, 0], [2, 5, 5])]
    m.inputs, m.outputs = [p[0] for p in pairs], [p[1] for p in pairs]
    m.reference = lambda ins: [f(v) for f, v in zip(refs, ins)]
    m.exact = ttype != "FLOAT32"
    return m


# ---- TRANSPOSE_CONV ---------------------------------------------------------

def tconv_pad(out, k, s, same):
    conv_out = (out + s - 1) // s if same else (out - k + s) // s
    return max(0, (conv_out - 1) * s + k - out) // 2


def transpose_conv_ref(x, xs, w, ws, bias, os_, stride, same):
    """TFLite's reference TransposeConv: the raw int32/float sums per output."""
    n, h, wd, ic = xs
    oc, kh, kw, _ = ws
    _, oh, ow, _ = os_
    pt, pl = tconv_pad(oh, kh, stride[0], same), tconv_pad(ow, kw, stride[1], same)
    acc = [0] * numel(os_)
    for b in range(n):
        for iy in range(h):
            for ix in range(wd):
                for ky in range(kh):
                    for kx in range(kw):
                        oy, ox = iy * stride[0] - pt + ky, ix * stride[1] - pl + kx
                        if not (0 <= oy < oh and 0 <= ox < ow):
                            continue
                        for o in range(oc):
                            s = 0
                            for i in range(ic):
                                s += (x[((b * h + iy) * wd + ix) * ic + i] *
                                      w[((o * kh + ky) * kw + kx) * ic + i])
                            acc[((b * oh + oy) * ow + ox) * oc + o] += s
    return [a + (bias[k % oc] if bias else 0) for k, a in enumerate(acc)]


def tconv_float_ref(m, x, args, act):
    y = transpose_conv_ref(x, *args)
    return [max(0.0, v) if act == "RELU" else v for v in y]


def tconv_int8_ref(x, args, zp_in, scales, out_q, act):
    xs = [v - zp_in for v in x]
    acc = transpose_conv_ref(xs, *args)
    oc = args[2][0]
    zp = out_q[1][0]
    lo = max(-128, zp) if act == "RELU" else -128
    out = []
    for k, a in enumerate(acc):
        mult, shift = fx.quantize_multiplier(scales[k % oc])
        out.append(fx.clamp(fx.mbqm(a, mult, shift) + zp, lo, 127))
    return out


def tconv_int16_ref(x, args, scales, act):
    acc = transpose_conv_ref(x, *args)
    oc = args[2][0]
    lo = 0 if act == "RELU" else -32768
    return [fx.clamp(fx.mbqm64(a, *fx.quantize_multiplier(scales[k % oc])), lo, 32767)
            for k, a in enumerate(acc)]


def tconv(m, ttype, xs, oc, k, stride, padding, out_hw, bias=True, act="NONE", q=None,
          bias16=False):
    """One TRANSPOSE_CONV; returns (input, output, reference)."""
    same = padding == "SAME"
    os_ = [xs[0], out_hw[0], out_hw[1], oc]
    ws = [oc, k[0], k[1], xs[3]]
    if ttype == "FLOAT32":
        x = m.tensor(xs, name="x%d" % len(m.outputs))
        w = m.const(ws)
        b = m.const([oc]) if bias else -1
        y = m.tensor(os_, name="tconv_%s_s%d%d" % (padding.lower(), stride[0], stride[1]))
    else:
        qin, qout, wq = q
        x = m.tensor(xs, ttype, qin, name="x%d" % len(m.outputs))
        w = m.const(ws, "INT8", wq)
        bq = ([qin[0][0] * s for s in wq[0]], [0] * len(wq[0]))
        if ttype == "INT16":  # TFLM widens a legacy INT16 bias
            b = m.tensor([oc], "INT16" if bias16 else "INT64", bq,
                         [m.rng.randint(-30000, 30000) for _ in range(oc)])
        else:
            b = m.const([oc], "INT32", bq, lo=-400, hi=400) if bias else -1
        b = b if bias else -1
        y = m.tensor(os_, ttype, qout, name="tconv_%s_s%d%d" % (padding.lower(), *stride))
    ins = [m.ints(os_), w, x] + ([b] if bias else [])
    m.op("TRANSPOSE_CONV", ins, [y], padding=padding, stride_h=stride[0], stride_w=stride[1],
         fused_activation_function=act)
    args = (xs, m.data[w], ws, m.data[b] if bias else None, os_, stride, same)
    if ttype == "FLOAT32":
        ref = lambda v: tconv_float_ref(m, v, args, act)
    else:
        scales = [fx.f32(qin[0][0]) * fx.f32(s) / fx.f32(qout[0][0]) for s in wq[0]]
        if len(scales) == 1:
            scales = scales * oc
        if ttype == "INT16":
            ref = lambda v: tconv_int16_ref(v, args, scales, act)
        else:
            ref = lambda v: tconv_int8_ref(v, args, qin[1][0], scales, qout, act)
    m.inputs.append(x)
    m.outputs.append(y)
    return ref


def transpose_convs(Model, q8, ttype, name, seed, per_channel):
    m = Model(name, seed)
    refs = []
    q = None
    for xs, oc, k, stride, padding, out_hw, bias, act in (
            ([1, 4, 5, 3], 4, (3, 3), (2, 2), "SAME", (8, 10), True, "NONE"),
            ([2, 3, 4, 2], 3, (3, 2), (2, 3), "VALID", (7, 11), False, "NONE"),
            ([1, 3, 3, 5], 2, (2, 4), (3, 1), "SAME", (9, 3), True, "NONE"),
            ([1, 5, 4, 2], 3, (5, 5), (1, 1), "SAME", (5, 4), True, "NONE")):
        if ttype == "INT8":
            wq = (per_channel_scales(m.rng, oc) if per_channel else ([0.013], [0]))
            q = (q8(0.05, -3), q8(0.09, 6), wq)
        elif ttype == "INT16":
            q = (q8(0.0004, 0), q8(0.0011, 0), per_channel_scales(m.rng, oc))
            # Without a bias, desktop TFLite accumulates 16x8 in int32 and
            # rounds unlike TFLM's int64 kernel (tflm_models has that case).
            bias = True
        refs.append(tconv(m, ttype, xs, oc, k, stride, padding, out_hw, bias, act, q))
    m.reference = lambda ins: [f(v) for f, v in zip(refs, ins)]
    # The TFLite that makes the expected outputs runs int8 through XNNPACK,
    # whose per-tensor deconvolution rounds a few values 1 away from
    # TFLite's reference kernel (which the Python reference follows).
    m.exact = ttype != "FLOAT32" and per_channel
    m.tolerance = 0 if per_channel else 1
    return m


def per_channel_scales(rng, n):
    return ([rng.uniform(0.004, 0.03) for _ in range(n)], [0] * n, 0)


# ---- L2_POOL_2D ---------------------------------------------------------------

def l2_pool_ref(x, shape, k, stride, same, act_max):
    n, h, w, c = shape
    oh = -(-h // stride[0]) if same else (h - k[0]) // stride[0] + 1
    ow = -(-w // stride[1]) if same else (w - k[1]) // stride[1] + 1
    pt = max(0, (oh - 1) * stride[0] + k[0] - h) // 2 if same else 0
    pl = max(0, (ow - 1) * stride[1] + k[1] - w) // 2 if same else 0
    out = []
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for ch in range(c):
                    sq, cnt = 0.0, 0
                    for y in range(oy * stride[0] - pt, oy * stride[0] - pt + k[0]):
                        for xx in range(ox * stride[1] - pl, ox * stride[1] - pl + k[1]):
                            if 0 <= y < h and 0 <= xx < w:
                                v = x[((b * h + y) * w + xx) * c + ch]
                                sq, cnt = sq + v * v, cnt + 1
                    out.append(min(math.sqrt(sq / cnt), act_max))
    return out


def l2_pools(Model):
    m = Model("l2_pool_float", 211)
    shape = [2, 7, 6, 3]
    x = m.tensor(shape, name="x")
    x3 = m.tensor(shape)
    m.op("MUL", [x, m.tensor([1], data=[3.0])], [x3])
    cases = [((3, 3), (2, 2), "SAME", [2, 4, 3, 3], "NONE"),
             ((2, 2), (2, 2), "VALID", [2, 3, 3, 3], "NONE"),
             ((3, 2), (1, 3), "SAME", [2, 7, 2, 3], "RELU_N1_TO_1")]
    for k, stride, padding, out_shape, act in cases:
        m.outputs.append(m.tensor(out_shape, name="l2_pool_%s_%d%d" % (padding.lower(), *k)))
        m.op("L2_POOL_2D", [x3], [m.outputs[-1]], padding=padding, stride_h=stride[0],
             stride_w=stride[1], filter_height=k[0], filter_width=k[1],
             fused_activation_function=act)
    m.inputs = [x]

    def ref(ins):
        v = [fx.f32(a * fx.f32(3.0)) for a in ins[0]]
        return [l2_pool_ref(v, shape, k, st, p == "SAME", 1.0 if act != "NONE" else 1e30)
                for k, st, p, _, act in cases]
    m.reference = ref
    return m


# ---- FLOOR_MOD ------------------------------------------------------------

def floor_mod_ref(a, b, ints):
    """TFLite's FloorMod; Python's % on ints is the same floor modulo."""
    if ints:
        return a % b
    r = math.fmod(a, b)
    if r != 0 and (b < 0) != (r < 0):
        r += b
    return fx.f32(r)


def broadcast_pairs(a, ashape, b, bshape):
    """Elementwise pairs of a and b (b's shape a suffix of a's, dims 1 or equal)."""
    out = []
    bs = [1] * (len(ashape) - len(bshape)) + list(bshape)
    for pos in positions(ashape):
        bpos = [p if d > 1 else 0 for p, d in zip(pos, bs)]
        out.append((a[index(ashape, pos)], b[index(bs, bpos)]))
    return out


def floor_mods(Model):
    m = Model("floor_mod_float_int32", 212)
    a = m.tensor([2, 3, 5], name="a")
    bk = m.tensor([5], data=[-0.7, 0.3, 1.1, -0.25, 0.45])
    y1 = m.tensor([2, 3, 5], name="floor_mod_broadcast")
    m.op("FLOOR_MOD", [a, bk], [y1])
    p, q = m.tensor([3, 4], name="p"), m.tensor([3, 4], name="q")
    y2 = m.tensor([3, 4], name="floor_mod_both_inputs")
    m.op("FLOOR_MOD", [p, q], [y2])
    i = m.tensor([2, 7], "INT32", name="i")
    ik = m.tensor([7], "INT32", data=[7, -3, 5, -11, 1, 13, -1])
    y3 = m.tensor([2, 7], "INT32", name="floor_mod_int32")
    m.op("FLOOR_MOD", [i, ik], [y3])
    m.inputs, m.outputs = [a, p, q, i], [y1, y2, y3]
    m.reference = lambda ins: [
        [floor_mod_ref(u, v, False) for u, v in broadcast_pairs(ins[0], [2, 3, 5], m.data[bk], [5])],
        [floor_mod_ref(u, v, False) for u, v in zip(ins[1], ins[2])],
        [floor_mod_ref(u, v, True) for u, v in broadcast_pairs(ins[3], [2, 7], m.data[ik], [7])]]
    return m


# ---- REDUCE_ALL / REDUCE_ANY ----------------------------------------------

def reduce_logic_ref(x, shape, axes, op):
    kept = [d for d in range(len(shape)) if d not in axes]
    groups = {}
    for pos in positions(shape):
        groups.setdefault(tuple(pos[d] for d in kept), []).append(x[index(shape, pos)])
    return [1.0 if op(g) else 0.0 for _, g in sorted(groups.items())]


def reduce_logic(Model):
    m = Model("reduce_all_any_bool", 213)
    shape = [3, 4, 5]
    x = m.tensor(shape, name="x")
    ones, zeros = m.tensor([1], data=[1.0]), m.tensor([1], data=[0.0])
    cases = [("REDUCE_ALL", -0.8, [2], False, [3, 4]),
             ("REDUCE_ALL", -0.9, [0, -1], True, [1, 4, 1]),
             ("REDUCE_ANY", 0.8, [1], False, [3, 5])]
    for op, thr, axes, keep, out_shape in cases:
        cond = m.tensor(shape, "BOOL")
        m.op("GREATER", [x, m.tensor([1], data=[thr])], [cond])
        r = m.tensor(out_shape, "BOOL")
        m.op(op, [cond, m.ints(axes)], [r], keep_dims=keep)
        m.outputs.append(m.tensor(out_shape, name=op.lower() + "_%d" % len(m.outputs)))
        m.op("SELECT_V2", [r, ones, zeros], [m.outputs[-1]])
    m.inputs = [x]
    m.reference = lambda ins: [
        reduce_logic_ref([v > fx.f32(thr) for v in ins[0]], shape,
                         [a % 3 for a in axes], all if op == "REDUCE_ALL" else any)
        for op, thr, axes, _, _ in cases]
    return m


# ---- CUMSUM -----------------------------------------------------------------

def cumsum_ref(x, shape, axis, exclusive, reverse, each=None):
    """Sums along axis; `each(acc)` maps the running sum to the output
    (TFLM's int8 kernel rescales it), `start` the initial sum."""
    axis %= len(shape)
    out = [None] * len(x)
    st = strides(shape)
    for pos in positions(shape):
        if pos[axis] != 0:
            continue
        order = list(range(shape[axis]))
        if reverse:
            order.reverse()
        acc = each[0] if each else 0.0
        for k in order:
            i = index(shape, pos) + k * st[axis]
            v = each[1](x[i]) if each else x[i]
            if exclusive:
                out[i] = acc
                acc = acc + v if not each else fx.wrap32(acc + v)
            else:
                acc = acc + v if not each else fx.wrap32(acc + v)
                out[i] = acc
    return [each[2](v) for v in out] if each else out


def cumsum_int8_params(sin, zin, sout, zout):
    """TFLM's CUMSUM int8: (initial accumulator, per-element scaling, output)."""
    twice = 2 * fx.f32(sin)
    im, ish = fx.quantize_multiplier(fx.f32(sin) / twice)
    om, osh = fx.quantize_multiplier(twice / ((1 << 20) * fx.f32(sout)))
    scale_in = lambda q: fx.mbqm(fx.wrap32((q - zin) * (1 << 20)), im, ish)
    start = fx.mbqm(fx.wrap32(-zin * (1 << 20)), im, ish)
    out = lambda acc: fx.clamp(fx.mbqm(acc, om, osh) + zout, -128, 127)
    return start, scale_in, out


CUMSUM_CASES = [([2, 5, 3], 1, False, False), ([2, 5, 3], 1, True, False),
                ([2, 5, 3], -1, False, True), ([2, 5, 3], 0, True, True)]


def cumsums(Model, ttype, name, seed, qin=None, qout=None):
    m = Model(name, seed)
    for shape, axis, exclusive, reverse in CUMSUM_CASES:
        x = m.tensor(shape, ttype, qin, name="x%d" % len(m.inputs))
        y = m.tensor(shape, ttype, qout, name="cumsum_axis%d%s%s" % (
            axis, "_exclusive" if exclusive else "", "_reverse" if reverse else ""))
        m.op("CUMSUM", [x, m.tensor([], "INT32", data=[axis])], [y], exclusive=exclusive,
             reverse=reverse)
        m.inputs.append(x)
        m.outputs.append(y)
    each = cumsum_int8_params(qin[0][0], qin[1][0], qout[0][0], qout[1][0]) if qin else None
    m.reference = lambda ins: [cumsum_ref(v, *case, each=each)
                               for v, case in zip(ins, CUMSUM_CASES)]
    m.exact = ttype != "FLOAT32"
    return m


# ---- DYNAMIC_UPDATE_SLICE --------------------------------------------------

def update_slice_ref(x, shape, u, ushape, start):
    st = [max(0, min(s, d - e)) for s, d, e in zip(start, shape, ushape)]
    out = list(x)
    for pos in positions(ushape):
        out[index(shape, [p + s for p, s in zip(pos, st)])] = u[index(ushape, pos)]
    return out


def update_slices(Model, q8, name="dynamic_update_slice", seed=214, int64_start=False):
    m = Model(name, seed)
    refs = []

    def case(ttype, shape, ushape, start=None, start_type="INT32", q=None, update_input=True,
             operand_input=True):
        k = len(m.outputs)
        if operand_input:
            x = m.tensor(shape, ttype, q, name="operand%d" % k)
            m.inputs.append(x)
        else:
            x = m.tensor(shape, ttype, q, data=[m.rng.randint(-50, 50) for _ in range(numel(shape))])
        if update_input:
            u = m.tensor(ushape, ttype, q, name="update%d" % k)
            m.inputs.append(u)
        else:
            u = m.tensor(ushape, ttype, q, data=[m.rng.randint(-99, 99) for _ in range(numel(ushape))])
        if start is None:
            s = m.tensor([len(shape)], "INT32", name="start%d" % k)
            m.inputs.append(s)
        else:
            s = m.tensor([len(shape)], start_type, data=start)
        y = m.tensor(shape, ttype, q, name="updated_%s_%d" % (ttype.lower(), k))
        m.op("DYNAMIC_UPDATE_SLICE", [x, u, s], [y])
        if ttype == "INT64":  # not a module output type: back to INT32
            y32 = m.tensor(shape, "INT32", name="updated_int64_%d" % k)
            m.op("CAST", [y], [y32])
            y = y32
        m.outputs.append(y)
        refs.append((x, u, s, shape, ushape))

    if int64_start:  # the TFLite that makes expected outputs lacks these (TFLM has them)
        case("FLOAT32", [6, 2], [4, 1], start=[3, -1], start_type="INT64")
        case("INT8", [5, 3], [2, 2], start=[1, 1], start_type="INT64", q=q8(0.1, -3))
        case("INT16", [7], [2])
        case("INT16", [3, 5], [2, 2], start=[1, 2])
        case("INT16", [4, 6], [2, 3])
    else:
        case("FLOAT32", [4, 5, 3], [2, 3, 3])                   # run-time, out of range
        case("FLOAT32", [4, 5, 3], [2, 3, 1], start=[1, 1, 2])  # constant, inside
        case("FLOAT32", [6], [4], start=[3])                    # constant, clamped
        case("INT8", [6, 4], [3, 2], q=q8(0.1, -3), update_input=False)
        case("INT32", [3, 3], [1, 2], start=[2, 5])
        case("INT64", [2, 4], [1, 3], operand_input=False, update_input=False)

    def ref(ins):
        vals = dict(zip(m.inputs, ins))
        out = []
        for x, u, s, shape, ushape in refs:
            get = lambda t: vals[t] if t in vals else m.data[t]
            out.append(update_slice_ref(get(x), shape, get(u), ushape, get(s)))
        return out
    m.reference = ref
    m.exact = True
    return m


# ---- BROADCAST_ARGS -------------------------------------------------------

def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    return [y if x == 1 else x for x, y in zip(a, b)]


def broadcast_args(Model):
    m = Model("broadcast_args_int32_int64", 215)
    y1 = m.tensor([3], "INT32", name="folded_int32")
    m.op("BROADCAST_ARGS", [m.ints([2, 1, 5]), m.ints([3, 1])], [y1])
    y64 = m.tensor([3], "INT64")
    m.op("BROADCAST_ARGS", [m.tensor([2], "INT64", data=[4, 1]),
                            m.tensor([3], "INT64", data=[1, 1, 3])], [y64])
    y2 = m.tensor([3], "INT32", name="folded_int64")
    m.op("CAST", [y64], [y2])
    # A shape only known at run time: x - x + [4, 1, 6].
    x = m.tensor([3], "INT32", name="x")
    zero, shp = m.tensor([3], "INT32"), m.tensor([3], "INT32")
    m.op("SUB", [x, x], [zero])
    m.op("ADD", [zero, m.ints([4, 1, 6])], [shp])
    y3 = m.tensor([3], "INT32", name="run_time")
    m.op("BROADCAST_ARGS", [shp, m.ints([5, 1])], [y3])
    m.inputs, m.outputs = [x], [y1, y2, y3]
    m.reference = lambda ins: [broadcast_shape([2, 1, 5], [3, 1]),
                               broadcast_shape([4, 1], [1, 1, 3]),
                               broadcast_shape([4, 1, 6], [5, 1])]
    m.exact = True
    return m


# ---- entry points for gen_ops.py -------------------------------------------

def models(Model, q8):
    return [space_batch(Model, q8, "FLOAT32", "space_batch_float", 201),
            space_batch(Model, q8, "INT8", "space_batch_int8", 202),
            transpose_convs(Model, q8, "FLOAT32", "transpose_conv_float", 203, False),
            transpose_convs(Model, q8, "INT8", "transpose_conv_int8", 204, True),
            transpose_convs(Model, q8, "INT8", "transpose_conv_int8_per_tensor", 205, False),
            transpose_convs(Model, q8, "INT16", "transpose_conv_int16", 206, True),
            l2_pools(Model), floor_mods(Model), reduce_logic(Model),
            cumsums(Model, "FLOAT32", "cumsum_float", 216), update_slices(Model, q8),
            broadcast_args(Model)]


def tflm_models(Model, q8):
    """Models desktop TFLite cannot check (int8 CUMSUM, TRANSPOSE_CONV's
    fused activation, version 4): their expected outputs are the Python
    references', on inputs made here."""
    ms = [cumsums(Model, "INT8", "cumsum_int8", 221, q8(0.05, -4), q8(0.2, 3)),
          cumsums(Model, "INT8", "cumsum_int8_zp0", 222, q8(0.03, 0), q8(0.1, -7))]
    m = Model("transpose_conv_relu", 223)
    refs = [tconv(m, "FLOAT32", [1, 3, 4, 2], 3, (3, 3), (2, 2), "SAME", (6, 8), True, "RELU"),
            tconv(m, "INT8", [1, 4, 3, 3], 2, (2, 3), (2, 1), "VALID", (8, 5), True, "RELU",
                  (q8(0.04, 9), q8(0.05, -20), per_channel_scales(m.rng, 2))),
            tconv(m, "INT16", [1, 3, 4, 2], 3, (3, 3), (2, 3), "SAME", (6, 12), False, "RELU",
                  (q8(0.0005, 0), q8(0.0009, 0), per_channel_scales(m.rng, 3))),
            tconv(m, "INT16", [1, 2, 3, 3], 2, (2, 2), (2, 2), "VALID", (4, 6), True, "NONE",
                  (q8(0.0005, 0), q8(0.0007, 0), per_channel_scales(m.rng, 2)), bias16=True)]
    m.reference = lambda ins: [f(v) for f, v in zip(refs, ins)]
    return ms + [m, update_slices(Model, q8, "dynamic_update_slice_int64_start", 224, True)]


def tflm_entry(m, model, outdir, io_entry):
    """The manifest entry of a tflm_models model: seeded inputs, reference
    outputs, compared exactly when integer."""
    rng = random.Random(m.name)
    prefix = os.path.join(outdir, m.name)
    ins = []
    for i, t in enumerate(m.inputs):
        dt = dtype_of(m, t)
        n = numel(m.tensors[t]["shape"])
        # INT32 inputs are start indices: some inside, some out of range.
        v = ([fx.f32(rng.uniform(-1, 1)) for _ in range(n)] if dt == "float32"
             else [rng.randint(-3, 8) for _ in range(n)] if dt == "int32"
             else [rng.randint(-32768, 32767) for _ in range(n)] if dt == "int16"
             else [rng.randint(-128, 127) for _ in range(n)])
        write(prefix + "_in_%d.bin" % i, dt, v)
        ins.append(v)
    outs = m.reference(ins)
    for i, t in enumerate(m.outputs):
        write(prefix + "_out_%d.bin" % i, dtype_of(m, t), outs[i])
    case = {"label": "python-ref", "exact": True,
            "inputs": [io_entry(m, t, "input", i, prefix + "_in_%d.bin" % i)
                       for i, t in enumerate(m.inputs)],
            "outputs": [io_entry(m, t, "output", i, prefix + "_out_%d.bin" % i)
                        for i, t in enumerate(m.outputs)]}
    return {"model": model, "format": "tflite", "cases": [case]}


def reference_cases(m, case, outdir):
    """Where TFLite's outputs are only near the reference kernel's (m.tolerance),
    a second case on the same inputs wants the Python reference's exactly."""
    if not getattr(m, "tolerance", 0):
        return []
    ins = [read(i["file"], i["dtype"]) for i in case["inputs"]]
    outs = m.reference(ins)
    wanted = []
    for o, values in zip(case["outputs"], outs):
        path = os.path.join(outdir, "%s_ref_out_%d.bin" % (m.name, o["index"]))
        write(path, o["dtype"], values)
        wanted.append(dict(o, file=path))
    return [dict(case, label="python-ref", exact=True, outputs=wanted)]


def write(path, dtype, values):
    with open(path, "wb") as f:
        f.write(struct.pack("<%d%s" % (len(values), PACK[dtype]), *values))


def read(path, dtype):
    data = open(path, "rb").read()
    n = len(data) // struct.calcsize(PACK[dtype])
    return list(struct.unpack("<%d%s" % (n, PACK[dtype]), data))


def dtype_of(m, t):
    return {"FLOAT32": "float32", "INT8": "int8", "INT16": "int16", "INT32": "int32",
            "INT64": "int64"}[m.tensors[t]["type"]]


def check(m, prefix):
    """Runs m.reference on the expected inputs; raises SystemExit unless it
    agrees with the expected outputs (exactly for integers)."""
    ins = [read("%s_in_%d.bin" % (prefix, i), dtype_of(m, t)) for i, t in enumerate(m.inputs)]
    want = m.reference(ins)
    for i, t in enumerate(m.outputs):
        got = read("%s_out_%d.bin" % (prefix, i), dtype_of(m, t))
        ref = want[i]
        float_out = dtype_of(m, t) == "float32"
        bad = [k for k, (a, b) in enumerate(zip(got, ref))
               if (abs(a - b) > 1e-5 + 1e-5 * abs(b) if float_out
                   else abs(a - b) > getattr(m, "tolerance", 0))]
        if len(got) != len(ref) or bad:
            k = bad[0] if bad else -1
            raise SystemExit("%s output %d: the Python reference disagrees with the expected "
                             "output (%d of %d differ, first at %d: %r vs %r)"
                             % (m.name, i, len(bad), len(got), k, ref[k] if bad else None,
                                got[k] if bad else None))


def refused(Model, name, seed, kind, ins, outs, text, **opts):
    """A one-operator model whose operator must be refused with `text`;
    `ins`/`outs` are (shape, type, quantisation or None, data or None)."""
    m = Model(name, seed)
    tin = [m.tensor(sh, tt, q, data=d, name=None if d else "in%d" % i)
           for i, (sh, tt, q, d) in enumerate(ins)]
    tout = [m.tensor(sh, tt, q, name="out%d" % i) for i, (sh, tt, q, _) in enumerate(outs)]
    m.op(kind, tin, tout, **opts)
    m.inputs = [t for t, i in zip(tin, ins) if i[3] is None]
    m.outputs = tout
    if not m.inputs:  # a model needs an input: one beside the operator
        x, y = m.tensor([1], name="x"), m.tensor([1], name="y")
        m.op("RELU", [x], [y])
        m.inputs, m.outputs = [x], tout + [y]
    return (m, text)


def error_models(Model, q8):
    q, i16 = q8(0.1, 0), q8(0.001, 0)
    return [
        refused(Model, "err_transpose_conv_hybrid", 231, "TRANSPOSE_CONV",
                [([4], "INT32", None, [1, 4, 4, 2]), ([2, 3, 3, 2], "INT8", q, [1] * 36),
                 ([1, 2, 2, 2], "FLOAT32", None, None)], [([1, 4, 4, 2], "FLOAT32", None, None)],
                "operator 0 (TRANSPOSE_CONV): unsupported type combination: input FLOAT32, "
                "weights INT8, output FLOAT32", padding="SAME", stride_w=2, stride_h=2),
        refused(Model, "err_transpose_conv_int16_zp", 230, "TRANSPOSE_CONV",
                [([4], "INT32", None, [1, 4, 4, 2]), ([2, 3, 3, 2], "INT8", q, [1] * 36),
                 ([1, 2, 2, 2], "INT16", q8(0.001, 3), None)],
                [([1, 4, 4, 2], "INT16", i16, None)],
                "operator 0 (TRANSPOSE_CONV): INT16 input and output need zero point 0",
                padding="SAME", stride_w=2, stride_h=2),
        refused(Model, "err_transpose_conv_int16_bias32", 229, "TRANSPOSE_CONV",
                [([4], "INT32", None, [1, 4, 4, 2]), ([2, 3, 3, 2], "INT8", q, [1] * 36),
                 ([1, 2, 2, 2], "INT16", i16, None)], [([1, 4, 4, 2], "INT16", i16, None)],
                "operator 0 (TRANSPOSE_CONV): quantized_bias_type INT32 is not supported with "
                "INT16 input", padding="SAME", stride_w=2, stride_h=2,
                quantized_bias_type="INT32"),
        refused(Model, "err_space_to_batch_5d", 232, "SPACE_TO_BATCH_ND",
                [([1, 2, 2, 2, 1], "FLOAT32", None, None), ([3], "INT32", None, [1, 1, 1]),
                 ([3, 2], "INT32", None, [0] * 6)], [([1, 2, 2, 2, 1], "FLOAT32", None, None)],
                "operator 0 (SPACE_TO_BATCH_ND): input 'in0' is 5-D; only 3-D and 4-D inputs "
                "are supported"),
        refused(Model, "err_batch_to_space_batch", 233, "BATCH_TO_SPACE_ND",
                [([5, 2, 2, 1], "FLOAT32", None, None), ([2], "INT32", None, [2, 2]),
                 ([2, 2], "INT32", None, [0] * 4)], [([1, 4, 4, 1], "FLOAT32", None, None)],
                "operator 0 (BATCH_TO_SPACE_ND): batch 5 is not a multiple of the block 2 x 2"),
        refused(Model, "err_l2_pool_int8", 234, "L2_POOL_2D",
                [([1, 4, 4, 1], "INT8", q, None)], [([1, 2, 2, 1], "INT8", q, None)],
                "operator 0 (L2_POOL_2D): unsupported types INT8 -> INT8 (only FLOAT32)",
                padding="VALID", stride_w=2, stride_h=2, filter_width=2, filter_height=2),
        refused(Model, "err_cumsum_int16", 235, "CUMSUM",
                [([3, 4], "INT16", i16, None), ([], "INT32", None, [1])],
                [([3, 4], "INT16", i16, None)],
                "operator 0 (CUMSUM): unsupported types INT16 -> INT16 (FLOAT32 and per-tensor "
                "INT8 are supported)"),
        refused(Model, "err_floor_mod_int8", 236, "FLOOR_MOD",
                [([4], "INT8", q, None), ([4], "INT8", q, None)], [([4], "INT8", q, None)],
                "operator 0 (FLOOR_MOD): unsupported types INT8, INT8 -> INT8"),
        refused(Model, "err_reduce_all_float", 237, "REDUCE_ALL",
                [([3, 4], "FLOAT32", None, None), ([1], "INT32", None, [1])],
                [([3], "FLOAT32", None, None)],
                "operator 0 (REDUCE_ALL): unsupported types FLOAT32 -> FLOAT32"),
        refused(Model, "err_update_slice_float_start", 238, "DYNAMIC_UPDATE_SLICE",
                [([4, 3], "FLOAT32", None, None), ([2, 3], "FLOAT32", None, None),
                 ([2], "FLOAT32", None, [1.0, 0.0])], [([4, 3], "FLOAT32", None, None)],
                "operator 0 (DYNAMIC_UPDATE_SLICE): start_indices must be an INT32 or INT64 "
                "vector of 2 values"),
        refused(Model, "err_broadcast_args_shapes", 239, "BROADCAST_ARGS",
                [([2], "INT32", None, [2, 3]), ([1], "INT32", None, [4])],
                [([2], "INT32", None, None)],
                "operator 0 (BROADCAST_ARGS): shapes do not broadcast: 3 against 4 at "
                "dimension 1"),
    ]
