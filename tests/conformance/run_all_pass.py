#!/usr/bin/env python3
"""Runs the conformance runner on a folder of cases written for operators
we implement (e.g. loss_cases/), where a refusal is a failure too: each
case must PASS, and there must be at least one.

Usage: run_all_pass.py RUNNER DATA_DIR SUITE
"""
import subprocess
import sys


def main():
    runner, data, suite = sys.argv[1:4]
    r = subprocess.run([runner, data, "--suites", suite, "--jobs", "2"],
                       capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    lines = [l for l in r.stdout.splitlines() if l.split(" ", 1)[0] in ("PASS", "FAIL", "UNSUPPORTED")]
    bad = [l for l in lines if not l.startswith("PASS ")]
    if r.returncode or not lines or bad:
        print("not every case passed: %d of %d" % (len(bad), len(lines)) if lines else "no cases ran")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
