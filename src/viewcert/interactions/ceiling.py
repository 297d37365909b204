"""What the views determine about a complex's hydrogen bonds: the ceiling of the list-answer tasks.

An entry (residue atom r, ligand atom l) of the true list is **determined** when all of these hold:

1. *identified*: l's atom-name label is legible in some view, and so are r's atom-name label and r's
   residue label (``RES SEQ CHAIN`` at the residue's CA, else its first atom) — legible by
   ``render.labels`` (visible fraction ≥ ``min_visible``). No element-and-position argument is credited:
   an atom without a legible name cannot be named in the five-tuple.
2. *recovered*: the oracle (``oracle.reconstruct`` at δ, ``visibility="occlusion"``: one view may miss a
   point behind a nearer disc) recovers both atoms from all the views or from one block of ``BLOCK``
   consecutive views (so that an atom hidden in two of 27 views still counts when six views agree on it),
   and no phantom of the all-view reconstruction of the same element lies within ``reach`` Å of either.
   The oracle runs on the observations near the atoms in question (``window``), which is exact for them.
3. *stable*: the criterion's verdict survives moving every atom by δ: H···A + 2δ ≤ the distance bound and
   the angle − Δ ≥ the angle bound, Δ = asin(2δ/|DH|) + asin(2δ/|HA|) (the two rays' largest turns).

**Uncertain** (``uncertainty``): a true bond failing 3, a non-bond passing the criterion loosened by the same
margins, a bond through a rotatable hydrogen (hydroxyl, thiol, NH3+) whose other rotamers would bond
another acceptor, or a non-bond that another rotamer of a rotatable hydrogen would make (``rotamer_pairs``).
Uncertain entries leave the truth (listed under ``uncertain``); the ceiling is over the certain ones (1 when
there is none but some uncertain: the answer "no" is right), so no margin candidate remains to guess (the guessing rule below is kept for callers that pass
candidates). A pair that is *not* a bond but passes the criterion loosened by the same margins was a **margin
candidate**; so was a true bond failing 3. Identified, recovered margin candidates are what an ideal
answerer must guess (it cannot tell them apart): the ceiling is the expected MiSI score
(``attribution.misi``'s rule: correct / true, capped at 0.5 with a fabricated entry, 0 beyond twice the
true count) of the best answer — the determined entries plus as many candidates as maximise the answerer's
expectation at ½ each (``best_expected_score``). Losses are attributed, first reason
first: ``label_hidden``, ``atom_hidden``, ``phantom``, ``criterion_margin``.

Modes: ``ideal`` — exact projections of every atom and every label legible (the ceiling is 1 unless a
margin candidate exists); ``rendered`` — observations from the atom-ID buffers and labels measured in the
label-ID buffers. Units: Å, degrees, px.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from viewcert.errors import InputError
from viewcert.interactions.criterion import HBondCriterion, angle_margin, geometry
from viewcert.interactions.hbonds import baker_hubbard, typed_margin_pairs
from viewcert.interactions.protonate import prepared_of
from viewcert.interactions.truth import HBondTruth
from viewcert.observe import Observations, observe
from viewcert.oracle import analyse, reconstruct
from viewcert.render.labels import Label, LabelStyle, draw_labels
from viewcert.render.raster import build_scene, render
from viewcert.render.visibility import observations_from_renders

MODES = ("ideal", "rendered")
LOSSES = ("label_hidden", "atom_hidden", "phantom", "criterion_margin")
POLAR = (7, 8, 16)
BLOCK = 6  # views per sub-protocol block (rule 2)


@dataclass(frozen=True)
class CeilingSettings:
    """δ (Å), phantom ``reach`` (Å), the render style and the label style (font, legibility threshold)."""

    delta: float = 0.01
    reach: float = 1.5
    style: str = "ball-and-stick"
    labels: LabelStyle = field(default_factory=LabelStyle)

    def __post_init__(self) -> None:
        if not (0 < self.delta <= 1.0):
            raise InputError(f"delta must be in (0, 1] Å, got {self.delta}", field="delta")
        if not (0 <= self.reach <= 10):
            raise InputError(f"reach must be in [0, 10] Å, got {self.reach}", field="reach")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["labels"] = self.labels.to_dict()
        d["oracle"] = {"pairs": "all", "visibility": "occlusion"}
        d["label_scheme"] = "atom names of every N/O/S atom; RES SEQ CHAIN at each residue's CA (else first atom)"
        return d


def label_set(structure, ligand_atoms) -> tuple[tuple[Label, ...], dict]:
    """Labels drawn in every view and, per label, what it names: ("atom", k) or ("residue", key)."""
    labels, names = [], {}
    lig = set(ligand_atoms)
    first: dict[str, int] = {}
    for k, lab in enumerate(structure.site_labels):
        parts = lab.split("/")
        if int(structure.numbers[k]) in POLAR:
            names[len(labels)] = ("atom", k)
            labels.append(Label(parts[-1], k, "atom"))
        key = "/".join(parts[:2])
        if k not in lig and len(parts) == 3 and (key not in first or parts[2] == "CA"):
            first[key] = k
    for key, k in first.items():
        chain, res = key.split("/")
        names[len(labels)] = ("residue", key)
        labels.append(Label(f"{res[:3]} {res[3:]} {chain}", k, "residue"))
    return tuple(labels), names


def residue_key(structure, k: int) -> str:
    return "/".join(structure.site_labels[k].split("/")[:2])


def window(obs, points: np.ndarray, radius: float):
    """``obs`` keeping, per view, the observed points within ``radius`` Å (converted to px at each point's
    depth, × 1.5) of the projection of some point of ``points`` (Å): the oracle's verdict on any 3D point
    within ``radius`` Å of ``points`` reads only these (acceptance looks at observations within δ of its
    projections; occluding discs are within one drawn radius)."""
    views = []
    for v in obs.views:
        uv, d = v.camera.project(points)
        uv = np.asarray(uv).reshape(-1, 2)
        r_px = 1.5 * radius / np.asarray(v.camera.pixel_size(np.maximum(np.asarray(d), 1e-6)), dtype=np.float64)
        near = np.zeros(len(v.uv), dtype=bool)
        for c, r in zip(uv, np.broadcast_to(r_px, (len(uv),)), strict=True):
            near |= np.sum((v.uv - c) ** 2, axis=1) <= r * r
        views.append(type(v)(v.camera, v.uv[near], v.depth[near], v.labels[near], v.atom_index[near], v.tile[near]))
    return type(obs)(tuple(views), obs.model, obs.structure_id)


def _recovered(obs, s, atoms: np.ndarray, settings: CeilingSettings, n_views: int):
    """(missing (n,) bool over ``atoms``, report of the all-view reconstruction) on the local window."""
    local = window(obs, s.positions[atoms], settings.reach + 1.0)
    rep = analyse(reconstruct(local, delta=settings.delta, visibility="occlusion"), s, settings.delta)
    missing = np.zeros(s.n_atoms, dtype=bool)
    missing[atoms] = True
    missing[atoms] = np.isin(atoms, rep.missing_atoms)
    for block in view_blocks(n_views):
        if missing.any() and len(block) < n_views:
            sub = type(local)(tuple(local.views[i] for i in block), local.model, local.structure_id)
            part = analyse(reconstruct(sub, delta=settings.delta, visibility="occlusion"), s, settings.delta)
            missing[atoms] &= np.isin(atoms, part.missing_atoms)
    return missing, rep


@dataclass(frozen=True)
class RenderedViews:
    """What the rendered views show, each view rendered once: the observations read off the atom-ID buffers
    (``render.visibility.observations_from_renders``) and, per label of ``label_set``, legible in some view."""

    cameras: tuple
    observations: object  # observe.Observations
    legible: np.ndarray  # (n_labels,) bool


def render_views(truth: HBondTruth, cameras, settings: CeilingSettings, *, rgb: bool = False,
                 on_view=None) -> RenderedViews:
    """Render every camera once in ``settings.style`` and draw ``label_set``'s labels in ``settings.labels``;
    ``on_view(k, layer)`` receives each view's ``render.labels.LabelLayer`` (its ``rgb`` the labelled image
    when ``rgb``) before the next view is rendered, so no more than one view's buffers are held."""
    s = truth.protonated.prepared.structure
    labels, _ = label_set(s, truth.protonated.prepared.ligand_atoms)
    scene = build_scene(s, settings.style)
    cameras = tuple(cameras)
    legible = np.zeros(len(labels), dtype=bool)
    views, model = [], None
    for k, cam in enumerate(cameras):
        res = render(scene, cam, rgb=rgb)
        layer = draw_labels(res, labels, settings.labels)
        legible |= layer.legible()
        one = observations_from_renders([res], model=model)
        model = one.model
        views.append(one.views[0])
        if on_view is not None:
            on_view(k, layer)
    if model is None:
        raise InputError("no rendered views", field="cameras")
    return RenderedViews(cameras, Observations(tuple(views), model, ""), legible)


def observe_views(truth: HBondTruth, cameras, settings: CeilingSettings, mode: str, atoms=None,
                  rendered: RenderedViews | None = None) -> dict:
    """Per atom of ``atoms`` (default: all): missing (not recovered by the oracle), phantom of its element
    within reach; per atom and residue: a legible label in some view. The oracle runs on the observations
    near ``atoms`` (``window``). ``rendered``: the views already rendered (``render_views`` of the same
    cameras), read instead of rendering them again."""
    if mode not in MODES:
        raise InputError(f"mode must be one of {MODES}, got {mode!r}", field="mode")
    s = truth.protonated.prepared.structure
    atoms = np.arange(s.n_atoms) if atoms is None else np.asarray(sorted(set(atoms)), dtype=np.int64)
    labels, names = label_set(s, truth.protonated.prepared.ligand_atoms)
    if mode == "ideal":
        obs = observe(s, cameras)
        legible = np.ones(len(labels), dtype=bool)
    else:
        if rendered is None:
            rendered = render_views(truth, cameras, settings)
        elif len(rendered.cameras) != len(cameras) or any(a is not b for a, b in zip(rendered.cameras, cameras,
                                                                                     strict=True)) \
                or len(rendered.legible) != len(labels):
            raise InputError("the rendered views are not those of these cameras and labels", field="rendered")
        obs, legible = rendered.observations, rendered.legible
    missing, rep = _recovered(obs, s, atoms, settings, len(cameras)) if len(atoms) else \
        (np.zeros(s.n_atoms, dtype=bool), None)
    near_phantom = np.zeros(s.n_atoms, dtype=bool)
    for p, z in zip(*((rep.phantoms, rep.phantom_labels) if rep is not None else ((), ())), strict=True):
        d = np.linalg.norm(s.positions - p, axis=1)
        near_phantom |= (d <= settings.reach) & (s.numbers == int(z))
    atom_ok = np.zeros(s.n_atoms, dtype=bool)
    res_ok: dict[str, bool] = {}
    for j, (kind, what) in names.items():
        if kind == "atom":
            atom_ok[what] |= legible[j]
        else:
            res_ok[what] = res_ok.get(what, False) or bool(legible[j])
    return {"missing": missing, "phantom": near_phantom, "atom_label": atom_ok, "residue_label": res_ok,
            "n_phantoms_near": 0 if rep is None else rep.n_phantoms, "n_missing": int(missing.sum()),
            "n_atoms_checked": len(atoms), "n_labels": len(labels), "n_legible": int(legible.sum())}


def view_blocks(n: int, size: int = BLOCK) -> list[list[int]]:
    """Consecutive blocks of ``size`` views (the last one wraps around): the sub-protocols an atom may be
    recovered from when it hides in two or more views of a large protocol."""
    if n <= size:
        return [list(range(n))]
    return [[(s + i) % n for i in range(size)] for s in range(0, n, size)]


def stable(bond, structure, criterion: HBondCriterion, delta: float) -> bool:
    """The bond still holds with every atom moved by δ (module docstring, rule 3); under PLIP/ChimeraX every
    check that decided it, each by its own margin (``criteria.Check``)."""
    if bond.checks:
        return all(c.passes(delta, -1) for c in bond.checks)
    d_dh = float(np.linalg.norm(np.asarray(bond.hydrogen) - structure.positions[bond.donor.index]))
    return (bond.d_ha + 2 * delta <= criterion.max_h_acceptor
            and bond.angle - angle_margin(d_dh, bond.d_ha, delta) >= criterion.min_angle)


def rotatable_hydrogen(truth: HBondTruth, k: int) -> bool:
    """Prepared atom ``k`` carries a hydrogen an X-ray structure does not place: a hydroxyl or thiol (O/S with
    one heavy neighbour and a hydrogen) or an NH3+ (N with three hydrogens); hydride's placement of it is a
    model's choice, rotatable about the bond to its heavy neighbour."""
    a = truth.protonated.atoms
    i = int(truth.protonated.index[k])
    nb = a.bonds.get_bonds(i)[0].tolist()
    n_h = sum(1 for j in nb if a.element[j] == "H")
    heavy = len(nb) - n_h
    return bool((a.element[i] in ("O", "S") and n_h >= 1 and heavy == 1) or (a.element[i] == "N" and n_h == 3))


ROTAMER_STEP = 5  # degrees: the rotamers of a rotatable hydrogen tried about its donor's bond


def rotamers(heavy, donor, hydrogen, step: float = ROTAMER_STEP) -> np.ndarray:
    """(360/step, 3) positions (Å) of ``hydrogen`` turned about the heavy-neighbour→donor axis by 0, step,
    2 step, … degrees (Rodrigues' rotation about the donor: bond length and angle kept); row 0 is the
    hydrogen itself."""
    x, d, h = (np.asarray(v, dtype=np.float64).reshape(3) for v in (heavy, donor, hydrogen))
    axis = (d - x) / np.linalg.norm(d - x)
    v = h - d
    t = np.radians(np.arange(0, 360, step))[:, None]
    return d + v * np.cos(t) + np.cross(axis, v) * np.sin(t) + axis * np.dot(axis, v) * (1 - np.cos(t))


def reachable_acceptors(truth: HBondTruth, donor: int) -> set[int]:
    """Prepared atoms across the ligand–pocket interface that some rotamer of ``donor``'s rotatable hydrogen
    (``rotamers``: turned about the bond to its heavy neighbour in ROTAMER_STEP° steps) bonds by the
    criterion."""
    p, crit = truth.protonated, truth.criterion
    a = p.atoms
    i = int(p.index[donor])
    nb = a.bonds.get_bonds(i)[0].tolist()
    hs = [j for j in nb if a.element[j] == "H"]
    heavy = [j for j in nb if a.element[j] != "H"]
    if not hs or not heavy:
        return set()
    d = a.coord[i].astype(float)
    lig = set(p.prepared.ligand_atoms)
    s = p.prepared.structure
    other = [k for k in range(s.n_atoms) if (k in lig) != (donor in lig) and int(s.numbers[k]) in POLAR
             and np.linalg.norm(s.positions[k] - d) <= crit.reach]
    out = set()
    for h0 in hs:
        for h in rotamers(a.coord[heavy[0]], d, a.coord[h0]):
            for k in other:
                g = geometry(d, h, s.positions[k])
                if crit.accepts(g):
                    out.add(k)
    return out


def rotamer_pairs(truth: HBondTruth) -> list[tuple[int, int]]:
    """(donor, acceptor) prepared-atom pairs across the interface that are not bonds as hydride placed the
    hydrogens but that another rotamer of the donor's rotatable hydrogen would bond (``reachable_acceptors``):
    the hydroxyl hydrogen pointing away from an acceptor the heavy atoms allow."""
    if not truth.criterion.hydrogen_decides:  # ChimeraX: heavy atoms decide a rotatable hydrogen's bonds
        return []
    s = truth.protonated.prepared.structure
    true_pairs = {b.pair() for b in truth.bonds}
    out = set()
    for k in np.flatnonzero(np.isin(s.numbers, POLAR)).tolist():
        if rotatable_hydrogen(truth, k):
            out |= {(k, a) for a in reachable_acceptors(truth, k) if (k, a) not in true_pairs}
    return sorted(out)


def uncertainty(truth: HBondTruth, bond, delta: float) -> str | None:
    """Why a bond's truth is uncertain, None when certain: "criterion_margin" (its verdict changes with every
    atom moved by δ: ``stable``) or "rotatable_hydrogen" (its donor's hydrogen is rotatable,
    ``rotatable_hydrogen``, and some rotamer of it would bond another acceptor instead: hydride's placement
    chose; with one reachable acceptor the heavy atoms decide)."""
    s = truth.protonated.prepared.structure
    if not stable(bond, s, truth.criterion, delta):
        return "criterion_margin"
    if truth.criterion.hydrogen_decides and rotatable_hydrogen(truth, bond.donor.index) and reachable_acceptors(
            truth, bond.donor.index) - {bond.acceptor.index}:
        return "rotatable_hydrogen"
    return None


def margin_nonbonds(truth: HBondTruth, delta: float) -> list[tuple[int, int]]:
    """(donor, acceptor) prepared-atom pairs that are not bonds but pass the criterion loosened by δ's margins
    (H···A + 2δ, angle + Δ with Δ at |DH| = 0.9 Å, |HA| = 1.5 Å, the smallest lengths that occur)."""
    p, crit = truth.protonated, truth.criterion
    if not isinstance(crit, HBondCriterion):  # PLIP/ChimeraX: each check by its own margin
        return typed_margin_pairs(p, crit, truth.bonds, delta)
    loose = HBondCriterion(max_h_acceptor=crit.max_h_acceptor + 2 * delta,
                           min_angle=max(0.0, crit.min_angle - angle_margin(0.9, 1.5, delta)),
                           donor_elements=crit.donor_elements, acceptor_elements=crit.acceptor_elements)
    back = prepared_of(p)
    true_pairs = {b.pair() for b in truth.bonds}
    out = set()
    for d, h, a in baker_hubbard(p.atoms, p.ligand, p.pocket, loose).tolist():
        if d in back and a in back and (back[d], back[a]) not in true_pairs:
            g = geometry(p.atoms.coord[d], p.atoms.coord[h], p.atoms.coord[a])
            if not crit.holds(g.d_ha, g.angle):
                out.add((back[d], back[a]))
    return sorted(out)


def _list_score(n_true: int, correct: int, fabricated: int) -> float:
    """MiSI's list score of an answer with that many correct and fabricated entries."""
    if correct + fabricated > 2 * n_true:
        return 0.0
    v = min(correct / n_true, 1.0)
    return min(v, 0.5) if fabricated else v


def best_expected_score(n_true: int, n_determined: int, n_guess_true: int, n_guess_false: int) -> float:
    """Score of the best answer given what is determined: the determined entries plus m of the margin
    candidates, which the answerer cannot tell apart; m maximises the answerer's expectation taking each
    candidate as true with probability ½ (ties: the smallest m); the value is that answer's expected score
    against the truth (m of the n_guess_true + n_guess_false candidates at random: hypergeometric)."""
    if n_true <= 0:
        raise InputError("the true interaction list is empty", field="true")
    n_c = n_guess_true + n_guess_false

    def prior(m: int) -> float:
        return sum(math.comb(m, k) / 2**m * _list_score(n_true, n_determined + k, m - k) for k in range(m + 1))

    m_best = max(range(n_c + 1), key=lambda m: (prior(m), -m))
    if m_best == 0:
        return _list_score(n_true, n_determined, 0)
    return sum(math.comb(n_guess_true, k) * math.comb(n_guess_false, m_best - k) / math.comb(n_c, m_best)
               * _list_score(n_true, n_determined + k, m_best - k)
               for k in range(max(0, m_best - n_guess_false), min(m_best, n_guess_true) + 1))


def _entry_of(structure, ligand_atoms, d: int, a: int) -> tuple[str, int, int]:
    """(five-tuple entry, residue atom, ligand atom) of a donor/acceptor pair."""
    lig = set(ligand_atoms)
    r, l_ = (a, d) if d in lig else (d, a)
    parts = structure.site_labels[r].split("/")
    res = parts[1]
    return f"{res[:3]} {res[3:]} {parts[2]} {parts[0]}, {structure.site_labels[l_].split('/')[-1]}", r, l_


def _loss(seen: dict, structure, r: int, l_: int, margin_ok: bool) -> str | None:
    """The first reason an entry is not determined (LOSSES order), None when determined."""
    if not (seen["atom_label"][r] and seen["atom_label"][l_] and seen["residue_label"].get(residue_key(structure, r))):
        return "label_hidden"
    if seen["missing"][r] or seen["missing"][l_]:
        return "atom_hidden"
    if seen["phantom"][r] or seen["phantom"][l_]:
        return "phantom"
    return None if margin_ok else "criterion_margin"


def unnamed_atoms(truth: HBondTruth, seen: dict) -> list[int]:
    """Polar atoms the images do not name: no legible atom label (a pocket atom: or no legible residue
    label), or not recovered (among the atoms the oracle checked)."""
    s = truth.protonated.prepared.structure
    lig = set(truth.protonated.prepared.ligand_atoms)
    out = []
    for k in np.flatnonzero(np.isin(s.numbers, POLAR)).tolist():
        named = seen["atom_label"][k] and (k in lig or seen["residue_label"].get(residue_key(s, k), False))
        if not named or seen["missing"][k] or seen["phantom"][k]:
            out.append(int(k))
    return out


def pocket_ligand_ceiling(truth: HBondTruth, cameras, settings: CeilingSettings | None = None,
                          mode: str = "rendered", rendered: RenderedViews | None = None) -> dict:
    """Ceiling of the pocket–ligand list (module docstring): every true entry with its status and loss, the
    margin candidates and the best expected score (1.0 when every entry is uncertain: the answer "no" is
    right and naming an uncertain entry is neutral; None when the complex has no entry at all).
    ``rendered`` (mode "rendered"): the views as ``render_views`` rendered them, not rendered again."""
    st = settings or CeilingSettings()
    s, lig = truth.protonated.prepared.structure, truth.protonated.prepared.ligand_atoms
    nonbonds = margin_nonbonds(truth, st.delta)
    atoms = {i for b in truth.bonds for i in b.pair()} | {i for pair in nonbonds for i in pair}
    seen = observe_views(truth, cameras, st, mode, sorted(atoms), rendered if mode == "rendered" else None)
    entries: dict[str, dict] = {}
    unsure: dict[str, dict] = {}
    for b in truth.bonds:
        e, r, l_ = _entry_of(s, lig, b.donor.index, b.acceptor.index)
        why = uncertainty(truth, b, st.delta)
        if why is not None:  # its loss: whether the images name and place the pair (interaction-location asks it)
            unsure.setdefault(e, {"entry": e, "residue": residue_key(s, r), "bond": True, "reason": why,
                                  "loss": _loss(seen, s, r, l_, True)})
            continue
        loss = _loss(seen, s, r, l_, True)
        if e not in entries or entries[e]["loss"] is not None:
            entries[e] = {"entry": e, "residue": residue_key(s, r), "determined": loss is None, "loss": loss}
    for d, a in nonbonds:
        e, r, l_ = _entry_of(s, lig, d, a)
        if e not in entries:
            unsure.setdefault(e, {"entry": e, "residue": residue_key(s, r), "bond": False,
                                  "reason": "criterion_margin"})
    for d, a in rotamer_pairs(truth):
        e, r, l_ = _entry_of(s, lig, d, a)
        if e not in entries:
            unsure.setdefault(e, {"entry": e, "residue": residue_key(s, r), "bond": False,
                                  "reason": "rotatable_hydrogen"})
    for e in entries:
        unsure.pop(e, None)  # one certain bond of the pair (e.g. the other direction) makes the entry certain
    guess_true = guess_false = 0  # margin pairs are uncertain, not guessed: they leave the truth
    candidates: dict[str, str] = {}
    n_det = sum(x["determined"] for x in entries.values())
    n = len(entries)
    # only uncertain entries: the true list is empty and the answer "no" scores 1 (attribution.misi: uncertain
    # entries are neutral), whatever the images show; no entry at all: nothing to score
    value = best_expected_score(n, n_det, guess_true, guess_false) if n else (1.0 if unsure else None)
    losses = {k: sum(1 for x in entries.values() if x["loss"] == k) for k in LOSSES}
    return {"mode": mode, "n_views": len(cameras), "n_true": n, "n_determined": n_det, "ceiling": value,
            "margin_candidates": {"true": guess_true, "false": guess_false}, "losses": losses,
            "entries": sorted(entries.values(), key=lambda x: x["entry"]),
            "candidates": [{"entry": e, "residue": r} for e, r in sorted(candidates.items())],
            "uncertain": [unsure[e] for e in sorted(unsure)],
            "residue_label_legible": dict(sorted(seen["residue_label"].items())),
            "unnamed_atoms": unnamed_atoms(truth, seen),
            "observation": {k: seen[k] for k in ("n_atoms_checked", "n_phantoms_near", "n_missing", "n_labels",
                                                 "n_legible")}}


def residue_ligand_ceiling(pocket: dict, residue: str) -> dict:
    """Ceiling of one residue–ligand item (does ``residue`` — ``CHAIN/RESseq`` — bond with the ligand, and
    by which pairs?) from a ``pocket_ligand_ceiling`` result. The residue must be found: its label legible
    in some view, else the answer is a coin flip on yes/no (0.5 for a negative, 0 for a positive's pairs).
    Positive: the best expected list score over its own entries and candidates; negative: 1 when no margin
    candidate of the residue exists, else ½ (a candidate could make it a positive)."""
    if residue not in pocket["residue_label_legible"]:
        raise InputError(f"residue {residue!r} is not in the pocket", field="residue")
    mine = [x for x in pocket["entries"] if x["residue"] == residue]
    cands = [x for x in pocket["candidates"] if x["residue"] == residue]
    found = pocket["residue_label_legible"][residue]
    if not mine:
        value = (1.0 if not cands else 0.5) if found else 0.5
        return {"residue": residue, "positive": False, "n_true": 0, "ceiling": value,
                "loss": None if value == 1.0 else ("label_hidden" if not found else "criterion_margin")}
    n_det = sum(x["determined"] for x in mine)
    n_guess = sum(x["loss"] == "criterion_margin" for x in mine)
    value = best_expected_score(len(mine), n_det, n_guess, len(cands)) if found else 0.0
    losses = sorted({x["loss"] for x in mine if x["loss"]}) if found else ["label_hidden"]
    return {"residue": residue, "positive": True, "n_true": len(mine), "ceiling": value, "loss": losses or None}
