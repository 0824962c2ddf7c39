"""onnxruntime's output for a model, through ../shared's ort_run.js (node),
for the case generators gen_*_cases.py (run by hand, not by meson)."""

import json
import os
import subprocess

import numpy as np

ORT_RUN = "/work/shared/tools/reference/ort_run.js"


def ort(model_path, feeds, tmp):
    args = ["node", ORT_RUN, model_path, "--out", os.path.join(tmp, "ort")]
    for i, a in enumerate(feeds):
        p = os.path.join(tmp, "in%d.bin" % i)
        a.tofile(p)
        args += ["--in", p]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr)
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec["kind"] == "output":
            return np.fromfile(rec["file"], dtype=np.dtype(rec["dtype"])).reshape(rec["shape"])
    raise RuntimeError("no output from onnxruntime")
