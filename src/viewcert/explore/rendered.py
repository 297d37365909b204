"""The views a model sees, for a certify output (no images in the folder): each item's rendered cell drawn by
viewcert's renderer (``viewcert.render``) at the certificate's settings, in memory, as an export of those
settings ships them.

Settings read from the certificate's configuration (``certify.config.CertifyConfig``): the protocol (its views'
rotations), the drawing ``style``, the ``tiling`` and the image size (``image_size`` px, a perspective protocol
keeps its own). Framing: the drawn spheres of that style (``render.frame_cameras``: ``frame_on = "drawn"``, the
rule of an export's images). A certificate written with ``frame_on = "drawn"`` framed its own cameras by that
same rule, so its images are drawn through exactly the certificate's cameras (``items[].cameras_sha256``); one
framed on the atom centres gets cameras of the same views, scale and centre refitted to the drawn spheres (so
no atom is cut at the frame's edge), and the page says so. The overlays are projected through the camera each
image was drawn through (recorded on the page, ``data-camera``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewcert.io.images import encode_render_png
from viewcert.render import build_scene, frame_cameras, render

#: what an item page says of a certificate whose cameras frame the atom centres
CENTRES_NOTE = ("Rendered as an export of this certificate's settings ships its images: framed on the drawn "
                "spheres. The certificate's own cameras frame the atom centres (the same view directions, scale "
                "and centre fitted to the centres); every mark is projected through the camera of its image.")


@dataclass(frozen=True, eq=False)
class RenderedView:
    """One view drawn in memory: its camera, the PNG bytes, the projections (u, v px) of the drawn atoms, their
    cell indices, atomic numbers and whether any pixel of the ID buffer shows each."""

    camera: object
    png: bytes
    atom_uv: np.ndarray
    atom_cell: np.ndarray
    atom_numbers: np.ndarray
    seen: np.ndarray


def render_cameras(cell, cfg) -> tuple:
    """The cameras the item's images are drawn through (module docstring): ``render.frame_cameras`` of the
    certificate's protocol, style, tiling, image size and molecule scale (``cfg``: its ``CertifyConfig``)."""
    obs = cfg.observation
    return frame_cameras(cell, cfg.protocol, style=obs.style, tiling=obs.tiling if cell.is_periodic else (1, 1, 1),
                         width=obs.image_size, height=obs.image_size, molecule_scale=cfg.molecules.molecule_scale)


def rendered_views(cell, cfg) -> tuple[RenderedView, ...]:
    """Every view of one item's rendered cell (``cell``) drawn in the certificate's style with its cell box
    (crystals), encoded as the exporters encode images (``io.images.encode_render_png``)."""
    obs = cfg.observation
    scene = build_scene(cell, obs.style, tiling=obs.tiling if cell.is_periodic else (1, 1, 1))
    out = []
    for cam in render_cameras(cell, cfg):
        res = render(scene, cam)
        uv, _ = cam.project(scene.sphere_centres)
        seen = res.pixel_counts() > 0
        out.append(RenderedView(cam, encode_render_png(res.rgb), np.asarray(uv, dtype=np.float64),
                                np.asarray(scene.atom_index), np.asarray(scene.numbers), seen))
    return tuple(out)


def frames_on_centres(cfg) -> bool:
    """Whether the certificate's own cameras frame the atom centres (then the images' cameras are refitted)."""
    return cfg.observation.frame_on != "drawn" and cfg.protocol.spec.kind != "perspective"


def _pane(atoms: list, edges: list, record, drawn_cell: list[int], centres: np.ndarray) -> dict:
    """The 3D pane's JSON (``pane_data``) from its drawn atoms [element, x, y, z] and edges, with the record's
    phantoms and the drawn copies (cell indices ``drawn_cell`` at ``centres``) of its near-miss tuple's atoms."""
    def r(p) -> list[float]:
        return [round(float(x) + 0.0, 3) for x in p]

    phantoms = [r(row[1:4]) for row in (record.phantoms or []) if isinstance(row, list) and len(row) == 4]
    um = record.uniqueness_margin
    listed = um.near_miss if um and isinstance(um.near_miss, list) else []
    tuple_atoms = {a for a in listed if isinstance(a, int)}
    near = [r(p) for p, a in zip(centres, drawn_cell, strict=True) if a in tuple_atoms]
    return {"atoms": atoms, "edges": edges, "phantoms": phantoms, "near": near}


def sidecar_pane(sidecar: dict, record) -> tuple[dict, dict[int, int]] | None:
    """The 3D pane of an export's item from one view's sidecar (``benchmark.export.view_sidecar``): each drawn atom
    placed back in 3D from its projection and depth through the sidecar's camera (``Camera.ray``; the sidecar's
    uv and depth at 10⁻⁶, positions then rounded to 0.001 Å), in drawn-id order, with the cell box of the
    sidecar's lattice and tiling and the record's phantoms and near-miss atoms (``pane_data``'s); and {drawn id:
    its atom's place in the pane} (the 2D rings' ``drawn k`` groups). None when the sidecar does not hold them."""
    from viewcert.cameras import camera_from_dict  # lazy: start-up
    from viewcert.render.scene import box_edges  # lazy: start-up

    try:
        cam = camera_from_dict(sidecar["camera"])
        rows = sorted(sidecar["atoms"], key=lambda a: int(a["id"]))
        ids = [int(a["id"]) for a in rows]
        uv = np.array([[float(a["uv"][0]), float(a["uv"][1])] for a in rows], dtype=np.float64).reshape(-1, 2)
        depth = np.array([float(a["depth"]) for a in rows], dtype=np.float64)
        elements = [str(a["element"]) for a in rows]
        drawn_cell = [int(a["cell_index"]) for a in rows]
        structure = sidecar.get("structure") or {}
        lattice, tiling = structure.get("lattice"), structure.get("tiling")
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return None
    if not rows:
        return None
    origins, dirs = cam.ray(uv)
    along = -(dirs @ np.asarray(cam.rotation)[2])  # depth gained per unit along each ray (1 for orthographic)
    centres = origins + (depth / along)[:, None] * dirs
    atoms = [[e, *(round(float(x) + 0.0, 3) for x in p)] for e, p in zip(elements, centres, strict=True)]
    edges = []
    if lattice is not None and tiling is not None:
        try:
            starts, ends, _ = box_edges(np.asarray(lattice, dtype=np.float64), tuple(int(t) for t in tiling))
            edges = [[round(float(x) + 0.0, 3) for x in (*a, *b)] for a, b in zip(starts, ends, strict=True)]
        except (TypeError, ValueError):
            edges = []
    return _pane(atoms, edges, record, drawn_cell, centres), {i: k for k, i in enumerate(ids)}


def pane_data(cell, cfg, record) -> dict:
    """What the 3D pane draws (``assets/3Dmol-min.js``, vendored): the drawn atoms of the item's rendered cell
    (its tiling) as [element, x, y, z], the cell box's 12 edges, the certificate's listed phantoms and the drawn
    copies of the near-miss tuple's atoms, positions in Å rounded to 0.001 Å."""
    from viewcert.elements import symbols  # lazy: start-up
    from viewcert.render.scene import box_edges  # lazy: start-up

    obs = cfg.observation
    scene = build_scene(cell, obs.style, tiling=obs.tiling if cell.is_periodic else (1, 1, 1))

    def r(p) -> list[float]:
        return [round(float(x) + 0.0, 3) for x in p]

    atoms = [[e, *r(p)] for e, p in zip(symbols(scene.numbers), scene.sphere_centres, strict=True)]
    edges = []
    if cell.is_periodic:
        starts, ends, _ = box_edges(cell.lattice, obs.tiling)
        edges = [r(a) + r(b) for a, b in zip(starts, ends, strict=True)]
    return _pane(atoms, edges, record, scene.atom_index.tolist(), np.asarray(scene.sphere_centres))
