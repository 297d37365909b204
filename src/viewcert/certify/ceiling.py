"""The render ceiling R1 of a benchmark: for every structure, can its label be recovered from the views?

Per item (``certify_item``):

1. read the structure; conventional standard cell (pymatgen orientation, ``std_symprec`` Å,
   ``std_angle_tolerance`` °) — the *rendered* cell — unless ``standardize=False``;
2. R0: the label of the rendered cell (spglib at τ, moyopy cross-check), compared with the dataset's own
   label where one exists; a mismatch is reported per item (``label_mismatch``), never resolved silently;
3. observations through the protocol's cameras (observation model: tiling, σ, visibility) → the oracle
   (``viewcert.oracle.triangulate.reconstruct`` at δ) → its phantom report against the rendered cell;
4. the label of the reconstruction (spglib at τ on the rendered lattice, moyopy cross-check);
5. correct when the reconstruction's label equals the reference label at the scored level (default
   crystal system; point group and space group are reported too). The reference is the dataset's label
   (``truth="dataset"``, the study's scoring) where it has that level, else the rendered cell's.

An item that is not correct carries reasons, most specific first: ``oracle_failed``, ``phantoms``,
``missing_atoms``, ``symmetry_changed`` (same atoms within δ, different label at τ),
``label_mismatch`` (the rendered cell itself does not carry the dataset's label),
``precondition_violated`` (same-label atoms ≤ 2δ apart, or fewer than two independent views),
``symmetry_undetermined``, or ``error`` (input or pipeline failure, with the stage).

Molecules (no lattice) have no symmetry label: they are scored on exact reconstruction (every atom
recovered within δ and no phantoms).

``summarize`` turns outcomes into the benchmark ceiling R1 = correct / n with an exact Clopper–Pearson
bound (one-sided lower and two-sided), the phantom census and the failures.
"""

from __future__ import annotations

import hashlib
import math
import traceback
from dataclasses import asdict, dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

import numpy as np

from viewcert.certify.bounds import clopper_pearson_interval, clopper_pearson_lower
from viewcert.certify.inputs import Item
from viewcert.certify.symmetry import CRYSTAL_SYSTEMS, LEVELS, SymmetryCheck, analyse_cell
from viewcert.errors import InputError
from viewcert.render.project import OBSERVE_MODES
from viewcert.structures import Structure

DEFAULT_DELTA = 0.01  # Å
REASON_ORDER = ("error", "oracle_failed", "phantoms", "missing_atoms", "symmetry_changed", "label_mismatch",
                "symmetry_undetermined", "precondition_violated")
MAX_PHANTOMS_LISTED = 24


@dataclass(frozen=True)
class CertifyConfig:
    """Every setting that changes an outcome; all of it is recorded in a certificate.

    delta (δ, Å): the oracle's extraction/merge tolerance. tau (τ, Å): spglib/moyopy symprec for both the
    rendered cell and the reconstruction (None → δ). angle_tolerance (°): for both. std_*: the
    conventional-cell standardization (the study: 0.01 Å, 5°, pymatgen orientation). score: the label
    level R1 counts (crystal_system | point_group | space_group). truth: "dataset" (the dataset's label
    where present) or "rendered" (the rendered cell's own label). periodic_merge: give the oracle the cell
    (merge by minimum image, points wrapped; required for tiled observations); False merges in Cartesian
    space like the study's released oracle (points are wrapped afterwards for spglib). supercell: render and
    reconstruct this repetition of the standardized cell as if it were the cell (how the study's tiled arm
    ran; ``tiling`` instead observes the tiles of the one cell and enforces translate consistency).
    observe: "ideal" (exact projections of every drawn atom), "visible" (exact projections of the atoms
    with at least ``min_pixels`` visible pixels in the rendered atom-ID buffer) or "pixel-centroid" (the
    centroid of those visible pixels, a perfect detector): the as-rendered ceilings of render.visibility."""

    protocol: str = "render-ceiling-5"
    views: tuple[str, ...] | None = None
    delta: float = DEFAULT_DELTA
    tau: float | None = None
    angle_tolerance: float = 5.0
    standardize: bool = True
    std_symprec: float = 0.01
    std_angle_tolerance: float = 5.0
    orientation: str = "pymatgen"
    tiling: tuple[int, int, int] = (1, 1, 1)
    supercell: tuple[int, int, int] = (1, 1, 1)
    sigma: float = 0.0
    sigma_unit: str = "px"
    seed: int = 0
    occlusion: bool = False
    pairs: str = "all"
    merge: str | None = None
    periodic_merge: bool = True
    score: str = "crystal_system"
    truth: str = "dataset"
    cross_check: bool = True
    cross_check_angle: bool = False
    confidence: float = 0.95
    image_size: int = 768
    observe: str = "ideal"
    min_pixels: int = 1

    def __post_init__(self) -> None:
        if not (isinstance(self.delta, int | float) and math.isfinite(self.delta) and self.delta > 0):
            raise InputError(f"delta must be a positive number of Å, got {self.delta}", field="delta")
        if self.tau is None:
            object.__setattr__(self, "tau", float(self.delta))
        if not (math.isfinite(self.tau) and self.tau > 0):
            raise InputError(f"tau (symprec) must be a positive number of Å, got {self.tau}", field="symprec")
        object.__setattr__(self, "delta", float(self.delta))
        object.__setattr__(self, "tau", float(self.tau))
        t = tuple(int(x) for x in self.tiling)
        if len(t) != 3 or min(t) < 1:
            raise InputError(f"tiling must be three positive integers, got {self.tiling}", field="tiling")
        object.__setattr__(self, "tiling", t)
        sc = tuple(int(x) for x in self.supercell)
        if len(sc) != 3 or min(sc) < 1:
            raise InputError(f"supercell must be three positive integers, got {self.supercell}", field="supercell")
        object.__setattr__(self, "supercell", sc)
        if self.views is not None:
            object.__setattr__(self, "views", tuple(self.views))
        if self.score not in LEVELS:
            raise InputError(f"score must be one of {LEVELS}, got {self.score!r}", field="score")
        if self.truth not in ("dataset", "rendered"):
            raise InputError(f"truth must be 'dataset' or 'rendered', got {self.truth!r}", field="truth")
        if self.pairs not in ("all", "first"):
            raise InputError(f"pairs must be 'all' or 'first', got {self.pairs!r}", field="pairs")
        if not self.periodic_merge and self.tiling != (1, 1, 1):
            raise InputError("tiled observations need periodic_merge=True (the oracle needs the cell)",
                             field="periodic_merge")
        if self.observe not in OBSERVE_MODES:
            raise InputError(f"observe must be one of {OBSERVE_MODES}, got {self.observe!r}", field="observe")
        if self.observe != "ideal" and self.sigma != 0:
            raise InputError("rendered observations (observe=visible|pixel-centroid) are noise-free: use sigma=0",
                             field="sigma")
        if int(self.min_pixels) != self.min_pixels or self.min_pixels < 1:
            raise InputError(f"min_pixels must be a positive integer, got {self.min_pixels}", field="min_pixels")
        if not 0 < self.confidence < 1:
            raise InputError(f"confidence must be in (0, 1), got {self.confidence}", field="confidence")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["views"] = None if self.views is None else list(self.views)
        d["tiling"] = list(self.tiling)
        d["supercell"] = list(self.supercell)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> CertifyConfig:
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        if kw.get("views") is not None:
            kw["views"] = tuple(kw["views"])
        for k in ("tiling", "supercell"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return cls(**kw)

    def with_(self, **kw) -> CertifyConfig:
        return replace(self, **kw)

    @property
    def visibility(self) -> str:
        return "occlusion" if self.occlusion else "strict"

    def observation_model(self):
        from viewcert.render.project import ObservationModel

        # the seed rule of viewcert.oracle.noise.noise_sweep for one structure (seed·1,000,003 + 0), so a
        # noisy certification and the oracle's Monte Carlo see the same draws
        return ObservationModel(tiling=self.tiling, sigma=self.sigma, sigma_unit=self.sigma_unit,
                                seed=int(self.seed) * 1_000_003, occlusion=self.occlusion)


# ----------------------------------------------------------------------------- helpers
def _r(x: float | None, digits: int = 9) -> float | None:
    """Fixed float formatting for certificates: ``digits`` significant digits, None for non-finite."""
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    y = float(f"{x:.{digits}g}")
    return 0.0 if y == 0.0 else y


def _digest_arrays(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
        h.update(b"|")
    return h.hexdigest()


def cell_digest(s: Structure) -> str:
    """SHA-256 of the cell: lattice and Cartesian positions rounded to 1e-8 Å (little-endian float64 bytes)
    and atomic numbers (int64)."""
    lat = np.zeros((3, 3)) if s.lattice is None else s.lattice
    return _digest_arrays(np.round(lat, 8).astype("<f8") + 0.0, np.round(s.positions, 8).astype("<f8") + 0.0,
                          np.asarray(s.numbers, dtype="<i8"))


def cameras_digest(cameras) -> str:
    """SHA-256 of the framed cameras (kind, rotation, centre or position, scale or focal, image size)."""
    parts = []
    for c in cameras:
        d = c.to_dict()
        parts.append(np.round(np.asarray(d["rotation"], dtype=np.float64), 12).ravel())
        parts.append(np.round(np.asarray(d.get("center", d.get("position")), dtype=np.float64), 9).ravel())
        parts.append(np.round(np.asarray([d.get("scale_px_per_angstrom", d.get("focal_px", 0.0)), d["width"],
                                          d["height"]], dtype=np.float64), 9))
    return _digest_arrays(*[p.astype("<f8") + 0.0 for p in parts])


@lru_cache(maxsize=64)
def get_protocol_views(name: str, views: tuple[str, ...] | None):
    from viewcert.cameras import get_protocol

    p = get_protocol(name)
    return p if views is None else p.subset(list(views))


def standardizer() -> str:
    """Which implementation builds the conventional cell: "viewcert.standardize" or, until that module
    exists, "pymatgen" (SpacegroupAnalyzer.get_conventional_standard_structure, the same cell)."""
    import importlib.util

    return "viewcert.standardize" if importlib.util.find_spec("viewcert.standardize") else "pymatgen"


def conventional_cell(s: Structure, *, symprec: float, angle_tolerance: float, orientation: str) -> Structure:
    """The conventional standard cell (``Structure.conventional_standard``), keeping the provenance."""
    if standardizer() == "pymatgen":
        if orientation != "pymatgen":
            raise InputError("orientation='spglib' needs viewcert.standardize", field="orientation")
        from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

        from viewcert.io.pymatgen_adapter import from_pymatgen, to_pymatgen

        conv = SpacegroupAnalyzer(to_pymatgen(s), symprec=symprec, angle_tolerance=angle_tolerance)
        return from_pymatgen(conv.get_conventional_standard_structure(), provenance=s.provenance)
    conv = s.conventional_standard(symprec=symprec, angle_tolerance=angle_tolerance, orientation=orientation)
    return replace(conv, provenance=s.provenance)


def _label_dict(check: SymmetryCheck | None) -> dict | None:
    if check is None or check.label is None:
        return None
    lab = check.label
    return {"crystal_system": lab.crystal_system, "point_group": lab.point_group, "space_group": lab.space_group,
            "symbol": lab.symbol}


def _xcheck(check: SymmetryCheck | None) -> str | None:
    if check is None or check.agree:
        return None
    return check.describe_disagreement()


def independent_views(cameras) -> bool:
    """Two or more views whose stacked projections have rank 3 (orthographic) / distinct centres."""
    rows = []
    for cam in cameras:
        if getattr(cam, "kind", "") == "orthographic":
            rows.append(np.asarray(cam.rotation)[:2])
        else:
            return len(cameras) >= 2
    if len(rows) < 2:
        return False
    return bool(np.linalg.matrix_rank(np.concatenate(rows), tol=1e-9) == 3)


def _moyo_angle(cfg: CertifyConfig) -> float | None:
    return cfg.angle_tolerance if cfg.cross_check_angle else None


# ----------------------------------------------------------------------------- per item
@dataclass
class Prepared:
    """An item read and standardized, with its rendered-cell labels per τ (cached for sweeps)."""

    item: Item
    cell: Structure | None
    error: str | None = None
    rendered: dict[tuple[float, float, bool], SymmetryCheck] = field(default_factory=dict)

    def rendered_check(self, cfg: CertifyConfig) -> SymmetryCheck | None:
        if self.cell is None or not self.cell.is_periodic:
            return None
        key = (cfg.tau, cfg.angle_tolerance, cfg.cross_check, cfg.cross_check_angle)
        if key not in self.rendered:
            self.rendered[key] = analyse_cell(self.cell.lattice, self.cell.frac_coords, self.cell.numbers,
                                              symprec=cfg.tau, angle_tolerance=cfg.angle_tolerance,
                                              cross_check=cfg.cross_check,
                                              moyo_angle_tolerance=_moyo_angle(cfg))
        return self.rendered[key]


def prepare(item: Item, cfg: CertifyConfig) -> Prepared:
    """Read the item and build the rendered cell; failures become ``Prepared.error`` (a value)."""
    try:
        s = item.read()
    except Exception as exc:  # noqa: BLE001 - any reader failure is an item error, not a crash
        return Prepared(item, None, f"read: {exc}")
    if cfg.standardize and s.is_periodic:
        try:
            s = conventional_cell(s, symprec=cfg.std_symprec, angle_tolerance=cfg.std_angle_tolerance,
                                  orientation=cfg.orientation)
        except Exception as exc:  # noqa: BLE001
            return Prepared(item, None, f"conventional cell: {exc}")
    if cfg.supercell != (1, 1, 1) and s.is_periodic:
        s = s.supercell(cfg.supercell)
    return Prepared(item, s)


def _base_record(item: Item) -> dict:
    return {"id": item.id, "input_sha256": item.sha256, "label_dataset": item.label,
            "label_source": item.label_source or None,
            "label_conflicts": list(item.label_conflicts) or None}


def _error_record(item: Item, stage_msg: str) -> dict:
    rec = _base_record(item)
    rec.update({"outcome": "error", "correct": False, "reasons": ["error"], "error": stage_msg[:500],
                "correct_by_level": None})
    return rec


def evaluate(prep: Prepared, cfg: CertifyConfig) -> dict:
    """One item's outcome under ``cfg`` (a JSON-ready dict with fixed float formatting)."""
    item = prep.item
    if prep.error is not None:
        return _error_record(item, prep.error)
    try:
        return _evaluate(prep, cfg)
    except Exception as exc:  # noqa: BLE001 - a pipeline failure is recorded on the item
        tb = traceback.extract_tb(exc.__traceback__)
        where = f"{tb[-1].name}" if tb else ""
        return _error_record(item, f"pipeline ({where}): {type(exc).__name__}: {exc}")


def _evaluate(prep: Prepared, cfg: CertifyConfig) -> dict:
    from viewcert.oracle.phantoms import analyse
    from viewcert.oracle.triangulate import reconstruct
    from viewcert.render.visibility import observe_as

    item, cell = prep.item, prep.cell
    periodic = cell.is_periodic
    rec_out = _base_record(item)
    protocol = get_protocol_views(cfg.protocol, cfg.views)
    rendered = prep.rendered_check(cfg)
    rendered_label = _label_dict(rendered)
    dataset = item.label or {}
    mismatch = []
    if rendered_label is not None:
        mismatch = [lv for lv in LEVELS if lv in dataset and dataset[lv] != rendered_label[lv]]
    cams = protocol.cameras(cell, tiling=cfg.tiling, width=cfg.image_size, height=cfg.image_size)
    # noise seed: cfg.seed·1,000,003 (oracle.noise's rule); visible/pixel-centroid read the rendered ID buffer
    obs = observe_as(cell, cams, cfg.observe, model=cfg.observation_model(), min_pixels=cfg.min_pixels)
    rec = reconstruct(obs, delta=cfg.delta, delta_unit="angstrom", pairs=cfg.pairs, merge=cfg.merge,
                      lattice=cell.lattice if (periodic and cfg.periodic_merge) else None,
                      visibility=cfg.visibility)
    rep = analyse(rec, cell, cfg.delta)
    indep = independent_views(cams)

    recon_check = None
    if rec.status == "ok" and periodic and len(rec.points):
        pts = np.asarray(rec.points, dtype=np.float64).reshape(-1, 3)
        frac = np.linalg.solve(cell.lattice.T, pts.T).T
        frac = frac - np.floor(frac)
        recon_check = analyse_cell(cell.lattice, frac, np.asarray(rec.labels), symprec=cfg.tau,
                                   angle_tolerance=cfg.angle_tolerance, cross_check=cfg.cross_check,
                                   moyo_angle_tolerance=_moyo_angle(cfg))
    recon_label = _label_dict(recon_check)

    n_ph = int(rep.n_phantoms)
    n_miss = len(rep.missing_atoms)
    sep_ok = bool(rep.separation_ok)
    unique = bool(rec.status == "ok" and rep.unique)
    exact = bool(rec.status == "ok" and rep.exact)

    reference: dict = {}
    ref_source: dict = {}
    for lv in LEVELS:
        if cfg.truth == "dataset" and lv in dataset:
            reference[lv], ref_source[lv] = dataset[lv], "dataset"
        elif rendered_label is not None:
            reference[lv], ref_source[lv] = rendered_label[lv], "rendered"
    if periodic:
        by_level = {lv: bool(recon_label is not None and lv in reference and recon_label[lv] == reference[lv])
                    for lv in LEVELS}
        correct = by_level[cfg.score]
    else:
        by_level = None
        correct = unique

    reasons: list[str] = []
    if rec.status != "ok":
        reasons.append("oracle_failed")
    if n_ph:
        reasons.append("phantoms")
    if n_miss:
        reasons.append("missing_atoms")
    if periodic and (rendered_label is None or (recon_label is None and rec.status == "ok")):
        reasons.append("symmetry_undetermined")
    if (periodic and recon_label is not None and rendered_label is not None
            and recon_label[cfg.score] != rendered_label[cfg.score]):
        if unique:
            reasons.append("symmetry_changed")
    if periodic and cfg.score in mismatch:
        reasons.append("label_mismatch")
    if sep_ok is False or not indep:
        reasons.append("precondition_violated")
    reasons = sorted(set(reasons), key=REASON_ORDER.index)

    phantoms = []
    if n_ph:
        pts = np.asarray(rep.phantoms, dtype=np.float64).reshape(-1, 3)
        labs = np.asarray(rep.phantom_labels)
        for k in range(min(len(pts), MAX_PHANTOMS_LISTED)):
            phantoms.append([int(labs[k])] + [_r(v, 7) for v in pts[k]])

    rec_out.update({
        "formula": cell.formula,
        "n_atoms": cell.n_atoms,
        "periodic": periodic,
        "cell_sha256": cell_digest(cell),
        "cameras_sha256": cameras_digest(cams),
        "label_rendered": rendered_label,
        "label_reconstructed": recon_label,
        "label_mismatch": mismatch or None,
        "cross_check": {k: v for k, v in (("rendered", _xcheck(rendered)), ("reconstructed", _xcheck(recon_check)))
                        if v} or None,
        "reference_source": ref_source.get(cfg.score),
        "oracle": {
            "status": rec.status,
            "reason": getattr(rec, "reason", None) or None,
            "n_points": int(rec.n_points),
            "n_phantoms": n_ph,
            "n_missing": n_miss,
            "n_recovered": int(rep.n_recovered),
            "max_position_error": _r(rep.max_position_error),
            "min_same_label_distance": _r(rep.min_same_label_distance),
            "margin": _r(rep.margin),
            "separation_ok": sep_ok,
            "warnings": list(rec.warnings) or None,
        },
        "phantoms": phantoms or None,
        "independent_views": indep,
        "unique": unique,
        "exact": exact,
        "certified": bool(unique and sep_ok and indep),
        "correct_by_level": by_level,
        "correct": bool(correct),
        "outcome": "correct" if correct else "incorrect",
        "reasons": reasons if not correct else [r for r in reasons if r in ("phantoms", "precondition_violated")],
    })
    return rec_out


def certify_item(item: Item, cfg: CertifyConfig) -> dict:
    """``evaluate(prepare(item, cfg), cfg)``."""
    return evaluate(prepare(item, cfg), cfg)


def certify_items_multi(item: Item, cfgs: tuple[CertifyConfig, ...]) -> list[dict]:
    """One item under several configurations that share the standardization: the structure is read and
    standardized once, the rendered-cell label computed once per τ."""
    prep = prepare(item, cfgs[0])
    return [evaluate(prep, c) for c in cfgs]


# ----------------------------------------------------------------------------- benchmark summary
def summarize(outcomes: list[dict], cfg: CertifyConfig) -> dict:
    """R1 = correct / n with exact Clopper–Pearson bounds; by level, by crystal system; phantom census;
    failures, label mismatches, cross-check disagreements and errors listed by id."""
    n = len(outcomes)
    if n == 0:
        raise InputError("nothing to summarize: no items", field="items")
    k = sum(1 for o in outcomes if o["correct"])
    lower = clopper_pearson_lower(k, n, cfg.confidence)
    two = clopper_pearson_interval(k, n, cfg.confidence)
    by_level = {}
    for lv in LEVELS:
        kk = sum(1 for o in outcomes if o.get("correct_by_level") and o["correct_by_level"][lv])
        by_level[lv] = {"correct": kk, "R1": _r(kk / n)}
    by_system: dict[str, dict] = {}
    for o in outcomes:
        cs = (o.get("label_dataset") or {}).get("crystal_system") or (o.get("label_rendered") or {}).get(
            "crystal_system") or "unknown"
        d = by_system.setdefault(cs, {"n": 0, "correct": 0})
        d["n"] += 1
        d["correct"] += int(o["correct"])
    order = {c: i for i, c in enumerate(CRYSTAL_SYSTEMS)}
    by_system = dict(sorted(by_system.items(), key=lambda kv: order.get(kv[0], 99)))
    oracle = [o.get("oracle") or {} for o in outcomes]
    census = {
        "items_with_phantoms": sum(1 for x in oracle if x.get("n_phantoms")),
        "total_phantoms": sum(x.get("n_phantoms") or 0 for x in oracle),
        "items_with_missing_atoms": sum(1 for x in oracle if x.get("n_missing")),
        "total_missing_atoms": sum(x.get("n_missing") or 0 for x in oracle),
        "items_oracle_failed": sum(1 for x in oracle if x.get("status") not in (None, "ok")),
        "items_unique": sum(1 for o in outcomes if o.get("unique")),
        "items_exact": sum(1 for o in outcomes if o.get("exact")),
        "items_certified": sum(1 for o in outcomes if o.get("certified")),
    }
    failures = [{"id": o["id"], "reasons": o["reasons"],
                 "predicted": (o.get("label_reconstructed") or {}).get(cfg.score),
                 "reference": _reference(o, cfg)} for o in outcomes if not o["correct"]]
    mism = [{"id": o["id"], "levels": o["label_mismatch"], "dataset": o["label_dataset"],
             "rendered": o["label_rendered"]} for o in outcomes if o.get("label_mismatch")]
    xc = [{"id": o["id"], **o["cross_check"]} for o in outcomes if o.get("cross_check")]
    errors = [{"id": o["id"], "error": o.get("error")} for o in outcomes if o["outcome"] == "error"]
    reasons: dict[str, int] = {}
    for f in failures:
        for r in f["reasons"]:
            reasons[r] = reasons.get(r, 0) + 1
    return {
        "n": n,
        "score": cfg.score,
        "truth": cfg.truth,
        "correct": k,
        "R1": _r(k / n),
        "bound": {**_bound_dict(lower), "text": lower.describe()},
        "interval": {**_bound_dict(two), "text": two.describe()},
        "by_level": by_level,
        "by_crystal_system": by_system,
        "phantom_census": census,
        "failure_reasons": dict(sorted(reasons.items(), key=lambda kv: REASON_ORDER.index(kv[0]))),
        "failures": failures,
        "label_mismatches": mism,
        "cross_check_disagreements": xc,
        "errors": errors,
    }


def _bound_dict(b) -> dict:
    d = b.to_dict()
    return {k: (_r(v) if isinstance(v, float) else v) for k, v in d.items()}


def _reference(o: dict, cfg: CertifyConfig) -> Any:
    src = o.get("reference_source")
    if src == "dataset":
        return (o.get("label_dataset") or {}).get(cfg.score)
    return (o.get("label_rendered") or {}).get(cfg.score)
