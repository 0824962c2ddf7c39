"""What the microkernel tests share (test_ukernels.py, the int8 kernels;
test_ukernels_f32.py, the f32 kernels and max pools; test_bn_fold.py and
test_ukernels_f32_matmul.py): TOSA text, running the tools and the cases,
split checks, kernel symbols, the host's AVX-512, uk_abi.h's constants and
the kernel blobs in a module; and the codegen tests
(test_elementwise_vec.py, test_rvv_codegen.py): objdump and the step
functions' instructions."""
import collections
import os
import re
import shutil
import struct
import subprocess

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
UK_ABI = os.path.join(ROOT, "lib", "ukernels", "uk_abi.h")

# The AVX-512 kernels' features (x86-64-v4's, without VNNI).
AVX512 = "+avx2,+fma,+avx512f,+avx512bw,+avx512vl,+avx512dq"


def host_avx512():
    """(avx512f, avx512_vnni) of this CPU, from /proc/cpuinfo."""
    flags = next((line for line in open("/proc/cpuinfo") if line.startswith("flags")), "")
    avx512 = " avx512f" in flags
    return avx512, avx512 and " avx512_vnni" in flags


def dense(values, shape, ty):
    """Any shape: MLIR's hex form holds the raw little-endian elements."""
    fmt = {"i8": "<b", "i32": "<i", "f32": "<f"}[ty]
    raw = b"".join(struct.pack(fmt, v) for v in values)
    return f'dense<"0x{raw.hex().upper()}"> : tensor<{shape}x{ty}>'


def const(name, values, shape, ty):
    return f'    %{name} = "tosa.const"() <{{values = {dense(values, shape, ty)}}}> : () -> tensor<{shape}x{ty}>\n'


def scalar(name, v, ty):
    return f'    %{name} = "tosa.const"() <{{values = dense<{v}> : tensor<1x{ty}>}}> : () -> tensor<1x{ty}>\n'


def dims(shape):
    return "x".join(str(d) for d in shape)


def out_size(i, k, s, d, pb, pa):
    return (i + pb + pa - ((k - 1) * d + 1)) // s + 1


def c_int(name, path=UK_ABI):
    """The integer `name` is defined as in a C file (uk_abi.h unless told):
    `#define NAME 8` or an enumerator `NAME = 3`.  Raises when the file
    defines it not exactly once, so a renamed constant fails the test
    instead of leaving a stale copy here."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", open(path).read(), flags=re.S)
    found = re.findall(rf"^[ \t]*#define[ \t]+{name}[ \t]+(-?\d+)[ \t]*$|"
                       rf"\b{name}[ \t]*=[ \t]*(-?\d+)[ \t]*(?=[,}}\n])", text, re.M)
    if len(found) != 1:
        raise RuntimeError(f"{os.path.basename(path)} defines {name} as an integer "
                           f"{len(found)} times, not once")
    return int(found[0][0] or found[0][1])


def uk_params_type():
    """A namedtuple of tinyml_uk_params_t's int32 fields in order, read
    from uk_abi.h."""
    text = re.sub(r"/\*.*?\*/", " ", open(UK_ABI).read(), flags=re.S)
    body = re.search(r"typedef struct tinyml_uk_params \{(.*?)\} tinyml_uk_params_t;", text, re.S)
    if not body:
        raise RuntimeError("uk_abi.h has no typedef struct tinyml_uk_params")
    names = [n.strip() for decl in re.findall(r"int32_t([^;]+);", body.group(1))
             for n in decl.split(",")]
    return collections.namedtuple("UkParams", names)


def uk_blobs(raw, kinds):
    """(byte offset, params) of each kernel blob of one of `kinds` in a
    module's bytes: a tinyml_uk_params_t (uk_params_type) starting with
    TINYML_UK_VERSION and its kind.  Other bytes may look like such a
    header too, so callers check fields that a real blob of theirs has."""
    params = uk_params_type()
    head_size = 4 * len(params._fields)
    version = c_int("TINYML_UK_VERSION")
    for kind in kinds:
        head, at = struct.pack("<2i", version, kind), 0
        while (at := raw.find(head, at)) >= 0:
            if at + head_size <= len(raw):
                yield at, params._make(struct.unpack_from(f"<{len(params._fields)}i", raw, at))
            at += 4


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-3000:]}")
    return p.stdout


# The *_bands cases are below the backend's split_min_work, which would run
# them inline on one thread; this keeps their call split into bands.
SPLIT = ["--split-min-work", "1"]


def split_extra(name):
    return SPLIT if "bands" in name else []


def check_split(run_exe, mod):
    """The module's kernel step is shared by threads (tinyml-run --info)."""
    info = subprocess.run([run_exe, "--info", mod], capture_output=True, text=True, check=True)
    m = re.search(r"^parallel_steps: (\d+) of \d+", info.stdout, re.M)
    if not m:
        raise RuntimeError(f"{os.path.basename(mod)}: --info has no parallel_steps line:\n"
                           f"{info.stdout}")
    if int(m.group(1)) == 0:
        raise RuntimeError(f"{os.path.basename(mod)}: no step is split:\n{info.stdout}")


def run_cases(check, cases, exes, work, rng, have_avx512):
    """check(exes, work, case, rng, have_avx512) on each case, a line each;
    returns how many failed."""
    failures = 0
    for case in cases:
        try:
            check(exes, work, case, rng, have_avx512)
            print(f"PASS {case[0]}" + ("" if have_avx512 else " (AVX-512 not run: no avx512f)"))
        except RuntimeError as e:
            failures += 1
            print(f"FAIL {case[0]}: {e}")
    return failures


def kernel_symbols(compile_exe, nm, src, work, extra):
    out = os.path.join(work, "emit")
    shutil.rmtree(out, ignore_errors=True)
    run([compile_exe, src, "--emit", "c", "--name", "m", "-o", out, *extra])
    return run([nm, os.path.join(out, "m_kernels.o")])


def objdump():
    """llvm-objdump of LLVM 22 (it knows every target the tests build)."""
    for name in ("llvm-objdump-22", "llvm-objdump"):
        if shutil.which(name):
            return name
    raise SystemExit("FAIL: no llvm-objdump-22 or llvm-objdump on PATH")


def step_instructions(text):
    """(function, mnemonic, operands, line) of each instruction of the step
    functions (tinyml_entry_*, not the microkernels) in an
    `llvm-objdump -d --no-show-raw-insn` listing."""
    function = None
    for line in text.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:", line)
        if m:
            function = m.group(1) if m.group(1).startswith("tinyml_entry_") else None
            continue
        fields = line.split("\t")
        if function and len(fields) >= 2:
            yield function, fields[1].strip(), fields[2].strip() if len(fields) > 2 else "", line
