#!/usr/bin/env python3
"""Tests tinyml-compile and tinyml-run as a user drives them: through the
command line, files and exit codes only.  Standard library only (no numpy).

Usage: test_tools.py TINYML_COMPILE TINYML_RUN MODEL_DIR
  MODEL_DIR is tests/e2e/models (cnn_two_results.mlir and matmul.mlir).
"""

import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import unittest

COMPILE = RUN = MODELS = None  # set from the command line in main()

CNN_INPUT_BYTES = 1 * 16 * 16 * 3 * 4
CNN_OUTPUT_BYTES = 1 * 10 * 4


def floats_to_bytes(values):
    return struct.pack(f"<{len(values)}f", *values)


def bytes_to_floats(data):
    return list(struct.unpack(f"<{len(data) // 4}f", data))


def random_floats(count, seed):
    rng = random.Random(seed)
    # Rounded through f32 so Python's reference sees the same inputs.
    return bytes_to_floats(floats_to_bytes([rng.uniform(-1, 1) for _ in range(count)]))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def tool(exe, *args, cwd=None):
    return subprocess.run([exe, *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


class ToolsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="tinyml-tools-")
        cls.dir = cls.tmp.name
        cls.cnn = cls.compile_model("cnn_two_results")
        cls.image = os.path.join(cls.dir, "image.bin")
        write(cls.image, floats_to_bytes(random_floats(CNN_INPUT_BYTES // 4, 1)))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def compile_model(cls, name, *options):
        out = os.path.join(cls.dir, name + "".join(options).replace("/", "_") + ".tmod")
        r = tool(COMPILE, os.path.join(MODELS, name + ".mlir"), "-o", out, *options)
        if r.returncode != 0:
            raise AssertionError(f"tinyml-compile {name} failed:\n{r.stderr}")
        return out

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def check_ok(self, r):
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        return r.stdout

    def run_cnn(self, out_dir, module=None):
        self.check_ok(tool(RUN, module or self.cnn, "--input", self.image,
                           "--output-dir", out_dir))
        return [read(os.path.join(out_dir, f"output_{i}.bin")) for i in range(2)]

    # -- success paths ------------------------------------------------------

    def test_help(self):
        for exe in (COMPILE, RUN):
            out = self.check_ok(tool(exe, "--help"))
            self.assertIn("Usage:", out)
        out = self.check_ok(tool(RUN, "--help"))
        self.assertIn("pseudo-random", out)  # --bench without --input
        self.assertIn("x86-64", self.check_ok(tool(COMPILE, "--help")))

    def test_info(self):
        out = self.check_ok(tool(RUN, "--info", self.cnn))
        for want in ['input 0 "image": float32 [1, 16, 16, 3], 3072 bytes',
                     'output 0 "logits": float32 [1, 10], 40 bytes',
                     'output 1 "probs": float32 [1, 10], 40 bytes',
                     "target: x86-64", "arena_size: ", "constant_size: ",
                     "dispatch_count: "]:
            self.assertIn(want, out)

    def test_info_variant(self):
        # A default module carries the baseline and an AVX-512 build; the
        # loader runs the best this CPU has.  --cpu pins one, and a smaller
        # module.
        with open("/proc/cpuinfo") as f:
            flags = f.read().split()
        # The variant's features follow its CPU name: x86-64-v4 builds
        # with and without VNNI share the name.
        best = ("x86-64-v4 +avx512f,+avx512bw,+avx512vl,+avx512dq"
                if "avx512f" in flags and "avx512bw" in flags else "x86-64-v3")
        out = self.check_ok(tool(RUN, "--info", self.cnn))
        self.assertIn(f"variant: {best} (chosen at load from 2 builds)", out)
        pinned = self.compile_model("cnn_two_results", "--cpu", "x86-64-v3")
        out = self.check_ok(tool(RUN, "--info", pinned))
        self.assertIn("variant: x86-64-v3 (chosen at load from 1 builds)", out)
        self.assertLess(os.path.getsize(pinned), os.path.getsize(self.cnn))

    def test_outputs(self):
        logits, probs = self.run_cnn(self.path("out"))
        self.assertEqual(len(logits), CNN_OUTPUT_BYTES)
        self.assertEqual(len(probs), CNN_OUTPUT_BYTES)
        logits, probs = bytes_to_floats(logits), bytes_to_floats(probs)
        self.assertAlmostEqual(sum(probs), 1.0, delta=1e-5)
        # probs is softmax(logits) inside the model; recompute it here.
        top = max(logits)
        e = [math.exp(v - top) for v in logits]
        for got, want in zip(probs, e):
            self.assertAlmostEqual(got, want / sum(e), delta=1e-6)

    def test_deterministic(self):
        self.assertEqual(self.run_cnn(self.path("first")),
                         self.run_cnn(self.path("second")))

    def test_offset(self):
        # --offset B and IN,OUT move the buffers, never the outputs' bits;
        # the placement it prints (from the addresses) tells IN from OUT
        want = self.run_cnn(self.path("plain"))
        for off in ("0", "16", "60", "16,4", "0,60", "4,0"):
            with self.subTest(offset=off):
                out_dir = self.path("off" + off.replace(",", "_"))
                stdout = self.check_ok(tool(RUN, self.cnn, "--input", self.image, "--offset", off,
                                            "--output-dir", out_dir))
                self.assertEqual([read(os.path.join(out_dir, f"output_{i}.bin"))
                                  for i in range(2)], want)
                b_in, b_out = (off.split(",") * 2)[:2]
                self.assertIn(f"placed: input 0 at {b_in}, output 0 at {b_out}, "
                              f"output 1 at {b_out} (bytes past a 64-byte line)\n", stdout)

    def test_default_output_dir(self):
        cwd = self.path("cwd")
        os.makedirs(cwd)
        self.check_ok(tool(RUN, self.cnn, "-i", self.image, cwd=cwd))
        self.assertEqual(sorted(os.listdir(cwd)), ["output_0.bin", "output_1.bin"])

    def test_compile_options(self):
        # Other flags must give the same function, up to rounding.
        module = self.compile_model("cnn_two_results", "-O0", "--cpu", "x86-64-v3",
                                    "--features", "+avx2,+fma")
        got = self.run_cnn(self.path("options"), module)
        want = self.run_cnn(self.path("default"))
        for g, w in zip(got, want):
            for a, b in zip(bytes_to_floats(g), bytes_to_floats(w)):
                self.assertAlmostEqual(a, b, delta=1e-4)

    def test_inputs_in_order(self):
        # matmul: [2, 7, 13] x [2, 13, 5]; different sizes, so a swap fails.
        module = self.compile_model("matmul")
        a, b = random_floats(2 * 7 * 13, 2), random_floats(2 * 13 * 5, 3)
        write(self.path("a.bin"), floats_to_bytes(a))
        write(self.path("b.bin"), floats_to_bytes(b))
        self.check_ok(tool(RUN, module, "-i", self.path("a.bin"), "-i",
                           self.path("b.bin"), "--output-dir", self.path("mm")))
        got = bytes_to_floats(read(self.path("mm", "output_0.bin")))
        for z in range(2):
            for i in range(7):
                for j in range(5):
                    want = sum(a[(z * 7 + i) * 13 + k] * b[(z * 13 + k) * 5 + j]
                               for k in range(13))
                    self.assertAlmostEqual(got[(z * 7 + i) * 5 + j], want, delta=1e-4)

    def test_bench(self):
        out = self.check_ok(tool(RUN, self.cnn, "-i", self.image, "--bench", "3",
                                 "--flops", "1e6"))
        values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        self.assertEqual(values["runs"], "3")
        self.assertGreater(float(values["median_ms"]), 0)
        self.assertLessEqual(float(values["min_ms"]), float(values["median_ms"]))
        self.assertGreater(float(values["gflops"]), 0)

    def test_bench_without_inputs(self):
        cwd = self.path("bench")
        os.makedirs(cwd)
        out = self.check_ok(tool(RUN, self.cnn, "--bench", "3", cwd=cwd))
        self.assertIn("median_ms=", out)
        self.assertNotIn("gflops=", out)
        self.assertEqual(os.listdir(cwd), [])  # benchmarks write no outputs

    def profile_rows(self, module, runs="20"):
        out = self.check_ok(tool(RUN, module, "-i", self.image, "--bench", runs, "--profile"))
        rows = [line.split(None, 4) for line in out.splitlines() if line.startswith("step ")]
        values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        return rows, values

    def test_profile(self):
        info = self.check_ok(tool(RUN, "--info", self.cnn))
        steps = int(info.split("dispatch_count: ")[1].split()[0])
        rows, values = self.profile_rows(self.cnn)
        # One row per step, in order, each naming the TOSA ops by line.
        self.assertEqual([int(r[1]) for r in rows], list(range(steps)))
        self.assertIn("tosa.conv2d line ", " ".join(r[4] for r in rows))
        # The rows are the invoke: their medians sum to about its median
        # (loose, as any two medians on a shared machine are).
        total = sum(float(r[2]) for r in rows)
        self.assertGreater(total, 0)
        self.assertLess(abs(total / float(values["median_ms"]) - 1), 0.5, values)
        self.assertIn("profile_sum_ms", values)

    def test_profile_stripped(self):
        bare = self.compile_model("cnn_two_results", "--strip")
        self.assertLess(os.path.getsize(bare), os.path.getsize(self.cnn))
        rows, _ = self.profile_rows(bare, "3")
        self.assertTrue(rows)
        for r in rows:
            self.assertIn("compiled with --strip", r[4])
        self.assertEqual(self.run_cnn(self.path("bare"), bare), self.run_cnn(self.path("full")))

    def test_arena_regions(self):
        split = self.compile_model("cnn_two_results", "--arena-regions", "4K,1M")
        info = self.check_ok(tool(RUN, "--info", split))
        sizes = [int(line.split()[2]) for line in info.splitlines()
                 if line.startswith("arena_region ")]
        self.assertEqual(len(sizes), 2, info)
        self.assertLessEqual(sizes[0], 4096)
        self.assertIn(f"arena_size: {sizes[0]} bytes", info)
        self.assertEqual(self.run_cnn(self.path("split"), split), self.run_cnn(self.path("one")))
        self.assertNotIn("arena_region ", self.check_ok(tool(RUN, "--info", self.cnn)))

    # -- error paths ----------------------------------------------------------

    def check_error(self, exe, args, code, *wanted):
        r = tool(exe, *args)
        self.assertEqual(r.returncode, code, f"{args}: {r.stderr}")
        self.assertEqual(r.stdout, "", args)
        self.assertTrue(r.stderr.startswith(os.path.basename(exe) + ": "), r.stderr)
        for want in wanted:
            self.assertIn(want, r.stderr, args)

    def test_run_errors(self):
        short = self.path("short.bin")
        write(short, b"\0" * 100)
        cases = [
            ([self.path("nosuch.tmod"), "-i", self.image], 1, "nosuch.tmod"),
            ([self.image, "-i", self.image], 1, "INVALID_MODULE"),
            ([self.cnn, "-i", self.path("nosuch.bin")], 1, "nosuch.bin"),
            ([self.cnn, "-i", short], 1, 'input 0 "image"', "100 bytes", "3072"),
            ([self.cnn], 2, "1 input(s) but 0"),
            ([self.cnn, "-i", self.image, "-i", self.image], 2, "but 2"),
            ([self.cnn, "--nosuch"], 2, "--nosuch"),
            ([self.cnn, "--bench", "0"], 2, "--bench"),
            ([self.cnn, "--bench"], 2, "needs a value"),
            ([self.cnn, "-i", self.image, "--flops", "5"], 2, "--bench"),
            ([self.cnn, "-i", self.image, "--profile"], 2, "--profile needs --bench"),
            ([], 2, "missing MODULE"),
        ]
        bad_offsets = ("64", "-1", "abc", "5x", "0x10", "", "16,", ",4", "16,4,2", "16,64",
                       "16;4", " 16", "+16", "-0", "16, 4")
        cases += [([self.cnn, "-i", self.image, "--offset", bad], 2,
                   f"'{bad}' is not B or IN,OUT") for bad in bad_offsets]
        for args, code, *wanted in cases:
            with self.subTest(args=args):
                self.check_error(RUN, args, code, *wanted)

    def test_compile_errors(self):
        model = os.path.join(MODELS, "matmul.mlir")
        out = self.path("never.tmod")
        garbage = self.path("garbage.mlir")
        write(garbage, b"this is not a model\n")
        cases = [
            ([model, "-o", out, "--target", "nosuch"], 1, "nosuch", "x86-64"),
            ([garbage, "-o", out], 1, "INVALID_MODEL"),
            ([self.path("nosuch.mlir"), "-o", out], 1, "nosuch.mlir"),
            ([model, "-o", self.path("nodir", "x.tmod")], 1, "IO_ERROR"),
            ([model, "-o", out, "--nosuch"], 2, "--nosuch"),
            ([model, "-o", out, "-O4"], 2, "-O"),
            ([model, "-o", out, "--arena-regions", "4X"], 2, "--arena-regions", "64K,256K"),
            ([model, "-o", out, "--arena-regions", "1,2,3,4,5"], 2, "at most 4"),
            ([os.path.join(MODELS, "cnn_two_results.mlir"), "-o", out, "--arena-regions",
              "64,64"], 1, "fits in no region"),
            ([model], 2, "missing -o"),
            ([], 2, "missing MODEL"),
        ]
        for args, code, *wanted in cases:
            with self.subTest(args=args):
                self.check_error(COMPILE, args, code, *wanted)
        self.assertFalse(os.path.exists(out))


def main():
    global COMPILE, RUN, MODELS
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    # Absolute: meson passes paths relative to the build directory, and some
    # tests run the tools from another working directory.
    COMPILE, RUN, MODELS = (os.path.abspath(a) for a in sys.argv[1:])
    unittest.main(argv=[sys.argv[0], "-v"])


if __name__ == "__main__":
    main()
