#!/bin/sh
# Installs the Debian 12 packages mxk builds and runs with (idempotent).
# Kernel: Jansson, inih, zlib. cpu-blas: OpenBLAS. onednn: oneDNN (libdnnl-dev, 2.6).
# io-recordio images: libjpeg-turbo (TurboJPEG), libpng, stb_image_resize (libstb).
# Trainer data: Fashion-MNIST. Image tests: photos of mate-backgrounds, PIL and djpeg
# (python3-pil, libjpeg-turbo-progs) as independent decoders. The char-LSTM's default
# text: fortunes. Man pages: help2man (generated from --help at build time).
# Open MPI for the dist label: the kvstore-dist plugin (libopenmpi-dev) and mpirun
# (openmpi-bin) of the distributed-training tests (docs/distributed.md).
# Tests: clang + compiler-rt for the libFuzzer targets; python3-venv and pip for the
# MXNet 1.9.1 venv of the conformance suite (.ci/run). Run as root or with sudo.
set -eu
pkgs="cmake make gcc pkg-config libjansson-dev libinih-dev zlib1g-dev libopenblas-dev
      dataset-fashion-mnist clang libclang-rt-14-dev python3-venv python3-pip libdnnl-dev
      help2man libplplot-dev plplot-driver-cairo libturbojpeg0-dev libpng-dev libstb-dev
      python3-pil libjpeg-turbo-progs mate-backgrounds fortunes libopenmpi-dev openmpi-bin"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
