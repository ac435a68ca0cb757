#!/bin/sh
# `mxk sample` (tools/mxk/cmd_sample.c) on tiny models that lm_tool
# (tests/train/lm_tool.c) writes with random parameters: the same seed gives the
# same text, another seed another; the text starts with the prefix and has
# --length tokens of the vocabulary; a tiny temperature gives the greedy text
# whatever the seed; --batch and --json; and each error's exact message.
#
#   sample_test.sh CASE MXK LM_TOOL CONF WORK_DIR
# POSIX sh only.
set -u

if [ $# -ne 5 ]; then
    echo "usage: sample_test.sh CASE MXK LM_TOOL CONF WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 LM_TOOL=$3 CONF=$4 WORK=$5

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK"
cd "$WORK" || exit 1

printf 'The quick brown fox jumps over the lazy dog .\nThe dog sleeps .\n' >text.txt
"$LM_TOOL" model char lstm 0 char text.txt 5 >/dev/null || exit 1
"$LM_TOOL" model word gru 1 word text.txt 9 >/dev/null || exit 1

# sample ARGS...: mxk sample of the model "char" at epoch 1 with ARGS.
sample() {
    run sample --model-prefix char --load-epoch 1 "$@"
}

case $CASE in
sample_seed)
    sample --prefix-text "The " --length 40 --seed 3
    expect_rc 0
    cp "$OUT" a.txt
    [ "$(head -c 4 a.txt)" = "The " ] || fail "the sample does not start with the prefix"
    # the prefix, 40 characters of the text's alphabet, a newline (no line ends in the
    # corpus but its own)
    chars=$(tr -d '\n' <a.txt | wc -c)
    [ "$chars" -ge 40 ] && [ "$chars" -le 44 ] || fail "$chars characters, expected 44 less newlines"
    ! tr -d 'Thequickbrownfxjmpsvtlazydg. \n' <a.txt | grep -q . ||
        fail "a character outside the vocabulary"
    sample --prefix-text "The " --length 40 --seed 3
    cmp -s a.txt "$OUT" || fail "seed 3 gave another text the second time"
    sample --prefix-text "The " --length 40 --seed 4
    expect_rc 0
    ! cmp -s a.txt "$OUT" || fail "seeds 3 and 4 gave the same text"
    # near-zero temperature: the most probable character every time, whatever the seed
    sample --prefix-text "The " --length 30 --seed 1 --temperature 0.001
    cp "$OUT" greedy.txt
    sample --prefix-text "The " --length 30 --seed 2 --temperature 0.001
    cmp -s greedy.txt "$OUT" || fail "the greedy text depends on the seed"
    echo "ok [$CASE]"
    ;;
sample_batch)
    sample --prefix-text "fox" --length 12 --seed 7 --batch 3
    expect_rc 0
    [ "$(grep -c '^=== sample [012] ===$' "$OUT")" = 3 ] || fail "not three sample headers"
    [ "$(grep -c '^fox' "$OUT")" = 3 ] || fail "not three samples starting with the prefix"
    cp "$OUT" b.txt
    sample --prefix-text "fox" --length 12 --seed 7 --batch 3
    cmp -s b.txt "$OUT" || fail "the batch is not the same for the same seed"
    sample --prefix-text "fox" --length 12 --seed 7 --batch 3 --json
    expect_rc 0
    out_has '"level": "char"'
    out_has '"seed": 7'
    out_has '"samples": ["fox'
    # a word-level model (fused GRU): words of the vocabulary joined by spaces
    run sample --model-prefix word --load-epoch 1 --prefix-text "The dog" --length 15 --seed 2
    expect_rc 0
    [ "$(head -c 8 "$OUT")" = "The dog " ] || fail "the word sample does not start with the prefix"
    tr ' ' '\n' <"$OUT" | grep -v '^$' | while read -r w; do
        grep -q -w -F -e "$w" text.txt || { echo "word '$w' is not in the text"; exit 1; }
    done || fail "a word outside the vocabulary"
    echo "ok [$CASE]"
    ;;
sample_errors)
    run sample --model-prefix nope --load-epoch 1 --prefix-text a
    expect_rc 1
    err_is "mxk: error: rnn lm: cannot open model description 'nope-lm.json': No such file or directory"
    sample --load-epoch 2 --prefix-text a
    expect_rc 1
    err_is "mxk: error: cannot open NDArray file 'char-0002.params': No such file or directory"
    sample --prefix-text "Thé"
    expect_rc 1
    err_is "mxk: error: --prefix-text: the token 'é' is not in the vocabulary of char-lm.json"
    run sample --model-prefix word --load-epoch 1 --prefix-text "The cat"
    expect_rc 1
    err_is "mxk: error: --prefix-text: the token 'cat' is not in the vocabulary of word-lm.json"
    # the parameters of another model: a vocabulary of another size, a fused model
    cp word-lm.json mixed-lm.json
    cp char-0001.params mixed-0001.params
    run sample --model-prefix mixed --load-epoch 1 --prefix-text "The"
    expect_rc 1
    err_is "mxk: error: mixed-0001.params: parameter 'embed_weight' has shape (30,6), the model of mixed-lm.json needs (11,6)"
    "$LM_TOOL" model fused lstm 1 char text.txt 5 >/dev/null || exit 1
    cp char-0001.params fused-0001.params
    run sample --model-prefix fused --load-epoch 1 --prefix-text "The"
    expect_rc 1
    err_is "mxk: error: fused-0001.params has no parameter 'lstm_parameters' (not a checkpoint of the model of fused-lm.json)"
    for bad in "--temperature 0|--temperature must be > 0, got 0" \
        "--temperature -0.5|--temperature must be > 0, got -0.5" \
        "--length 0|--length must be >= 1, got 0" \
        "--batch 0|--batch must be >= 1, got 0" \
        "--batch 200 --length 1000000|--batch times --length must be at most 100000000 tokens" \
        "--prefix-text=|--prefix-text is required (at least one token to start from)"; do
        sample --prefix-text T ${bad%%|*}
        expect_rc 2
        err_first "mxk sample: ${bad#*|}"
    done
    run sample --prefix-text T
    expect_rc 2
    err_first "mxk sample: --model-prefix and --load-epoch are required"
    echo "ok [$CASE]"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
