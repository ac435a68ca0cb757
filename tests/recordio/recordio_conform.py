"""RecordIO against MXNet 1.9.1 (python/mxnet/recordio.py): MXNet writes a
.rec/.idx pair with multi-part records (payloads holding the magic word at
aligned positions), multi-label headers (flag > 0) and empty payloads; mxk reads
every record identically (recordio_tool dump), and mxk writes the same records
(recordio_tool copy) into files byte-equal to MXNet's, which MXNet reads back.
Partitions: a .rec of small PNG images (pack_img) read by MXNet's
ImageRecordIter with num_parts/part_index (dmlc's InputSplit) holds in each part
the records that mxk_recordio_set_part gives (recordio_tool parts).

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
    print("recordio conformance: %d records (%d parts with cflag 1-3) read and written identically; parts 1-7 equal"
          % (len(records()), parts))


if __name__ == "__main__":
    main()
