"""16x8 models for gen_ops.py (int16 activations with zero point 0, int8
weights, int64 bias) and TFLite Micro's int16 kernels in plain Python,
which give their expected outputs: ports of reference_integer_ops'
ConvPerChannel, DepthwiseConvPerChannel and FullyConnected for int16, with
the int64 MultiplyByQuantizedMultiplier (multiplier rounded to 16 bits),
of ADD/SUB's general int16 path (AddGeneralParamScale: left shift 15) and
of MUL's MulElementwise, AveragePool, MaxPool and ReluQuantized.
XNNPACK has no int16 kernels, so TFLite runs its builtin ones and gen_ops
requires the port to equal TFLite's output exactly.  Nothing here is the
importer's code."""
from tflm_fixed import clamp, f32, mbqm, mbqm64, quantize_multiplier, rdbpot, srdhm

CODES = {}
OPTIONS = {}


def act_range(act, scale):
    """CalculateActivationRangeQuantized for int16 (zero point 0)."""
    lo, hi = -32768, 32767
    q = lambda v: int(abs(f32(v / f32(scale))) + 0.5) * (1 if v >= 0 else -1)
    if act in ("RELU", "RELU6"):
        lo = max(lo, q(0.0))
    if act == "RELU6":
        hi = min(hi, q(6.0))
    if act == "RELU_N1_TO_1":
        lo, hi = max(lo, q(-1.0)), min(hi, q(1.0))
    return lo, hi


class Spec:
    """kind CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED; shape is the
    input's; k the kernel size; w_scales None for per-tensor."""
    def __init__(self, name, kind, shape, oc, k=1, stride=1, padding="VALID", act="NONE",
                 bias=True, per_channel=True, mult=1, seed=1, s_in=0.0002, s_out=0.001,
                 near_one=False):
        self.__dict__.update(locals())
        del self.__dict__["self"]


CASES = [
    Spec("conv_int16_same_s2_relu", "CONV_2D", [1, 9, 8, 3], 5, 3, 2, "SAME", "RELU", seed=401),
    Spec("conv_int16_valid_batch2", "CONV_2D", [2, 7, 7, 4], 3, 3, 1, "VALID",
         seed=402, s_out=0.003),
    Spec("conv_int16_same_relu6_saturate", "CONV_2D", [1, 6, 5, 2], 4, 3, 1, "SAME", "RELU6",
         seed=403, s_out=0.0003, near_one=True),
    Spec("depthwise_int16_mult2_s2", "DEPTHWISE_CONV_2D", [1, 9, 9, 3], 6, 3, 2, "SAME",
         mult=2, seed=404, s_out=0.0015),
    Spec("depthwise_int16_valid_relu6", "DEPTHWISE_CONV_2D", [1, 7, 6, 4], 4, 3, 1, "VALID",
         "RELU6", seed=405, s_out=0.00025),
    Spec("fc_int16_bias", "FULLY_CONNECTED", [3, 37], 11, seed=406, s_out=0.0015,
         per_channel=False),
    Spec("fc_int16_per_channel", "FULLY_CONNECTED", [3, 29], 7, seed=416, s_out=0.0012),
    Spec("fc_int16_nobias_relu", "FULLY_CONNECTED", [2, 20], 9, act="RELU", bias=False,
         per_channel=False, seed=407, s_out=0.0006, near_one=True),
]


class Binary:
    """ADD, SUB or MUL of input x and a constant b broadcast to x's shape."""
    def __init__(self, name, kind, shape, bshape, scales, act="NONE", seed=1):
        self.name, self.kind, self.shape, self.bshape = name, kind, shape, bshape
        self.scales, self.act, self.seed, self.bias = scales, act, seed, True


BINARY = [
    Binary("add_int16_broadcast_relu", "ADD", [1, 5, 5, 3], [1, 1, 1, 3],
           (0.00031, 0.00052, 0.00071), "RELU", seed=411),
    Binary("sub_int16", "SUB", [2, 3, 7], [2, 3, 7], (0.0004, 0.00023, 0.00037), seed=412),
    Binary("add_int16_saturate_relu6", "ADD", [3, 9], [9], (0.0011, 0.0009, 0.00027),
           "RELU6", seed=413),
    Binary("mul_int16_broadcast", "MUL", [1, 4, 5, 3], [1, 1, 1, 3], (0.0003, 0.0002, 0.0013),
           seed=414),
    Binary("mul_int16_relu", "MUL", [2, 11], [2, 11], (0.00041, 0.00029, 0.0031), "RELU",
           seed=415),
]


def build_binary(m, spec):
    sa, sb, so = spec.scales
    x = m.tensor(spec.shape, "INT16", ([sa], [0]), name="x")
    n = 1
    for d in spec.bshape:
        n *= d
    b = m.tensor(spec.bshape, "INT16", ([sb], [0]), [m.rng.randint(-32768, 32767) for _ in range(n)])
    y = m.tensor(spec.shape, "INT16", ([so], [0]), name="y")
    m.op(spec.kind, [x, b], [y], fused_activation_function=spec.act)
    m.inputs, m.outputs = [x], [y]
    return x, b, y


def reference_binary(spec, m, ids, x):
    sa, sb, so = (f32(v) for v in spec.scales)
    twice = 2.0 * max(sa, sb)
    ma, ea = quantize_multiplier(sa / twice)
    mb, eb = quantize_multiplier(sb / twice)
    mo, eo = quantize_multiplier(twice / ((1 << 15) * so))
    lo, hi = act_range(spec.act, spec.scales[2])
    bv, nb = m.data[ids[1]], 1
    for d in spec.bshape:
        nb *= d
    out = []
    if spec.kind == "MUL":  # MulElementwise: one multiplier on the raw product
        mm, em = quantize_multiplier(sa * sb / so)
        return [clamp(mbqm(v * bv[i % nb], mm, em), lo, hi) for i, v in enumerate(x)]
    for i, v in enumerate(x):
        w = bv[i % nb]  # b's shape is a suffix of x's, or all-ones but the last
        p = mbqm(v * (1 << 15), ma, ea)
        q = mbqm(w * (1 << 15), mb, eb)
        out.append(clamp(mbqm(p - q if spec.kind == "SUB" else p + q, mo, eo), lo, hi))
    return out


class Pool:
    """AVERAGE_POOL_2D or MAX_POOL_2D on int16 (same quantisation in and out)."""
    def __init__(self, name, kind, shape, k, stride, padding, act="NONE", seed=1):
        self.name, self.kind, self.shape, self.k, self.stride = name, kind, shape, k, stride
        self.padding, self.act, self.seed, self.scale = padding, act, seed, 0.0003


POOLS = [
    Pool("avg_pool_int16_same_s2", "AVERAGE_POOL_2D", [1, 11, 10, 3], 3, 2, "SAME", seed=421),
    Pool("avg_pool_int16_valid_relu6", "AVERAGE_POOL_2D", [2, 7, 9, 2], 2, 2, "VALID", "RELU6",
         seed=422),
    Pool("max_pool_int16_same_relu", "MAX_POOL_2D", [1, 9, 8, 4], 3, 2, "SAME", "RELU",
         seed=423),
]


def build_pool(m, spec):
    n, h, w, ch = spec.shape
    q = ([spec.scale], [0])
    x = m.tensor(spec.shape, "INT16", q, name="x")
    y = m.tensor([n, out_size(spec, h), out_size(spec, w), ch], "INT16", q, name="y")
    m.op(spec.kind, [x], [y], padding=spec.padding, stride_w=spec.stride,
         stride_h=spec.stride, filter_width=spec.k, filter_height=spec.k,
         fused_activation_function=spec.act)
    m.inputs, m.outputs = [x], [y]
    return x, y


def reference_pool(spec, x):
    """reference_integer_ops AveragePool / MaxPool for int16."""
    n, h, w, ch = spec.shape
    oh, ow = out_size(spec, h), out_size(spec, w)
    ph = max(0, ((oh - 1) * spec.stride + spec.k - h) // 2) if spec.padding == "SAME" else 0
    pw = max(0, ((ow - 1) * spec.stride + spec.k - w) // 2) if spec.padding == "SAME" else 0
    lo, hi = act_range(spec.act, spec.scale)
    out = []
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for c in range(ch):
                    vals = [x[((b * h + iy) * w + ix) * ch + c]
                            for iy in range(max(oy * spec.stride - ph, 0),
                                            min(oy * spec.stride - ph + spec.k, h))
                            for ix in range(max(ox * spec.stride - pw, 0),
                                            min(ox * spec.stride - pw + spec.k, w))]
                    if spec.kind == "MAX_POOL_2D":
                        v = max(vals)
                    else:  # round half away from zero, in C's truncating division
                        acc, cnt = sum(vals), len(vals)
                        v = (acc + cnt // 2) // cnt if acc > 0 else -((-acc + cnt // 2) // cnt)
                    out.append(clamp(v, lo, hi))
    return out


class Unary:
    """RELU / RELU6 (rescaled when the scales differ), or CONCATENATION of x
    with a constant along the last axis."""
    def __init__(self, name, kind, shape, s_in, s_out, seed=1):
        self.name, self.kind, self.shape, self.seed = name, kind, shape, seed
        self.s_in, self.s_out = s_in, s_out


UNARY = [
    Unary("relu_int16_rescale", "RELU", [3, 13], 0.0004, 0.00023, seed=431),
    Unary("relu6_int16", "RELU6", [2, 3, 7], 0.0003, 0.00021, seed=432),
    Unary("concat_int16", "CONCATENATION", [2, 3, 4], 0.0003, 0.0003, seed=433),
]


def build_unary(m, spec):
    x = m.tensor(spec.shape, "INT16", ([spec.s_in], [0]), name="x")
    q = ([spec.s_out], [0])
    if spec.kind != "CONCATENATION":
        y = m.tensor(spec.shape, "INT16", q, name="y")
        m.op(spec.kind, [x], [y])
    else:
        cshape = spec.shape[:-1] + [2]
        n = cshape[0] * cshape[1] * cshape[2]
        c = m.tensor(cshape, "INT16", q, [m.rng.randint(-32768, 32767) for _ in range(n)])
        y = m.tensor(spec.shape[:-1] + [spec.shape[-1] + 2], "INT16", q, name="y")
        m.op("CONCATENATION", [x, c], [y], axis=-1)
    m.inputs, m.outputs = [x], [y]
    return x, y, (c if spec.kind == "CONCATENATION" else -1)


def reference_unary(spec, m, ids, x):
    if spec.kind == "CONCATENATION":
        cv, k, out = m.data[ids[2]], spec.shape[-1], []
        for r in range(len(x) // k):
            out += x[r * k:(r + 1) * k] + cv[r * 2:(r + 1) * 2]
        return out
    mult, shift = quantize_multiplier(f32(spec.s_in) / f32(spec.s_out))  # ReluQuantized
    lo, hi = act_range(spec.kind, spec.s_out)
    return [clamp(mbqm(v, mult, shift), lo, hi) for v in x]


def out_size(spec, n):
    if spec.kind == "FULLY_CONNECTED":
        return 1
    if spec.padding == "SAME":
        return -(-n // spec.stride)
    return (n - spec.k) // spec.stride + 1


def build(m, spec):
    """Adds the layer to Model m; returns the tensor indices (x, w, b, y)."""
    rng = m.rng
    nw = spec.oc if spec.per_channel else 1
    w_scales = [rng.uniform(0.002, 0.02) for _ in range(nw)]
    if spec.near_one:  # a Q31 multiplier >= 0x7FFF0000 (reduced to 0x7FFF)
        w_scales[0] = f32(spec.s_out / spec.s_in * 2.0 ** -9 * 0.999995)
    axis = 3 if spec.kind == "DEPTHWISE_CONV_2D" else 0
    wq = (w_scales, [0] * nw, axis)
    x = m.tensor(spec.shape, "INT16", ([spec.s_in], [0]), name="x")
    if spec.kind == "FULLY_CONNECTED":
        wshape, yshape = [spec.oc, spec.shape[1]], [spec.shape[0], spec.oc]
    else:
        oh, ow = out_size(spec, spec.shape[1]), out_size(spec, spec.shape[2])
        yshape = [spec.shape[0], oh, ow, spec.oc]
        wshape = ([1, spec.k, spec.k, spec.oc] if spec.kind == "DEPTHWISE_CONV_2D"
                  else [spec.oc, spec.k, spec.k, spec.shape[3]])
    n = 1
    for d in wshape:
        n *= d
    w = m.tensor(wshape, "INT8", wq, [rng.randint(-128, 127) for _ in range(n)])
    b = -1
    if spec.bias:
        bs = [spec.s_in * s for s in (w_scales * spec.oc)[:spec.oc]]
        vals = [rng.randint(-40000000, 40000000) for _ in range(spec.oc)]
        vals[-1] = 3 * 2 ** 33 * (1 if spec.seed % 2 else -1)  # beyond int32
        b = m.tensor([spec.oc], "INT64", (bs, [0] * spec.oc), vals)
    y = m.tensor(yshape, "INT16", ([spec.s_out], [0]), name="y")
    opts = {"fused_activation_function": spec.act}
    if spec.kind != "FULLY_CONNECTED":
        opts.update(padding=spec.padding, stride_w=spec.stride, stride_h=spec.stride)
    if spec.kind == "DEPTHWISE_CONV_2D":
        opts["depth_multiplier"] = spec.mult
    # A bias-less conv has two inputs (TFLite reads a third as its bias).
    ins = [x, w, b] if b >= 0 or spec.kind == "FULLY_CONNECTED" else [x, w]
    m.op(spec.kind, ins, [y], **opts)
    m.inputs, m.outputs = [x], [y]
    return x, w, b, y


def multipliers(spec, m, w):
    scales = m.tensors[w]["quantization"]["scale"]
    out = []
    for s in scales:
        if spec.kind == "FULLY_CONNECTED" and len(scales) == 1:  # float product
            real = f32(f32(spec.s_in) * f32(s)) / f32(spec.s_out)
        else:
            real = f32(spec.s_in) * f32(s) / f32(spec.s_out)
        out.append(quantize_multiplier(real))
    if spec.near_one and out[0][0] < 0x7FFF0000:
        raise SystemExit("%s: multiplier %#x does not exercise the 0x7FFF case"
                         % (spec.name, out[0][0]))
    return out


def reference(spec, m, ids, x):
    """TFLM's int16 kernel on the flat input x."""
    xi, w, b, y = ids
    wv, bv = m.data[w], (m.data[b] if b >= 0 else None)
    qm = multipliers(spec, m, w)
    lo, hi = act_range(spec.act, spec.s_out)
    out = []

    def finish(acc, c):
        if bv is not None:
            acc += bv[c]
        mult, shift = qm[c if len(qm) > 1 else 0]
        return clamp(mbqm64(acc, mult, shift), lo, hi)

    if spec.kind == "FULLY_CONNECTED":
        rows, depth = spec.shape
        for r in range(rows):
            for c in range(spec.oc):
                acc = sum(x[r * depth + d] * wv[c * depth + d] for d in range(depth))
                out.append(finish(acc, c))
        return out
    n, h, wd, ic = spec.shape
    oh, ow = out_size(spec, h), out_size(spec, wd)
    ph = max(0, ((oh - 1) * spec.stride + spec.k - h) // 2) if spec.padding == "SAME" else 0
    pw = max(0, ((ow - 1) * spec.stride + spec.k - wd) // 2) if spec.padding == "SAME" else 0
    at = lambda bb, yy, xx, cc: x[((bb * h + yy) * wd + xx) * ic + cc]
    for bb in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for c in range(spec.oc):
                    acc = 0
                    for ky in range(spec.k):
                        for kx in range(spec.k):
                            iy, ix = oy * spec.stride - ph + ky, ox * spec.stride - pw + kx
                            if not (0 <= iy < h and 0 <= ix < wd):
                                continue
                            if spec.kind == "DEPTHWISE_CONV_2D":
                                acc += at(bb, iy, ix, c // spec.mult) * wv[(ky * spec.k + kx) * spec.oc + c]
                            else:
                                for i in range(ic):
                                    acc += at(bb, iy, ix, i) * wv[((c * spec.k + ky) * spec.k + kx) * ic + i]
                    out.append(finish(acc, c))
    return out


def models(Model):
    """(model, port, exact) per case; port maps the input values to TFLM's
    output; exact: desktop TFLite must agree exactly (it runs another
    kernel, a 32-bit multiplier, for a bias-less FULLY_CONNECTED)."""
    out = []
    for spec in CASES:
        m = Model(spec.name, spec.seed)
        ids = build(m, spec)
        out.append((m, lambda v, spec=spec, m=m, ids=ids: reference(spec, m, ids, v),
                    spec.bias))
    for spec in POOLS:
        m = Model(spec.name, spec.seed)
        build_pool(m, spec)
        out.append((m, lambda v, spec=spec: reference_pool(spec, v), True))
    for spec in UNARY:
        m = Model(spec.name, spec.seed)
        ids = build_unary(m, spec)
        out.append((m, lambda v, spec=spec, m=m, ids=ids: reference_unary(spec, m, ids, v),
                    True))
    for spec in BINARY:
        m = Model(spec.name, spec.seed)
        ids = build_binary(m, spec)
        out.append((m, lambda v, spec=spec, m=m, ids=ids: reference_binary(spec, m, ids, v),
                    True))
    return out


def chain_model(Model):
    """A small 16x8 network (conv, depthwise, residual add, average pool,
    fully-connected), compared with desktop TFLite exactly: with biases its
    int16 kernels are TFLM's, as the single-layer cases check."""
    m = Model("net_int16", 440)
    rng = m.rng
    s_x, s_a, s_b = 0.0002, 0.0009, 0.0011
    x = m.tensor([1, 8, 8, 3], "INT16", ([s_x], [0]), name="x")

    def layer(kind, wshape, oc, s_in, s_out, ins, yshape, **opts):
        ws = [rng.uniform(0.004, 0.02) for _ in range(oc)]
        n = 1
        for d in wshape:
            n *= d
        w = m.tensor(wshape, "INT8", (ws, [0] * oc, 3 if kind == "DEPTHWISE_CONV_2D" else 0),
                     [rng.randint(-127, 127) for _ in range(n)])
        b = m.tensor([oc], "INT64", ([s_in * v for v in ws], [0] * oc),
                     [rng.randint(-2000000, 2000000) for _ in range(oc)])
        y = m.tensor(yshape, "INT16", ([s_out], [0]))
        m.op(kind, [ins, w, b], [y], **opts)
        return y

    a = layer("CONV_2D", [4, 3, 3, 3], 4, s_x, s_a, x, [1, 8, 8, 4], padding="SAME",
              stride_w=1, stride_h=1, fused_activation_function="RELU")
    d = layer("DEPTHWISE_CONV_2D", [1, 3, 3, 4], 4, s_a, s_b, a, [1, 8, 8, 4], padding="SAME",
              stride_w=1, stride_h=1, depth_multiplier=1, fused_activation_function="NONE")
    r = m.tensor([1, 8, 8, 4], "INT16", ([0.0013], [0]))
    m.op("ADD", [a, d], [r], fused_activation_function="RELU6")
    p = m.tensor([1, 4, 4, 4], "INT16", ([0.0013], [0]))
    m.op("AVERAGE_POOL_2D", [r], [p], padding="VALID", stride_w=2, stride_h=2, filter_width=2,
         filter_height=2, fused_activation_function="NONE")
    ws = [0.01]
    w = m.tensor([5, 64], "INT8", (ws, [0]), [rng.randint(-127, 127) for _ in range(320)])
    b = m.tensor([5], "INT64", ([0.0013 * 0.01], [0]), [rng.randint(-90000, 90000) for _ in range(5)])
    y = m.tensor([1, 5], "INT16", ([0.004], [0]), name="y")
    m.op("FULLY_CONNECTED", [p, w, b], [y])
    m.inputs, m.outputs = [x], [y]
    return m


def error_models(Model, q8):
    """16x8 layers still refused, with the text the error must contain."""
    m = Model("err_conv_int16_int32_bias", 408)
    x = m.tensor([1, 4, 4, 2], "INT16", q8(0.0002, 0), name="x")
    w = m.tensor([3, 1, 1, 2], "INT8", ([0.01] * 3, [0] * 3, 0), [1, -2, 3, -4, 5, -6])
    b = m.tensor([3], "INT32", ([0.000002] * 3, [0] * 3), [7, 8, 9], name="b")
    y = m.tensor([1, 4, 4, 3], "INT16", q8(0.001, 0), name="y")
    m.op("CONV_2D", [x, w, b], [y], padding="VALID", stride_w=1, stride_h=1)
    m.inputs, m.outputs = [x], [y]
    out = [(m, "operator 0 (CONV_2D): bias 'b' must be a constant INT64 vector of 3 for "
               "INT16 input (got INT32)")]
    m = Model("err_fc_int16_zero_point", 409)
    x = m.tensor([1, 4], "INT16", q8(0.0002, 5), name="x")
    y = m.tensor([1, 2], "INT16", q8(0.001, 0), name="y")
    w = m.tensor([2, 4], "INT8", q8(0.01, 0), [1, 2, 3, 4, 5, 6, 7, 8])
    m.op("FULLY_CONNECTED", [x, w, -1], [y])
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (FULLY_CONNECTED): INT16 input and output need zero point 0 "
                   "(got 5 and 0)"))
    m = Model("err_conv_int16_int16_weights", 410)
    x = m.tensor([1, 3, 3, 1], "INT16", q8(0.0002, 0), name="x")
    w = m.tensor([2, 1, 1, 1], "INT16", ([0.01] * 2, [0] * 2, 0), [300, -300])
    b = m.tensor([2], "INT64", ([0.000002] * 2, [0] * 2), [1, 2])
    y = m.tensor([1, 3, 3, 2], "INT16", q8(0.001, 0), name="y")
    m.op("CONV_2D", [x, w, b], [y], padding="VALID", stride_w=1, stride_h=1)
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (CONV_2D): unsupported type combination: input INT16, weights "
                   "INT16, output INT16 (16x8 kernels take INT16 input and output, INT8 "
                   "weights)"))
    return out
