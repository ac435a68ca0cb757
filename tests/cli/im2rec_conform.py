"""`mxk im2rec` and `mxk rec` against MXNet 1.9.1's tools/im2rec.py (shipped in
the mxnet wheel as mxnet/tools/im2rec.py) and python/mxnet/recordio.py:

- lists: the same folder listed by im2rec.py and by mxk gives byte-identical
  .lst files (shuffled, recursive, chunks, ratios, --exts) and the same folder
  labels on stdout;
- --pass-through (with and without --pack-label): byte-identical .rec and .idx;
- a .rec packed by mxk (PNG) reads in MXNet: MXIndexedRecordIO + unpack_img give
  the list's labels and ids and the source images' pixels (cv2.imread), within
  1 of cv2.resize's after --resize (upscaling) and --center-crop, turned by
  the JPEG's EXIF orientation as cv2.imread turns it (--color 1, 0; not -1), and
  mx.io.ImageRecordIter yields the same pixels and labels;
- a .rec written by MXNet (pack_img, JPEG and PNG, multi-label headers) and one
  packed by im2rec.py pass `mxk rec verify`, and `mxk rec ls --json` shows
  their headers and image sizes.

Usage: im2rec_conform.py MXK WRITE_IMAGE WORK_DIR (run through
tests/conformance/run.sh, which skips without the venv).
"""
import json
import os
import shutil
import struct
import subprocess
import sys

import cv2
import mxnet as mx
import numpy as np

MXK, WRITE_IMAGE, WORK = sys.argv[1:4]
IM2REC = os.path.join(os.path.dirname(mx.__file__), "tools", "im2rec.py")


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(p.returncode == 0, "%s failed (%d): %s %s" % (cmd, p.returncode, p.stdout, p.stderr))
    return p.stdout


def mxk(args, cwd):
    return run([MXK] + args, cwd)


def upstream(args, cwd):
    return run([sys.executable, IM2REC] + args, cwd)


def make_images(root):
    """Three classes, one nested, PNG and JPEG of several sizes, other files."""
    spec = [("cat", 5), ("dog", 4), ("bird/small", 3), ("bird", 2)]
    seed = 0
    for folder, n in spec:
        os.makedirs(os.path.join(root, folder), exist_ok=True)
        for i in range(n):
            seed += 1
            ext = ".png" if i % 2 else ".jpg"
            if i == 3:
                ext = ".JPEG"
            path = os.path.join(root, folder, "%s%d%s" % (folder.replace("/", "_"), i, ext))
            subprocess.check_call([WRITE_IMAGE, path, str(12 + 3 * i), str(10 + 2 * i), "3", str(seed)])
    open(os.path.join(root, "cat", "readme.txt"), "w").write("not an image\n")
    os.makedirs(os.path.join(root, "empty"), exist_ok=True)
    subprocess.check_call([WRITE_IMAGE, os.path.join(root, "top.png"), "9", "9", "3", "99"])


def compare_lists(work, opts, name):
    a, b = os.path.join(work, "up_" + name), os.path.join(work, "mx_" + name)
    os.makedirs(a)
    os.makedirs(b)
    root = os.path.join(work, "img")
    out_up = upstream([os.path.join(a, "p"), root, "--list"] + opts, a)
    out_mx = mxk(["im2rec", os.path.join(b, "p"), root, "--list"] + opts, b)
    # mxk adds a summary line per list after the folder labels
    check(out_mx.startswith(out_up), "%s: folder labels differ:\n%s\n%s" % (name, out_up, out_mx))
    files = sorted(os.listdir(a))
    check(files == sorted(os.listdir(b)), "%s: files %s vs %s" % (name, files, os.listdir(b)))
    for f in files:
        check(open(os.path.join(a, f), "rb").read() == open(os.path.join(b, f), "rb").read(),
              "%s: %s differs" % (name, f))
    return files


def read_list(path):
    out = []
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        out.append((int(parts[0]), [float(x) for x in parts[1:-1]], parts[-1]))
    return out


def main():
    if not os.path.exists(IM2REC):
        print("SKIP: the mxnet wheel has no tools/im2rec.py")
        sys.exit(77)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    root = os.path.join(WORK, "img")
    make_images(root)

    # 1. lists
    compare_lists(WORK, ["--recursive"], "rec")
    compare_lists(WORK, [], "flat")
    compare_lists(WORK, ["--recursive", "--no-shuffle", "--exts", ".png", ".jpeg"], "exts")
    check(len(compare_lists(WORK, ["--recursive", "--chunks", "2", "--train-ratio", "0.6",
                                   "--test-ratio", "0.2"], "chunks")) == 6, "six chunk lists")
    compare_lists(WORK, ["--recursive", "--train-ratio", "0.7"], "ratio")
    lst = os.path.join(WORK, "up_rec", "p.lst")
    items = read_list(lst)
    check(len(items) == 15, "15 images listed, got %d" % len(items))

    # 2. --pass-through: identical files
    for name, opts, src in [("pt", [], lst), ("ptl", ["--pack-label"], None)]:
        a, b = os.path.join(WORK, "up_" + name), os.path.join(WORK, "mx_" + name)
        os.makedirs(a)
        os.makedirs(b)
        if src is None:  # three labels per line
            with open(os.path.join(a, "p.lst"), "w") as f:
                for idx, lab, path in items:
                    f.write("%d\t%f\t%f\t%f\t%s\n" % (idx, lab[0], idx * 0.5, -idx, path))
        else:
            shutil.copy(src, os.path.join(a, "p.lst"))
        shutil.copy(os.path.join(a, "p.lst"), os.path.join(b, "p.lst"))
        upstream([os.path.join(a, "p"), root, "--pass-through"] + opts, a)
        mxk(["im2rec", os.path.join(b, "p"), root, "--pass-through"] + opts, b)
        for ext in (".rec", ".idx"):
            check(open(os.path.join(a, "p" + ext), "rb").read() ==
                  open(os.path.join(b, "p" + ext), "rb").read(), "%s: p%s differs" % (name, ext))

    # 3. mxk's PNG records in MXNet: labels, ids, pixels
    b = os.path.join(WORK, "mx_png")
    os.makedirs(b)
    shutil.copy(lst, os.path.join(b, "p.lst"))
    mxk(["im2rec", os.path.join(b, "p"), root, "--encoding", ".png", "--num-thread", "3"], b)
    r = mx.recordio.MXIndexedRecordIO(os.path.join(b, "p.idx"), os.path.join(b, "p.rec"), "r")
    check(r.keys == [i[0] for i in items], "keys in list order")
    for idx, lab, path in items:
        h, img = mx.recordio.unpack_img(r.read_idx(idx))
        check(h.id == idx and h.flag == 0 and h.label == lab[0], "header of %s: %s" % (path, h))
        ref = cv2.imread(os.path.join(root, path), 1)
        if path.endswith(".png"):
            check(np.array_equal(img, ref), "pixels of %s" % path)
        else:  # libjpeg-turbo's default IDCT on both sides
            diff = np.abs(img.astype(int) - ref.astype(int)).max()
            check(diff <= 1, "pixels of %s differ by %d" % (path, diff))
    r.close()

    # upscaling (every image is under 24 pixels): bilinear as cv2.resize's
    # INTER_LINEAR within 1 (rounding), after the centre crop of upstream's code
    for name, opts in [("up24", []), ("crop24", ["--center-crop"])]:
        b = os.path.join(WORK, "mx_" + name)
        os.makedirs(b)
        shutil.copy(lst, os.path.join(b, "p.lst"))
        mxk(["im2rec", os.path.join(b, "p"), root, "--encoding", ".png", "--resize", "24"] + opts, b)
        r = mx.recordio.MXIndexedRecordIO(os.path.join(b, "p.idx"), os.path.join(b, "p.rec"), "r")
        for idx, lab, path in items:
            h, img = mx.recordio.unpack_img(r.read_idx(idx))
            ref = cv2.imread(os.path.join(root, path), 1)
            if opts:
                m = abs(ref.shape[0] - ref.shape[1]) // 2
                ref = ref[m:m + ref.shape[1], :] if ref.shape[0] > ref.shape[1] else ref[:, m:m + ref.shape[0]]
            hh, ww = ref.shape[:2]
            ref = cv2.resize(ref, (24, hh * 24 // ww) if hh > ww else (ww * 24 // hh, 24))
            check(img.shape == ref.shape, "%s %s: shape %s vs %s" % (name, path, img.shape, ref.shape))
            diff = np.abs(img.astype(int) - ref.astype(int)).max()
            check(diff <= 1, "%s %s: pixels differ from cv2.resize by %d" % (name, path, diff))
        r.close()

    # EXIF orientation: --color 1 and 0 turn the image as cv2.imread does, -1
    # (IMREAD_UNCHANGED) keeps the stored pixels
    exif = os.path.join(WORK, "exif")
    os.makedirs(exif)
    src = open(os.path.join(root, "cat", "cat2.jpg"), "rb").read()  # 18 x 14
    with open(os.path.join(exif, "p.lst"), "w") as f:
        for o in range(1, 9):
            ifd = struct.pack("<2sHI", b"II", 42, 8) + struct.pack("<HHHIHHI", 1, 0x0112, 3, 1, o, 0, 0)
            app1 = b"Exif\0\0" + ifd
            data = src[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + src[2:]
            open(os.path.join(exif, "o%d.jpg" % o), "wb").write(data)
            f.write("%d\t%d\to%d.jpg\n" % (o, o, o))
    for color, flag in [("1", cv2.IMREAD_COLOR), ("0", cv2.IMREAD_GRAYSCALE), ("-1", cv2.IMREAD_UNCHANGED)]:
        mxk(["im2rec", os.path.join(exif, "p"), exif, "--encoding", ".png", "--color", color], exif)
        r = mx.recordio.MXIndexedRecordIO(os.path.join(exif, "p.idx"), os.path.join(exif, "p.rec"), "r")
        for o in range(1, 9):
            h, img = mx.recordio.unpack_img(r.read_idx(o), -1)
            ref = cv2.imread(os.path.join(exif, "o%d.jpg" % o), flag)
            check(img.shape == ref.shape, "orientation %d, --color %s: %s vs %s" % (o, color, img.shape, ref.shape))
            diff = np.abs(img.astype(int) - ref.astype(int)).max()
            check(diff <= 1, "orientation %d, --color %s: pixels differ by %d" % (o, color, diff))
        r.close()

    # ImageRecordIter over same-size records (centre crop, short side 8)
    b = os.path.join(WORK, "mx_iter")
    os.makedirs(b)
    shutil.copy(lst, os.path.join(b, "p.lst"))
    mxk(["im2rec", os.path.join(b, "p"), root, "--encoding", ".png", "--center-crop", "--resize", "8"], b)
    r = mx.recordio.MXRecordIO(os.path.join(b, "p.rec"), "r")
    expect = []
    while True:
        s = r.read()
        if not s:
            break
        h, img = mx.recordio.unpack_img(s)
        check(img.shape == (8, 8, 3), "centre crop + resize 8: %s" % (img.shape,))
        expect.append((h.label, img[:, :, ::-1].transpose(2, 0, 1).astype(np.float32)))
    it = mx.io.ImageRecordIter(path_imgrec=os.path.join(b, "p.rec"), data_shape=(3, 8, 8),
                               batch_size=1, shuffle=False, preprocess_threads=1)
    n = 0
    for batch in it:
        label, data = expect[n]
        check(batch.label[0].asnumpy()[0] == label, "ImageRecordIter label %d" % n)
        check(np.array_equal(batch.data[0].asnumpy()[0], data), "ImageRecordIter pixels %d" % n)
        n += 1
    check(n == len(items), "ImageRecordIter read %d of %d" % (n, len(items)))

    # 4. MXNet's records in mxk
    b = os.path.join(WORK, "from_mx")
    os.makedirs(b)
    w = mx.recordio.MXIndexedRecordIO(os.path.join(b, "m.idx"), os.path.join(b, "m.rec"), "w")
    want = []
    for k, (idx, lab, path) in enumerate(items):
        img = cv2.imread(os.path.join(root, path), 1)
        label = [lab[0], 0.25 * k] if k % 3 == 0 else lab[0]
        fmt = ".png" if k % 2 else ".jpg"
        w.write_idx(100 + k, mx.recordio.pack_img(mx.recordio.IRHeader(0, label, idx, k), img,
                                                  quality=90, img_fmt=fmt))
        want.append((100 + k, label, idx, k, fmt, img.shape))
    w.close()
    mxk(["rec", "verify", "m.rec"], b)
    doc = json.loads(mxk(["--json", "rec", "ls", "m.rec"], b))
    check(doc["count"] == len(want), "count %d" % doc["count"])
    for rec, (key, label, idx, id2, fmt, shape) in zip(doc["records"], want):
        check(rec["key"] == key and rec["id"] == idx and rec["id2"] == id2, "ids of key %d" % key)
        if isinstance(label, list):
            check(rec["flag"] == 2 and rec["label"] == [np.float32(x).item() for x in label],
                  "labels of key %d: %s" % (key, rec))
        else:
            check(rec["flag"] == 0 and rec["label"] == label, "label of key %d" % key)
        check(rec["format"] == {".png": "png", ".jpg": "jpeg"}[fmt], "format of key %d" % key)
        check((rec["height"], rec["width"], rec["channels"]) == shape, "size of key %d" % key)

    # im2rec.py's own packing (JPEG, resized) passes verify with the list's labels
    a = os.path.join(WORK, "up_pack")
    os.makedirs(a)
    shutil.copy(lst, os.path.join(a, "p.lst"))
    upstream([os.path.join(a, "p"), root, "--resize", "10"], a)
    mxk(["rec", "verify", "p.rec"], a)
    doc = json.loads(mxk(["--json", "rec", "ls", "p.rec"], a))
    check([(r["key"], r["label"]) for r in doc["records"]] == [(i[0], i[1][0]) for i in items],
          "im2rec.py's keys and labels")
    check(all(min(r["width"], r["height"]) == 10 for r in doc["records"]), "short side 10")
    print("ok: im2rec lists and records interoperate with MXNet 1.9.1")


main()
