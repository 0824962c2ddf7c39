#!/usr/bin/env bash
# Builds the examples that live as their own projects against an installed
# libtinyml, the way users build them:
#   - examples/classify with meson (pkg-config, tinyml-compile on PATH, a
#     model compiled at build time), then runs it on ../shared's pictures;
#   - examples/cmake-consumer with CMake (pkg_check_modules), then runs the
#     digits quick start it builds.
# Usage: check_consumers.sh BUILD_DIR [SHARED_DIR]
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shared=${2:-$root/../shared}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
meson install -C "$build" --destdir "$work/root" >/dev/null
pcdir=$(find "$work/root" -name tinyml.pc -printf '%h\n' | head -n1)
bindir=$(dirname "$(find "$work/root" -name tinyml-compile -type f | head -n1)")
libdir=$(dirname "$(find "$work/root" -name 'libtinyml.so*' | head -n1)")
export PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$work/root"
export PATH="$bindir:$PATH" LD_LIBRARY_PATH="$libdir"

echo "check_consumers: cmake consumer"
cmake -S "$root/examples/cmake-consumer" -B "$work/cmake" >/dev/null
cmake --build "$work/cmake" >/dev/null
"$work/cmake/digits" "$root/examples/digits/digits.tflite" "$root/examples/digits/digits_test.bin" 0.9666 |
  tail -n1

echo "check_consumers: examples/classify with meson"
if [ ! -d "$shared/models" ]; then
  if [ "${CI:-}" = true ]; then echo "check_consumers: $shared is missing in CI" >&2; exit 1; fi
  echo "check_consumers: SKIP classify: $shared is missing"
  exit 0
fi
meson setup "$work/classify" "$root/examples/classify" \
  -Dmodel="$shared/models/tflm/person_detect.tflite" >/dev/null
ninja -C "$work/classify" >/dev/null
for pic in person:1 no_person:0; do
  name=${pic%:*} want=${pic#*:}
  out=$("$work/classify/classify" "$work/classify/model.tmlm" \
    "$shared/reference/person_detect/$name.bmp" --top 2 \
    --labels "$root/examples/classify/person_labels.txt")
  echo "$name.bmp -> $(echo "$out" | tr '\n' '|')"
  [ "$(echo "$out" | head -n1 | cut -d' ' -f1)" = "$want" ] ||
    { echo "check_consumers: $name.bmp should give class $want first" >&2; exit 1; }
done
echo "check_consumers: OK"
