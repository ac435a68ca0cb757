#!/bin/sh
# End-to-end tests of `mxk train --kv-store dist_sync` on Fashion-MNIST under
# Open MPI (docs/distributed.md): two workers on the loopback interface only.
# usage: train_dist.sh CASE MXK CONFDIR WORKDIR
# Exit 77 (skipped) when mpirun or /usr/share/datasets/fashion-mnist is missing.
# tests/dist/CMakeLists.txt sets the environment (mpi_env: running as root, the
# LeakSanitizer suppressions of Open MPI).
set -u
case_name=$1 mxk=$2 conf=$3 work=$4
data=${MXK_TEST_FMNIST:-/usr/share/datasets/fashion-mnist}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v mpirun >/dev/null 2>&1 || { echo "skipped: no mpirun (Open MPI)"; exit 77; }
[ -r "$data/train-images-idx3-ubyte.gz" ] || { echo "skipped: no $data"; exit 77; }
# one BLAS thread per worker: two workers share the machine's cores
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
# metric value of the last "Epoch[E] KIND-accuracy=V" line of a log
last_acc() { grep "$2-accuracy=" "$1" | tail -1 | sed 's/.*=//'; }
# 2 workers, loopback only; each rank's stderr into log.RANK
dist2() {
    MXK_KVSTORE_TIMEOUT=20 timeout 50 mpirun --oversubscribe -np 2 --mca pml ob1 --mca btl self,tcp \
        --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
        sh -c 'exec "$0" "$@" 2>log.$OMPI_COMM_WORLD_RANK' \
        "$mxk" --config-dir "$conf" train --kv-store dist_sync "$@"
}

case $case_name in
train_dist_sync)
    # 2 workers x batch 32 on 6,000 examples each against one process with batch 64
    # on 12,000: the same number of updates of the same total batch and learning
    # rate (rescale_grad 1/64 either way), different examples and order.
    dist2 --num-examples 12000 --batch-size 32 --num-epochs 1 --disp-batches 50 \
        --model-prefix ck/r{rank} --metrics-log m.jsonl >out.txt ||
        { cat log.0 log.1; fail "mpirun mxk train failed"; }
    cat log.0
    grep -qx "rank 0 of 2" log.0 || fail "no 'rank 0 of 2' line in rank 0's log"
    grep -qx "rank 1 of 2" log.1 || fail "no 'rank 1 of 2' line in rank 1's log"
    grep -q '^Epoch\[0\] Batch \[50\]	Speed: ' log.0 || fail "rank 0 has no Speedometer line"
    ! grep -q '^Epoch\[' log.1 || fail "rank 1 logs epochs at info level: $(cat log.1)"
    # each worker trained on its half
    grep -q '^Trained on 6000 examples per epoch, validated on 10000$' log.0 ||
        fail "rank 0 did not train on 6000 examples"
    [ "$(wc -l <m.jsonl)" -eq 1 ] || fail "the metrics log needs one line (rank 0's)"
    # the parameters after training: byte for byte the same on both workers
    [ -s ck/r0-0001.params ] && [ -s ck/r1-0001.params ] || fail "missing per-rank checkpoints"
    cmp ck/r0-0001.params ck/r1-0001.params || fail "parameters differ between the workers"
    "$mxk" --config-dir "$conf" train --num-examples 12000 --batch-size 64 --num-epochs 1 \
        --disp-batches 0 >out1.txt 2>log.single || { cat log.single; fail "one process failed"; }
    a2=$(last_acc log.0 Validation) a1=$(last_acc log.single Validation)
    echo "validation accuracy: 2 workers $a2, one process $a1"
    # measured (seeds 0 to 4): one process 0.743 to 0.786, 2 workers (seeds 0 to 2)
    # 0.747 to 0.775, seed 0 0.768 and 0.775; 0.05 is that seed-to-seed spread
    awk -v a="$a2" -v b="$a1" 'BEGIN { d = a - b; exit !(d < 0.05 && d > -0.05) }' ||
        fail "2 workers reach $a2, one process $a1: more than 0.05 apart"
    ;;
train_dist_2bit)
    # --gc-type 2bit (threshold 0.5) on 2 workers: every worker sums the same
    # dequantised codes, so the parameters stay byte for byte the same, and it
    # still learns. Without momentum (--mom 0): with fit.py's 0.9 the bursts of
    # +-threshold that the residuals release are amplified and 1 epoch reaches only
    # 0.13 (measured). Measured with --mom 0, seeds 0 to 2: 0.766 to 0.786 (no
    # compression: 0.734 to 0.754); chance is 0.1.
    dist2 --gc-type 2bit --mom 0 --num-examples 12000 --batch-size 32 --num-epochs 1 \
        --disp-batches 0 --model-prefix ck/r{rank} >out.txt ||
        { cat log.0 log.1; fail "mpirun mxk train --gc-type 2bit failed"; }
    cat log.0
    cmp ck/r0-0001.params ck/r1-0001.params || fail "parameters differ between the workers"
    a=$(last_acc log.0 Validation)
    awk -v a="$a" 'BEGIN { exit !(a > 0.6) }' || fail "2bit reaches $a, not above 0.6"
    # without a dist store: refused before any work
    "$mxk" --config-dir "$conf" train --gc-type 2bit --num-examples 64 >out1.txt 2>err.txt &&
        fail "--gc-type 2bit ran with the local store"
    grep -q "^mxk train: --gc-type 2bit needs a dist --kv-store (dist_sync, dist_device_sync or dist_async under mpirun), not 'local': it compresses what the workers send$" err.txt ||
        fail "no 'needs a dist --kv-store' error: $(cat err.txt)"
    ;;
train_dist_rank0_saves)
    # without {rank} in the prefix only rank 0 saves; MXK_LOG_LEVEL=debug shows
    # rank 1's training log
    MXK_LOG_LEVEL=debug dist2 --num-examples 256 --batch-size 32 --num-epochs 1 \
        --disp-batches 0 --model-prefix ck/m >out.txt || { cat log.0 log.1; fail "mpirun failed"; }
    grep -q '^Saved checkpoint to "ck/m-0001.params"$' log.0 || fail "rank 0 did not save"
    grep -q '^Epoch\[0\] Train-accuracy=' log.1 || fail "rank 1 logs nothing at debug level"
    ! grep -q '^Saved checkpoint' log.1 || fail "rank 1 saved a checkpoint"
    [ "$(ls ck)" = "$(printf 'm-0001.params\nm-0001.states\nm-symbol.json')" ] ||
        fail "unexpected files: $(ls ck)"
    ;;
train_dist_async)
    # dist_async: 2 workers and a server (the last rank) under mpirun -np 3. The
    # server prints its role and ends when both workers are done; the workers train
    # on their halves with the optimizer on the server (update_on_kvstore).
    # Momentum 0 (with momentum 0.9 and lr 0.1 the stale updates of 2 async workers
    # diverge: 0.11 validation accuracy, as docs/distributed.md says). Measured over
    # seeds 0-2: 0.748, 0.764, 0.789; one process, batch 32 on the same 12000 examples
    # (the same number of updates): 0.749, 0.790, 0.790.
    MXK_KVSTORE_TIMEOUT=20 timeout 80 mpirun --oversubscribe -np 3 --mca pml ob1 \
        --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
        sh -c 'exec "$0" "$@" 2>log.$OMPI_COMM_WORLD_RANK' \
        "$mxk" --config-dir "$conf" train --kv-store dist_async --num-examples 12000 \
        --batch-size 32 --num-epochs 1 --disp-batches 0 --mom 0 --model-prefix ck/r{rank} \
        >out.txt || { cat log.0 log.1 log.2; fail "mpirun mxk train dist_async failed"; }
    cat log.0 log.2
    grep -qx "rank 0 of 2" log.0 || fail "no 'rank 0 of 2' line in rank 0's log"
    grep -qx "rank 1 of 2" log.1 || fail "no 'rank 1 of 2' line in rank 1's log"
    grep -qx "server 0 of the dist_async store, for 2 workers" log.2 || fail "no server line"
    grep -qx "server 0: every worker is done" log.2 || fail "the server did not end cleanly"
    grep -q '^Optimizer states live on the KVStore servers: not saved$' log.0 ||
        fail "rank 0 tried to save optimizer states"
    [ -s ck/r0-0001.params ] && [ -s ck/r1-0001.params ] || fail "missing per-rank checkpoints"
    a=$(last_acc log.0 Validation)
    echo "dist_async validation accuracy: $a"
    awk -v a="$a" 'BEGIN { exit !(a > 0.65) }' || fail "dist_async reaches only $a"
    ;;
train_dist_no_mpirun)
    # a dist type without mpirun: the plugin's message through mxk train
    env -u OMPI_COMM_WORLD_SIZE -u PMIX_RANK -u PMI_SIZE "$mxk" --config-dir "$conf" train \
        --kv-store dist_sync --num-examples 64 --num-epochs 1 >out.txt 2>err.txt &&
        fail "mxk train --kv-store dist_sync ran without mpirun"
    cat err.txt
    grep -qx "mxk: error: KVStore 'dist_sync': transport 'dist_sync' create: KVStore 'dist_sync' needs an MPI launch: mpirun -np N mxk train --kv-store dist_sync ... (see docs/distributed.md)" err.txt ||
        fail "no 'needs an MPI launch' error: $(cat err.txt)"
    ;;
*)
    fail "unknown case $case_name"
    ;;
esac
echo PASS
