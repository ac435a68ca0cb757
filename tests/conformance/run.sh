#!/bin/sh
# Runs run.py with the MXNet 1.9.1 venv's python ($1), or skips (exit 77, ctest's
# SKIP_RETURN_CODE) with the command that creates the venv when it is absent or
# cannot import mxnet. MXNet runs without a sanitizer's LD_PRELOAD.
py=$1
shift
unset LD_PRELOAD
if [ ! -x "$py" ] || ! "$py" -c 'import mxnet' >/dev/null 2>&1; then
    echo "MXNet 1.9.1 venv not found at $py: create it with python3 -m venv V && V/bin/pip install mxnet==1.9.1 \"numpy<1.24\" \"opencv-python-headless<4.9\""
    exit 77
fi
exec "$py" "$@"
