"""Conventional standard cells: pymatgen's setting reproduced in plain numpy, or spglib's own.

``conventional_standard_cell(structure, *, symprec=0.01, angle_tolerance=5.0, orientation="pymatgen")``

- ``orientation="pymatgen"`` reproduces ``pymatgen.symmetry.analyzer.SpacegroupAnalyzer(s, symprec,
  angle_tolerance).get_conventional_standard_structure()`` (``international_monoclinic=True``): the same
  lattice matrix, the same sites in the same order (Setyawan & Curtarolo 2010 conventions: lattice built
  from lengths and angles, so its orientation in Cartesian space is fixed, whatever the input's). It is a
  line-by-line port of pymatgen's arithmetic, including the parts that decide boundary cases:

  1. species numbering for spglib: atomic numbers in order of first appearance, numbered 1, 2, ...
     (``SpacegroupAnalyzer.__init__``);
  2. the refined cell (``spglib.refine_cell``; here the identical ``std_lattice/std_positions/std_types``
     of the one ``get_symmetry_dataset`` call, so spglib runs once instead of pymatgen's twice), sorted
     like ``Structure.get_sorted_structure``: stable, by Pauling electronegativity then symbol, with
     pymatgen's ``Site.__lt__`` replayed literally when an element has no electronegativity (He, Ne,
     Ar, Z ≥ 104: NaN compares false both ways);
  3. the per-lattice-type branches (orthorhombic/cubic with C- and A-centring, tetragonal,
     hexagonal/rhombohedral incl. the rhombohedral→hexagonal supercell, monoclinic C and non-C then the
     international-monoclinic swap, triclinic LLL reduction with delta = 0.75 and the four sign-flip test
     matrices), with pymatgen's ``Lattice.lengths/angles/from_parameters`` formulas;
  4. wrapping with ``np.mod(frac, 1)`` and nothing else: pymatgen has no tolerance there, so a coordinate
     of -1e-17 becomes 1.0 (the atom sits on the far face). Where pymatgen maps coordinates through a
     Cartesian round trip (LLL reduction, the rhombohedral supercell) this port performs the same numpy
     calls per site, so those last-bit residues come out the same;
  5. the final re-sort (``get_sorted_structure``).

- ``orientation="spglib"`` returns spglib's standardized conventional cell as spglib gives it:
  ``std_lattice`` (rows, Å; spglib's idealized orientation), ``std_positions`` and ``std_types`` in
  spglib's order, i.e. ``spglib.standardize_cell(cell, to_primitive=False, no_idealize=False)``.

Backends (``backend=``):

- ``"spglib"`` (default, the reference): one ``spglib.get_symmetry_dataset`` call; output as above.
- ``"moyopy"`` (opt-in, ~2.5× faster on the standardization step): moyopy's ``MoyoDataset(...,
  setting=Setting.spglib())`` ``std_cell`` fed to the same pymatgen port. It is **not** identical to the
  spglib path, so it is not the default. Measured on the 1,820 e3 structures (moyopy 0.21, spglib 2.8,
  symprec 0.01; orientation="pymatgen" vs the spglib backend, lattice and positions to 1e-6 Å, same order):
  508 identical (3 of them via the spglib fallback below); 745 the same sites in another order or wrapped
  onto the opposite cell face (e.g. mp-10037, mp-10144, mp-10437); 494 another of the equivalent origins
  or axis choices, i.e. other coordinates (mp-1057, mp-10010, mp-10736); 73 another lattice (48 the same
  lengths in another assignment, e.g. mp-10045; 25 different, e.g. mp-1104594, including 4 cells where
  moyopy without an angle tolerance finds another space group than spglib with 5°: mp-1045504,
  mp-1248716, mp-2803876, mp-984785). With orientation="spglib": 432 identical, 799 another site order
  (moyopy's std cell is not ordered like spglib's: centring copies per primitive atom), the rest as above.
  moyopy's Hall number equals spglib's whenever the space group agrees (1,815/1,820), but its choice among
  equivalent origins/bases differs from spglib's in over half the cells (spglib's choice follows its own
  operation search order), so no reordering of moyopy's output can reproduce spglib's. Handing spglib the
  Hall number (``hall_number=``) does not help either: spglib's time is in the operation search
  (``get_symmetry`` alone costs as much as the dataset), not the Hall matching. Robustness: moyopy is
  never given an angle tolerance (with ``radians(5)`` moyopy 0.21 hangs > 100 s on mp-1096817 and
  mp-1228266), so ``angle_tolerance`` is ignored on this path; when moyopy fails or its iterative search
  changes symprec (mp-1228443, mp-1228701, mp-866286) the spglib path runs instead.

Both keep the input's provenance. Site labels are carried over when that is unambiguous (every input atom
that spglib maps to one primitive atom carries the same label), otherwise dropped. Errors: a molecule (no
lattice) raises :class:`~viewcert.errors.InputError` naming ``lattice``; a spglib failure raises
``InputError`` naming ``symprec``. symprec in Å, angle_tolerance in degrees (spglib's convention; a
negative value selects spglib's default angle handling).
"""

from __future__ import annotations

import itertools
import math
from math import cos, sin
from typing import Literal

import numpy as np

from viewcert.errors import InputError
from viewcert.structures import Structure
from viewcert.symmetry import _moyo, _spglib
from viewcert.symmetry.site_order import electronegativity, replay_sort

#: spglib's primitive cell, not idealised (lattice rows Å, fractional positions, types)
primitive_cell = _spglib.primitive_cell

Orientation = Literal["pymatgen", "spglib"]
ORIENTATIONS: tuple[str, ...] = ("pymatgen", "spglib")
Backend = Literal["spglib", "moyopy"]
BACKENDS: tuple[str, ...] = ("spglib", "moyopy")

__all__ = ["BACKENDS", "ORIENTATIONS", "Backend", "Orientation", "conventional_standard_cell",
           "standardize_with_dataset"]


def conventional_standard_cell(
    structure: Structure,
    *,
    symprec: float = 0.01,
    angle_tolerance: float = 5.0,
    orientation: Orientation = "pymatgen",
    backend: Backend = "spglib",
) -> Structure:
    """Conventional standard cell of a periodic ``structure`` (one spglib call).

    ``orientation="pymatgen"``: equals pymatgen's ``SpacegroupAnalyzer(s, symprec=symprec,
    angle_tolerance=angle_tolerance).get_conventional_standard_structure()`` (lattice rows, site order,
    positions, species). ``orientation="spglib"``: spglib's ``std_lattice/std_positions/std_types``.
    symprec in Å (> 0), angle_tolerance in degrees. ``backend="spglib"`` (default) is the reference;
    ``backend="moyopy"`` is faster but NOT identical (same crystal and space group, often another of the
    equivalent origins/axes and site orders; ``angle_tolerance`` is not used) — see the module docstring.
    See the module docstring for the details.

    Parameters
    ----------
    structure : Structure
        A periodic structure (lattice rows a, b, c in Å; positions Cartesian Å).
    symprec : float, default 0.01
        Distance tolerance, Å, > 0.
    angle_tolerance : float, default 5.0
        Angle tolerance, degrees (spglib only).
    orientation : {"pymatgen", "spglib"}, default "pymatgen"
        Whose lattice orientation and site order the result takes.
    backend : {"spglib", "moyopy"}, default "spglib"
        The symmetry engine.

    Returns
    -------
    Structure
        The conventional standard cell: lattice rows a, b, c in Å, positions Cartesian Å.

    Raises
    ------
    InputError
        A molecule (field ``lattice``), an unknown orientation or backend, a tolerance out of range, or a cell
        whose symmetry the engine cannot find (field ``symprec``); the source names the structure.
    """
    return standardize_with_dataset(structure, symprec=symprec, angle_tolerance=angle_tolerance,
                                    orientation=orientation, backend=backend)[0]


def standardize_with_dataset(
    structure: Structure,
    *,
    symprec: float = 0.01,
    angle_tolerance: float = 5.0,
    orientation: Orientation = "pymatgen",
    backend: Backend = "spglib",
) -> tuple[Structure, dict]:
    """:func:`conventional_standard_cell` and the one dataset it came from (``_spglib.standardized_cell``'s
    dict: space group, Hall number, point group, operations of the input; ``"engine"`` names the backend
    that produced it, ``"symprec"``/``"angle_tolerance"`` the tolerances). ``viewcert.symmetry.reuse``
    turns it into the conventional cell's label without a second spglib call."""
    src = structure.identifier or None
    if orientation not in ORIENTATIONS:
        raise InputError(f"orientation must be one of {ORIENTATIONS}, got {orientation!r}", source=src,
                         field="orientation")
    if backend not in BACKENDS:
        raise InputError(f"backend must be one of {BACKENDS}, got {backend!r}", source=src, field="backend")
    if structure.lattice is None:
        raise InputError("a conventional cell needs a periodic structure; this one has no lattice",
                         source=src, field="lattice")
    if not (isinstance(symprec, int | float) and math.isfinite(symprec) and symprec > 0):
        raise InputError(f"symprec must be a positive number of Å, got {symprec!r}", source=src, field="symprec")
    if not (isinstance(angle_tolerance, int | float) and math.isfinite(angle_tolerance)):
        raise InputError(f"angle_tolerance must be a finite number of degrees, got {angle_tolerance!r}",
                         source=src, field="angle_tolerance")

    species, types = _first_appearance_types(structure.numbers)
    std = None
    if backend == "moyopy":
        std = _moyo.standardized_cell(structure.lattice, structure.frac_coords, types, symprec=float(symprec))
    try:
        std = std or _spglib.standardized_cell(structure.lattice, structure.frac_coords, types,
                                               symprec=float(symprec), angle_tolerance=float(angle_tolerance))
    except InputError as exc:
        raise InputError(str(exc).split(": ", 1)[-1], source=src, field="symprec") from None
    z_std = species[std["types"] - 1]
    if orientation == "spglib":
        lat, frac, z, origin = std["lattice"], std["frac"], z_std, np.arange(len(z_std))
    else:
        lat, frac, z, origin = _pymatgen_conventional(std["lattice"], std["frac"], z_std, std["international"],
                                                      std["number"])
    labels = _map_labels(structure.site_labels, std["mapping_to_primitive"], std["std_mapping_to_primitive"],
                         origin)
    std = {**std, "engine": std.get("engine", "moyopy"), "symprec": float(symprec),
           "angle_tolerance": float(angle_tolerance), "n_input": int(len(structure.numbers))}
    return Structure(frac @ lat, z, lat, site_labels=labels, provenance=structure.provenance), std


# ----------------------------------------------------------------------------- helpers
def _first_appearance_types(numbers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(species by type - 1, types 1..k): distinct atomic numbers numbered in order of first appearance,
    as ``SpacegroupAnalyzer`` numbers its unique species."""
    uniq, first, inv = np.unique(numbers, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[by_first] = np.arange(len(uniq))
    return uniq[by_first], rank[inv.ravel()] + 1


def _map_labels(labels, mapping_in: np.ndarray, std_map: np.ndarray, origin: np.ndarray):
    if labels is None:
        return None
    of_prim: dict[int, str] = {}
    for lab, p in zip(labels, mapping_in.tolist(), strict=True):
        if of_prim.setdefault(p, lab) != lab:
            return None
    try:
        return tuple(of_prim[p] for p in std_map[origin].tolist())
    except KeyError:  # a site the backend could not map back to an input atom (moyopy path): no labels
        return None


def _sorted_order(z: np.ndarray) -> np.ndarray:
    """Permutation that ``Structure.get_sorted_structure`` applies (Python's stable sort with
    ``Site.__lt__``). With finite electronegativities that is a stable sort on a total order; otherwise
    replay the comparisons."""
    _, rank = electronegativity()
    r = rank[z]
    if (r >= 0).all():
        return np.argsort(r, kind="stable")
    return replay_sort(z)


def _lattice_type(international: str, number: int) -> str:
    """pymatgen ``get_lattice_type``: crystal family, except R-centred trigonal = rhombohedral."""
    if not 0 < number < 231:
        raise InputError(f"spglib returned space group number {number}", field="symprec")
    if international.startswith("R"):
        return "rhombohedral"
    for bound, name in ((3, "triclinic"), (16, "monoclinic"), (75, "orthorhombic"), (143, "tetragonal"),
                        (195, "hexagonal")):
        if number < bound:
            return name
    return "cubic"


# pymatgen.core.Lattice arithmetic, verbatim ------------------------------------------------------------
def _lengths(m: np.ndarray) -> tuple[float, float, float]:
    return tuple(np.sqrt((m**2).sum(axis=1)).tolist())


def _angles(m: np.ndarray) -> tuple[float, float, float]:
    lengths = _lengths(m)
    cosines = [np.dot(m[(dim + 1) % 3], m[(dim + 2) % 3]) / (lengths[(dim + 1) % 3] * lengths[(dim + 2) % 3])
               for dim in range(3)]
    return tuple(np.rad2deg(np.arccos(np.array(cosines).clip(-1, 1))).tolist())  # pymatgen clips each: the same


def _close_to_first(values: tuple[float, ...], atol: float) -> bool:
    """pymatgen's ``np.allclose(values, values[0], atol=atol, rtol=0.0)`` for finite values."""
    return all(abs(x - values[0]) <= atol for x in values)


def _matrix(rows) -> np.ndarray:
    """``Lattice(rows).matrix``."""
    return np.array(rows, dtype=np.float64).reshape((3, 3))


def _from_parameters(a: float, b: float, c: float, alpha: float, beta: float, gamma: float) -> np.ndarray:
    """``Lattice.from_parameters`` (vesta=False): c along z, a in the xz plane."""
    angles_r = np.radians([alpha, beta, gamma])
    cos_alpha, cos_beta, cos_gamma = np.cos(angles_r)
    sin_alpha, sin_beta, sin_gamma = np.sin(angles_r)
    val = (cos_alpha * cos_beta - cos_gamma) / (sin_alpha * sin_beta)
    val = np.clip(val, -1, 1)
    gamma_star = np.arccos(val)
    vector_a = [a * sin_beta, 0.0, a * cos_beta]
    vector_b = [-b * sin_alpha * np.cos(gamma_star), b * sin_alpha * np.sin(gamma_star), b * cos_alpha]
    vector_c = [0.0, 0.0, float(c)]
    return _matrix([vector_a, vector_b, vector_c])


def _lattice_eq(m1: np.ndarray, m2: np.ndarray) -> bool:
    """``Lattice.__eq__`` (same pbc assumed)."""
    return bool(np.allclose(m1, m2))


def _lll(matrix: np.ndarray, delta: float = 0.75) -> tuple[np.ndarray, np.ndarray]:
    """``Lattice._calculate_lll``: (reduced matrix, mapping), statement for statement."""
    a = matrix.copy().T
    b = np.zeros((3, 3))
    u = np.zeros((3, 3))
    m = np.zeros(3)
    b[:, 0] = a[:, 0]
    m[0] = np.dot(b[:, 0], b[:, 0])
    for i in range(1, 3):
        u[i, :i] = np.dot(a[:, i].T, b[:, :i]) / m[:i]
        b[:, i] = a[:, i] - np.dot(b[:, :i], u[i, :i].T)
        m[i] = np.dot(b[:, i], b[:, i])
    k = 2
    mapping = np.identity(3, dtype=np.double)
    while k <= 3:
        for i in range(k - 1, 0, -1):
            q = round(u[k - 1, i - 1])
            if q != 0:
                a[:, k - 1] -= q * a[:, i - 1]
                mapping[:, k - 1] -= q * mapping[:, i - 1]
                uu = list(u[i - 1, 0 : (i - 1)])
                uu.append(1)
                u[k - 1, 0:i] -= q * np.array(uu)
        if np.dot(b[:, k - 1], b[:, k - 1]) >= (delta - abs(u[k - 1, k - 2]) ** 2) * np.dot(
            b[:, (k - 2)], b[:, (k - 2)]
        ):
            k += 1
        else:
            v = a[:, k - 1].copy()
            a[:, k - 1] = a[:, k - 2].copy()
            a[:, k - 2] = v
            v_m = mapping[:, k - 1].copy()
            mapping[:, k - 1] = mapping[:, k - 2].copy()
            mapping[:, k - 2] = v_m
            for s in range(k - 1, k + 1):
                u[s - 1, : (s - 1)] = np.dot(a[:, s - 1].T, b[:, : (s - 1)]) / m[: (s - 1)]
                b[:, s - 1] = a[:, s - 1] - np.dot(b[:, : (s - 1)], u[s - 1, : (s - 1)].T)
                m[s - 1] = np.dot(b[:, s - 1], b[:, s - 1])
            if k > 2:
                k -= 1
            else:
                p = np.dot(a[:, k:3].T, b[:, (k - 2) : k])
                qm = np.diag(m[(k - 2) : k])
                u[k:3, (k - 2) : k] = np.linalg.lstsq(qm.T, p.T, rcond=None)[0].T
    return a.T, mapping.T


def _to_new_lattice(frac: np.ndarray, old: np.ndarray, new: np.ndarray, shifts: np.ndarray | None = None):
    """pymatgen's per-site Cartesian round trip ``np.dot(np.dot(f, old) [+ shift], inv(new))``, one
    ``np.dot`` per site as pymatgen does (so last-bit residues, and hence ``np.mod`` at 0/1, agree)."""
    inv = np.linalg.inv(_matrix(new))
    out = []
    for f in frac:
        coords = np.dot(f, old)
        if shifts is None:
            out.append(np.dot(coords, inv))
        else:
            out.extend(np.dot(coords + vec, inv) for vec in shifts)
    return np.array(out, dtype=np.float64).reshape(-1, 3)


def _lattice_points_in_supercell(supercell_matrix: np.ndarray) -> np.ndarray:
    """``pymatgen.util.coord.lattice_points_in_supercell``."""
    diagonals = np.array([[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]])
    d_points = np.dot(diagonals, supercell_matrix)
    mins = np.min(d_points, axis=0)
    maxes = np.max(d_points, axis=0) + 1
    ar = np.arange(mins[0], maxes[0])[:, None] * np.array([1, 0, 0])[None, :]
    br = np.arange(mins[1], maxes[1])[:, None] * np.array([0, 1, 0])[None, :]
    cr = np.arange(mins[2], maxes[2])[:, None] * np.array([0, 0, 1])[None, :]
    all_points = (ar[:, None, None] + br[None, :, None] + cr[None, None, :]).reshape((-1, 3))
    frac_points = np.dot(all_points, np.linalg.inv(np.asarray(supercell_matrix)))
    t_vecs = frac_points[np.all(frac_points < 1 - 1e-10, axis=1) & np.all(frac_points >= -1e-10, axis=1)]
    if len(t_vecs) != round(abs(np.linalg.det(np.asarray(supercell_matrix)))):  # pragma: no cover
        raise ValueError("The number of transformed vectors mismatch.")
    return t_vecs


_RHOMB_TO_HEX = np.array(((1, -1, 0), (0, 1, -1), (1, 1, 1)), dtype=int)


def _rhombohedral_supercell(m: np.ndarray, frac: np.ndarray, z: np.ndarray, origin: np.ndarray):
    """``Structure.make_supercell(((1, -1, 0), (0, 1, -1), (1, 1, 1)))``: each site followed by its
    images, each folded twice with ``np.mod`` (``from_sites(to_unit_cell=True)`` then
    ``site.to_unit_cell``)."""
    new = _matrix(np.dot(_RHOMB_TO_HEX, m))
    shifts = np.dot(_lattice_points_in_supercell(_RHOMB_TO_HEX), new)
    out = np.mod(np.mod(_to_new_lattice(frac, m, new, shifts), 1), 1)
    n_img = len(shifts)
    return new, out, np.repeat(z, n_img), np.repeat(origin, n_img)


def _reciprocal_all_acute_or_obtuse(matrix: list) -> bool:
    inv_mat = np.linalg.inv(_matrix(matrix)).T
    recp_angles = _angles(_matrix(inv_mat * 2 * np.pi))
    return all(a <= 90 for a in recp_angles) or all(a > 90 for a in recp_angles)


def _triclinic_candidates(a, b, c, alpha, beta, gamma):
    """pymatgen's four test matrices with their transformation matrices, in pymatgen's order."""
    # pymatgen's literal expressions (math.cos/sin), so that signs and rounding distribute identically
    sq = math.sqrt(sin(gamma) ** 2 - cos(alpha) ** 2 - cos(beta) ** 2 + 2 * cos(alpha) * cos(beta) * cos(gamma))
    return (
        ([[a, 0, 0], [b * cos(gamma), b * sin(gamma), 0.0],
          [c * cos(beta), c * (cos(alpha) - cos(beta) * cos(gamma)) / sin(gamma), c * sq / sin(gamma)]],
         np.eye(3, dtype=np.float64)),
        ([[-a, 0, 0], [b * cos(gamma), b * sin(gamma), 0.0],
          [-c * cos(beta), -c * (cos(alpha) - cos(beta) * cos(gamma)) / sin(gamma), -c * sq / sin(gamma)]],
         np.array([[-1, 0, 0], [0, 1, 0], [0, 0, -1]])),
        ([[-a, 0, 0], [-b * cos(gamma), -b * sin(gamma), 0.0],
          [c * cos(beta), c * (cos(alpha) - cos(beta) * cos(gamma)) / sin(gamma), c * sq / sin(gamma)]],
         np.array([[-1, 0, 0], [0, -1, 0], [0, 0, 1]])),
        ([[a, 0, 0], [-b * cos(gamma), -b * sin(gamma), 0.0],
          [-c * cos(beta), -c * (cos(alpha) - cos(beta) * cos(gamma)) / sin(gamma), -c * sq / sin(gamma)]],
         np.array([[1, 0, 0], [0, -1, 0], [0, 0, -1]])),
    )


def _conv_orthorhombic(m, frac, z, origin, international: str):
    """pymatgen's orthorhombic/cubic branch (C- and A-centred settings first). Returns (new lattice,
    transformation, frac, Z, origin)."""
    transf = np.zeros(shape=(3, 3), dtype=np.float64)
    abc = _lengths(m)
    sorted_lengths = sorted(abc)
    sorted_idx = sorted(range(3), key=abc.__getitem__)  # sorted_dic's orig_index (stable by length)
    if international.startswith("C"):
        transf[2] = [0, 0, 1]
        a, b = sorted(abc[:2])
        for i, j in enumerate(sorted((0, 1), key=abc.__getitem__)):
            transf[i][j] = 1
        c = abc[2]
    elif international.startswith("A"):
        transf[2] = [1, 0, 0]
        a, b = sorted(abc[1:])
        for i, j in enumerate(sorted((1, 2), key=abc.__getitem__)):
            transf[i][j] = 1
        c = abc[0]
    else:
        for i, j in enumerate(sorted_idx):
            transf[i][j] = 1
        a, b, c = sorted_lengths
    new_lat = _from_parameters(a, b, c, 90, 90, 90)
    return new_lat, transf, frac, z, origin


def _conv_tetragonal(m, frac, z, origin, international: str):
    """pymatgen's tetragonal branch. Returns (new lattice, transformation, frac, Z, origin)."""
    tol = 1e-5
    transf = np.zeros(shape=(3, 3), dtype=np.float64)
    abc = _lengths(m)
    sorted_lengths = sorted(abc)
    sorted_idx = sorted(range(3), key=abc.__getitem__)  # sorted_dic's orig_index (stable by length)
    a, b, c = sorted_lengths
    for i, j in enumerate(sorted_idx):
        transf[i][j] = 1
    if abs(b - c) < tol < abs(a - c):
        a, c = c, a
        transf = np.dot([[0, 0, 1], [0, 1, 0], [1, 0, 0]], transf)
    new_lat = _from_parameters(a, a, c, 90, 90, 90)
    return new_lat, transf, frac, z, origin


def _conv_hexagonal(m, frac, z, origin, international: str):
    """pymatgen's hexagonal/rhombohedral branch (rhombohedral cells to the hexagonal supercell). Returns (new
    lattice, transformation, frac, Z, origin)."""
    transf = np.zeros(shape=(3, 3), dtype=np.float64)
    abc = _lengths(m)
    if _close_to_first(abc, 1e-3) and _close_to_first(_angles(m), 1e-2):
        m_s, frac, z, origin = _rhombohedral_supercell(m, frac, z, origin)
        a, b, c = sorted(_lengths(m_s))
    else:
        a, b, c = abc
    if abs(b - c) < 0.001:
        a, c = c, a
    new_lat = _matrix([[a / 2, -a * math.sqrt(3) / 2, 0], [a / 2, a * math.sqrt(3) / 2, 0], [0, 0, c]])
    transf = np.eye(3, dtype=np.float64)
    return new_lat, transf, frac, z, origin


def _monoclinic_c_setting(m, abc) -> tuple:
    """pymatgen's monoclinic branch for a C-centred group: (new matrix rows, transformation) with c kept and
    the non-right angle between b and c."""
    transf = np.zeros(shape=(3, 3), dtype=np.float64)
    new_matrix = None
    transf[2] = [0, 0, 1]
    idx = sorted((0, 1), key=abc.__getitem__)
    a, b, c = abc[idx[0]], abc[idx[1]], abc[2]
    for tp2 in itertools.permutations(range(2), 2):
        latt2 = _matrix([m[tp2[0]], m[tp2[1]], m[2]])
        lengths, angles = _lengths(latt2), _angles(latt2)
        alpha_degrees = angles[0]
        if math.isclose(alpha_degrees, 90, rel_tol=0, abs_tol=1e-10):
            continue
        transf = np.zeros(shape=(3, 3))
        transf[2][2] = 1
        if alpha_degrees > 90:
            flipped = _matrix([-m[tp2[0]], -m[tp2[1]], m[2]])
            a, b, c = _lengths(flipped)
            alpha_degrees = _angles(flipped)[0]
            transf[0][tp2[0]] = -1
            transf[1][tp2[1]] = -1
        elif alpha_degrees < 90:
            transf[0][tp2[0]] = 1
            transf[1][tp2[1]] = 1
            a, b, c = lengths
            alpha_degrees = angles[0]
        alpha_radians = math.radians(alpha_degrees)
        new_matrix = [[a, 0, 0], [0, b, 0], [0, c * cos(alpha_radians), c * sin(alpha_radians)]]
    if new_matrix is None:
        new_matrix = [[a, 0, 0], [0, b, 0], [0, 0, c]]
        for i, j in enumerate(idx):
            transf[i][j] = 1
    return new_matrix, transf


def _monoclinic_p_setting(m, abc) -> tuple:
    """pymatgen's monoclinic branch for a primitive group: (new matrix rows, transformation) over the axis
    permutations with b < c and the non-right angle between b and c."""
    transf = np.zeros(shape=(3, 3), dtype=np.float64)
    sorted_idx = sorted(range(3), key=abc.__getitem__)  # sorted_dic's orig_index (stable by length)
    new_matrix = None
    for tp3 in itertools.permutations(range(3), 3):
        perm = _matrix([m[tp3[0]], m[tp3[1]], m[tp3[2]]])
        a, b, c = _lengths(perm)
        alpha = _angles(perm)[0]
        if math.isclose(alpha, 90, rel_tol=0, abs_tol=1e-10) or b >= c:
            continue
        transf = np.zeros(shape=(3, 3))
        transf[2][tp3[2]] = 1
        if alpha > 90 and b < c:
            flipped = _matrix([-m[tp3[0]], -m[tp3[1]], m[tp3[2]]])
            a, b, c = _lengths(flipped)
            alpha = _angles(flipped)[0]
            transf[0][tp3[0]] = -1
            transf[1][tp3[1]] = -1
        elif alpha < 90 and b < c:
            transf[0][tp3[0]] = 1
            transf[1][tp3[1]] = 1
        alpha = math.radians(alpha)
        new_matrix = [[a, 0, 0], [0, b, 0], [0, c * cos(alpha), c * sin(alpha)]]
    if new_matrix is None:
        new_matrix = list(np.zeros(shape=(3, 3)))
        for i, j in enumerate(sorted_idx):
            new_matrix[i] = m[j]
            transf[i][j] = 1
    return new_matrix, transf


def _beta_non_right(new_matrix, transf) -> tuple:
    """international_monoclinic=True: axes a and b swapped, c reversed, so beta is the non-right angle (made
    obtuse): (new lattice, transformation)."""
    op = [[0, 1, 0], [1, 0, 0], [0, 0, -1]]
    transf = np.dot(op, transf)
    new_matrix = np.dot(op, new_matrix)
    if _angles(_matrix(new_matrix))[1] < 90:
        op = [[-1, 0, 0], [0, -1, 0], [0, 0, 1]]
        transf = np.dot(op, transf)
        new_matrix = np.dot(op, new_matrix)
    return _matrix(new_matrix), transf


def _conv_monoclinic(m, frac, z, origin, international: str):
    """pymatgen's monoclinic branch, international_monoclinic=True (beta the non-right angle). Returns (new
    lattice, transformation, frac, Z, origin)."""
    abc = _lengths(m)
    setting = _monoclinic_c_setting if international.startswith("C") else _monoclinic_p_setting
    new_lat, transf = _beta_non_right(*setting(m, abc))
    return new_lat, transf, frac, z, origin


def _conv_triclinic(m, frac, z, origin, international: str):
    """pymatgen's triclinic branch: LLL reduction (Structure.get_reduced_structure("LLL")), then pymatgen's
    test matrices. Returns (new lattice, transformation, frac, Z, origin)."""
    transf = np.zeros(shape=(3, 3), dtype=np.float64)
    red, _ = _lll(m)
    if not _lattice_eq(red, m):
        frac = np.mod(_to_new_lattice(frac, m, red), 1)
        m = _matrix(red)
    a, b, c = _lengths(m)
    alpha, beta, gamma = (math.radians(i) for i in _angles(m))
    new_matrix = None
    for test_matrix, t in _triclinic_candidates(a, b, c, alpha, beta, gamma):
        if _reciprocal_all_acute_or_obtuse(test_matrix):
            transf, new_matrix = t, test_matrix
    if new_matrix is None:  # pymatgen fails here too (Lattice(None))
        raise InputError("no sign choice of the LLL-reduced triclinic cell has all-acute or all-obtuse "
                         "reciprocal angles (pymatgen's triclinic convention is undefined here)",
                         field="structure")
    new_lat = _matrix(new_matrix)
    return new_lat, transf, frac, z, origin


def _pymatgen_conventional(lat0: np.ndarray, frac0: np.ndarray, z0: np.ndarray, international: str,
                           number: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Port of ``get_conventional_standard_structure(international_monoclinic=True)`` starting from
    spglib's refined cell. Returns (lattice rows, wrapped fractional coords, Z, index into the refined
    cell of each output site)."""
    # get_refined_structure(): Structure(lattice, species, scaled_positions).get_sorted_structure()
    order = _sorted_order(z0)
    frac, z, origin = frac0[order], z0[order], order
    m = _matrix(lat0)
    latt_type = _lattice_type(international, number)
    branch = {"orthorhombic": _conv_orthorhombic, "cubic": _conv_orthorhombic, "tetragonal": _conv_tetragonal,
              "hexagonal": _conv_hexagonal, "rhombohedral": _conv_hexagonal,
              "monoclinic": _conv_monoclinic}.get(latt_type, _conv_triclinic)
    new_lat, transf, frac, z, origin = branch(m, frac, z, origin, international)
    if np.linalg.det(new_lat) < 0:
        # pymatgen keeps a left-handed cell where a branch's fallback orders the axes by length (a monoclinic
        # cell whose angles are all 90°); a Structure is right-handed: the same cell inverted through the
        # origin (every lattice row and fractional coordinate negated: lengths, angles and atoms unchanged)
        new_lat, transf = -new_lat, -transf
    new_frac = np.mod(frac @ transf.T, 1)
    order = _sorted_order(z)
    return new_lat, new_frac[order], z[order], origin[order]
