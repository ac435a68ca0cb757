# Helpers shared by the command-line test scripts (sourced; POSIX sh). The script
# sets CASE (the case name) and JSON_CHECK (the mxk-cli-json-check program), calls
# cli_begin WORK_DIR, and defines its own run(), which sets rc (the exit status)
# and last (the arguments) and writes the command's stdout and stderr to OUT and
# ERR.

# cli_begin WORK [SUBDIR...]: the scripts' common start. Clears the environment
# that changes what mxk loads or prints (MXK_CONFIG_DIR, MXK_BACKEND,
# MXK_PLUGIN_PATH, MXK_PLUGINS, MXK_LOG_LEVEL, COLUMNS), points XDG_CONFIG_HOME at
# WORK/xdg (so no user config dir is read), recreates WORK with xdg/ and the given
# subdirectories, and sets OUT and ERR (WORK/stdout, WORK/stderr), rc and last.
cli_begin() {
    unset MXK_CONFIG_DIR MXK_BACKEND MXK_PLUGIN_PATH MXK_PLUGINS MXK_LOG_LEVEL COLUMNS
    XDG_CONFIG_HOME=$1/xdg
    export XDG_CONFIG_HOME
    rm -rf "$1"
    mkdir -p "$1/xdg" || exit 1
    work_=$1
    shift
    for d in "$@"; do
        mkdir -p "$work_/$d" || exit 1
    done
    OUT=$work_/stdout
    ERR=$work_/stderr
    rc=0
    last=""
}

# run ARGS...: runs $MXK with the build's config dir $CONF; stdout in $OUT, stderr in
# $ERR (a script that runs mxk otherwise defines its own run after sourcing this).
run() {
    last="$*"
    rc=0
    "$MXK" --config-dir "$CONF" "$@" >"$OUT" 2>"$ERR" || rc=$?
}

# need_cpu_blas WHAT: ends the case as skipped (exit 77) when the build has no
# cpu-blas plugin (HAVE_CPU_BLAS not 1 or no conf in $CONF); WHAT says what is missing.
need_cpu_blas() {
    if [ "$HAVE_CPU_BLAS" != 1 ] || [ ! -f "$CONF/plugins.d/cpu-blas.conf" ]; then
        echo "SKIP [$CASE]: $1 is not part of this build"
        exit 77
    fi
}

# fail MESSAGE: prints the message and the last command's output, ends the test.
fail() {
    echo "FAIL [$CASE]: $*" >&2
    echo "--- command: mxk $last (exit $rc)" >&2
    echo "--- stdout:" >&2
    cat "$OUT" >&2 2>/dev/null
    echo "--- stderr:" >&2
    cat "$ERR" >&2 2>/dev/null
    exit 1
}

expect_rc() {
    [ "$rc" -eq "$1" ] || fail "expected exit status $1"
}

out_has() {
    grep -F -e "$1" "$OUT" >/dev/null || fail "stdout lacks '$1'"
}

out_lacks() {
    ! grep -F -e "$1" "$OUT" >/dev/null || fail "stdout has '$1'"
}

err_has() {
    grep -F -e "$1" "$ERR" >/dev/null || fail "stderr lacks '$1'"
}

# err_is LINE...: stderr is exactly these lines.
err_is() {
    printf '%s\n' "$@" | cmp -s - "$ERR" || fail "stderr is not exactly: $*"
}

# err_first: the first stderr line is exactly $1.
err_first() {
    [ "$(head -n 1 "$ERR")" = "$1" ] || fail "the first stderr line is not '$1'"
}

out_line() {
    grep -E -e "$1" "$OUT" >/dev/null || fail "no stdout line matches /$1/"
}

json() {
    "$JSON_CHECK" "$@" <"$OUT" || fail "JSON check failed"
}
