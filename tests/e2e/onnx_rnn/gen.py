#!/usr/bin/env python3
"""Writes the small LSTM/GRU/RNN models of this folder and their expected
outputs, for the cases Debian's ONNX backend suite lacks (bidirectional,
reverse, layout 1, sequence_lens, peepholes, clip, input_forget,
linear_before_reset, non-default activations).

The weights are seeded constants; the inputs are written here and the
expected outputs are onnxruntime's (node ../../../../shared/tools/reference/ort_run.js),
so nothing here depends on libtinyml.  Needs python3-onnx and numpy.

Usage: gen.py SHARED_DIR   (rewrites models/, data/ and manifest.json)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20251205)


def const(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def rand(*shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def arrays(op, dirs, hidden, steps, batch, inp, extras, lens=None, lens_runtime=False):
    """The operands in time-major form (layout 0)."""
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    a = {"W": rand(dirs, gates * hidden, inp), "R": rand(dirs, gates * hidden, hidden)}
    if "B" in extras:
        a["B"] = rand(dirs, 2 * gates * hidden)
    for k in ("initial_h", "initial_c"):
        if k in extras:
            a[k] = rand(dirs, batch, hidden)
    if "P" in extras:
        a["P"] = rand(dirs, 3 * hidden)
    if lens is not None:
        a["sequence_lens"] = np.array(lens, dtype=np.int32)
    a["X"] = rand(steps, batch, inp, scale=1.0)
    return a


def build(path, name, op, opset, a, attrs, layout, lens_runtime, outputs, states_runtime=False):
    """Writes the model; with layout 1, X and the states are batch-first."""
    swap = (lambda v: np.swapaxes(v, 0, 1)) if layout else (lambda v: v)
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    names = [k if k in a else "" for k in order][:{"LSTM": 8, "GRU": 6, "RNN": 6}[op]]
    while names[-1] == "":
        names.pop()
    inits = []
    for k in names:
        if k in ("", "X") or (k == "sequence_lens" and lens_runtime):
            continue
        if k.startswith("initial") and states_runtime:
            continue
        inits.append(const(k, swap(a[k]) if k.startswith("initial") else a[k]))
    steps, batch = a["X"].shape[:2]
    dirs, hidden = a["R"].shape[0], a["R"].shape[2]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(swap(a["X"]).shape))]
    if lens_runtime:
        inputs.append(helper.make_tensor_value_info("sequence_lens", TensorProto.INT32, [batch]))
    states = [k for k in ("initial_h", "initial_c") if k in a and states_runtime]
    for k in states:
        inputs.append(helper.make_tensor_value_info(k, TensorProto.FLOAT, list(swap(a[k]).shape)))
    if layout:
        attrs = dict(attrs, layout=1)
    node = helper.make_node(op, names, list(outputs), hidden_size=int(hidden), **attrs)
    hshape = [batch, dirs, hidden] if layout else [dirs, batch, hidden]
    ydims = {"Y": [batch, steps, dirs, hidden] if layout else [steps, dirs, batch, hidden],
             "Y_h": hshape, "Y_c": hshape}
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, ydims[o]) for o in outputs if o]
    graph = helper.make_graph([node], name, inputs, outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="libtinyml tests/e2e/onnx_rnn/gen.py")
    m.ir_version = 7
    save(m, path)
    return ([swap(a["X"])] + ([a["sequence_lens"]] if lens_runtime else []) +
            [swap(a[k]) for k in states])


MODELS = [
    # GRU: both directions, batch-first, per-sequence lengths, initial state,
    # the reset gate applied after the product.
    dict(name="gru_bidir_layout1_lens", op="GRU", opset=14, dirs=2, hidden=5, steps=4, batch=3,
         inp=3, attrs=dict(direction="bidirectional", linear_before_reset=1),
         extras=("B", "initial_h"), layout=1, lens=[3, 1, 4]),
    # GRU reverse, reset before the product, clip and other activations.
    dict(name="gru_reverse_clip_acts", op="GRU", opset=14, dirs=1, hidden=4, steps=5, batch=2,
         inp=3, attrs=dict(direction="reverse", clip=0.7,
                           activations=["HardSigmoid", "Softsign"],
                           activation_alpha=[0.3], activation_beta=[0.4]),
         extras=("B", "initial_h"), lens=[5, 2]),
    # LSTM: both directions, peepholes, initial state, lengths, all outputs.
    dict(name="lstm_bidir_peep_lens", op="LSTM", opset=14, dirs=2, hidden=4, steps=5, batch=3,
         inp=3, attrs=dict(direction="bidirectional"),
         extras=("B", "initial_h", "initial_c", "P"), lens=[5, 2, 3], outputs=("Y", "Y_h", "Y_c")),
    # LSTM reverse, batch-first, coupled gates, clip, no bias; only Y_c.
    dict(name="lstm_reverse_layout1_forget_clip", op="LSTM", opset=14, dirs=1, hidden=3, steps=4,
         batch=2, inp=2, attrs=dict(direction="reverse", input_forget=1, clip=0.9),
         extras=("P",), layout=1, outputs=("", "", "Y_c")),
    # LSTM at opset 7 with other activations.
    dict(name="lstm_acts_opset7", op="LSTM", opset=7, dirs=1, hidden=3, steps=3, batch=2, inp=4,
         attrs=dict(activations=["HardSigmoid", "LeakyRelu", "Relu"],
                    activation_alpha=[0.25, 0.1], activation_beta=[0.45]),
         extras=("B",), outputs=("Y", "Y_h", "Y_c")),
    # RNN both directions with lengths given at run time, Relu and Affine.
    dict(name="rnn_bidir_runtime_lens", op="RNN", opset=14, dirs=2, hidden=4, steps=4, batch=3,
         inp=2, attrs=dict(direction="bidirectional", activations=["Relu", "Affine"],
                           activation_alpha=[0.8], activation_beta=[0.1]),
         extras=("B",), lens=[4, 0, 2], lens_runtime=True),
    # RNN at opset 7, the default Tanh, more activations reachable: Softplus
    # on a reverse pass.
    dict(name="rnn_reverse_softplus_opset7", op="RNN", opset=7, dirs=1, hidden=3, steps=6, batch=2,
         inp=3, attrs=dict(direction="reverse", activations=["Softplus"]),
         extras=("B", "initial_h")),
    # The remaining activations: ScaledTanh and Elu on a bidirectional RNN
    # (alpha/beta consumed in order), ThresholdedRelu in a GRU.
    dict(name="rnn_bidir_scaledtanh_elu", op="RNN", opset=14, dirs=2, hidden=3, steps=3, batch=2,
         inp=2, attrs=dict(direction="bidirectional", activations=["ScaledTanh", "Elu"],
                           activation_alpha=[1.5, 0.7], activation_beta=[0.6]),
         extras=("B", "initial_h")),
    dict(name="gru_thresholded_relu", op="GRU", opset=14, dirs=1, hidden=4, steps=3, batch=2,
         inp=3, attrs=dict(activations=["Sigmoid", "ThresholdedRelu"], activation_alpha=[0.1]),
         extras=("B",)),
    # Silero VAD's form (silero_vad_16k_op15): one step, the state carried
    # in and out as run-time initial_h/initial_c, B present, no
    # sequence_lens, all three outputs.
    dict(name="lstm_silero_form", op="LSTM", opset=15, dirs=1, hidden=16, steps=1, batch=1,
         inp=16, attrs={}, extras=("B", "initial_h", "initial_c"), states_runtime=True,
         outputs=("Y", "Y_h", "Y_c")),
]


def run_ort(ort, model, ins, prefix):
    """onnxruntime's outputs of `model` on `ins`, as arrays."""
    cmd = ["node", ort, model, "--out", prefix]
    for i, x in enumerate(ins):
        x.tofile("%s_feed_%d.bin" % (prefix, i))
        cmd += ["--in", "%s_feed_%d.bin" % (prefix, i)]
    lines = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()
    recs = [json.loads(l) for l in lines if l.startswith("{") and '"output"' in l]
    return [np.fromfile(r["file"], dtype=np.float32).reshape(r["shape"]) for r in recs]


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    ort = os.path.join(sys.argv[1], "tools", "reference", "ort_run.js")
    for d in ("models", "data"):
        os.makedirs(os.path.join(HERE, d), exist_ok=True)
    manifest = []
    tmp = tempfile.mkdtemp()
    for spec in MODELS:
        spec = dict(spec)
        name, op, opset = spec.pop("name"), spec.pop("op"), spec.pop("opset")
        attrs, layout = spec.pop("attrs"), spec.pop("layout", 0)
        outputs = spec.pop("outputs", ("Y", "Y_h"))
        srt = spec.pop("states_runtime", False)
        a = arrays(op, **spec)
        rt = spec.get("lens_runtime", False)
        path = os.path.join(HERE, "models", name + ".onnx")
        ins = build(path, name, op, opset, a, attrs, layout, rt, outputs, srt)
        # onnxruntime runs batch-first layers only for LSTM, so its outputs
        # come from the time-major twin, made batch-first as the spec says.
        twin = os.path.join(tmp, name + ".onnx")
        twin_ins = build(twin, name, op, opset, a, attrs, 0, rt, outputs, srt)
        got = run_ort(ort, twin, twin_ins, os.path.join(tmp, name))
        if layout:
            got = [np.transpose(y, (2, 0, 1, 3)) if y.ndim == 4 else np.swapaxes(y, 0, 1) for y in got]
        case = {"label": "gen", "inputs": [], "outputs": []}
        for i, x in enumerate(ins):
            f = "data/%s_in_%d.bin" % (name, i)
            x.tofile(os.path.join(HERE, f))
            dtype = "int32" if x.dtype == np.int32 else "float32"
            case["inputs"].append({"kind": "input", "index": i, "dtype": dtype,
                                   "shape": list(x.shape), "file": f})
        for i, y in enumerate(got):
            f = "data/%s_out_%d.bin" % (name, i)
            y.astype(np.float32).tofile(os.path.join(HERE, f))
            case["outputs"].append({"kind": "output", "index": i, "dtype": "float32",
                                    "shape": list(y.shape), "file": f,
                                    "source": "onnxruntime-node (CPU)" +
                                              (", time-major twin transposed" if layout else "")})
        manifest.append({"model": "models/%s.onnx" % name, "format": "onnx", "cases": [case]})
        print(name, "ok")
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
