#!/usr/bin/env python3
"""Make the ImageIO test fixtures in Fixtures/images/ (tiny images + Pillow's expected pixels).

Usage:  /opt/mlvenv/bin/python Scripts/make_image_fixtures.py        (needs numpy and Pillow)

Everything written is synthetic (seeded numpy noise and gradients); no third-party image is
copied. What it writes (see Fixtures/images/README.md):

- decode/*.png, decode/*.jpg   tiny images in many PNG/JPEG variants;
- decode/*.raw                 the pixels Pillow decodes from each, 8-bit HWC, as RGB
                               (convert("RGB")) or gray (convert("L")) per manifest.json; 16-bit
                               PNGs: the high byte of each sample (Pillow's own rule for RGB);
- resize/*.png + resize/*.raw  three source images and Pillow's BILINEAR resizes of them (plain
                               "fill", and the centre-crop / fit (letterbox) modes built from
                               Pillow crop + resize + paste exactly as ImageIO documents them),
                               plus Pillow's convert("L") of the RGB source;
- shared_photos.json           the sizes and per-channel means Pillow decodes from the real
                               photos in ../shared/images (only numbers; the photos stay there);
- manifest.json                the index the Swift tests read.

A few PNG variants Pillow cannot write (16-bit RGB/RGBA, 16-bit gray+alpha, Adam7 interlaced)
are assembled here with zlib; every file is read back with Pillow and checked against the
expected pixels, so Pillow is the reference for all of them.
"""
import io
import json
import os
import struct
import sys
import warnings
import zlib

import numpy as np
from PIL import Image, features

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fixtures", "images")
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "images")
rng = np.random.default_rng(20240611)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def raw_png(array, color_type, bit_depth, interlace=False):
    """A PNG of `array` (H, W[, C]) uint8/uint16 as given, filter 0, optionally Adam7."""
    a = np.asarray(array)
    h, w = a.shape[:2]
    if a.ndim == 2:
        a = a[:, :, None]
    dtype = ">u2" if bit_depth == 16 else "u1"

    def scanlines(sub):
        return b"".join(b"\x00" + row.astype(dtype).tobytes() for row in sub)

    if not interlace:
        data = scanlines(a)
    else:
        passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
        data = b""
        for x0, y0, dx, dy in passes:
            sub = a[y0::dy, x0::dx]
            if sub.shape[0] and sub.shape[1]:
                data += scanlines(sub)
    ihdr = struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0, 1 if interlace else 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(data, 9)) + chunk(b"IEND", b"")


def smooth_rgb(h, w, noise=40):
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 / max(w - 1, 1), y * 255 / max(h - 1, 1), (x + y) * 255 / max(w + h - 2, 1)], -1)
    return np.clip(base + rng.normal(0, noise, (h, w, 3)), 0, 255).astype(np.uint8)


manifest = {"generator": "Scripts/make_image_fixtures.py", "pillow": Image.__version__,
            "libjpeg": features.version("jpg"), "libjpeg_turbo": features.version("libjpeg_turbo"), "decode": [], "resize": [], "grayscale": []}


def save(rel, data):
    path = os.path.join(OUT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def expected_from_pillow(data, channels):
    im = Image.open(io.BytesIO(data))
    im.load()
    if channels == 3:
        return np.asarray(im.convert("RGB"))
    return np.asarray(im.convert("L"))


def add_decode(name, data, channels, expected, notes, pillow_check=True):
    """Register `data` as decode/<name> with `expected` (H, W[, C]) uint8 pixels."""
    expected = np.asarray(expected, dtype=np.uint8)
    if pillow_check:
        got = expected_from_pillow(data, channels)
        assert got.shape == expected.shape and (got == expected).all(), (name, got.shape, expected.shape)
    save("decode/" + name, data)
    raw = os.path.splitext(name)[0] + "." + name.rsplit(".", 1)[1] + ".raw"
    save("decode/" + raw, expected.tobytes())
    h, w = expected.shape[:2]
    manifest["decode"].append({"file": "decode/" + name, "expected": "decode/" + raw, "width": w, "height": h,
                               "channels": channels, "notes": notes})


def pil_bytes(im, fmt, **kw):
    buf = io.BytesIO()
    im.save(buf, fmt, **kw)
    return buf.getvalue()


def make_decode():
    w, h = 7, 5
    rgb = smooth_rgb(h, w)
    gray = np.asarray(Image.fromarray(rgb).convert("L"))
    alpha = rng.integers(0, 256, (h, w), dtype=np.uint8)

    add_decode("gray8.png", pil_bytes(Image.fromarray(gray, "L"), "PNG"), 1, gray, "8-bit gray")
    la = Image.fromarray(np.dstack([gray, alpha]), "LA")
    add_decode("gray_alpha8.png", pil_bytes(la, "PNG"), 1, gray, "8-bit gray+alpha, alpha dropped")
    add_decode("rgb8.png", pil_bytes(Image.fromarray(rgb, "RGB"), "PNG"), 3, rgb, "8-bit RGB")
    rgba = Image.fromarray(np.dstack([rgb, alpha]), "RGBA")
    add_decode("rgba8.png", pil_bytes(rgba, "PNG"), 3, rgb, "8-bit RGBA, alpha dropped (not composited)")

    palette = rng.integers(0, 256, (12, 3), dtype=np.uint8)
    index = rng.integers(0, 12, (h, w), dtype=np.uint8)
    p = Image.fromarray(index, "P")
    p.putpalette(palette.flatten().tolist())
    add_decode("palette8.png", pil_bytes(p, "PNG"), 3, palette[index], "8-bit palette -> RGB")
    add_decode("palette4_trns.png", pil_bytes(p, "PNG", bits=4, transparency=bytes(range(0, 240, 20))), 3,
               palette[index], "4-bit palette with tRNS -> RGB, transparency dropped")
    gray_palette = np.repeat(np.arange(0, 256, 23, dtype=np.uint8)[:, None], 3, 1)[:12]
    pg = Image.fromarray(index, "P")
    pg.putpalette(gray_palette.flatten().tolist())
    add_decode("palette_gray.png", pil_bytes(pg, "PNG"), 3, gray_palette[index],
               "palette of gray entries -> still RGB")

    bits = (rng.integers(0, 2, (h, w)) * 255).astype(np.uint8)
    add_decode("gray1.png", pil_bytes(Image.fromarray(bits, "L").convert("1"), "PNG"), 1, bits,
               "1-bit gray -> 0/255")

    g16 = rng.integers(0, 65536, (h, w), dtype=np.uint16)
    # Pillow reads 16-bit gray as mode I;16 and convert("L") clips at 255, so the reference here
    # is the documented high byte; the file itself is checked with Pillow's 16-bit values.
    data = raw_png(g16, 0, 16)
    assert (np.asarray(Image.open(io.BytesIO(data))).astype(np.uint16) == g16).all()
    add_decode("gray16.png", data, 1, (g16 >> 8).astype(np.uint8), "16-bit gray -> high byte",
               pillow_check=False)
    a16 = rng.integers(0, 65536, (h, w), dtype=np.uint16)
    data = raw_png(np.dstack([g16, a16]), 4, 16)
    add_decode("gray_alpha16.png", data, 1, (g16 >> 8).astype(np.uint8),
               "16-bit gray+alpha -> high byte, alpha dropped", pillow_check=False)
    rgb16 = rng.integers(0, 65536, (h, w, 3), dtype=np.uint16)
    add_decode("rgb16.png", raw_png(rgb16, 2, 16), 3, (rgb16 >> 8).astype(np.uint8),
               "16-bit RGB -> high byte (Pillow agrees)")
    rgba16 = np.dstack([rgb16, a16])
    add_decode("rgba16.png", raw_png(rgba16, 6, 16), 3, (rgb16 >> 8).astype(np.uint8),
               "16-bit RGBA -> high byte, alpha dropped (Pillow agrees)")
    big = smooth_rgb(11, 13)
    add_decode("rgb8_interlaced.png", raw_png(big, 2, 8, interlace=True), 3, big, "Adam7 interlaced RGB")

    jw, jh = 19, 13
    jrgb = Image.fromarray(smooth_rgb(jh, jw, noise=25), "RGB")
    for name, kw, notes in [("rgb420.jpg", dict(quality=90), "baseline YCbCr 4:2:0"),
                            ("rgb444.jpg", dict(quality=95, subsampling=0), "baseline YCbCr 4:4:4"),
                            ("progressive.jpg", dict(quality=85, progressive=True), "progressive YCbCr 4:2:0")]:
        data = pil_bytes(jrgb, "JPEG", **kw)
        add_decode(name, data, 3, expected_from_pillow(data, 3), notes)
    data = pil_bytes(jrgb.convert("L"), "JPEG", quality=90)
    add_decode("gray.jpg", data, 1, expected_from_pillow(data, 1), "grayscale JPEG")
    data = pil_bytes(jrgb.convert("CMYK"), "JPEG", quality=90)
    assert Image.open(io.BytesIO(data)).mode == "CMYK"
    add_decode("cmyk.jpg", data, 3, expected_from_pillow(data, 3), "Adobe CMYK JPEG -> RGB (Pillow's formula)")


def make_resize():
    sources = {"src_rgb.png": Image.fromarray(smooth_rgb(29, 41, noise=60), "RGB"),
               "src_gray.png": Image.fromarray(smooth_rgb(23, 17, noise=60)[:, :, 1].copy(), "L"),
               "src_big.png": Image.fromarray(smooth_rgb(72, 96, noise=12), "RGB")}
    for name, im in sources.items():
        save("resize/" + name, pil_bytes(im, "PNG"))

    def center(im, w, h):
        sw, sh = im.size
        if sw * h > sh * w:
            cw = min(max(round_half_away(sh * w / h), 1), sw)
            x0 = (sw - cw) // 2
            im = im.crop((x0, 0, x0 + cw, sh))
        elif sw * h < sh * w:
            ch = min(max(round_half_away(sw * h / w), 1), sh)
            y0 = (sh - ch) // 2
            im = im.crop((0, y0, sw, y0 + ch))
        return im.resize((w, h), Image.BILINEAR)

    def fit(im, w, h):
        sw, sh = im.size
        tw, th = w, h
        if sw * h > sh * w:
            th = min(max(round_half_away(sh * w / sw), 1), h)
        elif sw * h < sh * w:
            tw = min(max(round_half_away(sw * h / sh), 1), w)
        scaled = im.resize((tw, th), Image.BILINEAR)
        canvas = Image.new(im.mode, (w, h), 0)
        canvas.paste(scaled, ((w - tw) // 2, (h - th) // 2))
        return canvas

    modes = {"fill": lambda im, w, h: im.resize((w, h), Image.BILINEAR), "center": center, "fit": fit}
    cases = [("fill", 13, 9), ("fill", 7, 3), ("fill", 97, 61), ("fill", 64, 20), ("fill", 41, 100),
             ("fill", 1, 1), ("center", 16, 16), ("center", 10, 30), ("center", 50, 12),
             ("fit", 16, 16), ("fit", 30, 10), ("fit", 12, 50)]
    big_cases = [("center", 32, 32), ("center", 20, 45), ("fit", 40, 24), ("fit", 24, 40), ("fill", 25, 70),
                 ("fill", 90, 20), ("fill", 30, 9)]
    for name, im in sources.items():
        stem = name[:-4]
        for mode, w, h in (big_cases if name == "src_big.png" else cases):
            out = np.asarray(modes[mode](im, w, h))
            raw = "resize/%s_%s_%dx%d.raw" % (stem, mode, w, h)
            save(raw, out.tobytes())
            manifest["resize"].append({"source": "resize/" + name, "mode": mode, "width": w, "height": h,
                                       "channels": 1 if im.mode == "L" else 3, "expected": raw})
    gray = np.asarray(sources["src_rgb.png"].convert("L"))
    save("resize/src_rgb_L.raw", gray.tobytes())
    manifest["grayscale"].append({"source": "resize/src_rgb.png", "expected": "resize/src_rgb_L.raw"})


def round_half_away(v):
    return int(np.floor(v + 0.5)) if v >= 0 else -int(np.floor(-v + 0.5))


def make_shared():
    photos = {}
    for name in ["dog.jpg", "giraffe.jpg", "london_big-ben.jpg", "london_big-ben_320.png"]:
        path = os.path.join(SHARED, name)
        if not os.path.exists(path):
            print("note: %s missing; shared_photos.json not updated" % path)
            return
        im = Image.open(path)
        a = np.asarray(im.convert("RGB")).astype(np.float64)
        photos[name] = {"width": im.size[0], "height": im.size[1], "mode": im.mode,
                        "mean_rgb": [round(float(a[:, :, c].mean()), 4) for c in range(3)]}
    with open(os.path.join(OUT, "shared_photos.json"), "w") as f:
        json.dump({"generator": "Scripts/make_image_fixtures.py", "pillow": Image.__version__,
                   "photos": photos}, f, indent=1)
        f.write("\n")


def main():
    # Pillow warns that palette + tRNS bytes "should be converted to RGBA"; dropping it is the point.
    warnings.filterwarnings("ignore", message="Palette images with Transparency")
    os.makedirs(OUT, exist_ok=True)
    make_decode()
    make_resize()
    make_shared()
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = 0
    for d, _, files in os.walk(OUT):
        total += sum(os.path.getsize(os.path.join(d, x)) for x in files)
    print("Fixtures/images: %d bytes" % total)


if __name__ == "__main__":
    sys.exit(main())
