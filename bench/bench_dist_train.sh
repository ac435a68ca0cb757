#!/bin/bash
# Distributed training throughput of `mxk train` with 2 workers on this machine,
# beside MXNet 1.9.1 (ps-lite, bench/dist_mxnet.py) in the same run, and the
# split of an iteration into compute and communication (docs/distributed.md).
#
# usage: bench/bench_dist_train.sh BUILD_DIR [ROUNDS] [MXNET_PYTHON]
#
# For the MLP (30,000 examples) and LeNet (6,000), batch 50 per worker, one BLAS
# thread per process, ROUNDS (3) alternating rounds of:
#   compute  one mxk process on half the examples, no KVStore, on one core
#            (taskset -c 0: a worker's share of this 2-core machine; mxk's engine
#            would use both cores otherwise): a worker's work without exchange;
#   sync     mpirun -np 2 mxk train --kv-store dist_sync;
#   async    mpirun -np 3 mxk train --kv-store dist_async (2 workers, 1 server);
#   mx-sync / mx-async  MXNet's Module with kvstore dist_sync / dist_async, ps-lite
#            with 1 server and a scheduler on loopback (skipped without
#            MXNET_PYTHON, default V/bin/python or /tmp/V/bin/python).
# Prints the medians of rank 0's training samples/s, the total (2 workers), the
# ratio to MXNet and, per iteration, compute = batch / compute samples/s and
# communication = the rest of a sync (async) iteration.
set -u
build=${1:?usage: bench_dist_train.sh BUILD_DIR [ROUNDS] [MXNET_PYTHON]}
rounds=${2:-3}
py=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
[ -n "$py" ] || for p in "$here/../V/bin/python" /tmp/V/bin/python; do [ -x "$p" ] && py=$p && break; done
mxk="$build/bin/mxk"
conf="$build/etc/mxk"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MXNET_CPU_WORKER_NTHREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
batch=50

# samples/s of rank 0's "Summary:" line in log file $1
summary_sps() { sed -n 's/^Summary: .* s, \([0-9.]*\) samples\/s.*/\1/p' "$1" | tail -1; }
# mpirun on loopback, rank R's stderr in $tmp/log.R
mpr() {
    MXK_KVSTORE_TIMEOUT=60 timeout 300 mpirun --oversubscribe -np "$1" --mca pml ob1 \
        --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
        sh -c 'exec "$0" "$@" 2>'"$tmp"'/log.$OMPI_COMM_WORLD_RANK' "${@:2}" >/dev/null
}
# MXNet ps-lite job: scheduler, 1 server, 2 workers; mean of the workers' samples/s
mxnet_run() { # net kvstore examples
    local port=$((9100 + RANDOM % 800))
    export DMLC_PS_ROOT_URI=127.0.0.1 DMLC_PS_ROOT_PORT=$port DMLC_NUM_SERVER=1 \
        DMLC_NUM_WORKER=2 DMLC_INTERFACE=lo
    DMLC_ROLE=scheduler timeout 300 "$py" -c "import mxnet" >/dev/null 2>&1 &
    DMLC_ROLE=server timeout 300 "$py" -c "import mxnet" >/dev/null 2>&1 &
    for r in 0 1; do
        DMLC_ROLE=worker timeout 300 "$py" "$here/dist_mxnet.py" "$1" "$2" $batch "$3" \
            >"$tmp/mx.$r" 2>/dev/null &
    done
    wait
    cat "$tmp/mx.0" "$tmp/mx.1" | grep -o '"train_sps": [0-9.]*' | sed 's/.*: //' |
        awk '{ s += $1 } END { if (NR == 2) print s / 2 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

for net in mlp lenet; do
    examples=30000
    [ "$net" = lenet ] && examples=6000
    common=(--config-dir "$conf" train --network "$net" --batch-size $batch --num-epochs 1
        --disp-batches 0 --mom 0)
    for ((i = 0; i < rounds; i++)); do
        taskset -c 0 "$mxk" "${common[@]}" --num-examples $((examples / 2)) 2>"$tmp/log.c" >/dev/null
        summary_sps "$tmp/log.c" >>"$tmp/$net.compute"
        mpr 2 "$mxk" "${common[@]}" --num-examples $examples --kv-store dist_sync
        summary_sps "$tmp/log.0" >>"$tmp/$net.sync"
        mpr 3 "$mxk" "${common[@]}" --num-examples $examples --kv-store dist_async
        summary_sps "$tmp/log.0" >>"$tmp/$net.async"
        if [ -n "$py" ]; then
            mxnet_run "$net" dist_sync $examples >>"$tmp/$net.mxsync"
            mxnet_run "$net" dist_async $examples >>"$tmp/$net.mxasync"
        fi
    done
    c=$(median <"$tmp/$net.compute")
    echo "== $net: batch $batch per worker, $examples examples, median of $rounds rounds"
    echo "compute only (1 process on 1 core, half the examples): $c samples/s," \
        "$(awk -v c="$c" -v b=$batch 'BEGIN { printf "%.2f", 1000 * b / c }') ms per iteration"
    printf '%-10s %14s %12s %14s %14s %12s\n' kvstore "worker samp/s" total "mxnet worker" "ratio mxk/mx" \
        "comm ms/it"
    for kind in sync async; do
        w=$(median <"$tmp/$net.$kind")
        m=$( [ -s "$tmp/$net.mx$kind" ] && median <"$tmp/$net.mx$kind" || echo 0)
        awk -v k="dist_$kind" -v w="$w" -v m="$m" -v c="$c" -v b=$batch 'BEGIN {
            r = "-"
            if (m > 0) r = sprintf("%.2f", w / m)
            printf "%-10s %14.1f %12.1f %14.1f %14s %12.2f\n", k, w, 2 * w, m, r, 1000 * (b / w - b / c) }'
    done
done
