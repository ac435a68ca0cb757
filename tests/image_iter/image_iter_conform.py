"""ImageRecordIter against MXNet 1.9.1's mx.io.ImageRecordIter
(src/io/iter_image_recordio_2.cc). The .rec files are written here by MXNet's
mx.recordio.pack_img (PNG and JPEG, RGB and gray, single and multi-label);
mxk's ImageRecordIter (image_iter_tool) and MXNet's read them with the same
attributes and without random augmentation: identical pixels and labels for the
centre crop, mean/std/scale, label_width, path_imglist, num_parts (with and
without the .idx), uint8, gray (PNG, and JPEG luma) and mean_img (computed by either, read by the
other). With resize, the resampling differs
(OpenCV's cv::resize vs stb_image_resize, and TurboJPEG's DCT scaling): pixels
agree within TOL below (mean and 99th percentile of the difference).

Usage: image_iter_conform.py TOOL WORK_DIR (run through tests/conformance/run.sh).
"""
import os
import subprocess
import sys

import mxnet as mx
import numpy as np

TOOL, WORK = sys.argv[1], sys.argv[2]
# Resize tolerance on 0..255 (mean, 99th percentile of the absolute difference):
# OpenCV's INTER_LINEAR interpolates between the two nearest pixels,
# stb_image_resize's triangle filter widens with the downscale factor (and a
# JPEG decoded with DCT scaling is low-passed in the DCT domain first).
# Measured: PNG 0.9 / 3; JPEG full-size decode 2.7 / 19; DCT-scaled by 1/2 3.8 /
# 17, by 3/4 6.3 / 27; two photographs (resize 256 after DCT scaling by 1/4) 1.0
# / 12 (the maximum, over 100, at sharp edges where OpenCV's 2-tap bilinear
# aliases). A shifted, flipped or channel-swapped result differs by 40 or more
# on average.
TOL = (8, 48)
PHOTOS = "/usr/share/backgrounds/mate/nature"
FAILED = []


def image(i, h, w, c):
    """A smooth image with detail (so that JPEG and resampling are exercised)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    chans = [127 + 120 * np.sin(x / (3 + i + k) + y / (5 + k)) * np.cos(y / (4 + i % 3)) for k in range(c)]
    return np.clip(np.stack(chans, axis=2), 0, 255).astype(np.uint8)


def write_rec(name, n, fmt, c=3, nlab=0, size=(30, 40)):
    """NAME.rec + NAME.idx of n images (h, w = size) via MXIndexedRecordIO + pack_img."""
    rec = mx.recordio.MXIndexedRecordIO(os.path.join(WORK, name + ".idx"),
                                        os.path.join(WORK, name + ".rec"), "w")
    for i in range(n):
        img = image(i, size[0] + i % 3, size[1] + 2 * (i % 2), c)
        if c == 1:
            img = img[:, :, 0]
        label = [float(i * 10 + j) for j in range(nlab)] if nlab else float(i % 7)
        hdr = mx.recordio.IRHeader(0, label, i, 0)
        rec.write_idx(i, mx.recordio.pack_img(hdr, img, quality=95 if fmt == ".jpg" else 3,
                                              img_fmt=fmt))
    rec.close()
    return os.path.join(WORK, name + ".rec")


def mxk(kw):
    """One epoch from mxk: (data, label, pads)."""
    out = os.path.join(WORK, "mxk_out")
    args = [TOOL, out] + ["%s=%s" % (k, v) for k, v in kw.items()]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError("image_iter_tool failed: " + p.stderr)
    pads = [int(l.split()[1]) for l in p.stdout.split("\n") if l.startswith("pad ")]
    dt = np.uint8 if kw.get("dtype") == "uint8" else np.float32
    shape = eval(kw["data_shape"])
    data = np.fromfile(out + ".data", dtype=dt).reshape((-1,) + shape)
    label = np.fromfile(out + ".label", dtype=np.float32).reshape(data.shape[0], -1)
    return data, label, pads


def mxnet(kw):
    """One epoch from MXNet's ImageRecordIter: (data, label, pads)."""
    args = dict(kw)
    args["data_shape"] = eval(args["data_shape"])
    for k in ("batch_size", "label_width", "num_parts", "part_index", "resize",
              "preprocess_threads"):
        if k in args:
            args[k] = int(args[k])
    for k in list(args):
        if k.startswith(("mean_", "std_")) and k != "mean_img" or k == "scale":
            args[k] = float(args[k])
    it = mx.io.ImageRecordIter(**args)
    data, label, pads = [], [], []
    for b in it:
        data.append(b.data[0].asnumpy())
        label.append(b.label[0].asnumpy().reshape(b.data[0].shape[0], -1))
        pads.append(b.pad)
    return np.concatenate(data), np.concatenate(label), pads


def compare(what, kw, tol=None):
    a, al, ap = mxk(kw)
    b, bl, bp = mxnet(kw)
    ok = a.shape == b.shape and np.array_equal(al, bl) and ap == bp
    if ok and tol is None:
        ok = np.array_equal(a, b)
        detail = "max diff %g" % (np.abs(a.astype(np.float64) - b).max() if a.shape == b.shape else -1)
    elif ok:
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        p99 = np.percentile(d, 99)
        ok = d.mean() < tol[0] and p99 < tol[1]
        detail = "mean diff %.3f, 99th percentile %.1f, max %.1f" % (d.mean(), p99, d.max())
    else:
        detail = "shapes %s / %s, pads %s / %s, labels equal %s" % (
            a.shape, b.shape, ap, bp, a.shape[0] == b.shape[0] and np.array_equal(al, bl))
    print("%s %s: %s" % ("ok" if ok else "FAIL", what, detail))
    if not ok:
        FAILED.append(what)


def main():
    os.makedirs(WORK, exist_ok=True)
    png = write_rec("png", 10, ".png")
    jpg = write_rec("jpg", 10, ".jpg")
    multi = write_rec("multi", 6, ".png", nlab=2)
    gray = write_rec("gray", 7, ".png", c=1)
    lst = os.path.join(WORK, "list.lst")
    with open(lst, "w") as f:
        for i in range(10):
            f.write("%d\t%d.25\t%d\t-1\timg%d.png\n" % (i, 9 - i, i * 3, i))
    base = {"data_shape": "(3,24,32)", "batch_size": "4", "preprocess_threads": "2"}
    norm = dict(base, mean_r="123.68", mean_g="116.28", mean_b="103.53", std_r="58.395",
                std_g="57.12", std_b="57.375", scale="0.5")
    compare("png centre crop, mean/std/scale", dict(norm, path_imgrec=png))
    compare("jpeg centre crop, mean/std/scale", dict(norm, path_imgrec=jpg))
    compare("png uint8", dict(base, path_imgrec=png, dtype="uint8"))
    compare("png batch 5, round_batch=False",
            dict(base, path_imgrec=png, batch_size="5", round_batch="False"))
    compare("label_width 2 from the records", dict(base, path_imgrec=multi, label_width="2"))
    compare("path_imglist label_width 3", dict(base, path_imgrec=png, path_imglist=lst,
                                               label_width="3"))
    compare("gray png (1,20,25)", dict(base, path_imgrec=gray, data_shape="(1,20,25)"))
    compare("colour jpeg read as gray (its luma)", dict(base, path_imgrec=jpg,
                                                      data_shape="(1,20,25)"))
    for part in range(3):
        compare("num_parts 3 part %d, scanned" % part,
                dict(base, path_imgrec=png, num_parts="3", part_index=str(part), batch_size="2"))
        compare("num_parts 3 part %d, with .idx" % part,
                dict(base, path_imgrec=png, path_imgidx=png[:-4] + ".idx", num_parts="3",
                     part_index=str(part), batch_size="2"))
    compare("png resize 20 (short side)", dict(base, path_imgrec=png, resize="20",
                                               data_shape="(3,18,20)", dtype="uint8"), tol=TOL)
    compare("jpeg resize 28 (short side, full-size decode)",
            dict(base, path_imgrec=jpg, resize="28", data_shape="(3,24,32)", dtype="uint8"),
            tol=TOL)
    compare("jpeg resize 15 (short side, DCT scaling by 1/2)",
            dict(base, path_imgrec=jpg, resize="15", data_shape="(3,14,18)", dtype="uint8"),
            tol=TOL)
    compare("jpeg resize 20 (short side, DCT scaling by 3/4)",
            dict(base, path_imgrec=jpg, resize="20", data_shape="(3,18,20)", dtype="uint8"),
            tol=TOL)
    # Real photographs (Debian's mate-backgrounds, when installed), packed as they
    # are: resize 256 (DCT-scaled by 1/4 in mxk) and the centre crop.
    photos = [os.path.join(PHOTOS, f) for f in ("FreshFlower.jpg", "Aqua.jpg")]
    if all(os.path.exists(f) for f in photos):
        rec = mx.recordio.MXRecordIO(os.path.join(WORK, "photo.rec"), "w")
        for i, f in enumerate(photos):
            with open(f, "rb") as fi:
                rec.write(mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), fi.read()))
        rec.close()
        compare("photos, resize 256, centre crop 224",
                dict(path_imgrec=os.path.join(WORK, "photo.rec"), data_shape="(3,224,224)",
                     batch_size="2", resize="256", dtype="uint8"), tol=TOL)
    else:
        print("skipped photos: %s not installed (mate-backgrounds)" % PHOTOS)
    # mean_img: a file MXNet computes (CreateMeanImg) read by mxk, and one mxk
    # computes read by MXNet; outputs identical, the two files within 1e-4.
    m_mx, m_mxk = os.path.join(WORK, "mean_mx.nd"), os.path.join(WORK, "mean_mxk.nd")
    for f in (m_mx, m_mxk):
        if os.path.exists(f):
            os.remove(f)
    mxnet(dict(base, path_imgrec=png, mean_img=m_mx))
    mxk(dict(base, path_imgrec=png, mean_img=m_mxk))
    a, b = [list(mx.nd.load(f).values())[0].asnumpy() for f in (m_mx, m_mxk)]
    ok = a.shape == b.shape and np.abs(a - b).max() < 1e-4
    print("%s mean_img computed: max diff %g" % ("ok" if ok else "FAIL", np.abs(a - b).max()))
    if not ok:
        FAILED.append("mean_img computed")
    compare("mean_img written by MXNet", dict(norm, path_imgrec=png, mean_img=m_mx))
    compare("mean_img written by mxk", dict(norm, path_imgrec=png, mean_img=m_mxk))
    if FAILED:
        print("FAILED: %s" % ", ".join(FAILED))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
