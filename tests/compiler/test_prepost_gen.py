#!/usr/bin/env python3
"""Regenerates test_prepost_expected/: the TFLite reference for
test_prepost_person.c.

For each case the test binary writes the model input its C pre-processing
loops make (--gen-inputs); TFLite itself runs person_detect on it
(../shared/tools/reference/tflite_run.js, after that folder's setup.sh);
then the binary applies the C post-processing loops to TFLite's output
(--gen-expected).  Run it after changing the stages' arithmetic, and
commit the .bin files.

Usage: test_prepost_gen.py BUILD_DIR SHARED_DIR
"""
import glob
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "test_prepost_expected")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, shared = sys.argv[1], os.path.abspath(sys.argv[2])
    exe = os.path.join(build, "tests", "compiler", "test_prepost_person")
    model = os.path.join(shared, "models", "tflm", "person_detect.tflite")
    runner = os.path.join(shared, "tools", "reference", "tflite_run.js")
    os.makedirs(OUT, exist_ok=True)
    for old in glob.glob(os.path.join(OUT, "*.bin")):
        os.remove(old)
    subprocess.run([exe, shared, OUT, "--gen-inputs"], check=True)
    for model_in in sorted(glob.glob(os.path.join(OUT, "*_model_in.bin"))):
        case = model_in[: -len("_model_in.bin")]
        prefix = case + "_tflite"
        subprocess.run(["node", runner, model, "--in", model_in, "--out", prefix],
                       check=True, stdout=subprocess.DEVNULL)
        os.remove(prefix + "_in_0.bin")  # the same bytes as model_in
        os.replace(prefix + "_out_0.bin", case + "_tflite_out.bin")
        print(os.path.basename(case), list(open(case + "_tflite_out.bin", "rb").read()))
    subprocess.run([exe, shared, OUT, "--gen-expected"], check=True)


if __name__ == "__main__":
    main()
