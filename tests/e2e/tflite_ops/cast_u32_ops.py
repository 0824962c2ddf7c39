"""CAST to and from UINT32 for gen_ops.py.

libtinyml has no uint32 dtype, so these models keep UINT32 inside: an
int32, float32 or int8 input is CAST to UINT32 and from there to the
model's outputs (FLOAT32, INT32, INT16, INT8, through INT64 or BOOL).
Inputs are chosen here to cross the sign bit and float32's rounding
(ties at 2^31 + 128, 2^32 - 1 -> 4294967296.0), the float's rounding
also seen exactly through int64 and int32; the expected outputs are
desktop TFLite's (tflite_run.js --in), checked against C++ static_cast
semantics written out below (uint32 -> int64 zero-extends)."""
import os
import random
import struct
import subprocess

from tflm_fixed import f32

CODES = {"CAST": 53}

WIDTH = {"INT8": 8, "INT16": 16, "INT32": 32, "INT64": 64}
PACK = {"INT8": "b", "INT32": "i", "FLOAT32": "f"}


def static_cast(v, src, dst):
    """C++ static_cast<dst>(v) for the pairs used here (floats in range)."""
    if dst == "BOOL":
        return v != 0
    if dst == "FLOAT32":
        return f32(float(int(v)) if src != "FLOAT32" else v)  # ints up to 2^32: exact in double
    v = int(v)  # bool -> 0/1; float -> truncated toward zero
    if dst == "UINT32":
        return v % (1 << 32)
    bits = WIDTH[dst]
    v %= 1 << bits
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


def _int32_values(rng):
    edges = [0, 1, -1, -2, 2147483647, -2147483648, 16777217, -16777217,
             -2147483520, -2147483264, -2147483392, -129, 255, 65535, -32769]
    return edges + [rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(48 - len(edges))]


def _float_values(rng):
    edges = [0.0, 0.5, 1.9, 255.75, 65535.99, 16777216.0, 2147483520.0, 2147483648.0,
             2147483904.0, 3e9, 4294967040.0, 123456.7]
    return [f32(v) for v in edges + [rng.uniform(0, 4294967040.0)
                                     for _ in range(48 - len(edges))]]


# name, input type, input values, output chains (the types after UINT32)
CASES = [
    ("cast_uint32_from_int32", "INT32", _int32_values(random.Random(371)),
     [["FLOAT32"], ["INT32"], ["INT16", "INT32"], ["INT8"], ["INT64", "FLOAT32"],
      ["INT64", "INT32"], ["BOOL", "INT32"], ["FLOAT32", "INT64", "INT32"]]),
    ("cast_uint32_from_float", "FLOAT32", _float_values(random.Random(372)),
     [["INT32"], ["FLOAT32"], ["INT64", "FLOAT32"]]),
    ("cast_uint32_from_int8", "INT8", list(range(-128, 128)),
     [["INT32"], ["FLOAT32"], ["INT64", "FLOAT32"]]),
    ("cast_uint32_from_bool", "INT32", _int32_values(random.Random(373)),
     [["INT32"], ["FLOAT32"]]),
]


def build(Model, case, seed):
    name, ttype, values, chains = case
    m = Model(name, seed)
    x = m.tensor([len(values)], ttype, name="x")
    src = x
    if name.endswith("_bool"):  # int32 -> BOOL -> UINT32
        src = m.tensor([len(values)], "BOOL", name="b")
        m.op("CAST", [x], [src])
    u = m.tensor([len(values)], "UINT32", name="u")
    m.op("CAST", [src], [u])
    outs = []
    for k, chain in enumerate(chains):
        t = u
        for j, ttype_out in enumerate(chain):
            y = m.tensor([len(values)], ttype_out, name="y%d_%d" % (k, j))
            m.op("CAST", [t], [y])
            t = y
        outs.append(t)
    m.inputs, m.outputs = [x], outs
    return m


def reference(case):
    name, ttype, values, chains = case
    src, vals = ttype, values
    if name.endswith("_bool"):
        src, vals = "BOOL", [static_cast(v, ttype, "BOOL") for v in values]
    u = [static_cast(v, src, "UINT32") for v in vals]
    outs = []
    for chain in chains:
        cur, t = u, "UINT32"
        for nxt in chain:
            cur, t = [static_cast(v, t, nxt) for v in cur], nxt
        outs.append(cur)
    return outs


def entries(Model, write_model, io_entry, expected, flatc, schema, outdir, refresh):
    out = []
    for seed, case in enumerate(CASES, 371):
        m = build(Model, case, seed)
        model = write_model(m, flatc, schema, outdir)
        prefix = os.path.join(expected, m.name)
        fmt = PACK[case[1]]
        if refresh:
            inp = os.path.join(outdir, m.name + "_given_in_0.bin")
            with open(inp, "wb") as f:
                f.write(struct.pack("<%d%s" % (len(case[2]), fmt), *case[2]))
            ref = os.path.join(os.path.dirname(schema), "..", "..", "tools", "reference",
                               "tflite_run.js")
            subprocess.run(["node", ref, model, "--in", inp, "--out", prefix], check=True,
                           stdout=subprocess.DEVNULL)
        check(m, case, prefix)
        out.append({"model": model, "format": "tflite", "cases": [{
            "label": "given", "exact": True,
            "inputs": [io_entry(m, m.inputs[0], "input", 0, prefix + "_in_0.bin")],
            "outputs": [io_entry(m, t, "output", i, "%s_out_%d.bin" % (prefix, i))
                        for i, t in enumerate(m.outputs)]}]})
    return out


def check(m, case, prefix):
    """TFLite's outputs must be static_cast's, bit for bit."""
    for i, (t, want) in enumerate(zip(m.outputs, reference(case))):
        fmt = {"FLOAT32": "f", "INT32": "i", "INT8": "b"}[m.tensors[t]["type"]]
        raw = open("%s_out_%d.bin" % (prefix, i), "rb").read()
        got = list(struct.unpack("<%d%s" % (len(raw) // struct.calcsize(fmt), fmt), raw))
        if got != want:
            k = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), -1)
            raise SystemExit("%s output %d: TFLite disagrees with static_cast (first at %d: "
                             "%r vs %r)" % (m.name, i, k, got[k] if k >= 0 else None,
                                            want[k] if k >= 0 else None))


def error_models(Model):
    m = Model("err_uint32_input", 378)
    x = m.tensor([4], "UINT32", name="x")
    y = m.tensor([4], "INT32", name="y")
    m.op("CAST", [x], [y])
    m.inputs, m.outputs = [x], [y]
    out = [(m, "input 'x' is UINT32, which only CASTs inside the model may use")]
    m = Model("err_add_uint32", 379)
    x = m.tensor([4], "INT32", name="x")
    u = m.tensor([4], "UINT32", name="u")
    s = m.tensor([4], "UINT32", name="s")
    y = m.tensor([4], "INT32", name="y")
    m.op("CAST", [x], [u])
    m.op("ADD", [u, u], [s])
    m.op("CAST", [s], [y])
    m.inputs, m.outputs = [x], [y]
    out.append((m, "operator 1 (ADD): unsupported types UINT32, UINT32 -> UINT32"))
    return out
