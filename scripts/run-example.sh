#!/usr/bin/env bash
# Quick start: install dependencies, build, and run the bundled example: the
# repo's own digits model (examples/digits), compiled with libtinyml and run
# on the 360 digits held back from its training; it prints the accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/examples/digits/digits examples/digits/digits.tflite examples/digits/digits_test.bin
