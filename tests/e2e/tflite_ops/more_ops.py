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
         "TRANSPOSE_CONV": 67, "FLOOR_MOD": 95, "CUMSUM": 128, "REDUCE_ALL": 140,
         "BROADCAST_ARGS": 145, "DYNAMIC_UPDATE_SLICE": 151}
OPTIONS = {"L2_POOL_2D": "Pool2DOptions", "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
           "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
           "TRANSPOSE_CONV": "TransposeConvOptions", "FLOOR_MOD": "FloorModOptions",
           "CUMSUM": "CumsumOptions", "REDUCE_ALL": "ReducerOptions",
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


def mbqm(x, m, shift):
    """TFLite's MultiplyByQuantizedMultiplier."""
    left, right = max(shift, 0), max(-shift, 0)
    return fx.rdbpot(fx.srdhm(x * (1 << left), m), right)


def wrap32(v):
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


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
        out.append(fx.clamp(mbqm(a, mult, shift) + zp, lo, 127))
    return out


def tconv(m, ttype, xs, oc, k, stride, padding, out_hw, bias=True, act="NONE", q=None):
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
        x = m.tensor(xs, "INT8", qin, name="x%d" % len(m.outputs))
        w = m.const(ws, "INT8", wq)
        b = m.const([oc], "INT32", ([qin[0][0] * s for s in wq[0]], [0] * len(wq[0])),
                    lo=-400, hi=400) if bias else -1
        y = m.tensor(os_, "INT8", qout, name="tconv_%s_s%d%d" % (padding.lower(), *stride))
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


# ---- entry points for gen_ops.py -------------------------------------------

def models(Model, q8):
    return [space_batch(Model, q8, "FLOAT32", "space_batch_float", 201),
            space_batch(Model, q8, "INT8", "space_batch_int8", 202),
            transpose_convs(Model, q8, "FLOAT32", "transpose_conv_float", 203, False),
            transpose_convs(Model, q8, "INT8", "transpose_conv_int8", 204, True),
            transpose_convs(Model, q8, "INT8", "transpose_conv_int8_per_tensor", 205, False)]


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


def error_models(Model, q8):
    return []
