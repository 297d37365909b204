"""The explorer's overlays: where the certificate's points fall in each view, as marks for an SVG drawn over the
image (pixel frame of the PNG: u to the right, v down, origin at the top-left corner, px).

Points are projected with viewcert's own cameras (``cameras.camera``): an export's view by the camera its
sidecar records; a certify output's view by the item's image drawn by the explorer from its inputs at the certificate's recorded settings
(``explore.rendered``), through the camera of that image. Marks:

- ``atom``: a drawn atom seen in the view (its ID-buffer pixels, else the sidecar's visible pixel count > 0);
- ``hidden``: a drawn atom with no pixel in the view (a cause of missing atoms);
- ``phantom``: a phantom point of the certificate (``items[].phantoms``: [Z, x, y, z] Å), one per phantom;
- ``near-miss``: the least-squares point of the near-miss tuple behind δ* (``uniqueness_margin``), and
  ``near-atom``: in view k the drawn copy of the tuple's atom k nearest that point;
- ``missing``: every drawn copy of an atom the oracle did not recover (no reconstructed point of its label
  within δ), found by running the certificate's oracle again on the item (``missing_atoms``), drawn only when
  their number equals the certificate's ``n_missing``;
- ``candidate``: a transformation item's atoms in the pose of each answer of its consistent-answer set,
  projected through the after camera as the export's after-view sidecar records them (``group``: the answer),
  over the after view;
- ``bond``: an interaction item's hydrogen bond, a line from the donor's to the acceptor's projection (``group``:
  its entry; ``verdict``: determined or not in the rendered views), projected through the cameras of the
  complex read again (``--inputs``) or read from the export's sidecars (every atom's projection), and
  ``residue`` / ``ligand``: every atom of the residue the question names and of the ligand.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

from viewcert.cameras.camera import camera_from_dict
from viewcert.cameras.protocol_files import is_protocol_file
from viewcert.certify.trust import named_input, recorded_protocol, trusted_input
from viewcert.errors import InputError, ViewcertError
from viewcert.io.confine import check_sha256, confined, inside
from viewcert.limits import LimitError, active_limits

#: marker radii (px) of the points that are not atoms
POINT_RADIUS = 5.0
#: positions printed on the pages are rounded to this (Å)
POSITION_RESOLUTION = 0.001


@dataclass(frozen=True)
class Mark:
    """One SVG mark: kind (module docstring), centre (u, v) px, radius px, colour (#rrggbb or ''), title; a line
    (``bond``) also has its other end (u2, v2) px. ``group``: which answer or bond the mark belongs to (text)."""

    kind: str
    u: float
    v: float
    r: float
    title: str
    colour: str = ""
    group: str = ""
    u2: float | None = None
    v2: float | None = None


@dataclass(frozen=True)
class ViewMarks:
    """The marks of one view over an image of ``width`` × ``height`` px."""

    name: str
    width: int
    height: int
    marks: tuple[Mark, ...]
    camera: dict | None = None  # the camera the marks were projected through (``Camera.to_dict``)


def _points(rows, what: str) -> np.ndarray:
    """(n, 3) Å of certificate rows [Z, x, y, z]; InputError naming ``what`` otherwise."""
    try:
        a = np.asarray([[float(x) for x in r[1:4]] for r in rows], dtype=np.float64).reshape(-1, 3)
    except (TypeError, ValueError, IndexError):
        raise InputError(f"{what} must be rows [Z, x, y, z]", field=what) from None
    if not np.isfinite(a).all():
        raise InputError(f"{what} has a non-finite coordinate", field=what)
    return a


def phantom_points(record) -> tuple[np.ndarray, list]:
    """The listed phantoms of an item (``records.ItemOutcome``): (points (n, 3) Å, atomic numbers)."""
    rows = record.phantoms or []
    if not isinstance(rows, list):
        raise InputError("phantoms must be a list", field="phantoms")
    return _points(rows, "phantoms"), [r[0] for r in rows]


def near_miss(record) -> tuple[np.ndarray | None, list | None]:
    """(point (3,) Å or None, cell atom per view or None) of the item's δ* near-miss tuple."""
    um = record.uniqueness_margin
    if not um or not isinstance(um.near_miss_point, list) or not um.near_miss_point:
        return None, None
    p = _points([[0, *um.near_miss_point]], "uniqueness_margin.near_miss_point")[0]
    atoms = um.near_miss
    return p, (atoms if isinstance(atoms, list) else None)


def position_text(p) -> str:
    """A position (x, y, z) Å rounded to ``POSITION_RESOLUTION`` Å, as the pages print it."""
    return "(" + ", ".join(f"{float(x) + 0.0:.3f}" for x in p) + ") Å"


def atom_text(z, index) -> str:
    """An atom in words: its element and its index in the rendered cell ("Cu atom 3")."""
    from viewcert.elements import symbol  # lazy: start-up

    try:
        return f"{symbol(int(z))} atom {int(index)}"
    except (TypeError, ValueError, ViewcertError):
        return f"atom {index}"


def _point_marks(cam, record, view_k: int, atom_uv, atom_cell, titles=None):
    """The phantoms and the near-miss point of ``record`` through ``cam``; in view k, the drawn copy of the
    near-miss tuple's k-th atom nearest that point (``titles``: the drawn atoms in words)."""
    marks = []
    pts, z = phantom_points(record)
    if len(pts):
        uv, _ = cam.project(pts)
        for k, (p, (u, v)) in enumerate(zip(pts, uv, strict=True)):
            marks.append(Mark("phantom", float(u), float(v), POINT_RADIUS + 2,
                              f"phantom {k + 1}: {atom_text(z[k], '?').split(' atom')[0]} at {position_text(p)}",
                              group=f"phantom {k + 1}"))
    p, atoms = near_miss(record)
    if p is not None:
        uv1, _ = cam.project(p[None, :])
        u, v = float(uv1[0, 0]), float(uv1[0, 1])
        marks.append(Mark("near-miss", float(u), float(v), POINT_RADIUS,
                          f"near-miss point of δ* at {position_text(p)}"))
        if atoms and view_k < len(atoms) and atom_uv is not None and atom_cell is not None:
            same = np.flatnonzero(atom_cell == atoms[view_k])
            if len(same):
                j = same[np.argmin(np.hypot(atom_uv[same, 0] - u, atom_uv[same, 1] - v))]
                who = titles[j] if titles is not None else f"atom {atoms[view_k]}"
                marks.append(Mark("near-atom", float(atom_uv[j, 0]), float(atom_uv[j, 1]), POINT_RADIUS + 3,
                                  f"{who}: the near-miss tuple's atom in this view", group=f"atom {atoms[view_k]}"))
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


def _missing_marks(uv, atom_cell, missing, titles) -> list[Mark]:
    """A ``missing`` mark on every drawn copy of the atoms in ``missing`` (cell indices)."""
    return [Mark("missing", float(uv[j, 0]), float(uv[j, 1]), POINT_RADIUS + 2,
                 f"{titles[j]}: not recovered by the oracle (missing)", group=f"atom {int(atom_cell[j])}")
            for j in range(len(uv)) if int(atom_cell[j]) in missing]


def sidecar_marks(view, record, view_k: int, missing: tuple[int, ...] = (), groups: dict | None = None) -> ViewMarks:
    """The marks of an export's view from its sidecar (camera, drawn atoms) and ID buffer, with the points of
    ``record`` (the item's ``records.ItemOutcome``); ``missing``: the cell indices of the atoms the oracle did not recover (``missing_atoms``);
    ``groups``: {drawn id: the 3D pane's atom} (``explore.rendered.sidecar_pane``), each atom's ring then in
    group ``drawn k``, linked to the pane's atom k."""
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
    titles = [f"{elements[k]} atom {cell[k]} (drawn {ids[k]})" for k in range(len(atoms))]
    for k in range(len(atoms)):
        seen = (ids[k] in visible) if visible is not None else seen_px[k] > 0
        group = f"drawn {groups[ids[k]]}" if groups and ids[k] in groups else ""
        marks.append(Mark("atom" if seen else "hidden", float(uv[k, 0]), float(uv[k, 1]), 3.0,
                          titles[k] + ("" if seen else ": no pixel"), group=group))
    marks += _missing_marks(uv, cell, set(missing), titles)
    marks += _point_marks(cam, record, view_k, uv, cell, titles)
    return ViewMarks(view.name, int(cam.width), int(cam.height), tuple(marks), camera=cam.to_dict())


def rendered_marks(rv, name: str, record, view_k: int, missing: tuple[int, ...] = ()) -> ViewMarks:
    """The marks of a view drawn by the explorer (``explore.rendered.RenderedView``: a certify output's item, its
    ID buffer in memory): every drawn atom seen or hidden, the missing atoms, then the points of ``record``."""
    from viewcert.elements import symbol  # lazy: start-up (rendered views only)

    cam, uv, cell = rv.camera, rv.atom_uv, rv.atom_cell
    titles = [f"{symbol(int(z))} atom {int(a)}" for z, a in zip(rv.atom_numbers.tolist(), cell.tolist(), strict=True)]
    marks = [Mark("atom" if seen else "hidden", float(uv[k, 0]), float(uv[k, 1]), 3.0,
                  titles[k] + ("" if seen else ": no pixel"), group=f"drawn {k}")  # k: the 3D pane's atom k
             for k, seen in enumerate(rv.seen.tolist())]
    marks += _missing_marks(uv, cell, set(missing), titles)
    marks += _point_marks(cam, record, view_k, uv, cell, titles)
    return ViewMarks(name, int(cam.width), int(cam.height), tuple(marks), camera=cam.to_dict())


def missing_atoms(cell, cfg, record) -> tuple[int, ...] | None:
    """The cell indices of the atoms the item's oracle does not recover, by running it again as certify does
    (``certify.evaluate.views_of``: the item's cameras, observe, reconstruct, ``oracle.phantoms.analyse``); ()
    when the certificate records none; None when the run does not give the certificate's ``n_missing`` (then
    none is drawn)."""
    from viewcert.certify.evaluate import views_of  # lazy: start-up (certify outputs only)

    want = record.oracle.n_missing if record.oracle else None
    if not isinstance(want, int) or isinstance(want, bool) or want <= 0:
        return ()
    got = tuple(views_of(cell, cfg)[3].missing_atoms)
    return got if len(got) == want else None


def sidecar_candidate_marks(side) -> ViewMarks | None:
    """The after view's marks of a transformation item, from its sidecar (``benchmark.tasks_export.after_sidecar``,
    received: checked here): each atom in the pose of every answer of the consistent-answer set, where the after
    camera projects it, as the export recorded it (the explorer never rebuilds the question). None when the
    sidecar records no candidates (an export written before it did) or one is malformed."""
    side = side if isinstance(side, dict) else {}
    cands, cam = side.get("candidates"), side.get("camera")
    width, height = side.get("width"), side.get("height")
    if not (isinstance(cands, list) and isinstance(cam, dict) and _whole(width) and _whole(height)):
        return None
    marks = []
    for c in cands:
        atoms = c.get("atoms") if isinstance(c, dict) else None
        if not isinstance(atoms, list) or not isinstance(c.get("answer"), str):
            return None
        for a in atoms:
            if not (isinstance(a, dict) and _whole(a.get("atom")) and _whole(a.get("Z"))
                    and all(_finite(a.get(k)) for k in ("u", "v"))):
                return None
            marks.append(Mark("candidate", float(a["u"]), float(a["v"]), 4.0,
                              f"{c['answer']}: Z = {a['Z']} atom {a['atom']}", group=c["answer"]))
    name = cam.get("name") if isinstance(cam.get("name"), str) else ""
    return ViewMarks(name, width, height, tuple(marks), camera=cam)


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _finite(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def interaction_scenes(cert, root: str | None) -> dict:
    """{source id: (structure, cameras, ligand atom indices)} of an interaction export's complexes (``cert``: its
    ``records.InteractionCertificate``), found by name inside the folder
    ``root`` (a real path, as ``verify --inputs``; ``io.confine``: no symlink out of it), checked against the SHA-256 the certificate records, protonated as the
    ground truth was (``interactions.hbond_truth``) and framed as the images were (``render.frame_cameras``
    under the recorded protocol, style and size). Complexes that cannot be found or read are left out (their
    pages draw no bonds); a protocol file (recorded by SHA-256) draws none."""
    from viewcert.interactions import hbond_truth  # lazy: start-up (hydride, interaction exports only)
    from viewcert.render import frame_cameras  # lazy: start-up (interaction exports only)

    recorded = cert.settings
    if root is None or not recorded or recorded.protocol_sha256 or is_protocol_file(recorded.protocol):
        return {}
    out = {}
    for c in cert.complexes or []:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str):
            continue
        try:
            path = confined(c["name"], root, source="certificate.json", field="complexes", what="complex")
            active_limits().check_pixels(int(recorded.width or 1), int(recorded.height or 1))
            truth = hbond_truth(path, ligand=c.get("ligand"), pocket=recorded.pocket)
            if truth.to_dict()["complex"].get("sha256") != c.get("sha256"):
                continue
            s = truth.protonated.prepared.structure
            cams = frame_cameras(s, recorded.protocol, style=recorded.style,
                                 width=recorded.width, height=recorded.height)
        except LimitError:  # the certificate asks for more work than a limit allows: one line, exit 2
            raise
        except Exception:  # noqa: BLE001 - a complex that cannot be read again draws no bonds
            continue
        out[f"{c['name']}:{truth.protonated.prepared.ligand}"] = (s, cams, tuple(truth.protonated.prepared.ligand_atoms))
    return out


#: a bond's class and words by its verdict (``site``'s verdict rows: det, undet, uncertain; other: not asked)
VERDICTS = {"det": "determined", "undet": "not determined", "uncertain": "uncertain (within δ of the criterion, "
            "not asked)", "other": "another residue's bond (not asked by this question)"}


def bond_marks(structure, cams, bonds: list, verdicts: dict, asked: str = "",
               ligand_atoms=()) -> tuple[ViewMarks, ...]:
    """Per view (``cams``): the bond marks of ``bond_marks_uv``, the complex's atoms projected through each
    camera (``structure``: the protonated complex; ``ligand_atoms``: the ligand's atom indices)."""
    from viewcert.interactions.ceiling import residue_key  # lazy: start-up (interaction exports only)

    pos = np.asarray(structure.positions, dtype=np.float64)
    residues = [residue_key(structure, k) for k in range(len(pos))] if asked else []
    views = [(cam.name, int(cam.width), int(cam.height), cam.to_dict(), np.asarray(cam.project(pos)[0]).reshape(-1, 2))
             for cam in cams]
    return bond_marks_uv(views, residues, ligand_atoms, bonds, verdicts, asked)


def sidecar_bond_marks(views, bonds: list, verdicts: dict, asked: str = "") -> tuple[ViewMarks, ...] | None:
    """The bond marks of an interaction export's views from their sidecars (``benchmark.interaction_export.
    view_sidecar``: camera, every drawn atom's index, residue, ligand flag and projection), no input read; None
    when a view has no sidecar or its atoms are not the complex's in order (then nothing is drawn)."""
    out, residues, ligand = [], None, None
    for v in views:
        side = v.sidecar if isinstance(v.sidecar, dict) else None
        atoms = side.get("atoms") if side is not None else None
        try:
            cam = camera_from_dict(side["camera"]) if side is not None else None
            if cam is None or not isinstance(atoms, list) or any(a["index"] != k for k, a in enumerate(atoms)):
                return None
            uv = np.asarray([[float(a["uv"][0]), float(a["uv"][1])] for a in atoms], dtype=np.float64).reshape(-1, 2)
            res = [str(a["residue"]) for a in atoms]
            lig = [k for k, a in enumerate(atoms) if a.get("ligand") is True]
        except (KeyError, TypeError, ValueError, IndexError, InputError):
            return None
        if not np.isfinite(uv).all() or (residues is not None and (res, lig) != (residues, ligand)):
            return None
        residues, ligand = res, lig
        out.append((cam.name, int(cam.width), int(cam.height), cam.to_dict(), uv))
    return bond_marks_uv(out, residues or [], ligand or [], bonds, verdicts, asked) if out else None


def bond_marks_uv(views, residues: list, ligand_atoms, bonds: list, verdicts: dict,
                  asked: str = "") -> tuple[ViewMarks, ...]:
    """Per view (name, width, height, camera dict, every atom's projection (n, 2) px): each ground-truth bond
    (``donor``, ``acceptor``: atom indices of the protonated complex) as a line between the two atoms'
    projections, with a ring at each end, classed by ``verdicts`` (entry → det | undet | uncertain; absent:
    ``other``) and ``asked`` when its residue is the one the question names; a ring on every atom of that residue
    (``asked``: ``CHAIN/RESseq``; ``residues``: each atom's key) and of the ligand (``ligand_atoms``)."""
    out = []
    n = len(views[0][4]) if views else 0
    res_atoms = [k for k, r in enumerate(residues) if asked and r == asked]
    lig = [int(k) for k in ligand_atoms if 0 <= int(k) < n]
    for name, width, height, camera, uv in views:
        marks = []
        for kind, atoms, what in (("residue", res_atoms, "the residue the question names"),
                                  ("ligand", lig, "the ligand")):
            marks += [Mark(kind, float(uv[k, 0]), float(uv[k, 1]), 4.0 if kind == "residue" else 3.0,
                           f"{what}: atom {k}") for k in atoms]
        for b in bonds:
            try:
                d, a = int(b["donor"]), int(b["acceptor"])
                if not (0 <= d < n and 0 <= a < n):
                    continue
            except (KeyError, TypeError, ValueError):
                continue
            entry = str(b.get("entry"))
            cls = verdicts.get(entry, "other")
            mine = " asked" if asked and entry.split(",")[0].split()[:2] == _res_words(asked) else ""
            (u1, v1), (u2, v2) = uv[d].tolist(), uv[a].tolist()
            marks.append(Mark(f"bond {cls}{mine}", u1, v1, 0.0, f"{entry}: {VERDICTS.get(cls, cls)}", group=entry,
                              u2=u2, v2=v2))
            marks.append(Mark("donor", u1, v1, 4.0, f"{entry}: donor atom {d}", group=entry))
            marks.append(Mark("acceptor", u2, v2, 4.0, f"{entry}: acceptor atom {a}", group=entry))
        out.append(ViewMarks(name, width, height, tuple(marks), camera=camera))
    return tuple(out)


def _res_words(key: str) -> list[str]:
    """``A/SER62`` → ["SER", "62"] (the head of the residue's bond entries)."""
    res = key.split("/", 1)[-1]
    return [res[:3], res[3:]]


def undrawn_reason(cert, root: str | None) -> str:
    """Why a certify output's views are not drawn from the inputs its certificate (``cert``) names, in words for
    the pages: outside the trusted folder ``root`` (by default the explored folder: ``--inputs`` widens it),
    or not read back as recorded."""
    import re

    spec = cert.inputs.spec
    if not isinstance(spec, str) or named_input(spec):
        return ""
    if root is None:
        return "the inputs the certificate names are not read (no trusted folder)"
    loc = cert.location.input if cert.location else None
    names = [re.sub(r"^[a-z]+:", "", x.partition("#")[0]) for x in (loc, spec) if isinstance(x, str) and x]
    if not any((real := inside(n, root)) is not None and os.path.exists(real) for n in names):
        return (f"its input {spec!r} is not inside the trusted folder {root!r}, which is the explored folder "
                "unless --inputs DIR names another: viewcert explore FOLDER --inputs DIR draws the views")
    return ("the inputs the certificate names were not read back as recorded inside the trusted folder (moved, "
            "changed since: their SHA-256 differ, or a protocol file not found)")


def item_cameras_from_inputs(cert, root: str | None, cert_path: str):
    """A function id → (cell, cameras, cfg) for a certify output's items (``cert``: its
    ``records.CeilingCertificate``, shape-checked), from the inputs the certificate names (``location.input``, else
    ``inputs.spec``) under its recorded settings, found only inside the trusted folder ``root`` as ``verify``
    finds them (``certify.trust``; None: nothing read) and drawn only when every input file hashes as the
    certificate records (``inputs.files``); None when they cannot be read or differ (the items' pages then
    show no views)."""
    from viewcert.certify.config import CertifyConfig  # lazy: start-up (certify outputs only)
    from viewcert.certify.evaluate import item_cameras, prepare  # lazy: start-up (certify outputs only)
    from viewcert.certify.inputs import load_input  # lazy: start-up (certify outputs only)

    if root is None and not named_input(str(cert.inputs.spec)):  # a built-in input is a name: no file
        return None

    config = cert.config.to_dict()  # the settings CertifyConfig reads (a protocol file: its real path, below)
    inputs, recorded = cert.inputs, cert.config
    try:
        if recorded.protocol_sha256 or is_protocol_file(recorded.protocol):
            config["protocol"] = recorded_protocol(cert, root, cert_path, cert_path)  # by name, inside root
            check_sha256(config["protocol"], recorded.protocol_sha256 or "", source=cert_path,
                         field="config.protocol")
        cfg = CertifyConfig.from_dict(config)
        cfg.check_limits()
        dataset = load_input(trusted_input(cert, root, cert_path), subset=inputs.subset or "eval")
    except LimitError:  # the certificate asks for more work than a limit allows: one line, exit 2
        raise
    except Exception:  # noqa: BLE001 - inputs moved, gone or outside the trusted folder: the pages say so
        return None
    if dataset.files != inputs.files:  # never draw atoms of a file whose SHA-256 is not the certificate's
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
