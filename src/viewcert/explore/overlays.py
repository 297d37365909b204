"""The explorer's overlays: where the certificate's points fall in each view, as marks for an SVG drawn over the
image (pixel frame of the PNG: u to the right, v down, origin at the top-left corner, px).

Points are projected with viewcert's own cameras (``cameras.camera``): an export's view by the camera its
sidecar records; a certify output's view by the item's cameras reframed from its inputs (``certify.evaluate.
item_cameras``, the certificate's recorded settings). Marks:

- ``atom``: a drawn atom seen in the view (its ID-buffer pixels, else the sidecar's visible pixel count > 0);
- ``hidden``: a drawn atom with no pixel in the view (a cause of missing atoms);
- ``phantom``: a phantom point of the certificate (``items[].phantoms``: [Z, x, y, z] Å), one per phantom;
- ``near-miss``: the least-squares point of the near-miss tuple behind δ* (``uniqueness_margin``), and
  ``near-atom``: in view k the drawn copy of the tuple's atom k nearest that point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from viewcert.cameras.camera import camera_from_dict
from viewcert.errors import InputError, ViewcertError

#: marker radii (px) of the points that are not atoms
POINT_RADIUS = 5.0


@dataclass(frozen=True)
class Mark:
    """One SVG mark: kind (module docstring), centre (u, v) px, radius px, colour (#rrggbb or ''), title."""

    kind: str
    u: float
    v: float
    r: float
    title: str
    colour: str = ""


@dataclass(frozen=True)
class ViewMarks:
    """The marks of one view over an image of ``width`` × ``height`` px (``schematic``: no image, the atoms
    drawn as discs in depth order instead)."""

    name: str
    width: int
    height: int
    marks: tuple[Mark, ...]
    schematic: bool = False


def _points(rows, what: str) -> np.ndarray:
    """(n, 3) Å of certificate rows [Z, x, y, z]; InputError naming ``what`` otherwise."""
    try:
        a = np.asarray([[float(x) for x in r[1:4]] for r in rows], dtype=np.float64).reshape(-1, 3)
    except (TypeError, ValueError, IndexError):
        raise InputError(f"{what} must be rows [Z, x, y, z]", field=what) from None
    if not np.isfinite(a).all():
        raise InputError(f"{what} has a non-finite coordinate", field=what)
    return a


def phantom_points(record: dict) -> tuple[np.ndarray, list]:
    """The listed phantoms of an item: (points (n, 3) Å, atomic numbers)."""
    rows = record.get("phantoms") or []
    if not isinstance(rows, list):
        raise InputError("phantoms must be a list", field="phantoms")
    return _points(rows, "phantoms"), [r[0] for r in rows]


def near_miss(record: dict) -> tuple[np.ndarray | None, list | None]:
    """(point (3,) Å or None, cell atom per view or None) of the item's δ* near-miss tuple."""
    um = record.get("uniqueness_margin")
    if not isinstance(um, dict) or not isinstance(um.get("near_miss_point"), list) or not um["near_miss_point"]:
        return None, None
    p = _points([[0, *um["near_miss_point"]]], "uniqueness_margin.near_miss_point")[0]
    atoms = um.get("near_miss")
    return p, (atoms if isinstance(atoms, list) else None)


def _point_marks(cam, record: dict, view_k: int, atom_uv: np.ndarray | None, atom_cell: np.ndarray | None):
    marks = []
    pts, z = phantom_points(record)
    if len(pts):
        uv, _ = cam.project(pts)
        for k, (p, (u, v)) in enumerate(zip(pts, uv, strict=True)):
            marks.append(Mark("phantom", float(u), float(v), POINT_RADIUS,
                              f"phantom {k + 1} (Z = {z[k]}) at ({p[0]:.4g}, {p[1]:.4g}, {p[2]:.4g}) Å"))
    p, atoms = near_miss(record)
    if p is not None:
        uv1, _ = cam.project(p[None, :])
        u, v = float(uv1[0, 0]), float(uv1[0, 1])
        marks.append(Mark("near-miss", float(u), float(v), POINT_RADIUS,
                          f"near-miss point of δ* at ({p[0]:.4g}, {p[1]:.4g}, {p[2]:.4g}) Å"))
        if atoms and view_k < len(atoms) and atom_uv is not None and atom_cell is not None:
            same = np.flatnonzero(atom_cell == atoms[view_k])
            if len(same):
                j = same[np.argmin(np.hypot(atom_uv[same, 0] - u, atom_uv[same, 1] - v))]
                marks.append(Mark("near-atom", float(atom_uv[j, 0]), float(atom_uv[j, 1]), POINT_RADIUS + 3,
                                  f"atom {atoms[view_k]} of the near-miss tuple in this view"))
    return marks


def _visible_ids(ids_path) -> set[int] | None:
    if ids_path is None:
        return None
    try:
        a = np.load(ids_path, allow_pickle=False)
    except (OSError, ValueError):
        raise InputError("ID buffer is not a .npy array", source=str(ids_path)) from None
    if a.ndim != 2 or a.dtype.kind not in "iu":
        raise InputError("ID buffer must be a 2-D integer array", source=str(ids_path))
    return {int(x) for x in np.unique(a[a >= 0])}


def sidecar_marks(view, record: dict, view_k: int) -> ViewMarks:
    """The marks of an export's view from its sidecar (camera, drawn atoms) and ID buffer."""
    side = view.sidecar
    try:
        cam = camera_from_dict(side["camera"])
        atoms = side.get("atoms") or []
        uv = np.asarray([[float(a["uv"][0]), float(a["uv"][1])] for a in atoms], dtype=np.float64).reshape(-1, 2)
        cell = np.asarray([int(a["cell_index"]) for a in atoms], dtype=np.int64)
        seen_px = [int(a.get("visible_pixels") or 0) for a in atoms]
        ids = [int(a["id"]) for a in atoms]
        elements = [str(a.get("element", "")) for a in atoms]
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise InputError(f"sidecar of view {view.name!r} is malformed ({type(exc).__name__}: {str(exc)[:80]})",
                         field="sidecar") from None
    visible = _visible_ids(view.ids)
    marks = []
    for k in range(len(atoms)):
        seen = (ids[k] in visible) if visible is not None else seen_px[k] > 0
        marks.append(Mark("atom" if seen else "hidden", float(uv[k, 0]), float(uv[k, 1]), 3.0,
                          f"{elements[k]} atom {cell[k]} (drawn {ids[k]})" + ("" if seen else ": no pixel")))
    marks += _point_marks(cam, record, view_k, uv, cell)
    return ViewMarks(view.name, int(cam.width), int(cam.height), tuple(marks))


def schematic_marks(cell, cams, cfg, record: dict) -> tuple[ViewMarks, ...]:
    """A certify output's views (no images): the drawn atoms of the item's rendered cell (its tiling, the
    certificate's style) projected through the item's cameras as discs, then the points."""
    from viewcert.render.palette import hex_colour  # lazy: start-up (schematic views only)
    from viewcert.render.scene import build_scene  # lazy: start-up (schematic views only)

    scene = build_scene(cell, cfg.observation.style, tiling=cfg.observation.tiling if cell.is_periodic else (1, 1, 1))
    out = []
    for k, cam in enumerate(cams):
        uv, depth = cam.project(scene.sphere_centres)
        r = scene.sphere_radii / np.asarray(cam.pixel_size(depth), dtype=np.float64)
        order = np.argsort(-depth, kind="stable")  # far first: the nearest disc is drawn last, on top
        marks = [Mark("disc", float(uv[j, 0]), float(uv[j, 1]), float(r[j]),
                      f"Z = {int(scene.numbers[j])} atom {int(scene.atom_index[j])}",
                      hex_colour(scene.sphere_colours[j])) for j in order]
        marks += _point_marks(cam, record, k, uv, np.asarray(scene.atom_index))
        out.append(ViewMarks(cam.name, int(cam.width), int(cam.height), tuple(marks), schematic=True))
    return tuple(out)


def item_cameras_from_inputs(cert: dict):
    """A function id → (cell, cameras, cfg) for a certify output's items, from the inputs the certificate
    names (``location.input``, else ``inputs.spec``) under its recorded settings; None when they cannot be read
    (the items' pages then show no views)."""
    from viewcert.certify.config import CertifyConfig  # lazy: start-up (certify outputs only)
    from viewcert.certify.evaluate import item_cameras, prepare  # lazy: start-up (certify outputs only)
    from viewcert.certify.inputs import load_input  # lazy: start-up (certify outputs only)

    loc = cert.get("location") or {}
    config = dict(cert["config"])
    if loc.get("protocol"):  # a protocol file: recorded by name, read where the certificate says it was
        config["protocol"] = loc["protocol"]
    inputs = cert["inputs"]
    spec = loc.get("input") or inputs.get("spec")
    try:
        cfg = CertifyConfig.from_dict(config)
        dataset = load_input(spec, subset=inputs.get("subset") or "eval")
    except Exception:  # noqa: BLE001 - inputs moved or gone: the pages say so
        return None
    by_id = {it.id: it for it in dataset.items}

    def cameras(item_id: str):
        it = by_id.get(item_id)
        if it is None:
            return None
        prep = prepare(it, cfg)
        if prep.cell is None:
            return None
        try:
            return prep.cell, item_cameras(prep.cell, cfg), cfg
        except ViewcertError:  # e.g. a perspective camera refused for this item: its page shows no views
            return None

    return cameras
