"""The trainer's text pipeline against MXNet 1.9.1 (python/mxnet/rnn/io.py and
example/rnn/bucketing/lstm_bucketing.py tokenize_text): on a small generated corpus,
mxk's word tokenizer and encode_sentences give MXNet's ids and vocabulary (same
insertion order), and its BucketSentenceIter gives MXNet's default bucket, batch
count, discard count and, unshuffled, the very same batches in the same order (MXNet
always shuffles in reset: its random.shuffle / np.random.shuffle are replaced by
no-ops here); shuffled, every epoch holds the same number of batches per bucket and
every row served is one of MXNet's padded sentences of that bucket with its shifted
label. The character tokenizer with encode_sentences matches list(text) on a text
with multi-byte UTF-8 characters.

Usage: bucket_conform.py TOOL WORK_DIR (run through tests/conformance/run.sh).
"""
import collections
import contextlib
import io
import os
import random
import subprocess
import sys

import mxnet as mx
import numpy as np

WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away", "home"]


def corpus():
    """60 lines of 1-14 words: PTB-style " \\n" ends, plain "\\n" ends, double spaces,
    an empty line, "\\r\\n" and "\\r" line ends and a last line without a newline."""
    rng = random.Random(5)
    lines = []
    for i in range(60):
        n = rng.choice([2, 3, 3, 5, 5, 6, 9, 14]) if i % 11 else rng.randint(1, 14)
        words = [rng.choice(WORDS) for _ in range(n)]
        sep = "  " if i % 7 == 3 else " "
        lines.append(sep.join(words) + (" \n" if i % 5 else "\n"))
    lines[17] = "\n"
    lines[23] = "the cat sat\r\n"  # universal newlines: read as "\n"
    lines[29] = "a dog \rran far\n"
    lines[-1] = lines[-1].rstrip("\n")
    return "".join(lines)


def run_tool(tool, *args):
    """The tool's output lines."""
    out = subprocess.run([tool] + [str(a) for a in args], check=True, capture_output=True,
                         text=True).stdout
    return out.splitlines()


def encoded_lines(sentences, vocab):
    """The tool's vocab and sent lines for MXNet's encode_sentences result."""
    lines = ["vocab %d %s" % (i, t.encode("utf-8").hex()) for t, i in vocab.items()]
    return lines + ["sent" + "".join(" %d" % x for x in s) for s in sentences]


def fmt(tag, arr):
    return tag + "".join(" %g" % x for x in np.asarray(arr, dtype=np.float32).ravel())


def mxnet_iter(sentences, batch, buckets, invalid, layout, shuffle):
    """MXNet's BucketSentenceIter (unshuffled unless `shuffle`) and its warning line."""
    mod = sys.modules["mxnet.rnn.io"]
    saved = mod.random, np.random.shuffle
    if not shuffle:
        mod.random = type("NoShuffle", (), {"shuffle": staticmethod(lambda x: None)})
        np.random.shuffle = lambda x: None
    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log):
            it = mx.rnn.BucketSentenceIter(sentences, batch, buckets=list(buckets),
                                           invalid_label=invalid, layout=layout)
    finally:
        mod.random, np.random.shuffle = saved
    return it, log.getvalue().strip()


def mxnet_epoch(it, shuffle):
    """One epoch of MXNet's iterator as the tool's lines."""
    mod = sys.modules["mxnet.rnn.io"]
    saved = mod.random, np.random.shuffle
    if not shuffle:
        mod.random = type("NoShuffle", (), {"shuffle": staticmethod(lambda x: None)})
        np.random.shuffle = lambda x: None
    try:
        it.reset()
    finally:
        mod.random, np.random.shuffle = saved
    lines = []
    for b in it:
        d, l = b.data[0].asnumpy(), b.label[0].asnumpy()
        lines += ["batch %d %d %d" % ((b.bucket_key,) + d.shape), fmt("data", d), fmt("label", l)]
        assert b.provide_data[0].shape == d.shape and b.provide_label[0].shape == l.shape
    return lines


def check(what, got, want):
    if got != want:
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                sys.exit("%s: line %d differs:\nmxk   %s\nMXNet %s" % (what, i, g, w))
        sys.exit("%s: %d lines from mxk, %d from MXNet" % (what, len(got), len(want)))


def check_words(tool, path, invalid, start, batch, buckets, layout):
    what = "words invalid %d start %d batch %d buckets %s %s" % (invalid, start, batch,
                                                                   buckets or "chosen", layout)
    lines = [filter(None, i.split(" ")) for i in open(path, encoding="utf-8").readlines()]
    sentences, vocab = mx.rnn.encode_sentences(lines, invalid_label=invalid, start_label=start)
    it, warning = mxnet_iter(sentences, batch, buckets, invalid, layout, shuffle=False)
    ndiscard = int(warning.split()[2])
    assert warning == "WARNING: discarded %d sentences longer than the largest bucket." % ndiscard
    head = ["default %d %d %d" % ((it.default_bucket_key,) + it.provide_data[0].shape),
            "batches %d" % len(it.idx), "discarded %d" % ndiscard]
    want = encoded_lines(sentences, vocab) + head + mxnet_epoch(it, False) + mxnet_epoch(it, False)
    arg_buckets = ",".join(map(str, buckets)) if buckets else "-"
    got = run_tool(tool, "words", path, invalid, start, batch, arg_buckets, layout, 0, 1, 2)
    check(what, got, want)

    # shuffled: per epoch the same batches per bucket, every row one of the bucket's
    got = run_tool(tool, "words", path, invalid, start, batch, arg_buckets, layout, 1, 3, 2)
    got = got[len(want) - 2 * 3 * len(it.idx):]
    random.seed(1)
    np.random.seed(1)
    it, _ = mxnet_iter(sentences, batch, buckets, invalid, layout, shuffle=True)
    rows = {key: {tuple(r) for r in it.data[i]} for i, key in enumerate(it.buckets)}
    for epoch in range(2):
        mine = got[epoch * 3 * len(it.idx):(epoch + 1) * 3 * len(it.idx)]
        theirs = mxnet_epoch(it, True)
        keys = collections.Counter(l.split()[1] for l in mine if l.startswith("batch"))
        if keys != collections.Counter(l.split()[1] for l in theirs if l.startswith("batch")):
            sys.exit("%s shuffled: batches per bucket differ: %s" % (what, keys))
        for b in range(len(it.idx)):
            key, n, t = map(int, mine[3 * b].split()[1:])
            d = np.array(mine[3 * b + 1].split()[1:], dtype=np.float32).reshape(n, t)
            l = np.array(mine[3 * b + 2].split()[1:], dtype=np.float32).reshape(n, t)
            if layout == "TN":
                d, l = d.T, l.T
            for r in range(d.shape[0]):
                if tuple(d[r]) not in rows[key]:
                    sys.exit("%s shuffled: row %s is no sentence of bucket %d" % (what, d[r], key))
                if list(l[r]) != list(d[r][1:]) + [invalid]:
                    sys.exit("%s shuffled: label %s of row %s" % (what, l[r], d[r]))
    print("ok: %s" % what)


def main():
    tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "words.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(corpus())
    check_words(tool, path, 0, 1, 3, [4, 8, 12], "NT")   # lstm_bucketing.py's labels
    check_words(tool, path, 0, 1, 2, [12, 6, 3], "TN")
    check_words(tool, path, -1, 0, 4, [], "NT")          # chosen buckets, upstream's defaults
    check_words(tool, path, -1, 0, 3, [], "TN")

    text = "Caf\u00e9 na\u00efve \u20ac5,\nthe end. \U0001F600 caf\u00e9\n"
    path = os.path.join(work, "chars.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    sentences, vocab = mx.rnn.encode_sentences([list(text)])
    check("chars", run_tool(tool, "chars", path, -1, 0), encoded_lines(sentences, vocab))
    print("ok: chars")


if __name__ == "__main__":
    main()
