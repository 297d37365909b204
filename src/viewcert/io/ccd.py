"""The wwPDB Chemical Component Dictionary bundled with biotite, read component by component.

``iter_ccd(codes)`` yields one :class:`CcdRecord` per code (all 49,196 components when ``codes`` is None,
in the dictionary's order) built from the *ideal* coordinates (``pdbx_model_Cartn_{x,y,z}_ideal``, Å, the
dictionary's own frame): element, atom names, bonds (order 1/2/3, aromatic flag) and the dictionary's
own per-atom stereo configuration (``pdbx_stereo_config``: R, S or N). A component that cannot become a
:class:`Structure` (no atoms, ideal coordinates missing, unknown element, atoms closer than 0.5 Å) is a
record with ``structure = None`` and a one-line ``reason``, never an exception. Only the few columns
needed are decoded (≈ 0.3 GB once per process); records are produced lazily, so a run over the whole
dictionary never holds every Structure at once.

Spellings: ``builtin:ccd`` (every component), ``ccd:ATP`` (one; ``ccd:ATP,IBP`` several), ``ccd:@FILE``
(one code per line, ``#`` comments) — see :func:`ccd_codes_for`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from viewcert.elements import atomic_number
from viewcert.errors import InputError
from viewcert.structures import Provenance, Structure, sha256_text

CCD_SOURCE = "biotite.structure.info (wwPDB Chemical Component Dictionary, ideal coordinates)"
BOND_ORDERS = {"SING": 1, "DOUB": 2, "TRIP": 3, "QUAD": 4}


@dataclass(frozen=True)
class CcdRecord:
    """One CCD component. ``structure`` is None exactly when ``reason`` says why (a value, not an error).

    ``bonds``: (i, j, order, aromatic) with atom indices into the structure; ``stereo``: the dictionary's
    per-atom CIP label (R, S or N); ``name``: the component's chemical name."""

    code: str
    name: str
    structure: Structure | None
    reason: str = ""
    atom_names: tuple[str, ...] = ()
    bonds: tuple[tuple[int, int, int, bool], ...] = ()
    stereo: tuple[str, ...] = ()
    charges: tuple[int, ...] = ()


def _biotite_ccd():
    """biotite's bundled CCD read into a block of our own (biotite's cached copy is left alone, so the
    decoded file is freed once the columns are taken)."""
    try:
        from importlib import resources

        from biotite.structure.io.pdbx import BinaryCIFFile
    except ImportError:
        raise InputError(
            "biotite is not installed (optional extra: pip install 'viewcert[molecules]')", field="ccd"
        ) from None
    path = resources.files("biotite.structure.info").joinpath("components.bcif")
    with resources.as_file(path) as p:
        f = BinaryCIFFile.read(str(p))
    return f.block


def _ranges(ids: np.ndarray) -> dict[str, tuple[int, int]]:
    if len(ids) == 0:
        return {}
    cut = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    starts = np.concatenate([[0], cut])
    stops = np.concatenate([cut, [len(ids)]])
    return {str(ids[a]): (int(a), int(b)) for a, b in zip(starts, stops, strict=True)}


@lru_cache(maxsize=1)
def _tables() -> dict:
    """The decoded columns (once per process) and code -> row ranges."""
    block = _biotite_ccd()
    comp, atom, bond = block["chem_comp"], block["chem_comp_atom"], block["chem_comp_bond"]
    xyz, missing = [], np.zeros(len(atom["comp_id"].as_array()), dtype=bool)
    for axis in "xyz":
        col = atom[f"pdbx_model_Cartn_{axis}_ideal"]
        xyz.append(col.as_array(np.float64))
        if col.mask is not None:
            missing |= col.mask.array != 0
    atom_ids = atom["comp_id"].as_array()
    bond_ids = bond["comp_id"].as_array()
    return {
        "codes": tuple(str(c) for c in comp["id"].as_array()),
        "names": dict(zip(comp["id"].as_array().tolist(), comp["name"].as_array().tolist(), strict=True)),
        "atom_range": _ranges(atom_ids),
        "atom_name": atom["atom_id"].as_array(),
        "element": atom["type_symbol"].as_array(),
        "stereo": atom["pdbx_stereo_config"].as_array(),
        "charge": atom["charge"].as_array(np.int64),
        "xyz": np.column_stack(xyz),
        "missing": missing,
        "bond_range": _ranges(bond_ids),
        "bond_a": bond["atom_id_1"].as_array(),
        "bond_b": bond["atom_id_2"].as_array(),
        "bond_order": bond["value_order"].as_array(),
        "bond_aromatic": bond["pdbx_aromatic_flag"].as_array(),
    }


@lru_cache(maxsize=1)
def ccd_codes() -> tuple[str, ...]:
    """Every component code of the dictionary, in its order (decodes one column only)."""
    return tuple(str(c) for c in _biotite_ccd()["chem_comp"]["id"].as_array())


@lru_cache(maxsize=1)
def ccd_file_sha256() -> str:
    """SHA-256 of biotite's bundled CCD file (recorded in certificates; item digests derive from it)."""
    from importlib import resources

    return sha256_text(resources.files("biotite.structure.info").joinpath("components.bcif").read_bytes())


def read_ccd_structure(code: str) -> Structure:
    """One component's Structure, or InputError with the record's reason (field = the code)."""
    rec = ccd_record(code)
    if rec.structure is None:
        raise InputError(rec.reason, source=f"ccd:{rec.code}", field="ccd")
    return rec.structure


def read_code_list(path: str | Path) -> tuple[str, ...]:
    """Codes from a text file: one per line (or comma-separated), ``#`` starts a comment."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as exc:
        raise InputError(f"cannot read the code list: {exc.strerror}", source=str(p)) from None
    codes = []
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        codes.extend(c.strip().upper() for c in line.split(",") if c.strip())
    if not codes:
        raise InputError("no CCD codes in the file", source=str(p))
    return tuple(codes)


def ccd_codes_for(spec: str) -> tuple[str, ...] | None:
    """Codes named by ``builtin:ccd`` (None = every component), ``ccd:ATP[,IBP...]`` or ``ccd:@FILE``."""
    key = spec[len("builtin:") :] if spec.startswith("builtin:") else spec
    if key == "ccd":
        return None
    if not key.startswith("ccd:") or len(key) == 4:
        raise InputError(f"not a CCD input {spec!r}; use builtin:ccd, ccd:CODE or ccd:@FILE", field="input")
    rest = key[4:]
    if rest.startswith("@"):
        return read_code_list(rest[1:])
    return tuple(c.strip().upper() for c in rest.split(",") if c.strip())


def _record(code: str, t: dict) -> CcdRecord:
    name = str(t["names"].get(code, ""))
    rng = t["atom_range"].get(code)
    if code not in t["names"]:
        return CcdRecord(code, "", None, f"no component {code!r} in the CCD")
    if rng is None:
        return CcdRecord(code, name, None, "the component has no atoms")
    a, b = rng
    atom_names = tuple(str(n) for n in t["atom_name"][a:b])
    n_missing = int(t["missing"][a:b].sum())
    if n_missing:
        return CcdRecord(
            code, name, None, f"ideal coordinates missing for {n_missing} of {b - a} atoms", atom_names
        )
    try:
        numbers = np.array([atomic_number(str(e)) for e in t["element"][a:b]], dtype=np.int64)
        canonical = {
            "atom_name": list(atom_names),
            "element": [str(e) for e in t["element"][a:b]],
            "coord": np.round(t["xyz"][a:b], 4).tolist(),
        }
        digest = sha256_text(json.dumps(canonical, sort_keys=True, separators=(",", ":")))
        prov = Provenance(source=CCD_SOURCE, identifier=f"ccd:{code}", sha256=digest)
        s = Structure(t["xyz"][a:b], numbers, None, site_labels=atom_names, provenance=prov)
    except InputError as exc:
        return CcdRecord(code, name, None, str(exc), atom_names)
    index = {n: i for i, n in enumerate(atom_names)}
    bonds = []
    br = t["bond_range"].get(code)
    if br is not None:
        for k in range(*br):
            i, j = index.get(str(t["bond_a"][k])), index.get(str(t["bond_b"][k]))
            if i is not None and j is not None:
                bonds.append(
                    (i, j, BOND_ORDERS.get(str(t["bond_order"][k]), 1), str(t["bond_aromatic"][k]) == "Y")
                )
    stereo = tuple(str(x) for x in t["stereo"][a:b])
    charges = tuple(int(x) for x in t["charge"][a:b])
    return CcdRecord(code, name, s, "", atom_names, tuple(bonds), stereo, charges)


def iter_ccd(codes: Iterable[str] | None = None) -> Iterator[CcdRecord]:
    """One record per code, lazily (every component when ``codes`` is None); never raises per item."""
    t = _tables()
    for code in t["codes"] if codes is None else codes:
        yield _record(str(code).strip().upper(), t)


def ccd_record(code: str) -> CcdRecord:
    """One component's record (see :func:`iter_ccd`)."""
    return next(iter_ccd([code]))
