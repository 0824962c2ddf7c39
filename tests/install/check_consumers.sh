#!/usr/bin/env bash
# Builds the examples that live as their own projects against an installed
# libtinyml, the way users build them:
#   - examples/classify with meson (pkg-config, tinyml-compile on PATH, a
#     model compiled at build time), then runs it on ../shared's pictures;
#   - examples/cmake-consumer with CMake twice, through the installed CMake
#     package (find_package(tinyml CONFIG)) and through pkg-config
#     (-DTINYML_USE_PKGCONFIG=ON), running the digits quick start each time;
#     and tests/install/cmake-version, which checks the versions the CMake
#     package accepts;
#   - examples/meson-subproject, libtinyml as a runtime-only meson
#     subproject of another project (check_subproject.sh).
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

digits_args=("$root/examples/digits/digits.tflite" "$root/examples/digits/digits_test.bin" 0.9666)
version=$(sed -n 's/^Version: //p' "$pcdir/tinyml.pc")
cmakedir=$(find "$work/root" -name tinymlConfig.cmake -printf '%h\n' | head -n1)
[ -n "$cmakedir" ] || { echo "check_consumers: tinymlConfig.cmake was not installed" >&2; exit 1; }
prefix=$(cd "$(dirname "$bindir")" && pwd) # the staged <prefix>

echo "check_consumers: cmake consumer, find_package(tinyml CONFIG) from $prefix"
# Configured without PKG_CONFIG_PATH or LD_LIBRARY_PATH, so only the CMake
# package can find the library, and the program finds it by the RUNPATH
# CMake gives it from the imported target.
env -u PKG_CONFIG_PATH cmake -S "$root/examples/cmake-consumer" -B "$work/cmake-config" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake-config.log" ||
  { cat "$work/cmake-config.log" >&2; exit 1; }
grep -qF -- "-- libtinyml $version from $cmakedir" "$work/cmake-config.log" ||
  { echo "check_consumers: CMake did not use $cmakedir:" >&2; cat "$work/cmake-config.log" >&2; exit 1; }
cmake --build "$work/cmake-config" >/dev/null
# ldd's output is kept first: with pipefail, grep -q closing the pipe early
# would fail the check by ldd's SIGPIPE when the match comes before the end.
ldd "$work/cmake-config/digits" >"$work/ldd.txt"
grep -qF "=> $libdir/libtinyml.so" "$work/ldd.txt" ||
  { echo "check_consumers: digits does not load the staged libtinyml" >&2; ldd "$work/cmake-config/digits" >&2; exit 1; }
env -u LD_LIBRARY_PATH "$work/cmake-config/digits" "${digits_args[@]}" | tail -n1

echo "check_consumers: cmake consumer, pkg-config (-DTINYML_USE_PKGCONFIG=ON)"
cmake -S "$root/examples/cmake-consumer" -B "$work/cmake-pc" -DTINYML_USE_PKGCONFIG=ON >/dev/null
cmake --build "$work/cmake-pc" >/dev/null
"$work/cmake-pc/digits" "${digits_args[@]}" | tail -n1

echo "check_consumers: versions the CMake package accepts (tinyml $version)"
cmake -S "$here/cmake-version" -B "$work/cmake-version" -DCONFIG_DIR="$cmakedir" \
  -DWANT="$version" >"$work/cmake-version.log" 2>&1 ||
  { cat "$work/cmake-version.log" >&2; exit 1; }
grep -c 'as expected' "$work/cmake-version.log" | sed 's/$/ requests answered as expected/'

echo "check_consumers: examples/meson-subproject (libtinyml as a runtime-only subproject)"
bash "$here/check_subproject.sh" "$bindir/tinyml-compile"

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
