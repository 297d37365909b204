"""CIF reader: a gemmi fast path that reproduces pymatgen, and pymatgen's ``CifParser`` as a fallback.

What the fast path does, in order (each step mirrors ``pymatgen.io.cif.CifParser`` so that positions,
lattice and site order equal ``pymatgen.core.Structure.from_str(cif, fmt="cif")``):

1. ``gemmi.cif.read_string`` tokenises the text; the data block is ``block`` if given, else the first
   block with ``_atom_site_fract_x``.
2. Cell from the six ``_cell_*`` items, lattice rows in pymatgen's orientation (c along z, a in the xz
   plane; see :mod:`viewcert.io.cell`). Standard uncertainties such as ``4.123(5)`` are dropped.
3. Symmetry operations from ``_symmetry_equiv_pos_as_xyz`` / ``_space_group_symop_operation_xyz``, else
   from the Hermann–Mauguin or Hall symbol, else from the space-group number, else P1.
4. Fractional coordinates within 1e-4 (relative) of 1/3 or 2/3 are set to exactly 1/3 or 2/3 (pymatgen
   does the same, to make finite-precision CIFs symmetric).
5. Rows that one symmetry operation maps onto another row's position (fractional tolerance
   ``SITE_TOLERANCE`` = 1e-4, periodic) share a *site*; this is how substitutional disorder is written.
   ``occupancy_policy`` decides what happens to partial occupancy and shared sites (below).
6. Each site is expanded by every operation, wrapped to [0, 1) and deduplicated (same tolerance) among
   sites of the same element, then sites are ordered like pymatgen: by Pauling electronegativity, then
   symbol, stable (``order="file"`` keeps file order instead, images right after their row).

Occupancy policies (``occupancy_policy``):

- ``"refuse"`` (default): any occupancy other than 1 (± 1e-3), or two rows on one site, raises
  :class:`InputError` naming the site and ``_atom_site_occupancy``.
- ``"majority"``: per site keep the species with the highest occupancy (first row on ties); sites whose
  best occupancy is 0 are dropped. A lone partially occupied row counts as its species (vacancies are not
  species).
- ``"ignore"``: occupancies are ignored; every row is a full atom (two rows on one site still raise).

Occupancy above 1 (± 1e-3) is refused except under ``"ignore"``.

Limits (``viewcert.limits``, checked before any operation is parsed or applied): the number of symmetry
operations (``max_symmetry_operations``, 384: Fm-3m's 192 twice over) and the images they would generate,
atom rows × operations (``max_symmetry_images``); the fallback counts the lines that read as operations.

The pymatgen fallback runs only when gemmi cannot tokenise the text (e.g. a duplicated tag, which gemmi
rejects and pymatgen tolerates); its result goes through the same occupancy policy.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from functools import lru_cache
from typing import Literal

import gemmi
import numpy as np

from viewcert.elements import SYMBOLS
from viewcert.errors import InputError
from viewcert.io._common import read_source
from viewcert.io.cell import lattice_from_parameters
from viewcert.limits import active_limits
from viewcert.structures import Provenance, Structure, sha256_text
from viewcert.symmetry.site_order import electronegativity, replay_sort

OccupancyPolicy = Literal["refuse", "majority", "ignore"]
OCCUPANCY_POLICIES: tuple[str, ...] = ("refuse", "majority", "ignore")
SITE_TOLERANCE = 1e-4  # fractional, per component, periodic (pymatgen's site_tolerance)
OCCUPANCY_TOLERANCE = 1e-3

_SYMOP_TAGS = (
    "_symmetry_equiv_pos_as_xyz",
    "_space_group_symop_operation_xyz",
    "_space_group_symop.operation_xyz",
    "_symmetry_equiv.pos_as_xyz",
)
_HM_TAGS = (
    "_symmetry_space_group_name_H-M",
    "_space_group_name_H-M_alt",
    "_space_group.name_H-M_alt",
    "_symmetry_space_group_name_H_M",
)
_HALL_TAGS = ("_space_group_name_Hall", "_symmetry_space_group_name_Hall", "_space_group.name_Hall")
_NUMBER_TAGS = ("_space_group_IT_number", "_symmetry_Int_Tables_number", "_space_group.IT_number")

_Z_OF: dict[str, int] = {s: z for z, s in enumerate(SYMBOLS) if z >= 1}
_Z_OF.update({"D": 1, "T": 1})  # hydrogen isotopes
_UNCERTAINTY = re.compile(r"\(.+\)*")
#: a line that reads as one xyz operation (optionally numbered, optionally quoted): for the fallback's count
_SYMOP_LINE = re.compile(r"^[ \t]*(?:\d+[ \t]+)?['\"]?[-+xyzXYZ0-9./* \t]*,[-+xyzXYZ0-9./* \t]*,"
                         r"[-+xyzXYZ0-9./* \t]*['\"]?[ \t]*$", re.MULTILINE)


# ----------------------------------------------------------------------------- public API
def read_cif(
    path: str | os.PathLike,
    *,
    occupancy_policy: OccupancyPolicy = "refuse",
    identifier: str | None = None,
    block: str | None = None,
    order: Literal["pymatgen", "file"] = "pymatgen",
) -> Structure:
    """Read one crystal structure from a CIF file (see the module docstring for every step).

    ``identifier`` defaults to the data block name; ``Provenance.sha256`` is the SHA-256 of the file's
    bytes. Raises :class:`InputError` naming the file and the offending CIF tag.

    Parameters
    ----------
    path : str or path-like
        The CIF file.
    occupancy_policy : {"refuse", "majority", "ignore"}, default "refuse"
        What partial occupancy and shared sites do (module docstring).
    identifier : str, optional
        The structure's identifier; default: the data block's name.
    block : str, optional
        The data block read; default: the first with ``_atom_site_fract_x``.
    order : {"pymatgen", "file"}, default "pymatgen"
        Site order: pymatgen's (electronegativity, then symbol) or the file's.

    Returns
    -------
    Structure
        Periodic: lattice rows a, b, c in Å (pymatgen's orientation, c along z), positions Cartesian Å.

    Raises
    ------
    InputError
        The file cannot be read or a tag is malformed, refused by the occupancy policy, or over a limit
        (``LimitError``); the message names the file and the tag.
    """
    src, text, digest = read_source(path)
    return _read(text, digest, src, identifier, occupancy_policy, block, order)


def read_cif_text(
    text: str,
    *,
    source: str = "<string>",
    identifier: str | None = None,
    occupancy_policy: OccupancyPolicy = "refuse",
    block: str | None = None,
    order: Literal["pymatgen", "file"] = "pymatgen",
) -> Structure:
    """Read one crystal structure from CIF text; ``source`` names it in errors and provenance (e.g. a
    database id or the file it came from). ``Provenance.sha256`` is the SHA-256 of the UTF-8 text.

    Parameters
    ----------
    text : str
        The CIF text.
    source : str, default "<string>"
        What the text is named in errors and provenance.
    identifier : str, optional
        The structure's identifier; default: the data block's name.
    occupancy_policy : {"refuse", "majority", "ignore"}, default "refuse"
        What partial occupancy and shared sites do (module docstring).
    block : str, optional
        The data block read; default: the first with ``_atom_site_fract_x``.
    order : {"pymatgen", "file"}, default "pymatgen"
        Site order: pymatgen's (electronegativity, then symbol) or the text's.

    Returns
    -------
    Structure
        Periodic: lattice rows a, b, c in Å (pymatgen's orientation, c along z), positions Cartesian Å.

    Raises
    ------
    InputError
        As :func:`read_cif`, naming ``source``.
    """
    return _read(text, sha256_text(text), source, identifier, occupancy_policy, block, order)


# ----------------------------------------------------------------------------- internals
def _read(
    text: str,
    digest: str,
    source: str,
    identifier: str | None,
    policy: str,
    block_name: str | None,
    order: str,
) -> Structure:
    if policy not in OCCUPANCY_POLICIES:
        raise InputError(
            f"occupancy_policy must be one of {OCCUPANCY_POLICIES}, got {policy!r}", field="occupancy_policy"
        )
    if order not in ("pymatgen", "file"):
        raise InputError(f"order must be 'pymatgen' or 'file', got {order!r}", field="order")
    try:
        doc = gemmi.cif.read_string(text)
    except (RuntimeError, ValueError) as exc:
        return _read_with_pymatgen(text, digest, source, identifier, policy, str(exc))
    block = _pick_block(doc, block_name, source)
    prov = Provenance(
        source=source, identifier=identifier if identifier is not None else block.name, sha256=digest
    )
    return _structure_from_block(block, prov, policy, order)


def _pick_block(doc: gemmi.cif.Document, name: str | None, source: str) -> gemmi.cif.Block:
    if len(doc) == 0:
        raise InputError("no data block (data_...) in the CIF", source=source, field="data_")
    if name is not None:
        b = doc.find_block(name)
        if b is None:
            names = [x.name for x in doc]
            raise InputError(f"no data block {name!r}; blocks are {names}", source=source, field="block")
        return b
    with_atoms = [b for b in doc if b.find_values("_atom_site_fract_x")]
    if len(with_atoms) > 1:
        raise InputError(f"{len(with_atoms)} data blocks with atoms ({', '.join(b.name for b in with_atoms[:5])}); "
                         "one structure per file, or name the block (block=NAME)", source=source, field="data_")
    if with_atoms:
        return with_atoms[0]
    b = doc[0]
    if b.find_values("_atom_site.Cartn_x") or b.find_values("_atom_site.fract_x"):
        raise InputError(
            "this looks like an mmCIF (macromolecular) file; read it with viewcert.io.pdb.read_pdb",
            source=source,
            field="_atom_site_fract_x",
        )
    raise InputError(
        "no atoms: the CIF has no _atom_site_fract_x values", source=source, field="_atom_site_fract_x"
    )


def _num(s: str) -> float:
    """CIF number: drops a standard uncertainty ``(n)``; '?' and '.' are missing (ValueError)."""
    try:
        return float(s)
    except ValueError:
        pass
    t = _UNCERTAINTY.sub("", s).strip().strip("'\"")
    if t in ("?", ".", ""):
        raise ValueError(f"missing value {s!r}")
    return float(t)


def _value(block: gemmi.cif.Block, tag: str, src: str) -> float:
    raw = block.find_value(tag)
    if raw is None:
        raise InputError("missing cell parameter", source=src, field=tag)
    try:
        v = _num(raw)
    except ValueError:
        raise InputError(f"cell parameter is not a number: {raw!r}", source=src, field=tag) from None
    return v


def _atom_site_columns(block: gemmi.cif.Block, src: str) -> dict[str, list[str]]:
    """The _atom_site_* columns (lower-case tag -> raw strings), from the loop holding fract_x or from
    single items (a one-atom CIF may write them as pairs)."""
    item = block.find_loop_item("_atom_site_fract_x")
    cols: dict[str, list[str]] = {}
    if item is not None:
        lp = item.loop
        w = lp.width()
        vals = lp.values
        for i, tag in enumerate(lp.tags):
            cols[tag.lower()] = vals[i::w]
    for tag in _ATOM_SITE_TAGS:
        if tag not in cols:
            col = block.find_values(tag)
            if col:
                cols[tag] = list(col)
    if not cols.get("_atom_site_fract_x"):
        raise InputError(
            "no atoms: the CIF has no _atom_site_fract_x values", source=src, field="_atom_site_fract_x"
        )
    return cols


_ATOM_SITE_TAGS = (
    "_atom_site_fract_x",
    "_atom_site_fract_y",
    "_atom_site_fract_z",
    "_atom_site_label",
    "_atom_site_type_symbol",
    "_atom_site_occupancy",
)


def _unquote(s: str) -> str:
    return gemmi.cif.as_string(s) if s[:1] in ("'", '"', ";") else s


def _floats(col: list[str], tag: str, labels: list[str], src: str) -> np.ndarray:
    try:
        arr = np.array(col, dtype=np.float64)
    except ValueError:
        out = np.empty(len(col))
        for i, s in enumerate(col):
            try:
                out[i] = _num(s)
            except ValueError:
                raise InputError(
                    f"site {labels[i]!r}: value {s!r} is not a number", source=src, field=tag
                ) from None
        arr = out
    if len(arr) and not np.abs(arr).max() <= 1e6:  # one reduction: false for NaN and inf too
        if not np.isfinite(arr).all():
            i = int(np.flatnonzero(~np.isfinite(arr))[0])
            raise InputError(f"site {labels[i]!r}: value {col[i]!r} is not finite", source=src, field=tag)
        i = int(np.argmax(np.abs(arr)))  # wrapping 1e300 into the cell would hide an overflow
        raise InputError(f"site {labels[i]!r}: value {col[i]!r} is beyond 1e6 (an overflow or unit error)",
                         source=src, field=tag)
    return arr


def _element(sym: str) -> int | None:
    """pymatgen's rule (CifParser._parse_symbol): the first two letters title-cased if an element, else
    the first letter upper-cased if an element."""
    s = sym.strip()
    if not s:
        return None
    z = _Z_OF.get(s[:2].title())
    if z is None:
        z = _Z_OF.get(s[0].upper())
    return z


@lru_cache(maxsize=4096)
def _parse_ops(triplets: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, bool]:
    """(rotations (m,3,3), translations (m,3), is_identity_only) from xyz strings; ValueError if bad."""
    rots, trans = [], []
    for t in triplets:
        try:
            op = gemmi.Op(t)
        except (RuntimeError, ValueError) as exc:
            raise ValueError(f"cannot parse symmetry operation {t!r}: {exc}") from None
        rot = np.array(op.rot, dtype=np.float64) / gemmi.Op.DEN
        if abs(abs(np.linalg.det(rot)) - 1.0) > 1e-9:
            raise ValueError(f"symmetry operation {t!r} is not invertible (det = {np.linalg.det(rot):g})")
        rots.append(rot)
        trans.append(np.array(op.tran, dtype=np.float64) / gemmi.Op.DEN)
    r = np.array(rots).reshape(-1, 3, 3)
    tr = np.array(trans).reshape(-1, 3)
    ident = len(triplets) == 1 and bool(np.array_equal(r[0], np.eye(3)) and not tr.any())
    r.setflags(write=False)
    tr.setflags(write=False)
    return r, tr, ident


@lru_cache(maxsize=512)
def _spacegroup_ops(key: str, kind: str) -> tuple[str, ...] | None:
    try:
        if kind == "number":
            sg = gemmi.find_spacegroup_by_number(int(key))
        elif kind == "hall":
            return tuple(op.triplet() for op in gemmi.symops_from_hall(key))
        else:
            sg = gemmi.find_spacegroup_by_name(key)
    except (RuntimeError, ValueError):
        return None
    if sg is None:
        return None
    return tuple(op.triplet() for op in sg.operations())


def _symmetry_ops(block: gemmi.cif.Block, src: str, n_rows: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """The operations listed (or named by a symbol), counted against the limits before they are parsed."""
    limits = active_limits()
    for tag in _SYMOP_TAGS:
        col = block.find_values(tag)
        if col:
            limits.check_symmetry(len(col), n_rows, source=src, field=tag)
            trip = tuple(map(_unquote, col))
            try:
                return _parse_ops(trip)
            except ValueError as exc:
                raise InputError(str(exc), source=src, field=tag) from None
    for tags, kind in ((_HM_TAGS, "hm"), (_HALL_TAGS, "hall"), (_NUMBER_TAGS, "number")):
        for tag in tags:
            raw = block.find_value(tag)
            if raw is None:
                continue
            key = gemmi.cif.as_string(raw).strip()
            if key in ("", "?", "."):
                continue
            trip = _spacegroup_ops(key, kind)
            if trip:
                limits.check_symmetry(len(trip), n_rows, source=src, field=tag)
                return _parse_ops(trip)
    return _parse_ops(("x,y,z",))


def _pymatgen_group_order(zs: set[int]) -> list[int]:
    """pymatgen's composition-group order for single-element sites: descending Element order (Pauling X
    with NaN as +inf, then symbol)."""
    xs, _ = electronegativity()
    return sorted(zs, key=lambda z: (math.inf if np.isnan(xs[z]) else xs[z], SYMBOLS[z]), reverse=True)


def _pbc_close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a), len(b)) bool: all three fractional components within SITE_TOLERANCE modulo 1."""
    d = a[:, None, :] - b[None, :, :]
    d -= np.round(d)
    return (np.abs(d) < SITE_TOLERANCE).all(axis=-1)


def _fractional(cols: dict, n: int, labels: list[str], src: str) -> np.ndarray:
    """Fractional coordinates (n, 3) of the atom sites, with pymatgen's 1/3, 2/3 snapping."""
    try:  # one conversion for the common case; _floats names the bad value otherwise
        frac = np.array(cols["_atom_site_fract_x"] + cols["_atom_site_fract_y"] + cols["_atom_site_fract_z"],
                        dtype=np.float64)
        frac = frac.reshape(3, n).T.copy()
        if not np.abs(frac).max() <= 1e6:  # false for NaN and inf too
            raise ValueError
    except ValueError:
        frac = np.empty((n, 3))
        for k, tag in enumerate(("_atom_site_fract_x", "_atom_site_fract_y", "_atom_site_fract_z")):
            frac[:, k] = _floats(cols[tag], tag, labels, src)
    # pymatgen's finite-precision fix: |f/(1/3) - 1| <= 1e-4 -> 1/3, same for 2/3 (in place, per value).
    for third in (1 / 3, 2 / 3):
        frac[np.abs(frac / third - 1.0) <= 1e-4] = third
    return frac


def _site_numbers(raw_types, labels: list[str], src: str) -> np.ndarray:
    """Atomic numbers of the sites from _atom_site_type_symbol (else the labels); unknown symbols raise."""
    syms = [_unquote(x) for x in raw_types] if raw_types else labels
    zs = list(map(_element, syms))
    if None in zs:
        i = zs.index(None)
        tag = "_atom_site_type_symbol" if raw_types else "_atom_site_label"
        raise InputError(f"site {labels[i]!r}: unknown element symbol {syms[i]!r}", source=src, field=tag)
    return np.array(zs, dtype=np.int64)


def _block_lattice(block: gemmi.cif.Block, src: str) -> np.ndarray:
    """Lattice rows (Å) from the block's six cell parameters."""
    a, b, c = (_value(block, f"_cell_length_{x}", src) for x in "abc")
    al, be, ga = (_value(block, f"_cell_angle_{x}", src) for x in ("alpha", "beta", "gamma"))
    return lattice_from_parameters(a, b, c, al, be, ga, source=src)


def _check_site_columns(cols: dict, n: int, src: str) -> None:
    """Refuses a missing y/z coordinate column or an atom-site column whose length is not ``n``."""
    for tag in (
        "_atom_site_fract_y",
        "_atom_site_fract_z",
        "_atom_site_label",
        "_atom_site_type_symbol",
        "_atom_site_occupancy",
    ):
        col = cols.get(tag)
        if col is None and tag in ("_atom_site_fract_y", "_atom_site_fract_z"):
            raise InputError("missing atom coordinate column", source=src, field=tag)
        if col is not None and len(col) != n:
            raise InputError(f"{tag} has {len(col)} values for {n} atoms", source=src, field=tag)


def _partial_occupancies(cols: dict, labels: list[str], src: str) -> np.ndarray | None:
    """The rows' occupancies, or None when there is no occupancy column or every row is full."""
    occ_col = cols.get("_atom_site_occupancy")
    occ = _floats(occ_col, "_atom_site_occupancy", labels, src) if occ_col is not None else None
    if occ is not None and np.abs(occ - 1.0).max() <= OCCUPANCY_TOLERANCE:
        occ = None  # all full: the common case
    return occ


def _site_clusters(close: np.ndarray) -> list[list[int]]:
    """Rows grouped by site, in row order: a row joins the first earlier cluster whose first row it lies on."""
    members: list[list[int]] = []
    reps: list[int] = []
    for j in range(len(close)):
        for k, r in enumerate(reps):
            if close[j, r]:
                members[k].append(j)
                break
        else:
            reps.append(j)
            members.append([j])
    return members


def _structure_from_block(block: gemmi.cif.Block, prov: Provenance, policy: str, order: str) -> Structure:
    src = prov.source or prov.identifier
    lattice = _block_lattice(block, src)

    cols = _atom_site_columns(block, src)
    fx = cols["_atom_site_fract_x"]
    n = len(fx)
    raw_labels = cols.get("_atom_site_label")
    raw_types = cols.get("_atom_site_type_symbol")
    labels = [_unquote(x) for x in raw_labels] if raw_labels else [f"#{i + 1}" for i in range(n)]
    _check_site_columns(cols, n, src)
    frac = _fractional(cols, n, labels, src)
    zs = _site_numbers(raw_types, labels, src)
    occ = _partial_occupancies(cols, labels, src)

    rots, trans, ident = _symmetry_ops(block, src, n)

    # Sites: rows mapped onto an earlier row by some operation share its site (pymatgen merges them into
    # one disordered site). Only rows of such a cluster need the policy; the rest are plain atoms.
    if ident and occ is None:
        # Fast path (P1, all rows full): coincident rows are overlapping atoms, which Structure refuses;
        # the site-naming diagnosis runs only then (_structure_p1).
        return _structure_p1(frac, zs, labels, lattice, prov, policy, order, src)
    close = _coincident_rows(frac, rots, trans, ident)
    if occ is None and not close.any():
        site_frac, site_z, site_lab = frac, zs, labels
    else:
        occ_full = np.ones(n) if occ is None else occ
        keep_rep, keep_row = _apply_policy(_site_clusters(close), occ_full, labels, policy, src)
        if not keep_rep:
            raise InputError(
                "no atoms left after applying the occupancy policy", source=src, field="_atom_site_occupancy"
            )
        site_frac = frac[keep_rep]
        site_z = zs[keep_row]
        site_lab = [labels[j] for j in keep_row]

    out_f, out_z, out_l = _expand(site_frac, site_z, site_lab, rots, trans, ident, order)
    return Structure(out_f @ lattice, out_z, lattice, site_labels=tuple(out_l), provenance=prov)


def _coincident_rows(frac: np.ndarray, rots: np.ndarray, trans: np.ndarray, ident: bool) -> np.ndarray:
    """(n, n) bool, diagonal False: row j lies (tolerance, mod 1) on an image of row r."""
    n = len(frac)
    if ident:
        close = _pbc_close(frac, frac)
    else:
        images_raw = np.einsum("mij,nj->nmi", rots, frac) + trans[None, :, :]  # (n, m, 3), unwrapped
        close = _pbc_close(frac, images_raw.reshape(-1, 3)).reshape(n, n, -1).any(axis=-1)
    np.fill_diagonal(close, False)
    return close


_IDENTITY_R, _IDENTITY_T = np.eye(3)[None], np.zeros((1, 3))  # x,y,z as (rotations, translations)
_IDENTITY_R.setflags(write=False)
_IDENTITY_T.setflags(write=False)


def _structure_p1(
    frac: np.ndarray,
    zs: np.ndarray,
    labels: list[str],
    lattice: np.ndarray,
    prov: Provenance,
    policy: str,
    order: str,
    src: str,
) -> Structure:
    out_f, out_z, out_l = _expand(frac, zs, labels, _IDENTITY_R, _IDENTITY_T, True, order)
    try:
        return Structure(out_f @ lattice, out_z, lattice, site_labels=tuple(out_l), provenance=prov)
    except InputError as exc:
        if exc.field != "positions":
            raise
        close = _coincident_rows(frac, _IDENTITY_R, _IDENTITY_T, True)
        if close.any():
            j, r = (int(v) for v in np.argwhere(close)[0])
            _apply_policy([[min(j, r), max(j, r)]], np.ones(len(zs)), labels, policy, src)
        raise


def _apply_policy(
    members: list[list[int]], occ: np.ndarray, labels: list[str], policy: str, src: str
) -> tuple[list[int], list[int]]:
    """Per site: (representative row for the position, row giving species and label)."""
    keep_rep: list[int] = []
    keep_row: list[int] = []
    tol = OCCUPANCY_TOLERANCE
    for rows in members:
        if policy != "ignore":
            over = [j for j in rows if occ[j] > 1.0 + tol]
            if over:
                j = over[0]
                raise InputError(
                    f"site {labels[j]!r} has occupancy {occ[j]:g} > 1",
                    source=src,
                    field="_atom_site_occupancy",
                )
        if policy == "refuse":
            partial = [j for j in rows if abs(occ[j] - 1.0) > tol]
            if partial:
                j = partial[0]
                extra = "" if len(rows) == 1 else f" shared with {[labels[k] for k in rows if k != j]}"
                raise InputError(
                    f"site {labels[j]!r} has partial occupancy {occ[j]:g}{extra} (disorder); pass "
                    "occupancy_policy='majority' to keep the highest-occupancy species per site or 'ignore' "
                    "to treat every row as fully occupied",
                    source=src,
                    field="_atom_site_occupancy",
                )
        if policy in ("refuse", "ignore") and len(rows) > 1:
            raise InputError(
                f"sites {[labels[k] for k in rows]} occupy the same position (duplicated or mixed site)",
                source=src,
                field="_atom_site_fract_x",
            )
        if policy == "majority":
            best = max(rows, key=lambda k: (occ[k], -k))
            if occ[best] <= 0:
                continue
            keep_rep.append(rows[0])
            keep_row.append(best)
        else:
            keep_rep.append(rows[0])
            keep_row.append(rows[0])
    return keep_rep, keep_row


def _expand(
    frac: np.ndarray,
    zs: np.ndarray,
    labels: list[str],
    rots: np.ndarray,
    trans: np.ndarray,
    ident: bool,
    order: str,
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Apply the operations, wrap to [0, 1), deduplicate within each element (greedy, in pymatgen's
    order: sites of one element in file order, operations in order); order like pymatgen or the file.
    The input sites are distinct (no two within tolerance under any operation)."""
    if ident:
        wrapped = frac - np.floor(frac)
        if order == "file":
            return wrapped, zs, list(labels)
        perm = _pymatgen_permutation(zs)
        return wrapped[perm], zs[perm], [labels[i] for i in perm.tolist()]

    # c = R[:,0] x + R[:,1] y + R[:,2] z + t, summed in that order (as pymatgen's affine dot product)
    img = (
        rots[None, :, :, 0] * frac[:, None, None, 0]
        + rots[None, :, :, 1] * frac[:, None, None, 1]
        + rots[None, :, :, 2] * frac[:, None, None, 2]
    ) + trans[None, :, :]
    img = img - np.floor(img)  # (n, m, 3)
    m = img.shape[1]
    rows_out: list[int] = []
    ops_out: list[int] = []
    for z in dict.fromkeys(zs.tolist()):
        rows = np.flatnonzero(zs == z)
        cand = img[rows].reshape(-1, 3)
        kept = _first_distinct(cand)
        rows_out.extend(rows[kept // m].tolist())
        ops_out.extend((kept % m).tolist())
    r_idx = np.array(rows_out, dtype=np.int64)
    o_idx = np.array(ops_out, dtype=np.int64)
    if order == "file":
        perm = np.lexsort((o_idx, r_idx))
    else:
        # within one element pymatgen keeps (row, op) generation order, which is ours already
        perm = _pymatgen_permutation(zs[r_idx])
    r_idx, o_idx = r_idx[perm], o_idx[perm]
    return img[r_idx, o_idx], zs[r_idx], [labels[r] for r in r_idx.tolist()]


@lru_cache(maxsize=4096)
def _finite_rank(uz: frozenset[int]) -> dict[int, int] | None:
    """Z -> rank in pymatgen's site order when no element lacks an electronegativity, else None."""
    xs, _ = electronegativity()
    if any(np.isnan(xs[z]) for z in uz):
        return None
    return {z: i for i, z in enumerate(sorted(uz, key=lambda z: (xs[z], SYMBOLS[z])))}


def _pymatgen_permutation(numbers: np.ndarray) -> np.ndarray:
    """Stable permutation putting sites in pymatgen's order (see _pymatgen_group_order)."""
    xs, _ = electronegativity()
    zl = numbers.tolist()
    uz = frozenset(zl)
    rank = _finite_rank(uz)
    if rank is not None:
        return np.argsort(
            np.fromiter(map(rank.__getitem__, zl), dtype=np.int64, count=len(zl)), kind="stable"
        )
    # NaN electronegativity makes Site.__lt__ inconsistent: replay pymatgen's two sorts exactly.
    group_rank = {z: i for i, z in enumerate(_pymatgen_group_order(uz))}
    pre = np.argsort(np.array([group_rank[z] for z in numbers.tolist()]), kind="stable")
    return pre[replay_sort(numbers[pre])]


def _greedy(near: np.ndarray) -> np.ndarray:
    """Indices kept when candidates are taken in order unless within tolerance of an already kept one
    (pymatgen's ``in_coord_list_pbc`` rule)."""
    k = near.shape[0]
    kept = np.zeros(k, dtype=bool)
    for i in range(k):
        if not (near[i, :i] & kept[:i]).any():
            kept[i] = True
    return np.flatnonzero(kept)


def _first_distinct(cand: np.ndarray) -> np.ndarray:
    """``_greedy`` on wrapped fractional candidates, fast: near pairs from a periodic KD-tree (Chebyshev
    radius SITE_TOLERANCE) when there are many candidates; "keep i unless an earlier candidate is near"
    equals the greedy rule whenever every dropped candidate is near an earlier *kept* one, which is
    checked (else the exact greedy loop runs)."""
    k = len(cand)
    if k <= 64:
        near = _pbc_close(cand, cand)
        a, b = np.nonzero(np.tril(near, -1))  # b < a: a has an earlier near candidate b
        a, b = b, a
    else:
        from scipy.spatial import cKDTree

        pts = np.where(cand >= 1.0, cand - 1.0, cand)
        pairs = cKDTree(pts, boxsize=1.0).query_pairs(SITE_TOLERANCE, p=np.inf, output_type="ndarray")
        a, b = np.minimum(pairs[:, 0], pairs[:, 1]), np.maximum(pairs[:, 0], pairs[:, 1])
    if len(a) == 0:
        return np.arange(k)
    kept = np.ones(k, dtype=bool)
    kept[b] = False
    covered = kept.copy()
    covered[b[kept[a]]] = True
    if covered.all():
        return np.flatnonzero(kept)
    return _greedy(_pbc_close(cand, cand))  # pragma: no cover - chains of near points (tolerance-sized)


def _read_with_pymatgen(
    text: str, digest: str, source: str, identifier: str | None, policy: str, gemmi_error: str
) -> Structure:
    """Fallback for text gemmi cannot tokenise; if pymatgen fails too, gemmi's message is reported. The lines
    that look like symmetry operations are counted against the limit first (pymatgen would expand them)."""
    active_limits().check_symmetry(len(_SYMOP_LINE.findall(text)), source=source, field="_symmetry_equiv_pos_as_xyz")
    try:
        from pymatgen.io.cif import CifParser

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parser = CifParser.from_str(text)
            structs = parser.parse_structures(primitive=False, on_error="raise")
        block_name = next(iter(parser.as_dict()), "")
    except Exception:  # noqa: BLE001 - any pymatgen failure means: report gemmi's syntax error
        raise InputError(f"CIF syntax error: {gemmi_error}", source=source, field="syntax") from None
    from viewcert.io.pymatgen_adapter import from_pymatgen  # lazy: start-up (pymatgen, fallback path only)

    prov = Provenance(
        source=source, identifier=identifier if identifier is not None else block_name, sha256=digest
    )
    return from_pymatgen(structs[0], occupancy_policy=policy, provenance=prov)
