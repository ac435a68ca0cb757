#!/bin/sh
# Fashion-MNIST through the RecordIO image pipeline, end to end: the IDX files
# exported as PNG files by class (fmnist_export), listed and packed by
# `mxk im2rec` (grayscale PNG records), then LeNet trained for EPOCHS epochs
# from ImageRecordIter (data_shape 1,28,28, pixel/256 through --rgb-std) and
# from MNISTIter with the same options: the final validation accuracies agree
# within 0.5 points (the two iterators shuffle differently, nothing else differs).
#   fmnist_rec_test.sh MXK CONFIG_DIR FMNIST_EXPORT WORK_DIR
set -u
. "$(dirname "$0")/e2e_lib.sh"
EPOCHS=2
"$EXPORT" "$DATA/train-images-idx3-ubyte.gz" "$DATA/train-labels-idx1-ubyte.gz" img_train png ||
    fail "export of the training set"
"$EXPORT" "$DATA/t10k-images-idx3-ubyte.gz" "$DATA/t10k-labels-idx1-ubyte.gz" img_test png ||
    fail "export of the test set"
for set in train test; do
    mxk im2rec --list --recursive "$set" "img_$set" || fail "im2rec --list $set"
    [ "$(wc -l <"$set.lst")" -eq "$([ $set = train ] && echo 60000 || echo 10000)" ] ||
        fail "$set.lst has $(wc -l <"$set.lst") lines"
    mxk im2rec --color 0 --encoding .png --num-thread 2 \
        "$set" "img_$set" || fail "im2rec pack $set"
    rm -rf "img_$set" # 70000 small files: gone once packed
done
# accuracy NAME ARGS...: trains LeNet with ARGS, prints the last validation accuracy
accuracy() {
    name=$1
    shift
    mxk --json train --network lenet --num-epochs $EPOCHS \
        "$@" >"$name.json" 2>"$name.log" || fail "training on $name: $(tail -n 3 "$name.log")"
    tail -n 1 "$name.json" | sed -n 's/.*"validation": {"accuracy": \([0-9.]*\)}.*/\1/p'
}
mnist=$(accuracy mnist --data-dir "$DATA")
rec=$(accuracy rec --data-train train.rec --data-val test.rec --image-shape 1,28,28 \
    --rgb-mean 0,0,0 --rgb-std 256,256,256)
echo "validation accuracy after $EPOCHS epochs: MNISTIter $mnist, ImageRecordIter $rec"
[ -n "$mnist" ] && [ -n "$rec" ] || fail "no accuracy in the logs"
awk -v a="$mnist" -v b="$rec" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.005) }' ||
    fail "the accuracies differ by more than 0.5 points"
grep -q "Data: RecordIO train.rec: 60000 training examples, test.rec: 10000 validation examples" \
    rec.log || fail "the header does not name the RecordIO data: $(grep Data: rec.log)"
