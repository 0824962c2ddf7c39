#!/bin/sh
# Builds and runs bench_prepost: fused pre/post-processing against the same
# stages as C loops and as separate modules, side by side, as one table.
#
#   bench/prepost/run.sh [BUILD_DIR] [MODEL] [RUNS]
#
# BUILD_DIR (default build/) is configured and built if it has no
# libtinyml.so.  MODEL defaults to ../shared's person_detect.tflite.
# Timings on a shared machine are noisy: compare the ratios.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
model=${2:-$root/../shared/models/tflm/person_detect.tflite}
runs=${3:-300}
if [ ! -f "$build/bindings-c/libtinyml.so" ]; then
  [ -f "$build/build.ninja" ] || meson setup "$build" "$root" >/dev/null
  ninja -C "$build" bindings-c/libtinyml.so >/dev/null
fi
# The same flags for the C loops as the tests use (no FMA contraction keeps
# their results identical to the fused graph's), at -O3 for this CPU.
${CC:-cc} -std=c11 -O3 -march=native -ffp-contract=off -Wall -Wextra \
  -I"$root/include" -I"$build" -I"$root/tests/compiler" \
  "$here/bench_prepost.c" "$root/tests/compiler/test_prepost_ref.c" \
  -L"$build/bindings-c" -ltinyml -Wl,-rpath,"$build/bindings-c" -lm \
  -o "$build/bench_prepost"
exec "$build/bench_prepost" "$model" "$here/stages" "$runs"
