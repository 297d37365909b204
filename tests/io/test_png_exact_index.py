"""io.images.encode_png(exact_index=True): lossless indexed PNG when the image has ≤ 256 colours."""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from viewcert.io.images import encode_png


def _decode(b: bytes) -> tuple[str, np.ndarray]:
    im = Image.open(io.BytesIO(b))
    return im.mode, np.asarray(im.convert("RGB"))


def test_few_colours_become_an_exact_indexed_png():
    rng = np.random.default_rng(1)
    colours = rng.integers(0, 256, size=(40, 3), dtype=np.uint8)
    img = colours[rng.integers(0, 40, size=(64, 96))]
    b = encode_png(img, exact_index=True)
    mode, back = _decode(b)
    assert mode == "P" and np.array_equal(back, img)
    assert b == encode_png(img.copy(), exact_index=True)  # same pixels, same bytes


def test_more_than_256_colours_fall_back_to_rgb_unchanged():
    img = np.arange(64 * 64 * 3, dtype=np.uint32).reshape(64, 64, 3).astype(np.uint8)
    img[..., 2] = np.arange(64 * 64).reshape(64, 64) // 16  # 4,096 distinct colours
    b = encode_png(img, exact_index=True)
    mode, back = _decode(b)
    assert mode == "RGB" and np.array_equal(back, img) and b == encode_png(img)
