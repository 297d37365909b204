"""Contact sheet: a few built-in crystals and molecules, one row each, in every view of a protocol.

Crystals are drawn as their conventional cell tiled ``tiling`` with the supercell box; molecules as they
are. Each row has its own style (default: rock salt in the study's look, the others ball-and-stick, one
space-filling). Row labels (identifier, formula, style) and column labels (view names) use Pillow's
built-in bitmap font, so the sheet is deterministic (same inputs → same bytes); it is written as a
256-colour PNG to stay small.
"""

from __future__ import annotations

import numpy as np

from viewcert.cameras.resolve import resolve
from viewcert.certify import conventional_cell
from viewcert.io.builtin import builtin
from viewcert.io.images import write_png
from viewcert.render.raster import build_scene, frame_cameras, render
from viewcert.structures import Structure

DEFAULT_ROWS = (
    ("aflow:AB_cF8_225_a_b", "study"),
    ("aflow:A_hP4_194_bc", "ball-and-stick"),
    ("aflow:A2B_tP6_136_f_a", "ball-and-stick"),
    ("aflow:AB_mC8_15_c_e", "spacefill"),
    ("ccd:IBP", "ball-and-stick"),
    ("ccd:ATP", "ball-and-stick"),
)


def rendered_cell(s: Structure) -> Structure:
    """What the gallery and ``viewcert render`` draw: a crystal's conventional standard cell (pymatgen
    orientation, 0.01 Å, 5°), a molecule as it is."""
    if not s.is_periodic:
        return s
    return conventional_cell(s, symprec=0.01, angle_tolerance=5.0, orientation="pymatgen")


def default_rows() -> list[tuple[Structure, str]]:
    """The gallery's built-in crystals (conventional cells) and molecules with their styles."""
    return [(rendered_cell(builtin(f"builtin:{name}")[0]), style) for name, style in DEFAULT_ROWS]


def contact_sheet(
    rows: list[tuple[Structure, str]] | None = None,
    *,
    protocol: str = "render-ceiling-5",
    tiling=(2, 2, 2),
    tile_px: int = 170,
    label_px: int = 14,
    molecule_scale: str = "common",
) -> np.ndarray:
    """The sheet as a uint8 RGB array: one row per (structure, style), one column per view, labels on the
    top and left. Molecules at ``molecule_scale`` ("common": one Å-per-pixel scale across views; "per-view").

    Parameters
    ----------
    rows : list of (Structure, str), optional
        (structure, style) per row; default: the built-in crystals and molecules.
    protocol : str
        A protocol name or file: one column per view.
    tiling : tuple of int
        Cell repetitions drawn along a, b, c (crystals).
    tile_px : int
        Side of a tile (px).
    label_px : int
        Label font size (px).
    molecule_scale : str
        ``"common"`` or ``"per-view"``.

    Returns
    -------
    numpy.ndarray
        (height, width, 3) uint8 RGB, pixel rows top to bottom.
    """
    from PIL import Image, ImageDraw, ImageFont


    rows = default_rows() if rows is None else list(rows)
    rp = resolve(protocol)  # resolved once for every row
    proto = rp.protocol
    nv = len(proto.views)
    left = 8 * 18
    width = left + nv * tile_px
    height = label_px + len(rows) * tile_px
    sheet = Image.new("RGB", (width, height), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    for c, view in enumerate(proto.views):
        draw.text((left + c * tile_px + 4, 1), view.name, fill=(0, 0, 0), font=font)
    for r, (s, style) in enumerate(rows):
        t = tuple(tiling) if s.is_periodic else (1, 1, 1)
        cams = frame_cameras(s, rp, style=style, tiling=t, width=tile_px, height=tile_px,
                             molecule_scale=molecule_scale)
        scene = build_scene(s, style, tiling=t)
        y = label_px + r * tile_px
        for c, cam in enumerate(cams):
            sheet.paste(Image.fromarray(render(scene, cam).rgb), (left + c * tile_px, y))
        name = s.identifier.split(":")[-1] if s.identifier else f"structure {r}"
        draw.text((4, y + tile_px // 2 - 19), name[:22], fill=(0, 0, 0), font=font)
        draw.text((4, y + tile_px // 2 - 5), s.formula[:22], fill=(90, 90, 90), font=font)
        draw.text((4, y + tile_px // 2 + 9), style, fill=(90, 90, 90), font=font)
    return np.asarray(sheet, dtype=np.uint8)


def write_gallery(path, **kw) -> str:
    """Render ``contact_sheet(**kw)`` and write it as PNG (deterministic); returns the path.

    Parameters
    ----------
    path : str or Path
        PNG path written.
    **kw
        ``contact_sheet`` arguments.

    Returns
    -------
    str
        The path written.
    """
    return str(write_png(path, contact_sheet(**kw), palette=True))
