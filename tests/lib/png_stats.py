#!/usr/bin/env python3
"""png_stats.py FILE — what a screenshot shows, without an imaging library (not a test
itself): decodes an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes) with zlib and
the PNG row filters, and prints "W H colors=N nonwhite=F": the number of distinct pixel
values and the fraction of pixels that are not pure white. A blank page is one colour.
"""
import struct
import sys
import zlib


def chunks(data):
    pos = 8
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + n]
        pos += 12 + n


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def unfilter(kind, row, prev, bpp):
    out = bytearray(row)
    for i in range(len(out)):
        a = out[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        pred = (0, a, b, (a + b) // 2, paeth(a, b, c))[kind]
        out[i] = (out[i] + pred) & 0xFF
    return out


data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
idat, w = b"", 0
for kind, body in chunks(data):
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype, interlace)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
raw, stride = zlib.decompress(idat), w * bpp
prev, colors, white = bytearray(stride), set(), 0
for y in range(h):
    start = y * (stride + 1)
    row = unfilter(raw[start], raw[start + 1:start + 1 + stride], prev, bpp)
    for x in range(0, stride, bpp):
        px = bytes(row[x:x + 3])
        colors.add(px)
        white += px == b"\xff\xff\xff"
    prev = row
print("%d %d colors=%d nonwhite=%.4f" % (w, h, len(colors), 1 - white / (w * h)))
