#!/usr/bin/env python3
"""Expected outputs from TFLite's own kernels for zoo models whose zoo
references (../shared/zoo/reference, TFLite's XNNPACK path) are not what
TFLite computes, and which TFLite Micro cannot run (so reference-tflm has
no case).  test_zoo.py checks these like reference-tflm's.

The SSD detector is one: XNNPACK runs its uint8 backbone with its own
rounding and copies the raw bytes of a CONCATENATION whose inputs are
quantised differently, so its boxes and scores before the detection
operator are several steps from TFLite's kernels, and the detections that
come out differ.  The build of TFLite behind ../shared/tools/reference
always applies XNNPACK; a model holding one operator XNNPACK claims but
fails to prepare (a uint8 conv whose bias has per-channel scales) makes
TFLite restore its own kernels for the whole graph.  That operator is
added here, dead (its output is no model output), to a copy of the model.

Run by hand (needs node and `sh ../shared/tools/reference/setup.sh`):
  make_ref.py FLATC SHARED_DIR
writes <model>/<label>_out_<i>.bin and manifest.json beside this script
for every case of the models in MODELS.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["models/tflite-detection/tfls_coco_ssd_mobilenet_v1_1.0_quant.tflite"]


def binary_scales(data):
    """tensor index -> its float32 scales, read from the flatbuffer itself
    (flatc's JSON prints floats with too few digits to round-trip)."""
    u32 = lambda p: struct.unpack_from("<I", data, p)[0]

    def field(t, i):
        vt = t - struct.unpack_from("<i", data, t)[0]
        if 4 + 2 * i >= struct.unpack_from("<H", data, vt)[0]:
            return None
        o = struct.unpack_from("<H", data, vt + 4 + 2 * i)[0]
        return t + o if o else None

    def vec(f):
        p = f + u32(f)
        return p + 4, u32(p)

    subgraphs, _ = vec(field(u32(0), 2))
    sg0 = subgraphs + u32(subgraphs)
    tensors, count = vec(field(sg0, 0))
    out = {}
    for i in range(count):
        t = tensors + 4 * i
        t += u32(t)
        q = field(t, 4)
        s = q and field(q + u32(q), 2)
        if s:
            p, n = vec(s)
            out[i] = list(struct.unpack_from("<%df" % n, data, p))
    return out


def with_dead_conv(model):
    """The model with a dead uint8 conv on its input that XNNPACK cannot prepare."""
    sg = model["subgraphs"][0]
    tensors, buffers = sg["tensors"], model["buffers"]

    def tensor(shape, ttype, q, data=None):
        buffers.append({"data": data} if data is not None else {})
        tensors.append({"shape": shape, "type": ttype, "buffer": len(buffers) - 1,
                        "name": "dead%d" % len(tensors), "quantization": q})
        return len(tensors) - 1

    x = sg["inputs"][0]
    channels = tensors[x]["shape"][-1]
    w = tensor([2, 1, 1, channels], "UINT8", {"scale": [0.01], "zero_point": [128]},
               [130] * (2 * channels))
    b = tensor([2], "INT32", {"scale": [0.0078125 * 0.01] * 2, "zero_point": [0, 0]}, [0] * 8)
    y = tensor(tensors[x]["shape"][:-1] + [2], "UINT8", {"scale": [0.1], "zero_point": [128]})
    conv = next(i for i, c in enumerate(model["operator_codes"])
                if c.get("deprecated_builtin_code", c.get("builtin_code")) in (3, "CONV_2D"))
    sg["operators"].insert(0, {"opcode_index": conv, "inputs": [x, w, b], "outputs": [y],
                               "builtin_options_type": "Conv2DOptions",
                               "builtin_options": {"padding": "SAME", "stride_w": 1,
                                                   "stride_h": 1}})
    return model


def main():
    flatc, shared = sys.argv[1:3]
    zoo = os.path.join(shared, "zoo")
    schema = os.path.join(shared, "schema", "tflite", "schema_flatc2.fbs")
    runner = os.path.join(shared, "tools", "reference", "tflite_run.js")
    cases = {e["model"]: e for e in json.load(open(os.path.join(zoo, "reference", "manifest.json")))}
    manifest = []
    for rel in MODELS:
        name = os.path.splitext(os.path.basename(rel))[0]
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([flatc, "--json", "--strict-json", "--raw-binary", "-o", tmp, schema,
                            "--", os.path.join(zoo, rel)], check=True)
            model = json.load(open(os.path.join(tmp, name + ".json")))
            for i, scales in binary_scales(open(os.path.join(zoo, rel), "rb").read()).items():
                model["subgraphs"][0]["tensors"][i]["quantization"]["scale"] = scales
            path = os.path.join(tmp, name + ".json")
            json.dump(with_dead_conv(model), open(path, "w"))
            subprocess.run([flatc, "-b", "-o", tmp, schema, path], check=True)
            os.makedirs(os.path.join(HERE, name), exist_ok=True)
            entry = {"model": rel, "format": "tflite", "cases": [],
                     "source": "TFLite's own kernels (tflite_run.js, XNNPACK made to decline)"}
            for case in cases[rel]["cases"]:
                prefix = os.path.join(tmp, case["label"])
                cmd = ["node", runner, os.path.join(tmp, name + ".tflite"), "--out", prefix]
                for inp in sorted(case["inputs"], key=lambda i: i["index"]):
                    cmd += ["--in", os.path.join(zoo, inp["file"])]
                r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if r.returncode != 0 or "failed to prepare" not in r.stdout:
                    sys.exit("%s/%s: TFLite did not fall back to its own kernels:\n%s"
                             % (name, case["label"], r.stdout))
                outs = []
                for o in case["outputs"]:
                    rel_out = "%s/%s_out_%d.bin" % (name, case["label"], o["index"])
                    data = open("%s_out_%d.bin" % (prefix, o["index"]), "rb").read()
                    open(os.path.join(HERE, rel_out), "wb").write(data)
                    outs.append(dict(o, file=rel_out))
                entry["cases"].append(dict(case, outputs=outs))
            manifest.append(entry)
    json.dump(manifest, open(os.path.join(HERE, "manifest.json"), "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
