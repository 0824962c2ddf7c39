"""UNIDIRECTIONAL_SEQUENCE_LSTM test models for gen_ops.py, and a float LSTM
in plain Python that checks TFLite's expected outputs for them.

The Python LSTM is written from the formulas of TFLite's float kernel
(lstm_eval.cc), in double precision and from zero state; it shares nothing
with the importer's lowering, so a wrong expected/ file (or a model built
differently from what it claims) fails gen_ops.py instead of becoming the
truth the importer is tested against.
"""
import math
import struct

GATES = "ifco"  # input, forget, cell, output: the order of TFLite's inputs


class Spec:
    def __init__(self, name, batch=1, time=3, n_in=5, n_cell=7, n_out=None, cifg=False,
                 peephole=False, projection=False, layer_norm=False, time_major=False,
                 act="TANH", cell_clip=0.0, proj_clip=0.0, seed=51):
        self.name, self.batch, self.time, self.n_in, self.n_cell = name, batch, time, n_in, n_cell
        self.n_out = n_out or n_cell
        self.cifg, self.peephole, self.projection = cifg, peephole, projection
        self.layer_norm, self.time_major, self.act = layer_norm, time_major, act
        self.cell_clip, self.proj_clip, self.seed = cell_clip, proj_clip, seed

    def rows(self):
        """The leading dims of input and output: [batch, time] or time major."""
        return [self.time, self.batch] if self.time_major else [self.batch, self.time]


# Odd sizes (n_input 5, n_cell 7) so that no dimension lines up with a
# vector width; each case adds one feature of the kernel.  The clips are
# small enough to bite on these inputs (checked: each changes the output).
CASES = [
    Spec("lstm_float_b1"),
    Spec("lstm_float_b2", batch=2),
    Spec("lstm_float_cifg", batch=2, cifg=True),
    Spec("lstm_float_peephole", peephole=True, cell_clip=0.5),
    Spec("lstm_float_cifg_peephole", cifg=True, peephole=True),
    Spec("lstm_float_projection", batch=2, n_out=4, projection=True, proj_clip=0.3,
         cell_clip=0.4),
    Spec("lstm_float_time_major", batch=2, time=4, time_major=True),
    Spec("lstm_float_layer_norm_relu6", batch=2, layer_norm=True, act="RELU6"),
]


def build(m, s):
    """Writes s's LSTM into gen_ops Model m; returns the operator's inputs."""
    ins = [-1] * (24 if s.layer_norm else 20)
    ins[0] = m.tensor(s.rows() + [s.n_in], name="x")
    for k, gate in enumerate(GATES):
        if gate == "i" and s.cifg:
            continue
        ins[1 + k] = m.const([s.n_cell, s.n_in], lo=-0.6, hi=0.6)
        ins[5 + k] = m.const([s.n_cell, s.n_out], lo=-0.6, hi=0.6)
        ins[12 + k] = m.const([s.n_cell], lo=-0.3, hi=0.3)
        if s.peephole and gate != "c":
            ins[9 + "ifo".index(gate)] = m.const([s.n_cell], lo=-0.5, hi=0.5)
        if s.layer_norm:
            ins[20 + k] = m.const([s.n_cell], lo=0.5, hi=1.5)
    if s.projection:
        ins[16] = m.const([s.n_out, s.n_cell], lo=-0.6, hi=0.6)
        ins[17] = m.const([s.n_out], lo=-0.2, hi=0.2)
    ins[18] = m.tensor([s.batch, s.n_out], name="output_state", variable=True)
    ins[19] = m.tensor([s.batch, s.n_cell], name="cell_state", variable=True)
    y = m.tensor(s.rows() + [s.n_out], name="y")
    m.op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], fused_activation_function=s.act,
         cell_clip=s.cell_clip, proj_clip=s.proj_clip, time_major=s.time_major)
    m.inputs, m.outputs = [ins[0]], [y]
    return ins


# ---- the independent float LSTM ----------------------------------------------

ACTIVATIONS = {"NONE": lambda v: v, "RELU": lambda v: max(v, 0.0),
               "RELU_N1_TO_1": lambda v: min(max(v, -1.0), 1.0),
               "RELU6": lambda v: min(max(v, 0.0), 6.0), "TANH": math.tanh}


def sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


def matvec(w, rows, cols, v):
    return [sum(w[r * cols + k] * v[k] for k in range(cols)) for r in range(rows)]


def normalise(v):
    mean = sum(v) / len(v)
    var = sum((a - mean) ** 2 for a in v) / len(v)
    inv = 1.0 / math.sqrt(var + 1e-8)
    return [(a - mean) * inv for a in v]


def clip(v, limit):
    return [min(max(a, -limit), limit) for a in v] if limit > 0 else v


def reference(s, data, ins, x, invokes=1):
    """s's output for the flat input x (the model's layout) on the last of
    `invokes` invokes with that input, from zero state: the state carries
    over from one invoke to the next, as in TFLite.  data maps a tensor
    index to its constant's values."""
    h = [[0.0] * s.n_out for _ in range(s.batch)]
    c = [[0.0] * s.n_cell for _ in range(s.batch)]
    for _ in range(invokes):
        y = invoke(s, data, ins, x, h, c)
    return y


def invoke(s, data, ins, x, h, c):
    """One invoke: returns the output and leaves the new state in h and c."""
    act = ACTIVATIONS[s.act]
    y = [0.0] * (s.batch * s.time * s.n_out)

    def gate(g, xt, hb, cell):
        k = GATES.index(g)
        z = [a + b for a, b in zip(matvec(data[ins[1 + k]], s.n_cell, s.n_in, xt),
                                   matvec(data[ins[5 + k]], s.n_cell, s.n_out, hb))]
        if s.peephole and g != "c":
            z = [a + p * cc for a, p, cc in zip(z, data[ins[9 + "ifo".index(g)]], cell)]
        if s.layer_norm:
            z = [a * w for a, w in zip(normalise(z), data[ins[20 + k]])]
        return [a + b for a, b in zip(z, data[ins[12 + k]])]

    for t in range(s.time):
        for b in range(s.batch):
            row = t * s.batch + b if s.time_major else b * s.time + t
            xt = x[row * s.n_in:(row + 1) * s.n_in]
            f = [sigmoid(v) for v in gate("f", xt, h[b], c[b])]
            i = [1.0 - v for v in f] if s.cifg else [sigmoid(v) for v in gate("i", xt, h[b], c[b])]
            g = [act(v) for v in gate("c", xt, h[b], c[b])]
            cn = clip([ff * cc + ii * gg for ff, cc, ii, gg in zip(f, c[b], i, g)], s.cell_clip)
            o = [sigmoid(v) for v in gate("o", xt, h[b], cn)]
            out = [oo * act(cc) for oo, cc in zip(o, cn)]
            if s.projection:
                out = matvec(data[ins[16]], s.n_out, s.n_cell, out)
                out = clip([a + pb for a, pb in zip(out, data[ins[17]])], s.proj_clip)
            h[b], c[b] = out, cn
            y[row * s.n_out:(row + 1) * s.n_out] = out
    return y


def read_f32(path):
    raw = open(path, "rb").read()
    return list(struct.unpack("<%df" % (len(raw) // 4), raw))


def check_expected(s, data, ins, prefix):
    """Fails unless TFLite's output in prefix_out_0.bin is what the Python
    LSTM computes from prefix_in_0.bin (float32 vs double: 1e-5 + 1e-4 rel)."""
    want = reference(s, data, ins, read_f32(prefix + "_in_0.bin"))
    got = read_f32(prefix + "_out_0.bin")
    if len(got) != len(want):
        raise SystemExit("%s: TFLite gave %d values, expected %d" % (s.name, len(got), len(want)))
    worst = max(abs(a - b) for a, b in zip(got, want))
    if any(abs(a - b) > 1e-5 + 1e-4 * abs(b) for a, b in zip(got, want)):
        raise SystemExit("%s: TFLite's output disagrees with the Python LSTM (max |d| %.3g)"
                         % (s.name, worst))
    return worst
