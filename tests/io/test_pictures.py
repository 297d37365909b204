"""viewcert.io.pictures: a published image read bounded. The refusals the issue lists (an 8-bit palette PNG, a
16-bit PNG, a 40,000 × 40,000 image: its declared size checked before a pixel is decoded), each one line naming
the file and field; RGBA composited over white; JPEG read."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from viewcert.errors import InputError
from viewcert.io.pictures import picture_header, read_picture
from viewcert.limits import LimitError


def _png_bytes(width: int, height: int, depth: int, colour: int, rows: bytes) -> bytes:
    """A PNG written chunk by chunk (no library): IHDR as given, one IDAT of ``rows``, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def test_rgb_png_and_its_sha256(tmp_path):
    a = np.zeros((4, 6, 3), dtype=np.uint8)
    a[1, 2] = (10, 200, 30)
    Image.fromarray(a).save(tmp_path / "x.png")
    rgb, pic = read_picture(tmp_path / "x.png", name="images/x.png")
    import hashlib

    assert rgb.shape == (4, 6, 3) and tuple(rgb[1, 2]) == (10, 200, 30)
    assert (pic.format, pic.width, pic.height, pic.colour, pic.bit_depth) == ("png", 6, 4, "RGB", 8)
    assert pic.sha256 == hashlib.sha256((tmp_path / "x.png").read_bytes()).hexdigest()


def test_rgba_is_composited_over_white(tmp_path):
    a = np.zeros((2, 2, 4), dtype=np.uint8)
    a[0, 0] = (255, 0, 0, 255)  # opaque red
    a[0, 1] = (0, 0, 255, 0)  # transparent: white
    a[1, 0] = (0, 0, 0, 128)  # half black over white: 127
    Image.fromarray(a, "RGBA").save(tmp_path / "a.png")
    rgb, pic = read_picture(tmp_path / "a.png")
    assert pic.alpha and pic.colour == "RGBA"
    assert tuple(rgb[0, 0]) == (255, 0, 0) and tuple(rgb[0, 1]) == (255, 255, 255) and tuple(rgb[1, 0]) == (127,) * 3


def test_palette_png_is_refused_naming_the_file(tmp_path):
    Image.fromarray(np.zeros((3, 3, 3), dtype=np.uint8)).convert("P").save(tmp_path / "p.png")
    with pytest.raises(InputError, match="8-bit palette PNG") as e:
        read_picture(tmp_path / "p.png", name="images/p.png")
    assert e.value.source == "images/p.png" and e.value.field == "image"
    assert "convert it to 8-bit RGB" in str(e.value) and str(tmp_path) not in str(e.value)


def test_sixteen_bit_png_is_refused(tmp_path):
    rows = b"".join(b"\x00" + b"\x00\x01" * 3 * 2 for _ in range(2))  # 2×2 RGB, 16 bits a sample
    (tmp_path / "d.png").write_bytes(_png_bytes(2, 2, 16, 2, rows))
    with pytest.raises(InputError, match="16-bit PNG"):
        read_picture(tmp_path / "d.png")


def test_huge_declared_size_is_refused_before_decoding(tmp_path):
    """A 40,000 × 40,000 PNG of a few hundred bytes: the header's size against max_pixels, nothing decoded (the
    IDAT holds a single row: decoding it would fail, so the refusal cannot come from there)."""
    data = _png_bytes(40_000, 40_000, 8, 2, b"\x00" + b"\x00" * 3 * 40_000)
    assert len(data) < 1000
    (tmp_path / "big.png").write_bytes(data)
    with pytest.raises(LimitError, match=r"image pixels \(40000x40000\)") as e:
        read_picture(tmp_path / "big.png", name="big.png")
    assert e.value.source == "big.png" and e.value.field == "image" and "max_pixels" in str(e.value)


def test_other_formats_and_broken_headers(tmp_path):
    buf = io.BytesIO()
    Image.fromarray(np.zeros((3, 3, 3), dtype=np.uint8)).save(buf, format="GIF")
    with pytest.raises(InputError, match="only PNG and JPEG"):
        picture_header(buf.getvalue(), source="g.gif")
    with pytest.raises(InputError, match="without its IHDR"):
        picture_header(b"\x89PNG\r\n\x1a\n" + b"\x00" * 30, source="t.png")
    cmyk = io.BytesIO()
    Image.new("CMYK", (4, 4)).save(cmyk, format="JPEG")
    with pytest.raises(InputError, match="colour mode CMYK"):
        picture_header(cmyk.getvalue(), source="c.jpg")


def test_jpeg_is_read(tmp_path):
    a = np.full((8, 8, 3), (200, 40, 40), dtype=np.uint8)
    Image.fromarray(a).save(tmp_path / "j.jpg", quality=95)
    rgb, pic = read_picture(tmp_path / "j.jpg")
    assert pic.format == "jpeg" and rgb.shape == (8, 8, 3) and np.abs(rgb.astype(int) - a).max() <= 3


def test_not_a_regular_file(tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo.png")
    with pytest.raises(InputError, match="FIFO") as e:
        read_picture(tmp_path / "fifo.png", name="fifo.png")
    assert e.value.source == "fifo.png"
