#!/usr/bin/env python3
"""Whether two builds of libtinyml compile the same models into the same
results: for a refactoring that must not change behaviour.

  identical.py record --build B [--rvv-build R] [--mcu-build-root DIR]
                      [--shared ../shared] [--gen DIR] -o B.json
  identical.py compare OLD.json NEW.json [--common]

`record` compiles every model of SHARED/reference and SHARED/zoo/reference
(and, with --gen, the ONNX CNNs ../shared/tools/models/gen_models.py wrote
into DIR) for every target configuration below, runs each reference case
and writes, per model and configuration, the module's size and SHA-256 (or
the compile error) and the SHA-256 of every output.  Targets:

  x86 default (x86-64-v3), --cpu host, --cpu x86-64-v4, --cpu x86-64-v2
  (no microkernels), 2 threads on --cpu host, and --emit c;
  rvv (qemu-riscv64, VLEN 128) with R's riscv64 tinyml-run, and rvv
  without +v (the scalar strategy): module only;
  armv7em: the module for cortex-m4 and cortex-m7, and the MLPerf Tiny
  and TFLM models run as Cortex-M4 firmware by tinyml-mcu-run (outputs,
  instructions, arena).

`compare` prints every difference and a summary, and exits 1 when any
output differs, a model compiles in one build only, a module's size moves
by more than 1%, or an instruction count moves at all.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile

X86 = [("x86", []), ("x86-host", ["--cpu", "host"]), ("x86-v4", ["--cpu", "x86-64-v4"]),
       ("x86-v2", ["--cpu", "x86-64-v2"])]
MODULE_ONLY = [("rvv-scalar", ["--target", "rvv", "--features", "+m,+a,+f,+d,+c"]),
               ("m4", ["--target", "armv7em"]),
               ("m7", ["--target", "armv7em", "--cpu", "cortex-m7"])]
MCU_MODELS = {"kws_ref_model", "vww_96_int8", "resnet8_int8", "ad01_int8", "person_detect",
              "hello_world_float", "hello_world_int8", "kws_ref_model_float32", "ad01_fp32",
              "micro_speech", "simple_add"}
RVV_QEMU = ["qemu-riscv64", "-cpu", "rv64,v=true,vlen=128,vext_spec=v1.0"]


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()[:16]


def run(cmd, timeout=1800):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired:
        return -1, "timeout"


def cases_of(shared):
    """(name, model path, [(label, [input files])])."""
    out = []
    for manifest in ("reference/manifest.json", "zoo/reference/manifest.json"):
        path = os.path.join(shared, manifest)
        base = os.path.dirname(os.path.dirname(path))
        for e in json.load(open(path)):
            model = os.path.join(base, e["model"])
            cases = [(c["label"], [os.path.join(base, i["file"]) for i in
                                   sorted(c["inputs"], key=lambda i: i["index"])])
                     for c in e["cases"]]
            out.append((os.path.splitext(os.path.basename(model))[0], model, cases))
    return out


def gen_cases(gen, tmp):
    """The gen_models.py CNNs, each with its test_data_set_0 input as raw f32."""
    import onnx
    from onnx import numpy_helper
    out = []
    for d in sorted(os.listdir(gen)):
        model = os.path.join(gen, d, "model.onnx")
        pb = os.path.join(gen, d, "test_data_set_0", "input_0.pb")
        if not os.path.exists(model) or not os.path.exists(pb):
            continue
        t = onnx.TensorProto()
        t.ParseFromString(open(pb, "rb").read())
        raw = os.path.join(tmp, d + "_in0.bin")
        numpy_helper.to_array(t).astype("<f4").tofile(raw)
        out.append((d, model, [("set0", [raw])]))
    return out


def outputs(cmd, work):
    """Runs a tinyml-run style command writing to work; {file: sha} or the error."""
    os.makedirs(work, exist_ok=True)
    rc, text = run(cmd + ["--output-dir", work])
    if rc != 0:
        return {"error": text.strip().splitlines()[-1] if text.strip() else "rc %d" % rc}
    res = {f: sha(os.path.join(work, f)) for f in sorted(os.listdir(work))}
    for key in ("instructions", "arena"):
        m = re.search(r"^%s=(\d+)" % key, text, re.M)
        if m:
            res[key] = int(m.group(1))
    return res


def compile_module(compile_exe, model, args, path):
    rc, text = run([compile_exe, model, "-o", path] + args)
    if rc != 0:
        lines = [l for l in text.strip().splitlines() if l.strip()]
        return {"error": lines[-1] if lines else "rc %d" % rc}
    return {"size": os.path.getsize(path), "sha": sha(path)}


def record_model(a, name, model, cases, tmp, log):
    b = a.build
    compile_exe = os.path.join(b, "tools", "tinyml-compile")
    run_exe = os.path.join(b, "tools", "tinyml-run")
    res = {}

    def note(config, entry):
        res[config] = entry
        log.write("%s %s: %s\n" % (name, config, json.dumps(entry, sort_keys=True)))
        log.flush()

    for config, args in X86 + ([("rvv", ["--target", "rvv"])] if a.rvv_build else []):
        mod = os.path.join(tmp, "%s.%s.tmlm" % (name, config))
        entry = compile_module(compile_exe, model, args, mod)
        if "error" not in entry:
            exe = [run_exe] if config != "rvv" else RVV_QEMU + [
                os.path.join(a.rvv_build, "tools", "tinyml-run")]
            for label, inputs in cases:
                cmd = exe + [mod] + sum((["--input", i] for i in inputs), [])
                entry[label] = outputs(cmd, os.path.join(tmp, "%s.%s.%s" % (name, config, label)))
                if config == "x86-host":
                    entry[label + "@t2"] = outputs(
                        cmd + ["--threads", "2"], os.path.join(tmp, "%s.t2.%s" % (name, label)))
            os.unlink(mod)
        note(config, entry)
    for config, args in MODULE_ONLY:
        mod = os.path.join(tmp, "%s.%s.tmlm" % (name, config))
        entry = compile_module(compile_exe, model, args, mod)
        if os.path.exists(mod):
            os.unlink(mod)
        note(config, entry)
    for config, args in (("emit-c", []), ("emit-c-m4", ["--target", "armv7em"])):
        out = os.path.join(tmp, "%s.%s" % (name, config))
        os.makedirs(out, exist_ok=True)
        rc, text = run([compile_exe, model, "--emit", "c", "--name", "m", "-o", out] + args)
        entry = {"error": text.strip().splitlines()[-1]} if rc else {
            f: (os.path.getsize(os.path.join(out, f)), sha(os.path.join(out, f)))
            for f in sorted(os.listdir(out))}
        note(config, entry)
    if name in MCU_MODELS:
        mcu = os.path.join(b, "tools", "tinyml-mcu-run")
        entry = {}
        for label, inputs in cases:
            cmd = [sys.executable, mcu, "--board", "mps2-an386", model] + sum((["--input", i] for i in inputs), [])
            entry[label] = outputs(cmd, os.path.join(tmp, "%s.m4run.%s" % (name, label)))
        note("m4-run", entry)
    return res


def record(a):
    os.environ["TINYML_MCU_BUILD"] = os.path.abspath(a.mcu_build_root)
    # the firmware builds use this build's compiler, even from a copy of it
    os.environ["TINYML_COMPILE"] = os.path.abspath(os.path.join(a.build, "tools", "tinyml-compile"))
    result = {}
    with tempfile.TemporaryDirectory() as tmp, open(a.output + ".log", "w") as log:
        models = cases_of(a.shared) + (gen_cases(a.gen, tmp) if a.gen else [])
        for name, model, cases in models:
            if a.models and name not in a.models.split(","):
                continue
            result[name] = record_model(a, name, model, cases, tmp, log)
    json.dump(result, open(a.output, "w"), indent=1, sort_keys=True)
    return 0


def load(path):
    """A record's .json, or the .log it writes as it goes (a partial run)."""
    if not path.endswith(".log"):
        return json.load(open(path))
    out = {}
    for line in open(path):
        head, _, entry = line.partition(": ")
        name, _, config = head.partition(" ")
        out.setdefault(name, {})[config] = json.loads(entry)
    return out


def compare(a):
    old, new = load(a.old), load(a.new)
    if a.common:
        # a partial run: only what both recorded
        old = {n: {c: e for c, e in v.items() if c in new.get(n, {})}
               for n, v in old.items() if n in new}
        new = {n: {c: e for c, e in v.items() if c in old.get(n, {})}
               for n, v in new.items() if n in old}
    bad = same_modules = modules = outputs_compared = 0
    sizes = []
    for name in sorted(set(old) | set(new)):
        for config in sorted(set(old.get(name, {})) | set(new.get(name, {}))):
            o, n = old.get(name, {}).get(config), new.get(name, {}).get(config)
            where = "%s %s" % (name, config)
            if o is None or n is None:
                print("DIFF %s: recorded in one build only" % where)
                bad += 1
                continue
            if ("error" in o) != ("error" in n):
                print("DIFF %s: %s -> %s" % (where, o.get("error", "ok"), n.get("error", "ok")))
                bad += 1
                continue
            if "error" in o:
                continue
            if "size" in o:
                modules += 1
                same_modules += o["sha"] == n["sha"]
                ratio = n["size"] / o["size"]
                sizes.append((ratio, where, o["size"], n["size"]))
                if abs(ratio - 1) > 0.01:
                    print("DIFF %s: module %d -> %d bytes (%.2f%%)"
                          % (where, o["size"], n["size"], 100 * (ratio - 1)))
                    bad += 1
            for key in sorted(set(o) | set(n)):
                if key in ("size", "sha"):
                    continue
                ov, nv = o.get(key), n.get(key)
                if isinstance(ov, dict) or isinstance(nv, dict):
                    outputs_compared += 1
                    ov, nv = dict(ov or {}), dict(nv or {})
                    if ov != nv:
                        print("DIFF %s %s: %s -> %s" % (where, key, ov, nv))
                        bad += 1
                elif config.startswith("emit-c") and ov != nv:
                    # generated C must not change; the kernels object may
                    # move within the module-size bound
                    if key.endswith(".o") and ov and nv and abs(nv[0] / ov[0] - 1) <= 0.01:
                        continue
                    print("DIFF %s %s: %s -> %s" % (where, key, ov, nv))
                    bad += 1
    sizes.sort()
    if sizes:
        lo, hi = sizes[0], sizes[-1]
        print("module sizes: %d compared, %d byte-identical; new/old from %.4f (%s) to %.4f (%s)"
              % (modules, same_modules, lo[0], lo[1], hi[0], hi[1]))
    print("%d output sets compared; %d differences" % (outputs_compared, bad))
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--build", required=True)
    r.add_argument("--rvv-build")
    r.add_argument("--mcu-build-root", default=os.path.join(tempfile.gettempdir(), "identical-mcu"))
    r.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
    r.add_argument("--gen")
    r.add_argument("--models", help="comma-separated base names: only these")
    r.add_argument("-o", "--output", required=True)
    c = sub.add_parser("compare")
    c.add_argument("old")
    c.add_argument("new")
    c.add_argument("--common", action="store_true",
                   help="compare only the models and configurations both recorded")
    a = ap.parse_args()
    return record(a) if a.cmd == "record" else compare(a)


if __name__ == "__main__":
    sys.exit(main())
