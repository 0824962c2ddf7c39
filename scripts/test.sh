#!/usr/bin/env bash
# Installs dependencies, builds, and runs the whole test suite: unit and
# end-to-end tests (meson test), a clang build with warnings as errors, and
# an install + pkg-config consumer check.  Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

echo "== gcc build with tests (sanitized robustness tests included)"
BUILD_DIR=build bash scripts/build.sh -Dsanitize_tests=true
meson test -C build --print-errorlogs --num-processes 2

echo "== clang-22 build (warnings are errors)"
rm -rf build-clang
CC=clang-22 meson setup build-clang -Dtests=true >/dev/null
ninja -C build-clang

echo "== install and build a consumer with pkg-config"
bash tests/install/check_install.sh build
echo "test.sh: all tests passed"
