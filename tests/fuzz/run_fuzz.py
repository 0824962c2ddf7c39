#!/usr/bin/env python3
"""Runs the fuzz_tflite libFuzzer target on a seed corpus of the shared
models and fails if it finds a crash, a leak, a timeout or an OOM.

Usage:
  run_fuzz.py FUZZER MODELS_DIR WORK_DIR [--time SECONDS] [LIBFUZZER_ARGS...]
  run_fuzz.py --unavailable REASON

WORK_DIR (in the build directory) gets:
  seeds/      every *.tflite under MODELS_DIR, copied afresh on each run
  corpus/     a scratch corpus, emptied on each run; libFuzzer adds to it
  artifacts/  crash-*, leak-*, timeout-*, oom-* inputs, if any
Reproduce a finding with `FUZZER WORK_DIR/artifacts/crash-...`.

Exit 77 (skip) when the fuzzer or the models are missing, 1 under CI=true.
"""

import os
import re
import shutil
import subprocess
import sys


def skip(reason):
    print(f"SKIP: {reason}")
    if os.environ.get("CI") == "true":
        print("CI=true: a skip is a failure")
        sys.exit(1)
    sys.exit(77)


def fresh_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def copy_seeds(models_dir, seeds, suffix):
    count = 0
    for root, _, files in os.walk(models_dir):
        for name in sorted(files):
            if name.endswith(suffix):
                shutil.copyfile(os.path.join(root, name), os.path.join(seeds, name))
                count += 1
    return count


def main():
    args = sys.argv[1:]
    if args[:1] == ["--unavailable"]:
        skip(" ".join(args[1:]) or "the fuzzer is unavailable")
    if len(args) < 3:
        sys.exit(__doc__)
    fuzzer, models_dir, work = args[:3]
    extra = args[3:]
    seconds, suffix = "30", ".tflite"
    if extra[:1] == ["--time"]:
        seconds, extra = extra[1], extra[2:]
    if extra[:1] == ["--suffix"]:
        suffix, extra = extra[1], extra[2:]
    if not os.path.exists(fuzzer):
        skip(f"{fuzzer} was not built")
    if not os.path.isdir(models_dir):
        skip(f"{models_dir} missing")
    seeds = fresh_dir(os.path.join(work, "seeds"))
    corpus = fresh_dir(os.path.join(work, "corpus"))
    artifacts = fresh_dir(os.path.join(work, "artifacts")) + os.sep
    print(f"{copy_seeds(models_dir, seeds, suffix)} seed models from {models_dir}")
    cmd = [fuzzer, f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048",
           "-print_final_stats=1", f"-artifact_prefix={artifacts}", *extra, corpus, seeds]
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace")
    lines = p.stdout.splitlines()
    # The progress lines are many; the end says what happened.
    print("\n".join(lines[-60:]))
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", p.stdout)
    found = sorted(os.listdir(artifacts))
    print(f"executions: {runs[-1] if runs else '?'}; exit status {p.returncode}; "
          f"artifacts: {found or 'none'}")
    if p.returncode != 0 or found:
        print(f"FAIL: reproduce with {fuzzer} {artifacts}<artifact>")
        sys.exit(1)


if __name__ == "__main__":
    main()
