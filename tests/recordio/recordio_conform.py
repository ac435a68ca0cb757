"""RecordIO against MXNet 1.9.1 (python/mxnet/recordio.py): MXNet writes a
.rec/.idx pair with multi-part records (payloads holding the magic word at
aligned positions), multi-label headers (flag > 0) and empty payloads; mxk reads
every record identically (recordio_tool dump), and mxk writes the same records
(recordio_tool copy) into files byte-equal to MXNet's, which MXNet reads back.

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
    print("recordio conformance: %d records (%d parts with cflag 1-3) read and written identically"
          % (len(records()), parts))


if __name__ == "__main__":
    main()
