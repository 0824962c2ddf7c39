#!/usr/bin/env python3
"""Runs the conformance runner on a directory of our own cases and fails
unless every case passes (a refusal fails too, unlike the Debian suite).

Usage: run_cases.py RUNNER DATA_DIR SUITE
"""
import subprocess
import sys


def main():
    runner, data, suite = sys.argv[1:4]
    r = subprocess.run([runner, data, "--suites", suite, "--jobs", "1"],
                       capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    lines = [l for l in r.stdout.splitlines() if l.split(" ")[0] in ("PASS", "FAIL", "UNSUPPORTED")]
    bad = [l for l in lines if not l.startswith("PASS")]
    if r.returncode or bad or not lines:
        print("%d of %d cases did not pass" % (len(bad), len(lines)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
