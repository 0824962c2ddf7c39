"""int16 PRELU (TFLM's BroadcastPrelu4DSlow with an int8 alpha) for gen_ops.py.

Desktop TFLite has no int16 PRELU, so the input is made here and the
expected output is TFLM's, from q8_unary_ops.prelu_reference (a port of
the reference kernel).  Alpha is per channel (last axis, broadcast) with
a negative value and values below and above 1; the inputs span the whole
int16 range so that both branches saturate; the second case has non-zero
zero points, which TFLM's int16 PRELU accepts."""
import random

from q8_unary_ops import prelu_reference

CODES = {"PRELU": 54}

SHAPE = [2, 5, 11, 3]

# name, input (scale, zp), alpha (scale, zp), int8 alpha, output (scale, zp)
CASES = [
    ("prelu_int16", (0.001, 0), (0.01, -3), [12, -40, 120], (0.0008, 0)),
    ("prelu_int16_zero_points", (0.0005, 37), (0.02, 5), [-128, 30, 127], (0.002, -11)),
]


def build(Model, q8, case, seed):
    name, qin, qa, alpha, qout = case
    m = Model(name, seed)
    x = m.tensor(SHAPE, "INT16", q8(*qin), name="x")
    a = m.tensor([1, 1, 3], "INT8", q8(*qa), data=alpha)
    y = m.tensor(SHAPE, "INT16", q8(*qout), name="y")
    m.op("PRELU", [x, a], [y])
    m.inputs, m.outputs = [x], [y]
    return m


def inputs(seed):
    rng = random.Random(seed)
    n = 1
    for d in SHAPE:
        n *= d
    edges = [-32768, -32767, -1, 0, 1, 32766, 32767]
    return edges + [rng.randint(-32768, 32767) for _ in range(n - len(edges))]


def reference(case, values):
    name, qin, qa, alpha, qout = case
    return prelu_reference((name, "INT16", qin, qa, alpha, qout), values)


def entries(Model, q8, write_model, write_values, io_entry, flatc, schema, outdir):
    """Manifest entries: input and expected output both from here, exact."""
    out = []
    for seed, case in enumerate(CASES, 361):
        m = build(Model, q8, case, seed)
        model = write_model(m, flatc, schema, outdir)
        x = inputs(seed)
        prefix = outdir + "/" + m.name
        write_values(prefix + "_in_0.bin", x, "h")
        write_values(prefix + "_out_0.bin", reference(case, x), "h")
        out.append({"model": model, "format": "tflite", "cases": [{
            "label": "seed1", "exact": True,
            "inputs": [io_entry(m, m.inputs[0], "input", 0, prefix + "_in_0.bin")],
            "outputs": [io_entry(m, m.outputs[0], "output", 0, prefix + "_out_0.bin")]}]})
    return out
