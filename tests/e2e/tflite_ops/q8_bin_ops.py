"""Integer BATCH_MATMUL (int8, int16), ADD_N (int8) and REDUCE_MAX /
REDUCE_MIN (int16, bool) test models for gen_ops.py, with Python ports of
TFLite Micro's kernels that give their exact expected outputs:
reference_ops::BatchMatMul<int8_t, int32_t> and <int16_t, int64_t> as
batch_matmul.cc calls them, reference_ops::AddN for int8 with add_n.cc's
Prepare, and reduce.cc's ReduceGeneric for max and min.  Nothing here is
the importer's code.  Each port must also stay within a step of desktop
TFLite (entry())."""
import os
import struct

from tflm_fixed import clamp, f32, mbqm, mbqm64, quantize_multiplier, wrap32

LIMITS = {"INT8": (-128, 127), "INT16": (-32768, 32767)}
PACK = {"INT8": "b", "INT16": "h", "FLOAT32": "f"}


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def positions(shape):
    """Every index of `shape` in row-major order."""
    if not shape:
        yield ()
        return
    for i in range(shape[0]):
        for rest in positions(shape[1:]):
            yield (i,) + rest


def flat(shape, pos):
    i = 0
    for n, p in zip(shape, pos):
        i = i * n + p
    return i


# ---- BATCH_MATMUL -----------------------------------------------------------

class Bmm:
    """lhs/rhs: (shape, quantisation); rhs_const: the RHS is a constant."""

    def __init__(self, name, ttype, lhs, rhs, q_out, adj_x=False, adj_y=False,
                 rhs_const=False, seed=1):
        self.name, self.ttype, self.lhs, self.rhs, self.q_out = name, ttype, lhs, rhs, q_out
        self.adj_x, self.adj_y, self.rhs_const, self.seed = adj_x, adj_y, rhs_const, seed

    def out_shape(self):
        ls, rs = self.lhs[0], self.rhs[0]
        rank = max(len(ls), len(rs))
        le, re = [1] * (rank - len(ls)) + ls, [1] * (rank - len(rs)) + rs
        batch = [max(a, b) for a, b in zip(le[:-2], re[:-2])]
        rows = le[-1] if self.adj_x else le[-2]
        cols = re[-2] if self.adj_y else re[-1]
        return batch + [rows, cols]


BMM = [
    # A constant [K, N] RHS under a rank-3 LHS, both zero points non-zero.
    Bmm("bmm_tflm_int8_const", "INT8", ([2, 3, 5], (0.05, 3)), ([5, 4], (0.02, -2)),
        (0.25, -5), rhs_const=True, seed=301),
    # Two inputs, batch axes broadcast both ways, both adjoints, odd sizes.
    Bmm("bmm_tflm_int8_adj", "INT8", ([2, 1, 7, 3], (0.03, -9)), ([3, 5, 7], (0.04, 11)),
        (0.24, 4), adj_x=True, adj_y=True, seed=302),
    # An output scale small enough that many values saturate.
    Bmm("bmm_tflm_int8_saturate", "INT8", ([1, 4, 9], (0.1, 0)), ([1, 9, 6], (0.1, -128)),
        (3.0, 17), seed=303),
    Bmm("bmm_tflm_int16_const", "INT16", ([3, 7], (0.0004, 0)), ([2, 7, 5], (0.0002, 0)),
        (0.008, 0), rhs_const=True, seed=304),
    Bmm("bmm_tflm_int16_adj", "INT16", ([2, 1, 6, 3], (0.0005, 0)), ([4, 5, 6], (0.0007, 0)),
        (0.02, 0), adj_x=True, adj_y=True, seed=305),
]


def multiplier(q_a, q_b, q_out):
    """GetQuantizedConvolutionMultipler: the scales' float product, in double
    over the output scale, then QuantizeMultiplier."""
    return quantize_multiplier(f32(f32(q_a[0]) * f32(q_b[0])) / f32(q_out[0]))


def bmm_reference(spec, lhs, rhs):
    """reference_ops::BatchMatMul on the TFLite operands (batch_matmul.cc
    transposes them so that both are read along the depth, and swaps them;
    the sum is the same): sum_k (l - lzp) * (r - rzp) per output element,
    int32 (wrapping) for int8, int64 for int16."""
    ls, rs, out = spec.lhs[0], spec.rhs[0], spec.out_shape()
    rank = len(out)
    le, re = [1] * (rank - len(ls)) + ls, [1] * (rank - len(rs)) + rs
    lzp, rzp, ozp = spec.lhs[1][1], spec.rhs[1][1], spec.q_out[1]
    m, s = multiplier(spec.lhs[1], spec.rhs[1], spec.q_out)
    lo, hi = LIMITS[spec.ttype]
    depth = le[-2] if spec.adj_x else le[-1]
    y = []
    for pos in positions(out):
        lb = [p if n > 1 else 0 for p, n in zip(pos[:-2], le[:-2])]
        rb = [p if n > 1 else 0 for p, n in zip(pos[:-2], re[:-2])]
        i, j = pos[-2], pos[-1]
        total = 0
        for k in range(depth):
            a = lhs[flat(le, lb + ([k, i] if spec.adj_x else [i, k]))]
            b = rhs[flat(re, rb + ([j, k] if spec.adj_y else [k, j]))]
            total += (a - lzp) * (b - rzp)
            if spec.ttype == "INT8":
                total = wrap32(total)
        scaled = mbqm(total, m, s) if spec.ttype == "INT8" else mbqm64(total, m, s)
        y.append(clamp(scaled + ozp, lo, hi))
    return y


def bmm_model(Model, spec):
    m = Model(spec.name, spec.seed)
    lo, hi = LIMITS[spec.ttype]
    q = lambda p: ([p[0]], [p[1]])
    x = m.tensor(spec.lhs[0], spec.ttype, q(spec.lhs[1]), name="lhs")
    if spec.rhs_const:
        data = [m.rng.randint(lo, hi) for _ in range(numel(spec.rhs[0]))]
        r = m.tensor(spec.rhs[0], spec.ttype, q(spec.rhs[1]), data=data)
        m.inputs = [x]
    else:
        r = m.tensor(spec.rhs[0], spec.ttype, q(spec.rhs[1]), name="rhs")
        m.inputs = [x, r]
    y = m.tensor(spec.out_shape(), spec.ttype, q(spec.q_out), name="y")
    m.op("BATCH_MATMUL", [x, r], [y], adj_x=spec.adj_x, adj_y=spec.adj_y)
    m.outputs = [y]
    port = lambda ins: bmm_reference(spec, ins[0], ins[1] if len(ins) > 1 else m.data[r])
    return m, spec.ttype, port


# ---- ADD_N ------------------------------------------------------------------

ADD_N = [
    # (name, shape, inputs, input quantisation, output quantisation, seed)
    ("add_n_tflm_int8", [2, 3, 5], 3, (0.05, 3), (0.08, -4), 311),
    ("add_n_tflm_int8_saturate", [13], 5, (0.1, -128), (0.4, -60), 312),
    ("add_n_tflm_int8_two", [3, 1, 4], 2, (0.02, 127), (0.05, -20), 313),
]


def add_n_reference(q_in, q_out, inputs):
    """add_n.cc's Prepare (twice the input scale, left shift 20) and
    reference_ops::AddN, including its initial term, the input offset
    rescaled (`x = input1_offset`)."""
    left = 20
    twice = 2 * f32(q_in[0])
    im, ish = quantize_multiplier(f32(q_in[0]) / twice)
    om, osh = quantize_multiplier(twice / ((1 << left) * f32(q_out[0])))
    off = -q_in[1]
    y = []
    for i in range(len(inputs[0])):
        acc = mbqm(off * (1 << left), im, ish)
        for x in inputs:
            acc = wrap32(acc + mbqm((off + x[i]) * (1 << left), im, ish))
        y.append(clamp(mbqm(acc, om, osh) + q_out[1], -128, 127))
    return y


def add_n_model(Model, case):
    name, shape, n, q_in, q_out, seed = case
    m = Model(name, seed)
    q = lambda p: ([p[0]], [p[1]])
    xs = [m.tensor(shape, "INT8", q(q_in), name="x%d" % i) for i in range(n)]
    y = m.tensor(shape, "INT8", q(q_out), name="y")
    m.op("ADD_N", xs, [y])
    m.inputs, m.outputs = xs, [y]
    # Desktop TFLite's ADD_N has no int8 kernel: the inputs are made here.
    m.own_inputs = [[m.rng.randint(-128, 127) for _ in range(numel(shape))] for _ in xs]
    return m, "INT8", lambda ins: add_n_reference(q_in, q_out, ins)


# ---- REDUCE_MAX / REDUCE_MIN ------------------------------------------------

REDUCE = [
    # (name, op, shape, axes, keep_dims, seed): int16, shared quantisation
    ("reduce_max_tflm_int16", "REDUCE_MAX", [3, 4, 5], [0, 2], True, 321),
    ("reduce_min_tflm_int16", "REDUCE_MIN", [2, 3, 7], [-2], False, 322),
    ("reduce_max_tflm_int16_all", "REDUCE_MAX", [3, 5], [1, 0], False, 323),
]


def reduce_reference(op, shape, axes, values):
    """ReduceGeneric: each output starts at the type's lowest (max) or
    highest (min) value and takes each input's max or min; False < True."""
    axes = {a % len(shape) for a in axes}
    groups = {}
    for pos in positions(shape):
        key = tuple(p for d, p in enumerate(pos) if d not in axes)
        groups.setdefault(key, []).append(values[flat(shape, pos)])
    pick = max if op == "REDUCE_MAX" else min
    return [pick(g) for _, g in sorted(groups.items())]


def reduce_model(Model, case):
    name, op, shape, axes, keep, seed = case
    m = Model(name, seed)
    q = ([0.0007], [0])
    x = m.tensor(shape, "INT16", q, name="x")
    red = {a % len(shape) for a in axes}
    out = [1 if d in red else n for d, n in enumerate(shape)] if keep else \
        [n for d, n in enumerate(shape) if d not in red]
    y = m.tensor(out, "INT16", q, name="y")
    m.op(op, [x, m.ints(axes)], [y], keep_dims=keep)
    m.inputs, m.outputs = [x], [y]
    return m, "INT16", lambda ins: reduce_reference(op, shape, axes, ins[0])


def reduce_bool_model(Model):
    """bool REDUCE_MAX (any) and REDUCE_MIN (all) over non-adjacent axes with
    keep_dims (a chained i1 reduction the compiler once got wrong), on
    masks made by GREATER, shown as 0/1 floats by SELECT_V2.  Desktop
    TFLite's optimized ReduceGeneric refuses bool max/min, so the input is
    made here."""
    m = Model("reduce_max_min_tflm_bool", 331)
    shape = [3, 4, 5]
    x = m.tensor(shape, name="x")
    ones, zeros = m.tensor([1], data=[1.0]), m.tensor([1], data=[0.0])
    cases = [("REDUCE_MAX", 0.85, [0, 2], True, [1, 4, 1]),
             ("REDUCE_MIN", -0.9, [2, 0], True, [1, 4, 1]),
             ("REDUCE_MIN", -0.95, [1], False, [3, 5]),
             ("REDUCE_MAX", 0.7, [-1], False, [3, 4])]
    for op, thr, axes, keep, out_shape in cases:
        cond = m.tensor(shape, "BOOL")
        m.op("GREATER", [x, m.tensor([1], data=[thr])], [cond])
        r = m.tensor(out_shape, "BOOL")
        m.op(op, [cond, m.ints(axes)], [r], keep_dims=keep)
        m.outputs.append(m.tensor(out_shape, name="%s_%d" % (op.lower(), len(m.outputs))))
        m.op("SELECT_V2", [r, ones, zeros], [m.outputs[-1]])
    m.inputs = [x]
    m.own_inputs = [[f32(m.rng.uniform(-1.0, 1.0)) for _ in range(numel(shape))]]
    port = lambda ins: [
        [1.0 if v else 0.0
         for v in reduce_reference(op, shape, axes, [v > f32(thr) for v in ins[0]])]
        for op, thr, axes, _, _ in cases]
    return m, "FLOAT32", port


# ---- entries and errors -----------------------------------------------------

def models(Model):
    """(model, type, port of TFLM's kernel on the list of input values)."""
    return ([bmm_model(Model, s) for s in BMM] + [add_n_model(Model, c) for c in ADD_N] +
            [reduce_model(Model, c) for c in REDUCE] + [reduce_bool_model(Model)])


def read(path, fmt):
    data = open(path, "rb").read()
    return list(struct.unpack("<%d%s" % (len(data) // struct.calcsize(fmt), fmt), data))


def own_entry(m, ttype, port, h):
    """Inputs made here (m.own_inputs) and the port's output on them, which
    must match exactly."""
    fmt, prefix = PACK[ttype], os.path.join(h["outdir"], m.name)
    ins = [h["write_values"]("%s_in_%d.bin" % (prefix, i), x, fmt)
           for i, x in enumerate(m.own_inputs)]
    ys = port(m.own_inputs)
    ys = ys if len(m.outputs) > 1 else [ys]
    outs = [h["write_values"]("%s_out_%d.bin" % (prefix, i), y, fmt) for i, y in enumerate(ys)]
    case = {"label": "seed1", "exact": True,
            "inputs": [h["io_entry"](m, t, "input", i, p)
                       for i, (t, p) in enumerate(zip(m.inputs, ins))],
            "outputs": [h["io_entry"](m, t, "output", i, p)
                        for i, (t, p) in enumerate(zip(m.outputs, outs))]}
    return {"model": h["write_model"](m), "format": "tflite", "cases": [case]}


def entry(m, ttype, port, h):
    """TFLite's inputs (all of them) and the port's output on them, which
    must match exactly and be within a step of TFLite's own output; h holds
    gen_ops's writers and the output folder."""
    if getattr(m, "own_inputs", None):
        return own_entry(m, ttype, port, h)
    e = h["write_case"](m)
    c = e["cases"][0]
    fmt = PACK[ttype]
    want = port([read(i["file"], fmt) for i in c["inputs"]])
    tflite = read(c["outputs"][0]["file"], fmt)
    if len(want) != len(tflite) or max(abs(a - b) for a, b in zip(want, tflite)) > 1:
        raise SystemExit("%s: the TFLM port is more than a step from TFLite" % m.name)
    path = h["write_values"](os.path.join(h["outdir"], m.name + "_tflm_out_0.bin"), want, fmt)
    c["outputs"][0] = dict(c["outputs"][0], file=path)
    c["exact"] = True
    return e


def error_models(Model, q8):
    out = []
    m = Model("err_add_n_int16", 341)  # add_n.cc: "only supports FLOAT32 and INT8"
    xs = [m.tensor([4], "INT16", q8(0.001, 0), name="x%d" % i) for i in range(2)]
    y = m.tensor([4], "INT16", q8(0.001, 0), name="y")
    m.op("ADD_N", xs, [y])
    m.inputs, m.outputs = xs, [y]
    out.append((m, "operator 0 (ADD_N): unsupported type INT16"))
    m = Model("err_add_n_int8_scales", 342)  # Prepare: one scale and zero point
    xs = [m.tensor([4], "INT8", q8(0.05 * (i + 1), 0), name="x%d" % i) for i in range(2)]
    y = m.tensor([4], "INT8", q8(0.1, 0), name="y")
    m.op("ADD_N", xs, [y])
    m.inputs, m.outputs = xs, [y]
    out.append((m, "operator 0 (ADD_N): input 1 is quantised unlike input 0"))
    m = Model("err_bmm_int16_zero_point", 343)  # batch_matmul.cc: int16 zero points 0
    a = m.tensor([2, 3], "INT16", q8(0.001, 0), name="a")
    b = m.tensor([3, 2], "INT16", q8(0.001, 5), name="b")
    y = m.tensor([2, 2], "INT16", q8(0.001, 0), name="y")
    m.op("BATCH_MATMUL", [a, b], [y])
    m.inputs, m.outputs = [a, b], [y]
    out.append((m, "operator 0 (BATCH_MATMUL): INT16 operands need zero point 0"))
    m = Model("err_bmm_int8_int16", 344)  # one type throughout
    a = m.tensor([2, 3], "INT8", q8(0.01, 0), name="a")
    b = m.tensor([3, 2], "INT8", q8(0.01, 0), name="b")
    y = m.tensor([2, 2], "INT16", q8(0.001, 0), name="y")
    m.op("BATCH_MATMUL", [a, b], [y])
    m.inputs, m.outputs = [a, b], [y]
    out.append((m, "operator 0 (BATCH_MATMUL): unsupported types INT8 x INT8 -> INT16"))
    m = Model("err_reduce_max_int16_requant", 345)  # reduce.cc: one quantisation
    x = m.tensor([3, 4], "INT16", q8(0.001, 0), name="x")
    y = m.tensor([3], "INT16", q8(0.002, 0), name="y")
    m.op("REDUCE_MAX", [x, m.ints([1])], [y], keep_dims=False)
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (REDUCE_MAX): unsupported types INT16 -> INT16"))
    return out
