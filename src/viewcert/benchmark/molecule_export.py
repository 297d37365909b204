"""Molecular benchmark export: a point-group or handedness question per molecule, images at one scale, the
question files (JSONL, VLMEvalKit TSV) and the ceiling certificate on the molecular score levels.

``build_molecule_benchmark(INPUT, out, MoleculeExportSettings(task=...))`` writes into ``out``:

| file | what |
|---|---|
| ``images/qNNNN_vK.png`` | view K of question NNNN, rendered by ``viewcert.render`` at one common Å-per-pixel scale |
| ``sidecars/qNNNN_vK.json`` | camera, framing, per drawn atom: element, pixel centre, depth, visible pixels |
| ``benchmark.jsonl`` | id, source_id, index, images, question (no options: each harness adds its own), task, category (the true answer), answer_format, answer, choices, answer_letter |
| ``benchmark.tsv``, ``ids.csv``, ``inspect_task.py``, ``lmms_eval/``, ``HARNESSES.md`` | the harness files (``benchmark.harness_files``): VLMEvalKit MCQ TSV, id table, Inspect and lmms-eval tasks, the steps |
| ``benchmark_r3.jsonl``, ``benchmark_no_image.jsonl``, ``benchmark_choices_only.jsonl`` (+ ``.tsv``) | the other arms (``benchmark.arms``); R3: the shown molecule's coordinates in the first view's screen frame (``r3_question``) |
| ``manifest.json`` | ``viewcert.export/1`` (``formats.export``): settings, per question the answer and why, skipped items (no question: achiral, group outside the choices) and unreadable items (errors), each with its reason; SHA-256 of every file |
| ``certificate.json``, ``certificate_items.csv`` | ``viewcert.certify`` of exactly the shown molecules, scored on the question's level |

Tasks. ``point-group``: "which Schoenflies point group (within τ)?"; the answer is the input's group by
``viewcert.symmetry.pointgroup`` (truth = the input itself), choices the fixed ``POINT_GROUP_CHOICES``; a
group outside them is a skipped item with its reason; certificate level ``point_group``.
``molecule-handedness``: the images show the molecule either as given or mirrored (x → −x through its
bounding-box centre; which one is fixed by the SHA-256 of its id); the question lists the reference
geometry and asks which is shown; achiral molecules (an improper operation within τ) are skipped, since
their mirror image is a rotation of themselves; certificate level ``handedness``.

Questions are ordered by SHA-256 of the item id; file names carry only question index and view number.
Every file is deterministic (same inputs → same bytes). A crystal is an item error (not a molecule).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from viewcert.benchmark.export import view_sidecar
from viewcert.benchmark.harness_files import question_record, write_harness_files
from viewcert.benchmark.settings import check_constraints
from viewcert.cameras.framing import framing_record
from viewcert.cameras.policy import frame
from viewcert.cameras.resolve import ResolvedProtocol
from viewcert.certify import CertifyConfig
from viewcert.certify.certificate import write_certificate
from viewcert.certify.config import MoleculeSettings, ObservationSettings, OracleSettings, SymmetrySettings
from viewcert.certify.inputs import Dataset, Selection, load_input, mirror_x
from viewcert.certify.run import items_table, run_certification
from viewcert.constraints import parse_names, with_constraints
from viewcert.errors import InputError
from viewcert.formats.export import Export, write_export
from viewcert.formats.records import CeilingCertificate
from viewcert.formats.settings_sections import ExportSettingsRecord
from viewcert.io.atomic import write_text_atomic
from viewcert.io.images import write_png, write_sidecar
from viewcert.render.image import ImageSettings
from viewcert.render.raster import build_scene, drawn_policy, render
from viewcert.structures import Structure
from viewcert.symmetry.pointgroup import point_group

MOLECULE_TASKS = ("point-group", "molecule-handedness")
POINT_GROUP_CHOICES = ("C1", "Cs", "Ci", "C2", "C3", "S4", "C2v", "C3v", "C4v", "C2h", "D2", "D3", "D2d", "D3d",
                       "D2h", "D3h", "D4h", "D5h", "D5d", "D6h", "Td", "Oh", "Ih", "C∞v", "D∞h")
HANDEDNESS_CHOICES = ("the reference molecule", "its mirror image")
LEVEL = {"point-group": "point_group", "molecule-handedness": "handedness"}
LOOK = {"study": "flat discs with outlines", "ball-and-stick": "ball-and-stick", "spacefill": "space-filling"}


def _default_image() -> ImageSettings:
    return ImageSettings.from_options("axes-3", style="ball-and-stick", kind="orthographic")


@dataclass(frozen=True)
class MoleculeExportSettings:
    """What a molecular export depends on (recorded in the manifest): ``image`` (protocol, style, size px,
    supersample; the camera kind is the protocol's), tau: point-group tolerance τ (Å); delta: the certificate's
    δ (Å); observe: the certificate's observation mode. ``from_options`` builds it from the flat options."""

    image: ImageSettings = field(default_factory=_default_image)
    task: str = "point-group"
    tau: float = 0.01
    delta: float = 0.01
    molecule_scale: str = "common"
    observe: str = "visible"
    constraints: tuple[str, ...] = ()  # response constraints appended to every prompt (viewcert.constraints)

    def __post_init__(self) -> None:
        if self.task not in MOLECULE_TASKS:
            raise InputError(f"task must be one of {MOLECULE_TASKS}, got {self.task!r}", field="task")
        # the shared settings checked by the certify parts they configure (one message each)
        OracleSettings(delta=self.delta)
        SymmetrySettings(tau=self.tau)
        MoleculeSettings(molecule_scale=self.molecule_scale)
        ObservationSettings(observe=self.observe)
        check_constraints(self.constraints)
        if self.image.kind != self.image.protocol.kind:
            raise InputError(f"kind = {self.image.kind!r} disagrees with the protocol's {self.image.protocol.kind} "
                             "cameras", field="kind")
        if self.image.width != self.image.height:
            raise InputError(f"a molecular export draws square images, got {self.image.width}x{self.image.height}",
                             field="size")

    @classmethod
    def from_options(cls, *, protocol="axes-3", style: str = "ball-and-stick", size: int = 768, supersample: int = 3,
                     constraints=(), **settings) -> MoleculeExportSettings:
        """The settings from the flat options: the protocol in any form the resolver accepts (resolved once,
        ``ImageSettings.from_options``; its camera kind), ``size`` px; ``settings``: the other fields."""
        image = ImageSettings.from_options(protocol, style=style, width=size, height=size, supersample=supersample)
        image = replace(image, kind=image.protocol.kind)
        return cls(image=image, constraints=parse_names(constraints), **settings)

    def record(self) -> ExportSettingsRecord:
        """The settings as the manifest records them (flat; the protocol as given: a name or a file's path),
        typed; ``molecule_scale``, which no other exporter has, is the record's ``extra`` key."""
        im = self.image
        return ExportSettingsRecord(task=self.task, protocol=im.protocol.label, style=im.style, size=im.size,
                                    supersample=im.supersample, tau=self.tau, delta=self.delta, observe=self.observe,
                                    constraints=list(self.constraints), molecule_scale=self.molecule_scale)  # an unknown key, kept

    def to_dict(self) -> dict:
        """The JSON object of :meth:`record`."""
        return self.record().to_dict()


def _order_key(item_id: str) -> str:
    return hashlib.sha256(item_id.encode()).hexdigest()


def shows_mirror(item_id: str) -> bool:
    """Whether the handedness question shows the mirror image: the lowest bit of SHA-256(id + '/mirror')."""
    return bool(hashlib.sha256(f"{item_id}/mirror".encode()).digest()[0] & 1)


def _geometry_text(s: Structure) -> str:
    rows = [f"  {sym} {x:.4f} {y:.4f} {z:.4f}" for sym, (x, y, z) in zip(s.symbols, s.positions, strict=True)]
    return "\n".join(rows)


def r3_question(settings: MoleculeExportSettings, ref: Structure, shown: Structure, camera) -> str:
    """The R3 arm's question (``benchmark.arms``): the molecule the images show, as text, in the first view's
    screen frame (x right, y up, z toward the viewer; Å, origin at the centroid), and the task's question
    (handedness: with the reference geometry, as the image question gives it)."""
    centred = shown.positions - shown.positions.mean(axis=0)
    geometry = _geometry_text(Structure(centred @ np.asarray(camera.rotation).T, shown.numbers))
    head = ("You are given the geometry of one molecule as text: Cartesian coordinates in Å (element x y z) in a "
            "screen frame (x right, y up, z toward the viewer), origin at the centroid.")
    if settings.task == "point-group":
        ask = f"Which Schoenflies point group does the molecule have (symmetry within {settings.tau:g} Å)?"
    else:
        ask = ("Is it the molecule with the reference geometry below or its mirror image (rotated and moved freely)?"
               "\nReference geometry:\n" + _geometry_text(ref))
    return f"{head} {ask}\nGeometry:\n{geometry}"


def question_for(settings: MoleculeExportSettings, view_names, s: Structure, name: str) -> str:
    """The question text of one item (the handedness question carries the reference geometry)."""
    head = (f"You are shown {len(view_names)} orthographic views of one molecule ({', '.join(view_names)}; "
            f"{LOOK.get(settings.image.style, settings.image.style)}, hydrogens as given, one common scale across views; screen "
            f"x right, y up, z toward the viewer).")
    if settings.task == "point-group":
        return (f"{head} Which Schoenflies point group does the molecule have (symmetry within "
                f"{settings.tau:g} Å)?")
    return (f"{head} The images show either the molecule {name} ({s.formula}) with the reference geometry "
            f"below (Cartesian Å, element x y z) or its mirror image (rotated and moved freely). Which one is "
            f"shown?\nReference geometry:\n{_geometry_text(s)}")


def _prepare(item, settings: MoleculeExportSettings) -> tuple[dict, Structure | None, Structure | None]:
    """(record, reference molecule, shown molecule). The record holds 'error' when the item cannot be read or
    is not a molecule, 'skipped' when the task has no question for it (achiral, group outside the choices)."""
    rec: dict[str, Any] = {"id": item.id}
    try:
        s = item.read()
        if s.is_periodic:
            raise InputError("a crystal is not a molecule (it has a lattice)", source=item.id)
        if s.n_atoms < 2:
            raise InputError(f"{s.n_atoms} atom(s): no question to ask", source=item.id)
        pg = point_group(s.positions, s.numbers, settings.tau)
    except Exception as exc:  # noqa: BLE001 - an unreadable item is a reason in the manifest, never a crash
        rec["error"] = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        return rec, None, None
    rec.update({"formula": s.formula, "n_atoms": s.n_atoms, "point_group": pg.symbol,
                "point_group_closed": pg.closed, "chiral": pg.is_chiral})
    if settings.task == "point-group":
        if pg.symbol not in POINT_GROUP_CHOICES:
            rec["skipped"] = f"point group {pg.symbol} is not among the choices"
            return rec, s, None
        rec.update({"answer": pg.symbol, "answer_source": f"input point group within τ = {settings.tau:g} Å"})
        return rec, s, s
    if not pg.is_chiral:
        rec["skipped"] = f"achiral within τ = {settings.tau:g} Å ({pg.symbol}): its mirror image is a rotation of it"
        return rec, s, None
    mirrored = shows_mirror(item.id)
    rec.update({"answer": HANDEDNESS_CHOICES[int(mirrored)],
                "answer_source": "mirror x → −x through the bounding-box centre" if mirrored else "as given"})
    return rec, s, mirror_x(s) if mirrored else s


def _render_item(rec: dict, index: int, ref: Structure, shown: Structure, settings: MoleculeExportSettings,
                 rp: ResolvedProtocol, out: Path) -> None:
    # the shipped images' framing policy: the one the certificate's as-rendered ID buffer uses (_certify)
    im = settings.image
    policy = drawn_policy(im.style, width=im.width, height=im.height, molecule_scale=settings.molecule_scale)
    cams = frame(rp, shown, policy)
    spec = rp.spec
    scene = build_scene(shown, im.style)
    framing = framing_record(policy, shown, perspective=spec.kind == "perspective")
    images = []
    for v, (view, cam) in enumerate(zip(spec.protocol.views, cams, strict=True)):
        res = render(scene, cam, supersample=im.supersample)
        name = f"q{index:04d}_v{v}"
        write_png(out / "images" / f"{name}.png", res.rgb)
        write_sidecar(out / "sidecars" / f"{name}.json",
                      view_sidecar(res, view_name=view.name, image=f"images/{name}.png", structure=shown,
                                   framing=framing))
        images.append(f"images/{name}.png")
    # px per Å is one number per orthographic view; a pinhole's varies with depth (its sidecar holds the camera)
    rec.update({"index": index, "images": images, "r3_question": r3_question(settings, ref, shown, cams[0]),
                "px_per_angstrom": [round(float(c.scale), 9) if c.kind == "orthographic" else None for c in cams]})


#: how a molecular export chose its questions and which it shows mirrored (``inputs.selection``)
SELECTION_RULE = ("the export's questions: the input's molecules that were read and have a question on the task "
                  "(point-group: a group among the choices; molecule-handedness: chiral within tau), in SHA-256 "
                  "order of the item id, the first --limit of them (limit = n); ids in input order")
MIRROR_RULE = "molecule-handedness: shown mirrored when the lowest bit of SHA-256(id + '/mirror') is 1 (shows_mirror)"


def _certify(shown: list[tuple[str, Structure]], settings: MoleculeExportSettings, dataset: Dataset, out: Path,
             n_workers, rp: ResolvedProtocol) -> CeilingCertificate:
    """``viewcert.certify`` of exactly the shown molecules on the question's level (same protocol, size, style,
    scale): the input's items, selected and shown (mirrored) as recorded in ``inputs.selection``, so that
    ``verify`` rebuilds the same molecules; returns the certificate written."""
    ids = {i for i, _ in shown}
    mirrored = tuple((i, "mirror-x") for i in sorted(ids) if settings.task == "molecule-handedness" and shows_mirror(i))
    sel = Selection(SELECTION_RULE, tuple(it.id for it in dataset.items if it.id in ids), mirrored,
                    MIRROR_RULE if settings.task == "molecule-handedness" else "")
    dataset = dataset.with_selection(sel)
    cfg = CertifyConfig(protocol=rp, frame_on="drawn", delta=settings.delta, tau=settings.tau,
                        image_size=settings.image.size, observe=settings.observe, style=settings.image.style,
                        molecule_levels=(LEVEL[settings.task],), molecule_cross_check=False,
                        molecule_scale=settings.molecule_scale, constraints=settings.constraints)
    cert, _ = run_certification(dataset, cfg, n_workers=n_workers, progress=False)
    write_certificate(out / "certificate.json", cert.to_dict())
    write_text_atomic(out / "certificate_items.csv", items_table(cert))
    return cert


def build_molecule_benchmark(input_spec: str | os.PathLike, out: str | os.PathLike,
                             settings: MoleculeExportSettings | None = None, *, limit: int | None = None,
                             certify: bool = True, n_workers: int | None = 1) -> Export:
    """Export a molecular benchmark (module docstring); returns it (``formats.export.Export``). ``limit``: the first n
    usable questions in SHA-256 order of the ids."""
    settings = settings or MoleculeExportSettings()
    out = Path(out)
    rp = settings.image.protocol  # resolved once at the boundary: the images and the certificate use it
    spec = rp.spec
    proto = spec.protocol
    dataset = load_input(str(input_spec))
    items = sorted(dataset.items, key=lambda it: _order_key(it.id))
    records, good, shown = [], [], []
    choices = POINT_GROUP_CHOICES if settings.task == "point-group" else HANDEDNESS_CHOICES
    for it in items:
        if limit is not None and len(good) >= int(limit):
            break
        rec, ref, s = _prepare(it, settings)
        records.append(rec)
        if s is None:
            continue
        rec["question"] = question_for(settings, proto.view_names, ref, it.id)
        _render_item(rec, len(good), ref, s, settings, rp, out)
        good.append(rec)
        shown.append((it.id, s))
    harness = write_harness_files([with_constraints(question_record(r["index"], r["id"], r["images"], r["question"],
                                                                    settings.task, r["answer"], choices=choices),
                                                    settings.constraints) for r in good], out, settings.task,
                                  r3=[r["r3_question"] for r in good])
    cert = _certify(shown, settings, dataset, out, n_workers, rp) if certify and shown else None
    return write_export(out, "molecule", {
        "task": settings.task, "input": dataset.to_dict(), "settings": settings.record(), "n_questions": len(good),
        "items": [{k: r.get(k) for k in ("id", "index", "formula", "n_atoms", "point_group", "point_group_closed",
                                         "chiral", "answer", "answer_source", "px_per_angstrom")}
                  for r in records if "error" not in r and "skipped" not in r],
        "skipped": [{"id": r["id"], "reason": r["skipped"]} for r in records if "skipped" in r],
        "errors": [{"id": r["id"], "error": r["error"]} for r in records if "error" in r],
        "details": {"protocol": spec.to_dict() if spec.kind == "perspective" else proto.to_dict(),
                    "choices": list(choices), "truth": "the input molecule itself (no dataset label is read)"},
        "harness_files": harness}, cert, level=LEVEL[settings.task])
