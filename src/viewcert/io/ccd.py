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
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from viewcert.elements import atomic_number
from viewcert.errors import InputError
from viewcert.io.received import read_received_text
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


def _decode() -> dict[str, np.ndarray]:
    """The few needed CCD columns as compact arrays (≈ 0.1 GB), bond atoms as indices within a component."""
    block = _biotite_ccd()
    comp, atom, bond = block["chem_comp"], block["chem_comp_atom"], block["chem_comp_bond"]
    codes = comp["id"].as_array()
    atom_ids = atom["comp_id"].as_array()
    xyz, missing = [], np.zeros(len(atom_ids), dtype=bool)
    for axis in "xyz":
        col = atom[f"pdbx_model_Cartn_{axis}_ideal"]
        xyz.append(col.as_array(np.float64))
        if col.mask is not None:
            missing |= col.mask.array != 0
    atom_name = atom["atom_id"].as_array()
    names = [str(n).encode() for n in comp["name"].as_array()]
    arange = _ranges(atom_ids)
    bond_ids = bond["comp_id"].as_array()
    brange = _ranges(bond_ids)
    local = {}
    for code, (a, b) in arange.items():
        for k in range(a, b):
            local[(code, str(atom_name[k]))] = k - a
    bi = np.array([local.get((str(c), str(n)), -1) for c, n in zip(bond_ids, bond["atom_id_1"].as_array(),
                                                                       strict=True)], dtype=np.int32)
    bj = np.array([local.get((str(c), str(n)), -1) for c, n in zip(bond_ids, bond["atom_id_2"].as_array(),
                                                                       strict=True)], dtype=np.int32)
    order = np.array([BOND_ORDERS.get(str(o), 1) for o in bond["value_order"].as_array()], dtype=np.int8)

    def spans(rng):
        return np.array([rng.get(str(c), (-1, -1)) for c in codes], dtype=np.int64).reshape(-1, 2)

    return {
        "codes": codes.astype("U8"),
        "name_blob": np.frombuffer(b"".join(names), dtype=np.uint8),
        "name_stop": np.cumsum([len(n) for n in names]).astype(np.int64),
        "atom_span": spans(arange), "bond_span": spans(brange),
        "atom_name": np.char.encode(atom_name.astype("U8"), "utf-8"),
        "element": np.char.encode(atom["type_symbol"].as_array().astype("U3"), "ascii"),
        "stereo": np.char.encode(atom["pdbx_stereo_config"].as_array().astype("U1"), "ascii"),
        "charge": atom["charge"].as_array(np.int64).astype(np.int8),
        "xyz": np.column_stack(xyz), "missing": missing,
        "bond_i": bi, "bond_j": bj, "bond_order": order,
        "bond_aromatic": bond["pdbx_aromatic_flag"].as_array() == "Y",
    }


def cache_path() -> Path:
    """Where the compact copy lives: $VIEWCERT_CACHE_DIR or ~/.cache/viewcert, named by the CCD file's hash."""
    root = Path(os.environ.get("VIEWCERT_CACHE_DIR") or Path.home() / ".cache" / "viewcert")
    return root / f"ccd-v2-{ccd_file_sha256()[:16]}.npz"


def ensure_cache() -> Path:
    """Build the compact copy once (atomic write); later processes load it in well under a second."""
    path = cache_path()
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(tmp, **_decode())
        os.replace(tmp, path)
    return path


@lru_cache(maxsize=1)
def _tables() -> dict:
    """The compact columns (once per process, from the cache) and code -> index."""
    try:
        path = ensure_cache()
        with np.load(path, allow_pickle=False) as z:
            t = {k: z[k] for k in z.files}
    except OSError:  # no writable cache: decode in memory
        t = _decode()
    t["index"] = {str(c): i for i, c in enumerate(t["codes"])}
    return t


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
    text = read_received_text(p, what="code list")  # a regular file within max_json_bytes (a FIFO cannot block)
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


def _name(t: dict, i: int) -> str:
    a = int(t["name_stop"][i - 1]) if i else 0
    return bytes(t["name_blob"][a : int(t["name_stop"][i])]).decode(errors="replace")


def _record(code: str, t: dict) -> CcdRecord:
    i = t["index"].get(code)
    if i is None:
        return CcdRecord(code, "", None, f"no component {code!r} in the CCD")
    name = _name(t, i)
    a, b = (int(x) for x in t["atom_span"][i])
    if a < 0:
        return CcdRecord(code, name, None, "the component has no atoms")
    atom_names = tuple(n.decode() for n in t["atom_name"][a:b])
    n_missing = int(t["missing"][a:b].sum())
    if n_missing:
        return CcdRecord(
            code, name, None, f"ideal coordinates missing for {n_missing} of {b - a} atoms", atom_names
        )
    try:
        elements = [e.decode() for e in t["element"][a:b]]
        numbers = np.array([atomic_number(e) for e in elements], dtype=np.int64)
        canonical = {
            "atom_name": list(atom_names),
            "element": elements,
            "coord": np.round(t["xyz"][a:b], 4).tolist(),
        }
        digest = sha256_text(json.dumps(canonical, sort_keys=True, separators=(",", ":")))
        prov = Provenance(source=CCD_SOURCE, identifier=f"ccd:{code}", sha256=digest)
        s = Structure(t["xyz"][a:b], numbers, None, site_labels=atom_names, provenance=prov)
    except InputError as exc:
        return CcdRecord(code, name, None, str(exc), atom_names)
    c, d = (int(x) for x in t["bond_span"][i])
    bonds = []
    if c >= 0:
        for k in range(c, d):
            bi, bj = int(t["bond_i"][k]), int(t["bond_j"][k])
            if bi >= 0 and bj >= 0:
                bonds.append((bi, bj, int(t["bond_order"][k]), bool(t["bond_aromatic"][k])))
    stereo = tuple(x.decode() for x in t["stereo"][a:b])
    charges = tuple(int(x) for x in t["charge"][a:b])
    return CcdRecord(code, name, s, "", atom_names, tuple(bonds), stereo, charges)


def iter_ccd(codes: Iterable[str] | None = None) -> Iterator[CcdRecord]:
    """One record per code, lazily (every component when ``codes`` is None); never raises per item."""
    t = _tables()
    for code in ccd_codes() if codes is None else codes:
        yield _record(str(code).strip().upper(), t)


def ccd_record(code: str) -> CcdRecord:
    """One component's record (see :func:`iter_ccd`)."""
    return next(iter_ccd([code]))
