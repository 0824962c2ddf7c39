#!/usr/bin/env bash
# Configures and builds libtinyml in ${BUILD_DIR:-build}.  Extra arguments go
# to `meson setup`.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$@"
else
  meson configure "$build" "$@" >/dev/null
fi
ninja -C "$build"
