#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds a C program that only
# includes <tinyml.h> and links through `pkg-config --cflags --libs tinyml`,
# then runs it on a model: the way a user consumes libtinyml.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
meson install -C "$build" --destdir "$prefix" >/dev/null
inst=$(find "$prefix" -name tinyml.pc -printf '%h\n' | head -n1)
[ -n "$inst" ] || { echo "check_install: tinyml.pc was not installed" >&2; exit 1; }
sysroot_prefix=$(cd "$inst/../.." && pwd)
# The .pc file names the configured prefix; relocate it into the temp dir.
export PKG_CONFIG_PATH="$inst"
export PKG_CONFIG_SYSROOT_DIR="$prefix"
flags=$(pkg-config --cflags --libs tinyml)
echo "check_install: pkg-config --cflags --libs tinyml -> $flags"
cc -std=c11 -Wall -Wextra -Werror -o "$prefix/consumer" "$here/consumer.c" $flags -lm
libdir=$(dirname "$(find "$prefix" -name 'libtinyml.so*' | head -n1)")
LD_LIBRARY_PATH="$libdir" "$prefix/consumer" "$root/tests/e2e/models/matmul.mlir"
for tool in tinyml-compile tinyml-run; do
  [ -n "$(find "$prefix" -name "$tool" -type f)" ] || { echo "check_install: $tool not installed" >&2; exit 1; }
done
echo "check_install: OK (installed under $sysroot_prefix)"
