#!/usr/bin/env python3
"""The Cortex-M4 example with fused pre/post-processing: person_detect gets
the raw 96x96 gray photo (bytes 0..255) and returns the class, with
normalisation, quantisation and argmax compiled into the model.  Runs both
deployments (module with the freestanding runtime, and the static library)
under qemu-system-arm and expects class 1 for the person photo and 0 for the
no-person photo.

The photos are the shared int8 reference inputs + 128 (the shared BMPs hold
those int8 bytes; see tests/e2e/test_examples.py).

usage: mcu_prepost.py --mcu-run PATH [--shared DIR]
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile

FLAGS = ["--input-image", "96x96", "--pixels", "gray8", "--mean", "127.5", "--std", "127.5",
         "--argmax"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcu-run", required=True)
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                     "shared"))
    a = ap.parse_args()
    model = os.path.join(a.shared, "models", "tflm", "person_detect.tflite")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, want in (("person", 1), ("no-person", 0)):
            q = open(os.path.join(a.shared, "reference", "person_detect",
                                  f"real-{name}_in_0.bin"), "rb").read()
            photo = os.path.join(tmp, name + ".gray")
            with open(photo, "wb") as f:
                f.write(bytes((b + 128) & 0xFF for b in q))  # int8 -> uint8 photo
            for deploy in ("module", "static-lib"):
                out = os.path.join(tmp, f"{name}-{deploy}")
                r = subprocess.run([sys.executable, a.mcu_run, "--board", "mps2-an386", model,
                                    "--input", photo, "--output-dir", out, "--deploy", deploy,
                                    "--", *FLAGS],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                stats = dict(re.findall(r"^(\w+)=(\S+)$", r.stdout, re.M))
                got = (struct.unpack("<i", open(os.path.join(out, "output_0.bin"), "rb").read())[0]
                       if r.returncode == 0 else None)
                ok = got == want
                failures += not ok
                print(f"{'PASS' if ok else 'FAIL'} {name} photo, {deploy}: class {got} "
                      f"(want {want}) instructions={stats.get('instructions')} "
                      f"runtime_text={stats.get('runtime_text')}"
                      + ("" if r.returncode == 0 else "\n" + r.stdout))
    print(f"mcu_prepost: {failures} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
