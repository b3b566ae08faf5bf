#!/usr/bin/env python3
"""Byte-level helpers for scripts/make-samples.sh (standard library only).

Each sub-command reads and writes whole small files; they are deterministic.
Run `python3 scripts/make-samples.py -h` for the list.
"""

import argparse
import random
import struct
import sys
import zipfile
import zlib


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def die(msg):
    sys.exit("make-samples.py: " + msg)


# ---------------------------------------------------------------- JPEG


def jpeg_segments(data):
    """Yield (offset, marker, total_length) for the segments before SOS.

    The last one yielded is SOS itself (its length covers only its header)."""
    if data[:2] != b"\xff\xd8":
        die("not a JPEG (no SOI)")
    off = 2
    while off + 4 <= len(data):
        if data[off] != 0xFF:
            die("JPEG marker expected at %d" % off)
        marker = data[off + 1]
        (length,) = struct.unpack(">H", data[off + 2 : off + 4])
        yield off, marker, 2 + length
        if marker == 0xDA:  # SOS: entropy-coded data follows
            return
        off += 2 + length
    die("JPEG has no SOS")


def strip_app(data):
    """Remove every APPn (0xE0-0xEF) and COM segment."""
    out = bytearray(b"\xff\xd8")
    for off, marker, length in jpeg_segments(data):
        if 0xE0 <= marker <= 0xEF or marker == 0xFE:
            continue
        if marker == 0xDA:
            out += data[off:]
            return bytes(out)
        out += data[off : off + length]
    die("unreachable")


def exif_app1():
    """A small big-endian Exif APP1: IFD0 with Make, Model, Orientation."""
    make = b"AttachmentKit\x00"
    model = b"make-samples\x00"
    entries = 3
    ifd_len = 2 + entries * 12 + 4
    data_off = 8 + ifd_len  # offsets are relative to the TIFF header
    tiff = bytearray(b"MM\x00\x2a" + struct.pack(">I", 8))
    tiff += struct.pack(">H", entries)
    tiff += struct.pack(">HHII", 0x010F, 2, len(make), data_off)  # Make
    tiff += struct.pack(">HHII", 0x0110, 2, len(model), data_off + len(make))  # Model
    tiff += struct.pack(">HHIHH", 0x0112, 3, 1, 1, 0)  # Orientation = 1
    tiff += struct.pack(">I", 0)  # no IFD1
    tiff += make + model
    payload = b"Exif\x00\x00" + bytes(tiff)
    return b"\xff\xe1" + struct.pack(">H", 2 + len(payload)) + payload


def exif_orientation_app1(orientation):
    """A minimal big-endian Exif APP1: IFD0 with Orientation only."""
    tiff = bytearray(b"MM\x00\x2a" + struct.pack(">I", 8))
    tiff += struct.pack(">H", 1)
    tiff += struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0)
    tiff += struct.pack(">I", 0)
    payload = b"Exif\x00\x00" + bytes(tiff)
    return b"\xff\xe1" + struct.pack(">H", 2 + len(payload)) + payload


def cmd_jpeg_orient(a):
    """The same pixels as stored, with an Exif Orientation tag (APP0/JFIF removed)."""
    body = strip_app(read(a.src))
    write(a.dst, body[:2] + exif_orientation_app1(a.orientation) + body[2:])


def cmd_jpeg_exif(a):
    """Camera layout: SOI, APP1 Exif, then the image (APP0/JFIF removed)."""
    body = strip_app(read(a.src))
    write(a.dst, body[:2] + exif_app1() + body[2:])


def cmd_jpeg_noapp(a):
    write(a.dst, strip_app(read(a.src)))


def cmd_jpeg_cut(a):
    """Cut in the middle of the entropy-coded data: no EOI."""
    data = read(a.src)
    sos = None
    for off, marker, length in jpeg_segments(data):
        if marker == 0xDA:
            sos = off + length
    if data[-2:] != b"\xff\xd9":
        die("source JPEG does not end with EOI")
    cut = sos + (len(data) - 2 - sos) // 2
    write(a.dst, data[:cut])
    print(cut, len(data))


# ---------------------------------------------------------------- PNG


def png_chunk(ctype, body):
    return (
        struct.pack(">I", len(body))
        + ctype
        + body
        + struct.pack(">I", zlib.crc32(ctype + body) & 0xFFFFFFFF)
    )


def cmd_png_huge(a):
    """A 1-bit grayscale PNG, all black, written row by row (never in memory)."""
    w, h = a.width, a.height
    row = b"\x00" + b"\x00" * ((w + 7) // 8)  # filter None + packed bits
    comp = zlib.compressobj(9)
    parts = []
    for _ in range(h):
        c = comp.compress(row)
        if c:
            parts.append(c)
    parts.append(comp.flush())
    idat = b"".join(parts)
    ihdr = struct.pack(">IIBBBBB", w, h, 1, 0, 0, 0, 0)  # depth 1, grayscale
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr)
    # Split IDAT into 64 KiB chunks as encoders usually do.
    for i in range(0, len(idat), 65536):
        out += png_chunk(b"IDAT", idat[i : i + 65536])
    out += png_chunk(b"IEND", b"")
    write(a.dst, out)


def cmd_png_cut(a):
    """Cut in the middle of the first IDAT: no IEND."""
    data = read(a.src)
    off = 8
    while off < len(data):
        (length,) = struct.unpack(">I", data[off : off + 4])
        if data[off + 4 : off + 8] == b"IDAT":
            cut = off + 8 + length // 2
            write(a.dst, data[:cut])
            print(cut, len(data))
            return
        off += 12 + length
    die("no IDAT")


# ---------------------------------------------------------------- MP3


def cmd_id3v1(a):
    """Append an ID3v1.1 tag (ffmpeg 5.1 writes none when ID3v2 is off)."""
    data = read(a.src)
    if data[-128:-125] == b"TAG":
        die("source already has an ID3v1 tag")

    def field(text, n):
        return text.encode("latin-1")[:n].ljust(n, b"\x00")

    tag = (
        b"TAG"
        + field(a.title, 30)
        + field("make-samples", 30)
        + field("AttachmentKit", 30)
        + b"2024"
        + field("ID3v1.1 only", 28)
        + b"\x00\x01"  # v1.1: zero byte, track 1
        + b"\xff"  # genre: none
    )
    assert len(tag) == 128
    write(a.dst, data + tag)


def cmd_mp3_pad(a):
    """Prepend zero bytes before the first frame (no tag), as some editors leave."""
    data = read(a.src)
    if data[:3] == b"ID3" or data[0] != 0xFF:
        die("source MP3 must start with a frame")
    write(a.dst, b"\x00" * a.zeros + data)


def cmd_mpeg_rate(a):
    """Set the frame rate code of every MPEG-1/2 video sequence header (00 00 01 B3): a code of
    9 to 15 is reserved, which ffmpeg decodes anyway (as some encoders wrote it)."""
    data = bytearray(read(a.src))
    start = 0
    edits = 0
    while True:
        at = data.find(b"\x00\x00\x01\xb3", start)
        if at < 0:
            break
        data[at + 7] = (data[at + 7] & 0xF0) | (a.code & 0x0F)
        edits += 1
        start = at + 4
    if edits == 0:
        die("no sequence header")
    write(a.dst, bytes(data))


def cmd_mp3_trail(a):
    """Append seeded random bytes after the last frame, with no 0xFF byte (no false sync)."""
    rng = random.Random(a.seed)
    garbage = bytes(rng.randrange(0, 0xFF) for _ in range(a.size))
    write(a.dst, read(a.src) + garbage)


# ---------------------------------------------------------------- short APP0


def cmd_jpeg_short_app0(a):
    """Give the JFIF APP0 a 2x1 thumbnail but keep the 16-byte length of one without it.

    The declared end then falls on the thumbnail's first bytes, "FF 80": not a marker. The
    next real marker (DQT) follows just after the thumbnail, where decoders find it."""
    data = read(a.src)
    segments = list(jpeg_segments(data))
    off, marker, length = segments[0]
    if marker != 0xE0 or data[off + 4 : off + 9] != b"JFIF\x00" or length != 18:
        die("source JPEG must start with a plain 16-byte JFIF APP0")
    app0 = bytearray(data[off : off + length])
    app0[16:18] = b"\x02\x01"  # thumbnail 2x1 ...
    thumbnail = b"\xff\x80\x00\x00\x80\xff"  # ... 6 bytes of RGB, not counted in the length
    write(a.dst, data[:off] + bytes(app0) + thumbnail + data[off + length :])


# ---------------------------------------------------------------- GIF


def cmd_gif_cut(a):
    """Cut at half the file: inside image data, trailer (0x3B) missing."""
    data = read(a.src)
    if data[-1:] != b";":
        die("source GIF has no trailer")
    cut = len(data) // 2
    write(a.dst, data[:cut])
    print(cut, len(data))


# ---------------------------------------------------------------- TIFF


def cmd_tiff_bad_ifd(a):
    """Point the first-IFD offset past the end of the file."""
    data = bytearray(read(a.src))
    fmt = {b"II": "<I", b"MM": ">I"}.get(bytes(data[:2]))
    if fmt is None:
        die("not a TIFF")
    bogus = len(data) + 4096
    data[4:8] = struct.pack(fmt, bogus)
    write(a.dst, bytes(data))
    print(bogus, len(data))


# ---------------------------------------------------------------- ISO BMFF / QuickTime


def boxes(data):
    """Top-level boxes as (offset, size, type)."""
    out = []
    off = 0
    while off + 8 <= len(data):
        size, btype = struct.unpack(">I4s", data[off : off + 8])
        if size == 1:
            (size,) = struct.unpack(">Q", data[off + 8 : off + 16])
        elif size == 0:
            size = len(data) - off
        out.append((off, size, btype))
        off += size
    return out


def cmd_ftyp_brands(a):
    """Rewrite the ftyp major brand (and optionally all compatible brands)."""
    data = bytearray(read(a.src))
    off, size, btype = boxes(data)[0]
    if btype != b"ftyp":
        die("first box is not ftyp")
    major = a.major.encode("latin-1").ljust(4)[:4]
    data[off + 8 : off + 12] = major
    if a.compat is not None:
        compat = a.compat.encode("latin-1").ljust(4)[:4]
        for p in range(off + 16, off + size, 4):
            data[p : p + 4] = compat
    write(a.dst, bytes(data))


def cmd_hdlr_pict(a):
    """Turn the video track's handler 'vide' into 'pict', as HEIF image sequences declare
    their track (ISO/IEC 23008-12); the one 'hdlr' box whose handler type is 'vide'."""
    data = bytearray(read(a.src))
    at = data.find(b"hdlr")
    edits = 0
    while at >= 0:
        handler = at + 4 + 4 + 4  # 'hdlr', version and flags, pre_defined
        if data[handler : handler + 4] == b"vide":
            data[handler : handler + 4] = b"pict"
            edits += 1
        at = data.find(b"hdlr", at + 4)
    if edits != 1:
        die(f"expected one video handler, found {edits}")
    write(a.dst, bytes(data))


def cmd_moov_first(a):
    """ftyp,moov,... -> moov,free(size of ftyp),...: absolute offsets unchanged."""
    data = read(a.src)
    bx = boxes(data)
    if [b[2] for b in bx[:2]] != [b"ftyp", b"moov"]:
        die("expected ftyp then moov (use -movflags +faststart)")
    ftyp_size = bx[0][1]
    moov_off, moov_size, _ = bx[1]
    free = struct.pack(">I4s", ftyp_size, b"free") + b"\x00" * (ftyp_size - 8)
    out = data[moov_off : moov_off + moov_size] + free + data[moov_off + moov_size :]
    assert len(out) == len(data)
    write(a.dst, out)


def cmd_ftyp_to_wide(a):
    """ftyp(N),... -> wide(8),free(N-8),...: no ftyp, absolute offsets unchanged."""
    data = read(a.src)
    off, size, btype = boxes(data)[0]
    if btype != b"ftyp" or size < 16:
        die("first box is not an ftyp of 16 bytes or more")
    head = struct.pack(">I4s", 8, b"wide")
    head += struct.pack(">I4s", size - 8, b"free") + b"\x00" * (size - 16)
    write(a.dst, head + data[size:])


def cmd_mdat_cut(a):
    """Cut in the middle of the mdat payload."""
    data = read(a.src)
    for off, size, btype in boxes(data):
        if btype == b"mdat":
            cut = off + 8 + (size - 8) // 2
            write(a.dst, data[:cut])
            print(cut, len(data), "mdat@%d+%d" % (off, size))
            return
    die("no mdat")


# ---------------------------------------------------------------- MPEG-TS


def cmd_ts_drop_sdt(a):
    """Drop the SDT packets (PID 0x0011) so the stream starts with the PAT."""
    data = read(a.src)
    if len(data) % 188 or data[0] != 0x47:
        die("not a 188-byte-packet transport stream")
    keep = []
    for i in range(0, len(data), 188):
        pkt = data[i : i + 188]
        pid = ((pkt[1] & 0x1F) << 8) | pkt[2]
        if pid != 0x0011:
            keep.append(pkt)
    out = b"".join(keep)
    if ((out[1] & 0x1F) << 8 | out[2]) != 0:
        die("first packet is not the PAT after dropping the SDT")
    write(a.dst, out)


def cmd_ts_204(a):
    """Frame a 188-byte-packet transport stream as DVB does: 16 bytes of parity (zero) after
    each packet, 204 bytes in all."""
    data = read(a.src)
    if len(data) % 188 or data[0] != 0x47:
        die("not a 188-byte-packet transport stream")
    write(a.dst, b"".join(data[i : i + 188] + bytes(16) for i in range(0, len(data), 188)))


def cmd_amr(a):
    """Raw AMR-NB (RFC 4867 storage format): '#!AMR' and `frames` 12.2 kb/s frames of
    pseudo-random speech bits (no encoder in Debian's ffmpeg; the decoder takes any bits)."""
    r = random.Random(a.seed)
    frames = b"".join(bytes([0x3C]) + bytes(r.randrange(256) for _ in range(31)) for _ in range(a.frames))
    write(a.dst, b"#!AMR\n" + frames)


# ---------------------------------------------------------------- documents / noise


def cmd_pdf(a):
    """A minimal one-page PDF 1.4 with a correct xref table."""
    content = b"BT /F1 18 Tf 20 60 Td (Not an attachment) Tj ET"
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 240 120] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for o in offsets:
        out += b"%010d 00000 n \n" % o
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objs) + 1,
        xref,
    )
    write(a.dst, bytes(out))


def cmd_zip(a):
    """A ZIP with one stored text file and a fixed timestamp."""
    info = zipfile.ZipInfo("readme.txt", date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    info.create_system = 3
    with zipfile.ZipFile(a.dst, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(info, "A ZIP archive is not a notification attachment.\n" * 4)


def cmd_random(a):
    rng = random.Random(a.seed)
    write(a.dst, bytes(rng.getrandbits(8) for _ in range(a.size)))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)

    def add(name, fn, *args):
        s = sub.add_parser(name, help=fn.__doc__)
        for arg in args:
            if isinstance(arg, tuple):
                s.add_argument(arg[0], **arg[1])
            else:
                s.add_argument(arg)
        s.set_defaults(fn=fn)

    add("jpeg-exif", cmd_jpeg_exif, "src", "dst")
    add("jpeg-orient", cmd_jpeg_orient, "src", "dst", ("orientation", {"type": int}))
    add("jpeg-noapp", cmd_jpeg_noapp, "src", "dst")
    add("jpeg-cut", cmd_jpeg_cut, "src", "dst")
    add("png-huge", cmd_png_huge, "dst", ("width", {"type": int}), ("height", {"type": int}))
    add("png-cut", cmd_png_cut, "src", "dst")
    add("id3v1", cmd_id3v1, "src", "dst", "title")
    add("mp3-pad", cmd_mp3_pad, "src", "dst", ("zeros", {"type": int}))
    add("mpeg-rate", cmd_mpeg_rate, "src", "dst", ("code", {"type": int}))
    add("mp3-trail", cmd_mp3_trail, "src", "dst", ("seed", {"type": int}), ("size", {"type": int}))
    add("jpeg-short-app0", cmd_jpeg_short_app0, "src", "dst")
    add("gif-cut", cmd_gif_cut, "src", "dst")
    add("tiff-bad-ifd", cmd_tiff_bad_ifd, "src", "dst")
    add("ftyp-brands", cmd_ftyp_brands, "src", "dst", "major", ("--compat", {}))
    add("hdlr-pict", cmd_hdlr_pict, "src", "dst")
    add("moov-first", cmd_moov_first, "src", "dst")
    add("ftyp-to-wide", cmd_ftyp_to_wide, "src", "dst")
    add("mdat-cut", cmd_mdat_cut, "src", "dst")
    add("ts-drop-sdt", cmd_ts_drop_sdt, "src", "dst")
    add("ts-204", cmd_ts_204, "src", "dst")
    add("amr", cmd_amr, "dst", ("seed", {"type": int}), ("frames", {"type": int}))
    add("pdf", cmd_pdf, "dst")
    add("zip", cmd_zip, "dst")
    add("random", cmd_random, "dst", ("seed", {"type": int}), ("size", {"type": int}))
    a = p.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
