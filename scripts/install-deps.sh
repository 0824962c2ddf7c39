#!/usr/bin/env bash
# Installs everything libtinyml needs to build and test, from Debian's
# packages.  Safe to run again: apt-get skips what is already there.
# With --bench, also what bench/run.py needs beyond that: numpy and onnx
# for ../shared/tools/models/gen_models.py (run by /usr/bin/python3), and
# Node.js with npm for the peers (../shared/tools/reference).
set -euo pipefail

packages=(
  build-essential meson ninja-build pkg-config python3
  llvm-22 llvm-22-dev libmlir-22-dev mlir-22-tools clang-22 lld-22
  flatbuffers-compiler libcmocka-dev libclang-rt-22-dev
  libprotobuf-c-dev protobuf-c-compiler libonnx-dev libonnx-testdata
  # the CMake consumer example (examples/cmake-consumer)
  cmake
  # the rvv target: riscv64 cross compiler and C library, qemu-riscv64
  gcc-riscv64-linux-gnu libc6-dev-riscv64-cross qemu-user
  # the armv7em target: bare-metal Arm toolchain, newlib, qemu-system-arm
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
)
if [ "${1:-}" = "--bench" ]; then
  packages+=(python3-numpy python3-onnx)
  # a machine may carry its own node; Debian's is only the fallback
  command -v npm >/dev/null || packages+=(nodejs npm)
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi

echo "install-deps: apt-get update"
$sudo apt-get update -qq
echo "install-deps: installing ${packages[*]}"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
  "${packages[@]}" >/dev/null
echo "install-deps: done"
