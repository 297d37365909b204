"""Labels without a second spglib call, where the second call would see the same problem.

A certification asks spglib three times per structure: to standardise the input (the conventional cell is
what gets rendered), for the label of that rendered cell, and for the label of the reconstruction. Two of
these can be answered from an earlier call:

1. **Rendered cell from the standardisation's dataset** (:func:`rendered_check`). Guard: the dataset came
   from spglib (not the moyopy backend), at the same symprec τ (Å) and angle tolerance (°) the label is asked
   at, and the cell is the standardisation's output itself (no supercell). The conventional cell is spglib's
   refined (symmetrised) cell of the same input in another basis, so spglib's operation search at the same
   tolerances finds the same space-group type: number, international symbol and point group are copied;
   the Hall number is spglib's default setting of that type (the same for both cells, as spglib reports
   the setting it standardises to); the operation count of the conventional cell is the point-group order
   times its lattice points, i.e. ``n_rotations(input) · n_atoms(conventional) / n_atoms(input)``.
   This is an identity of spglib's algorithm, not a theorem about every tolerance boundary: refinement
   moves atoms by up to τ, so a cell lying within τ of a *higher* symmetry after symmetrisation could in
   principle be labelled higher by a fresh call. Checked against the fresh call (every field) on all
   1,820 e3 structures and one structure for each of the 230 space groups (tests/symmetry/test_symmetry_shortcuts.py, tests/symmetry/test_reuse_switch.py);
   ``shortcut=False`` in the certify configuration (``CertifyConfig.label_shortcuts``) runs the full path.
   The identity does NOT hold everywhere: on a seeded pyxtal set near tolerance boundaries (two crystals per
   space group, exact and perturbed by a few × τ; ``benchmarks/bench_pyxtal_truth.py``) a fresh call on the
   conventional cell gave another space group in 35 of 920 items at 5° and 5 at spglib's own angle rule:
   symmetrisation lifts the cell to a higher group, the triclinic branch's LLL basis changes what spglib's
   angle tolerance accepts, or an odd axis permutation in pymatgen's tetragonal branch draws the enantiomorph
   (P4_1 → P4_3). So :func:`confirm` re-labels the rendered cell with a fresh spglib call when
   :func:`doubtful`: (a) moyopy disagrees with spglib on the input or on the rendered cell, or (b) the
   rendered cell's own lattice, alone, has another lattice system at τ than the label (a metric within τ
   of a higher lattice in the basis drawn; spglib on one point, 0.3-1.3 ms). That call is skipped where
   its answer is known: an exact cubic or hexagonal metric (:func:`holohedral_metric`; rhombohedral cells
   are drawn on hexagonal axes) is that lattice system for spglib at any τ up to 2 % of the shortest
   vector (780 of the 1,820 e3 cells; ``doubtful`` unchanged on all of them); so is an exact orthorhombic or
   tetragonal metric whose lengths spglib cannot confuse at τ (:func:`orthogonal_metric`, a sufficient
   condition read off spglib's lattice search; 503 of the 1,820 e3 cells).
   On the 1,820 e3 structures the fresh call never differs; the guard costs a fresh call only where a
   doubt signal fires.
2. **Reconstruction from the rendered cell** (:func:`same_cell`). Guard: the reconstruction has the same
   atoms as the rendered cell, label for label, each within ``SAME_CELL_TOL`` = 1e-9 Å (minimum image on the
   rendered lattice, a one-to-one matching). spglib's answer for two cells whose atoms differ by ≤ 1e-9 Å
   changes only if one of its tolerance comparisons at τ (0.01 Å in the study) is decided within 1e-9 Å;
   tested against the fresh call on the same two sets.

moyopy's cross-check runs on the rendered cell only (a fresh moyopy call there; none on the reconstruction):
the reconstruction is scored with spglib's label, and the cross-check guards the reference label.

**One decision, one switch.** :func:`label_cell` is the only function that decides whether spglib is called:
every label certification asks for goes through it, with the source it may reuse (a :class:`Reuse`) and the
switch ``reuse`` (``CertifyConfig.label_shortcuts``; off = spglib is called on every cell, the full path).
``tests/symmetry/test_reuse_switch.py`` certifies one structure of each of the 230 space groups and the e3 set with the
switch on and off and compares every certificate record byte for byte.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from viewcert.errors import InputError
from viewcert.symmetry import _spglib
from viewcert.symmetry.labels import SymmetryCheck, SymmetryLabel, analyse_cell, crystal_system_of

SAME_CELL_TOL = 1e-9  # Å
METRIC_RTOL = 1e-9  # holohedral_metric: relative deviation of the metric tensor from the ideal form
METRIC_MAX_TAU = 0.02  # holohedral_metric: largest symprec, as a fraction of the shortest lattice vector
MIN_ANGLE_TOLERANCE = 1e-6  # orthogonal_metric: smallest positive angle tolerance (°) it decides for

# spglib's candidate images of a reduced basis vector: coefficients in {-1, 0, 1} (symmetry.c, relative_axes)
_COMBOS = np.array([n for n in np.ndindex(3, 3, 3) if n != (1, 1, 1)], dtype=np.float64) - 1
_SINGLE = [(np.abs(_COMBOS[:, i]) == 1) & (np.abs(_COMBOS).sum(axis=1) == 1) for i in range(3)]
# per basis vector, the candidates that the exact holohedry maps it to (tetragonal: c the unique axis)
_ORBITS = {"orthorhombic": np.array(_SINGLE),
           "tetragonal": np.array([_SINGLE[0] | _SINGLE[1], _SINGLE[0] | _SINGLE[1], _SINGLE[2]])}

__all__ = ["METRIC_MAX_TAU", "METRIC_RTOL", "MIN_ANGLE_TOLERANCE", "SAME_CELL_TOL", "Reuse", "confirm", "doubtful",
           "holohedral_metric", "in_doubt", "label_cell", "label_from_dataset", "lattice_system", "needs_lattice_call",
           "orthogonal_metric", "rendered_check", "same_cell"]


@dataclass(frozen=True)
class Reuse:
    """What a cell's spglib label may be taken from instead of a spglib call (:func:`label_cell`).

    ``dataset``: the standardisation's spglib dataset (``standardize_with_dataset``), either of this very cell
    (``conventional=False``: the cell as read) or of the cell this one was standardised from
    (``conventional=True``: the rendered cell, shortcut 1; then ``input_check``, the labels of the cell as read,
    feeds :func:`doubtful`). ``earlier``: ``(frac, numbers, check)`` of a cell on the same lattice already
    labelled (the rendered cell, shortcut 2: its label is reused when :func:`same_cell`)."""

    dataset: dict | None = None
    conventional: bool = False
    input_check: SymmetryCheck | None = None
    earlier: tuple | None = None


def label_cell(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray, source: Reuse | None, *, reuse: bool,
               symprec: float, angle_tolerance: float = 5.0, cross_check: bool = True,
               moyo_angle_tolerance: float | None = None) -> SymmetryCheck:
    """``analyse_cell`` of the cell (``lattice`` rows Å, fractional ``frac``, atomic ``numbers``) at ``symprec``
    Å and ``angle_tolerance`` °, with spglib's label reused from ``source`` where its guard holds: the one place
    that decides whether spglib is called. ``reuse=False`` (the switch, ``CertifyConfig.label_shortcuts``)
    calls spglib on every cell. Guards (module docstring): a dataset at exactly these tolerances
    (:func:`applies`; for a conventional cell, re-labelled by a fresh call when :func:`doubtful`), or an earlier
    cell with the same atoms within ``SAME_CELL_TOL`` (:func:`same_cell`). moyopy, when asked, always runs."""
    known = _reusable(lattice, frac, numbers, source, symprec, angle_tolerance) if reuse and source else None
    chk = analyse_cell(lattice, frac, numbers, symprec=symprec, angle_tolerance=angle_tolerance,
                       cross_check=cross_check, moyo_angle_tolerance=moyo_angle_tolerance, known_spglib=known)
    if known is not None and in_doubt(chk, source, lattice):
        chk = confirm(chk, lattice, frac, numbers)  # in doubt: a fresh spglib call decides
    return chk


def in_doubt(check: SymmetryCheck, source: Reuse, lattice: np.ndarray) -> bool:
    """Whether :func:`label_cell` replaces the label it reused from ``source`` for this cell (``check``, on
    ``lattice``) by a fresh spglib call: a conventional cell whose label came from the standardisation's
    dataset (:func:`applies`) and :func:`doubtful` says so. (``benchmarks/bench_anchor.py`` reads it too.)"""
    return (source.conventional and applies(source.dataset, symprec=check.symprec, angle_tolerance=check.angle_tolerance)
            and doubtful(check, source.input_check, lattice))


def _reusable(lattice, frac, numbers, source: Reuse, symprec: float, angle_tolerance: float) -> SymmetryLabel | None:
    """The spglib label :func:`label_cell` may reuse from ``source`` (its guards), else None."""
    if source.earlier is not None:
        e_frac, e_numbers, e_check = source.earlier
        if e_check is not None and same_cell(lattice, e_frac, e_numbers, frac, numbers):
            return e_check.spglib
        return None
    if applies(source.dataset, symprec=symprec, angle_tolerance=angle_tolerance):
        return label_from_dataset(source.dataset, len(numbers))
    return None


def label_from_dataset(std: dict, n_conventional: int) -> SymmetryLabel:
    """spglib's label of the conventional cell (``n_conventional`` atoms) from the standardisation's dataset
    (the dict of :func:`viewcert.symmetry.standardize.standardize_with_dataset`)."""
    n = int(std["number"])
    n_ops = int(std["n_rotations"]) * int(n_conventional) // int(std["n_input"])
    return SymmetryLabel(n, str(std["international"]), str(std["pointgroup"]), crystal_system_of(n),
                         int(std["hall_number"]), n_ops)


def applies(std: dict | None, *, symprec: float, angle_tolerance: float) -> bool:
    """Guard of shortcut 1: a spglib dataset at exactly these tolerances."""
    return (std is not None and std.get("engine") == "spglib" and float(std["symprec"]) == float(symprec)
            and float(std["angle_tolerance"]) == float(angle_tolerance))


def rendered_check(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray, std: dict | None, *,
                   symprec: float, angle_tolerance: float = 5.0, cross_check: bool = True,
                   moyo_angle_tolerance: float | None = None) -> SymmetryCheck:
    """``analyse_cell`` of the conventional cell (or of the standardisation's input cell), with spglib's label
    taken from ``std`` when :func:`applies` (moyopy, when asked, still runs on the cell); otherwise the full
    ``analyse_cell``. :func:`label_cell` without the doubt guard (what the tests compare with a fresh call)."""
    return label_cell(lattice, frac, numbers, Reuse(std), reuse=True, symprec=symprec,
                      angle_tolerance=angle_tolerance, cross_check=cross_check,
                      moyo_angle_tolerance=moyo_angle_tolerance)


def doubtful(rendered: SymmetryCheck, input_check: SymmetryCheck | None, lattice: np.ndarray | None = None) -> bool:
    """Whether shortcut 1's label of the rendered cell needs a fresh spglib call (module docstring): moyopy
    disagrees with spglib on the rendered cell or on the input, or the rendered cell's ``lattice`` alone (one
    point; spglib at the same tolerances) has another lattice system than the label (a metric within τ of a
    higher lattice in the basis that is drawn, which symmetrisation or the new basis can complete)."""
    if not rendered.agree or (input_check is not None and not input_check.agree):
        return True
    if not needs_lattice_call(rendered, input_check, lattice):
        return False
    try:
        ds = _spglib.symmetry_dataset(lattice, np.zeros((1, 3)), np.ones(1, dtype=np.intc),
                                      symprec=rendered.symprec, angle_tolerance=rendered.angle_tolerance)
    except InputError:
        return True
    return lattice_system(int(ds.number), str(ds.international)) != _drawn_system(rendered.spglib)


def needs_lattice_call(rendered: SymmetryCheck, input_check: SymmetryCheck | None,
                       lattice: np.ndarray | None) -> bool:
    """Whether :func:`doubtful` asks spglib about ``lattice`` alone: spglib and moyopy agree on both cells, the
    rendered cell has spglib's label and a lattice, and no exact metric of the label's lattice system in this
    basis decides the answer (:func:`holohedral_metric`, :func:`orthogonal_metric`)."""
    if not rendered.agree or (input_check is not None and not input_check.agree):
        return False
    if rendered.spglib is None or lattice is None:
        return False
    drawn = _drawn_system(rendered.spglib)
    return not (holohedral_metric(lattice, drawn, rendered.symprec)
                or orthogonal_metric(lattice, drawn, rendered.symprec, rendered.angle_tolerance))


def _drawn_system(label: SymmetryLabel) -> str:
    """The lattice system of ``label`` as the conventional cell's vectors draw it (R groups on hexagonal axes)."""
    own = lattice_system(label.space_group, label.symbol)
    return "hexagonal" if own == "rhombohedral" else own


def holohedral_metric(lattice: np.ndarray, system: str, symprec: float) -> bool:
    """True when ``lattice`` (rows, Å) has, in this basis and to ``METRIC_RTOL`` of its squared lengths, the
    metric of a cubic lattice (``system="cubic"``: a = b = c, all angles 90°) or a hexagonal one
    (``"hexagonal"``: a = b, γ = 120°, α = β = 90°), and ``symprec`` is at most ``METRIC_MAX_TAU`` of its
    shortest vector. Then spglib's lattice-only answer (:func:`doubtful`'s one-point call) is that system at
    any angle tolerance: m-3m and 6/mmm are maximal lattice point groups, so no near-operation within such
    a τ can add to the exact ones (tested against the call, tests/symmetry/test_symmetry_shortcuts.py). False for
    every other system: those lattices can lie within τ of a higher one, and spglib decides."""
    if system not in ("cubic", "hexagonal"):
        return False
    g = np.asarray(lattice, dtype=np.float64) @ np.asarray(lattice, dtype=np.float64).T
    a2, c2 = g[0, 0], g[2, 2]
    scale = max(a2, g[1, 1], c2)
    if not (np.isfinite(scale) and scale > 0 and symprec <= METRIC_MAX_TAU * math.sqrt(min(a2, g[1, 1], c2))):
        return False
    ideal = np.diag([a2, a2, a2 if system == "cubic" else c2])
    if system == "hexagonal":
        ideal[0, 1] = ideal[1, 0] = -0.5 * a2
    return bool(np.abs(g - ideal).max() <= METRIC_RTOL * scale)


def orthogonal_metric(lattice: np.ndarray, system: str, symprec: float, angle_tolerance: float) -> bool:
    """True when spglib's lattice-only answer (:func:`doubtful`'s one-point call at ``symprec`` Å and
    ``angle_tolerance`` °) is provably ``system``, "orthorhombic" or "tetragonal" (c the unique axis):
    ``lattice`` (rows, Å) is orthogonal (each |cos| ≤ ``METRIC_RTOL``; tetragonal: a = b to ``METRIC_RTOL``
    of the squared lengths) and, for each basis vector, every lattice vector with coefficients in {-1, 0, 1}
    is within symprec of its length if the holohedry maps the basis vector onto it and farther than symprec
    otherwise (both with a margin of ``METRIC_RTOL`` times the longest vector). False decides nothing.

    Why (spglib's symmetry.c and delaunay.c): with dot products below symprec the Delaunay step keeps the
    basis, and since every sum of basis vectors is longer than each of its terms (by more than spglib's
    1e-10 Å² sorting slack) the shortest-vector choice keeps the three basis vectors, signed and permuted;
    this holds for the primitive cell (that reduced basis) and again inside the lattice search. A rotation is
    accepted only if it maps each basis vector onto a candidate of its length within symprec, i.e. into its
    orbit: so onto a signed permutation within the holohedry; all of these pass (exact lengths, angles within
    ``MIN_ANGLE_TOLERANCE``), so the lattice point group is mmm or 4/mmm and one point at the origin keeps
    it. Checked against the call (tests/symmetry/test_shortcut_metric.py) and on all 1,820 e3 cells."""
    if system not in _ORBITS or 0 < angle_tolerance < MIN_ANGLE_TOLERANCE:
        return False
    lat = np.asarray(lattice, dtype=np.float64)
    g = (lat @ lat.T).tolist()
    d = (g[0][0], g[1][1], g[2][2])
    off = (abs(g[0][1]), abs(g[0][2]), abs(g[1][2]))
    if not (all(map(math.isfinite, d + off)) and min(d) > 0):
        return False
    longest = math.sqrt(max(d))
    if (off[0] > METRIC_RTOL * math.sqrt(d[0] * d[1]) or off[1] > METRIC_RTOL * math.sqrt(d[0] * d[2])
            or off[2] > METRIC_RTOL * math.sqrt(d[1] * d[2]) or 2 * max(off) >= symprec
            or min(d) <= 4 * max(off) + 1e-9 or symprec <= METRIC_RTOL * longest**3):
        return False  # not orthogonal, or too close to spglib's reduction, sorting or volume thresholds
    if system == "tetragonal" and abs(d[0] - d[1]) > METRIC_RTOL * max(d):
        return False
    dev = np.abs(np.sqrt(((_COMBOS @ lat) ** 2).sum(axis=1)) - np.sqrt(d)[:, None])
    margin = METRIC_RTOL * longest
    orbit = _ORBITS[system]
    return bool(dev[orbit].max() < symprec - margin and dev[~orbit].min() > symprec + margin)


def lattice_system(number: int, symbol: str) -> str:
    """The lattice system of a space group: its crystal system, trigonal split into rhombohedral (R) and
    hexagonal (P)."""
    cs = crystal_system_of(number)
    if cs == "trigonal":
        return "rhombohedral" if symbol.startswith("R") else "hexagonal"
    return cs


def confirm(rendered: SymmetryCheck, lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray) -> SymmetryCheck:
    """``rendered`` with spglib's label from a fresh call on the cell at its tolerances (moyopy's answer
    kept): what shortcut 1 gives when :func:`doubtful` says so."""
    fresh = analyse_cell(lattice, frac, numbers, symprec=rendered.symprec, angle_tolerance=rendered.angle_tolerance,
                         cross_check=False)
    return replace(rendered, spglib=fresh.spglib, spglib_error=fresh.spglib_error)


def same_cell(lattice: np.ndarray, frac_a: np.ndarray, z_a: np.ndarray, frac_b: np.ndarray, z_b: np.ndarray,
              tol: float = SAME_CELL_TOL) -> bool:
    """True when the two atom sets (fractional coordinates on ``lattice`` rows, Å; labels) match one to one,
    label for label, each pair within ``tol`` Å by minimum image (shortcut 2's guard)."""
    fa = np.asarray(frac_a, dtype=np.float64).reshape(-1, 3)
    fb = np.asarray(frac_b, dtype=np.float64).reshape(-1, 3)
    za, zb = np.asarray(z_a).ravel(), np.asarray(z_b).ravel()
    if len(fa) != len(fb) or len(za) != len(fa) or len(zb) != len(fb) or not len(fa):
        return False
    if not np.array_equal(np.sort(za), np.sort(zb)):
        return False
    d = fa[:, None, :] - fb[None, :, :]
    d -= np.round(d)
    cart = d @ np.asarray(lattice, dtype=np.float64)
    dist = np.sqrt(np.add.reduce(cart * cart, axis=2))  # np.linalg.norm(cart, axis=2), its arithmetic
    close = (dist <= tol) & (za[:, None] == zb[None, :])
    return bool((close.sum(axis=1) == 1).all() and (close.sum(axis=0) == 1).all())
