#!/usr/bin/env bash
# Builds examples/meson-subproject the way a meson user would use libtinyml:
# as a subproject (its subprojects/tinyml.wrap, [provide] tinyml), built
# runtime-only, with the digits model compiled beforehand by tinyml-compile.
# The subproject is this source tree, symlinked where the wrap would clone
# it, so no network is needed and uncommitted changes are what is tested.
# Then runs digits on the compiled module, and checks that the program loads
# the subproject's libtinyml and that it has no compiler.  Last, installs
# that runtime-only libtinyml and links examples/cmake-consumer to its
# tinyml::tinyml_static.
# Usage: check_subproject.sh [TINYML_COMPILE]   (default: the one on PATH)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
compile=${1:-$(command -v tinyml-compile || true)}
[ -x "$compile" ] || { echo "check_subproject: no tinyml-compile (pass one, or put it on PATH)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The example uses ../digits, as in the source tree.
mkdir -p "$work/src"
cp -r "$root/examples/meson-subproject" "$root/examples/digits" "$work/src/"
rm -rf "$work/src/meson-subproject/subprojects/tinyml" # a clone by an in-tree setup
ln -s "$root" "$work/src/meson-subproject/subprojects/tinyml"

# --force-fallback-for: an installed libtinyml that pkg-config finds must not
# stand in for the subproject.
PATH="$(dirname "$compile"):$PATH" meson setup "$work/build" "$work/src/meson-subproject" \
  --force-fallback-for=tinyml >"$work/setup.log" 2>&1 ||
  { cat "$work/setup.log" >&2; exit 1; }
grep -q '^Dependency tinyml found: YES .*(overridden)' "$work/setup.log" ||
  { echo "check_subproject: dependency('tinyml') did not come from the subproject:" >&2
    cat "$work/setup.log" >&2; exit 1; }
ninja -j2 -C "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }

digits=("$work/build/digits" "$work/build/digits.tmlm" "$root/examples/digits/digits_test.bin")
lib=$(env -u LD_LIBRARY_PATH ldd "${digits[0]}" | sed -n 's/^\s*libtinyml\.so\.[0-9]* => \(\S*\).*/\1/p')
case "$lib" in
  "$work/build/subprojects/tinyml/"*) echo "check_subproject: digits links the subproject's ${lib#"$work/build/"}" ;;
  *) echo "check_subproject: digits loads '$lib', not the subproject's libtinyml" >&2; exit 1 ;;
esac
# Runtime-only: the subproject's library must refuse to compile the .tflite.
if out=$(env -u LD_LIBRARY_PATH "${digits[0]}" "$root/examples/digits/digits.tflite" "${digits[2]}" 2>&1); then
  echo "check_subproject: the runtime-only subproject compiled a model: $out" >&2
  exit 1
fi
grep -q 'built without the compiler' <<<"$out" ||
  { echo "check_subproject: unexpected error: $out" >&2; exit 1; }
env -u LD_LIBRARY_PATH "${digits[@]}" 0.9666 | tail -n1

# The runtime-only install also has the CMake package with the static
# archive: examples/cmake-consumer -DTINYML_STATIC=ON links it.
meson install -C "$work/build" --destdir "$work/root" >/dev/null
prefix=$(dirname "$(dirname "$(find "$work/root" -name tinyml-run -type f | head -n1)")")
cmake -S "$root/examples/cmake-consumer" -B "$work/cmake" -DTINYML_STATIC=ON \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log" >&2; exit 1; }
grep -qF -- "from $prefix/" "$work/cmake.log" ||
  { echo "check_subproject: CMake did not use the package under $prefix:" >&2; cat "$work/cmake.log" >&2; exit 1; }
cmake --build "$work/cmake" >"$work/cmake-build.log" 2>&1 || { cat "$work/cmake-build.log" >&2; exit 1; }
# Not `ldd | grep -q`: under pipefail, ldd's SIGPIPE would make the test
# pass whenever grep found the library early.
env -u LD_LIBRARY_PATH ldd "$work/cmake/digits" >"$work/ldd.txt"
if grep -q libtinyml "$work/ldd.txt"; then
  echo "check_subproject: digits from tinyml::tinyml_static loads a shared libtinyml" >&2; exit 1
fi
echo "check_subproject: CMake tinyml::tinyml_static:"
env -u LD_LIBRARY_PATH "$work/cmake/digits" "${digits[1]}" "${digits[2]}" 0.9666 | tail -n1
echo "check_subproject: OK (meson subproject, runtime-only, digits.tmlm from $compile)"
