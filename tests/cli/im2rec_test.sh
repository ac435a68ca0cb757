#!/bin/sh
# `mxk im2rec` (tools/mxk/cmd_im2rec.c, im2rec_list.c, im2rec_pack.c): lists
# byte for byte as upstream tools/im2rec.py writes them (the expected shuffled
# orders below were computed with CPython's random.seed(100); random.shuffle,
# and the recursive list with im2rec.py itself), packed records checked through
# `mxk rec ls --json` (sizes from the closed form of --resize / --center-crop),
# --pass-through records holding the files' exact bytes, the same .rec for any
# --num-thread, and the exact errors for bad input, which leave no file behind.
#
#   im2rec_test.sh CASE MXK JSON_CHECK WRITE_IMAGE WORK_DIR
# POSIX sh only.
set -u

if [ $# -ne 5 ]; then
    echo "usage: im2rec_test.sh CASE MXK JSON_CHECK WRITE_IMAGE WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 WRITE_IMAGE=$4 WORK=$5

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK"
cd "$WORK" || exit 1
P=$(pwd -P)

run() {
    last="$*"
    rc=0
    "$MXK" "$@" >"$OUT" 2>"$ERR" || rc=$?
}

# img FILE W H C SEED: writes one image (PNG or JPEG by FILE's extension).
img() {
    mkdir -p "$(dirname "$1")" && "$WRITE_IMAGE" "$@" || fail "cannot write image $1"
}

# The folder of the list cases: three classes (one nested), a root image, a
# file of another extension, an empty folder.
make_tree() {
    img img/top.PNG 5 5 3 0
    for c in cat dog bird/sub; do
        n=$(echo "$c" | cut -c1-3)
        i=0
        for w in 20 23 26 29; do
            [ "$c" = cat ] || [ $i -lt 3 ] || break
            [ "$c" != bird/sub ] || [ $i -lt 2 ] || break
            ext=jpg
            [ $((i % 2)) -eq 0 ] || ext=png
            img "img/$c/$n$i.$ext" $w $((14 + i)) 3 $i
            i=$((i + 1))
        done
    done
    echo x >img/cat/notes.txt
    mkdir -p img/empty
}

# same FILE: FILE has exactly the lines of stdin.
same() {
    cmp -s - "$1" || fail "$1 differs from the expected list: $(cat "$1")"
}

TAB=$(printf '\t')

case $CASE in
im2rec_list)
    make_tree
    run im2rec --list --recursive data img
    expect_rc 0
    printf '%s\n' ". 0" "bird/sub 1" "cat 2" "dog 3" "wrote $P/data.lst: 10 images" | cmp -s - "$OUT" ||
        fail "stdout is not the folder labels and the summary"
    same data.lst <<LST
4${TAB}2.000000${TAB}cat/cat1.png
0${TAB}0.000000${TAB}top.PNG
5${TAB}2.000000${TAB}cat/cat2.jpg
9${TAB}3.000000${TAB}dog/dog2.jpg
3${TAB}2.000000${TAB}cat/cat0.jpg
1${TAB}1.000000${TAB}bird/sub/bir0.jpg
6${TAB}2.000000${TAB}cat/cat3.png
8${TAB}3.000000${TAB}dog/dog1.png
7${TAB}3.000000${TAB}dog/dog0.jpg
2${TAB}1.000000${TAB}bird/sub/bir1.png
LST
    # without --recursive: ROOT's own images only, label 0; --exts compares the
    # lower-cased extension with the given ones
    run im2rec --list top img
    expect_rc 0
    printf '0\t0.000000\ttop.PNG\n' | same top.lst
    run im2rec --list --recursive --no-shuffle --exts .png .PNG pngs img
    expect_rc 0
    same pngs.lst <<LST
0${TAB}0.000000${TAB}top.PNG
1${TAB}1.000000${TAB}bird/sub/bir1.png
2${TAB}2.000000${TAB}cat/cat1.png
3${TAB}2.000000${TAB}cat/cat3.png
4${TAB}3.000000${TAB}dog/dog1.png
LST
    # 25 files: Python's shuffle of range(25) after random.seed(100)
    mkdir flat
    i=0
    while [ $i -lt 25 ]; do
        : >"flat/f$(printf %02d $i).jpg"
        i=$((i + 1))
    done
    run im2rec --list flat flat
    expect_rc 0
    for i in 6 20 10 18 8 22 2 9 21 15 0 24 7 19 1 17 3 16 13 11 12 5 23 14 4; do
        printf '%d\t0.000000\tf%02d.jpg\n' $i $i
    done | same flat.lst
    # chunks of ceil(25/3) = 9; per chunk test int(9*0.2) = 1, train int(9*0.5) = 4,
    # val the rest (the last chunk has 7)
    run --json im2rec --list --chunks 3 --train-ratio 0.5 --test-ratio 0.2 --no-shuffle parts flat
    expect_rc 0
    json "images=25" "lists#=9" "lists.0.path=$P/parts_0_test.lst" "lists.0.images=1" \
        "lists.1.path=$P/parts_0_val.lst" "lists.1.images=4" "lists.2.path=$P/parts_0_train.lst" \
        "lists.2.images=4" "lists.8.path=$P/parts_2_train.lst" "lists.8.images=4" \
        "lists.7.path=$P/parts_2_val.lst" "lists.7.images=2" "labels#=0"
    printf '9\t0.000000\tf09.jpg\n' | same parts_1_test.lst
    printf '%d\t0.000000\tf%02d.jpg\n' 19 19 20 20 21 21 22 22 | same parts_2_train.lst
    # train + test = 1: no val list
    run im2rec --list --train-ratio 0.75 --test-ratio 0.25 --no-shuffle tt flat
    expect_rc 0
    [ -f tt_train.lst ] && [ -f tt_test.lst ] && [ ! -e tt_val.lst ] || fail "expected tt_train.lst and tt_test.lst only"
    [ "$(wc -l <tt_train.lst)" -eq 18 ] && [ "$(wc -l <tt_test.lst)" -eq 6 ] || fail "expected 18 train and 6 test lines"
    # a symlink back to an ancestor is skipped, not followed forever
    mkdir -p loop/a
    : >loop/a/x.png
    ln -s .. loop/a/up
    run im2rec --list --recursive loop loop
    expect_rc 0
    err_is "mxk: warning: skipping folder 'a/up': it is its own ancestor (a symlink loop)"
    printf '0\t0.000000\ta/x.png\n' | same loop.lst
    echo "ok [$CASE]: lists as upstream im2rec.py writes them"
    ;;
im2rec_pack)
    img img/a/wide.png 23 15 3 1
    img img/a/tall.jpg 14 21 3 2
    img img/b/gray.png 9 7 1 3
    img img/b/alpha.png 12 10 4 4
    printf '%s\n' "0${TAB}1${TAB}a/wide.png" "1${TAB}2.5${TAB}a/tall.jpg" "2${TAB}3${TAB}b/gray.png" \
        "3${TAB}4${TAB}b/alpha.png" >data.lst
    run im2rec --encoding .png --color -1 data img
    expect_rc 0
    [ ! -s "$ERR" ] || fail "stderr is not empty"
    [ "$(cat "$OUT")" = "wrote $P/data.rec and $P/data.idx: 4 records, 0 skipped, $(wc -c <data.rec) bytes" ] ||
        fail "unexpected summary"
    run --json rec ls data.rec
    expect_rc 0
    json "count=4" "records.0.key=0" "records.0.label=1" "records.0.format=png" "records.0.width=23" \
        "records.0.height=15" "records.0.channels=3" "records.1.label=2.5" "records.1.id=1" \
        "records.1.format=png" "records.1.width=14" "records.1.height=21" "records.2.channels=1" \
        "records.3.channels=4" "records.3.id2=0"
    # colour (the default): alpha dropped, gray expanded; --resize N: short side N,
    # the other side scaled with integer division (23*8//15 = 12, 21*8//14 = 12)
    run im2rec --resize 8 data img
    expect_rc 0
    run --json rec ls data.rec
    json "records.0.format=jpeg" "records.0.width=12" "records.0.height=8" "records.0.channels=3" \
        "records.1.width=8" "records.1.height=12" "records.2.channels=3" "records.2.width=10" \
        "records.2.height=8" "records.3.channels=3"
    # --center-crop: the middle square, then the resize; grayscale
    run im2rec --center-crop --resize 6 --color 0 --encoding .png data img
    expect_rc 0
    run --json rec ls data.rec
    json "records.0.width=6" "records.0.height=6" "records.0.channels=1" "records.1.width=6" \
        "records.1.height=6" "records.3.channels=1"
    # the same records with 3 worker threads
    cp data.rec one.rec
    cp data.idx one.idx
    run im2rec --center-crop --resize 6 --color 0 --encoding .png --num-thread 3 data img
    expect_rc 0
    cmp -s data.rec one.rec && cmp -s data.idx one.idx || fail "--num-thread 3 wrote other files"
    # --pass-through: the files' own bytes after the 24-byte IRHeader
    run im2rec --pass-through data img
    expect_rc 0
    run rec cat data.rec --index 1 --output tall.jpg
    expect_rc 0
    cmp -s tall.jpg img/a/tall.jpg || fail "the pass-through payload differs from the file"
    out_has "wrote tall.jpg: $(wc -c <img/a/tall.jpg) bytes (jpeg 14x21x3), record id 1"
    # --pack-label: every label of the line, flag = their number
    printf '%s\n' "7${TAB}1${TAB}0.5${TAB}a/wide.png" "9${TAB}2${TAB}-3${TAB}a/tall.jpg" >multi.lst
    run im2rec --pack-label --pass-through multi img
    expect_rc 0
    run --json rec ls multi.rec
    json "records.0.key=7" "records.0.flag=2" "records.0.label.1=0.5" "records.1.id=9" \
        "records.1.label.0=2" "records.1.label.1=-3"
    run im2rec --pass-through multi img
    run --json rec ls multi.rec
    json "records.0.flag=0" "records.0.label=1" "records.1.label=2"
    # PREFIX a folder: every .lst in it
    mkdir lists
    cp data.lst lists/x.lst
    cp multi.lst lists/y.lst
    run --json im2rec --pass-through lists img
    expect_rc 0
    json "files#=2" "files.0.rec=$P/lists/x.rec" "files.0.records=4" "files.1.idx=$P/lists/y.idx" \
        "files.1.records=2" "files.1.skipped=0"
    echo "ok [$CASE]: records packed as the options say"
    ;;
im2rec_errors)
    img img/ok.png 8 6 3 1
    head -c 60 img/ok.png >img/cut.png
    run im2rec data img
    expect_rc 1
    err_is "mxk: error: no list file '$P/data*.lst' (make one with --list)"
    # an image that cannot be read or decoded is skipped and counted
    printf '%s\n' "0${TAB}1${TAB}ok.png" "1${TAB}1${TAB}cut.png" "2${TAB}0${TAB}gone.png" "" >data.lst
    run im2rec data img
    expect_rc 0
    err_is "mxk: warning: skipping $P/data.lst:2: cannot use image '$P/img/cut.png': corrupt PNG: truncated file" \
        "mxk: warning: skipping $P/data.lst:3: cannot open image '$P/img/gone.png': No such file or directory"
    out_has "1 records, 2 skipped"
    cp data.rec good.rec
    # a malformed list is an error and leaves the .rec as it was
    printf '%s\n' "0${TAB}1${TAB}ok.png" "x${TAB}1${TAB}ok.png" >data.lst
    run im2rec data img
    expect_rc 1
    err_is "mxk: error: $P/data.lst:2: index 'x' is not a non-negative integer"
    cmp -s data.rec good.rec || fail "data.rec changed"
    printf '0\tok.png\n' >data.lst
    run im2rec data img
    expect_rc 1
    err_is "mxk: error: $P/data.lst:1: expected 'INDEX<TAB>LABEL<TAB>PATH', got 2 fields"
    printf '0\tone\tok.png\n' >data.lst
    run im2rec data img
    expect_rc 1
    err_is "mxk: error: $P/data.lst:1: label 'one' is not a number"
    printf '%s\n' "0${TAB}1${TAB}2${TAB}ok.png" "1${TAB}1${TAB}ok.png" >data.lst
    run im2rec --pack-label data img
    expect_rc 1
    err_is "mxk: error: $P/data.lst:2: 1 labels, but line 1 has 2 (--pack-label needs the same number on every line)"
    rm data.rec data.idx
    run im2rec --pack-label data img
    [ ! -e data.rec ] && [ ! -e data.idx ] || fail "a failed pack left files"
    ls -a | grep -q mxk-tmp && fail "a temporary file was left"
    run im2rec --list data missing
    expect_rc 1
    err_is "mxk: error: cannot read folder '$P/missing': No such file or directory"
    # usage errors
    run im2rec --color 2 data img
    expect_rc 2
    err_first "mxk im2rec: --color expects 1, 0 or -1, got '2'"
    run im2rec --encoding .bmp data img
    expect_rc 2
    err_first "mxk im2rec: --encoding expects .jpg or .png, got '.bmp'"
    run im2rec --list --train-ratio 1.5 data img
    expect_rc 2
    err_first "mxk im2rec: --train-ratio expects a number from 0 to 1, got '1.5'"
    run im2rec --num-thread 0 data img
    expect_rc 2
    err_first "mxk im2rec: --num-thread expects a number from 1 to 256, got '0'"
    run im2rec data
    expect_rc 2
    err_first "mxk im2rec: expected PREFIX and ROOT"
    run im2rec --help
    expect_rc 0
    for o in --list --exts --chunks --train-ratio --test-ratio --recursive --no-shuffle \
        --pass-through --resize --center-crop --quality --num-thread --color --encoding --pack-label; do
        out_has "  $o"
    done
    echo "ok [$CASE]: bad input reported exactly, nothing half-written"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
