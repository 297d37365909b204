"""The fabrication audit: do the atoms a model says it sees exist in the rendered cell?

A model lists atoms (element + fractional or Cartesian coordinates). Each list is matched **one-to-one**
to the true atoms of the rendered conventional cell: an optimal assignment (Hungarian,
``scipy.optimize.linear_sum_assignment``) on **periodic minimum-image** distances that first maximises
the number of pairs within the tolerance and, among those, minimises their total distance. Matching is
done species-aware (pairs only within one element) and species-blind, over a sweep of tolerances.

Per item and tolerance: recall = matched / true atoms, precision = matched / emitted atoms, fabrication
rate = 1 − precision (emitted atoms with no true partner under the one-to-one matching — duplicates and
extra atoms count as fabricated). Medians across parseable items get percentile bootstrap intervals over
items (seeded). The null baseline replaces every emitted position by a uniform random fractional position
(same element list, same count), ``null_draws`` times per item with a generator seeded from
(seed, CRC-32 of the item id), so the null does not depend on item order. The null is run in both modes
(a long list of random points covers a small cell species-blind). Its statistic is the same as the
observed one: for each draw, the median recall across items; reported as the mean over
draws with the 2.5–97.5 % range of the draws, and a one-sided p-value (1 + #draws ≥ observed)/(1 + draws).

Distances: ``metric="fractional"`` is the Euclidean norm of the minimum-image fractional difference
(each component wrapped to [−0.5, 0.5)), in fractional units — the study's convention;
``metric="cartesian"`` is the minimum-image distance in Å (searched over the 27 neighbouring images).
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from viewcert import stats as st
from viewcert.attribution.table import read_json
from viewcert.elements import atomic_number
from viewcert.errors import InputError

DEFAULT_TOLERANCES = (0.02, 0.05, 0.075, 0.10, 0.15, 0.20, 0.25, 0.30)
HEADLINE_TOLERANCE = 0.15
DEFAULT_NULL_DRAWS = 20


# ---------------------------------------------------------------------- inputs
@dataclass(frozen=True)
class TrueCell:
    """The rendered cell: species, fractional coordinates (n, 3) and lattice rows (3, 3) in Å."""

    item_id: str
    species: tuple[str, ...]
    frac: np.ndarray
    lattice: np.ndarray

    def __post_init__(self) -> None:
        frac = np.asarray(self.frac, dtype=float).reshape(-1, 3)
        if frac.shape[0] != len(self.species) or frac.shape[0] == 0:
            raise InputError(f"{self.item_id}: {len(self.species)} species for {frac.shape[0]} sites",
                             field="species")
        object.__setattr__(self, "frac", frac)
        object.__setattr__(self, "lattice", np.asarray(self.lattice, dtype=float).reshape(3, 3))


@dataclass(frozen=True)
class EmittedAtoms:
    """One item's emitted atom list; ``parseable`` False when the model gave no usable list."""

    item_id: str
    species: tuple[str, ...]
    coords: np.ndarray
    coordinates: str = "fractional"
    parseable: bool = True
    reason: str = ""
    meta: Mapping = field(default_factory=dict)


MAX_EMITTED_COORDINATE = 1e6  # fractional units or Å: beyond this an emitted atom is an overflow, not a guess


def _norm_symbol(s: str) -> str:
    s = str(s).strip()
    return s[:1].upper() + s[1:].lower()


def read_emitted(path: str | Path, *, coordinates: str = "fractional") -> list[EmittedAtoms]:
    """Emitted atom lists from JSON: a list of ``{material_id | item_id | id, emitted | atoms:
    [[El, x, y, z], ...]}`` (the study's ``a3_raw_dev.json``; items with ``unparseable_extraction`` or no
    list are kept as unparseable), or an object ``{item_id: [[El, x, y, z], ...]}``. Malformed atoms raise,
    naming the item and atom."""
    if coordinates not in ("fractional", "cartesian"):
        raise InputError(f"coordinates must be 'fractional' or 'cartesian', got {coordinates!r}",
                         field="coordinates")
    path = Path(path)
    src = str(path)
    data = read_json(path)
    if isinstance(data, dict):
        data = [{"item_id": k, "emitted": v} for k, v in data.items()]
    if not isinstance(data, list):
        raise InputError("expected a list of items or an object keyed by item id", source=src)
    out = []
    seen: set[str] = set()
    for i, entry in enumerate(data):
        where = f"item {i + 1}"
        if not isinstance(entry, dict):
            raise InputError(f"{where} is not an object", source=src)
        iid = next((entry[k] for k in ("material_id", "item_id", "id") if k in entry), None)
        if iid is None:
            raise InputError(f"{where} has no material_id / item_id / id", source=src, field="material_id")
        iid = str(iid)
        if iid in seen:
            raise InputError(f"{where}: duplicate item id {iid!r}", source=src, field="material_id")
        seen.add(iid)
        atoms = entry.get("emitted", entry.get("atoms"))
        meta = {k: v for k, v in entry.items() if k not in ("emitted", "atoms")}
        if entry.get("unparseable_extraction") or not atoms:
            reason = "marked unparseable_extraction" if entry.get("unparseable_extraction") else "no atoms listed"
            out.append(EmittedAtoms(iid, (), np.zeros((0, 3)), coordinates, False, reason, meta))
            continue
        if not isinstance(atoms, list):
            raise InputError(f"{where} ({iid}): the atom list must be a list", source=src, field="emitted")
        species, xyz = [], []
        for j, a in enumerate(atoms):
            ok = isinstance(a, (list, tuple)) and len(a) == 4 and isinstance(a[0], str)
            if ok:
                try:
                    xyz.append([float(a[1]), float(a[2]), float(a[3])])
                except (TypeError, ValueError):
                    ok = False
            if not ok or not np.all(np.isfinite(xyz[-1])):
                raise InputError(f"{where} ({iid}), atom {j + 1}: expected [element, x, y, z], got {a!r}",
                                 source=src, field="emitted")
            if np.abs(xyz[-1]).max() > MAX_EMITTED_COORDINATE:
                raise InputError(f"{where} ({iid}), atom {j + 1}: coordinate {np.abs(xyz[-1]).max():.3g} beyond "
                                 f"{MAX_EMITTED_COORDINATE:g} (fractional or Å)", source=src, field="emitted")
            atomic_number(_norm_symbol(a[0]), source=src, field=f"{where} ({iid}), atom {j + 1}")
            species.append(_norm_symbol(a[0]))
        out.append(EmittedAtoms(iid, tuple(species), np.array(xyz), coordinates, True, "", meta))
    return out


def conventional_cell_from_cif(item_id: str, cif: str, *, symprec: float = 0.01,
                               angle_tolerance: float = 5.0) -> TrueCell:
    """The study's rendered cell: pymatgen's ``SpacegroupAnalyzer(s, symprec, angle_tolerance)
    .get_conventional_standard_structure()`` of the CIF."""
    from pymatgen.core import Structure as PmgStructure
    from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = PmgStructure.from_str(cif, fmt="cif")
        c = SpacegroupAnalyzer(s, symprec=symprec, angle_tolerance=angle_tolerance
                               ).get_conventional_standard_structure()
    return TrueCell(item_id, tuple(sp.symbol for sp in c.species), np.array(c.frac_coords),
                    np.array(c.lattice.matrix))


def true_cells_from_structures_json(path: str | Path, item_ids: Iterable[str], *, symprec: float = 0.01,
                                    angle_tolerance: float = 5.0) -> dict[str, TrueCell]:
    """Conventional cells for ``item_ids`` from the study's ``structures.json`` ({id: {cif, ...}})."""
    path = Path(path)
    data = read_json(path, missing="structures file not found")
    if not isinstance(data, dict):
        raise InputError("structures.json must be an object {id: {cif: ...}}", source=str(path))
    out = {}
    for iid in item_ids:
        entry = data.get(iid)
        if not isinstance(entry, dict) or "cif" not in entry:
            raise InputError(f"item {iid!r} has no CIF", source=str(path), field="cif")
        out[iid] = conventional_cell_from_cif(iid, entry["cif"], symprec=symprec,
                                              angle_tolerance=angle_tolerance)
    return out


def check_lattices(cells: Mapping[str, TrueCell], sidecar_path: str | Path, *, atol: float = 1e-3) -> list[str]:
    """Compare each cell's lattice lengths with the study's ``labels_sidecar.json`` conventional lattice;
    returns the ids that disagree (beyond ``atol`` Å)."""
    src = str(sidecar_path)
    side = read_json(Path(sidecar_path), missing="labels sidecar not found")  # received: regular, sized, strict
    if not isinstance(side, dict):
        raise InputError("the labels sidecar must be an object {id: {lattice: {a, b, c}}}", source=src)
    bad = []
    for iid, cell in cells.items():
        entry = side.get(iid)
        lat = entry.get("lattice") if isinstance(entry, dict) else None
        if not lat:
            continue
        abc = [lat.get(k) for k in ("a", "b", "c")] if isinstance(lat, dict) else []
        if len(abc) != 3 or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in abc):
            raise InputError(f"item {iid!r}: lattice needs numbers a, b and c (Å)", source=src,
                             field=f"{iid}.lattice")
        lengths = np.linalg.norm(cell.lattice, axis=1)
        if not np.allclose(lengths, abc, atol=atol):
            bad.append(iid)
    return sorted(bad)


# ---------------------------------------------------------------------- matching
_SHIFTS = np.array([[i, j, k] for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)], dtype=float)


def periodic_distances(a_frac: np.ndarray, b_frac: np.ndarray, *, lattice: np.ndarray | None = None,
                       metric: str = "fractional") -> np.ndarray:
    """(m, n) minimum-image distances between fractional coordinates a (m, 3) and b (n, 3)."""
    a = np.asarray(a_frac, dtype=float).reshape(-1, 3)
    b = np.asarray(b_frac, dtype=float).reshape(-1, 3)
    d = a[:, None, :] - b[None, :, :]
    d -= np.floor(d + 0.5)  # each component in [-0.5, 0.5)
    if metric == "fractional":
        return np.sqrt(np.einsum("mnk,mnk->mn", d, d))
    if metric == "cartesian":
        if lattice is None:
            raise InputError("the cartesian metric needs the lattice", field="lattice")
        lat = np.asarray(lattice, dtype=float)
        best = np.full(d.shape[:2], np.inf)
        for s in _SHIFTS:
            c = (d + s) @ lat
            best = np.minimum(best, np.sqrt(np.einsum("mnk,mnk->mn", c, c)))
        return best
    raise InputError(f"metric must be 'fractional' or 'cartesian', got {metric!r}", field="metric")


def match_count(dist: np.ndarray, tol: float, *, allowed: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """Largest one-to-one matching with every pair within ``tol`` (ties: least total distance).
    Returns (count, pairs (k, 2) as (row, col))."""
    m, n = dist.shape
    if m == 0 or n == 0:
        return 0, np.zeros((0, 2), dtype=np.int64)
    ok = dist <= tol
    if allowed is not None:
        ok &= allowed
    if not ok.any():
        return 0, np.zeros((0, 2), dtype=np.int64)
    big = min(m, n) * float(tol) + 1.0  # any in-tolerance pair beats every out-of-tolerance one
    cost = np.where(ok, dist, big)
    r, c = linear_sum_assignment(cost)
    keep = ok[r, c]
    return int(keep.sum()), np.stack([r[keep], c[keep]], axis=1)


def match_atoms(true_species: Sequence[str], true_frac: np.ndarray, em_species: Sequence[str],
                em_frac: np.ndarray, tol: float, *, species_aware: bool, lattice: np.ndarray | None = None,
                metric: str = "fractional", dist: np.ndarray | None = None) -> int:
    """Number of emitted atoms matched one-to-one to true atoms within ``tol``."""
    if dist is None:
        dist = periodic_distances(em_frac, true_frac, lattice=lattice, metric=metric)
    if not species_aware:
        return match_count(dist, tol)[0]
    em = np.asarray(em_species)
    tr = np.asarray(true_species)
    total = 0
    for el in sorted(set(em) & set(tr)):  # blocks by element: the same optimum, smaller problems
        rows, cols = np.flatnonzero(em == el), np.flatnonzero(tr == el)
        total += match_count(dist[np.ix_(rows, cols)], tol)[0]
    return total


# ---------------------------------------------------------------------- audit
@dataclass
class ExtractionAudit:
    per_item: pd.DataFrame  # item × tolerance × mode: n_true, n_emitted, matched, recall, precision, ...
    summary: pd.DataFrame  # tolerance × mode: medians with intervals, null, zero-match counts
    headline: dict
    settings: dict
    unparseable: list[str]


def _to_frac(e: EmittedAtoms, cell: TrueCell) -> np.ndarray:
    if e.coordinates == "fractional":
        return e.coords
    return np.linalg.solve(cell.lattice.T, e.coords.T).T


def _seed_for(seed: int, item_id: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(item_id.encode())])


_MODES = (("species-aware", True), ("species-blind", False))


def _match_items(parse_ok, cells, tols, metric, null_draws, seed) -> tuple[list[dict], dict]:
    """Per item, tolerance and mode: matched atoms, recall, precision, fabrication rate (rows), and the
    recall of each random-position null draw ((mode, tolerance) → (items, draws))."""
    rows = []
    null_recall = {(mode, t): np.zeros((len(parse_ok), null_draws)) for mode, _ in _MODES for t in tols}
    for i, e in enumerate(parse_ok):
        cell = cells[e.item_id]
        frac = _to_frac(e, cell)
        dist = periodic_distances(frac, cell.frac, lattice=cell.lattice, metric=metric)
        rng = _seed_for(seed, e.item_id)
        null_dists = [periodic_distances(rng.random(frac.shape), cell.frac, lattice=cell.lattice, metric=metric)
                      for _ in range(null_draws)]
        n_true, n_em = len(cell.species), len(e.species)
        for t in tols:
            for mode, aware in _MODES:
                m = match_atoms(cell.species, cell.frac, e.species, frac, t, species_aware=aware, dist=dist)
                rows.append({"item_id": e.item_id, "tolerance": t, "mode": mode, "n_true": n_true,
                             "n_emitted": n_em, "matched": m, "recall": m / n_true, "precision": m / n_em,
                             "fabrication_rate": 1 - m / n_em})
                for r, nd in enumerate(null_dists):
                    null_recall[(mode, t)][i, r] = match_atoms(cell.species, cell.frac, e.species, None, t,
                                                               species_aware=aware, dist=nd) / n_true
    return rows, null_recall


def _summary_rows(per_item: pd.DataFrame, null_recall: dict, idx, alpha: float, null_draws: int) -> list[dict]:
    """Per (mode, tolerance): medians with paired bootstrap intervals, zero-match items, the null's median
    recall, its draw interval and the null p-value of the observed median recall."""
    srows = []
    for (mode, t), sub in per_item.groupby(["mode", "tolerance"], sort=True):
        row = {"mode": mode, "tolerance": t, "items": len(sub), "zero_match_items": int((sub["matched"] == 0).sum())}
        for col in ("recall", "precision", "fabrication_rate"):
            v = sub[col].to_numpy()
            lo, hi = st.percentile_interval(np.median(v[idx], axis=1), alpha=alpha)
            row.update({f"median_{col}": float(np.median(v)), f"median_{col}_lo": lo, f"median_{col}_hi": hi,
                        f"mean_{col}": float(np.mean(v))})
        nr = null_recall[(mode, t)]
        per_draw = np.median(nr, axis=0)
        lo, hi = st.percentile_interval(per_draw, alpha=alpha)
        observed = row["median_recall"]
        row.update({"null_median_recall": float(per_draw.mean()),
                    "null_median_recall_draws_lo": lo, "null_median_recall_draws_hi": hi,
                    "null_median_of_item_means": float(np.median(nr.mean(axis=1))),
                    "null_p_value": float((1 + np.sum(per_draw >= observed)) / (1 + null_draws))})
        srows.append(row)
    return srows


def _headline(summary: pd.DataFrame, headline_tolerance: float, metric: str, n_items: int, n_parseable: int,
              n_unparseable: int) -> dict:
    """The figures reported first, at the headline tolerance (plain floats)."""
    h = summary[np.isclose(summary["tolerance"], headline_tolerance)].set_index("mode")
    aware, blind = h.loc["species-aware"], h.loc["species-blind"]
    headline = {
        "tolerance": headline_tolerance, "metric": metric, "items": n_items, "parseable": n_parseable,
        "unparseable": n_unparseable,
        "species_aware_median_recall": aware["median_recall"],
        "species_aware_median_recall_ci": [aware["median_recall_lo"], aware["median_recall_hi"]],
        "species_blind_median_recall": blind["median_recall"],
        "species_blind_median_recall_ci": [blind["median_recall_lo"], blind["median_recall_hi"]],
        "zero_match_items_species_aware": int(aware["zero_match_items"]),
        "zero_match_items_species_blind": int(blind["zero_match_items"]),
        "null_median_recall_species_aware": aware["null_median_recall"],
        "null_median_recall_draws_interval": [aware["null_median_recall_draws_lo"],
                                              aware["null_median_recall_draws_hi"]],
        "null_median_recall_species_blind": blind["null_median_recall"],
        "null_median_recall_species_blind_draws_interval": [blind["null_median_recall_draws_lo"],
                                                            blind["null_median_recall_draws_hi"]],
        "median_fabrication_rate_species_aware": aware["median_fabrication_rate"],
        "median_fabrication_rate_species_blind": blind["median_fabrication_rate"],
    }
    return {k: (float(v) if isinstance(v, np.floating) else
                [float(x) for x in v] if isinstance(v, list) else v) for k, v in headline.items()}


def audit_extraction(
    emitted: Sequence[EmittedAtoms],
    cells: Mapping[str, TrueCell],
    *,
    tolerances: Sequence[float] = DEFAULT_TOLERANCES,
    headline_tolerance: float = HEADLINE_TOLERANCE,
    metric: str = "fractional",
    null_draws: int = DEFAULT_NULL_DRAWS,
    seed: int = st.DEFAULT_SEED,
    n_boot: int = st.DEFAULT_N_BOOT,
    alpha: float = st.DEFAULT_ALPHA,
) -> ExtractionAudit:
    """The fabrication audit: each item's emitted atoms matched one to one (periodic minimum image) to its rendered cell.

    Species-aware and species-blind recall and fabrication rate at every tolerance, medians with bootstrap
    intervals, against a random-position null (uniform fractional positions, the emitted count) per item.

    Parameters
    ----------
    emitted : sequence of EmittedAtoms
        Each item's emitted atom list (positions as the model gave them, species).
    cells : mapping of str to TrueCell
        Item id → the rendered cell (species, fractional coordinates, lattice rows in Å).
    tolerances : sequence of float
        Matching tolerances reported (fractional units or Å by ``metric``).
    headline_tolerance : float
        The tolerance of the headline numbers (one of ``tolerances``).
    metric : str
        ``"fractional"``: distances in fractional coordinates; ``"cartesian"``: Å.
    null_draws : int
        Random-position null draws per item.
    seed : int
        Seed of the null draws and the bootstrap.
    n_boot : int
        Bootstrap resamples.
    alpha : float
        1 − the intervals' confidence level.

    Returns
    -------
    ExtractionAudit
        Per-item matches at every tolerance, the headline and the null.
    """
    tols = sorted({float(t) for t in (*tolerances, headline_tolerance)})
    if any(t <= 0 for t in tols):
        raise InputError("tolerances must be positive", field="tolerances")
    if null_draws < 1:
        raise InputError("null_draws must be >= 1", field="null_draws")
    items = sorted(emitted, key=lambda e: e.item_id)
    missing = [e.item_id for e in items if e.item_id not in cells]
    if missing:
        raise InputError(f"{len(missing)} item(s) have no true cell, first {missing[0]!r}", field="item_id")
    parse_ok = [e for e in items if e.parseable]
    unparseable = [e.item_id for e in items if not e.parseable]
    if not parse_ok:
        raise InputError("no parseable atom lists to audit", field="emitted")
    rows, null_recall = _match_items(parse_ok, cells, tols, metric, null_draws, seed)
    per_item = pd.DataFrame(rows).sort_values(["mode", "tolerance", "item_id"], kind="stable",
                                              ignore_index=True)
    idx = st.bootstrap_indices(len(parse_ok), n_boot=n_boot, seed=seed)
    summary = pd.DataFrame(_summary_rows(per_item, null_recall, idx, alpha, null_draws))
    headline = _headline(summary, headline_tolerance, metric, len(items), len(parse_ok), len(unparseable))
    settings = {"tolerances": tols, "headline_tolerance": headline_tolerance, "metric": metric,
                "null_draws": null_draws, "null": "uniform random fractional positions, emitted element list",
                "seed": seed, "n_boot": n_boot, "alpha": alpha,
                "matching": "one-to-one optimal assignment (max pairs within tolerance, then least total "
                            "distance) on periodic minimum-image distances"}
    return ExtractionAudit(per_item, summary, headline, settings, unparseable)
