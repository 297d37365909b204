"""Training crystals drawn from pyxtal, for a benchmark without a training split (``--train pyxtal:N[:SEED]``).

- **Stratified by crystal system**: N // 7 crystals of each of the seven systems, the remainder one each to
  the first systems in ``CRYSTAL_SYSTEMS`` order (triclinic first).
- **Seeded**: each system draws from its own ``numpy.random.default_rng([SEED, system index])`` (default
  SEED 23): a space group of the system (uniform), two different elements of ``ELEMENTS``, for each a
  Wyckoff multiplicity of the group of at most 16 (the smallest when none is), and pyxtal's
  ``random_state``. The same spec gives the same crystals, and the first crystals of a system do not depend
  on N (pyxtal:70's are a prefix of pyxtal:140's, per system).
- **Labelled by their own symmetry**: the crystal is pyxtal's cell reduced to its primitive cell (spglib, no
  idealisation; 208 of the study's 210 e3 eval inputs are primitive cells at 0.01 Å), and kept only when spglib at
  0.01 Å / 5° (the study's tolerances) gives it the drawn system; otherwise the draw is repeated.
- **Disjoint from the eval items**: a draw whose reduced formula is that of an eval item is repeated, and
  the ids (``pyxtal-<system>-<k>``) are checked against the eval ids.
"""

from __future__ import annotations

import importlib.util
import json
import math
import warnings
from functools import reduce

import numpy as np

from viewcert.certify.inputs import Dataset, Item
from viewcert.elements import symbol
from viewcert.errors import InputError
from viewcert.structures import Structure, sha256_text
from viewcert.symmetry.labels import CRYSTAL_SYSTEMS, crystal_system_of, symmetry_of
from viewcert.symmetry.standardize import primitive_cell

ELEMENTS = ("Li", "Na", "K", "Mg", "Ca", "Sr", "Ba", "Al", "Ga", "In", "Si", "Ge", "Sn", "Ti", "V", "Cr", "Mn",
            "Fe", "Co", "Ni", "Cu", "Zn", "Zr", "Nb", "Mo", "O", "S", "Se", "N", "P", "F", "Cl", "Br", "I")
MAX_MULTIPLICITY = 16
MAX_ATTEMPTS = 200  # draws per crystal before giving up
MAX_N = 20_000
DEFAULT_SEED = 23
SYMPREC, ANGLE_TOLERANCE = 0.01, 5.0
GROUPS = {cs: tuple(g for g in range(1, 231) if crystal_system_of(g) == cs) for cs in CRYSTAL_SYSTEMS}


def parse_spec(spec: str) -> tuple[int, int]:
    """``pyxtal:N`` or ``pyxtal:N:SEED`` → (N, SEED)."""
    parts = spec.split(":")
    try:
        if parts[0] != "pyxtal" or len(parts) not in (2, 3):
            raise ValueError
        n = int(parts[1])
        seed = int(parts[2]) if len(parts) == 3 else DEFAULT_SEED
    except ValueError:
        raise InputError(f"a pyxtal draw is pyxtal:N or pyxtal:N:SEED, got {spec!r}", field="--train") from None
    if not 7 <= n <= MAX_N or seed < 0:
        raise InputError(f"pyxtal:N needs 7 <= N <= {MAX_N} (one per crystal system at least) and SEED >= 0, "
                         f"got {spec!r}", field="--train")
    return n, seed


def per_system(n: int) -> dict[str, int]:
    """How many crystals of each system a draw of ``n`` holds."""
    q, r = divmod(n, len(CRYSTAL_SYSTEMS))
    return {cs: q + (i < r) for i, cs in enumerate(CRYSTAL_SYSTEMS)}


def reduced_formula(numbers) -> str:
    """Element symbols in alphabetical order, each with its count divided by the counts' GCD (1 omitted)."""
    z, counts = np.unique(np.asarray(numbers), return_counts=True)
    g = reduce(math.gcd, (int(c) for c in counts))
    parts = sorted((symbol(int(e)), int(c) // g) for e, c in zip(z, counts, strict=True))
    return "".join(f"{s}{c if c > 1 else ''}" for s, c in parts)


def _primitive(lattice: np.ndarray, frac: np.ndarray, numbers: np.ndarray) -> Structure | None:
    """The drawn crystal's primitive cell (spglib through ``symmetry``), or None when it cannot be reduced or its
    atoms are closer than viewcert accepts (the draw is then repeated)."""
    try:
        lat, fr, z = primitive_cell(lattice, frac, numbers, symprec=SYMPREC, angle_tolerance=ANGLE_TOLERANCE)
        return Structure(fr @ lat, z, lat)
    except InputError:
        return None


def _one(rng: np.random.Generator, system: str, taken: set[str]) -> tuple[Structure, int] | None:
    """One draw of ``system``: (primitive structure, its space group by spglib), or None when it must be
    repeated."""
    from pyxtal import pyxtal  # lazy: pyxtal is a test extra, imported only for a draw
    from pyxtal.symmetry import Group

    group = int(rng.choice(GROUPS[system]))
    species = [str(e) for e in rng.choice(ELEMENTS, 2, replace=False)]
    mult = sorted({w.multiplicity for w in Group(group).Wyckoff_positions})
    small = [m for m in mult if m <= MAX_MULTIPLICITY] or mult[:1]
    counts = [int(rng.choice(small)) for _ in species]
    state = int(rng.integers(2**31 - 1))
    c = pyxtal()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c.from_random(3, group, species, counts, random_state=state)
    except Exception:  # noqa: BLE001 - pyxtal could not place these atoms in this group: draw again
        return None
    if not c.valid:
        return None
    a = c.to_ase()
    s = _primitive(np.array(a.cell[:]), a.get_scaled_positions(wrap=True), np.asarray(a.numbers))
    if s is None or reduced_formula(s.numbers) in taken:
        return None
    lab = symmetry_of(s, symprec=SYMPREC, angle_tolerance=ANGLE_TOLERANCE, cross_check=False).label
    if lab is None or lab.crystal_system != system:
        return None
    return s, lab.space_group


def draw(spec: str, eval_items) -> Dataset:
    """The training set of ``spec`` (``pyxtal:N[:SEED]``), disjoint from ``eval_items`` by reduced formula
    and id; each item labelled with its crystal system and space group (spglib at 0.01 Å / 5°)."""
    n, seed = parse_spec(spec)
    if importlib.util.find_spec("pyxtal") is None:
        raise InputError("a pyxtal draw needs pyxtal: pip install pyxtal", field="--train")
    taken = {reduced_formula(it.read().numbers) for it in eval_items}
    eval_ids = {it.id for it in eval_items}
    items = []
    for i, (system, count) in enumerate(per_system(n).items()):
        rng = np.random.default_rng([seed, i])
        for k in range(count):
            for _ in range(MAX_ATTEMPTS):
                got = _one(rng, system, taken)
                if got is not None:
                    break
            else:
                raise InputError(f"pyxtal gave no usable {system} crystal in {MAX_ATTEMPTS} draws", field="--train")
            s, group = got
            ident = f"pyxtal-{system}-{k:05d}"
            if ident in eval_ids:
                raise InputError(f"the drawn id {ident!r} is an eval item's id", field="--train")
            digest = sha256_text(json.dumps(s.to_dict(), sort_keys=True))
            items.append(Item(ident, "structure", s, digest, {"crystal_system": system, "space_group": group},
                              "pyxtal"))
    files = {"pyxtal-draw": sha256_text("".join(it.sha256 for it in items))}
    return Dataset(spec, "pyxtal", tuple(items), files)
