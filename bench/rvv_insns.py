"""RVV rows of bench/run.py (--rvv): instructions per inference under
qemu-riscv64 at VLEN 128, against the same model compiled for scalar rv64gc.

For each model of ../shared/reference/manifest.json:
- compile it twice with the host tinyml-compile: `--target rvv` (the
  backend's default features, +m,+a,+f,+d,+c,+v) and `--target rvv
  --features +m,+a,+f,+d,+c` (rv64gc, no V);
- check the scalar executable statically: its disassembly (llvm-objdump
  --mattr=+v) must hold no vector instruction;
- run every reference case with the cross-built riscv64 tinyml-run and compare
  with the expected outputs at ../shared/reference/README.md's tolerances
  (tests/e2e/test_shared_models.py's `compare`); the vector module runs on
  `-cpu rv64,v=true,vlen=128`, the scalar one on `-cpu rv64,v=false`, where
  any vector instruction would trap;
- count instructions with the TCG plugin backends/rvv/qemu_insn_count.c:
  `tinyml-run --bench N` on case 0's inputs runs 1 + N invokes, so
  (insns(N=9) - insns(N=1)) / 8 is one inference; loading, CRC checks and
  input reading cancel out (backends/rvv/README.md uses N = 3 and 1).

A model or variant that fails (compile, check or run) gets its error in its
row; the table goes on.
"""
import importlib.util
import os
import re
import struct
import subprocess
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PLUGIN_SRC = os.path.join(ROOT, "backends", "rvv", "qemu_insn_count.c")
CROSS_FILE = os.path.join(ROOT, "cross", "riscv64-linux-gnu.txt")
SCALAR_FEATURES = "+m,+a,+f,+d,+c"
VARIANTS = [  # (row label, tinyml-compile extra args, qemu -cpu, must be scalar)
    ("rvv VLEN128", [], "rv64,v=true,vlen=128,vext_spec=v1.0", False),
    ("rv64gc scalar", ["--features", SCALAR_FEATURES], "rv64,v=false", True),
]
# Inferences between the two counted runs.  tinyml-run's timing printout
# (qsort of the times, printf("%f")) costs a few thousand instructions that
# vary with the times measured; spread over 8 inferences that is < 500 each.
EXTRA = 8
# MLPerf Tiny int8 first, then the rest in manifest order.
FIRST = ["kws_ref_model", "vww_96_int8", "resnet8_int8", "ad01_int8", "person_detect"]


class Failed(Exception):
    pass


def _run(cmd, what):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    except OSError as err:
        raise Failed("%s failed: %s" % (what, err))
    if p.returncode != 0:
        lines = [l for l in p.stdout.strip().splitlines() if l.strip()]
        raise Failed("%s failed (exit %d): %s" % (what, p.returncode,
                                                  lines[-1] if lines else "no output"))
    return p.stdout


def _load_compare():
    path = os.path.join(ROOT, "tests", "e2e", "test_shared_models.py")
    spec = importlib.util.spec_from_file_location("tinyml_test_shared_models", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.compare, mod.read_values, mod.argmax


def ensure_rvv_tools(rvv_build):
    """The riscv64 runtime-only build (static tinyml-run) and the plugin."""
    run_exe = os.path.join(rvv_build, "tools", "tinyml-run")
    if not os.path.exists(run_exe):
        if not os.path.exists(os.path.join(rvv_build, "build.ninja")):
            _run(["meson", "setup", rvv_build, "--cross-file", CROSS_FILE,
                  "-Dcompiler=false", "-Dtests=false"], "meson setup (riscv64)")
        _run(["ninja", "-C", rvv_build], "ninja (riscv64)")
    plugin = os.path.join(rvv_build, "qemu_insn_count.so")
    if (not os.path.exists(plugin)
            or os.path.getmtime(plugin) < os.path.getmtime(PLUGIN_SRC)):
        _run(["cc", "-shared", "-fPIC", "-O2", "-o", plugin, PLUGIN_SRC], "plugin build")
    return run_exe, plugin


def executable_of(module_path):
    """The ELF shared object inside a module (there is one per module)."""
    data = open(module_path, "rb").read()
    at = data.find(b"\x7fELF\x02\x01")
    if at < 0 or data.find(b"\x7fELF\x02\x01", at + 1) >= 0:
        raise Failed("expected exactly one ELF64 executable in the module")
    shoff, = struct.unpack_from("<Q", data, at + 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, at + 0x3a)
    return data[at:at + shoff + shentsize * shnum]


def vector_instructions(module_path, tmp):
    """(instructions, vector instructions) in the module's executable."""
    elf = os.path.join(tmp, "exe.so")
    with open(elf, "wb") as f:
        f.write(executable_of(module_path))
    text = _run(["llvm-objdump-22", "-d", "--mattr=+v", elf], "llvm-objdump-22")
    mnemonics = [l.split("\t")[1].strip() for l in text.splitlines()
                 if re.match(r"\s+[0-9a-f]+:", l) and l.count("\t") >= 1]
    return len(mnemonics), sum(m.startswith("v") for m in mnemonics)


def insns(qemu, plugin, run_exe, module, inputs, n):
    out = _run(qemu + ["-plugin", plugin, run_exe, module, *inputs, "--bench", str(n)],
               "qemu-riscv64 --bench %d" % n)
    m = re.search(r"^insns=(\d+)$", out, re.M)
    if not m:
        raise Failed("the plugin printed no insns= line")
    return int(m.group(1))


def measure(compile_exe, run_exe, plugin, shared, entry, extra, cpu, scalar, tmp):
    """Returns (instructions per inference, note); raises Failed."""
    compare, read_values, argmax = _load_compare()
    module = os.path.join(tmp, "m.tmlm")
    _run([compile_exe, os.path.join(shared, entry["model"]), "-o", module,
          "--target", "rvv", *extra], "compile")
    total, vec = vector_instructions(module, tmp)
    if scalar and vec:
        raise Failed("%d of %d instructions of the scalar executable are vector" % (vec, total))
    qemu = ["qemu-riscv64", "-cpu", cpu]
    exact = True
    for case in entry["cases"]:
        out_dir = os.path.join(tmp, "out-" + case["label"])
        os.makedirs(out_dir, exist_ok=True)
        inputs = sum((["--input", os.path.join(shared, i["file"])]
                      for i in sorted(case["inputs"], key=lambda i: i["index"])), [])
        _run(qemu + [run_exe, module, *inputs, "--output-dir", out_dir], "run " + case["label"])
        for out in case["outputs"]:
            ours = read_values(os.path.join(out_dir, "output_%d.bin" % out["index"]), out["dtype"])
            want = read_values(os.path.join(shared, out["file"]), out["dtype"])
            good, worst, same = compare(ours, want, out["dtype"])
            if (good and case["label"].startswith("real-") and len(want) > 1
                    and argmax(ours) != argmax(want)):
                good = False
            if not good:
                raise Failed("%s output %d differs from the reference (max |d| = %g)"
                             % (case["label"], out["index"], worst))
            exact = exact and same
    first = sum((["--input", os.path.join(shared, i["file"])]
                 for i in sorted(entry["cases"][0]["inputs"], key=lambda i: i["index"])), [])
    one, many = (insns(qemu, plugin, run_exe, module, first, n) for n in (1, 1 + EXTRA))
    note = "%d/%d cases ok%s; %d instructions in the executable, %d vector" % (
        len(entry["cases"]), len(entry["cases"]), " (bit-exact)" if exact else "", total, vec)
    return round((many - one) / EXTRA), note


def rvv_rows(build, rvv_build, shared, manifest, wanted, log=print):
    """Rows (model, target, ours, peer, ratio, peer_name, note) for the CSV.
    The vector row carries the scalar count as its peer, so ratio = peer /
    ours = scalar / vector as in the other rows of bench/run.py."""
    compile_exe = os.path.join(build, "tools", "tinyml-compile")
    try:
        run_exe, plugin = ensure_rvv_tools(rvv_build)
    except Failed as err:
        log("rvv: %s" % err)
        return [("rvv", VARIANTS[0][0], "error", "", "", "", str(err))]
    names = [os.path.splitext(os.path.basename(e["model"]))[0] for e in manifest]
    order = [n for n in FIRST if n in names] + [n for n in names if n not in FIRST]
    by_name = dict(zip(names, manifest))
    rows = []
    log("%-24s %-14s %14s %8s  %s" % ("model", "target", "insns/infer", "scal/vec", "check"))
    for name in order:
        if wanted and name not in wanted:
            continue
        counts = {}
        pair = []
        for label, extra, cpu, scalar in VARIANTS:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    n, note = measure(compile_exe, run_exe, plugin, shared, by_name[name],
                                      extra, cpu, scalar, tmp)
                    counts[label] = n
                    pair.append([name, label, "%d instr" % n, "", "", "", note])
                except Failed as err:
                    pair.append([name, label, "error", "", "", "", str(err)])
        vec, sca = (counts.get(v[0]) for v in VARIANTS)
        if vec and sca:
            pair[0][3], pair[0][4], pair[0][5] = "%d instr" % sca, "%.2f" % (sca / vec), VARIANTS[1][0]
        for row in pair:
            ratio = row[4] if row[1] == VARIANTS[0][0] else ""
            count = row[2].replace(" instr", "")
            log("%-24s %-14s %14s %8s  %s" % (row[0], row[1],
                                              "{:,}".format(int(count)) if count.isdigit() else count,
                                              ratio, row[6]), flush=True)
        rows += [tuple(r) for r in pair]
    return rows

