"""The images a pixel reader sees: every view of a protocol, rendered by viewcert's renderer as a benchmark
export draws them (the conventional standard cell, spglib at symprec 0.01 Å / 5°, pymatgen orientation;
``study`` style: flat Jmol-coloured discs, so the images carry element colours, as the study's do; the
supercell tiling; letterbox framing of the drawn atoms and box, the export's 16 px margin at 768 px scaled to the size), at a
small square size."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from viewcert.cameras.policy import frame
from viewcert.cameras.resolve import resolve
from viewcert.certify import conventional_cell
from viewcert.render.raster import build_scene, drawn_policy, render


@dataclass(frozen=True)
class ViewSettings:
    protocol: str = "render-ceiling-5"
    size: int = 64  # px, width = height
    style: str = "study"
    tiling: tuple[int, int, int] = (2, 2, 2)
    supersample: int = 3
    symprec: float = 0.01
    angle_tolerance: float = 5.0

    @property
    def margin_px(self) -> float:
        """The export's 16 px margin at 768 px, scaled to this size (px)."""
        return 16.0 * self.size / 768.0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["tiling"] = list(self.tiling)
        d["cell"] = "conventional standard cell (as a viewcert export renders it)"
        d["margin_px"] = self.margin_px
        d["element_colours"] = self.style == "study" or self.style not in ("mono",)
        return d


def n_views(settings: ViewSettings) -> int:
    return len(resolve(settings.protocol).protocol.views)


def render_views(structure, settings: ViewSettings, resolved=None) -> np.ndarray:
    """(V, 3, size, size) uint8: every view of the protocol."""
    rp = resolved or resolve(settings.protocol)
    s = conventional_cell(structure, symprec=settings.symprec, angle_tolerance=settings.angle_tolerance,
                          orientation="pymatgen")
    policy = replace(drawn_policy(settings.style, tiling=settings.tiling, width=settings.size, height=settings.size),
                     margin_px=settings.margin_px)
    cams = frame(rp, s, policy)
    scene = build_scene(s, settings.style, tiling=settings.tiling)
    return np.stack([render(scene, c, supersample=settings.supersample).rgb.transpose(2, 0, 1) for c in cams])


def render_split(items, settings: ViewSettings, *, cache: Path | None = None, progress=None) -> np.ndarray:
    """(N, V, 3, size, size) uint8 of ``items`` (``certify.inputs.Item``), cached in ``cache`` (an .npy named
    by a digest of the settings and the items' input digests) when given."""
    key = hashlib.sha256(json.dumps([settings.to_dict(), [it.sha256 for it in items]]).encode()).hexdigest()[:16]
    path = None if cache is None else Path(cache) / f"views-{key}.npy"
    if path is not None and path.is_file():
        return np.load(path)
    rp = resolve(settings.protocol)
    out = []
    for it in items:
        out.append(render_views(it.read(), settings, rp))
        if progress is not None:
            progress(1)
    arr = np.stack(out)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, arr)
        tmp.replace(path)
    return arr
