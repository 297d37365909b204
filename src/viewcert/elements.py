"""Element symbols, atomic numbers and covalent radii (ASE's tables; Z = 1..118)."""

from __future__ import annotations

import numpy as np
from ase.data import atomic_numbers as _ASE_Z
from ase.data import chemical_symbols as _ASE_SYMBOLS
from ase.data import covalent_radii as _ASE_COVALENT_RADII

from viewcert.errors import InputError

__all__ = ["MAX_Z", "SYMBOLS", "atomic_number", "covalent_radii", "symbol", "symbols"]

MAX_Z = 118
SYMBOLS: tuple[str, ...] = tuple(_ASE_SYMBOLS[: MAX_Z + 1])  # index 0 is "X" (unknown)


def atomic_number(symbol: str, *, source: str | None = None, field: str | None = None) -> int:
    """Atomic number of an element symbol ("Fe", "fe", "FE" all accepted); InputError if unknown.

    Parameters
    ----------
    symbol : str
        Element symbol, any letter case, surrounding whitespace ignored.
    source : str, optional
        The file the symbol was read from, named in the error.
    field : str, optional
        The field the symbol was read from, named in the error.

    Returns
    -------
    int
        Atomic number Z, 1..118.

    Raises
    ------
    InputError
        The symbol names no element of Z = 1..118 (``"X"`` included).
    """
    s = symbol.strip()
    norm = s[:1].upper() + s[1:].lower()
    z = _ASE_Z.get(norm)
    if z is None or z < 1 or z > MAX_Z:
        raise InputError(f"unknown element symbol {symbol!r}", source=source, field=field)
    return int(z)


def symbol(z: int) -> str:
    """Element symbol of an atomic number 1..118.

    Parameters
    ----------
    z : int
        Atomic number, 1..118.

    Returns
    -------
    str
        Element symbol in ASE's spelling (``"Fe"``).

    Raises
    ------
    InputError
        ``z`` is outside 1..118.
    """
    if not 1 <= int(z) <= MAX_Z:
        raise InputError(f"atomic number {z} is outside 1..{MAX_Z}")
    return SYMBOLS[int(z)]


def symbols(numbers: np.ndarray) -> tuple[str, ...]:
    """Element symbols of atomic numbers, unchecked (index 0 gives ``"X"``).

    Parameters
    ----------
    numbers : array_like of int, shape (n,)
        Atomic numbers, 0..118.

    Returns
    -------
    tuple of str, length n
        Element symbols in ASE's spelling, in the order of ``numbers``.
    """
    return tuple(SYMBOLS[int(z)] for z in numbers)


def covalent_radii(numbers) -> np.ndarray:
    """Covalent radii (n,) in Å for atomic numbers (n,) (ASE's table, Cordero et al. 2008).

    Parameters
    ----------
    numbers : array_like of int, shape (n,)
        Atomic numbers, 0..118 (0 gives ASE's radius of the unknown element, 0.2 Å).

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
        Covalent radii in Å, in the order of ``numbers``.
    """
    z = np.asarray(numbers, dtype=np.int64)
    return np.asarray(_ASE_COVALENT_RADII, dtype=np.float64)[z]
