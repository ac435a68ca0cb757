#!/bin/sh
# Tests of the `mxk` command line around plugins and options, one case per ctest
# test (registered in tests/cli/CMakeLists.txt): "did you mean" for commands and
# options, option prefixes (argparse's allow_abbrev), --plugin and MXK_PLUGINS, the
# user config dir layered over the install's, rejected-candidate warnings,
# `mxk plugins --strict`, MXK_LOG_LEVEL, and the unknown-operator hint.
#
#   plugins_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR CPU_BLAS_LIBRARY WORK_DIR
#
# The build tree is laid out as an install: BUILD_CONFIG_DIR is the install's
# config dir that libmxk finds by itself. POSIX sh only.
set -u

if [ $# -ne 6 ]; then
    echo "usage: plugins_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR CPU_BLAS_LIBRARY WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 CONF=$4 CPU_BLAS=$5 WORK=$6

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK" empty
USER_CONF=$WORK/xdg/mxk

# run ARGS...: runs mxk (no --config-dir: the install's and user's dirs are searched).
run() {
    last="$*"
    rc=0
    "$MXK" "$@" >"$OUT" 2>"$ERR" || rc=$?
}

# err_count N TEXT: stderr has exactly N lines containing TEXT.
err_count() {
    [ "$(grep -c -F -e "$2" "$ERR")" -eq "$1" ] || fail "stderr has not $1 line(s) with '$2'"
}

if [ ! -f "$CPU_BLAS" ] || [ ! -f "$CONF/plugins.d/cpu-blas.conf" ]; then
    echo "SKIP [$CASE]: the cpu-blas plugin is not part of this build"
    exit 77
fi

# user_conf NAME TEXT: writes the user's plugins.d/NAME.conf.
user_conf() {
    mkdir -p "$USER_CONF/plugins.d" || exit 1
    printf '%s\n' "$2" >"$USER_CONF/plugins.d/$1.conf" || exit 1
}

case $CASE in
did_you_mean)
    run --confg-dir /tmp plugins
    expect_rc 2
    err_first "mxk: unknown option '--confg-dir'; did you mean '--config-dir'?"
    run plugns
    expect_rc 2
    err_first "mxk: unknown command 'plugns'; did you mean 'plugins'?"
    run help symbl
    expect_rc 2
    err_first "mxk: unknown command 'symbl'; did you mean 'symbol'?"
    run ndarray --valeus 3 file.params
    expect_rc 2
    err_first "mxk ndarray: unknown option '--valeus'; did you mean '--values'?"
    run plugins --strcit
    expect_rc 2
    err_first "mxk plugins: unknown option '--strcit'; did you mean '--strict'?"
    run --backend cpu-blsa plugins
    expect_rc 0
    err_has "mxk: warning: backend 'cpu-blsa' is not provided by any loaded plugin; it is skipped (see 'mxk plugins'); did you mean 'cpu-blas'?"
    # nothing near: no suggestion
    run plugins --frobnicate
    expect_rc 2
    err_first "mxk plugins: unknown option '--frobnicate'"
    ;;
option_prefixes)
    # a unique prefix is the option (the message names it in full)
    run ndarray --val abc file.params
    expect_rc 2
    err_first "mxk ndarray: --values expects a number from 0 to 1000000, got 'abc'"
    run ndarray --val=abc file.params
    expect_rc 2
    err_first "mxk ndarray: --values expects a number from 0 to 1000000, got 'abc'"
    # global options too, before the command
    run --config-d "$WORK/empty" --js plugins
    expect_rc 0
    json
    out_has "\"config_dir\": \"$WORK/empty\""
    # ambiguous: the candidates are listed
    run crosscheck --back x
    expect_rc 2
    err_first "mxk crosscheck: option '--back' is ambiguous: it could be --backend, --backends"
    run train --b 3
    expect_rc 2
    err_first "mxk train: option '--b' is ambiguous: it could be --backend, --batch-norm, --batch-size, --brightness, --buckets"
    run --js=1 plugins
    expect_rc 2
    err_first "mxk: option --json takes no value"
    ;;
documented_options)
    # every long option a command's --help documents gets past the option parser
    # (the unknown option after it is what is reported)
    for cmd in plugins op ndarray symbol opcheck crosscheck train score predict im2rec rec demo \
        version; do
        "$MXK" "$cmd" --help >"$OUT" 2>"$ERR" || fail "mxk $cmd --help failed"
        opts=$(sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z0-9-]*\)\( [^ ]\)\{0,1\}.*/\2\3/p' "$OUT" |
            sed 's/ ./=1/')
        for opt in $opts; do
            last="$cmd $opt --zz-unknown"
            rc=0
            "$MXK" "$cmd" "$opt" --zz-unknown >"$OUT" 2>"$ERR" </dev/null || rc=$?
            name=${opt%%=*}
            ! grep -F -e "unknown option '$name'" "$ERR" >/dev/null || fail "$name is rejected"
            ! grep -F -e "is ambiguous" "$ERR" >/dev/null || fail "$name is ambiguous"
        done
    done
    ;;
plugin_option)
    run --config-dir "$WORK/empty" --plugin "$CPU_BLAS" plugins
    expect_rc 0
    out_has "cpu-blas "
    out_line "^  from +--plugin \\(mxk_load_plugin\\)$"
    run --config-dir "$WORK/empty" --plugin "$WORK/nope.so" plugins
    expect_rc 1
    err_first "mxk: error: plugin $WORK/nope.so rejected: library '$WORK/nope.so' not found"
    ;;
env_plugins)
    MXK_PLUGINS=$CPU_BLAS run --config-dir "$WORK/empty" plugins --json
    expect_rc 0
    json
    out_has "\"origin\": \"MXK_PLUGINS=$CPU_BLAS\""
    MXK_PLUGINS="$WORK/nope.so:$CPU_BLAS" run --config-dir "$WORK/empty" plugins
    expect_rc 0
    out_has "cpu-blas "
    err_first "[mxk WARNING] plugin candidate MXK_PLUGINS=$WORK/nope.so rejected: library '$WORK/nope.so' not found"
    ;;
user_layer)
    # the user's onednn.conf disables the install's; a user-only conf adds a plugin
    user_conf onednn '[plugin]
library = libmxk-onednn.so
enabled = false'
    user_conf zz-broken '[plugin]
library = libmxk-nothing-here.so'
    printf '[mxk]\nbackend = cpu-blas\n' >"$USER_CONF/mxk.conf"
    run plugins
    expect_rc 0
    out_line "^config dirs: +$CONF\$"
    out_line "^ +$USER_CONF\$"
    out_line "^backend preference: +cpu-blas\$"
    out_line "^  from +$CONF/plugins.d/cpu-blas.conf\$"
    out_lacks "onednn 0"
    out_has "1 disabled conf (enabled = false):"
    out_line "^  $USER_CONF/plugins.d/onednn.conf\$"
    err_count 1 "[mxk WARNING] plugin candidate $USER_CONF/plugins.d/zz-broken.conf rejected: library 'libmxk-nothing-here.so' not found"
    run plugins --json
    expect_rc 0
    json
    out_has "\"config_dirs\": [\"$CONF\", \"$USER_CONF\"]"
    out_has "\"disabled\": [\"$USER_CONF/plugins.d/onednn.conf\"]"
    # the same-named conf replaces the install's: enabling it again loads it from there
    user_conf cpu-blas "[plugin]
library = $CPU_BLAS"
    run plugins
    expect_rc 0
    out_line "^  from +$USER_CONF/plugins.d/cpu-blas.conf\$"
    # every command warns about the rejected candidate, once
    run op FullyConnected
    expect_rc 0
    err_count 1 "plugin candidate $USER_CONF/plugins.d/zz-broken.conf rejected"
    # --config-dir is used alone
    run --config-dir "$WORK/empty" plugins
    expect_rc 0
    out_line "^config dir: +$WORK/empty\$"
    out_has "no plugins loaded"
    ;;
strict)
    run plugins --strict
    expect_rc 0
    user_conf zz-broken '[plugin]
library = libmxk-nothing-here.so'
    run plugins --strict
    expect_rc 1
    err_has "mxk: error: --strict: 1 plugin candidate was rejected"
    ;;
log_level)
    user_conf zz-broken '[plugin]
library = libmxk-nothing-here.so'
    MXK_LOG_LEVEL=debug run plugins
    expect_rc 0
    err_has "[mxk DEBUG] config: using config dir '$CONF' (the install's)"
    err_has "[mxk DEBUG] config: using config dir '$USER_CONF' (the user's, over the install's)"
    err_has "[mxk DEBUG] loader: dlopen '$CPU_BLAS' (for $CONF/plugins.d/cpu-blas.conf)"
    err_has "): built for ABI 1."
    err_has "[mxk WARNING] plugin candidate $USER_CONF/plugins.d/zz-broken.conf rejected"
    # the kernel chosen per operator and device type (op shows the preference's pick)
    MXK_LOG_LEVEL=debug run op FullyConnected
    expect_rc 0
    err_has "[mxk DEBUG] operator 'FullyConnected' on cpu: backend 'cpu-blas' of plugin 'cpu-blas' chosen ("
    MXK_LOG_LEVEL=error run plugins
    expect_rc 0
    [ ! -s "$ERR" ] || fail "MXK_LOG_LEVEL=error printed on stderr"
    ;;
unknown_operator)
    user_conf onednn '[plugin]
library = libmxk-onednn.so
enabled = false'
    cat >"$WORK/swish-symbol.json" <<'JSON'
{"nodes": [{"op": "null", "name": "data", "inputs": []},
           {"op": "Swish", "name": "swish0", "attrs": {"beta": "1"}, "inputs": [[0, 0, 0]]},
           {"op": "null", "name": "fc_weight", "inputs": []},
           {"op": "FullyConected", "name": "fc", "attrs": {"num_hidden": "2"},
            "inputs": [[1, 0, 0], [2, 0, 0]]}],
 "arg_nodes": [0, 2], "heads": [[3, 0, 0]]}
JSON
    run symbol summary "$WORK/swish-symbol.json" --shape data=1,4
    expect_rc 1
    err_has "node 1 ('swish0'): unknown operator 'Swish': no loaded plugin registers it (plugins not loaded: $USER_CONF/plugins.d/onednn.conf (enabled = false))"
    # mxk score on a checkpoint of that symbol: one line, the file named once
    : >"$WORK/swish-0001.params"
    run score --model-prefix "$WORK/swish" --load-epoch 1
    expect_rc 1
    err_is "mxk: error: $WORK/swish-symbol.json: symbol JSON: node 1 ('swish0'): unknown operator 'Swish': no loaded plugin registers it (plugins not loaded: $USER_CONF/plugins.d/onednn.conf (enabled = false))"
    sed -i 's/"Swish"/"Activation"/; s/"beta": "1"/"act_type": "relu"/' "$WORK/swish-symbol.json"
    run symbol summary "$WORK/swish-symbol.json" --shape data=1,4
    expect_rc 1
    err_has "unknown operator 'FullyConected': no loaded plugin registers it; did you mean 'FullyConnected'? (plugins not loaded: "
    ;;
*)
    echo "unknown case '$CASE'" >&2
    exit 2
    ;;
esac
echo "ok [$CASE]"
