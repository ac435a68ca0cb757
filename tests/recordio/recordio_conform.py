"""RecordIO against MXNet 1.9.1 (python/mxnet/recordio.py): MXNet writes a
.rec/.idx pair with multi-part records (payloads holding the magic word at
aligned positions), multi-label headers (flag > 0) and empty payloads; mxk reads
every record identically (recordio_tool dump), and mxk writes the same records
(recordio_tool copy) into files byte-equal to MXNet's, which MXNet reads back.
Partitions: a .rec of small PNG images (pack_img) read by MXNet's
ImageRecordIter with num_parts/part_index (dmlc's InputSplit) holds in each part
the records that mxk_recordio_set_part gives (recordio_tool parts).
Image records: MXNet's pack_img (PNG, JPEG; colour, gray, multi-label) unpack
in mxk (mxk_recordio_unpack_img, iscolor -1/0/1) to MXNet's unpack_img pixels
(BGR there, RGB here), and mxk's pack_img records unpack in MXNet identically
(recordio_tool unpackimg, packimg).

Usage: recordio_conform.py TOOL WORK_DIR (run through tests/conformance/run.sh).
"""
import os
import struct
import subprocess
import sys

import mxnet as mx
import numpy as np

MAGIC = struct.pack("<I", 0xCED7230A)


def records():
    """(key, header, payload) of the test set: 40 records."""
    rng = np.random.RandomState(7)
    out = []
    for i in range(40):
        n = int(rng.randint(0, 64))
        payload = bytearray(rng.randint(0, 256, n).astype(np.uint8).tobytes())
        if i % 3 == 0 and n >= 8:
            payload[4:8] = MAGIC  # aligned in the record: split into parts
        if i % 5 == 1:
            payload = bytearray(MAGIC * 3) + payload  # consecutive magics
        if i % 7 == 2 and n >= 6:
            payload[1:5] = MAGIC  # unaligned: not split
        if i % 4 == 3:
            label = rng.rand(i % 5 + 1).astype(np.float32).tolist()
        else:
            label = float(rng.randint(0, 10))
        out.append((i * 3 - 5, mx.recordio.IRHeader(0, label, i, 2 * i), bytes(payload)))
    return out


def dump(idx, rec):
    """The dump lines of recordio_tool, from MXNet's reader."""
    r = mx.recordio.MXIndexedRecordIO(idx, rec, "r")
    lines = []
    for key in r.keys:
        h, payload = mx.recordio.unpack(r.read_idx(key))
        labels = np.atleast_1d(np.asarray(h.label, dtype=np.float32)) if h.flag > 0 else []
        label0 = 0.0 if h.flag > 0 else float(np.float32(h.label))
        fields = [str(key), str(h.flag), "%.9g" % label0, str(h.id), str(h.id2)]
        fields += ["%.9g" % float(x) for x in labels]
        lines.append(" ".join(fields) + " |" + ("" if not payload else " " + payload.hex()))
    r.close()
    seq = mx.recordio.MXRecordIO(rec, "r")
    count = 0
    while seq.read() is not None:
        count += 1
    seq.close()
    lines.append("raw %d" % count)
    return "\n".join(lines) + "\n"


def check_parts(tool, work):
    """Each part of mxk equals the part of MXNet's ImageRecordIter, for 1..7 parts."""
    rng = np.random.RandomState(3)
    rec = os.path.join(work, "img.rec")
    w = mx.recordio.MXRecordIO(rec, "w")
    for i in range(100):
        s = int(rng.randint(1, 8))
        img = rng.randint(0, 256, (s, s, 3)).astype(np.uint8)
        w.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, float(i), i, 0), img, img_fmt=".png"))
    w.close()
    for parts in range(1, 8):
        want = []
        for k in range(parts):
            it = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 2, 2), batch_size=1,
                                       num_parts=parts, part_index=k, preprocess_threads=1,
                                       shuffle=False, round_batch=False, resize=2)
            want.append(" ".join(str(int(b.label[0].asnumpy()[0])) for b in it))
        got = subprocess.run([tool, "parts", rec, str(parts)], check=True, capture_output=True,
                             text=True).stdout.splitlines()
        if got != want:
            sys.exit("num_parts %d: MXNet's parts %s, mxk's %s" % (parts, want, got))


def image_set():
    """(IRHeader, RGB or gray uint8 image) of the image test set."""
    rng = np.random.RandomState(11)
    out = []
    for i in range(6):
        h, w = 5 + 3 * i, 17 - 2 * i
        yy, xx = np.mgrid[0:h, 0:w]
        img = np.stack([xx * 9 + yy * 4, 200 - yy * 7, xx * yy], axis=2) % 256
        img = (img + rng.randint(0, 24, img.shape)).clip(0, 255).astype(np.uint8)
        if i % 3 == 2:
            img = img[:, :, 1]  # gray
        label = rng.rand(3).astype(np.float32).tolist() if i % 2 else float(i)
        out.append((mx.recordio.IRHeader(0, label, 100 + i, 0), img))
    return out


def unpacked_line(header, img):
    """A line of recordio_tool unpackimg for `img` (RGB or gray, HxW[xC])."""
    labels = np.atleast_1d(np.asarray(header.label, dtype=np.float32))
    flag = len(labels) if np.ndim(header.label) > 0 else 0
    label0 = 0.0 if flag else float(np.float32(header.label))
    img = img if img.ndim == 3 else img[:, :, None]
    fields = [str(header.id), str(flag), "%.9g" % label0] + (["%.9g" % x for x in labels] if flag else [])
    return " ".join(fields) + " : %d %d %d | %s" % (img.shape + (img.tobytes().hex(),))


def bgr(img):
    return img[:, :, ::-1] if img.ndim == 3 else img


def check_images(tool, work):
    """pack_img / unpack_img both ways: PNG pixels identical (RGB vs MXNet's BGR);
    JPEG: mxk's decode of either side's file equals OpenCV's."""
    images = image_set()
    for fmt in (".png", ".jpg"):
        rec = os.path.join(work, "mx_img%s.rec" % fmt)
        w = mx.recordio.MXRecordIO(rec, "w")
        for header, img in images:
            w.write(mx.recordio.pack_img(header, bgr(img), quality=95 if fmt == ".jpg" else 3, img_fmt=fmt))
        w.close()
        for iscolor in (-1, 0, 1):
            r = mx.recordio.MXRecordIO(rec, "r")
            want = []
            while True:
                s = r.read()
                if s is None:
                    break
                header, img = mx.recordio.unpack_img(s, iscolor)
                want.append(unpacked_line(header, bgr(img)))
            r.close()
            got = subprocess.run([tool, "unpackimg", rec, str(iscolor)], check=True, capture_output=True,
                                 text=True).stdout.splitlines()
            if got != want:
                sys.exit("%s iscolor %d: mxk unpacks MXNet's pack_img differently:\nMXNet %s\nmxk   %s"
                         % (fmt, iscolor, want, got))
        spec = os.path.join(work, "spec.txt")
        with open(spec, "w") as f:
            f.write("".join(unpacked_line(h, img) + "\n" for h, img in images))
        orec = os.path.join(work, "mxk_img%s.rec" % fmt)
        subprocess.run([tool, "packimg", spec, orec, fmt, "95"], check=True)
        mine = subprocess.run([tool, "unpackimg", orec, "-1"], check=True, capture_output=True,
                              text=True).stdout.splitlines()
        r = mx.recordio.MXRecordIO(orec, "r")
        for (header, img), line in zip(images, mine):
            h2, img2 = mx.recordio.unpack_img(r.read(), -1)
            got = unpacked_line(h2, bgr(img2))
            if fmt == ".png" and got != unpacked_line(header, img):
                sys.exit("MXNet unpacks mxk's pack_img (PNG) differently: %s" % got)
            if got != line:
                sys.exit("%s: MXNet decodes mxk's pack_img to %s, mxk to %s" % (fmt, got, line))
        r.close()


def main():
    tool, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    idx, rec = os.path.join(work, "mx.idx"), os.path.join(work, "mx.rec")
    w = mx.recordio.MXIndexedRecordIO(idx, rec, "w")
    for key, header, payload in records():
        w.write_idx(key, mx.recordio.pack(header, payload))
    w.close()
    raw = open(rec, "rb").read()
    parts = sum(1 for i in range(0, len(raw) - 8, 4)
                if raw[i:i + 4] == MAGIC and (struct.unpack("<I", raw[i + 4:i + 8])[0] >> 29) != 0)
    assert parts > 0, "the test set has no multi-part record"

    want = dump(idx, rec)
    got = subprocess.run([tool, "dump", idx, rec], check=True, capture_output=True,
                         text=True).stdout
    if got != want:
        for a, b in zip(want.splitlines(), got.splitlines()):
            if a != b:
                print("MXNet: %s\nmxk:   %s" % (a, b))
                break
        sys.exit("mxk reads MXNet's .rec differently")

    oidx, orec = os.path.join(work, "mxk.idx"), os.path.join(work, "mxk.rec")
    subprocess.run([tool, "copy", idx, rec, oidx, orec], check=True)
    for a, b in ((idx, oidx), (rec, orec)):
        if open(a, "rb").read() != open(b, "rb").read():
            sys.exit("mxk's %s differs from MXNet's %s" % (b, a))
    if dump(oidx, orec) != want:
        sys.exit("MXNet reads mxk's .rec differently")
    check_parts(tool, work)
    check_images(tool, work)
    print("recordio conformance: %d records (%d parts with cflag 1-3) read and written identically; parts 1-7 equal; "
          "%d image records (PNG, JPEG) packed and unpacked identically both ways" % (len(records()), parts, len(image_set())))


if __name__ == "__main__":
    main()
