# The start shared by the image_e2e scripts (sourced; POSIX sh): takes the
# arguments MXK CONFIG_DIR FMNIST_EXPORT WORK_DIR into MXK, CONF, EXPORT, WORK,
# skips (exit 77) without Fashion-MNIST ($MXK_TEST_FMNIST, else
# /usr/share/datasets/fashion-mnist, in DATA), clears the environment that changes
# what mxk loads, recreates WORK and enters it; defines fail MESSAGE and
# mxk ARGS... (the build's mxk with the build's config dir).
MXK=$1 CONF=$2 EXPORT=$3 WORK=$4
DATA=${MXK_TEST_FMNIST:-/usr/share/datasets/fashion-mnist}
if [ ! -r "$DATA/train-images-idx3-ubyte.gz" ]; then
    echo "skipped: Fashion-MNIST not found in $DATA"
    exit 77
fi
export OPENBLAS_NUM_THREADS=1 XDG_CONFIG_HOME=$WORK/xdg
unset MXK_CONFIG_DIR MXK_BACKEND MXK_PLUGIN_PATH MXK_PLUGINS
rm -rf "$WORK" && mkdir -p "$WORK/xdg" && cd "$WORK" || exit 1
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
mxk() { "$MXK" --config-dir "$CONF" "$@"; }
