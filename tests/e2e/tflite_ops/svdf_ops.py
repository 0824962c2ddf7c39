"""SVDF test models for gen_ops.py, and TFLite Micro's integer SVDF in plain
Python, which gives their expected outputs.

TFLite's own tool runs desktop TFLite, whose integer SVDF is not TFLM's
(TFLM also takes int8 state), so the expected outputs come from this port
of TFLM's svdf_common.cc (PrepareSvdf, EvalIntegerSvdfReference) and of the
fixed-point helpers in kernels/internal/common.cc.  It shares nothing with
the importer's lowering.

The new state column adds the state's zero point before the clamp
(upstream's fixed order, tflite-micro PR 3627); the int8 cases are built so
that the older order, clamp then add and wrap, gives different outputs.
"""
import math
import random

from tflm_fixed import INT32_MAX, INT32_MIN, clamp, f32, mbqm, quantize_multiplier, rdbpot, srdhm


class Spec:
    def __init__(self, name, state="INT16", batch=1, n_in=5, units=3, rank=2, memory=4,
                 state_zp=0, seed=61):
        self.name, self.state, self.batch, self.n_in = name, state, batch, n_in
        self.units, self.rank, self.memory, self.state_zp = units, rank, memory, state_zp
        self.filters = units * rank
        self.seed = seed


# Odd sizes: input 5, 3 units of rank 2 (6 filters), memory 4.
CASES = [
    Spec("svdf_int16_state_b1"),
    Spec("svdf_int16_state_b2", batch=2, seed=62),
    Spec("svdf_int8_state_b1", state="INT8", state_zp=-7, seed=63),
    Spec("svdf_int8_state_b2", state="INT8", batch=2, state_zp=9, seed=64),
]

# Scales (float32 values) chosen so that outputs spread over the int8
# range and the int8 state clamps now and then.
X_Q = (0.05, -3)
WF_SCALE = 0.011
STATE_SCALE = {"INT16": 0.0004, "INT8": 0.021}
WT_SCALE = {"INT16": 0.00007, "INT8": 0.009}
OUT_Q = (0.03, 4)


def build(m, s):
    """Writes s's SVDF into gen_ops Model m; returns the operator's inputs."""
    wt_type = s.state
    x = m.tensor([s.batch, s.n_in], "INT8", ([X_Q[0]], [X_Q[1]]), name="x")
    wf = m.tensor([s.filters, s.n_in], "INT8", ([WF_SCALE], [0]),
                  [m.rng.randint(-127, 127) for _ in range(s.filters * s.n_in)])
    lim = 3000 if wt_type == "INT16" else 127  # int16: keep the i32 sums in range
    wt = m.tensor([s.filters, s.memory], wt_type, ([WT_SCALE[wt_type]], [0]),
                  [m.rng.randint(-lim, lim) for _ in range(s.filters * s.memory)])
    bias_scale = f32(f32(STATE_SCALE[s.state]) * f32(WT_SCALE[wt_type]))
    b = m.tensor([s.units], "INT32", ([bias_scale], [0]),
                 [m.rng.randint(-3000, 3000) for _ in range(s.units)])
    st = m.tensor([s.batch, s.filters * s.memory], s.state,
                  ([STATE_SCALE[s.state]], [s.state_zp]), name="state", variable=True)
    y = m.tensor([s.batch, s.units], "INT8", ([OUT_Q[0]], [OUT_Q[1]]), name="y")
    m.op("SVDF", [x, wf, wt, b, st], [y], rank=s.rank, fused_activation_function="RELU")
    m.inputs, m.outputs = [x], [y]
    return [x, wf, wt, b, st]


def inputs(s, seed=1):
    """A deterministic int8 input for s."""
    rng = random.Random(seed * 1000 + s.seed)
    return [rng.randint(-128, 127) for _ in range(s.batch * s.n_in)]


# ---- TFLM's arithmetic ---------------------------------------------------------

def reference(s, data, ins, x, invokes=1, zp_first=True):
    """The output of the last of `invokes` invokes on input x, from the
    reset state (every element the state's zero point for int8, else 0)."""
    xt, wf, wt, b, st = ins
    in_s, wf_s = f32(X_Q[0]), f32(WF_SCALE)
    st_s, wt_s = f32(STATE_SCALE[s.state]), f32(WT_SCALE[s.state])
    m1 = quantize_multiplier(f32(f32(in_s * wf_s) / st_s))  # float math, as Prepare
    m2 = quantize_multiplier(f32(f32(st_s * wt_s) / f32(OUT_Q[0])))
    lo, hi = (-32768, 32767) if s.state == "INT16" else (-128, 127)
    bits = 16 if s.state == "INT16" else 8
    state = [s.state_zp if s.state == "INT8" else 0] * (s.batch * s.filters * s.memory)
    for _ in range(invokes):
        state[:-1] = state[1:]  # the whole buffer moves left by one
        for bt in range(s.batch):
            for f in range(s.filters):
                acc = sum(data[wf][f * s.n_in + c] * (x[bt * s.n_in + c] - X_Q[1])
                          for c in range(s.n_in))
                acc = mbqm(acc, *m1)
                if zp_first:
                    v = clamp(acc + s.state_zp, lo, hi)
                else:  # the older kernel: clamp, add, wrap in the narrowing store
                    v = clamp(acc, lo, hi) + s.state_zp
                    v = ((v - lo) % (1 << bits)) + lo
                state[(bt * s.filters + f) * s.memory + s.memory - 1] = v
        y = []
        for bt in range(s.batch):
            scratch = [sum(data[wt][f * s.memory + j] *
                           (state[(bt * s.filters + f) * s.memory + j] - s.state_zp)
                           for j in range(s.memory)) for f in range(s.filters)]
            for u in range(s.units):
                acc = data[b][u] + sum(scratch[u * s.rank + r] for r in range(s.rank))
                y.append(clamp(mbqm(acc, *m2) + OUT_Q[1], -128, 127))
    return y


# ---- float SVDF --------------------------------------------------------------
# Expected outputs: TFLite's (desktop and TFLM run the same float steps),
# its first invoke from tflite_run.js, later ones from tflite_invokes.js;
# float_reference() below checks both.

FLOAT_CASES = [  # name, batch, inputs, units, rank, memory, activation, bias, seed
    ("svdf_float_b1_relu", 1, 5, 3, 2, 4, "RELU", True, 71),
    ("svdf_float_b2_tanh_nobias", 2, 4, 2, 1, 3, "TANH", False, 72),
    ("svdf_float_b1_rank3_none", 1, 7, 2, 3, 1, "NONE", True, 73),
]
ACTIVATIONS = {"NONE": lambda v: v, "RELU": lambda v: max(v, 0.0), "TANH": math.tanh}


def float_model(Model, case):
    name, batch, n_in, units, rank, memory, act, bias, seed = case
    m = Model(name, seed)
    filters = units * rank
    rnd = lambda n, a: [round(m.rng.uniform(-a, a), 4) for _ in range(n)]
    x = m.tensor([batch, n_in], name="x")
    wf = m.tensor([filters, n_in], data=rnd(filters * n_in, 1.0))
    wt = m.tensor([filters, memory], data=rnd(filters * memory, 0.8))
    b = m.tensor([units], data=rnd(units, 0.5)) if bias else -1
    st = m.tensor([batch, filters * memory], name="state", variable=True)
    y = m.tensor([batch, units], name="y")
    m.op("SVDF", [x, wf, wt, b, st], [y], rank=rank, fused_activation_function=act)
    m.inputs, m.outputs = [x], [y]
    m.svdf = (batch, n_in, units, rank, memory, act, [x, wf, wt, b, st])
    return m


def float_models(Model):
    return [float_model(Model, case) for case in FLOAT_CASES]


def float_reference(m, x, invokes):
    """EvalFloatSvdfReference in double, from a zero state."""
    batch, n_in, units, rank, memory, act, (_, wf, wt, b, _) = m.svdf
    filters = units * rank
    state = [0.0] * (batch * filters * memory)
    for _ in range(invokes):
        state[:-1] = state[1:]
        for bt in range(batch):
            for f in range(filters):
                state[(bt * filters + f) * memory + memory - 1] = sum(
                    m.data[wf][f * n_in + i] * x[bt * n_in + i] for i in range(n_in))
        y = []
        for bt in range(batch):
            per = [sum(m.data[wt][f * memory + j] * state[(bt * filters + f) * memory + j]
                       for j in range(memory)) for f in range(filters)]
            for u in range(units):
                v = (m.data[b][u] if b >= 0 else 0.0) + sum(per[u * rank + r]
                                                             for r in range(rank))
                y.append(ACTIVATIONS[act](v))
    return y
