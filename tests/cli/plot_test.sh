#!/bin/sh
# `mxk plot` (tools/mxk/cmd_plot.c): pictures from a metrics log in the format
# `mxk train --metrics-log` writes (train/module.c), and the errors: a missing or
# malformed log and a bad output name are reported exactly, and no output file is
# created or changed. A build without PLplot runs every case as "says it was built
# without plotting".
#
#   plot_test.sh CASE MXK JSON_CHECK HAVE_PLPLOT WORK_DIR
# POSIX sh only.
set -u

if [ $# -ne 5 ]; then
    echo "usage: plot_test.sh CASE MXK JSON_CHECK HAVE_PLPLOT WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 HAVE_PLPLOT=$4 WORK=$5

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK"
cd "$WORK" || exit 1

run() {
    last="$*"
    rc=0
    "$MXK" "$@" >"$OUT" 2>"$ERR" || rc=$?
}

# Three epochs as mxk train writes them: two metrics, a validation pass missing in
# the last epoch, a decaying learning rate.
cat >metrics.jsonl <<'LOG'
{"epoch": 0, "train": {"accuracy": 0.71, "cross-entropy": 0.9}, "validation": {"accuracy": 0.7, "cross-entropy": 0.95}, "lr": 0.1, "samples_per_sec": 5000.0, "seconds": 10.0}
{"epoch": 1, "train": {"accuracy": 0.81, "cross-entropy": 0.5}, "validation": {"accuracy": 0.78, "cross-entropy": 0.6}, "lr": 0.05, "samples_per_sec": 5000.0, "seconds": 10.0}
{"epoch": 2, "train": {"accuracy": 0.85, "cross-entropy": 0.4}, "validation": null, "lr": 0.025, "samples_per_sec": 5000.0, "seconds": 10.0}
LOG

# bytes FILE OFFSET COUNT: the bytes as lowercase hex pairs separated by spaces.
bytes() {
    od -An -tx1 -j "$2" -N "$3" "$1" | tr -s ' \n' '  ' | sed 's/^ //; s/ $//'
}

if [ "$HAVE_PLPLOT" != 1 ]; then
    run plot metrics.jsonl -o curve.png
    expect_rc 1
    err_first "mxk: error: this mxk was built without plotting (PLplot's libplplot-dev was not found when it was built)"
    [ ! -e curve.png ] || fail "curve.png was created"
    echo "ok [$CASE]: built without plotting, as the command says"
    exit 0
fi

case $CASE in
plot_png)
    run plot metrics.jsonl -o curve.png
    if [ "$rc" -ne 0 ] && grep -q "no 'pngcairo' driver" "$ERR"; then
        echo "SKIP [$CASE]: PLplot's cairo driver (plplot-driver-cairo) is not installed"
        exit 77
    fi
    expect_rc 0
    out_has "wrote curve.png: 3 epochs, 2 metrics and the learning rate"
    # PNG signature, then the IHDR chunk: 1280 x 800 (two panels a row, 640 x 400 each)
    [ "$(bytes curve.png 0 8)" = "89 50 4e 47 0d 0a 1a 0a" ] || fail "not a PNG signature"
    [ "$(bytes curve.png 12 12)" = "49 48 44 52 00 00 05 00 00 00 03 20" ] ||
        fail "IHDR is not 1280 x 800: $(bytes curve.png 12 12)"
    ;;
plot_svg)
    run plot metrics.jsonl --output curve.svg
    expect_rc 0
    head -n 1 curve.svg | grep -q '^<?xml ' || fail "no XML declaration"
    [ "$(grep -c '<svg ' curve.svg)" -eq 1 ] || fail "not one <svg> root"
    grep -q '<svg [^>]*width="1280pt" height="800pt"' curve.svg || fail "wrong size"
    [ "$(tail -n 1 curve.svg)" = "</svg>" ] || fail "the root is not closed at the end"
    ;;
plot_pdf)
    # one metric without validation or learning rate: a single panel
    printf '{"epoch": 0, "train": {"mse": 2.5}, "validation": null}\n' >one.jsonl
    run plot one.jsonl -o curve.pdf
    expect_rc 0
    out_has "wrote curve.pdf: 1 epochs, 1 metrics"
    [ "$(head -c 5 curve.pdf)" = "%PDF-" ] || fail "not a PDF header"
    tail -c 6 curve.pdf | grep -q '%%EOF' || fail "no %%EOF trailer"
    ;;
plot_json)
    run --json plot metrics.jsonl -o curve.svg
    expect_rc 0
    json "output=curve.svg" "format=svg" "epochs=3" "metrics#=2" "metrics.0=accuracy" \
        "metrics.1=cross-entropy" "validation=true" "lr=true"
    ;;
plot_errors)
    run plot missing.jsonl -o curve.png
    expect_rc 1
    err_first "mxk: error: cannot open metrics log 'missing.jsonl': No such file or directory"
    [ ! -e curve.png ] || fail "curve.png created for a missing log"
    # a garbled second line: nothing is written, an existing picture stays as it was
    head -n 1 metrics.jsonl >garbled.jsonl
    echo '{"epoch": 1, "train": {"accuracy": 0.8' >>garbled.jsonl
    run plot garbled.jsonl -o curve.svg
    expect_rc 1
    err_first "mxk: error: metrics log 'garbled.jsonl' line 2: not JSON: '}' expected near end of file"
    [ ! -e curve.svg ] || fail "curve.svg created for a garbled log"
    echo "old picture" >old.png
    run plot garbled.jsonl -o old.png
    expect_rc 1
    [ "$(cat old.png)" = "old picture" ] || fail "old.png was changed"
    printf '{"epoch": 0, "train": {"accuracy": "high"}}\n' >typed.jsonl
    run plot typed.jsonl -o curve.svg
    expect_rc 1
    err_first "mxk: error: metrics log 'typed.jsonl' line 1: metric 'accuracy' is not a number or null"
    printf '{"train": {"accuracy": 0.5}}\n' >noepoch.jsonl
    run plot noepoch.jsonl -o curve.svg
    expect_rc 1
    err_first "mxk: error: metrics log 'noepoch.jsonl' line 1: \"epoch\" is missing or not an integer"
    printf '\n\n' >blank.jsonl
    run plot blank.jsonl -o curve.svg
    expect_rc 1
    err_first "mxk: error: metrics log 'blank.jsonl' has no epochs"
    run plot metrics.jsonl -o curve.gif
    expect_rc 2
    err_first "mxk plot: cannot tell the format of 'curve.gif': end it in .png, .svg or .pdf"
    run plot metrics.jsonl
    expect_rc 2
    err_first "mxk plot: give the output file with -o"
    run plot -o curve.png
    expect_rc 2
    err_first "mxk plot: give the metrics log (written by mxk train --metrics-log)"
    run plot metrics.jsonl -o nodir/curve.png
    expect_rc 1
    err_first "mxk: error: cannot write 'nodir/curve.png': No such file or directory"
    [ ! -e curve.svg ] && [ ! -e curve.png ] && [ ! -e curve.gif ] || fail "an output was created"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "ok [$CASE]"
