"""One item's outcome: can its label be recovered from the views?

1. read the structure; conventional standard cell (pymatgen orientation, ``std_symprec`` Å,
   ``std_angle_tolerance`` °) — the *rendered* cell — unless ``standardize=False``;
2. R0: the label of the rendered cell (spglib at τ, moyopy cross-check), compared with the dataset's own
   label where one exists; a mismatch is reported per item (``label_mismatch``), never resolved silently.
   The cell as read is labelled too (spglib at τ and the angle tolerance, from the standardisation's
   dataset when the tolerances are the same; moyopy cross-check, ``cross_check.input``): when the rendered
   cell's space group differs from it, the standardisation raised the symmetry and the item is flagged
   (``symmetry_raised``); the input's label is then the truth at the stated tolerances;
3. observations through the protocol's cameras (observation model: tiling, σ, visibility) → the oracle
   (``viewcert.oracle.reconstruct`` at δ) → its phantom report against the rendered cell;
4. the label of the reconstruction (spglib at τ on the rendered lattice, moyopy cross-check);
5. correct when the reconstruction's label equals the reference label at the scored level (default
   crystal system; point group and space group are reported too). The reference is the dataset's label
   (``truth="dataset"``, the study's scoring) where it has that level, else the rendered cell's.

An item that is not correct carries reasons, most specific first: ``oracle_failed``, ``phantoms``,
``missing_atoms``, ``symmetry_changed`` (same atoms within δ, different label at τ),
``symmetry_raised`` (the standardisation gave the rendered cell another space group than spglib finds on
the cell as read at τ and the angle tolerance; the item's ``symmetry_raised`` field holds both labels and
the reference is the input's), ``label_mismatch`` (the rendered cell itself does not carry the dataset's
label),
``precondition_violated`` (same-label atoms ≤ 2δ apart, or fewer than two independent views),
``symmetry_undetermined``, or ``error`` (input or pipeline failure, with the stage).

Molecules (no lattice) have no symmetry label: they are scored on exact reconstruction (every atom
recovered within δ and no phantoms).
"""

from __future__ import annotations

import dataclasses
import traceback
from dataclasses import dataclass, field

import numpy as np

from viewcert.cameras.conditioning import independent_views
from viewcert.cameras.framing import framing_points
from viewcert.cameras.policy import frame
from viewcert.certify.config import CertifyConfig
from viewcert.certify.digests import cameras_digest, cell_digest
from viewcert.certify.inputs import Item
from viewcert.certify.molecule import bond_graph, molecule_outcome
from viewcert.errors import InputError
from viewcert.formats.item_sections import OracleReport, SymmetryRaised, UniquenessMargin
from viewcert.formats.model import ABSENT
from viewcert.formats.records import ItemOutcome
from viewcert.numeric import sig
from viewcert.observe.project import Observations
from viewcert.oracle.margin import uniqueness_margin
from viewcert.oracle.phantoms import PhantomReport, analyse
from viewcert.oracle.triangulate import Reconstruction, reconstruct, reconstruct_batch
from viewcert.render.visibility import observe_as
from viewcert.structures import Structure
from viewcert.symmetry import reuse
from viewcert.symmetry.labels import LEVELS, SymmetryCheck
from viewcert.symmetry.standardize import conventional_standard_cell, standardize_with_dataset

REASON_ORDER = ("error", "oracle_failed", "phantoms", "missing_atoms", "symmetry_changed", "symmetry_raised",
                "label_mismatch", "symmetry_undetermined", "precondition_violated", "point_group_changed", "handedness_ambiguous")
MAX_PHANTOMS_LISTED = 24
STANDARDIZER = "viewcert.symmetry.standardize"  # recorded in certificates


def conventional_cell(s: Structure, *, symprec: float, angle_tolerance: float, orientation: str) -> Structure:
    """The conventional standard cell (``viewcert.symmetry.conventional_standard_cell``), keeping the
    provenance.

    Parameters
    ----------
    s : Structure
        A periodic structure (Cartesian Å).
    symprec : float
        τ (Å).
    angle_tolerance : float
        spglib's angle tolerance (degrees).
    orientation : str
        ``"pymatgen"`` (pymatgen's setting, fixed by lengths and angles) or ``"spglib"``.

    Returns
    -------
    Structure
        The conventional standard cell (Cartesian Å, lattice rows), with ``s``'s provenance.
    """
    conv = conventional_standard_cell(s, symprec=symprec, angle_tolerance=angle_tolerance, orientation=orientation)
    return conv.with_provenance(s.provenance)


def label_dict(check: SymmetryCheck | None) -> dict | None:
    return None if check is None else check.label_dict()


def _xcheck(check: SymmetryCheck | None) -> str | None:
    if check is None or check.agree:
        return None
    return check.describe_disagreement()


def margin_record(cell: Structure, cameras) -> UniquenessMargin:
    """Uniqueness margin δ* (Å) of ``cell`` through the cameras' world→camera rotations
    (``viewcert.oracle.margin.Margin.record``, the oracle's own values), typed; a search that cannot run is
    recorded, not an item error. δ* is defined for orthographic views only: perspective cameras record why it is
    absent."""
    if any(getattr(cam, "kind", "") != "orthographic" for cam in cameras):
        return UniquenessMargin(delta_star=None, error="δ* is defined for orthographic views only (these cameras "
                                                       "are perspective): not computed")
    try:
        m = uniqueness_margin(cell, np.array([np.asarray(cam.rotation) for cam in cameras])).record()
    except InputError as exc:
        return UniquenessMargin(delta_star=None, error=str(exc)[:200])
    return UniquenessMargin(**m)  # the oracle layer's values (it knows no format), each under its own field


def item_cameras(cell: Structure, cfg: CertifyConfig) -> tuple:
    """The cameras of one item on its rendered cell: ``viewcert.cameras.policy.frame`` of the configuration's
    resolved protocol under ``cfg.framing_policy()``. Orthographic protocols: letterbox-framed per view
    (molecules at ``cfg.molecules.molecule_scale``), ``cfg.observation.image_size`` px, on the atom centres
    or (``frame_on = "drawn"``) the drawn spheres. Perspective protocols: pinholes at the protocol's positions (world Å in
    the rendered cell's frame) or, when no view has one, framed on the drawn points (atoms of the tiling and
    the cell box); InputError naming the view's position when a camera lies inside the drawn points'
    bounding sphere or a drawn point lies at or behind a camera plane."""
    return frame(cfg.protocol, cell, _untiled(cfg.framing_policy(), cell))


def _untiled(setting, cell: Structure):
    """A framing policy or observation model with the tiling of ``cell``: the configuration's for a crystal, one
    cell for a molecule (a molecule is never tiled, whatever the tiling the crystals of the run use)."""
    return setting if cell.is_periodic else dataclasses.replace(setting, tiling=(1, 1, 1))


def _perspective_extras(cell: Structure, cfg: CertifyConfig, cams) -> tuple[bool, dict]:
    """(independent_views, the record's camera positions) of an item: perspective cameras are judged on the
    drawn atoms and their positions (Å, 9 significant digits) recorded per view; orthographic: as before (no
    positions: ABSENT)."""
    if not any(getattr(c, "kind", "") == "perspective" for c in cams):
        return independent_views(cams), ABSENT
    atoms = framing_points(cell, tiling=cfg.observation.tiling if cell.is_periodic else (1, 1, 1), draw_box=False)
    # published images of one item may mix kinds (one tool orthographic, another perspective): positions of the
    # perspective views only
    return independent_views(cams, atoms), {c.name: [sig(x, 9) for x in c.position] for c in cams
                                            if getattr(c, "kind", "") == "perspective"}


def check_placements(items, cfg: CertifyConfig) -> None:
    """Before any certification: with a perspective protocol whose views state positions, build every item's
    cameras on its rendered cell, so that a camera inside a structure or looking away is one InputError
    (naming the view's position and the item) rather than an item error after the work. Items that cannot be
    read or standardized are left to certify, which reports them."""
    spec = cfg.protocol.spec
    if spec.kind != "perspective" or spec.positions[0] is None:
        return
    for item in items:
        prep = prepare(item, cfg)
        if prep.cell is None:
            continue
        try:
            item_cameras(prep.cell, cfg)
        except InputError as exc:
            err = InputError(f"{exc} (item {item.id})")
            err.source, err.field = exc.source, exc.field
            raise err from None


def _moyo_angle(cfg: CertifyConfig) -> float | None:
    return cfg.symmetry.angle_tolerance if cfg.symmetry.cross_check_angle else None


@dataclass
class Prepared:
    """An item read and standardized, with its rendered-cell labels per τ (cached for sweeps)."""

    item: Item
    cell: Structure | None
    error: str | None = None
    rendered: dict[tuple[float, float, bool], SymmetryCheck] = field(default_factory=dict)
    std: dict | None = None  # the standardisation's spglib dataset (viewcert.symmetry.reuse)
    source: Structure | None = None  # the periodic cell as read, when it was standardised
    source_std: dict | None = None  # the standardisation's dataset of ``source`` (kept after a supercell)
    inputs: dict[tuple, SymmetryCheck] = field(default_factory=dict)

    def rendered_check(self, cfg: CertifyConfig) -> SymmetryCheck | None:
        """Labels of the rendered cell (``reuse.label_cell``: spglib's label from the standardisation's
        dataset where its guard holds and ``cfg.symmetry.label_shortcuts``); None for a molecule."""
        if self.cell is None or not self.cell.is_periodic:
            return None
        key = _label_key(cfg)
        if key not in self.rendered:
            c, src = self.cell, reuse.Reuse(self.std, conventional=True, input_check=self.input_check(cfg))
            self.rendered[key] = reuse.label_cell(c.lattice, c.frac_coords, c.numbers, src, **_label_options(cfg))
        return self.rendered[key]

    def input_check(self, cfg: CertifyConfig) -> SymmetryCheck | None:
        """Labels of the cell as read at τ and the angle tolerance (spglib from the standardisation's dataset
        when its tolerances are these, else a fresh call; moyopy cross-check as for the rendered cell); None
        when nothing was standardised."""
        if self.source is None:
            return None
        key = _label_key(cfg)
        if key not in self.inputs:
            src = self.source
            self.inputs[key] = reuse.label_cell(src.lattice, src.frac_coords, src.numbers,
                                                reuse.Reuse(self.source_std), **_label_options(cfg))
        return self.inputs[key]


def _label_key(cfg: CertifyConfig) -> tuple:
    """The settings a cell's labels depend on (``Prepared``'s caches)."""
    sym = cfg.symmetry
    return sym.tau, sym.angle_tolerance, sym.cross_check, sym.cross_check_angle, sym.label_shortcuts


def _label_options(cfg: CertifyConfig, *, reconstruction: bool = False) -> dict:
    """``reuse.label_cell``'s settings under ``cfg``: the reuse switch (``label_shortcuts``), τ (Å), the
    angle tolerance (°) and the moyopy cross-check (on a reconstruction only with
    ``cross_check_reconstruction``)."""
    sym = cfg.symmetry
    return {"reuse": sym.label_shortcuts, "symprec": sym.tau, "angle_tolerance": sym.angle_tolerance,
            "cross_check": sym.cross_check and (sym.cross_check_reconstruction or not reconstruction),
            "moyo_angle_tolerance": _moyo_angle(cfg)}


def symmetry_raised(input_check: SymmetryCheck | None, rendered: SymmetryCheck | None) -> SymmetryRaised | None:
    """Both labels when the rendered (standardised) cell's space group differs from the input's at the same
    tolerances (spglib's), else None."""
    a, b = label_dict(input_check), label_dict(rendered)
    if a is None or b is None or a["space_group"] == b["space_group"]:
        return None
    return SymmetryRaised(input=a, rendered=b, levels=[lv for lv in LEVELS if a[lv] != b[lv]])


def prepare(item: Item, cfg: CertifyConfig) -> Prepared:
    """Read the item and build the rendered cell; failures become ``Prepared.error`` (a value).

    Parameters
    ----------
    item : Item
        One item of a dataset.
    cfg : CertifyConfig
        The certification's settings (protocol, δ and τ in Å, observation model, levels).

    Returns
    -------
    Prepared
        The structure as read, the rendered (conventional) cell and its spglib dataset, or the error.
    """
    try:
        s = item.read()
    except Exception as exc:  # noqa: BLE001 - any reader failure is an item error, not a crash
        return Prepared(item, None, f"read: {exc}")
    return _prepared(item, s, cfg)


def _prepared(item: Item, s: Structure, cfg: CertifyConfig) -> Prepared:
    """:func:`prepare` after the read: the rendered cell of the structure ``s`` read from ``item``."""
    std = source = None
    sym = cfg.symmetry
    if sym.standardize and s.is_periodic:
        try:
            conv, std = standardize_with_dataset(s, symprec=sym.std_symprec, angle_tolerance=sym.std_angle_tolerance,
                                                 orientation=sym.orientation)
            source, s = s, conv.with_provenance(s.provenance)
            item.check_size(s.n_atoms)  # the rendered cell can hold more atoms than the file (centring)
        except Exception as exc:  # noqa: BLE001
            return Prepared(item, None, f"conventional cell: {exc}")
    source_std = std
    if sym.supercell != (1, 1, 1) and s.is_periodic:
        s, std = s.supercell(sym.supercell), None
    return Prepared(item, s, std=std, source=source, source_std=source_std)


def _base_record(item: Item) -> dict:
    """The keyword arguments of :class:`ItemOutcome` every item has: its id, input digest and dataset label."""
    return dict(id=item.id, input_sha256=item.sha256, label_dataset=item.label,
                label_source=item.label_source or None, label_conflicts=list(item.label_conflicts) or None)


def _error_record(item: Item, stage_msg: str) -> ItemOutcome:
    return ItemOutcome(**_base_record(item), outcome="error", correct=False, reasons=["error"],
                       error=stage_msg[:500], correct_by_level=None)


@dataclass(frozen=True)
class Staged:
    """One item's values from the evaluator's stages (:func:`evaluate_all`), after its labels: the cameras,
    the observations, the reconstruction (``oracle.reconstruct`` at δ), its phantom report against the rendered
    cell, whether the views are independent, the record's camera positions (perspective protocols; else ABSENT)
    and the reconstruction's labels (``_reconstruction_check``; None for a molecule)."""

    cameras: tuple
    observations: Observations
    reconstruction: Reconstruction
    phantoms: PhantomReport
    independent: bool
    positions: dict
    reconstruction_check: SymmetryCheck | None


def evaluate(prep: Prepared, cfg: CertifyConfig) -> ItemOutcome:
    """One item's outcome under ``cfg`` (its ``to_dict`` is the certificate's record, fixed float formatting):
    :func:`evaluate_all` of a batch of one.

    Parameters
    ----------
    prep : Prepared
        The item read and standardised (``prepare``).
    cfg : CertifyConfig
        The certification's settings (protocol, δ and τ in Å, observation model, levels).

    Returns
    -------
    ItemOutcome
        The item's record.
    """
    return evaluate_all([prep], cfg)[0]


def _pipeline_error(exc: BaseException) -> str:
    """An item error's message: the function that raised, the exception's type and text."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{tb[-1].name}" if tb else ""
    return f"pipeline ({where}): {type(exc).__name__}: {exc}"


def _outcome(prep: Prepared, cfg: CertifyConfig, staged: Staged | None, failure: BaseException | None) -> ItemOutcome:
    """The item's outcome from its stages' values, or its error record (the preparation's or the stage's)."""
    if prep.error is not None:
        return _error_record(prep.item, prep.error)
    if failure is not None:
        return _error_record(prep.item, _pipeline_error(failure))
    try:
        return _evaluate(prep, cfg, staged)
    except Exception as exc:  # noqa: BLE001 - a pipeline failure is recorded on the item
        return _error_record(prep.item, _pipeline_error(exc))


def _reconstruction_check(rec, cell: Structure, cfg: CertifyConfig,
                          rendered: SymmetryCheck | None = None) -> SymmetryCheck | None:
    """spglib label of the reconstruction on the rendered lattice, points wrapped into the cell (moyopy too
    with ``cfg.symmetry.cross_check_reconstruction``); the rendered cell's spglib label when the reconstruction is
    that cell atom for atom within 1e-9 Å (``reuse.label_cell``, ``cfg.symmetry.label_shortcuts``)."""
    if rec.status != "ok" or not cell.is_periodic or not len(rec.points):
        return None
    pts = np.asarray(rec.points, dtype=np.float64).reshape(-1, 3)
    frac = np.linalg.solve(cell.lattice.T, pts.T).T
    frac = frac - np.floor(frac)
    earlier = reuse.Reuse(earlier=(cell.frac_coords, cell.numbers, rendered)) if rendered is not None else None
    return reuse.label_cell(cell.lattice, frac, np.asarray(rec.labels), earlier,
                            **_label_options(cfg, reconstruction=True))


def _reference(dataset: dict, rendered_label: dict | None, cfg: CertifyConfig,
               raised: SymmetryRaised | None = None) -> tuple[dict, dict]:
    """Per level: the label R1 compares with and where it came from ("dataset", "rendered", or "input" when
    the standardisation raised the symmetry: the truth at the stated tolerances is the input's label)."""
    reference: dict = {}
    source: dict = {}
    own, own_name = (raised.input, "input") if raised else (rendered_label, "rendered")
    for lv in LEVELS:
        if cfg.scoring.truth == "dataset" and lv in dataset:
            reference[lv], source[lv] = dataset[lv], "dataset"
        elif own is not None:
            reference[lv], source[lv] = own[lv], own_name
    return reference, source


def _reasons(rec, rep, *, periodic: bool, rendered_label, recon_label, mismatch, unique: bool, indep: bool,
             cfg: CertifyConfig, raised: SymmetryRaised | None = None) -> list[str]:
    """Every reason the item may not be correct, in REASON_ORDER."""
    reasons: list[str] = []
    if rec.status != "ok":
        reasons.append("oracle_failed")
    if rep.n_phantoms:
        reasons.append("phantoms")
    if len(rep.missing_atoms):
        reasons.append("missing_atoms")
    if periodic and (rendered_label is None or (recon_label is None and rec.status == "ok")):
        reasons.append("symmetry_undetermined")
    if (periodic and unique and recon_label is not None and rendered_label is not None
            and recon_label[cfg.scoring.score] != rendered_label[cfg.scoring.score]):
        reasons.append("symmetry_changed")
    if periodic and raised is not None:
        reasons.append("symmetry_raised")
    if periodic and cfg.scoring.score in mismatch:
        reasons.append("label_mismatch")
    if rep.separation_ok is False or not indep:
        reasons.append("precondition_violated")
    return sorted(set(reasons), key=REASON_ORDER.index)


def _phantom_rows(rep) -> list[list]:
    """[label, x, y, z] (Å, 7 significant digits) of the first MAX_PHANTOMS_LISTED phantoms."""
    if not rep.n_phantoms:
        return []
    pts = np.asarray(rep.phantoms, dtype=np.float64).reshape(-1, 3)
    labs = np.asarray(rep.phantom_labels)
    return [[int(labs[k])] + [sig(v, 7) for v in pts[k]] for k in range(min(len(pts), MAX_PHANTOMS_LISTED))]


def _oracle_record(rec, rep) -> OracleReport:
    return OracleReport(
        status=rec.status,
        reason=getattr(rec, "reason", None) or None,
        n_points=int(rec.n_points),
        n_phantoms=int(rep.n_phantoms),
        n_missing=len(rep.missing_atoms),
        n_recovered=int(rep.n_recovered),
        max_position_error=sig(rep.max_position_error),
        min_same_label_distance=sig(rep.min_same_label_distance),
        margin=sig(rep.margin),
        separation_ok=bool(rep.separation_ok),
        warnings=list(rec.warnings) or None,
    )


def views_of(cell: Structure, cfg: CertifyConfig) -> tuple:
    """(cameras, observations, reconstruction, phantom report) of one rendered cell under ``cfg``."""
    cams = item_cameras(cell, cfg)
    obs = _observe(cell, cams, cfg)
    rec = _reconstruct(obs, cell, cfg)
    return cams, obs, rec, analyse(rec, cell, cfg.oracle.delta)


def _observe(cell: Structure, cams, cfg: CertifyConfig):
    see = cfg.observation  # noise seed·1,000,003 (oracle.noise); visible|pixel-centroid: ID buffer
    return observe_as(cell, cams, see.observe, model=_untiled(cfg.observation_model(), cell), min_pixels=see.min_pixels,
                      style=see.style)


def _reconstruct(obs, cell: Structure, cfg: CertifyConfig):
    return reconstruct(obs, lattice=_merge_lattice(cell, cfg), **_oracle_options(cfg))


def _reconstruct_all(keys: list, preps: list, obs: dict, cfg: CertifyConfig, out: dict, failed: dict) -> list:
    """:func:`_reconstruct` of every key's item in one oracle kernel call (``reconstruct_batch``: each
    structure's arithmetic is its own, the same reconstructions); when that call raises, item by item
    (:func:`_each`), so that only the items that fail are left out."""
    if not keys:
        return []
    try:
        recs = reconstruct_batch([obs[k] for k in keys], lattice=[_merge_lattice(preps[k].cell, cfg) for k in keys],
                                 **_oracle_options(cfg))
    except Exception:  # noqa: BLE001 - one item's misuse: each item on its own
        return _each(keys, lambda k: _reconstruct(obs[k], preps[k].cell, cfg), out, failed)
    out.update(zip(keys, recs, strict=True))
    return list(keys)


def _merge_lattice(cell: Structure, cfg: CertifyConfig):
    """The cell the oracle wraps and merges in (minimum image): the rendered cell's lattice when periodic and
    ``cfg.oracle.periodic_merge``, else None (Cartesian)."""
    return cell.lattice if (cell.is_periodic and cfg.oracle.periodic_merge) else None


def _oracle_options(cfg: CertifyConfig) -> dict:
    orc = cfg.oracle
    return {"delta": orc.delta, "delta_unit": "angstrom", "pairs": orc.pairs, "merge": orc.merge,
            "visibility": cfg.visibility}


def _each(keys, fn, out: dict, failed: dict) -> list:
    """``out[k] = fn(k)`` for every key; a key whose call raised is left out of the list returned and its
    exception kept in ``failed[k]`` (the item's error record, as :func:`_outcome` writes it)."""
    done = []
    for k in keys:
        try:
            out[k] = fn(k)
        except Exception as exc:  # noqa: BLE001 - recorded on the item
            failed[k] = exc
            continue
        done.append(k)
    return done


def certify_items(items, cfg: CertifyConfig) -> list[ItemOutcome]:
    """Every item's outcome under ``cfg``: read every item, standardise every item, then
    :func:`evaluate_all`. An item that cannot be read or standardised is an error record (``read: ...``,
    ``conventional cell: ...``), never a crash."""
    return certify_items_under(items, (cfg,))[0]


def certify_items_under(items, cfgs) -> list[list[ItemOutcome]]:
    """:func:`certify_items` under each of ``cfgs`` (:func:`evaluate_under`: configurations that differ only in
    what the views observe), every item read and standardised once."""
    items = list(items)
    read: dict = {}
    unread: dict = {}
    _each(range(len(items)), lambda k: items[k].read(), read, unread)
    return evaluate_under([_prepared(it, read[k], cfgs[0]) if k in read else Prepared(it, None, f"read: {unread[k]}")
                           for k, it in enumerate(items)], cfgs)


def evaluate_all(preps: list, cfg: CertifyConfig) -> list[ItemOutcome]:
    """The evaluator: the outcome of every prepared item (:func:`prepare`) under ``cfg``, computed stage by
    stage across the batch (label every rendered and input cell, then frame, observe, reconstruct, analyse,
    judge the views, label every reconstruction) so that each stage's code and tables stay hot between items;
    a single item is a batch of one (:func:`evaluate`). Each stage is a per-item function on one item's values
    (no state crosses items; the oracle reconstructs every item in one kernel call, each structure on its
    own); an item a stage fails on is an error record naming the function that raised, and the other items
    go on."""
    return evaluate_under(preps, (cfg,))[0]


def evaluate_under(preps: list, cfgs) -> list[list[ItemOutcome]]:
    """:func:`evaluate_all` under each of ``cfgs``, configurations that differ only in their observation mode
    (``observe``) and margin: the labels and cameras (which do not depend on them)
    once, then per configuration observe, reconstruct, analyse and label. An item whose observations under a
    later configuration are the first's exactly (``same_observations``) keeps the first's reconstruction,
    phantom report and reconstruction label (the oracle reads the observations and the options, nothing
    else), so its outcome is what evaluating it alone would give."""
    base = cfgs[0]
    if any(not _observing_only(c, base) for c in cfgs):
        raise InputError("evaluate_under: the configurations may differ only in observe and margin", field="cfgs")
    failed: dict = {}
    keys = [k for k, p in enumerate(preps) if p.error is None]
    labels: dict = {}
    keys = _each(keys, lambda k: (preps[k].rendered_check(base), preps[k].input_check(base)), labels, failed)
    cams: dict = {}
    keys = _each(keys, lambda k: item_cameras(preps[k].cell, base), cams, failed)
    outs, first = [], None
    for cfg in cfgs:
        fails = dict(failed)
        staged = _staged(keys, preps, cfg, cams, labels, fails, first)
        first = staged if first is None else first
        outs.append([_outcome(p, cfg, staged.get(k), fails.get(k)) for k, p in enumerate(preps)])
    return outs


def _staged(keys: list, preps: list, cfg: CertifyConfig, cams: dict, labels: dict, failed: dict,
            earlier: dict | None) -> dict:
    """Each key's ``Staged`` values under ``cfg`` from its cameras on: observe, reconstruct (one oracle call),
    analyse, judge the views, label the reconstruction; a key whose observations are ``earlier``'s exactly
    keeps ``earlier``'s reconstruction, report and label. Failures go to ``failed``."""
    obs, recs, reps, extras, labs = {}, {}, {}, {}, {}
    keys = _each(keys, lambda k: _observe(preps[k].cell, cams[k], cfg), obs, failed)
    kept = {k for k in keys if earlier and k in earlier and same_observations(obs[k], earlier[k].observations)}
    fresh = _reconstruct_all([k for k in keys if k not in kept], preps, obs, cfg, recs, failed)
    fresh = _each(fresh, lambda k: analyse(recs[k], preps[k].cell, cfg.oracle.delta), reps, failed)
    fresh = _each(fresh, lambda k: _perspective_extras(preps[k].cell, cfg, cams[k]), extras, failed)
    fresh = _each(fresh, lambda k: _reconstruction_check(recs[k], preps[k].cell, cfg, labels[k][0]), labs, failed)
    staged = {k: Staged(cams[k], obs[k], recs[k], reps[k], *extras[k], labs[k]) for k in fresh}
    return staged | {k: dataclasses.replace(earlier[k], observations=obs[k]) for k in keys if k in kept}


def _observing_only(cfg: CertifyConfig, base: CertifyConfig) -> bool:
    """Whether ``cfg`` is ``base`` but for its observation mode and margin."""
    obs = dataclasses.replace(cfg.observation, observe=base.observation.observe)
    return cfg.with_(observation=obs, scoring=dataclasses.replace(cfg.scoring, margin=base.scoring.margin)) == base


def same_observations(a: Observations, b: Observations) -> bool:
    """Whether two observations of one item give the oracle the same input: per view the same camera, the same
    points (uv px, depth Å), labels and ids in the same order, and the model's tiling and drawn radius scale
    (the oracle's only reads of the model), bit for bit."""
    if (len(a.views) != len(b.views) or a.model.tiling != b.model.tiling
            or a.model.radius_scale != b.model.radius_scale):
        return False
    return all(va.camera is vb.camera and all(np.array_equal(getattr(va, f), getattr(vb, f))
                                              for f in ("uv", "depth", "labels", "atom_index", "tile"))
               for va, vb in zip(a.views, b.views, strict=True))


def _evaluate(prep: Prepared, cfg: CertifyConfig, staged: Staged) -> ItemOutcome:
    item, cell = prep.item, prep.cell
    periodic = cell.is_periodic
    rendered = prep.rendered_check(cfg)
    rendered_label = label_dict(rendered)
    in_check = prep.input_check(cfg)
    raised = symmetry_raised(in_check, rendered)
    dataset = item.label or {}
    mismatch = [] if rendered_label is None else [lv for lv in LEVELS
                                                   if lv in dataset and dataset[lv] != rendered_label[lv]]
    cams, obs, rec, rep = staged.cameras, staged.observations, staged.reconstruction, staged.phantoms
    see, orc = cfg.observation, cfg.oracle
    indep, persp, recon_check = staged.independent, staged.positions, staged.reconstruction_check
    recon_label = label_dict(recon_check)
    unique = bool(rec.status == "ok" and rep.unique)
    reference, ref_source = _reference(dataset, rendered_label, cfg, raised)
    if periodic:
        by_level = {lv: bool(recon_label is not None and lv in reference and recon_label[lv] == reference[lv])
                    for lv in LEVELS}
        correct = by_level[cfg.scoring.score]
    else:  # a molecule: its own truth, scored on cfg.molecules.molecule_levels (certify.molecule)
        mol = molecule_outcome(cell, obs, rec, rep, delta=orc.delta, tau=cfg.symmetry.tau,
                               levels=cfg.molecules.molecule_levels,
                               observe_fn=lambda s, c: _observe(s, c, cfg),
                               cross_check=cfg.molecules.molecule_cross_check, **bond_graph(item),
                               ideal=see.observe == "ideal" and not see.occlusion and see.sigma == 0)
        by_level = mol.correct_by_level
        correct = all(by_level.values())
    reasons = _reasons(rec, rep, periodic=periodic, rendered_label=rendered_label, recon_label=recon_label,
                       mismatch=mismatch, unique=unique, indep=indep, cfg=cfg, raised=raised)
    if not periodic:
        reasons += [r for lv, r in (("point_group", "point_group_changed"), ("handedness", "handedness_ambiguous"))
                    if by_level.get(lv) is False]
    cross = {k: v for k, v in (("input", _xcheck(in_check)), ("rendered", _xcheck(rendered)),
                               ("reconstructed", _xcheck(recon_check))) if v}
    return ItemOutcome(
        **_base_record(item),
        formula=cell.formula, n_atoms=cell.n_atoms, periodic=periodic,
        reading=dict(cell.provenance.choices) if cell.provenance.choices else ABSENT,  # e.g. altlocs kept
        cell_sha256=cell_digest(cell), cameras_sha256=cameras_digest(cams),
        camera_positions=persp,
        label_rendered=rendered_label, label_reconstructed=recon_label, label_mismatch=mismatch or None,
        cross_check=cross or None, reference_source=ref_source.get(cfg.scoring.score),
        symmetry_raised=raised or ABSENT,
        oracle=_oracle_record(rec, rep),
        uniqueness_margin=margin_record(cell, cams) if cfg.scoring.margin else ABSENT,
        phantoms=_phantom_rows(rep) or None,
        independent_views=indep, unique=unique, exact=bool(rec.status == "ok" and rep.exact),
        certified=bool(unique and rep.separation_ok and indep),
        correct_by_level=by_level, correct=bool(correct), outcome="correct" if correct else "incorrect",
        reasons=reasons if not correct else [r for r in reasons if r in ("phantoms", "precondition_violated")],
        molecule=ABSENT if periodic else mol,
    )


def evaluate_observations(item: Item, cell: Structure, cameras, observations: Observations,
                          cfg: CertifyConfig) -> ItemOutcome:
    """One item's outcome from observations made elsewhere (another tool's published images, ``certify.published``):
    the stages of :func:`evaluate_all` after it observes (the oracle under ``cfg``, the phantom report against
    ``cell``, the views' independence, the labels), on the cell as given (no standardisation: another tool's
    cameras look at the structure as it was shipped). A failure is the item's error record, never a crash.

    Parameters
    ----------
    item : Item
        The item (id, input digest, the dataset's label).
    cell : Structure
        The structure the views show (Cartesian Å in the cameras' world frame; a crystal's cell, whose tiling the
        observations' model states).
    cameras : sequence of OrthographicCamera or PerspectiveCamera
        The views' cameras (the observations' own).
    observations : Observations
        Per view: uv (m, 2) px in the camera's frame, depth (m,) Å, labels (m,); the model's tiling, occlusion
        and radius scale as drawn.
    cfg : CertifyConfig
        δ and τ (Å), the oracle's rule and visibility, the scoring.

    Returns
    -------
    ItemOutcome
        The item's record.
    """
    prep = Prepared(item, cell)
    try:
        rec = _reconstruct(observations, cell, cfg)
        rep = analyse(rec, cell, cfg.oracle.delta)
        extras = _perspective_extras(cell, cfg, tuple(cameras))
        labels = _reconstruction_check(rec, cell, cfg, prep.rendered_check(cfg))
        return _evaluate(prep, cfg, Staged(tuple(cameras), observations, rec, rep, *extras, labels))
    except Exception as exc:  # noqa: BLE001 - a pipeline failure is recorded on the item
        return _error_record(item, _pipeline_error(exc))


def certify_item(item: Item, cfg: CertifyConfig) -> ItemOutcome:
    """One item's outcome: :func:`certify_items` of a batch of one.

    Parameters
    ----------
    item : Item
        One item of a dataset (id, how to read it, its label).
    cfg : CertifyConfig
        The certification's settings (protocol, δ and τ in Å, observation model, levels).

    Returns
    -------
    ItemOutcome
        The item's record: correct, reasons, certified, labels, counts and digests.
    """
    return certify_items([item], cfg)[0]


@dataclass(frozen=True)
class CertifyRecords:
    """What ``run_certification`` maps: :func:`certify_item` under ``cfg`` per item as the record written (what
    a shard of ``parallel.map_items`` holds: JSON), and ``map_batch`` (``parallel.run_chunk`` calls it on a
    batch of items) through :func:`certify_items` (one evaluator, :func:`evaluate_all`: the same records)."""

    cfg: CertifyConfig

    def __call__(self, item: Item) -> dict:
        return certify_item(item, self.cfg).to_dict()

    def map_batch(self, items) -> list[dict]:
        return [o.to_dict() for o in certify_items(items, self.cfg)]
