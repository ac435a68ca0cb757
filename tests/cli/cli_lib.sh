# Helpers shared by the command-line test scripts (sourced; POSIX sh). The script
# sets CASE (the case name), OUT and ERR (files with the last command's stdout and
# stderr), rc (its exit status), last (its arguments) and JSON_CHECK (the
# mxk-cli-json-check program), and defines its own run().

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

out_line() {
    grep -E -e "$1" "$OUT" >/dev/null || fail "no stdout line matches /$1/"
}

json() {
    "$JSON_CHECK" "$@" <"$OUT" || fail "JSON check failed"
}
