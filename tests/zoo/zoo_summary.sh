#!/bin/sh
# `mxk symbol summary` on every fixture of tests/zoo/fixtures/ prints the "Total
# params" that MXNet 1.9.1's print_summary printed for it (NAME.params.txt:
# "data=N,C,H,W TOTAL", written by gen_fixtures.py).
# usage: zoo_summary.sh MXK CONFDIR FIXTURE_DIR
set -u
mxk=$1 conf=$2 dir=$3
status=0
for f in "$dir"/*.params.txt; do
    name=$(basename "$f" .params.txt)
    read -r shape want <"$f"
    got=$("$mxk" --config-dir "$conf" symbol summary "$dir/$name.json" --shape "$shape" 2>&1 |
        sed -n 's/^Total params: //p')
    if [ "$got" = "$want" ]; then
        echo "ok: $name $got"
    else
        echo "FAIL: $name: mxk '$got', MXNet $want" >&2
        status=1
    fi
done
exit $status
