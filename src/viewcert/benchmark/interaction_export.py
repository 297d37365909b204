"""Interaction benchmarks (MiSI-Bench's hydrogen-bond tasks): labelled images, questions, harness files and the
certificate of what the views determine.

Tasks: ``pocket-ligand`` (one question per complex: every ligand–pocket hydrogen bond as MiSI's five-tuple
``RES SEQ ATOM CHAIN, LIGATOM``, entries separated by ``; ``; ``no`` for a complex whose bonds are all
uncertain) and ``residue-ligand`` (per complex, up to
``per_complex`` positive and as many negative residues, drawn with ``numpy.random.default_rng(seed)``: does
that residue bond with the ligand, and by which pairs — ``no`` or ``yes: ENTRY; ENTRY``) and
``interaction-location`` (per complex, up to ``per_complex`` bonds: the command ``move x A, move y B`` (Å,
screen axes of the first view, integers) that brings the bond's midpoint to the centre of that view; its
ceiling is the consistent-answer one of ``location_ceiling``) and ``docking`` (per complex, ``per_complex``
items of ``benchmark.docking_export``: the ligand alone, the pocket alone and one displaced complex; the
command that restores the native pose).

Images: the protocol's views (default ``axes-6``, MiSI's six), orthographic at one common scale, 1160×803,
ball-and-stick, with the atom-name and residue labels of ``interactions.ceiling.label_set`` drawn by
``render.labels``; beside each image its sidecar (``sidecars/<image stem>.json``, ``view_sidecar``: the view's
camera and every drawn atom at its projection, what ``viewcert explore`` draws the bonds from). Ground truth: ``interactions.hbond_truth`` (hydride + biotite, ProLIF cross-check).
Harness files: every rung a harness task (``benchmark.arms``): the image arm and, from
``benchmark.interaction_arms``, R3 (the complex as text in the first view's screen frame; docking: the native
ligand, the pocket and the displaced ligand) and choices-only (the answer's form); the no-image arm from the
image question. Certificate: settings, criterion, label style and font, library versions, per item the ceiling under ideal
observations and as rendered (losses attributed) and the summary per task, per positive/negative and per
number of bonds with bootstrap percentile intervals (``viewcert.stats``); its ``digest`` is the SHA-256 of
its canonical JSON. No timestamps: the same inputs give the same bytes.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np

from viewcert.benchmark.docking_export import docking_item
from viewcert.benchmark.harness_files import question_record, write_harness_files
from viewcert.benchmark.interaction_arms import (
    DOCKING_FORM,
    ENTRY_FORMAT,
    LOCATION_FORM,
    answer_form,
    geometry_question,
)
from viewcert.benchmark.settings import check_constraints
from viewcert.cameras.protocol_files import is_protocol_file
from viewcert.constraints import parse_names, with_constraints
from viewcert.elements import symbols
from viewcert.errors import InputError
from viewcert.formats.export import Export, question_items, write_export
from viewcert.formats.item_sections import ItemCeiling
from viewcert.formats.records import (
    ABSENT,
    INTERACTION_FORMAT,
    InteractionCertificate,
    InteractionItemRecord,
    sealed,
)
from viewcert.formats.settings_sections import ExportSettingsRecord
from viewcert.formats.summary_sections import InteractionGroup, InteractionSummary, MeanRange
from viewcert.interactions import hbond_truth
from viewcert.interactions.ceiling import (
    CeilingSettings,
    pocket_ligand_ceiling,
    render_views,
    residue_key,
    residue_ligand_ceiling,
)
from viewcert.interactions.criteria import criterion_named
from viewcert.interactions.truth import complex_record, library_versions
from viewcert.io.atomic import json_dumps, write_png_atomic, write_text_atomic
from viewcert.io.complex import DEFAULT_POCKET, complex_name, prepare_complex
from viewcert.limits import active_limits
from viewcert.numeric import fixed
from viewcert.render import frame_cameras
from viewcert.render.image import ImageSettings
from viewcert.render.raster import DEFAULT_SUPERSAMPLE
from viewcert.resolution import quantize_tree
from viewcert.stats import bootstrap_indices, percentile_interval
from viewcert.tasks.credit import transformation_credit
from viewcert.tasks.transforms import parse_command

INTERACTION_TASKS = ("residue-ligand", "interaction-location", "docking", "pocket-ligand")
LOCATION_NORMALISER = 4.0  # Å: MiSI's translation half-width, the partial-credit scale of a move
MISI_SIZE = (1160, 803)
#: where a question record carries its R3 arm's question until the harness files are written
R3_KEY = "r3_question"
FORMAT = INTERACTION_FORMAT  # formats.records: /2 (/1 wrote a bare hex digest and no ``complexes``)


def _default_image() -> ImageSettings:
    return ImageSettings.from_options("axes-6", style=CeilingSettings().style, width=MISI_SIZE[0], height=MISI_SIZE[1],
                                      supersample=DEFAULT_SUPERSAMPLE)


@dataclass(frozen=True)
class InteractionExportSettings:
    """What to export (module docstring): ``image`` (the protocol, the ceiling's style, width × height px,
    orthographic cameras) and the task's own settings; ``per_complex``: residue-ligand positives (and negatives)
    per complex. ``from_options`` builds it from the flat options."""

    #: the flat options ``from_options`` takes (``to_dict`` records them, a protocol file by name and SHA-256)
    OPTIONS: ClassVar[tuple[str, ...]] = ("task", "protocol", "width", "height", "pocket", "seed", "per_complex",
                                          "n_boot", "ceiling", "constraints", "criterion")

    image: ImageSettings = field(default_factory=_default_image)
    task: str = "pocket-ligand"
    pocket: float = DEFAULT_POCKET
    seed: int = 0
    per_complex: int = 2
    n_boot: int = 2000
    ceiling: CeilingSettings = field(default_factory=CeilingSettings)
    constraints: tuple[str, ...] = ()  # response constraints appended to every prompt (viewcert.constraints)
    criterion: str = "baker-hubbard"  # the hydrogen-bond criterion (interactions.criteria.CRITERIA)

    def __post_init__(self) -> None:
        check_constraints(self.constraints)
        criterion_named(self.criterion)  # an unknown name is one line naming the choices
        if self.task not in INTERACTION_TASKS:
            raise InputError(f"task must be one of {', '.join(INTERACTION_TASKS)}, got {self.task!r}", field="task")
        check_docking_protocol(self.task, self.image.protocol.is_file)
        if not (1 <= self.per_complex <= 100):
            raise InputError(f"per_complex must be 1-100, got {self.per_complex}", field="per_complex")
        if not (0 <= self.seed < 2**63):
            raise InputError(f"seed must be an integer ≥ 0, got {self.seed}", field="seed")
        if self.image.style != self.ceiling.style or self.image.kind != "orthographic":
            raise InputError(f"the images are drawn orthographic in the ceiling's style {self.ceiling.style!r}, got "
                             f"{self.image.kind} {self.image.style!r}", field="style")

    @classmethod
    def from_options(cls, *, protocol="axes-6", width: int = MISI_SIZE[0], height: int = MISI_SIZE[1],
                     ceiling: CeilingSettings | None = None, constraints=(), **settings) -> InteractionExportSettings:
        """The settings from the flat options: the protocol in any form the resolver accepts (resolved once,
        ``ImageSettings.from_options``), width × height px, the ceiling (its style is the images');
        ``settings``: the other fields."""
        ceiling = ceiling or CeilingSettings()
        check_docking_protocol(settings.get("task"), is_protocol_file(protocol))  # before a file is read
        image = ImageSettings.from_options(protocol, style=ceiling.style, width=width, height=height,
                                           supersample=DEFAULT_SUPERSAMPLE)
        return cls(image=image, ceiling=ceiling, constraints=parse_names(constraints), **settings)

    def record(self) -> ExportSettingsRecord:
        """The settings as recorded, typed; a protocol file by its name and SHA-256 (location-free
        certificates)."""
        rp = self.image.protocol
        return ExportSettingsRecord(
            task=self.task, protocol=rp.file_name if rp.is_file else rp.label,
            # the bytes read once when resolved: the images' cameras come from them too
            protocol_sha256=rp.sha256 if rp.is_file else ABSENT,
            width=self.image.width, height=self.image.height, pocket=self.pocket, seed=self.seed,
            per_complex=self.per_complex, n_boot=self.n_boot, ceiling=self.ceiling.to_dict(),
            # left out when none: certificates written before the field keep their bytes
            constraints=list(self.constraints) if self.constraints else ABSENT,
            # the default, left out: certificates before the field keep their bytes
            criterion=ABSENT if self.criterion == "baker-hubbard" else self.criterion,
            style=self.image.style)  # recorded twice (top level and in the ceiling) since /1: the bytes are kept

    def to_dict(self) -> dict:
        """The JSON object of :meth:`record`."""
        return self.record().to_dict()


def check_docking_protocol(task: str | None, is_file: bool) -> None:
    """InputError when a docking export is given a protocol file: docking draws one orthographic camera."""
    if task == "docking" and is_file:
        raise InputError("docking draws one orthographic camera: use a named protocol", field="protocol")


def question_text(task: str, view_names, pocket: float, residue: str | None = None) -> str:
    """The question (MiSI-style wording; the options and answer format stated in full): the sentence about the
    images, then ``ask_text``."""
    if task == "docking":
        return ("The images show, in one camera, the ligand alone in its native pose, the protein pocket alone "
                f"(residues within {pocket:g} Å of the ligand) and the complex with the ligand displaced. Give the "
                f"operations that bring the displaced ligand back to its native pose in the pocket, as {DOCKING_FORM}.")
    head = (f"The {len(view_names)} images show one protein–ligand complex (the ligand and the protein residues "
            f"within {pocket:g} Å of it) from these viewpoints: {', '.join(view_names)}. Atoms are labelled with "
            "their atom names, residues with 'TYPE NUMBER CHAIN'. ")
    return head + ask_text(task, view_names[0], residue)


def ask_text(task: str, first_view: str, residue: str | None = None) -> str:
    """What a pocket-ligand, residue-ligand or interaction-location question asks, without the sentence about the
    images (the R3 arm asks the same of the complex as text: ``benchmark.interaction_arms``)."""
    if task == "pocket-ligand":
        return (f"List every hydrogen bond between the ligand and the pocket, one entry per bond as {ENTRY_FORMAT}, "
                "entries separated by '; ', or answer 'no' when there is none.")
    if task == "interaction-location":
        return (f"Consider the hydrogen bond {residue}. Give the command that moves the models so that the midpoint "
                f"of that bond is at the centre of the {first_view} view, as {LOCATION_FORM}.")
    return (f"Does residue {residue} form a hydrogen bond with the ligand? Answer 'no', or 'yes:' followed by every "
            f"such bond as {ENTRY_FORMAT}, separated by '; '.")


def _residue_text(key: str) -> str:
    chain, res = key.split("/")
    return f"{res[:3]} {res[3:]} {chain}"


def _render_views(truth, settings: InteractionExportSettings, out: Path, index: int):
    """Render each view of one complex once (``interactions.ceiling.render_views``), writing its labelled PNG;
    returns (relative image paths, view names, cameras, the rendered views the ceiling reads)."""
    s = truth.protonated.prepared.structure
    im = settings.image
    cams = frame_cameras(s, im.protocol, style=im.style, width=im.width, height=im.height)
    paths = [f"images/q{index:04d}_{k}_{cam.name}.png" for k, cam in enumerate(cams)]

    def write(k: int, layer) -> None:
        write_png_atomic(out / paths[k], layer.rgb)
        write_text_atomic(out / "sidecars" / f"{Path(paths[k]).stem}.json", json_dumps(view_sidecar(truth, cams[k])))

    views = render_views(truth, cams, settings.ceiling, rgb=True, on_view=write)
    return paths, [c.name for c in cams], cams, views


def view_sidecar(truth, cam) -> dict:
    """One image's sidecar: the view's name, its camera (``Camera.to_dict``) and every atom of the drawn complex
    (``index`` in the protonated complex, as the ground truth's bonds name them; element; residue key
    ``CHAIN/RESseq``; whether it is the ligand's) at its projection ``uv`` (px, 0.001, snapped as the crystal
    sidecars' values: ``numeric.fixed``; the camera at the certificate's resolutions, ``resolution.quantize_tree``)."""
    s = truth.protonated.prepared.structure
    lig = {int(x) for x in truth.protonated.prepared.ligand_atoms}
    uv, _ = cam.project(np.asarray(s.positions, dtype=np.float64))
    atoms = [{"index": k, "element": e, "residue": residue_key(s, k), "ligand": k in lig,
              "uv": [fixed(u, 3), fixed(v, 3)]}
             for k, (e, (u, v)) in enumerate(zip(symbols(s.numbers), np.asarray(uv).reshape(-1, 2).tolist(),
                                                 strict=True))]
    return {"view": cam.name, "camera": quantize_tree(cam.to_dict()), "atoms": atoms}  # snapped: CPU-independent


def _residue_items(pocket: dict, rng: np.random.Generator, k: int) -> list[tuple[str, dict]]:
    """Seeded positives (residues with a bond) and as many negatives (pocket residues without)."""
    pos = sorted({x["residue"] for x in pocket["entries"]})
    unsure = {x["residue"] for x in pocket["uncertain"]}  # neither positive nor negative: left out
    neg = sorted(r for r in pocket["residue_label_legible"] if r not in set(pos) and r not in unsure)
    pick_p = [pos[i] for i in sorted(rng.permutation(len(pos))[:k].tolist())]
    pick_n = [neg[i] for i in sorted(rng.permutation(len(neg))[: max(1, len(pick_p))].tolist())]
    return [(r, residue_ligand_ceiling(pocket, r)) for r in pick_p + pick_n]


def _docking_questions(path, ligand, settings: InteractionExportSettings, out: Path, start: int, rng):
    """Docking items of one complex (``benchmark.docking_export``); no hydrogen bonds are needed."""
    pc = prepare_complex(path, ligand=ligand, pocket=settings.pocket)
    source = f"{complex_name(path)}:{pc.ligand}"
    records, items, used = [], [], set()
    rec = complex_record(pc)
    for j in range(settings.per_complex):
        made = docking_item(pc.structure, pc.ligand_atoms, settings, rng, out, f"q{start + j:04d}", used)
        if made is None:
            rec["docking_items"] = {"asked": settings.per_complex, "made": j,
                                    "reason": f"only {j} grid displacements keep the ligand clear of the pocket"}
            break
        q = question_text("docking", ["ligand alone", "pocket alone", "displaced complex"], settings.pocket)
        records.append({**question_record(start + j, source, made.images, q, "docking", made.answer,
                                          category="docking"), R3_KEY: made.r3})
        items.append(InteractionItemRecord(id=records[-1]["id"], source_id=source, positive=True, n_bonds=0,
                                           d0_A=made.d0, **made.ceilings))
    return records, items, rec


def _complex_questions(path, ligand, settings: InteractionExportSettings, out: Path, start: int, rng):
    """Questions and ceilings of one complex."""
    if settings.task == "docking":
        return _docking_questions(path, ligand, settings, out, start, rng)
    truth = hbond_truth(path, ligand=ligand, pocket=settings.pocket, criterion=criterion_named(settings.criterion))
    images, names, cams, views = _render_views(truth, settings, out, start)
    ceilings = {m: pocket_ligand_ceiling(truth, cams, settings.ceiling, m, views) for m in ("ideal", "rendered")}
    source = f"{complex_name(path)}:{truth.protonated.prepared.ligand}"
    prepared = truth.protonated.prepared

    def r3(residue: str | None = None) -> dict:
        """The R3 arm's question of one record (``benchmark.interaction_arms``), under ``R3_KEY``."""
        ask = ask_text(settings.task, names[0], residue)
        return {R3_KEY: geometry_question(ask, prepared.structure, prepared.ligand_atoms, cams[0], settings.pocket)}

    records, items = [], []
    certain = [x["entry"] for x in ceilings["rendered"]["entries"]]
    uncertain = [x["entry"] for x in ceilings["rendered"]["uncertain"]]
    if settings.task == "pocket-ligand":
        if certain or uncertain:  # only uncertain bonds: the true list is empty, the answer "no"
            answer = "; ".join(certain) if certain else "no"
            records.append({**question_record(start, source, images, question_text(settings.task, names,
                                                                                    settings.pocket),
                                              settings.task, answer, category=f"{len(certain)} bonds",
                                              answer_format="list"), **r3()})
            items.append(InteractionItemRecord(id=records[-1]["id"], source_id=source, positive=bool(certain),
                                               n_bonds=len(certain), **{m: _brief(c) for m, c in ceilings.items()},
                                               extra={"uncertain": uncertain}))  # not a field of the record
    elif settings.task == "interaction-location":
        r, it = _location_questions(truth, ceilings, cams, names, settings, images, source, start, rng, r3)
        records += r
        items += it
    else:
        for j, (res, rend) in enumerate(_residue_items(ceilings["rendered"], rng, settings.per_complex)):
            ideal = residue_ligand_ceiling(ceilings["ideal"], res)
            mine = [e["entry"] for e in ceilings["rendered"]["entries"] if e["residue"] == res]
            answer = "yes: " + "; ".join(mine) if mine else "no"
            q = question_text(settings.task, names, settings.pocket, _residue_text(res))
            records.append({**question_record(start + j, source, images, q, settings.task, answer,
                                              category="positive" if mine else "negative", answer_format="list"),
                            **r3(_residue_text(res))})
            mine_uncertain = [e for e in uncertain if e.startswith(_residue_text(res) + " ")]
            # the ceilings are interactions.ceiling's JSON objects, typed by the record (ItemCeiling)
            items.append(InteractionItemRecord(id=records[-1]["id"], source_id=source, residue=res,
                                               positive=bool(mine), n_bonds=len(mine), ideal=ideal, rendered=rend,
                                               extra={"uncertain": mine_uncertain}))  # not a field of the record
    ground = truth.to_dict()
    if ceilings["ideal"]["uncertain"]:  # listed in the certificate's ground truth (the reasons beside each)
        ground["uncertain"] = [{k: x[k] for k in ("entry", "bond", "reason")} for x in ceilings["ideal"]["uncertain"]]
    return records, items, ground


def location_answer(structure, pair: tuple[int, int], camera) -> str:
    """``move x A, move y B``: minus the screen coordinates (Å) of the pair's midpoint, rounded."""
    mid = 0.5 * (structure.positions[pair[0]] + structure.positions[pair[1]])
    x, y, _ = np.asarray(camera.to_camera(mid), dtype=float).reshape(-1)[:3]
    return f"move x {int(np.round(-x))}, move y {int(np.round(-y))}"


def _best_mean_credit(answers: list[str]) -> float:
    """Consistent-answer ceiling: the best single answer's mean MiSI credit over the consistent answers."""
    ts = [parse_command(a) for a in answers]
    norms = {"translate": LOCATION_NORMALISER, "rotate": 90.0}
    return max(float(np.mean([transformation_credit(p, t, norms) for t in ts])) for p in ts)


def location_ceiling(structure, bond_pair, camera, pocket: dict, entry: dict, delta: float) -> ItemCeiling:
    """Interaction-location ceiling of one bond: located (its entry identified and recovered: the question
    names the pair; its bond status does not matter) → the consistent answers are the roundings of the
    midpoint moved by up to δ; not located → every ligand–pocket N/O/S pair within 3.5 Å with an atom the
    images do not name (``unnamed_atoms``) is consistent, the true one included. Value: the best answer's mean
    credit over that set (``tasks.credit``, N = 4 Å)."""
    located = entry["loss"] in (None, "criterion_margin")
    if located:
        mid = 0.5 * (structure.positions[bond_pair[0]] + structure.positions[bond_pair[1]])
        x, y, _ = np.asarray(camera.to_camera(mid), dtype=float).reshape(-1)[:3]
        xs = sorted({int(np.round(-x + e)) for e in (-delta, 0.0, delta)})
        ys = sorted({int(np.round(-y + e)) for e in (-delta, 0.0, delta)})
        answers = [f"move x {a}, move y {b}" for a in xs for b in ys]
    else:
        unnamed = set(pocket["unnamed_atoms"])
        answers = sorted({location_answer(structure, p, camera) for p in _candidate_pairs(structure, pocket, unnamed)}
                         | {location_answer(structure, bond_pair, camera)})
    return ItemCeiling(ceiling=_best_mean_credit(answers), n_consistent=len(answers), located=located,
                       loss=None if located and len(answers) == 1 else (entry["loss"] if not located else "rounding"))


def _candidate_pairs(structure, pocket: dict, unnamed: set) -> list[tuple[int, int]]:
    lig = pocket["ligand_atoms"]
    polar = set(np.flatnonzero(np.isin(structure.numbers, (7, 8, 16))).tolist())
    out = []
    for i in (k for k in lig if k in polar):
        d = np.linalg.norm(structure.positions - structure.positions[i], axis=1)
        for j in np.flatnonzero(d <= 3.5).tolist():
            if j in polar and j not in set(lig) and (i in unnamed or j in unnamed):
                out.append((i, j))
    return out


def _location_questions(truth, ceilings, cams, names, settings, images, source, start, rng, r3):
    """Seeded bonds of one complex as interaction-location questions, with both ceilings: its certain bonds, or
    when it has none its uncertain ones (the question names the pair; its midpoint does not depend on whether
    the pair is a bond); ``r3``: a record's R3 question by the bond it names."""
    s = truth.protonated.prepared.structure
    certain = {x["entry"] for x in ceilings["rendered"]["entries"]}
    pool = certain or {x["entry"] for x in ceilings["rendered"]["uncertain"] if x["bond"]}
    bonds = list({b.entry(): b for b in truth.bonds if b.entry() in pool}.values())  # one bond per entry
    pick = sorted(rng.permutation(len(bonds))[: settings.per_complex].tolist()) if bonds else []
    records, items = [], []
    for j, b in enumerate(bonds[i] for i in pick):
        e = b.entry()
        answer = location_answer(s, b.pair(), cams[0])
        q = question_text(settings.task, names, settings.pocket, f"'{e}'")
        records.append({**question_record(start + j, source, images, q, settings.task, answer, category="location"),
                        **r3(f"'{e}'")})
        per = {}
        for mode, c in ceilings.items():
            entry = next(x for x in c["entries"] + c["uncertain"] if x["entry"] == e)
            per[mode] = location_ceiling(s, b.pair(), cams[0], {**c, "ligand_atoms": list(
                truth.protonated.prepared.ligand_atoms)}, entry, settings.ceiling.delta)
        items.append(InteractionItemRecord(id=records[-1]["id"], source_id=source, entry=e, positive=True, n_bonds=1,
                                           **per, extra={} if e in certain else {"uncertain_bond": True}))
    return records, items


def _brief(c: dict) -> ItemCeiling:
    """A pocket-ligand item's ceiling: the figures of ``interactions.ceiling.pocket_ligand_ceiling``'s record."""
    return ItemCeiling(ceiling=c["ceiling"], n_true=c["n_true"], n_determined=c["n_determined"], losses=c["losses"],
                       margin_candidates=c["margin_candidates"], entries=c["entries"])


def summarise(items: list[InteractionItemRecord], n_boot: int, seed: int) -> InteractionSummary:
    """Mean ceiling (ideal, rendered) with bootstrap 95 % percentile intervals: all, per positive/negative,
    per number of bonds (0, 1, 2, 3+)."""
    def block(sel: list[InteractionItemRecord]) -> InteractionGroup:
        means = {}
        for mode in ("ideal", "rendered"):
            v = np.array([getattr(x, mode).ceiling for x in sel], dtype=float)
            if len(v) == 0:
                continue
            boots = v[bootstrap_indices(len(v), n_boot=n_boot, seed=seed)].mean(axis=1)
            lo, hi = percentile_interval(boots)
            means[mode] = MeanRange(mean=round(float(v.mean()), 6), lo=round(lo, 6), hi=round(hi, 6))
        return InteractionGroup(n=len(sel), **means)

    groups = [("all", items), ("positive", [x for x in items if x.positive]),
              ("negative", [x for x in items if not x.positive])]
    groups += [(f"bonds={nb}", [x for x in items if (str(x.n_bonds) if x.n_bonds < 3 else "3+") == nb])
               for nb in ("0", "1", "2", "3+")]
    blocks = {k: block(v) for k, v in groups if v}
    named = {k: blocks.pop(k) for k in InteractionSummary.KINDS if k in blocks}
    # the groups by number of bonds are the summary's other keys (InteractionSummary.groups types them)
    return InteractionSummary(**named, extra={k: g.to_dict() for k, g in blocks.items()})


def build_interaction_benchmark(complexes, out: str | os.PathLike, settings: InteractionExportSettings) -> Export:
    """Export ``complexes`` (a list of (path, ligand or None)) into ``out`` (module docstring); returns it
    (``formats.export.Export``). A complex that cannot be prepared is an InputError naming it (one line); a failed export removes
    the folders it created (``out``, ``out/images``, ``out/sidecars``) with what it wrote into them. The bootstrap
    draws are checked against the limits in force before any work, as the other exporters check theirs."""
    out = Path(out)
    active_limits().check_bootstrap(settings.n_boot, len(complexes), field="n_boot")  # before any work
    made = [d for d in (out, out / "images", out / "sidecars") if not d.exists()]
    (out / "images").mkdir(parents=True, exist_ok=True)
    try:
        return _build(complexes, out, settings)
    except BaseException:
        for d in reversed(made):
            shutil.rmtree(d, ignore_errors=True)
        raise


def _build(complexes, out: Path, settings: InteractionExportSettings) -> Export:
    rng = np.random.default_rng(settings.seed)
    records, items, truths, inputs = [], [], {}, []
    for path, ligand in complexes:
        r, it, t = _complex_questions(path, ligand, settings, out, len(records), rng)
        records += r
        items += it
        truths[f"{complex_name(path)}:{ligand or ''}"] = t
        rec = t.get("complex", t) if isinstance(t, dict) else {}  # docking: the complex record itself
        inputs.append({"name": complex_name(path), "ligand": ligand, "sha256": rec.get("sha256")})
    if not any(t.get("bonds") or t.get("uncertain") for t in truths.values() if isinstance(t, dict)) \
            and settings.task != "docking":
        raise InputError("no question: no complex has a hydrogen bond between ligand and pocket", field="INPUT")
    if not records:
        raise InputError("no question: every hydrogen bond between ligand and pocket is uncertain (criterion margin "
                         "or rotatable hydrogen; listed in the ground truth)", field="INPUT")
    r3 = [r.pop(R3_KEY) for r in records]  # the text arm's questions, apart from the image arm's records
    records = [with_constraints(r, settings.constraints) for r in records]  # the answers unchanged
    # every rung as a harness task (benchmark.arms): R3 the complex as text, choices-only the answer's form
    harness = write_harness_files(records, out, settings.task, r3=r3,
                                  choices_only=[answer_form(settings.task)] * len(records))
    draft = InteractionCertificate(format=FORMAT, task=settings.task, settings=settings.record(),
                                   libraries=library_versions(), ground_truth=truths, items=tuple(items),
                                   summary=summarise(items, settings.n_boot, settings.seed),
                                   complexes=inputs)  # in input order, by name: verify finds them inside the trusted folder
    # every float at its stated resolution and the digest, over the JSON written (formats.records.sealed)
    cert = InteractionCertificate.from_dict(sealed(draft.to_dict()))
    write_text_atomic(out / "certificate.json", json_dumps(cert.to_dict()))
    return write_export(out, "interaction", {"task": settings.task, "input": inputs, "settings": settings.record(),
                                             "n_questions": len(records), "items": question_items(records),
                                             "harness_files": harness}, cert)
