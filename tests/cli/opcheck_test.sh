#!/bin/sh
# Tests of `mxk opcheck` (the operator test kit on the command line), one case per
# ctest test (registered at the end of tests/cli/CMakeLists.txt).
#
#   opcheck_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS BROKEN_PLUGIN WORK_DIR
#
# BROKEN_PLUGIN is tests/opcheck's libmxk-opcheck-broken.so (deliberately broken
# operators): the "fails" case builds a config dir with it and cpu-blas. The cases
# that run operators need cpu-blas (the CPU device): without it they are skipped.
# POSIX sh only.
set -u

if [ $# -ne 7 ]; then
    echo "usage: opcheck_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS" \
        "BROKEN_PLUGIN WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 CONF=$4 HAVE_CPU_BLAS=$5 BROKEN=$6 WORK=$7

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK"

# run ARGS...: runs mxk with config dir $RUN_CONF; stdout in $OUT, stderr in $ERR.
RUN_CONF=$CONF
run() {
    last="$*"
    rc=0
    "$MXK" --config-dir "$RUN_CONF" "$@" >"$OUT" 2>"$ERR" || rc=$?
}

case $CASE in
opcheck_pass)
    need_cpu_blas "the cpu-blas plugin (CPU device)"
    run opcheck FullyConnected --attr num_hidden=4 --shape 2,3 --shape 0 --shape 0 --seed 5
    expect_rc 0
    out_has "opcheck FullyConnected (backend cpu-blas)"
    for c in shape_type forward backward forward_req backward_req dependency determinism; do
        out_line "^  $c "
    done
    out_line "^  backward +pass "
    out_line "^  forward +skip .*no reference"
    out_has "all checks passed"
    # The arguments after the last --shape are inferred: the same report.
    cp "$OUT" "$WORK/explicit"
    run opcheck FullyConnected --attr num_hidden=4 --shape 2,3 --seed 5
    expect_rc 0
    cmp -s "$OUT" "$WORK/explicit" || fail "--shape 2,3 alone differs from --shape 2,3 --shape 0 --shape 0"
    run opcheck Activation --attr act_type=tanh --shape 3,2 --inplace 0:0
    expect_rc 0
    out_line "^  forward_req +pass .*1 in-place pair"
    ;;
opcheck_json)
    need_cpu_blas "the cpu-blas plugin (CPU device)"
    run opcheck Activation --attr act_type=sigmoid --shape 2,3 --json
    expect_rc 0
    json op=Activation backend=cpu-blas passed=true checks#=7 checks.0.name=shape_type \
        checks.2.name=backward checks.2.outcome=pass checks.1.outcome=skip \
        checks.2.max_abs_err? checks.6.message?
    ;;
opcheck_fails)
    need_cpu_blas "the cpu-blas plugin (CPU device)"
    [ -f "$BROKEN" ] || fail "broken test plugin $BROKEN missing"
    mkdir -p "$WORK/conf/plugins.d" || exit 1
    cp "$CONF/mxk.conf" "$WORK/conf/" 2>/dev/null
    sed "s|^library *=.*|library = $(dirname "$CONF")/../lib/mxk/plugins/libmxk-cpu-blas.so|" \
        "$CONF/plugins.d/cpu-blas.conf" >"$WORK/conf/plugins.d/cpu-blas.conf"
    printf '[plugin]\nlibrary = %s\nenabled = true\n' "$BROKEN" \
        >"$WORK/conf/plugins.d/broken.conf"
    RUN_CONF=$WORK/conf
    run opcheck OpcheckWrongGrad --shape 2,3
    expect_rc 1
    out_line "^  backward +FAIL .*gradient of 'data'"
    out_has "1 check failed"
    run opcheck OpcheckUndeclared --shape 2,3 --shape 2,3 --json
    expect_rc 1
    json passed=false checks.5.name=dependency checks.5.outcome=fail
    run opcheck OpcheckIgnoresAdd --shape 4
    expect_rc 1
    out_line "^  backward_req +FAIL .*ADD"
    run opcheck OpcheckGood --shape 4 --only-backend opcheck-broken
    expect_rc 0
    out_has "(backend opcheck-broken)"
    # --only-backend forces a backend; the global --backend is only a preference list.
    run opcheck OpcheckGood --shape 4 --only-backend cpu-blas
    expect_rc 1
    err_is "mxk: error: opcheck OpcheckGood: backend 'cpu-blas' has no kernel of the operator on cpu (available: opcheck-broken)"
    run opcheck OpcheckGood --shape 4 --backend cpu-blas,opcheck-broken
    expect_rc 0
    out_has "opcheck OpcheckGood (backend opcheck-broken)"
    # One element written past the output: the storage guard (on by default) names it.
    run opcheck OpcheckOverrun --shape 2,3
    expect_rc 1
    out_line "^  forward +FAIL .* forward failed: storage guard: operator 'OpcheckOverrun' \\(backend 'opcheck-broken'\\) wrote outside array 'output' \\(24 bytes\\): canary damaged at byte offset 24$"
    ;;
opcheck_errors)
    need_cpu_blas "the cpu-blas plugin (CPU device)"
    run opcheck NoSuchOp --shape 2
    expect_rc 1
    err_is "mxk: error: opcheck: unknown operator 'NoSuchOp'" \
        "mxk: note: 'mxk ops' lists the registered operators"
    run opcheck Activation --attr act_typ=tanh --shape 2,3
    expect_rc 1
    err_has "mxk: error: opcheck Activation: unknown attribute 'act_typ'; "
    # An attribute error: the attribute's doc with its closing parenthesis, no
    # note about shapes.
    run opcheck FullyConnected --shape 2,3
    expect_rc 1
    err_is "mxk: error: opcheck FullyConnected: required attribute 'num_hidden' is missing (Number of hidden nodes of the output.)"
    # Too many shapes: the arguments named, singular "argument".
    run opcheck Activation --attr act_type=tanh --shape 2,3 --shape 2,3
    expect_rc 1
    err_is "mxk: error: opcheck Activation: 2 shapes given, the operator takes 1 argument (data)"
    run opcheck FullyConnected --attr num_hidden=4 --shape 2,3 --shape 5,5
    expect_rc 1
    err_is "mxk: error: opcheck FullyConnected: argument 'weight': expected (4,3), got (5,5)" \
        "mxk: note: --shape gives the shapes of the first arguments, in argument order ('mxk op FullyConnected' lists them); the others are inferred"
    run opcheck FullyConnected --attr num_hidden=4
    expect_rc 1
    err_is "mxk: error: opcheck FullyConnected: cannot infer the shape of input 'data' (got ())" \
        "mxk: note: --shape gives the shapes of the first arguments, in argument order ('mxk op FullyConnected' lists them); the others are inferred"
    run opcheck tanh --shape 2,3 --only-backend no-such-backend
    expect_rc 1
    err_is "mxk: error: opcheck tanh: backend 'no-such-backend' has no kernel of the operator on cpu (available: cpu-blas)"
    ;;
opcheck_usage)
    run opcheck
    expect_rc 2
    err_has "no operator given"
    run opcheck Activation --shape 2,x
    expect_rc 2
    err_has "bad --shape '2,x'"
    run opcheck Activation --shape 2,0
    expect_rc 2
    run opcheck Activation --attr novalue --shape 2
    expect_rc 2
    err_has "expected KEY=VALUE"
    run opcheck Activation --seed -3 --shape 2
    expect_rc 2
    run opcheck Activation --inplace 0 --shape 2
    expect_rc 2
    run opcheck Activation Extra --shape 2
    expect_rc 2
    err_has "unexpected argument 'Extra'"
    run opcheck Activation --frobnicate
    expect_rc 2
    err_has "unknown option '--frobnicate'"
    run opcheck --help
    expect_rc 0
    out_has "usage: mxk opcheck OP"
    out_has "--inplace IN:OUT"
    run --help
    expect_rc 0
    out_line "^  opcheck "
    ;;
*)
    echo "opcheck_test.sh: unknown case '$CASE'" >&2
    exit 2
    ;;
esac
echo "ok [$CASE]"
exit 0
