"""io.images.encode_render_png / write_png: the rendered-image encoding (exact indexed PNG at zlib level 1)."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
from PIL import Image

from viewcert.io.images import encode_png, encode_render_png, write_png


def _chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of every chunk, read from the PNG layout (8-byte signature, then length/type/data/CRC)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    out, i = [], 8
    while i < len(png):
        (n,) = struct.unpack(">I", png[i:i + 4])
        out.append((png[i + 4:i + 8], png[i + 8:i + 8 + n]))
        i += 12 + n
    return out


def _image(n_colours: int, shape=(48, 64), seed=3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    colours = rng.choice(256 ** 3, size=n_colours, replace=False)
    rgb = np.stack([(colours >> 16) & 255, (colours >> 8) & 255, colours & 255], axis=1).astype(np.uint8)
    return rgb[rng.integers(0, n_colours, size=shape)]


def test_few_colours_indexed_lossless_fastest_zlib(tmp_path):
    img = _image(3)
    png = encode_render_png(img)
    chunks = _chunks(png)
    ihdr = dict(chunks)[b"IHDR"]
    assert ihdr[9] == 3  # colour type 3 = indexed (PNG spec)
    plte = dict(chunks)[b"PLTE"]
    assert len(plte) == 3 * 3  # exactly the image's three colours
    idat = b"".join(d for t, d in chunks if t == b"IDAT")
    assert idat[1] >> 6 == 0  # zlib FLG.FLEVEL 0: "fastest" (levels 0-1; level 6 writes 2)
    assert _chunks(encode_png(img))[0][1][9] == 2  # the plain default stays RGB
    back = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    assert np.array_equal(back, img)
    raw = zlib.decompress(idat)  # per row: one filter byte, then 64 indices packed at 2 bits (3 colours)
    assert ihdr[8] == 2 and len(raw) == 48 * (1 + 64 * 2 // 8)
    p = write_png(tmp_path / "a.png", img)
    assert p.read_bytes() == png == encode_render_png(img.copy())  # same pixels, same bytes


def test_many_colours_fall_back_to_rgb_lossless():
    img = _image(300)
    png = encode_render_png(img)
    assert _chunks(png)[0][1][9] == 2  # colour type 2 = truecolour
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png))), img)


def test_palette_option_keeps_quantised_contact_sheets():
    img = _image(300)
    assert encode_png(img, palette=True) == encode_png(img.copy(), palette=True)
