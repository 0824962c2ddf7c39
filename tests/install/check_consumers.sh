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
if [ -d "$shared" ]; then shared=$(cd "$shared" && pwd); fi # meson resolves -Dmodel from its source dir
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
meson install -C "$build" --destdir "$work/root" >/dev/null
pcdir=$(find "$work/root" -name tinyml.pc -printf '%h\n' | head -n1)
bindir=$(dirname "$(find "$work/root" -name tinyml-compile -type f | head -n1)")
libdir=$(dirname "$(find "$work/root" -name 'libtinyml.so*' | head -n1)")
# Relocate the .pc into the temp root the way a packager would: CMake's
# imported targets do not apply PKG_CONFIG_SYSROOT_DIR to every path.
mkdir -p "$work/pc"
sed "s|^prefix=\(.*\)|prefix=$work/root\1|" "$pcdir/tinyml.pc" >"$work/pc/tinyml.pc"
export PKG_CONFIG_PATH="$work/pc"
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
# The shared BMPs hold the model's int8 input bytes; the photos are byte ^ 0x80
# (see tests/e2e/test_examples.py).
for name in person no_person; do
  python3 -c "import sys; sys.path.insert(0, '$root/tests/e2e'); import test_examples as t; \
t.photo('$shared/reference/person_detect/$name.bmp', '$work/$name.bmp', 96, 96, 8)"
done
for pic in person:1 no_person:0; do
  name=${pic%:*} want=${pic#*:}
  out=$("$work/classify/classify" "$work/classify/model.tmlm" "$work/$name.bmp" --top 2 \
    --labels "$root/examples/classify/person_labels.txt")
  echo "$name.bmp -> $(echo "$out" | tr '\n' '|')"
  [ "$(echo "$out" | head -n1 | cut -d' ' -f1)" = "$want" ] ||
    { echo "check_consumers: $name.bmp should give class $want first" >&2; exit 1; }
done
echo "check_consumers: OK"
