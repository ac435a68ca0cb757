#!/bin/sh
# The conformance suite's network cases (tests/conformance, group GROUP: the NETS
# of cases/models.py with its operator cases) run by conform_run on gpu(0)
# (MXK_CONFORM_CTX=gpu:0) against MXNet 1.9.1 on the CPU, with the suite's
# tolerances (compare.py).
# usage: conformance_gpu.sh PYTHON RUNNER CONFDIR GROUP WORKDIR
# Exit 77 (skipped) without a visible GPU (conform_run's check) or without the
# MXNet venv (run.sh's).
set -u
py=$1 runner=$2 conf=$3 group=$4 work=$5
here=$(cd "$(dirname "$0")/../conformance" && pwd)
export MXK_CONFORM_CTX=gpu:0
"$runner" --config-dir "$conf" || exit $?
exec sh "$here/run.sh" "$py" "$here/run.py" --runner "$runner" --config-dir "$conf" \
    --group "$group" --work-dir "$work"
