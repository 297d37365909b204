"""Views for interaction tasks: choose K directions so that the labels the hydrogen-bond answers need are
legible in some chosen view.

Universe: per complex, the labels each true pocket–ligand entry needs (``interactions.ceiling``'s rule 1):
the ligand atom's name label, the residue atom's name label and the residue's ``RES SEQ CHAIN`` label.
Weight of a needed label: the number of distinct true entries that need it (``weight="count"``), or the
same with each entry weighted 1 / (true entries of its complex) (``weight="misi"``: MiSI's list score per
complex, so every complex counts alike).

Legibility table: every candidate view is rendered (the ceiling's style and label style) once, with all
candidates framed together (one common scale, ``cameras.policy.frame``), and each label is legible or not
by ``render.labels``' rule (visible fraction ≥ ``min_visible``).

Objective (primary): the weighted coverage f(S) = Σ_j w_j [label j legible in some view of S]. It is
monotone submodular, so greedy selection (each step the candidate with the largest gain of f) reaches at
least (1 − 1/e) ≈ 0.632 of the best K-set's f on the table (Nemhauser, Wolsey & Fisher 1978); when it covers
every needed label it is optimal. The number of entries with all three labels covered is reported but not
the greedy objective (it is not submodular: no single view may complete any entry, and greedy on it would
stall). Ties, in order: more entries newly complete, more labels of any kind newly legible, the lower
candidate index; so the result is deterministic.

Candidates: ``fibonacci-N`` (the hemisphere spiral of ``cameras.protocols``) and, with ``antipodes``, each
direction's opposite too (labels and occlusion differ from behind, unlike orthographic point projections).
Kept views (``keep``) are chosen first. The chosen set frames at its own common scale when certified; the
design therefore re-measures its coverage through that framing (``checked``) and says when it differs.
Units: px (sizes), fractions (legibility); directions are world unit vectors into the scene.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from viewcert.cameras.protocol_files import ProtocolSpec
from viewcert.cameras.protocols import SAME_DIRECTION_DEG, Protocol, View, fibonacci_directions
from viewcert.certify.inputs import parse_complex_spec
from viewcert.design.designer import rotation_for
from viewcert.errors import InputError
from viewcert.interactions import hbond_truth
from viewcert.interactions.ceiling import CeilingSettings, label_set, pocket_ligand_ceiling, residue_key
from viewcert.render.labels import draw_labels
from viewcert.render.raster import build_scene, frame_cameras, render

WEIGHTS = ("count", "misi")
GUARANTEE = ("greedy weighted coverage of the needed labels: f(greedy) >= (1 - 1/e) f(best K-set) on the "
             "legibility table (monotone submodular; Nemhauser, Wolsey & Fisher 1978)")


@dataclass(frozen=True)
class LegibilityConfig:
    """K views, ``fibonacci-candidates`` directions (+ their antipodes), image size (px), the ceiling's
    settings (style, label style, δ), the weighting and kept views (chosen first)."""

    views: int = 6
    candidates: int = 27
    antipodes: bool = True
    width: int = 1160
    height: int = 803
    ceiling: CeilingSettings = field(default_factory=CeilingSettings)
    weight: str = "count"
    keep: tuple = field(default=())

    def __post_init__(self) -> None:
        if int(self.views) != self.views or not 1 <= self.views <= 64:
            raise InputError(f"views must be an integer in 1..64, got {self.views}", field="views")
        if int(self.candidates) != self.candidates or not 2 <= self.candidates <= 200:
            raise InputError(f"candidates must be fibonacci-N with N in 2..200, got {self.candidates}",
                             field="candidates")
        if self.weight not in WEIGHTS:
            raise InputError(f"weight must be one of {WEIGHTS}, got {self.weight!r}", field="weight")
        if len(self.keep) > self.views:
            raise InputError(f"{len(self.keep)} kept views for a {self.views}-view design", field="keep")
        if self.views > len(self.keep) + self.candidates * (2 if self.antipodes else 1):
            raise InputError(f"{self.views} views asked of {self.candidates} candidate directions", field="views")

    def to_dict(self) -> dict:
        return {"objective": "legibility", "views": self.views, "candidates": f"fibonacci-{self.candidates}",
                "antipodes": self.antipodes, "size": [self.width, self.height], "weight": self.weight,
                "ceiling": self.ceiling.to_dict(), "keep": [v.name for v in self.keep], "guarantee": GUARANTEE}


def candidate_views(config: LegibilityConfig) -> tuple[View, ...]:
    """Kept views, then fibNN (hemisphere spiral) and, with antipodes, fibNN-back (the opposite direction)."""
    out = list(config.keep)
    kept = np.array([v.direction for v in config.keep]).reshape(-1, 3)
    for i, d in enumerate(fibonacci_directions(config.candidates)):
        for name, v in ((f"fib{i:02d}", d), (f"fib{i:02d}-back", -d))[: 2 if config.antipodes else 1]:
            if not (kept @ v >= math.cos(math.radians(SAME_DIRECTION_DEG))).any():  # a kept view's twin
                out.append(View(name, rotation_for(v)))
    return tuple(out)


def needed_labels(truth, names) -> list[tuple[str, tuple[int, int, int]]]:
    """(entry, (ligand atom label, residue atom label, residue label)) per distinct true entry: indices into
    the labels of ``interactions.ceiling.label_set``, whose ``names`` (label index → what it names) is given."""
    s = truth.protonated.prepared.structure
    atom_label = {what: j for j, (kind, what) in names.items() if kind == "atom"}
    res_label = {what: j for j, (kind, what) in names.items() if kind == "residue"}
    out = {}
    for b in truth.bonds:
        r, lig = b.residue_site.index, b.ligand_site.index
        out.setdefault(b.entry(), (atom_label[lig], atom_label[r], res_label[residue_key(s, r)]))
    return list(out.items())


def legibility_table(structure, labels, cameras, settings: CeilingSettings) -> np.ndarray:
    """(n_views, n_labels) bool: label legible in the view (``render.labels``' rule, ID buffers only)."""
    scene = build_scene(structure, settings.style)
    rows = [draw_labels(render(scene, cam, rgb=False), labels, settings.labels).legible() for cam in cameras]
    return np.array(rows, dtype=bool).reshape(len(cameras), len(labels))


@dataclass(frozen=True, eq=False)
class Coverage:
    """The legibility problem over all complexes: ``table`` (n_views, n_labels) bool, label weights (0 for a
    label no entry needs) and per entry its label columns and complex name."""

    table: np.ndarray
    weights: np.ndarray
    needs: tuple[tuple[int, int, int], ...]
    entries: tuple[tuple[str, str], ...]  # (complex, entry)


def coverage_problem(truths: dict, views, config: LegibilityConfig) -> Coverage:
    """The legibility table of ``views`` (framed together, per complex) for the complexes ``truths``
    (name → HBondTruth), their label columns side by side."""
    spec = ProtocolSpec(Protocol("candidates", tuple(views)), width=config.width, height=config.height)
    tables, weights, needs, entries, offset = [], [], [], [], 0
    for name, t in truths.items():
        s = t.protonated.prepared.structure
        labels, names = label_set(s, t.protonated.prepared.ligand_atoms)
        cams = frame_cameras(s, spec, style=config.ceiling.style, width=config.width, height=config.height)
        tables.append(legibility_table(s, labels, cams, config.ceiling))
        w = np.zeros(len(labels))
        need = needed_labels(t, names)
        for e, cols in need:
            for j in cols:
                w[j] += 1.0 / len(need) if config.weight == "misi" else 1.0
            needs.append(tuple(c + offset for c in cols))
            entries.append((name, e))
        weights.append(w)
        offset += len(labels)
    return Coverage(np.concatenate(tables, axis=1), np.concatenate(weights), tuple(needs), tuple(entries))


def entries_complete(cov: Coverage, covered: np.ndarray) -> int:
    """Entries whose three labels are all in ``covered`` (n_labels,) bool."""
    return sum(1 for cols in cov.needs if covered[list(cols)].all())


def greedy_cover(cov: Coverage, k: int, forced: int = 0) -> list[int]:
    """Indices of ``k`` rows of ``cov.table`` (the first ``forced`` rows always): greedy on the weighted
    coverage, ties by entries newly complete, labels newly legible, then the lower index (module docstring)."""
    if not forced <= k <= len(cov.table):
        raise InputError(f"cannot choose {k} of {len(cov.table)} views ({forced} kept)", field="views")
    chosen = list(range(forced))
    covered = cov.table[:forced].any(axis=0) if forced else np.zeros(cov.table.shape[1], dtype=bool)
    while len(chosen) < k:
        best, best_key = -1, None
        base = entries_complete(cov, covered)
        for i in range(len(cov.table)):
            if i in chosen:
                continue
            new = cov.table[i] & ~covered
            key = (float(cov.weights[new].sum()), entries_complete(cov, covered | new) - base, int(new.sum()))
            if best_key is None or key > best_key:
                best, best_key = i, key
        chosen.append(best)
        covered |= cov.table[best]
    return chosen


def coverage_summary(cov: Coverage, rows) -> dict:
    """Weighted coverage, needed labels covered and entries complete by the views ``rows``, per complex."""
    covered = cov.table[list(rows)].any(axis=0) if len(rows) else np.zeros(cov.table.shape[1], dtype=bool)
    need = cov.weights > 0
    per: dict[str, dict] = {}
    for (name, e), cols in zip(cov.entries, cov.needs, strict=True):
        d = per.setdefault(name, {"entries": 0, "complete": 0, "hidden": []})
        d["entries"] += 1
        ok = bool(covered[list(cols)].all())
        d["complete"] += ok
        if not ok:
            d["hidden"].append(e)
    return {"weighted_coverage": float(cov.weights[covered].sum()), "weight_total": float(cov.weights.sum()),
            "needed_labels": int(need.sum()), "needed_covered": int((need & covered).sum()),
            "entries": len(cov.needs), "entries_complete": entries_complete(cov, covered), "per_complex": per}


@dataclass(frozen=True, eq=False)
class LegibilityDesign:
    """The chosen views as a protocol, coverage on the candidates' table and re-measured on the chosen set's
    own framing (``checked``), and the config."""

    protocol: Protocol
    designed: dict
    checked: dict
    config: LegibilityConfig

    def spec(self) -> ProtocolSpec:
        return ProtocolSpec(self.protocol, width=self.config.width, height=self.config.height)

    def to_dict(self) -> dict:
        return {"protocol": self.protocol.to_dict(), "config": self.config.to_dict(), "designed": self.designed,
                "checked": self.checked, "directions": [v.direction.tolist() for v in self.protocol.views]}


def design_legibility(truths: dict, config: LegibilityConfig, name: str | None = None) -> LegibilityDesign:
    """Choose ``config.views`` views for the complexes ``truths`` (name → HBondTruth; module docstring).

    Parameters
    ----------
    truths : dict
        Complex name → its ``interactions.HBondTruth`` (at least one bond among them).
    config : LegibilityConfig
        K views, candidate directions, image size (px), the ceiling's settings, weighting and kept views.
    name : str, optional
        The designed protocol's name.

    Returns
    -------
    LegibilityDesign
        The chosen views as a protocol (world→camera rotations), their label coverage on the candidates' table
        and re-measured on the chosen set's own framing.
    """
    if not truths or not any(t.bonds for t in truths.values()):
        raise InputError("no hydrogen bond between ligand and pocket in any complex: no label to make legible",
                         field="INPUT")
    views = candidate_views(config)
    cov = coverage_problem(truths, views, config)
    rows = greedy_cover(cov, config.views, forced=len(config.keep))
    protocol = Protocol(name or f"legibility-{config.views}", tuple(views[i] for i in rows),
                        f"{config.views} views chosen for label legibility of hydrogen-bond entries "
                        f"(greedy coverage over fibonacci-{config.candidates}"
                        f"{' and antipodes' if config.antipodes else ''})")
    own = coverage_problem(truths, protocol.views, config)
    return LegibilityDesign(protocol, coverage_summary(cov, rows), coverage_summary(own, range(len(rows))), config)


def complex_truths(input_spec: str, *, crosscheck: bool = False) -> dict:
    """name → HBondTruth of ``complex:PATH[#ligand=RES,pocket=8]``: one complex, or a folder of complex folders
    (those with a ligand.sdf use it; ``ligand=`` names the others'), as ``build-benchmark`` reads them."""
    if not str(input_spec).startswith("complex:"):
        raise InputError("the legibility objective reads complex:PATH[#ligand=RES,pocket=8]", source=str(input_spec),
                         field="INPUT")
    from viewcert.io.complex import ComplexFiles, complex_name, complexes_in  # lazy: gemmi

    path, ligand, pocket = parse_complex_spec(input_spec)
    if not isinstance(path, ComplexFiles) and not path.exists():
        raise InputError(f"complex input {str(path)!r} does not exist", source=input_spec, field="INPUT")
    items = complexes_in(path, ligand)
    return {complex_name(p): hbond_truth(p, ligand=lig, pocket=pocket, crosscheck=crosscheck) for p, lig in items}


def certified_ceilings(truths: dict, protocol, config: LegibilityConfig) -> dict:
    """name → as-rendered and ideal pocket–ligand ceilings (``interactions.ceiling``) through ``protocol`` (a
    protocol file, name or spec) framed as the interaction export frames it (None: no bond to score).

    Parameters
    ----------
    truths : dict
        Complex name → its ``interactions.HBondTruth``.
    protocol : str, Path or ProtocolSpec
        The views: a protocol file, a registered name or a spec.
    config : LegibilityConfig
        Image size (px), style, label style and δ (Å) of the ceilings.

    Returns
    -------
    dict
        Name → {as-rendered and ideal pocket–ligand ceilings (expected MiSI list score, 0–1)}, or None when the
        complex has no bond to score.
    """
    out = {}
    for name, t in truths.items():
        s = t.protonated.prepared.structure
        cams = frame_cameras(s, protocol, style=config.ceiling.style, width=config.width, height=config.height)
        row = {}
        for mode in ("rendered", "ideal"):
            c = pocket_ligand_ceiling(t, cams, config.ceiling, mode)
            row[mode] = {k: c[k] for k in ("ceiling", "n_true", "n_determined", "losses")}
        out[name] = row
    return out
