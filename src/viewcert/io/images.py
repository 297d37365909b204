"""Rendered images and their sidecars on disk: PNG via Pillow with fixed parameters, JSON with sorted keys,
ID/depth buffers as ``.npy``. Same arrays → same bytes: no timestamps, no text chunks, no ``pHYs``; files
are written atomically through :mod:`viewcert.io.atomic`.

Exact indexed PNG (``encode_png(exact_index=True)``, ``encode_render_png``): an RGB image with at most 256
distinct colours is written with colour type 3, palette = exactly its colours sorted by (R, G, B), bit depth
1/2/4/8 for ≤ 2/4/16/256 colours (as Pillow chooses), filter type 0 on every row. The palette and the
scanlines come from two numba kernels (``_first_seen_index``: colours in first-seen order through a small
open-addressing hash, 8 pixels at a time when they repeat the last uniform group; ``_scanlines``: sorted
ranks, bit packing, filter bytes) and the PNG chunks are written here. ``encode_png`` deflates with zlib at
Pillow's settings (``ZLIB_PILLOW``: for > 16 colours the bytes equal Pillow's own indexed PNG of the same
palette, tested; Pillow filters rows of bit depth < 8, we do not). ``encode_render_png`` deflates with
zlib's run-length strategy at level 1 (``ZLIB_RENDER``): ≈ 2.3–2.9 ms for a 768² study-style render (46
colours; palette and scanlines ≈ 0.8 ms, deflate ≈ 1.5 ms) against 5.5 ms for Pillow's quantise + zlib 1,
at 29–40 kB against 36–47 kB (docs/speed.md, "Renderer"). A hand-written fixed-Huffman run-length deflate
was measured 0.7 ms faster but 60 % larger and is not used: compression is not the product. Exact where
Pillow's ``quantize(palette=…)`` (the former path) merged colours a few units apart.
"""

from __future__ import annotations

import base64
import io
import os
import stat
import struct
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from viewcert.errors import InputError
from viewcert.io.atomic import json_dumps, write_bytes_atomic, write_text_atomic
from viewcert.limits import active_limits

PNG_COMPRESS_LEVEL = 6
#: zlib level of rendered images on disk (``write_png``): the fastest lossless setting measured on a 768²
#: render (docs/speed.md, "Renderer")
RENDER_COMPRESS_LEVEL = 1
#: (strategy, memory level) of Pillow's PNG encoder: with these the indexed PNG bytes equal Pillow's
ZLIB_PILLOW = (zlib.Z_DEFAULT_STRATEGY, 9)
#: (strategy, memory level) of rendered images: run-length matches only (zlib's Z_RLE), the fastest zlib
#: setting measured on 768² renders, 25-40 % smaller than Pillow's level-1 default (docs/speed.md, "Renderer")
ZLIB_RENDER = (zlib.Z_RLE, 7)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_HASH_SIZE = 1024  # open-addressing table for ≤ 257 colours (load ≤ 1/4)


@njit(cache=True, nogil=True)
def _colour_slot(key, table, slot_rank, keys, n):
    """(provisional index of colour ``key``, new colour count) — inserting it when new; count −1 when it
    would be the 257th colour. ``key`` = R·65536 + G·256 + B."""
    s = ((key * 2654435761) >> 22) & (_HASH_SIZE - 1)
    while True:
        t = table[s]
        if t == key:
            return slot_rank[s], n
        if t == -1:
            if n == 256:
                return 0, -1
            table[s] = key
            slot_rank[s] = n
            keys[n] = key
            return n, n + 1
        s = (s + 1) & (_HASH_SIZE - 1)


@njit(cache=True, nogil=True)
def _first_seen_index(flat, words, idx):
    """Colour index of every pixel of a C-ordered RGB byte stream ``flat`` (3 bytes per pixel), in order of
    first appearance: fills ``idx`` (one uint8 per pixel) and returns (keys (256,) int64, n colours) with
    ``keys[:n]`` the colours (R·65536 + G·256 + B); n = −1 (``idx`` partly written) beyond 256 colours.
    ``words`` is the first 24·g bytes of ``flat`` viewed as uint64 (g groups of 8 pixels; may be empty): a
    group whose three words equal those of the last uniform group gets that group's index without reading
    its pixels."""
    table = np.full(_HASH_SIZE, -1, np.int64)
    slot_rank = np.zeros(_HASH_SIZE, np.int64)
    keys = np.zeros(256, np.int64)
    n = 0
    last = np.int64(-1)
    li = 0
    u_rank = -1
    u_key = np.int64(-1)
    u0 = u1 = u2 = np.uint64(0)
    ng = words.size // 3
    for g in range(ng):
        q = 3 * g
        if u_rank >= 0 and words[q] == u0 and words[q + 1] == u1 and words[q + 2] == u2:
            for b in range(8):
                idx[8 * g + b] = u_rank
            li, last = u_rank, u_key
            continue
        uniform = True
        for b in range(8):
            o = 24 * g + 3 * b
            k = (np.int64(flat[o]) << 16) | (np.int64(flat[o + 1]) << 8) | np.int64(flat[o + 2])
            if b > 0 and k != last:
                uniform = False
            if k != last:
                last = k
                li, n = _colour_slot(k, table, slot_rank, keys, n)
                if n < 0:
                    return keys, -1
            idx[8 * g + b] = li
        if uniform:
            u_rank, u_key, u0, u1, u2 = li, last, words[q], words[q + 1], words[q + 2]
    for p in range(8 * ng, idx.size):
        o = 3 * p
        k = (np.int64(flat[o]) << 16) | (np.int64(flat[o + 1]) << 8) | np.int64(flat[o + 2])
        if k != last:
            last = k
            li, n = _colour_slot(k, table, slot_rank, keys, n)
            if n < 0:
                return keys, -1
        idx[p] = li
    return keys, n


@njit(cache=True, nogil=True)
def _scanlines(idx, rank, h, w, bits):
    """PNG scanlines (h, 1 + ⌈w·bits/8⌉) uint8 of an index image: filter byte 0, then ``rank[idx]`` packed
    at ``bits`` per pixel, leftmost pixel in the high-order bits, rows padded with zero bits."""
    per = 8 // bits
    raw = np.zeros((h, 1 + (w * bits + 7) // 8), np.uint8)
    for i in range(h):
        row = idx[i * w:(i + 1) * w]
        if bits == 8:
            for j in range(w):
                raw[i, 1 + j] = rank[row[j]]
        else:
            for j in range(w):
                raw[i, 1 + j // per] |= np.uint8(rank[row[j]] << (8 - bits * (1 + j % per)))
    return raw


def exact_palette_scanlines(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(palette (n, 3) uint8 sorted by (R, G, B), scanlines (H, 1 + row bytes) uint8, bit depth) of a
    C-contiguous uint8 (H, W, 3) image with n ≤ 256 colours; None beyond 256 colours."""
    h, w = rgb.shape[:2]
    flat = rgb.reshape(-1)
    words = flat[: 24 * (flat.size // 24)].view(np.uint64)
    idx = np.empty(h * w, dtype=np.uint8)
    keys, n = _first_seen_index(flat, words, idx)
    if n < 0:
        return None
    order = np.argsort(keys[:n], kind="stable")
    rank = np.zeros(256, dtype=np.uint8)
    rank[order] = np.arange(n, dtype=np.uint8)
    bits = 1 if n <= 2 else 2 if n <= 4 else 4 if n <= 16 else 8
    sorted_keys = keys[:n][order]
    palette = np.stack([sorted_keys >> 16, (sorted_keys >> 8) & 255, sorted_keys & 255], axis=1).astype(np.uint8)
    return palette, _scanlines(idx, rank, h, w, bits), bits


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def indexed_png(palette: np.ndarray, scanlines: np.ndarray, width: int, bits: int, *, level: int,
                zlib_params: tuple[int, int] | None = ZLIB_PILLOW) -> bytes:
    """PNG bytes (IHDR, PLTE, one IDAT, IEND; no other chunk) of PNG scanlines with a palette; IDAT by zlib
    at ``level`` with ``zlib_params`` = (strategy, memory level), window 2¹⁵."""
    h = scanlines.shape[0]
    z = zlib.compressobj(level, zlib.DEFLATED, 15, zlib_params[1], zlib_params[0])
    idat = z.compress(scanlines) + z.flush()
    ihdr = struct.pack(">IIBBBBB", width, h, bits, 3, 0, 0, 0)
    return (_PNG_SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"PLTE", palette.tobytes()) + _chunk(b"IDAT", idat)
            + _chunk(b"IEND", b""))


def _exact_indexed(a: np.ndarray, level: int, zlib_params: tuple[int, int]) -> bytes | None:
    """Exact indexed PNG of a uint8 RGB array, None beyond 256 colours (or an empty image)."""
    if a.ndim != 3 or a.shape[2] != 3 or a.size == 0:
        return None
    a = np.ascontiguousarray(a)
    found = exact_palette_scanlines(a)
    if found is None:
        return None
    palette, raw, bits = found
    return indexed_png(palette, raw, a.shape[1], bits, level=level, zlib_params=zlib_params)


def encode_png(rgb: np.ndarray, *, compress_level: int = PNG_COMPRESS_LEVEL, palette: bool = False,
               exact_index: bool = False) -> bytes:
    """PNG bytes of a uint8 image (H, W, 3) or (H, W): Pillow, zlib level ``compress_level``, no optimise
    pass and no metadata chunks. ``palette``: quantise to 256 colours first (median cut, no dithering;
    deterministic) for small files such as contact sheets. ``exact_index``: an RGB image with at most 256
    distinct colours is written as an indexed PNG whose palette is exactly those colours (sorted), so it
    decodes to the same pixels (module docstring; same bytes as Pillow's); more colours fall back to RGB."""
    from PIL import Image

    a = np.asarray(rgb)
    if a.dtype != np.uint8 or a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (3, 4)):
        raise InputError(f"image must be uint8 (H, W), (H, W, 3) or (H, W, 4), got {a.dtype} {a.shape}",
                         field="image")
    if exact_index and not palette:
        png = _exact_indexed(a, compress_level, ZLIB_PILLOW)
        if png is not None:
            return png
    buf = io.BytesIO()
    im = Image.fromarray(np.ascontiguousarray(a))
    if palette:
        im = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    im.save(buf, format="PNG", optimize=False, compress_level=compress_level)
    return buf.getvalue()


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(head: bytes, *, source: str) -> tuple[int, int]:
    """(width, height) a PNG declares in its IHDR chunk (``head``: its first 24 bytes or more), read without
    Pillow; InputError naming ``source`` when it is not a PNG."""
    if len(head) < 24 or head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        raise InputError("image cannot be read as a PNG (no PNG signature and IHDR header)", source=source,
                         field="image")
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def check_png_pixels(path: str | os.PathLike) -> tuple[int, int]:
    """(width, height) of the PNG at ``path`` as its header declares them (``png_size``: read from its first
    bytes, before Pillow or anything else opens it), checked against ``max_pixels`` of the limits in force:
    LimitError naming the file (Pillow's own decompression-bomb warning is never reached), or InputError when it
    is not a PNG."""
    try:  # O_NONBLOCK and fstat: a FIFO named like an image is refused, never waited on
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(f"cannot read the image: {exc.strerror or exc}", source=str(path), field="image") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError("the image is not a regular file", source=str(path), field="image")
        head = fh.read(24)
    width, height = png_size(head, source=str(path))
    active_limits().check_pixels(width, height, source=str(path))
    return width, height


def open_checked_png(path: str | os.PathLike):
    """The PNG at ``path`` opened by Pillow after ``check_png_pixels``: within ``max_pixels``, and Pillow's own
    decompression-bomb check left to ours (its warning never shown; an image above its own hard limit is an
    InputError)."""
    import warnings

    from PIL import Image  # lazy: start-up (Pillow only where a received image is read)

    check_png_pixels(path)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            return Image.open(path)
    except (OSError, ValueError, Image.DecompressionBombError):
        raise InputError("image cannot be read as a PNG", source=str(path), field="image") from None


def png_base64(data: bytes) -> str:
    """Standard base64 text of PNG bytes (what VLMEvalKit's ``image`` column holds)."""
    return base64.b64encode(data).decode("ascii")


def encode_render_png(rgb: np.ndarray) -> bytes:
    """The PNG of a rendered image as ``write_png`` writes it: exact indexed PNG (module docstring) whose
    IDAT is zlib at ``RENDER_COMPRESS_LEVEL`` with ``ZLIB_RENDER`` (run-length matches); Pillow RGB at zlib level
    ``RENDER_COMPRESS_LEVEL`` beyond 256 colours. Lossless, same pixels → same bytes."""
    a = np.asarray(rgb)
    if a.dtype == np.uint8 and a.ndim == 3 and a.shape[2] == 3:
        png = _exact_indexed(a, RENDER_COMPRESS_LEVEL, ZLIB_RENDER)
        if png is not None:
            return png
    return encode_png(a, compress_level=RENDER_COMPRESS_LEVEL)
def write_png(path: str | os.PathLike, rgb: np.ndarray, *, palette: bool = False) -> Path:
    """Write a PNG atomically; returns the path. Default: ``encode_render_png`` (lossless, fastest);
    ``palette``: ``encode_png(rgb, palette=True)`` (quantised to 256 colours, small contact sheets)."""
    return write_bytes_atomic(path, encode_png(rgb, palette=True) if palette else encode_render_png(rgb))


def write_sidecar(path: str | os.PathLike, record: dict[str, Any]) -> Path:
    """Write a JSON sidecar (one line, sorted keys, deterministic floats; ±inf/NaN refused) atomically."""
    return write_text_atomic(path, json_dumps(record, indent=None))


def encode_npy(array: np.ndarray) -> bytes:
    """``.npy`` bytes (format version 1.0 header; deterministic)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def write_buffers(stem: str | os.PathLike, atom_id: np.ndarray, depth: np.ndarray) -> tuple[Path, Path]:
    """Write ``<stem>.ids.npy`` (int32) and ``<stem>.depth.npy`` (float64 Å, +inf on background)."""
    stem = Path(stem)
    a = write_bytes_atomic(stem.with_name(stem.name + ".ids.npy"), encode_npy(np.asarray(atom_id, np.int32)))
    b = write_bytes_atomic(stem.with_name(stem.name + ".depth.npy"), encode_npy(np.asarray(depth, np.float64)))
    return a, b
