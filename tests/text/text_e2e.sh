#!/bin/sh
# `mxk train --network char-lstm` end to end on a small real text (TEXT: the
# repository's README.md), small dimensions:
#   char:   two epochs at character level with checkpoints: PREFIX-lm.json (level,
#           vocabulary), the metrics log's NLL and perplexity falling, validation
#           perplexity below the vocabulary size (better than chance), resume, and
#           two contexts giving one context's numbers;
#   words:  --buckets at word level on a BucketingModule, fused or not;
#   errors: bad options and data give their exact messages, before any training.
#   text_e2e.sh CASE MXK CONFIG_DIR WORK_DIR TEXT
set -u
CASE=$1 MXK=$2 CONF=$3 WORK=$4 TEXT=$5
. "$(dirname "$0")/../e2e_env.sh"
small="--num-hidden 24 --num-embed 12 --seq-len 16 --batch-size 8 --no-progress"
# expect_error FIRST_LINE ARGS...: mxk fails with FIRST_LINE as its first stderr line
expect_error() {
    want=$1
    shift
    mxk "$@" >out.txt 2>err.txt && fail "accepted: $*"
    [ "$(head -n 1 err.txt)" = "$want" ] || fail "$*: got '$(head -n 1 err.txt)', want '$want'"
    [ ! -e ck ] || fail "$*: wrote a checkpoint"
}
case $CASE in
char)
    # shellcheck disable=SC2086
    mxk train --network char-lstm --data-text "$TEXT" $small --num-epochs 2 --model-prefix ck/c \
        --metrics-log m.jsonl 2>train.log || fail "train: $(tail -n 3 train.log)"
    grep -q "^Data: text $TEXT, [0-9]* chars (char level), [0-9]* training sequences" train.log ||
        fail "header: $(grep '^Data' train.log)"
    for f in ck/c-lm.json ck/c-symbol.json ck/c-0001.params ck/c-0002.params ck/c-0002.states; do
        [ -s "$f" ] || fail "no $f"
    done
    grep -q '"level": "char"' ck/c-lm.json || fail "lm.json: $(head -c 300 ck/c-lm.json)"
    # epoch 1's NLL below epoch 0's, and validation perplexity below the vocabulary size
    v=$(sed -n 's/.*"vocab_size": \([0-9]*\).*/\1/p' ck/c-lm.json)
    awk -v V="$v" -F'"nll-loss": |, "perplexity": |}' '
        /"epoch": 0/ { n0 = $2 } /"epoch": 1/ { n1 = $2; p1 = $(NF - 2) }
        END { if (!(n1 < n0 && p1 < V)) { print "nll " n0 " -> " n1 ", perplexity " p1 " vs " V;
              exit 1 } }' m.jsonl || fail "not learning: $(cat m.jsonl)"
    # shellcheck disable=SC2086
    mxk train --network char-lstm --data-text "$TEXT" $small --num-epochs 3 --model-prefix ck/c \
        --load-epoch 2 2>resume.log || fail "resume: $(tail -n 3 resume.log)"
    grep -q "^Loaded model ck/c-0002.params" resume.log || fail "resume did not load"
    grep -q "^Epoch\[2\] Validation-perplexity=" resume.log || fail "resume: no epoch 2"
    mxk score --model-prefix ck/c --load-epoch 3 >score.txt 2>&1 && fail "score read a text model"
    [ "$(head -n 1 score.txt)" = "mxk: error: ck/c-lm.json: a recurrent language model: score reads images, not text; its validation NLL and perplexity are in mxk train's log (--metrics-log), and \`mxk sample\` writes text with it" ] ||
        fail "score: $(head -n 1 score.txt)"
    # two contexts split each batch's sequences and sum the gradients: the same numbers
    for ctx in cpu:0 cpu:0,cpu:1; do
        # shellcheck disable=SC2086
        mxk train --network char-lstm --data-text "$TEXT" $small --num-epochs 1 --ctx $ctx \
            2>"ctx$ctx.log" || fail "--ctx $ctx: $(tail -n 3 "ctx$ctx.log")"
    done
    one=$(sed -n 's/^Epoch\[0\] Validation-nll-loss=//p' ctxcpu:0.log)
    two=$(sed -n 's/^Epoch\[0\] Validation-nll-loss=//p' ctxcpu:0,cpu:1.log)
    awk -v a="$one" -v b="$two" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-5 && d > -1e-5) }' ||
        fail "two contexts: '$two', one: '$one'"
    ;;
words)
    for fused in "" --fused; do
        # shellcheck disable=SC2086
        mxk train --network char-lstm --data-text "$TEXT" $small --buckets 8,16,32 --num-epochs 1 \
            --rnn-mode gru $fused --model-prefix ck/w 2>w.log || fail "words $fused: $(tail -n 3 w.log)"
        grep -q "^Data: text $TEXT, [0-9]* words (word level), [0-9]* training sentences" w.log ||
            fail "header: $(grep '^Data' w.log)"
        grep -q "^Epoch\[0\] Validation-perplexity=" w.log || fail "no validation: $(cat w.log)"
        grep -q '"level": "word"' ck/w-lm.json || fail "lm.json level"
        # the checkpoint's symbol is the default (largest) bucket's: 32 steps
        [ "$(grep -c '"op": "Embedding"' ck/w-symbol.json)" = 1 ] || fail "symbol"
    done
    ;;
errors)
    expect_error "mxk train: unknown --rnn-mode 'lstmx' (lstm, gru, rnn_tanh, rnn_relu)" \
        train --network char-lstm --rnn-mode lstmx --model-prefix ck/e
    expect_error "mxk train: --buckets: a list of 1 to 64 lengths from 1 to 4096, e.g. 10,20,30" \
        train --network char-lstm --buckets 10,0 --model-prefix ck/e
    expect_error "mxk train: option '--seq-len' needs an integer from 1 to 4096" \
        train --network char-lstm --seq-len 0 --model-prefix ck/e
    expect_error "mxk train: --num-examples does not apply to --network char-lstm" \
        train --network char-lstm --num-examples 10 --model-prefix ck/e
    expect_error "mxk train: --data-train does not apply to --network char-lstm" \
        train --network char-lstm --data-train x.rec --model-prefix ck/e
    expect_error "mxk train: option '--dropout' needs a number in [0, 1)" \
        train --network char-lstm --dropout 1 --model-prefix ck/e
    expect_error "mxk train: option '--clip-gradient' needs a positive number" \
        train --network char-lstm --clip-gradient 0 --model-prefix ck/e
    expect_error "mxk: error: cannot open text file 'nothere.txt': No such file or directory" \
        train --network char-lstm --data-text nothere.txt --model-prefix ck/e
    printf 'tiny text\n' >tiny.txt
    expect_error "mxk: error: tiny.txt: 10 tokens are too few for one training batch of 32 sequences (--batch-size, --seq-len)" \
        train --network char-lstm --data-text tiny.txt --model-prefix ck/e
    printf 'ok \377 bad\n' >bad.txt
    expect_error "mxk: error: bad.txt: tokenize_chars: invalid UTF-8 at byte 3" \
        train --network char-lstm --data-text bad.txt --model-prefix ck/e
    ;;
*) fail "unknown case $CASE" ;;
esac
echo "ok: $CASE"
