# The clean start of the end-to-end shell tests (sourced; POSIX sh) with MXK, CONF
# and WORK set: clears the environment that changes what mxk loads, recreates WORK
# and enters it; defines fail MESSAGE and mxk ARGS... (the build's mxk with the
# build's config dir).
export OPENBLAS_NUM_THREADS=1 XDG_CONFIG_HOME=$WORK/xdg
unset MXK_CONFIG_DIR MXK_BACKEND MXK_PLUGIN_PATH MXK_PLUGINS
rm -rf "$WORK" && mkdir -p "$WORK/xdg" && cd "$WORK" || exit 1
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
mxk() { "$MXK" --config-dir "$CONF" "$@"; }
