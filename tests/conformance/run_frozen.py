#!/usr/bin/env python3
"""Conformance tests whose shape-like inputs (Resize scales/sizes, Reshape
shapes, Slice starts/ends, ...) are frozen into initializers, as deployed
models have them (see freeze_inputs.c); then the runner on those copies.

Usage: run_frozen.py FREEZE_INPUTS RUNNER DATA_DIR WORK_DIR
"""
import os
import shutil
import subprocess
import sys

# (test-name prefix in the node suite, graph inputs to freeze)
CASES = [
    ("test_resize_", "1,2,3"),
    ("test_upsample_nearest", "1"),
    ("test_reshape_", "1"),
    ("test_unsqueeze_", "1"),
    ("test_squeeze", "1"),
    ("test_slice", "1,2,3,4"),
    ("test_expand_", "1"),
    ("test_tile", "1"),
    ("test_reduce_sum_", "1"),
    ("test_nllloss_NCd1_mean_weight_negative_ii", "1"),
    ("test_sce_NCd1d2d3_sum_weight_high_ii", "1"),
    ("test_tri", "1"),
    ("test_gathernd_", "0,1"),
]


def main():
    freeze, runner, data, work = sys.argv[1:5]
    node = os.path.join(data, "node")
    if not os.path.isdir(node):
        print("SKIP: %s is missing (install libonnx-testdata)" % node)
        return 1 if os.environ.get("CI") == "true" else 77
    out = os.path.join(work, "frozen")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(out)
    for name in sorted(os.listdir(node)):
        for prefix, inputs in CASES:
            if name.startswith(prefix):
                subprocess.run([freeze, os.path.join(node, name), os.path.join(out, name), inputs],
                               check=True)
    r = subprocess.run([runner, work, "--suites", "frozen", "--jobs", "2"])
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
