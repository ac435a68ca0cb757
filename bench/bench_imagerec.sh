#!/bin/sh
# The RecordIO image pipeline beside MXNet 1.9.1's ImageRecordIter, on the same
# .rec files, same threads, alternating runs, medians of ROUNDS (3):
#  1. photos (mate-backgrounds' JPEGs, each listed REPEAT times, packed by
#     `mxk im2rec --resize 256`: a 256-pixel short side) -> 3x224x224 with random
#     crop + mirror + normalisation, 1 and 2 threads; and the raw decode rate of
#     the same records (bench_imagerec decode: the limit);
#  2. Fashion-MNIST's test set as 1x28x28 PNG and JPEG records, 1 and 2 threads,
#     beside MNISTIter's rate on the IDX files;
#  3. peak RSS of the iterator (prefetch_buffer 4) on 10000 and 60000 records.
# usage: bench/bench_imagerec.sh BUILD_DIR [MXNET_PYTHON (V/bin/python)] [ROUNDS] [REPEAT]
set -eu
build=${1:?usage: bench_imagerec.sh BUILD_DIR [MXNET_PYTHON] [ROUNDS] [REPEAT]}
py=${2:-V/bin/python}
rounds=${3:-3}
repeat=${4:-50}
here=$(cd "$(dirname "$0")" && pwd)
photos=/usr/share/backgrounds/mate/nature
fm=${MXK_TEST_FMNIST:-/usr/share/datasets/fashion-mnist}
B=$build/bin/bench_imagerec
MXK="$build/bin/mxk --config-dir $build/etc/mxk"
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
have_mxnet=0
"$py" -c 'import mxnet' 2>/dev/null && have_mxnet=1

# photos.lst: each photo REPEAT times, label = its position
i=0 k=0
for f in "$photos"/*.jpg; do
    r=0
    while [ "$r" -lt "$repeat" ]; do
        printf '%d\t%d\t%s\n' "$i" "$k" "$(basename "$f")" >>"$tmp/photos.lst"
        i=$((i + 1)) r=$((r + 1))
    done
    k=$((k + 1))
done
$MXK im2rec --resize 256 --quality 95 --num-thread 2 "$tmp/photos" "$photos" >/dev/null
for set in test train; do
    "$build/bin/fmnist_export" "$fm/$([ $set = test ] && echo t10k || echo train)-images-idx3-ubyte.gz" \
        "$fm/$([ $set = test ] && echo t10k || echo train)-labels-idx1-ubyte.gz" "$tmp/$set" png
    $MXK im2rec --list --recursive --no-shuffle "$tmp/fm_$set" "$tmp/$set" >/dev/null
    $MXK im2rec --color 0 --encoding .png --num-thread 2 "$tmp/fm_$set" "$tmp/$set" >/dev/null
done
cp "$tmp/fm_test.lst" "$tmp/fm_jpg.lst"
$MXK im2rec --color 0 --encoding .jpg --quality 95 --num-thread 2 "$tmp/fm_jpg" "$tmp/test" >/dev/null

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
ips() { grep -o '"images_per_sec": [0-9.]*' "$1" | sed 's/.*: //' | median; }
# row NAME REC SHAPE AUG: alternating rounds of mxk and MXNet at 1 and 2 threads
row() {
    for t in 1 2; do
        n=0
        while [ "$n" -lt "$rounds" ]; do
            "$B" iter "$2" "$3" "$t" "$4" >>"$tmp/$1.mxk.$t"
            [ "$have_mxnet" = 1 ] && "$py" "$here/imagerec_mxnet.py" "$2" "$3" "$t" "$4" 2>/dev/null \
                >>"$tmp/$1.mx.$t"
            n=$((n + 1))
        done
        m=$(ips "$tmp/$1.mxk.$t")
        if [ "$have_mxnet" = 1 ]; then
            p=$(ips "$tmp/$1.mx.$t")
            awk -v n="$1" -v t="$t" -v a="$m" -v b="$p" -v d="$5" 'BEGIN {
                printf "%-14s %d thread(s): mxk %9.1f img/s  MXNet %9.1f img/s  mxk/MXNet %.2f  mxk/decode-limit %.2f\n",
                    n, t, a, b, a / b, a / d }'
        else
            awk -v n="$1" -v t="$t" -v a="$m" -v d="$5" 'BEGIN {
                printf "%-14s %d thread(s): mxk %9.1f img/s (no MXNet venv)  mxk/decode-limit %.2f\n", n, t, a, a / d }'
        fi
    done
}
n=0
while [ "$n" -lt "$rounds" ]; do
    "$B" decode "$tmp/photos.rec" 3 >>"$tmp/dec.photos"
    "$B" decode "$tmp/fm_test.rec" 1 >>"$tmp/dec.png"
    "$B" decode "$tmp/fm_jpg.rec" 1 >>"$tmp/dec.jpg"
    "$B" mnist "$fm/t10k-images-idx3-ubyte.gz" "$fm/t10k-labels-idx1-ubyte.gz" >>"$tmp/mnist"
    n=$((n + 1))
done
echo "raw decode, 1 thread (img/s): photos $(ips "$tmp/dec.photos"), FM PNG $(ips "$tmp/dec.png"), FM JPEG $(ips "$tmp/dec.jpg"); MNISTIter $(ips "$tmp/mnist")"
row photos-224 "$tmp/photos.rec" 3,224,224 1 "$(ips "$tmp/dec.photos")"
row fmnist-png "$tmp/fm_test.rec" 1,28,28 0 "$(ips "$tmp/dec.png")"
row fmnist-jpg "$tmp/fm_jpg.rec" 1,28,28 0 "$(ips "$tmp/dec.jpg")"
for set in test train; do
    "$B" iter "$tmp/fm_$set.rec" 1,28,28 2 0 4 | sed "s/^/peak memory, fm_$set.rec (prefetch_buffer 4): /"
done
