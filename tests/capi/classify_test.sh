#!/bin/sh
# The example examples/classify against `mxk predict`: a checkpoint of one short
# epoch of `mxk train`, then the class of test images 0..4 from the example (one
# image, the predictor API) equals the class `mxk predict` gives them (batches, the
# Module), and the probabilities agree to 1e-5; bad input gives the library's message.
# usage: classify_test.sh MXK CLASSIFY CONFDIR WORKDIR
# Exit 77 (skipped) when /usr/share/datasets/fashion-mnist is not installed.
set -u
mxk=$1 classify=$2 conf=$3 work=$4
data=${MXK_TEST_FMNIST:-/usr/share/datasets/fashion-mnist}
images=$data/t10k-images-idx3-ubyte.gz
[ -r "$images" ] || { echo "skipped: no $data"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail() { echo "FAIL: $*" >&2; exit 1; }
export OPENBLAS_NUM_THREADS=1 MXK_CONFIG_DIR="$conf"

"$mxk" train --num-examples 1000 --num-epochs 1 --disp-batches 0 --model-prefix c/m \
    2>train.log || { cat train.log; fail "mxk train"; }
"$mxk" predict --model-prefix c/m --load-epoch 1 --num-examples 5 >pred.txt 2>pred.log ||
    { cat pred.log; fail "mxk predict"; }
for i in 0 1 2 3 4; do
    "$classify" c/m 1 "$images" $i >out.txt 2>err.txt || { cat err.txt; fail "classify $i"; }
    cat out.txt
    awk -v i=$i '$1 == i { print $2, $3 }' pred.txt >want.txt
    read -r want_class want_prob <want.txt || fail "no row $i in pred.txt"
    read -r w1 got_class w2 got_prob <out.txt || fail "classify $i printed nothing"
    [ "$w1 $w2" = "class probability" ] || fail "classify $i printed '$(cat out.txt)'"
    [ "$got_class" = "$want_class" ] || fail "image $i: class $got_class, mxk predict $want_class"
    awk -v a="$got_prob" -v b="$want_prob" 'BEGIN { d = a - b; exit !(d < 1e-5 && d > -1e-5) }' ||
        fail "image $i: probability $got_prob, mxk predict $want_prob"
done

# Bad input: the library's messages, exit status 1.
expect_error() {
    want=$1
    shift
    "$classify" "$@" >out.txt 2>err.txt && fail "classify $* should fail"
    [ "$(cat err.txt)" = "$want" ] || fail "classify $*: got '$(cat err.txt)', want '$want'"
}
expect_error "classify: cannot open symbol file 'c/none-symbol.json': No such file or directory" \
    c/none 1 "$images" 0
expect_error "classify: cannot open parameter file 'c/m-0002.params': No such file or directory" \
    c/m 2 "$images" 0
expect_error "classify: cannot read image 10000 of '$images'" c/m 1 "$images" 10000
echo "ok"
