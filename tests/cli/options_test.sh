#!/bin/sh
# Option values of `mxk train` and `mxk score` (tools/mxk/parse.c): numbers out of
# range and malformed lists are usage errors (exit 2) with an exact message, reported
# before any data is read (the data dir given is empty).
#
#   options_test.sh MXK BUILD_CONFIG_DIR WORK_DIR
# POSIX sh only.
set -u
if [ $# -ne 3 ]; then
    echo "usage: options_test.sh MXK BUILD_CONFIG_DIR WORK_DIR" >&2
    exit 2
fi
MXK=$1 CONF=$2 WORK=$3 CASE=option_values
. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK" empty

run() {
    last="$*"
    rc=0
    "$MXK" --config-dir "$CONF" "$@" --data-dir "$WORK/empty" >"$OUT" 2>"$ERR" || rc=$?
}

# usage_error MESSAGE ARGS...: `mxk ARGS` exits 2 and its first stderr line is MESSAGE.
usage_error() {
    want=$1
    shift
    run "$@"
    expect_rc 2
    err_first "$want"
}

# K of top_k_accuracy_K past int32 (atoi made 99999999999 into 1215752191).
usage_error "mxk score: bad --metrics entry 'top_k_accuracy_99999999999': K must be an integer up to 2147483647" \
    score --metrics top_k_accuracy_99999999999
usage_error "mxk train: bad --metrics entry 'top_k_accuracy_5x': K must be an integer up to 2147483647" \
    train --metrics acc,top_k_accuracy_5x
usage_error "mxk score: Please use Accuracy if top_k is no more than 1" \
    score --metrics top_k_accuracy_1
# a ninth metric was dropped without a word
usage_error "mxk score: at most 8 --metrics entries" \
    score --metrics acc,ce,mse,mae,rmse,nll_loss,perplexity,top_k_accuracy_3,acc
usage_error "mxk train: empty --metrics entry in 'acc,,ce'" train --metrics acc,,ce
usage_error "mxk train: --metrics is empty" train --metrics ""
# a step epoch whose update count (epoch x batches per epoch) overflowed int64
usage_error "mxk train: bad --lr-step-epochs entry '9999999999999999' (an epoch from 1 to 1000000)" \
    train --lr-step-epochs 3,9999999999999999
usage_error "mxk train: bad --lr-step-epochs entry '' (an epoch from 1 to 1000000)" \
    train --lr-step-epochs 3,
usage_error "mxk train: bad --lr-step-epochs entry '-2' (an epoch from 1 to 1000000)" \
    train --lr-step-epochs -2
usage_error "mxk train: option '--num-epochs' needs an integer (0 to 1000000)" train --num-epochs 1000001
usage_error "mxk train: option '--batch-size' needs an integer (0 to 1000000)" train --batch-size 18446744073709551617
usage_error "mxk train: option '--seed' needs an integer from 0 to 18446744073709551615" \
    train --seed 18446744073709551616
usage_error "mxk train: option '--lr-factor' needs a number" train --lr-factor 1e999
echo "options: all usage errors as expected"
