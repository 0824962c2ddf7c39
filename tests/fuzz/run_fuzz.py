#!/usr/bin/env python3
"""Runs a libFuzzer target (tests/fuzz) on seed corpora and fails if it
finds a crash, a leak, a timeout or an OOM.  Every seed runs once first
(the replay of the checked-in corpus), then libFuzzer mutates for SECONDS.

Usage:
  run_fuzz.py FUZZER SEED_DIRS WORK_DIR [--time SECONDS] [--suffix SUFFIX]
              [--timeout SECONDS] [LIBFUZZER_ARGS...]
  run_fuzz.py --unavailable REASON

SEED_DIRS is one directory or several joined by ':', the checked-in
corpus (tests/fuzz/corpus/NAME) first: every file of the first is a seed
(the inputs long runs found are named by their SHA-1, with no suffix); in
the others (e.g. ../shared/models) the files ending in SUFFIX (default
.tflite; '' for all).  --timeout is libFuzzer's
per-input limit (default 10 s).

WORK_DIR (in the build directory) gets:
  seeds/      every seed file, copied afresh on each run
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
            if name.endswith(suffix) and name != "README.md":
                shutil.copyfile(os.path.join(root, name), os.path.join(seeds, name))
                count += 1
    return count


def main():
    args = sys.argv[1:]
    if args[:1] == ["--unavailable"]:
        skip(" ".join(args[1:]) or "the fuzzer is unavailable")
    if len(args) < 3:
        sys.exit(__doc__)
    fuzzer, seed_dirs, work = args[:3]
    extra = args[3:]
    opts = {"--time": "30", "--suffix": ".tflite", "--timeout": "10"}
    while extra[:1] and extra[0] in opts:
        opts[extra[0]], extra = extra[1], extra[2:]
    seconds, suffix, timeout = opts["--time"], opts["--suffix"], opts["--timeout"]
    if not os.path.exists(fuzzer):
        skip(f"{fuzzer} was not built")
    for d in seed_dirs.split(":"):
        if not os.path.isdir(d):
            skip(f"{d} missing")
    seeds = fresh_dir(os.path.join(work, "seeds"))
    corpus = fresh_dir(os.path.join(work, "corpus"))
    artifacts = fresh_dir(os.path.join(work, "artifacts")) + os.sep
    for i, d in enumerate(seed_dirs.split(":")):
        print(f"{copy_seeds(d, seeds, suffix if i else '')} seeds from {d}")
    cmd = [fuzzer, f"-max_total_time={seconds}", f"-timeout={timeout}", "-rss_limit_mb=3072",
           "-print_final_stats=1", f"-artifact_prefix={artifacts}", *extra, corpus, seeds]
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace")
    lines = p.stdout.splitlines()
    # The progress lines are many; the end says what happened.
    print("\n".join(lines[-60:]))
    runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", p.stdout)
    # slow-unit-* files (an input over 10 s, under -timeout) are news, not
    # failures: a compile of a larger model may take that long.
    slow = sorted(f for f in os.listdir(artifacts) if f.startswith("slow-unit-"))
    if slow:
        print(f"slow inputs (under the timeout): {slow}")
    found = sorted(f for f in os.listdir(artifacts) if not f.startswith("slow-unit-"))
    print(f"executions: {runs[-1] if runs else '?'}; exit status {p.returncode}; "
          f"artifacts: {found or 'none'}")
    if p.returncode != 0 or found:
        print(f"FAIL: reproduce with {fuzzer} {artifacts}<artifact>")
        sys.exit(1)


if __name__ == "__main__":
    main()
