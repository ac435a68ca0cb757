# The start shared by the image_e2e scripts (sourced; POSIX sh): takes the
# arguments MXK CONFIG_DIR FMNIST_EXPORT WORK_DIR into MXK, CONF, EXPORT, WORK,
# skips (exit 77) without Fashion-MNIST ($MXK_TEST_FMNIST, else
# /usr/share/datasets/fashion-mnist, in DATA), then the clean start of
# tests/e2e_env.sh (environment, WORK, fail, mxk).
MXK=$1 CONF=$2 EXPORT=$3 WORK=$4
DATA=${MXK_TEST_FMNIST:-/usr/share/datasets/fashion-mnist}
if [ ! -r "$DATA/train-images-idx3-ubyte.gz" ]; then
    echo "skipped: Fashion-MNIST not found in $DATA"
    exit 77
fi
. "$(dirname "$0")/../e2e_env.sh"
