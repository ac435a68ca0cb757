"""The image decoders (plugins/io-recordio/image.h, through image_tool) against
OpenCV's cv2.imdecode, which MXNet 1.9.1 decodes with (src/io/image_io.cc,
python/mxnet/recordio.py's unpack_img): identical pixels for

- the JPEG photos of Debian's mate-backgrounds, in colour and gray
  (IMREAD_COLOR, IMREAD_GRAYSCALE);
- a CMYK JPEG (cmyk.jpg beside this script: 32 x 20, written by PIL), which
  libjpeg returns as CMYK and image.c converts as OpenCV does;
- PNGs written by cv2.imwrite: 8- and 16-bit colour and gray, BGRA, decoded
  in colour, gray and unchanged (16 bits: the high byte, as OpenCV's 8-bit
  reads);
- JPEGs with EXIF orientations 1-8 (an APP1 segment written here) turned
  upright by img_exif_orientation + img_orient as cv2.imread turns them (as
  upstream im2rec.py reads images).

OpenCV's arrays are BGR; image_tool's RGB. Usage (through
tests/conformance/run.sh with the MXNet venv's python, which has cv2):
image_opencv.py IMAGE_TOOL WORK_DIR.
"""
import os
import struct
import subprocess
import sys

import cv2
import numpy as np

PHOTOS = ["/usr/share/backgrounds/mate/nature/Aqua.jpg",
          "/usr/share/backgrounds/mate/nature/FreshFlower.jpg"]
TOOL, WORK = sys.argv[1], sys.argv[2]


def decode(path, channels):
    out = os.path.join(WORK, "out.raw")
    r = subprocess.run([TOOL, "decode", path, str(channels), "0", "0", out], capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit("image_tool decode %s: %s%s" % (path, r.stdout, r.stderr))
    w, h, c = map(int, r.stdout.split())
    return np.fromfile(out, np.uint8).reshape(h, w, c)


def as_rgb(img):
    """OpenCV's array as image_tool's: HxWxC, RGB(A) order."""
    if img.ndim == 2:
        return img[:, :, None]
    return img[:, :, [2, 1, 0, 3][:img.shape[2]]]


def with_orientation(jpg, o):
    """jpg with an APP1 Exif segment (little-endian TIFF) holding orientation o."""
    ifd = struct.pack("<H", 1) + struct.pack("<HHIHH", 0x0112, 3, 1, o, 0) + struct.pack("<I", 0)
    exif = b"Exif\0\0II*\0" + struct.pack("<I", 8) + ifd
    return jpg[:2] + b"\xff\xe1" + struct.pack(">H", len(exif) + 2) + exif + jpg[2:]


def check_orientations(base):
    failures = 0
    jpg = cv2.imencode(".jpg", base)[1].tobytes()
    for o in range(1, 9):
        path = os.path.join(WORK, "o%d.jpg" % o)
        with open(path, "wb") as f:
            f.write(with_orientation(jpg, o))
        out = os.path.join(WORK, "up.raw")
        r = subprocess.run([TOOL, "upright", path, "3", out], capture_output=True, text=True,
                           check=True).stdout.split()
        got = np.fromfile(out, np.uint8).reshape(int(r[1]), int(r[0]), 3)
        want = as_rgb(cv2.imread(path))
        ok = r[3] == str(o) and got.shape == want.shape and np.array_equal(got, want)
        print("%s EXIF orientation %d: read %s, upright %s vs cv2.imread's %s"
              % ("ok  " if ok else "FAIL", o, r[3], got.shape, want.shape))
        failures += not ok
    return failures


def main():
    if not all(os.path.exists(p) for p in PHOTOS):
        print("skipped: the mate-backgrounds photos are absent (apt-get install mate-backgrounds)")
        sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    rng = np.random.RandomState(5)
    base = cv2.resize(cv2.imread(PHOTOS[1]), (45, 29), interpolation=cv2.INTER_AREA)
    pngs = {"bgr8": base, "gray8": cv2.cvtColor(base, cv2.COLOR_BGR2GRAY),
            "bgr16": base.astype(np.uint16) * 257 + rng.randint(0, 256, base.shape).astype(np.uint16),
            "bgra8": np.dstack([base, rng.randint(0, 256, base.shape[:2]).astype(np.uint8)])}
    pngs["gray16"] = pngs["bgr16"][:, :, 0]
    files = PHOTOS + [os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmyk.jpg")]
    for name, img in pngs.items():
        files.append(os.path.join(WORK, name + ".png"))
        cv2.imwrite(files[-1], img)
    failures = check_orientations(base)
    for path in files:
        for flag, channels in ((cv2.IMREAD_COLOR, 3), (cv2.IMREAD_GRAYSCALE, 1),
                               (cv2.IMREAD_UNCHANGED, 0)):
            want = cv2.imdecode(np.fromfile(path, np.uint8), flag)
            if want.dtype == np.uint16:
                want = (want >> 8).astype(np.uint8)
            want = as_rgb(want)
            got = decode(path, channels)
            ok = got.shape == want.shape and np.array_equal(got, want)
            diff = "" if got.shape != want.shape else " (max diff %d)" % np.abs(
                got.astype(int) - want).max()
            print("%s %s flag %d: %s vs OpenCV's %s%s" % ("ok  " if ok else "FAIL",
                  os.path.basename(path), flag, got.shape, want.shape, diff))
            failures += not ok
    print("%d failure(s)" % failures)
    sys.exit(1 if failures else 0)


main()
