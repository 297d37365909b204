"""The images a pixel reader sees: every view of a protocol, rendered by viewcert's renderer as a benchmark
export draws them (the conventional standard cell, spglib at symprec 0.01 Å / 5°, pymatgen orientation;
``study`` style: flat Jmol-coloured discs, so the images carry element colours, as the study's do; the
supercell tiling; letterbox framing of the drawn atoms and box, the export's 16 px margin at 768 px scaled to the size), at a
small square size."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from viewcert.cameras.policy import frame
from viewcert.certify import conventional_cell
from viewcert.errors import InputError
from viewcert.io.confine import inner_folder, read_inside, write_inside
from viewcert.render.image import ImageSettings
from viewcert.render.raster import build_scene, drawn_policy, render


def _default_image() -> ImageSettings:
    return ImageSettings.from_options("render-ceiling-5", width=64, height=64)


@dataclass(frozen=True)
class ViewSettings:
    """The pixel reader's images: ``image`` (the protocol, style, size px, supersample; square, orthographic),
    the supercell tiling and the standardisation (symprec Å, angle tolerance °). ``from_options`` builds it from
    the flat options."""

    image: ImageSettings = field(default_factory=_default_image)
    tiling: tuple[int, int, int] = (2, 2, 2)
    symprec: float = 0.01
    angle_tolerance: float = 5.0

    def __post_init__(self) -> None:
        if self.image.width != self.image.height:
            raise InputError(f"the pixel reader's images are square, got {self.image.width}x{self.image.height}",
                             field="size")

    @classmethod
    def from_options(cls, *, protocol="render-ceiling-5", size: int = 64, style: str = "study", supersample: int = 3,
                     **settings) -> ViewSettings:
        """The settings from the flat options: the protocol in any form the resolver accepts (resolved once,
        ``ImageSettings.from_options``), ``size`` px (width = height); ``settings``: the other fields."""
        image = ImageSettings.from_options(protocol, style=style, width=size, height=size, supersample=supersample)
        return cls(image=image, **settings)

    @property
    def margin_px(self) -> float:
        """The export's 16 px margin at 768 px, scaled to this size (px)."""
        return 16.0 * self.image.size / 768.0

    def to_dict(self) -> dict:
        im = self.image
        return {"protocol": im.protocol.label, "size": im.size, "style": im.style, "tiling": list(self.tiling),
                "supersample": im.supersample, "symprec": self.symprec, "angle_tolerance": self.angle_tolerance,
                "cell": "conventional standard cell (as a viewcert export renders it)", "margin_px": self.margin_px,
                "element_colours": im.style == "study" or im.style not in ("mono",)}


def n_views(settings: ViewSettings) -> int:
    return len(settings.image.protocol.view_names)


def render_views(structure, settings: ViewSettings) -> np.ndarray:
    """(V, 3, size, size) uint8: every view of the protocol."""
    im = settings.image
    s = conventional_cell(structure, symprec=settings.symprec, angle_tolerance=settings.angle_tolerance,
                          orientation="pymatgen")
    policy = replace(drawn_policy(im.style, tiling=settings.tiling, width=im.width, height=im.height),
                     margin_px=settings.margin_px)
    cams = frame(im.protocol, s, policy)
    scene = build_scene(s, im.style, tiling=settings.tiling)
    return np.stack([render(scene, c, supersample=im.supersample).rgb.transpose(2, 0, 1) for c in cams])


def render_split(items, settings: ViewSettings, *, cache: Path | None = None, progress=None) -> np.ndarray:
    """(N, V, 3, size, size) uint8 of ``items`` (``certify.inputs.Item``), cached in ``cache`` (an .npy named
    by a digest of the settings and the items' input digests) when given."""
    key = hashlib.sha256(json.dumps([settings.to_dict(), [it.sha256 for it in items]]).encode()).hexdigest()[:16]
    path = None if cache is None else Path(cache) / f"views-{key}.npy"
    if path is not None:
        inner_folder(path.parent)  # inside the output folder: no symlink on the way (refused, never followed)
        try:  # O_NOFOLLOW through real folders, bounded by the size these items' views take
            raw = read_inside(path, what="views cache", limit=len(items) * _view_bytes(settings) + (1 << 16))
            return np.load(io.BytesIO(raw), allow_pickle=False)
        except (FileNotFoundError, InputError, ValueError, OSError):
            pass  # absent, a link or damaged: rendered again and rewritten
    out = []
    for it in items:
        out.append(render_views(it.read(), settings))
        if progress is not None:
            progress(1)
    arr = np.stack(out)
    if path is not None:
        write_inside(path, lambda fh: np.save(fh, arr, allow_pickle=False))
    return arr


def _view_bytes(settings: ViewSettings) -> int:
    """Bytes of one item's views as rendered (V views × 3 × size × size uint8)."""
    im = settings.image
    return len(im.protocol.view_names) * 3 * int(im.width) * int(im.height)
