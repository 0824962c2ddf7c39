#!/usr/bin/env bash
# Checks a build made with one backend (-Dbackends=NAME): tinyml-compile
# lists that target alone, compiles a model for it by default and with
# --target, and refuses another target naming the one it has.
set -euo pipefail
build=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
compile="$build/tools/tinyml-compile"
model="$src/tests/e2e/models/conv2d.mlir"
targets=$(sed -n 's/.*built: \([^;]*\);.*/\1/p' <("$compile" --help))
case "$targets" in
  *,*|"") echo "FAIL $build: tinyml-compile lists targets '$targets', expected one" >&2; exit 1 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$compile" "$model" -o "$work/default.tmlm"
"$compile" "$model" --target "$targets" -o "$work/named.tmlm"
cmp "$work/default.tmlm" "$work/named.tmlm"
for other in x86-64 rvv armv7em; do
  [ "$other" = "$targets" ] && continue
  if "$compile" "$model" --target "$other" -o "$work/other.tmlm" 2>"$work/err"; then
    echo "FAIL $build: compiled for '$other', which it was not built with" >&2
    exit 1
  fi
  grep -q "unknown target '$other'; this build has: $targets" "$work/err" || {
    echo "FAIL $build: refusal of '$other' does not name the built target:" >&2
    cat "$work/err" >&2
    exit 1
  }
done
echo "PASS $build: target $targets alone"
