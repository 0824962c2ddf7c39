#!/usr/bin/env bash
# Quick start: install dependencies, build, and run the bundled example, which
# compiles the repo's model with libtinyml and prints its results.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/examples/hello/hello examples/hello/model.mlir
