"""Images of drawn atoms painted here, from the definition, as the truth of the detector's tests: discs (flat or
shaded spheres) of given centres, radii and colours painted farthest first on a background, each pixel the mean of
``ss × ss`` sub-pixel samples (antialiasing; ``ss = 1``: none), optional black outlines and lines drawn over, and
each disc's visible pixel count (its pixels in an unantialiased ID paint). Pixel frame: u right, v down, pixel
(i, j) centred at (j + ½, i + ½). Nothing here calls viewcert's detector."""

from __future__ import annotations

import io

import numpy as np


def paint(size, centres, radii, colours, *, depth=None, background=(255, 255, 255), outline=0.0, ss=4,
          shaded=False, light=(-0.4, 0.5, 0.77), ambient=0.3, lines=(), line_width=1.5, line_colour=(0, 0, 0)):
    """(image (H, W, 3) uint8, visible (n,) int): the discs painted farthest first (``depth``: larger = farther;
    default: later discs nearer). ``outline``: a black ring of that width (px) inside each disc's rim; ``shaded``:
    spheres lit by ``ambient + (1 - ambient)·max(0, n·light)``; ``lines``: segments ((u0, v0), (u1, v1)) drawn
    over everything."""
    w, h = size
    centres = np.asarray(centres, dtype=np.float64).reshape(-1, 2)
    radii = np.broadcast_to(np.asarray(radii, dtype=np.float64), (len(centres),))
    colours = np.asarray(colours, dtype=np.float64).reshape(-1, 3)
    order = np.argsort(-np.asarray(depth, dtype=np.float64)) if depth is not None else np.arange(len(centres))
    ys, xs = np.mgrid[0:h * ss, 0:w * ss]
    u = (xs + 0.5) / ss
    v = (ys + 0.5) / ss
    img = np.empty((h * ss, w * ss, 3))
    img[:] = background
    owner = np.full((h, w), -1)
    uu, vv = np.meshgrid(np.arange(w) + 0.5, np.arange(h) + 0.5)
    lit = np.asarray(light, dtype=np.float64) / np.linalg.norm(light)
    for k in order:
        (cu, cv), r, col = centres[k], radii[k], colours[k]
        d2 = (u - cu) ** 2 + (v - cv) ** 2
        inside = d2 <= r * r
        if shaded:
            nx, ny = (u - cu) / r, -(v - cv) / r
            nz = np.sqrt(np.clip(1 - nx * nx - ny * ny, 0, 1))
            k_light = ambient + (1 - ambient) * np.clip(nx * lit[0] + ny * lit[1] + nz * lit[2], 0, None)
            img[inside] = (k_light[..., None] * col)[inside]
        else:
            img[inside] = col
        if outline > 0:
            img[inside & (d2 >= (r - outline) ** 2)] = 0.0
        owner[(uu - cu) ** 2 + (vv - cv) ** 2 <= r * r] = k
    for (u0, v0), (u1, v1) in lines:
        d = np.array([u1 - u0, v1 - v0], dtype=np.float64)
        t = np.clip(((u - u0) * d[0] + (v - v0) * d[1]) / (d @ d), 0, 1)
        near = np.hypot(u - (u0 + t * d[0]), v - (v0 + t * d[1])) <= line_width / 2
        img[near] = line_colour
        near_px = np.hypot(uu - (u0 + np.clip(((uu - u0) * d[0] + (vv - v0) * d[1]) / (d @ d), 0, 1) * d[0]),
                           vv - (v0 + np.clip(((uu - u0) * d[0] + (vv - v0) * d[1]) / (d @ d), 0, 1) * d[1]))
        owner[near_px <= line_width / 2] = -1
    img = img.reshape(h, ss, w, ss, 3).mean(axis=(1, 3))
    visible = np.bincount(owner[owner >= 0].ravel(), minlength=len(centres))
    return np.clip(np.rint(img), 0, 255).astype(np.uint8), visible


def jpeg(img: np.ndarray, quality: int = 75) -> np.ndarray:
    """``img`` through a JPEG round trip (Pillow, 4:2:0 chroma subsampling: what a saved matplotlib JPEG is)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=quality)
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"))
