"""io.images: the numba exact-palette PNG path (``exact_palette_scanlines`` → ``indexed_png``, IDAT by zlib),
and the renderer's flat orthographic shading kernel added for the same speed target.

Twins (tests/support/naive.py): ``png_palette_scanlines`` (palette, scanlines and bit depth from the PNG spec),
``flat_ortho_shade_loop`` (the raster docstring); Pillow decodes every PNG written here (an independent
decoder) back to the input."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from tests.support.naive import flat_ortho_shade_loop, png_palette_scanlines
from viewcert.io import images
from viewcert.io.images import encode_png, encode_render_png, exact_palette_scanlines
from viewcert.render import _kernels_pass1, _kernels_trace


def _chunks(png: bytes) -> list[tuple[bytes, bytes]]:
    """(type, data) of every chunk, CRCs checked with zlib.crc32 over type + data (PNG spec)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    out, i = [], 8
    while i < len(png):
        (n,) = struct.unpack(">I", png[i:i + 4])
        kind, data = png[i + 4:i + 8], png[i + 8:i + 8 + n]
        assert struct.unpack(">I", png[i + 8 + n:i + 12 + n])[0] == zlib.crc32(kind + data)
        out.append((kind, data))
        i += 12 + n
    return out


def _decode(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


@st.composite
def run_images(draw):
    """uint8 RGB images built from horizontal runs of colours drawn from a small random palette (some
    colours one unit apart), widths not multiples of 8 included, so the 8-pixel fast path, its fallback and
    the > 256-colour refusal are all reached."""
    h = draw(st.integers(1, 12))
    w = draw(st.integers(1, 45))
    n = draw(st.sampled_from([1, 2, 3, 4, 5, 16, 17, 40, 256, 257, 400]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, size=(n, 3))
    base[1::2] = np.clip(base[::2][: len(base[1::2])] + rng.integers(-1, 2, size=(len(base[1::2]), 3)), 0, 255)
    colours = base.astype(np.uint8)
    flat = []
    while len(flat) < h * w:
        flat += [int(rng.integers(0, n))] * int(rng.choice([1, 2, 3, 8, 9, 17, 60]))
    return colours[np.array(flat[: h * w]).reshape(h, w)]


@given(run_images())
def test_palette_and_scanlines_equal_the_spec_twin(img):
    got, want = exact_palette_scanlines(img), png_palette_scanlines(img.tolist())
    if want is None:
        assert got is None
        return
    assert got is not None
    for g, x in zip(got[:2], want[:2], strict=True):
        assert g.dtype == x.dtype and np.array_equal(g, x)
    assert got[2] == want[2]


@given(run_images())
def test_word_fast_path_changes_nothing(img):
    """The kernel with the uint64 words (8 pixels at a time) and without them (pixel by pixel) agree."""
    flat = img.reshape(-1)
    words = flat[: 24 * (flat.size // 24)].view(np.uint64)
    a, b = np.empty(flat.size // 3, np.uint8), np.empty(flat.size // 3, np.uint8)
    ka, na = images._first_seen_index(flat, words, a)
    kb, nb = images._first_seen_index(flat, words[:0], b)
    assert na == nb
    if na >= 0:
        assert np.array_equal(ka[:na], kb[:nb]) and np.array_equal(a, b)


@given(run_images())
def test_encodings_decode_to_the_input_and_repeat_bytes(img):
    for enc in (encode_render_png, lambda a: encode_png(a, exact_index=True)):
        png = enc(img)
        assert np.array_equal(_decode(png), img)
        assert enc(img.copy()) == png
        mode = _chunks(png)[0][1][9]  # IHDR colour type: 3 indexed, 2 truecolour
        assert mode == (3 if len(np.unique(img.reshape(-1, 3), axis=0)) <= 256 else 2)


def test_hand_worked_one_row_png():
    """White, black, white: palette sorted [black, white], 1 bit per pixel, row = filter 0 then 0b101 padded
    to 0b10100000."""
    img = np.array([[[255, 255, 255], [0, 0, 0], [255, 255, 255]]], dtype=np.uint8)
    chunks = _chunks(encode_render_png(img))
    assert [k for k, _ in chunks] == [b"IHDR", b"PLTE", b"IDAT", b"IEND"]
    assert chunks[0][1] == struct.pack(">IIBBBBB", 3, 1, 1, 3, 0, 0, 0)
    assert chunks[1][1] == bytes([0, 0, 0, 255, 255, 255])
    assert zlib.decompress(chunks[2][1]) == b"\x00\xa0"
    assert chunks[2][1][:2] == b"\x78\x01"  # zlib header: 32 KiB window, FLEVEL 0 (level 1), FCHECK


def test_near_colours_stay_distinct():
    """Two colours 2–4 units apart among 20 others: both in the palette, every pixel decodes exactly
    (Pillow's ``quantize(palette=…)``, the former path, maps such a pair to one entry)."""
    rng = np.random.default_rng(7)
    colours = np.concatenate([[[197, 151, 30], [195, 147, 30]], rng.integers(0, 256, size=(20, 3))]).astype(np.uint8)
    img = colours[np.arange(32 * 32).reshape(32, 32) % len(colours)]
    pal, raw, bits = exact_palette_scanlines(img)
    assert bits == 8 and len(pal) == len(np.unique(colours, axis=0))
    assert {(197, 151, 30), (195, 147, 30)} <= {tuple(c) for c in pal.tolist()}
    for png in (encode_render_png(img), encode_png(img, exact_index=True)):
        assert np.array_equal(_decode(png), img)


def test_pillow_settings_reproduce_pillow_bytes():
    """> 16 well-separated colours (Pillow maps them exactly): ``encode_png(exact_index=True)`` writes the
    bytes Pillow writes for the same sorted palette (its zlib settings, filter 0 on palette rows)."""
    levels = [0, 85, 170, 255]
    colours = np.array([(r, g, b) for r in levels for g in levels for b in levels][:40], dtype=np.uint8)
    img = colours[(np.arange(48)[:, None] // 3 + np.arange(70)[None, :] // 5) % 40]
    im = Image.fromarray(img)
    pal = Image.new("P", (1, 1))
    pal.putpalette([v for c in sorted(c for _, c in im.getcolors(maxcolors=256)) for v in c])
    buf = io.BytesIO()
    im.quantize(palette=pal, dither=Image.Dither.NONE).save(buf, format="PNG", optimize=False, compress_level=1)
    assert encode_png(img, exact_index=True, compress_level=1) == buf.getvalue()


# ----------------------------------------------------------------------------- render: flat orthographic shading
@st.composite
def flat_shading_cases(draw):
    """A random primitive table (spheres, cylinders, lines), colours on and off byte boundaries, and a
    primitive index per pixel (−1 background)."""
    h, w, n = draw(st.integers(1, 9)), draw(st.integers(1, 9)), draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    prim = np.zeros((n, 12))
    prim[:, 0] = rng.integers(0, 3, size=n)
    prim[:, 5:7] = rng.uniform(-3, 3, size=(n, 2))
    prim[:, 9] = rng.uniform(0, 4, size=n)
    edges = np.array([0.0, 1.0, 0.5 / 255, 127.5 / 255, -0.1, 1.2])
    col = np.where(rng.random((n, 3)) < 0.3, rng.choice(edges, size=(n, 3)), rng.random((n, 3)))
    params = np.zeros(13)
    params[0] = 1.0
    params[1:4] = rng.choice(edges, size=3)
    params[7:10] = rng.random(3)
    cam = np.array([0.0, w, h, float(rng.uniform(0.5, 4.0)), 1.0, 0.0, 0.0])
    pidx = rng.integers(-1, n, size=(h, w)).astype(np.int32)
    return prim, np.arange(n, dtype=np.int64) * 7 - 3, col, cam, params, pidx


@given(flat_shading_cases())
def test_flat_ortho_shading_equals_its_twin_and_the_general_path(case):
    prim, code, col, cam, params, pidx = case
    h, w = pidx.shape
    ids, cls, rgb = np.empty((h, w), np.int32), np.empty((h, w), np.int32), np.empty((h, w, 3), np.uint8)
    _kernels_pass1._shade_rows(0, h, prim, code, col, cam, params, True, pidx, np.zeros((h, w)), ids, rgb, cls)
    t_ids, t_cls, t_rgb = flat_ortho_shade_loop(pidx.tolist(), prim.tolist(), code.tolist(), col.tolist(),
                                                cam.tolist(), params.tolist())
    assert np.array_equal(ids, t_ids) and np.array_equal(cls, t_cls) and np.array_equal(rgb, t_rgb)
    hit = np.argwhere(pidx >= 0)  # the general per-sample shader (_shade_batch + _outline_flag) agrees
    m = len(hit)
    us, vs = hit[:, 1] + 0.5, hit[:, 0] + 0.5
    out, kc = np.empty((m, 3)), np.empty(m, np.int64)
    _kernels_trace._shade_batch(us, vs, pidx[hit[:, 0], hit[:, 1]].astype(np.int64), np.zeros(m), m, prim, col,
                                params, cam, out, kc)
    assert np.array_equal(kc, cls[hit[:, 0], hit[:, 1]])
    assert all(rgb[i, j, c] == _kernels_trace._to_byte(out[k, c]) for k, (i, j) in enumerate(hit) for c in range(3))
