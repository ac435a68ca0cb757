#!/bin/sh
# Tests of the `mxk` command line, one case per ctest test (tests/cli/CMakeLists.txt).
#
#   cli_test.sh CASE MXK JSON_CHECK WRITE_PARAMS BUILD_CONFIG_DIR HAVE_CPU_BLAS WORK_DIR
#
# MXK is the built tool, JSON_CHECK validates JSON on stdin (json_check.c),
# WRITE_PARAMS writes NDArray files (write_params.c), BUILD_CONFIG_DIR is the build
# tree's config dir (etc/mxk), HAVE_CPU_BLAS is 1 when the cpu-blas plugin is part of
# the build. Cases that need cpu-blas exit 77 (ctest: skipped) without it.
# POSIX sh only: CI has the toolchain, no scripting languages.
set -u

if [ $# -ne 7 ]; then
    echo "usage: cli_test.sh CASE MXK JSON_CHECK WRITE_PARAMS BUILD_CONFIG_DIR HAVE_CPU_BLAS WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 WRITE_PARAMS=$4 CONF=$5 HAVE_CPU_BLAS=$6 WORK=$7

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK" empty
EMPTY=$WORK/empty

# skip REASON: ends the test as skipped.
skip() {
    echo "SKIP [$CASE]: $*"
    exit 77
}

# run ARGS...: runs mxk with ARGS; stdout in $OUT, stderr in $ERR, status in $rc.
run() {
    last="$*"
    rc=0
    "$MXK" "$@" >"$OUT" 2>"$ERR" || rc=$?
}

# need_cpu_blas: skips unless the build has the cpu-blas plugin and its conf.
need_cpu_blas() {
    [ "$HAVE_CPU_BLAS" = 1 ] || skip "the cpu-blas plugin is not part of this build"
    [ -f "$CONF/plugins.d/cpu-blas.conf" ] || skip "no $CONF/plugins.d/cpu-blas.conf"
}

# params KIND: writes an NDArray file of that kind, prints its path.
params() {
    "$WRITE_PARAMS" "$1" "$WORK/$1.params" || fail "write_params $1 failed"
    echo "$WORK/$1.params"
}

# The config dir for tests that must load files: the build's when cpu-blas is there.
data_conf() {
    if [ "$HAVE_CPU_BLAS" = 1 ] && [ -f "$CONF/plugins.d/cpu-blas.conf" ]; then
        echo "$CONF"
    else
        echo "$EMPTY"
    fi
}

case "$CASE" in
help)
    run --help
    expect_rc 0
    for cmd in plugins ndarray demo version; do out_has "$cmd"; done
    out_has "--config-dir"
    out_has "--backend"
    out_has "--json"
    run -h
    expect_rc 0
    out_has "usage: mxk"
    run help
    expect_rc 0
    out_has "Commands:"
    ;;
command_help)
    for cmd in plugins ndarray demo version; do
        run "$cmd" --help
        expect_rc 0
        out_has "usage: mxk $cmd"
        out_has "--config-dir"
        run --help "$cmd"
        expect_rc 0
        out_has "usage: mxk $cmd"
        run help "$cmd"
        expect_rc 0
        out_has "usage: mxk $cmd"
    done
    run plugins -h
    expect_rc 0
    out_has "rejected"
    out_has "--json"
    run ndarray --help
    out_has "--values"
    run demo --help
    out_has "--ctx"
    ;;
unknown_command)
    run frobnicate
    expect_rc 2
    err_has "unknown command 'frobnicate'"
    err_has "usage: mxk"
    run help frobnicate
    expect_rc 2
    err_has "unknown command 'frobnicate'"
    run
    expect_rc 2
    err_has "usage: mxk"
    ;;
usage_errors)
    run plugins --bogus
    expect_rc 2
    err_has "unknown option '--bogus'"
    err_has "usage: mxk plugins"
    run plugins extra
    expect_rc 2
    run ndarray
    expect_rc 2
    err_has "missing FILE"
    err_has "usage: mxk ndarray"
    run ndarray a.params b.params
    expect_rc 2
    run ndarray a.params --values
    expect_rc 2
    run ndarray a.params --values many
    expect_rc 2
    err_has "--values"
    run demo --ctx tpu
    expect_rc 2
    err_has "--ctx"
    run --config-dir
    expect_rc 2
    err_has "--config-dir"
    run version now
    expect_rc 2
    ;;
version)
    run --version
    expect_rc 0
    out_line "^mxk [0-9]+\.[0-9]+"
    out_line "ABI [0-9]+\.[0-9]+"
    run version
    expect_rc 0
    out_has "ABI"
    run version --json
    expect_rc 0
    json "version?" "abi?"
    ;;
plugins_empty)
    # Global options before and after the command.
    run --config-dir "$EMPTY" plugins
    expect_rc 0
    out_has "no plugins loaded"
    out_has "config dir:"
    run plugins --config-dir "$EMPTY" --json
    expect_rc 0
    json "plugins#=0" "rejected#=0" "config_dir?" "backend_preference?"
    run plugins --config-dir="$EMPTY" --backend=cpu-blas --json
    expect_rc 0
    json "plugins#=0" "backend_preference=cpu-blas"
    ;;
plugins_missing_dir)
    run plugins --config-dir "$WORK/does-not-exist"
    expect_rc 1
    err_has "mxk: error: "
    ;;
plugins_rejected)
    # A conf whose library does not exist: listed as rejected, not an error.
    mkdir -p "$WORK/conf/plugins.d"
    printf '[plugin]\nlibrary = libmxk-no-such-plugin.so\nenabled = true\n' \
        >"$WORK/conf/plugins.d/ghost.conf"
    run plugins --config-dir "$WORK/conf"
    expect_rc 0
    out_has "no plugins loaded"
    out_has "1 rejected candidate"
    out_line "ghost|no-such-plugin"
    run plugins --config-dir "$WORK/conf" --json
    expect_rc 0
    json "plugins#=0" "rejected#=1" "rejected.0.path?" "rejected.0.reason?"
    ;;
plugins_cpu_blas)
    need_cpu_blas
    run plugins --config-dir "$CONF"
    expect_rc 0
    out_has "cpu-blas"
    out_has "FullyConnected"
    out_has "SoftmaxOutput"
    out_line "^  operators +[0-9]+: "
    out_line "^  kernels +cpu, backend "
    run --json --config-dir "$CONF" plugins
    expect_rc 0
    json "plugins.*.name=cpu-blas" \
        "plugins.*.operators.*=FullyConnected" \
        "plugins.*.operators.*=Activation" \
        "plugins.*.operators.*=SoftmaxOutput" \
        "plugins.*.kernels.*.op=FullyConnected" \
        "plugins.*.kernels.*.device=cpu" \
        "plugins.*.devices.*.device=cpu" \
        "plugins.*.abi?" "plugins.*.negotiated_minor?" "plugins.*.path?" \
        "plugins.*.iterators?" "plugins.*.kvstore_transports?" "rejected?"
    run plugins --config-dir "$CONF" --backend cpu-blas --json
    expect_rc 0
    json "backend_preference=cpu-blas"
    [ ! -s "$ERR" ] || fail "a provided backend needs no warning"
    # a backend no plugin provides is skipped, with a warning (each one named)
    run plugins --config-dir "$CONF" --backend " nope ,cpu-blas,other"
    expect_rc 0
    err_has "mxk: warning: backend 'nope' is not provided by any loaded plugin; it is skipped (see 'mxk plugins')"
    err_has "mxk: warning: backend 'other' is not provided"
    [ "$(grep -c warning "$ERR")" -eq 2 ] || fail "two warnings expected"
    ;;
plugins_aliases)
    # MXNet's alias names (add_alias) are listed alias=Operator and resolve everywhere
    need_cpu_blas
    run plugins --config-dir "$CONF"
    expect_rc 0
    out_line "^  aliases +[A-Za-z_]+=[A-Za-z_]+, "
    out_has "_Plus=elemwise_add"
    out_has "flatten=Flatten"
    run --json --config-dir "$CONF" plugins
    expect_rc 0
    json "plugins.*.aliases._Plus=elemwise_add" "plugins.*.aliases.flatten=Flatten"
    ;;
op_help)
    need_cpu_blas
    run op --config-dir "$CONF" BatchNorm
    expect_rc 0
    out_line "^BatchNorm  \(plugin cpu-blas\)$"
    out_line "^  eps +float, optional, default=0.001$"
    out_line "^  arguments +data, gamma, beta$"
    out_line "^  aux_states +moving_mean, moving_var$"
    out_line "^kernels: cpu \(backend cpu-blas\)(, gpu \(backend cuda\))?(, cpu \(backend onednn\))?$"
    # an alias names the same operator
    run op --config-dir "$CONF" _Plus
    expect_rc 0
    out_line "^elemwise_add  \(plugin cpu-blas\)$"
    out_line "^aliases: .*_Plus"
    run op --config-dir "$CONF" --json flatten
    expect_rc 0
    json "name=Flatten" "aliases.*=flatten" "plugin=cpu-blas" "arguments.0=data" \
        "outputs.0=output" "attributes?"
    # a required attribute: no default node, the rest is listed
    run op --config-dir "$CONF" --json FullyConnected
    expect_rc 0
    json "attributes.*.name=num_hidden" "arguments=null"
    run op --config-dir "$CONF" nope
    expect_rc 1
    err_has "mxk: error: unknown operator 'nope'"
    run op --config-dir "$CONF"
    expect_rc 2
    err_has "missing the operator name"
    ;;
ndarray_abc)
    need_cpu_blas
    file=$(params abc) || exit 1
    run ndarray "$file" --config-dir "$CONF"
    expect_rc 0
    out_has "a"
    out_has "float32"
    out_has "(3)"
    # NAME DTYPE SHAPE MIN MAX FIRST VALUES
    out_line "^a +float32 +\(3\) +1 +3 +\[1, 2, 3\]$"
    run --config-dir "$CONF" --json ndarray "$file"
    expect_rc 0
    json "arrays#=1" "arrays.0.name=a" "arrays.0.dtype=float32" "arrays.0.shape#=1" \
        "arrays.0.shape.0=3" "arrays.0.min=1" "arrays.0.max=3" "arrays.0.first#=3" \
        "arrays.0.first.0=1" "arrays.0.first.2=3" "file?"
    ;;
ndarray_multi)
    need_cpu_blas
    file=$(params multi) || exit 1
    run ndarray --config-dir "$CONF" --values 2 "$file"
    expect_rc 0
    out_line "^arg:w +float64 +\(2,2\) +-1\.5 +4 +\[-1\.5, 0, \.\.\.\]$"
    out_line "^aux:n +int32 +\(3\) +-3 +7 +\[7, -3, \.\.\.\]$"
    out_line "^arg:h +float16 +\(2\) +-2 +0\.5 +\[0\.5, -2\]$"
    out_line "^arg:u +uint8 +\(1,4\) +0 +255 +\[0, 255, \.\.\.\]$"
    out_line "^arg:big +float32 +\(2,3\) +0 +5 +\[0, 1, \.\.\.\]$"
    # int64 values exactly, not through a double (2^63-1 is not 9223372036854775808)
    out_line "^aux:i64 +int64 +\(3\) +-9223372036854775808 +9223372036854775807 +\[9223372036854775807, -9223372036854775808, \.\.\.\]$"
    run ndarray --config-dir "$CONF" --json "$file"
    expect_rc 0
    json "arrays#=6" "arrays.5.max=9223372036854775807" "arrays.5.first.1=-9223372036854775808" \
        "arrays.0.name=arg:w" "arrays.0.dtype=float64" "arrays.0.min=-1.5" "arrays.0.max=4" \
        "arrays.1.dtype=int32" "arrays.1.min=-3" "arrays.1.max=7" "arrays.1.first.1=-3" \
        "arrays.2.dtype=float16" "arrays.2.first.0=0.5" "arrays.2.min=-2" \
        "arrays.3.dtype=uint8" "arrays.3.max=255" "arrays.3.shape.1=4" \
        "arrays.4.first#=5" "arrays.4.size=6" "arrays.4.max=5"
    run ndarray --config-dir "$CONF" --json --values 0 "$file"
    expect_rc 0
    json "arrays.0.first#=0" "arrays.4.first#=0" "arrays.4.max=5"
    ;;
ndarray_unnamed)
    need_cpu_blas
    file=$(params unnamed) || exit 1
    run ndarray --config-dir "$CONF" "$file"
    expect_rc 0
    out_line "^0 +float32 +\(1\) +0\.25 +0\.25 +\[0\.25\]$"
    out_line "^1 +float32 +\(1,2\) +-1 +1 +\[-1, 1\]$"
    run ndarray --config-dir "$CONF" --json "$file"
    expect_rc 0
    json "arrays#=2" "arrays.0.name=null" "arrays.0.index=0" "arrays.1.index=1" \
        "arrays.0.first.0=0.25" "arrays.1.min=-1"
    ;;
ndarray_missing)
    conf=$(data_conf)
    run ndarray --config-dir "$conf" "$WORK/no-such-file.params"
    expect_rc 1
    err_has "mxk: error: "
    err_has "no-such-file.params"
    [ -s "$OUT" ] && fail "unexpected stdout"
    ;;
ndarray_corrupt)
    conf=$(data_conf)
    for kind in truncated badmagic; do
        file=$(params $kind) || exit 1
        run ndarray --config-dir "$conf" "$file"
        expect_rc 1
        err_has "mxk: error: "
        run ndarray --config-dir "$conf" --json "$file"
        expect_rc 1
    done
    # Garbage and an empty file.
    printf 'this is not an NDArray file at all, just some text\n' >"$WORK/text.params"
    run ndarray --config-dir "$conf" "$WORK/text.params"
    expect_rc 1
    err_has "mxk: error: "
    : >"$WORK/zero.params"
    run ndarray --config-dir "$conf" "$WORK/zero.params"
    expect_rc 1
    err_has "mxk: error: "
    if [ "$conf" = "$CONF" ]; then
        # With a CPU backend loaded the message is the format error itself.
        run ndarray --config-dir "$conf" "$WORK/badmagic.params"
        grep -i -F "invalid ndarray file format" "$ERR" >/dev/null ||
            fail "stderr lacks 'Invalid NDArray file format'"
    fi
    ;;
demo)
    need_cpu_blas
    run demo --config-dir "$CONF"
    expect_rc 0
    out_has "FullyConnected"
    out_has "Activation"
    out_has "SoftmaxOutput"
    # relu(FC([1,2])) = [1,2,4] -> softmax [0.042010, 0.114195, 0.843795];
    # relu(FC([-1,-2])) = [0,0,0] -> uniform 1/3.
    out_line "^  \[0\.042010, 0\.114195, 0\.843795\]$"
    out_line "^  \[0\.333333, 0\.333333, 0\.333333\]$"
    run demo --config-dir "$CONF" --json
    expect_rc 0
    json "context=cpu(0)" "output.shape.0=2" "output.shape.1=3" \
        "output.values.0.0=0.0420101" "output.values.0.1=0.1141952" \
        "output.values.0.2=0.8437947" "output.values.1.0=0.3333333" \
        "output.values.1.2=0.3333333" \
        "operators#=3" "operators.0.op=FullyConnected" "operators.0.backend?" \
        "operators.0.output.values.0.2=4" "operators.0.output.values.1.1=-2" \
        "operators.1.output.values.1.0=0"
    run demo --config-dir "$CONF" --backend cpu-blas --json
    expect_rc 0
    json "operators.0.backend=cpu-blas" "operators.1.backend=cpu-blas" \
        "operators.2.backend=cpu-blas"
    ;;
demo_no_plugins)
    run demo --config-dir "$EMPTY"
    expect_rc 1
    err_has "mxk: error: "
    err_has "FullyConnected"
    err_has "mxk plugins"
    ;;
*)
    echo "cli_test.sh: unknown case '$CASE'" >&2
    exit 2
    ;;
esac
echo "PASS [$CASE]"
exit 0
