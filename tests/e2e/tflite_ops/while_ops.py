"""WHILE models for gen_ops.py (through control_ops).

The importer unrolls a WHILE whose trip count it can compute from
constants: models() count, a counter from a constant 0, the condition
`i < N` (and, as TF's converter writes tf.while_loop, a second
`step < max_iterations` test), a data-carrying value updated per trip.
Expected outputs are TFLite's, which runs the loop (while.cc); the models
are marked exact, so the int32 counters must match to the unit.

A WHILE whose condition reads a model input or data stays a run-time loop
(tosa.while_loop): entries() runs each such model on several inputs
chosen to give 0, 1 and more trips (a bound n from an input, negative
too; a condition on SUM(x)), expected outputs again TFLite's.
"""
import os
import random
import struct
import subprocess

from variable_ops import with_subgraphs

CODES = {"WHILE": 119, "LESS": 58, "LOGICAL_AND": 86, "SUM": 74, "GREATER": 61,
         "LOCAL_RESPONSE_NORMALIZATION": 13}
OPTIONS = {"WHILE": "WhileOptions", "SUM": "ReducerOptions",
           "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions"}

SHAPE = [1, 4]


def scalar(s, value):
    return s.tensor([], "INT32", data=[value])


def step(s, i, name):
    """i + 1 (int32 scalar)."""
    j = s.tensor([], "INT32", name=name)
    s.op("ADD", [i, scalar(s, 1)], [j], fused_activation_function="NONE")
    return j


def less(s, a, b, name="go"):
    c = s.tensor([], "BOOL", name=name)
    s.op("LESS", [a, b], [c])
    return c


def halve_plus_one(s, x):
    """x * 0.5 + 1: converges, so many trips stay finite."""
    h, y = s.tensor(SHAPE), s.tensor(SHAPE, name="x_next")
    s.op("MUL", [x, s.tensor([1], data=[0.5])], [h], fused_activation_function="NONE")
    s.op("ADD", [h, s.tensor([1], data=[1.0])], [y], fused_activation_function="NONE")
    return y


def fc_f32(s, x):
    """A small FULLY_CONNECTED with RELU per trip."""
    y = s.tensor(SHAPE, name="x_next")
    s.op("FULLY_CONNECTED", [x, s.const([4, 4], lo=-0.6, hi=0.6), s.const([4], lo=-0.2, hi=0.3)],
         [y], fused_activation_function="RELU")
    return y


Q = ([0.05], [-3])


def fc_int8(s, x):
    """An int8 FULLY_CONNECTED per trip, back to the input's quantisation."""
    y = s.tensor(SHAPE, "INT8", Q, name="x_next")
    w = s.const([4, 4], "INT8", ([0.01], [0]))
    b = s.const([4], "INT32", ([0.0005], [0]), lo=-200, hi=200)
    s.op("FULLY_CONNECTED", [x, w, b], [y], fused_activation_function="NONE")
    return y


def counter_model(Model, name, trips, update=halve_plus_one, ttype="FLOAT32", q=None):
    """WHILE (i, x) with cond i < trips and body (i + 1, update(x))."""
    m = Model(name, 120 + trips)

    def cond(s):
        i, x = s.tensor([], "INT32", name="i"), s.tensor(SHAPE, ttype, q, name="x")
        s.inputs, s.outputs = [i, x], [less(s, i, scalar(s, trips))]

    def body(s):
        i, x = s.tensor([], "INT32", name="i"), s.tensor(SHAPE, ttype, q, name="x")
        s.inputs, s.outputs = [i, x], [step(s, i, "i_next"), update(s, x)]
    x = m.tensor(SHAPE, ttype, q, name="x")
    i_out, y = m.tensor([], "INT32", name="count"), m.tensor(SHAPE, ttype, q, name="y")
    m.op("WHILE", [scalar(m, 0), x], [i_out, y], cond_subgraph_index=m.subgraph(cond),
         body_subgraph_index=m.subgraph(body))
    m.inputs, m.outputs = [x], [y, i_out]
    m.exact = True
    return m


def two_counter_model(Model, name, n, max_iterations, update, ttype="FLOAT32", q=None):
    """TF's converted tf.while_loop: (step, max_iterations, i, x) with cond
    step < max_iterations && i < n; max_iterations passes through."""
    m = Model(name, 140 + n)

    def ins(s):
        return [s.tensor([], "INT32", name="step"), s.tensor([], "INT32", name="max"),
                s.tensor([], "INT32", name="i"), s.tensor(SHAPE, ttype, q, name="x")]

    def cond(s):
        st, mx, i, x = ins(s)
        both = s.tensor([], "BOOL", name="go")
        s.op("LOGICAL_AND", [less(s, st, mx, "a"), less(s, i, scalar(s, n), "b")], [both])
        s.inputs, s.outputs = [st, mx, i, x], [both]

    def body(s):
        st, mx, i, x = ins(s)
        s.inputs = [st, mx, i, x]
        s.outputs = [step(s, st, "step_next"), mx, step(s, i, "i_next"), update(s, x)]
    x = m.tensor(SHAPE, ttype, q, name="x")
    outs = [m.tensor([], "INT32", name=k) for k in ("step_out", "max_out", "i_out")]
    y = m.tensor(SHAPE, ttype, q, name="y")
    m.op("WHILE", [scalar(m, 0), scalar(m, max_iterations), scalar(m, 0), x], outs + [y],
         cond_subgraph_index=m.subgraph(cond), body_subgraph_index=m.subgraph(body))
    m.inputs, m.outputs = [x], [y, outs[0], outs[2]]
    m.exact = True
    return m


def countdown_model(Model, name, start):
    """A float counter counted down by SUB while GREATER than 0.5, the
    condition a LOGICAL_NOT of LESS_EQUAL: ceil(start - 0.5) trips."""
    m = Model(name, 160)

    def ins(s):
        return [s.tensor([], name="k"), s.tensor(SHAPE, name="x")]

    def cond(s):
        k, x = ins(s)
        le, go = s.tensor([], "BOOL"), s.tensor([], "BOOL", name="go")
        s.op("LESS_EQUAL", [k, s.tensor([], data=[0.5])], [le])
        s.op("LOGICAL_NOT", [le], [go])
        s.inputs, s.outputs = [k, x], [go]

    def body(s):
        k, x = ins(s)
        k2 = s.tensor([], name="k_next")
        s.op("SUB", [k, s.tensor([], data=[1.0])], [k2], fused_activation_function="NONE")
        s.inputs, s.outputs = [k, x], [k2, halve_plus_one(s, x)]
    x, k_out, y = m.tensor(SHAPE, name="x"), m.tensor([], name="k_out"), m.tensor(SHAPE, name="y")
    m.op("WHILE", [m.tensor([], data=[start]), x], [k_out, y],
         cond_subgraph_index=m.subgraph(cond), body_subgraph_index=m.subgraph(body))
    m.inputs, m.outputs = [x], [y, k_out]
    return m


def models(Model):
    return [counter_model(Model, "while_f32_0_trips", 0),
            counter_model(Model, "while_f32_1_trip", 1),
            counter_model(Model, "while_f32_5_trips", 5),
            two_counter_model(Model, "while_two_counters_fc_f32", 3, 7, fc_f32),
            two_counter_model(Model, "while_max_iterations_binds_f32", 6, 2, fc_f32),
            two_counter_model(Model, "while_two_counters_fc_int8", 4, 10, fc_int8, "INT8", Q),
            counter_model(Model, "while_int8_5_trips", 5, fc_int8, "INT8", Q),
            countdown_model(Model, "while_countdown_f32", 3.25)]


def lrn(s, x):
    """An operator the importer does not lower."""
    r, y, out = s.tensor([1, 1, 1, 4]), s.tensor([1, 1, 1, 4]), s.tensor(SHAPE, name="lrn")
    s.op("RESHAPE", [x, s.ints([1, 1, 1, 4])], [r])
    s.op("LOCAL_RESPONSE_NORMALIZATION", [r], [y], radius=1, bias=1.0, alpha=1.0, beta=0.5)
    s.op("RESHAPE", [y, s.ints(SHAPE)], [out])
    return out


def nested_while(s, x):
    """A WHILE of two trips of x * 0.5 + 1 inside a loop's body."""
    def cond(t):
        i, y = t.tensor([], "INT32", name="j"), t.tensor(SHAPE, name="y")
        t.inputs, t.outputs = [i, y], [less(t, i, scalar(t, 2))]

    def body(t):
        i, y = t.tensor([], "INT32", name="j"), t.tensor(SHAPE, name="y")
        t.inputs, t.outputs = [i, y], [step(t, i, "j_next"), halve_plus_one(t, y)]
    j, y = s.tensor([], "INT32"), s.tensor(SHAPE, name="inner")
    s.op("WHILE", [scalar(s, 0), x], [j, y], cond_subgraph_index=s.subgraph(cond),
         body_subgraph_index=s.subgraph(body))
    return y


def error_models(Model):
    out = []
    m = input_bound_model(Model, "err_while_loop_body_op", lrn)
    out.append((m, "operator 0 (WHILE): subgraph 2: operator 2 (LOCAL_RESPONSE_NORMALIZATION): "
                   "operator not supported"))
    m = input_bound_model(Model, "err_while_loop_nested", nested_while)
    out.append((m, "operator 0 (WHILE): subgraph 4 operator 1 (WHILE): a branch with state or "
                   "control flow cannot be inlined"))
    m = counter_model(Model, "err_while_over_cap", 5000)
    out.append((m, "operator 0 (WHILE): the loop runs more than 1024 trips"))
    m = counter_model(Model, "err_while_body_op", 2, lrn)
    out.append((m, "operator 0 (WHILE): subgraph 2: operator 2 (LOCAL_RESPONSE_NORMALIZATION): "
                   "operator not supported"))
    return out


# ---- run-time loops -----------------------------------------------------------------

def input_bound_model(Model, name, update=halve_plus_one, ttype="FLOAT32", q=None):
    """WHILE (i, n, x) with cond i < n, n a model input: (i + 1, n, update(x))."""
    m = Model(name, 170)

    def ins(s):
        return [s.tensor([], "INT32", name="i"), s.tensor([], "INT32", name="n"),
                s.tensor(SHAPE, ttype, q, name="x")]

    def cond(s):
        i, n, x = ins(s)
        s.inputs, s.outputs = [i, n, x], [less(s, i, n)]

    def body(s):
        i, n, x = ins(s)
        s.inputs, s.outputs = [i, n, x], [step(s, i, "i_next"), n, update(s, x)]
    x, n = m.tensor(SHAPE, ttype, q, name="x"), m.tensor([], "INT32", name="n")
    outs = [m.tensor([], "INT32", name="count"), m.tensor([], "INT32", name="n_out"),
            m.tensor(SHAPE, ttype, q, name="y")]
    m.op("WHILE", [scalar(m, 0), n, x], outs, cond_subgraph_index=m.subgraph(cond),
         body_subgraph_index=m.subgraph(body))
    m.inputs, m.outputs = [x, n], [outs[2], outs[0]]
    return m


def sum_below(s, x, limit):
    """SUM(x) < limit: a condition on data."""
    total, go = s.tensor([], name="total"), s.tensor([], "BOOL", name="go")
    s.op("SUM", [x, s.ints([0, 1])], [total], keep_dims=False)
    s.op("LESS", [total, s.tensor([], data=[limit])], [go])
    return go


def data_cond_model(Model, name, limit):
    """WHILE (i, x) with cond SUM(x) < limit and body (i + 1, x * 0.5 + 1):
    x tends to 2 everywhere, so a limit below 8 ends the loop."""
    m = Model(name, 171)

    def ins(s):
        return [s.tensor([], "INT32", name="i"), s.tensor(SHAPE, name="x")]

    def cond(s):
        i, x = ins(s)
        s.inputs, s.outputs = [i, x], [sum_below(s, x, limit)]

    def body(s):
        i, x = ins(s)
        s.inputs, s.outputs = [i, x], [step(s, i, "i_next"), halve_plus_one(s, x)]
    x, i_out, y = m.tensor(SHAPE, name="x"), m.tensor([], "INT32", name="count"), \
        m.tensor(SHAPE, name="y")
    m.op("WHILE", [scalar(m, 0), x], [i_out, y], cond_subgraph_index=m.subgraph(cond),
         body_subgraph_index=m.subgraph(body))
    m.inputs, m.outputs = [x], [y, i_out]
    return m


def x_values(seed, ttype):
    """The data input of one case, by seed: floats in [-1, 1), int8 any."""
    rng = random.Random(seed)
    if ttype == "INT8":
        return struct.pack("<4b", *[rng.randrange(-128, 128) for _ in range(4)])
    return struct.pack("<4f", *[rng.uniform(-1.0, 1.0) for _ in range(4)])


# (model, its x type, exact, cases: (label, x seed or explicit floats, n or None))
def loop_cases(Model):
    bound = [("n%d" % n, 1, n) for n in (0, 1, 3, 7)] + [("n-2", 2, -2)]
    return [
        (input_bound_model(Model, "while_input_bound_f32"), "FLOAT32", True, bound),
        (input_bound_model(Model, "while_input_bound_fc_f32", fc_f32), "FLOAT32", False,
         [("n0", 3, 0), ("n4", 3, 4)]),
        (input_bound_model(Model, "while_input_bound_int8", fc_int8, "INT8", Q), "INT8", True,
         [("n0", 4, 0), ("n2", 4, 2), ("n5", 5, 5)]),
        (data_cond_model(Model, "while_data_cond_f32", 7.0), "FLOAT32", True,
         [("seed1", 1, None), ("far", [-20.0] * 4, None), ("done", [2.0] * 4, None)]),
    ]


def case_inputs(xs, n, ttype):
    x = struct.pack("<4f", *xs) if isinstance(xs, list) else x_values(xs, ttype)
    return [x] if n is None else [x, struct.pack("<i", n)]


def loop_case(m, label, blobs, exact, io_entry, expected, outdir, ref, refresh):
    """One case: TFLite's outputs on the given inputs (tflite_run.js --in)."""
    prefix = os.path.join(expected, "%s_%s" % (m.name, label))
    if refresh:
        args = ["node", ref, os.path.join(outdir, m.name + ".tflite")]
        for k, blob in enumerate(blobs):
            path = os.path.join(outdir, "%s_%s_arg_%d.bin" % (m.name, label, k))
            with open(path, "wb") as f:
                f.write(blob)
            args += ["--in", path]
        subprocess.run(args + ["--out", prefix], check=True, stdout=subprocess.DEVNULL)
    case = {"label": label,
            "inputs": [io_entry(m, t, "input", i, prefix + "_in_%d.bin" % i)
                       for i, t in enumerate(m.inputs)],
            "outputs": [io_entry(m, t, "output", i, prefix + "_out_%d.bin" % i)
                        for i, t in enumerate(m.outputs)]}
    if exact:
        case["exact"] = True
    return case


def entries(Model, write_model, io_entry, expected, schema, outdir, refresh):
    ref = os.path.join(os.path.dirname(schema), "..", "..", "tools", "reference",
                       "tflite_run.js")
    out = []
    for m, ttype, exact, cases in loop_cases(with_subgraphs(Model)):
        model = write_model(m)
        out.append({"model": model, "format": "tflite",
                     "cases": [loop_case(m, label, case_inputs(xs, n, ttype), exact, io_entry,
                                         expected, outdir, ref, refresh)
                               for label, xs, n in cases]})
    return out
