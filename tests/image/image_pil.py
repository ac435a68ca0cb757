"""The image codecs (plugins/io-recordio/image.h, through image_tool) against
independent decoders: PIL (Debian's python3-pil) and libjpeg's djpeg.

- JPEG photos (Debian's mate-backgrounds) and small JPEGs written by PIL (gray,
  4:4:4 progressive, odd sizes): full-size RGB and gray decodes identical to PIL;
  DCT-scaled decodes identical to PIL's Image.draft at 1/2, 1/4, 1/8 and to
  djpeg -scale at 3/8 and 5/8; the chosen scale is the smallest of TurboJPEG's
  k/8 whose result is at least MIN_W x MIN_H.
- a progressive JPEG (cjpeg) whose last scan is repeated 600 times, which
  PIL decodes: refused with TurboJPEG's 500-scan limit (TJFLAG_LIMITSCANS).
- cmyk.jpg (beside this script, an Adobe CMYK JPEG): RGB and gray equal to
  OpenCV's formulas (icvCvt_CMYK2BGR_8u_C4C3R, icvCvt_CMYK2Gray_8u_C4C1R)
  applied to PIL's CMYK samples (PIL inverts Adobe's stored values; libjpeg,
  which OpenCV and image.c use, does not).
- PNGs written by PIL and by png16() below (8 and 16 bits, gray, gray+alpha,
  palette with and without tRNS, 1-bit, RGBA), decoded to 0, 1, 3 and 4
  channels: identical to PIL's conversions (16 bits: the high byte, as
  png_set_strip_16 and OpenCV); RGB to gray within 1 (libpng's fixed-point
  0.299/0.587/0.114 rounds differently from PIL's).
- img_resize: bilinear and bicubic within RESIZE_TOL of PIL's BILINEAR and
  BICUBIC away from the edges, EDGE_TOL on them (both are antialiasing tent /
  Catmull-Rom (a = -0.5) kernels widened when shrinking; PIL computes in
  fixed point and renormalises the window cut by the edge, stb computes in
  float and replicates the edge pixel), area at an integer ratio within 1
  of the block means, nearest identical to OpenCV's floor(x * cw / w).
- img_exif_orientation + img_orient: JPEGs with EXIF orientations 1-8 (written
  by PIL, big- and little-endian TIFF) come out as PIL's ImageOps.exif_transpose.
- img_encode: PNG read back by PIL identical; JPEG at quality 95 read by PIL
  and djpeg identically to img_decode, with PSNR >= 40 dB against the source.

Usage: image_pil.py IMAGE_TOOL WORK_DIR. Exit 77 (skip) without /usr/bin/python3's
PIL or the photos.
"""
import math
import os
import struct
import subprocess
import sys
import zlib

try:
    from PIL import Image, ImageChops, ImageOps, ImageStat
except ImportError:
    print("skipped: this Python cannot import PIL (Debian: apt-get install python3-pil)")
    sys.exit(77)

PHOTOS = ["/usr/share/backgrounds/mate/nature/Aqua.jpg",
          "/usr/share/backgrounds/mate/nature/FreshFlower.jpg"]
# Resizing against PIL: the max abs difference per filter away from the edge,
# set just above what is measured on these photos (bilinear 1, bicubic 2:
# float vs fixed-point rounding); on the outermost rows and columns, where PIL
# renormalises the truncated window and stb replicates the edge pixel, up to 9
# is measured when shrinking 3x; the mean over the image stays near 0.15.
RESIZE_TOL = {1: 1, 2: 2}
EDGE_TOL = 12
MEAN_TOL = 0.25
TOOL, WORK = sys.argv[1], sys.argv[2]
failures = 0


def check(ok, what):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


def tool(*args):
    r = subprocess.run([TOOL] + [str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("image_tool %s: %s%s" % (" ".join(map(str, args)), r.stdout, r.stderr))
    return r.stdout.split()


def path(name):
    return os.path.join(WORK, name)


def decode(src, channels=0, min_w=0, min_h=0):
    """image_tool decode: a PIL image of the result."""
    w, h, c = map(int, tool("decode", src, channels, min_w, min_h, path("out.raw")))
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[c]
    with open(path("out.raw"), "rb") as f:
        return Image.frombytes(mode, (w, h), f.read())


def same(a, b):
    return a.mode == b.mode and a.size == b.size and a.tobytes() == b.tobytes()


def maxdiff(a, b):
    """Max and mean abs difference over all channels of two same-size images."""
    d = ImageChops.difference(a, b)
    ext = d.getextrema()
    ext = ext if isinstance(ext[0], tuple) else [ext]
    mean = ImageStat.Stat(d).mean
    return max(e[1] for e in ext), sum(mean) / len(mean)


def djpeg(src, scale=None):
    args = ["djpeg", "-ppm"] + (["-scale", scale] if scale else []) + [src]
    with open(path("djpeg.ppm"), "wb") as f:
        subprocess.run(args, stdout=f, check=True)
    im = Image.open(path("djpeg.ppm"))
    im.load()
    return im


def pil_draft(src, mode, size):
    im = Image.open(src)
    im.draft(mode, size)
    return im.convert(mode)


def scaled_size(w, h, min_w, min_h):
    """The smallest k/8 (k = 1..8) scaling of w x h that is >= min_w x min_h."""
    for k in range(1, 9):
        sw, sh = (w * k + 7) // 8, (h * k + 7) // 8
        if sw >= min_w and sh >= min_h:
            return sw, sh
    return w, h


def jpeg_checks():
    small = Image.open(PHOTOS[1]).convert("RGB").resize((97, 61))
    small.convert("L").save(path("gray.jpg"), quality=90)
    small.save(path("p444.jpg"), quality=90, subsampling=0, progressive=True)
    small.crop((0, 0, 37, 23)).save(path("odd.jpg"), quality=75)
    for src in PHOTOS + [path("gray.jpg"), path("p444.jpg"), path("odd.jpg")]:
        name = os.path.basename(src)
        ref = Image.open(src)
        check(same(decode(src), ref.convert(ref.mode)), "%s: full decode == PIL" % name)
        check(same(decode(src, 3), ref.convert("RGB")), "%s: RGB decode == PIL" % name)
        check(same(decode(src, 1), pil_draft(src, "L", ref.size)), "%s: gray == PIL's L" % name)
        rgba = ref.convert("RGB").convert("RGBA")
        check(same(decode(src, 4), rgba), "%s: RGBA == PIL + opaque alpha" % name)
        check(same(decode(src, 3), djpeg(src).convert("RGB")), "%s: == djpeg" % name)
        w, h = ref.size
        for s in (2, 4, 8):
            # PIL's draft scales by the largest 1/s with s <= min(w // W, h // H)
            got = decode(src, 3, (w + s - 1) // s, (h + s - 1) // s)
            check(same(got, pil_draft(src, "RGB", (w // s, h // s))),
                  "%s: scaled to %dx%d (1/%d) == PIL draft" % (name, got.size[0], got.size[1], s))
        for k, (mw, mh) in ((3, ((w * 3 + 7) // 8, 1)), (5, (1, (h * 5 + 7) // 8))):
            got = decode(src, 3, mw, mh)
            want = scaled_size(w, h, mw, mh)
            check(got.size == want, "%s: min %dx%d gives %s (want %s)" % (name, mw, mh, got.size, want))
            check(same(got, djpeg(src, "%d/8" % k).convert("RGB")), "%s: scale %d/8 == djpeg" % (name, k))


def many_scans_check():
    Image.open(PHOTOS[0]).convert("L").resize((16, 8)).save(path("g.pgm"))
    with open(path("prog.jpg"), "wb") as f:
        subprocess.run(["cjpeg", "-grayscale", "-progressive", path("g.pgm")], stdout=f, check=True)
    with open(path("prog.jpg"), "rb") as f:
        d = f.read()
    at, last = 2, None
    while d[at + 1] != 0xD9:  # markers up to EOI; a scan runs to the next marker
        end = at + 2 + (d[at + 2] << 8 | d[at + 3])
        if d[at + 1] == 0xDA:
            while not (d[end] == 0xFF and d[end + 1] != 0 and not 0xD0 <= d[end + 1] <= 0xD7):
                end += 1
            last = (at, end)
        at = end
    with open(path("many.jpg"), "wb") as f:
        f.write(d[:last[1]] + d[last[0]:last[1]] * 600 + d[last[1]:])
    Image.open(path("many.jpg")).load()  # a file PIL decodes
    r = subprocess.run([TOOL, "decode", path("many.jpg"), "0", "0", "0", path("out.raw")],
                       capture_output=True, text=True)
    check(r.stdout == "error: corrupt JPEG: Progressive JPEG image has more than 500 scans\n",
          "606 scans: %s" % r.stdout.strip())


def cmyk_checks():
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmyk.jpg")
    pil = Image.open(src)
    raw = pil.tobytes()
    rgb, gray = bytearray(), bytearray()
    for i in range(0, len(raw), 4):
        c, m, y, k = (255 - v for v in raw[i:i + 4])
        px = [k - ((255 - v) * k >> 8) for v in (c, m, y)]
        rgb += bytes(px)
        gray.append((px[0] * 4899 + px[1] * 9617 + px[2] * 1868 + 8192) >> 14)
    check(pil.mode == "CMYK" and same(decode(src, 3), Image.frombytes("RGB", pil.size, bytes(rgb))),
          "cmyk.jpg: RGB == OpenCV's formula on PIL's CMYK")
    check(same(decode(src, 1), Image.frombytes("L", pil.size, bytes(gray))),
          "cmyk.jpg: gray == OpenCV's formula on PIL's CMYK")
    check(same(decode(src), decode(src, 3)), "cmyk.jpg: own channels are RGB")


def png16(name, w, h, color_type, rows):
    """A 16-bit PNG written by hand (PIL cannot write 16-bit colour)."""
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    raw = b"".join(b"\0" + r for r in rows)
    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, color_type, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    with open(path(name), "wb") as f:
        f.write(data)


def png_checks():
    base = Image.open(PHOTOS[0]).convert("RGB").resize((53, 41))
    pal = base.convert("P", palette=Image.ADAPTIVE, colors=16)
    cases = {"rgb.png": base, "rgba.png": base.convert("RGBA"), "l.png": base.convert("L"),
             "la.png": base.convert("LA"), "p.png": pal, "bw.png": base.convert("1")}
    alpha = base.convert("L").point(lambda v: 255 - v)
    cases["rgba.png"].putalpha(alpha)
    cases["la.png"].putalpha(alpha)
    for name, im in cases.items():
        im.save(path(name))
    pal.save(path("ptrns.png"), transparency=3)
    cases["ptrns.png"] = Image.open(path("ptrns.png")).convert("RGBA")
    # 16 bits: value v*257 + (x*7 % 251) per sample; stripping keeps v
    rgb = base.tobytes()
    rows16, rowsg = [], []
    for y in range(41):
        r16, g16 = b"", b""
        for x in range(53):
            for ch in range(3):
                v = rgb[(y * 53 + x) * 3 + ch]
                r16 += struct.pack(">H", v * 256 + (x * 7 + ch) % 251)
            g16 += struct.pack(">H", rgb[(y * 53 + x) * 3] * 256 + 255 - x)
        rows16.append(r16)
        rowsg.append(g16)
    png16("rgb16.png", 53, 41, 2, rows16)
    png16("gray16.png", 53, 41, 0, rowsg)
    cases["rgb16.png"] = base
    cases["gray16.png"] = base.getchannel("R")
    native = {"rgb.png": "RGB", "rgba.png": "RGBA", "l.png": "L", "la.png": "RGBA", "p.png": "RGB",
              "bw.png": "L", "ptrns.png": "RGBA", "rgb16.png": "RGB", "gray16.png": "L"}
    for name, ref in cases.items():
        src = path(name)
        check(same(decode(src), ref.convert(native[name])), "%s: decode (own channels) == PIL" % name)
        check(same(decode(src, 3), ref.convert("RGB")), "%s: RGB == PIL" % name)
        want4 = ref.convert("RGBA") if native[name] == "RGBA" else ref.convert("RGB").convert("RGBA")
        check(same(decode(src, 4), want4), "%s: RGBA == PIL" % name)
        got1 = decode(src, 1)
        if native[name] == "L" or name == "la.png":
            check(same(got1, ref.convert("L")), "%s: gray == PIL" % name)
        else:
            md = maxdiff(got1, ref.convert("RGB").convert("L"))[0]
            check(got1.size == ref.size and md <= 1, "%s: gray within 1 of PIL (max %d)" % (name, md))
        probe = tool("probe", src)
        check(probe == ["png", "53", "41", str(len(native[name]))], "%s: probe %s" % (name, probe))


def save_raw(im, name):
    with open(path(name), "wb") as f:
        f.write(im.tobytes())
    return path(name)


def resize(im, box, size, filt):
    x0, y0, x1, y1 = box
    tool("resize", save_raw(im, "in.raw"), im.size[0], im.size[1], len(im.mode), x0, y0, x1 - x0,
         y1 - y0, size[0], size[1], filt, path("rs.raw"))
    with open(path("rs.raw"), "rb") as f:
        return Image.frombytes(im.mode, size, f.read())


def resize_checks():
    for src in PHOTOS:
        photo = pil_draft(src, "RGB", (640, 400))
        name = os.path.basename(src)
        for box, size in (((0, 0) + photo.size, (224, 224)), ((100, 50, 300, 250), (224, 224)),
                          ((10, 20, 74, 68), (256, 192)), ((5, 5, 405, 305), (123, 77))):
            for filt, pil_filt in ((1, Image.BILINEAR), (2, Image.BICUBIC)):
                got = resize(photo, box, size, filt)
                want = photo.crop(box).resize(size, pil_filt)
                md, mean = maxdiff(got, want)
                inner = (1, 1, size[0] - 1, size[1] - 1)
                imd = maxdiff(got.crop(inner), want.crop(inner))[0]
                tol = RESIZE_TOL[filt]
                check(imd <= tol and md <= EDGE_TOL and mean <= MEAN_TOL,
                      "%s: %s -> %s filter %d: max %d (<= %d) inside, %d (<= %d) on the edge, mean %.3f (<= %g)"
                      % (name, box, size, filt, imd, tol, md, EDGE_TOL, mean, MEAN_TOL))
            got = resize(photo, box, size, 0)
            cw, ch = box[2] - box[0], box[3] - box[1]
            want = Image.new("RGB", size)
            want.putdata([photo.getpixel((box[0] + x * cw // size[0], box[1] + y * ch // size[1]))
                          for y in range(size[1]) for x in range(size[0])])
            check(same(got, want), "%s: %s -> %s nearest == floor(x*cw/w)" % (name, box, size))
        gray = photo.convert("L")
        got = resize(gray, (0, 0, 640, 400), (160, 100), 3)
        want = gray.reduce(4)  # block means, rounded
        md = maxdiff(got, want)[0]
        check(md <= 1, "%s: area 1/4 within 1 of the 4x4 block means (max %d)" % (name, md))
        check(same(resize(photo, (7, 9, 107, 59), (100, 50), 1), photo.crop((7, 9, 107, 59))),
              "%s: a region of the output's size is a copy" % name)


def exif_checks():
    base = Image.open(PHOTOS[1]).convert("RGB").resize((24, 16))
    for o in range(1, 9):
        for endian in ("<", ">"):
            exif = Image.Exif()
            exif[0x0112] = o
            exif[0x010F] = "mxk"  # a tag before the orientation
            src = path("o%d.jpg" % o)
            base.save(src, quality=95, exif=exif.tobytes(0) if endian == "<" else exif_be(o))
            r = tool("upright", src, 3, path("up.raw"))
            w, h = int(r[0]), int(r[1])
            with open(path("up.raw"), "rb") as f:
                got = Image.frombytes("RGB", (w, h), f.read())
            want = ImageOps.exif_transpose(Image.open(src)).convert("RGB")
            check(r[3] == str(o) and same(got, want),
                  "EXIF orientation %d (%s): read %s, upright == PIL exif_transpose" % (o, endian, r[3]))


def exif_be(o):
    """A big-endian ("MM") EXIF block: IFD0 with Make, then the orientation."""
    ifd = struct.pack(">H", 2) + struct.pack(">HHI4s", 0x010F, 2, 4, b"mxk\0")
    ifd += struct.pack(">HHIHH", 0x0112, 3, 1, o, 0) + struct.pack(">I", 0)
    return b"Exif\0\0MM\0*" + struct.pack(">I", 8) + ifd


def encode_checks():
    photo = pil_draft(PHOTOS[0], "RGB", (640, 400))
    for im in (photo, photo.convert("L"), photo.convert("RGBA")):
        raw = save_raw(im, "enc.raw")
        tool("encode", raw, im.size[0], im.size[1], len(im.mode), "png", 3, path("enc.png"))
        check(same(Image.open(path("enc.png")).convert(im.mode), im), "PNG %s: PIL reads it back" % im.mode)
        if im.mode == "RGBA":
            continue
        tool("encode", raw, im.size[0], im.size[1], len(im.mode), "jpg", 95, path("enc.jpg"))
        pil = Image.open(path("enc.jpg"))
        check(pil.mode == im.mode and pil.size == im.size, "JPEG %s: PIL reads %s %s" % (im.mode, pil.mode, pil.size))
        check(same(decode(path("enc.jpg")), pil), "JPEG %s: img_decode == PIL" % im.mode)
        check(same(djpeg(path("enc.jpg")).convert(im.mode), pil), "JPEG %s: djpeg == PIL" % im.mode)
        rms = ImageStat.Stat(ImageChops.difference(pil.convert(im.mode), im)).rms
        mse = sum(r * r for r in rms) / len(rms)
        psnr = 99.0 if mse == 0 else 10 * math.log10(255 * 255 / mse)
        check(psnr >= 40, "JPEG %s quality 95: PSNR %.1f dB (>= 40)" % (im.mode, psnr))


def main():
    missing = [p for p in PHOTOS if not os.path.exists(p)]
    if missing:
        print("skipped: %s absent (Debian: apt-get install mate-backgrounds)" % missing[0])
        sys.exit(77)
    os.makedirs(WORK, exist_ok=True)
    jpeg_checks()
    cmyk_checks()
    many_scans_check()
    png_checks()
    resize_checks()
    exif_checks()
    encode_checks()
    print("%d failure(s)" % failures)
    sys.exit(1 if failures else 0)


main()
