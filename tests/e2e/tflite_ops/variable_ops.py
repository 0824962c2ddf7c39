"""Resource-variable models for gen_ops.py: VAR_HANDLE, READ_VARIABLE,
ASSIGN_VARIABLE and the CALL_ONCE initialiser subgraph, as TensorFlow's
converter writes tf.Variable, and plain-Python references for them.

The value a variable holds carries over from one invoke to the next, so
each model has cases after 1 and 3 invokes on one input.  TFLite's tool
runs one invoke: the first case's expected outputs are TFLite's, and the
Python reference must agree with them (check_expected); the later ones
are the reference's.  The reference shares nothing with the importer.
"""
import os
import struct
import subprocess

from tflm_fixed import wrap32

HERE = os.path.dirname(os.path.abspath(__file__))

CODES = {"CALL_ONCE": 129, "VAR_HANDLE": 142, "READ_VARIABLE": 143, "ASSIGN_VARIABLE": 144,
         "SLICE": 65}
OPTIONS = {"CALL_ONCE": "CallOnceOptions", "VAR_HANDLE": "VarHandleOptions",
           "READ_VARIABLE": "ReadVariableOptions", "ASSIGN_VARIABLE": "AssignVariableOptions"}
PACK = {"FLOAT32": "f", "INT8": "b", "INT16": "h", "INT32": "i"}


def with_subgraphs(Model):
    """gen_ops' Model, able to hold more subgraphs after the model's own."""
    class VarModel(Model):
        def __init__(self, name, seed):
            super().__init__(name, seed)
            self.extra = []

        def subgraph(self, build):
            """Adds a subgraph written by build(self) (sharing buffers and
            operator codes); returns its index."""
            saved = (self.tensors, self.ops, self.inputs, self.outputs, self.data)
            self.tensors, self.ops, self.inputs, self.outputs, self.data = [], [], [], [], {}
            build(self)
            self.extra.append({"tensors": self.tensors, "inputs": self.inputs,
                               "outputs": self.outputs, "operators": self.ops,
                               "name": "init%d" % len(self.extra)})
            self.tensors, self.ops, self.inputs, self.outputs, self.data = saved
            return len(self.extra)

        def json(self):
            j = super().json()
            j["subgraphs"] += self.extra
            return j
    return VarModel


def handle(m, name):
    h = m.tensor([], "RESOURCE", name=name + "_handle")
    m.op("VAR_HANDLE", [], [h], container="", shared_name=name)
    return h


def read(m, h, shape, ttype="FLOAT32", q=None, name=None):
    r = m.tensor(shape, ttype, q, name=name)
    m.op("READ_VARIABLE", [h], [r])
    return r


def initialiser(m, values):
    """A CALL_ONCE of a subgraph assigning each (name, shape, type, q, data)."""
    def build(s):
        for name, shape, ttype, q, data in values:
            h = handle(s, name)
            s.op("ASSIGN_VARIABLE", [h, s.tensor(shape, ttype, q, data)], [])
    m.op("CALL_ONCE", [], [], init_subgraph_index=m.subgraph(build))


# ---- the models and their references --------------------------------------

ACC0 = [0.25, -1.5, 2.0, 0.5, -0.75, 1.0]
GAIN = [0.5, 2.0, -1.0, 0.25, 1.5, -0.5]


def accumulate(m):
    """acc += x; y = acc * gain: a float running sum, and a variable the
    model only reads (gain, set by the initialiser alone)."""
    initialiser(m, [("acc", [1, 6], "FLOAT32", None, ACC0),
                    ("gain", [6], "FLOAT32", None, GAIN)])
    x = m.tensor([1, 6], name="x")
    h = handle(m, "acc")
    acc = read(m, h, [1, 6])
    s = m.tensor([1, 6], name="sum")
    m.op("ADD", [acc, x], [s], fused_activation_function="NONE")
    m.op("ASSIGN_VARIABLE", [h, s], [])
    g = read(m, handle(m, "gain"), [6])
    y = m.tensor([1, 6], name="y")
    m.op("MUL", [s, g], [y], fused_activation_function="NONE")
    m.inputs, m.outputs = [x], [y]


def accumulate_ref(x, invokes):
    acc = [f32(a) for a in ACC0]
    for _ in range(invokes):
        acc = [f32(a + b) for a, b in zip(acc, x)]
    return [[f32(a * g) for a, g in zip(acc, GAIN)]]


def stream(ttype, q):
    """A streaming buffer of 4 frames of 3 values: drop the oldest, append
    the input, output the whole buffer (pure data movement)."""
    def build(m):
        init = list(range(-6, 6))
        initialiser(m, [("frames", [1, 4, 3], ttype, q, init)])
        x = m.tensor([1, 1, 3], ttype, q, name="x")
        h = handle(m, "frames")
        old = read(m, h, [1, 4, 3], ttype, q)
        kept = m.tensor([1, 3, 3], ttype, q)
        m.op("SLICE", [old, m.ints([0, 1, 0]), m.ints([1, 3, 3])], [kept])
        y = m.tensor([1, 4, 3], ttype, q, name="y")
        m.op("CONCATENATION", [kept, x], [y], axis=1, fused_activation_function="NONE")
        m.op("ASSIGN_VARIABLE", [h, y], [])
        m.inputs, m.outputs = [x], [y]
    return build


def stream_ref(x, invokes):
    buf = list(range(-6, 6))
    for _ in range(invokes):
        buf = buf[3:] + list(x)
    return [buf]


def counter(m):
    """Reads before and after assigning, two assigns (the last wins), and a
    second handle naming the same variable: int32."""
    initialiser(m, [("count", [4], "INT32", None, [100, -7, 0, 3])])
    x = m.tensor([4], "INT32", name="x")
    h = handle(m, "count")
    before = read(m, h, [4], "INT32", name="before")
    a = m.tensor([4], "INT32")
    m.op("ADD", [before, x], [a], fused_activation_function="NONE")
    m.op("ASSIGN_VARIABLE", [h, a], [])
    h2 = handle(m, "count")
    between = read(m, h2, [4], "INT32", name="between")
    b = m.tensor([4], "INT32", name="after")
    m.op("ADD", [between, x], [b], fused_activation_function="NONE")
    m.op("ASSIGN_VARIABLE", [h2, b], [])
    m.inputs, m.outputs = [x], [before, between, b]


def counter_ref(x, invokes):
    c = [100, -7, 0, 3]
    for _ in range(invokes):
        before = c
        between = [wrap32(p + q) for p, q in zip(before, x)]
        c = [wrap32(p + q) for p, q in zip(between, x)]
    return [before, between, c]


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


# name, builder, reference, output type
CASES = [
    ("var_accumulate_f32", accumulate, accumulate_ref, "FLOAT32"),
    ("var_stream_int8", stream("INT8", ([0.05], [-3])), stream_ref, "INT8"),
    ("var_stream_int16", stream("INT16", ([0.001], [0])), stream_ref, "INT16"),
    ("var_stream_f32", stream("FLOAT32", None), stream_ref, "FLOAT32"),
    ("var_counter_i32", counter, counter_ref, "INT32"),
]


def models(Model):
    """[(model, reference, output type)] for gen_ops' manifest."""
    VarModel = with_subgraphs(Model)
    out = []
    for name, build, ref, ttype in CASES:
        m = VarModel(name, 90)
        build(m)
        out.append((m, ref, ttype))
    return out


def read_values(path, ttype):
    raw = open(path, "rb").read()
    n = len(raw) // struct.calcsize(PACK[ttype])
    return list(struct.unpack("<%d%s" % (n, PACK[ttype]), raw))


def write_values(path, values, ttype):
    with open(path, "wb") as f:
        f.write(struct.pack("<%d%s" % (len(values), PACK[ttype]), *values))


def check_expected(name, ref, ttype, prefix, inputs=None, invokes=1):
    """Fails unless TFLite's outputs (prefix_out_<i>.bin, after `invokes`
    on prefix_in_0.bin or `inputs`) are the reference's."""
    want = ref(read_values(inputs or prefix + "_in_0.bin", ttype), invokes)
    for i, w in enumerate(want):
        got = read_values(prefix + "_out_%d.bin" % i, ttype)
        if len(got) != len(w) or any(abs(a - b) > 1e-6 * (1 + abs(b)) for a, b in zip(got, w)):
            raise SystemExit("%s: TFLite's output %d after %d invokes %s disagrees with the "
                             "reference %s" % (name, i, invokes, got, w))


def error_models(Model, q8):
    VarModel = with_subgraphs(Model)
    out = []
    m = VarModel("err_var_init_not_constant", 91)

    def computed(s):
        h = handle(s, "v")
        c = s.tensor([2])
        s.op("ADD", [s.tensor([2], data=[1.0, 2.0]), s.tensor([2], data=[3.0, 4.0])], [c],
             fused_activation_function="NONE")
        s.op("ASSIGN_VARIABLE", [h, c], [])
    m.op("CALL_ONCE", [], [], init_subgraph_index=m.subgraph(computed))
    x = m.tensor([2], name="x")
    y = m.tensor([2], name="y")
    m.op("ADD", [read(m, handle(m, "v"), [2]), x], [y], fused_activation_function="NONE")
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (CALL_ONCE): subgraph 1 operator 1 (ADD) cannot be folded at "
                   "compile time"))
    m = VarModel("err_var_bad_subgraph", 92)
    m.op("CALL_ONCE", [], [], init_subgraph_index=7)
    x = m.tensor([2], name="x")
    y = m.tensor([2], name="y")
    h = handle(m, "v")
    m.op("ASSIGN_VARIABLE", [h, x], [])
    m.op("ADD", [read(m, h, [2]), x], [y], fused_activation_function="NONE")
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 0 (CALL_ONCE): init_subgraph_index 7 is not another subgraph "
                   "(the model has 1)"))
    m = VarModel("err_var_never_assigned", 93)
    x = m.tensor([2], name="x")
    y = m.tensor([2], name="y")
    m.op("ADD", [read(m, handle(m, "ghost"), [2]), x], [y], fused_activation_function="NONE")
    m.inputs, m.outputs = [x], [y]
    out.append((m, "variable 'ghost' is read but never assigned"))
    m = VarModel("err_var_uint8", 94)
    initialiser(m, [("u", [2], "UINT8", q8(0.1, 128), [1, 2])])
    x = m.tensor([2], "UINT8", q8(0.1, 128), name="x")
    y = m.tensor([2], "UINT8", q8(0.1, 128), name="y")
    m.op("ADD", [read(m, handle(m, "u"), [2], "UINT8", q8(0.1, 128)), x], [y],
         fused_activation_function="NONE")
    m.inputs, m.outputs = [x], [y]
    out.append((m, "variable 'u' holds UINT8 values"))
    m = VarModel("err_var_handle_misused", 95)
    initialiser(m, [("v", [2], "FLOAT32", None, [1.0, 2.0])])
    x = m.tensor([2], name="x")
    y = m.tensor([2], name="y")
    m.op("ADD", [handle(m, "v"), x], [y], fused_activation_function="NONE")
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 2 (ADD): input 0 is a variable handle"))
    return out



def entries(Model, write_case, expected, refresh, invokes=(2, 3)):
    """Manifest entries: write_case(m) gives TFLite's first invoke; with
    `refresh`, tflite_invokes.js reruns TFLite for the later ones into
    `expected`.  The reference must match TFLite after every invoke."""
    out = []
    for m, ref, ttype in models(Model):
        entry = write_case(m)
        first = entry["cases"][0]
        prefix = os.path.join(expected, m.name)
        check_expected(m.name, ref, ttype, prefix)
        for n in invokes:
            later = "%s_invoke%d" % (prefix, n)
            if refresh:
                subprocess.run(["node", os.path.join(HERE, "tflite_invokes.js"), entry["model"],
                                "--in", prefix + "_in_0.bin", "--invokes", str(n),
                                "--out", later], check=True)
            check_expected(m.name, ref, ttype, later, prefix + "_in_0.bin", n)
            outs = [dict(o, file="%s_out_%d.bin" % (later, i))
                    for i, o in enumerate(first["outputs"])]
            entry["cases"].append({"label": "seed1-invoke%d" % n, "invokes": n,
                                   "inputs": first["inputs"], "outputs": outs})
        out.append(entry)
    return out


def main(argv):
    """variable_ops.py FLATC SCHEMA OUT.tflite [NAME]: writes one model of
    this module or control_ops alone (default var_counter_i32), for the C
    tests (tests/api/test_state_api.c, tests/importers' allocation test)."""
    import control_ops
    import gen_ops
    flatc, schema, out = argv[1:4]
    name = argv[4] if len(argv) > 4 else "var_counter_i32"
    found = [m for m, _, _ in models(gen_ops.Model)] + control_ops.models(gen_ops.Model)
    m = next(m for m in found if m.name == name)
    written = gen_ops.write_model(m, flatc, schema, os.path.dirname(os.path.abspath(out)))
    if os.path.abspath(written) != os.path.abspath(out):
        os.replace(written, out)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv))
