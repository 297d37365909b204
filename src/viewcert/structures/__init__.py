"""Structure: the frozen value object every other part reads.

Frames and units: Cartesian world frame, Å, right-handed. A lattice holds the vectors a, b, c as **rows**
(Å), so Cartesian = fractional @ lattice. A structure is periodic exactly when it has a lattice.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from viewcert.elements import MAX_Z, symbols
from viewcert.errors import InputError

__all__ = ["BRUTE_FORCE_MAX_ATOMS", "MAX_COORDINATE", "MIN_CELL_VOLUME", "MIN_INTERATOMIC_DISTANCE", "Provenance",
           "Structure", "sha256_text", "tiling_translations"]

MIN_INTERATOMIC_DISTANCE = 0.5  # Å; closer atoms are refused as a malformed structure
MIN_CELL_VOLUME = 1e-6  # Å^3
MAX_COORDINATE = 1e6  # Å: any position or lattice component beyond this is a unit or overflow error
#: periodic cells up to this many atoms are validated by the brute-force kernel (no ``scipy.spatial`` import,
#: which costs 0.25-0.9 s in every worker process that meets one cell above 48 atoms); above it, the tree
BRUTE_FORCE_MAX_ATOMS = 256


def _kdtree(points):
    """``scipy.spatial.cKDTree(points)``, imported at the first call."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    return cKDTree(points)


def _closest_image_pair(cart: np.ndarray, shifts: np.ndarray) -> tuple[int, int, float]:
    """``viewcert.structures._kernels.closest_image_pair_nb`` (home cell at row 13 of ``shifts``)."""
    # lazy: start-up time (numba takes 0.4 s to import; only a periodic structure needs it)
    from viewcert.structures._kernels import closest_image_pair_nb

    return closest_image_pair_nb(cart, shifts, 13)  # (int, int, float)


def sha256_text(text: str | bytes) -> str:
    """SHA-256 of a text (UTF-8) or of bytes, as provenance records it.

    Parameters
    ----------
    text : str or bytes
        The text, encoded as UTF-8, or the bytes as read.

    Returns
    -------
    str
        The digest as 64 lowercase hex digits.
    """
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Provenance:
    """Where a structure came from: file path or database id, and the SHA-256 of the bytes read.
    ``choices``: what the reader chose where the file allowed more than one reading, as (name, value) text
    pairs (e.g. the alternate locations kept: ``viewcert.io.altloc``); recorded in certificates."""

    source: str = ""
    identifier: str = ""
    sha256: str = ""
    choices: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        pairs = self.choices.items() if isinstance(self.choices, dict) else self.choices
        object.__setattr__(self, "choices", tuple((str(k), str(v)) for k, v in pairs))

    def to_dict(self) -> dict:
        d = {"source": self.source, "identifier": self.identifier, "sha256": self.sha256}
        if self.choices:  # left out when empty: dicts written before the field are unchanged
            d["choices"] = dict(self.choices)
        return d


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


def _first(mask: np.ndarray) -> int:
    """Index of the first true entry of ``mask`` (one exists)."""
    return int(np.flatnonzero(mask)[0])


def _checked_atoms(positions, numbers, src: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Positions (n, 3) in Å and atomic numbers (n,) as float64/int64, or the first thing wrong with them."""
    pos = np.asarray(positions, dtype=np.float64)
    if pos.ndim != 2 or pos.shape[1] != 3:
        raise InputError(f"positions must have shape (n, 3), got {pos.shape}", source=src, field="positions")
    try:
        num = np.asarray(numbers, dtype=np.int64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"atomic numbers must be integers: {exc}", source=src, field="numbers") from None
    if num.shape != (pos.shape[0],):
        raise InputError(
            f"numbers must have shape ({pos.shape[0]},) to match positions, got {num.shape}",
            source=src,
            field="numbers",
        )
    if pos.shape[0] == 0:
        raise InputError("structure has no atoms", source=src, field="positions")
    # one reduction per array in the common case (the comparison is false for NaN and inf too); the first
    # offending atom is looked for only when it fails
    if not np.abs(pos).max() <= MAX_COORDINATE:
        if not np.isfinite(pos).all():
            i = _first(~np.isfinite(pos).all(axis=1))
            raise InputError(f"atom {i} has a non-finite position {pos[i].tolist()}", source=src, field="positions")
        i = _first(np.abs(pos).max(axis=1) > MAX_COORDINATE)
        raise InputError(f"atom {i} lies {np.abs(pos[i]).max():.3g} Å from the origin (limit "
                         f"{MAX_COORDINATE:g} Å): a unit or overflow error", source=src, field="positions")
    if num.min() < 1 or num.max() > MAX_Z:
        i = _first((num < 1) | (num > MAX_Z))
        raise InputError(f"atom {i} has atomic number {num[i]} outside 1..{MAX_Z}", source=src, field="numbers")
    return pos, num


def _checked_lattice(lattice, src: str | None) -> np.ndarray | None:
    """The lattice (rows a, b, c in Å) as float64, or the first thing wrong with it; None stays None."""
    if lattice is None:
        return None
    lat = np.asarray(lattice, dtype=np.float64)
    if lat.shape != (3, 3):
        raise InputError(f"lattice must be 3x3 (rows a, b, c), got {lat.shape}", source=src, field="lattice")
    if not np.abs(lat).max() <= MAX_COORDINATE:  # false for NaN and inf too
        if not np.isfinite(lat).all():
            raise InputError("lattice has non-finite entries", source=src, field="lattice")
        raise InputError(f"lattice vector component {np.abs(lat).max():.3g} Å exceeds {MAX_COORDINATE:g} Å",
                         source=src, field="lattice")
    vol = float(np.linalg.det(lat))
    if abs(vol) < MIN_CELL_VOLUME:
        raise InputError(f"lattice has zero volume ({vol:.3g} Å^3)", source=src, field="lattice")
    if vol < 0:
        raise InputError(
            f"lattice rows a, b, c form a left-handed set (det = {vol:.4g}); reorder or negate one",
            source=src,
            field="lattice",
        )
    return lat


def _checked_labels(site_labels, n: int, src: str | None) -> tuple[str, ...] | None:
    """Site labels as a tuple of n strings, or an error naming the count mismatch; None stays None."""
    if site_labels is None:
        return None
    labels = tuple(map(str, site_labels))
    if len(labels) != n:
        raise InputError(f"{len(labels)} site labels for {n} atoms", source=src, field="site_labels")
    return labels


@dataclass(frozen=True, eq=False)
class Structure:
    """Atoms in Cartesian Å with atomic numbers; periodic when ``lattice`` (rows a, b, c in Å) is given.

    Construction validates: shapes, finite values, atomic numbers 1..118, non-empty, lattice volume > 0,
    and no two atoms closer than 0.5 Å (minimum image when periodic). Arrays are stored read-only, as is
    ``frac_coords``, computed once (the validation computes it for a periodic structure).
    """

    positions: np.ndarray
    numbers: np.ndarray
    lattice: np.ndarray | None = None
    site_labels: tuple[str, ...] | None = None
    provenance: Provenance = field(default_factory=Provenance)

    def __post_init__(self) -> None:
        src = self.provenance.source or self.provenance.identifier or None
        pos, num = _checked_atoms(self.positions, self.numbers, src)
        lat = _checked_lattice(self.lattice, src)
        labels = _checked_labels(self.site_labels, pos.shape[0], src)
        object.__setattr__(self, "positions", _readonly(pos))
        object.__setattr__(self, "numbers", _readonly(num))
        object.__setattr__(self, "lattice", None if lat is None else _readonly(lat))
        object.__setattr__(self, "site_labels", labels)
        if self._clearly_separated():
            return
        close = self.closest_pair()
        if close is not None and close[2] < MIN_INTERATOMIC_DISTANCE:
            i, j, d = close
            raise InputError(
                f"atoms {i} and {j} are {d:.4f} Å apart (< {MIN_INTERATOMIC_DISTANCE} Å): overlapping or "
                "duplicated sites",
                source=src,
                field="positions",
            )

    def _clearly_separated(self) -> bool:
        """True when no two atoms of a periodic cell of 49 to ``BRUTE_FORCE_MAX_ATOMS`` atoms lie closer than
        ``MIN_INTERATOMIC_DISTANCE`` (minimum image), decided by the brute-force kernel over the same 27 images
        :meth:`closest_pair` searches with a tree; False decides nothing (the validation then asks
        :meth:`closest_pair`, as it always did, for the verdict and the message). The kernel's distance and the
        tree's are the same minimum computed in another order of operations, so they differ by rounding only:
        a margin of 1e-9 times the coordinates' magnitude keeps every verdict the tree would give (cells up to 48
        atoms already use the kernel in :meth:`closest_pair`)."""
        if self.lattice is None or not 48 < self.n_atoms <= BRUTE_FORCE_MAX_ATOMS:
            return False
        lat = self.lattice
        frac = self.frac_coords
        cart = (frac - np.floor(frac)) @ lat
        shifts = _SHELL27 @ lat
        d = _closest_image_pair(cart, shifts)[2]
        margin = 1e-9 * (1.0 + float(np.abs(cart).max()) + float(np.abs(shifts).max()))
        return bool(d > MIN_INTERATOMIC_DISTANCE + margin)  # False for NaN

    # ----------------------------------------------------------------- basic views
    @property
    def n_atoms(self) -> int:
        return int(self.positions.shape[0])

    @property
    def is_periodic(self) -> bool:
        return self.lattice is not None

    @property
    def symbols(self) -> tuple[str, ...]:
        return symbols(self.numbers)

    @property
    def identifier(self) -> str:
        return self.provenance.identifier or self.provenance.source

    @property
    def volume(self) -> float:
        if self.lattice is None:
            raise InputError("a molecule has no cell volume", field="lattice")
        return float(np.linalg.det(self.lattice))

    def __len__(self) -> int:
        return self.n_atoms

    def __repr__(self) -> str:
        formula = self.formula
        kind = "crystal" if self.is_periodic else "molecule"
        return f"Structure({formula}, {self.n_atoms} atoms, {kind}, id={self.identifier!r})"

    @property
    def formula(self) -> str:
        counts: dict[str, int] = {}
        for sym in self.symbols:
            counts[sym] = counts.get(sym, 0) + 1
        # sorted by symbol (code point order, as np.unique sorts a string array)
        return "".join(f"{s}{c if c > 1 else ''}" for s, c in sorted(counts.items()))

    def equals(self, other: Structure, *, atol: float = 0.0) -> bool:
        """Same atoms in the same order, positions and lattice within ``atol`` Å."""
        if self.n_atoms != other.n_atoms or not np.array_equal(self.numbers, other.numbers):
            return False
        if (self.lattice is None) != (other.lattice is None):
            return False
        if self.lattice is not None and not np.allclose(self.lattice, other.lattice, rtol=0, atol=atol):
            return False
        return bool(np.allclose(self.positions, other.positions, rtol=0, atol=atol))

    # ----------------------------------------------------------------- periodic operations
    def _require_lattice(self, what: str) -> np.ndarray:
        if self.lattice is None:
            raise InputError(f"{what} needs a periodic structure (this one has no lattice)", field="lattice")
        return self.lattice

    @cached_property
    def frac_coords(self) -> np.ndarray:
        """Fractional coordinates (n, 3): positions @ inv(lattice). Read-only, computed at the first call (from
        the read-only positions and lattice, so never stale)."""
        lat = self._require_lattice("fractional coordinates")
        frac = np.linalg.solve(lat.T, self.positions.T).T
        frac.setflags(write=False)
        return frac

    def __getstate__(self) -> dict:
        """Pickled state: the fields (``frac_coords``, a cache, is recomputed after unpickling)."""
        return {k: v for k, v in self.__dict__.items() if k != "frac_coords"}

    def with_positions(self, positions: np.ndarray) -> Structure:
        return replace(self, positions=positions)

    def with_provenance(self, provenance: Provenance) -> Structure:
        """The same atoms under another provenance. A trusted internal constructor: the arrays are this
        (validated, read-only) structure's own, so validation — which cannot fail — is skipped."""
        out = object.__new__(Structure)
        out.__dict__.update(self.__dict__)  # the fields and the cached frac_coords
        object.__setattr__(out, "provenance", provenance)
        return out

    def wrapped(self) -> Structure:
        """All atoms moved into the cell, fractional coordinates in [0, 1)."""
        lat = self._require_lattice("wrap")
        f = self.frac_coords
        f = f - np.floor(f)
        f[f >= 1.0] -= 1.0  # floor of -1e-17 leaves exactly 1.0
        return replace(self, positions=f @ lat)

    def supercell(self, reps: tuple[int, int, int]) -> Structure:
        """Tile the cell ``reps`` times along a, b, c. Atom order: cell atoms fastest, then translations
        in C order (na, nb, nc), so atom ``t * n + i`` is atom ``i`` shifted by translation ``t``."""
        lat = self._require_lattice("supercell tiling")
        reps_arr = np.asarray(reps, dtype=np.int64)
        if reps_arr.shape != (3,) or (reps_arr < 1).any():
            raise InputError(f"supercell repetitions must be three positive integers, got {reps}", field="reps")
        shifts = tiling_translations(tuple(int(r) for r in reps_arr)) @ lat
        pos = (shifts[:, None, :] + self.positions[None, :, :]).reshape(-1, 3)
        num = np.tile(self.numbers, len(shifts))
        labels = None if self.site_labels is None else self.site_labels * len(shifts)
        return replace(self, positions=pos, numbers=num, lattice=lat * reps_arr[:, None], site_labels=labels)

    def closest_pair(self) -> tuple[int, int, float] | None:
        """(i, j, distance Å) of the closest two atoms (minimum image when periodic); None for one atom
        in a molecule. For a periodic structure, an atom and its own image count (i == j)."""
        if self.lattice is None:
            if self.n_atoms < 2:
                return None
            tree = _kdtree(self.positions)
            d, j = tree.query(self.positions, k=2)
            i = int(np.argmin(d[:, 1]))
            return i, int(j[i, 1]), float(d[i, 1])
        lat = self.lattice
        # Wrapped coordinates against the 27 neighbouring images: exact for the nearest neighbour whenever
        # it lies within one cell shell, which holds for any reasonably reduced cell (conventional cells).
        frac = self.frac_coords
        frac = frac - np.floor(frac)
        cart = frac @ lat
        shifts = _SHELL27 @ lat
        n = self.n_atoms
        if n <= 48:  # small cells: brute force over pairs and the 27 cells beats building a tree
            return _closest_image_pair(cart, shifts)
        images = (shifts[:, None, :] + cart[None, :, :]).reshape(-1, 3)
        tree = _kdtree(images)
        d, j = tree.query(cart, k=2)
        i = int(np.argmin(d[:, 1]))
        return i, int(j[i, 1] % n), float(d[i, 1])

    def min_same_label_distance(self) -> float:
        """Smallest distance between two atoms of the same element (minimum image when periodic); inf when
        no element repeats. The oracle's separation precondition compares it with 2δ."""
        best = np.inf
        for z in np.unique(self.numbers):
            sel = self.numbers == z
            if self.lattice is None and sel.sum() < 2:
                continue
            sub = Structure(self.positions[sel], self.numbers[sel], self.lattice) if sel.sum() > 0 else None
            pair = sub.closest_pair() if sub is not None else None
            if pair is not None:
                best = min(best, pair[2])
        return float(best)

    # ----------------------------------------------------------------- standard settings
    def to_dict(self) -> dict:
        return {
            "positions": self.positions.tolist(),
            "numbers": self.numbers.tolist(),
            "lattice": None if self.lattice is None else self.lattice.tolist(),
            "site_labels": None if self.site_labels is None else list(self.site_labels),
            "provenance": self.provenance.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict) -> Structure:
        return cls(
            positions=np.asarray(d["positions"], dtype=np.float64).reshape(-1, 3),
            numbers=np.asarray(d["numbers"], dtype=np.int64),
            lattice=None if d.get("lattice") is None else np.asarray(d["lattice"], dtype=np.float64),
            site_labels=None if d.get("site_labels") is None else tuple(d["site_labels"]),
            provenance=Provenance(**d.get("provenance", {})),
        )


def tiling_translations(reps: tuple[int, int, int]) -> np.ndarray:
    """Integer translations (t, 3) as float64 of an na×nb×nc tiling, C order (a slowest, c fastest); read-only,
    built once per tiling (every item of a run shares one).

    Parameters
    ----------
    reps : tuple of int, (na, nb, nc)
        Repetitions along the lattice vectors a, b, c (each at least 1).

    Returns
    -------
    numpy.ndarray of float64, shape (na*nb*nc, 3), read-only
        Integer translations in fractional coordinates (lattice-vector units; Cartesian = translation @
        lattice, the lattice's rows being a, b, c), row ``t`` = translation index ``t``.
    """
    na, nb, nc = reps
    return _translations(int(na), int(nb), int(nc))


@functools.lru_cache(maxsize=16)
def _translations(na: int, nb: int, nc: int) -> np.ndarray:
    g = np.stack(np.meshgrid(np.arange(na), np.arange(nb), np.arange(nc), indexing="ij"), axis=-1)
    return _readonly(g.reshape(-1, 3).astype(np.float64))


_SHELL27 = tiling_translations((3, 3, 3)) - 1.0  # the 27 integer translations in {-1, 0, 1}^3; index 13 = 0
_SHELL27.setflags(write=False)
