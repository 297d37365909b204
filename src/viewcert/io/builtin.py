"""Built-in structures shipped by installed packages (nothing is downloaded).

``builtin_prototypes()``: 20 crystal prototypes from pymatgen's bundled AFLOW Library of Crystallographic
Prototypes (``pymatgen/analysis/prototypes/aflow_prototypes.json.gz``), at least two per crystal
system, in the fixed order of :data:`PROTOTYPES`. Each keeps the library's cell (often primitive) and
fractional coordinates (wrapped to [0, 1)), with the lattice rebuilt from its six parameters in
pymatgen's orientation (c along z, see :mod:`viewcert.io.cell`). Identifier ``aflow:<label>``.

``builtin_molecules()``: three molecules with 3D coordinates (ideal coordinates, hydrogens kept) from the
wwPDB Chemical Component Dictionary bundled with biotite (``biotite.structure.info.residue``):
ATP, ibuprofen (IBP, a chiral drug) and cholesterol (CLR, a steroid). Identifier ``ccd:<code>``.
Their records are copied into ``viewcert/data/ccd_molecules.json`` (made by
:func:`ccd_record_from_biotite`; a test checks the copy against biotite), so reading them needs neither
biotite nor the seconds it takes to load its CCD; ``builtin:ccd:<code>`` for any other code goes to
biotite.

``builtin(name)``: ``builtin:prototypes``, ``builtin:molecules``, ``builtin:sample`` (one prototype per
crystal system, :data:`SAMPLE_PROTOTYPES`, plus ATP and ibuprofen: the small mixed set ``make run`` uses),
or one item, ``builtin:aflow:A_cF4_225_a`` / ``builtin:ccd:ATP``.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from viewcert.elements import atomic_number
from viewcert.errors import InputError
from viewcert.io.cell import cell_parameters, lattice_from_parameters
from viewcert.structures import Provenance, Structure, sha256_text

#: (AFLOW label, crystal system, common name), in the order builtin_prototypes() returns them.
PROTOTYPES: tuple[tuple[str, str, str], ...] = (
    ("A_cF4_225_a", "cubic", "copper (fcc, A1)"),
    ("AB_cF8_225_a_b", "cubic", "rock salt NaCl (B1)"),
    ("A_cF8_227_a", "cubic", "diamond (A4)"),
    ("A_hP2_194_c", "hexagonal", "magnesium (hcp, A3)"),
    ("AB_hP4_186_b_b", "hexagonal", "wurtzite ZnS (B4)"),
    ("A_hP4_194_bc", "hexagonal", "graphite (A9)"),
    ("AB_hP6_154_a_b", "trigonal", "cinnabar HgS (B9)"),
    ("A_hP3_152_a", "trigonal", "alpha selenium (A8)"),
    ("AB3C_hR10_148_c_f_c", "trigonal", "ilmenite FeTiO3"),
    ("A_tI4_141_a", "tetragonal", "beta tin (A5)"),
    ("A2B_tP6_136_f_a", "tetragonal", "rutile TiO2 (C4)"),
    ("A2B_tI12_141_e_a", "tetragonal", "anatase TiO2 (C5)"),
    ("A_oC4_63_c", "orthorhombic", "alpha uranium (A20)"),
    ("A2B_oI12_72_j_a", "orthorhombic", "silicon disulphide SiS2 (C42)"),
    ("AB_oP4_51_e_f", "orthorhombic", "beta' CdAu (B19)"),
    ("A_mC4_12_i", "monoclinic", "alpha oxygen"),
    ("AB_mC8_15_c_e", "monoclinic", "tenorite CuO (B26)"),
    ("A2B_mP12_14_2e_e", "monoclinic", "baddeleyite ZrO2 (C43)"),
    ("A_aP4_2_aci", "triclinic", "high-pressure californium"),
    ("A2B_aP6_2_2i_i", "triclinic", "diphosphorus tetraiodide P2I4"),
)

#: One prototype per crystal system, for builtin:sample.
SAMPLE_PROTOTYPES: tuple[str, ...] = (
    "A_cF4_225_a",
    "A_hP2_194_c",
    "AB_hP6_154_a_b",
    "A2B_tP6_136_f_a",
    "A_oC4_63_c",
    "AB_mC8_15_c_e",
    "A_aP4_2_aci",
)

#: (CCD code, description), in the order builtin_molecules() returns them.
MOLECULES: tuple[tuple[str, str], ...] = (
    ("ATP", "adenosine-5'-triphosphate"),
    ("IBP", "ibuprofen (chiral drug)"),
    ("CLR", "cholesterol (steroid)"),
)
SAMPLE_MOLECULES: tuple[str, ...] = ("ATP", "IBP")

AFLOW_LIBRARY = "pymatgen/analysis/prototypes/aflow_prototypes.json.gz"
CCD_SOURCE = "biotite.structure.info (wwPDB Chemical Component Dictionary)"
CCD_BUNDLE = "data/ccd_molecules.json"


def _aflow_path() -> Path:
    spec = importlib.util.find_spec("pymatgen")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("pymatgen is not installed; it ships the AFLOW prototype library", field="builtin")
    for root in spec.submodule_search_locations:
        p = Path(root) / "analysis" / "prototypes" / "aflow_prototypes.json.gz"
        if p.is_file():
            return p
    raise InputError(f"pymatgen's {AFLOW_LIBRARY} was not found", field="builtin")


@lru_cache(maxsize=1)
def _aflow_entries() -> dict[str, dict]:
    """AFLOW label -> library entry, for labels that occur once in the library."""
    entries = json.loads(gzip.decompress(_aflow_path().read_bytes()))
    by_label: dict[str, list[dict]] = {}
    for e in entries:
        by_label.setdefault(e["tags"]["aflow"], []).append(e)
    return {k: v[0] for k, v in by_label.items() if len(v) == 1}


def _prototype(label: str) -> Structure:
    entry = _aflow_entries().get(label)
    if entry is None:
        raise InputError(f"no unique AFLOW prototype {label!r} in {AFLOW_LIBRARY}", field="name")
    snl = entry["snl"]
    old = np.array(snl["lattice"]["matrix"], dtype=np.float64)
    lattice = lattice_from_parameters(*cell_parameters(old))
    frac = np.array([site["abc"] for site in snl["sites"]], dtype=np.float64)
    frac = frac - np.floor(frac)
    frac[frac >= 1.0] -= 1.0
    numbers = []
    for site in snl["sites"]:
        (sp,) = site["species"]  # the prototypes are ordered: one species per site
        numbers.append(atomic_number(sp["element"], source=AFLOW_LIBRARY, field=label))
    labels = tuple(str(site.get("label") or "") for site in snl["sites"])
    digest = sha256_text(json.dumps(entry, sort_keys=True, separators=(",", ":")))
    prov = Provenance(source=AFLOW_LIBRARY, identifier=f"aflow:{label}", sha256=digest)
    return Structure(frac @ lattice, np.array(numbers), lattice, site_labels=labels, provenance=prov)


def ccd_record_from_biotite(code: str) -> dict:
    """{atom_name, element, coord} of a CCD component from biotite's bundled CCD (ideal coordinates,
    rounded to 1e-4 Å: the CCD gives three decimals, biotite stores float32). Used to (re)generate
    ``data/ccd_molecules.json`` and by the test that checks the bundled copy against biotite."""
    try:
        import biotite.structure.info as info
    except ImportError:
        raise InputError(
            "biotite is not installed (optional extra: pip install 'viewcert[molecules]')", field="builtin"
        ) from None
    try:
        arr = info.residue(code)
    except Exception as exc:  # noqa: BLE001 - biotite raises KeyError or its own errors
        raise InputError(f"no component {code!r} in biotite's CCD: {exc}", field="name") from None
    return {
        "atom_name": [str(n) for n in arr.atom_name],
        "element": [str(e) for e in arr.element],
        "coord": [[round(float(v), 4) for v in xyz] for xyz in np.asarray(arr.coord)],
    }


@lru_cache(maxsize=1)
def _bundled_ccd() -> dict:
    return json.loads(resources.files("viewcert").joinpath(CCD_BUNDLE).read_text())


@lru_cache(maxsize=32)
def _molecule(code: str) -> Structure:
    """A CCD component: from the bundled copy when it is there (fast, no biotite needed), else from
    biotite's CCD (a few seconds to load the first time)."""
    rec = _bundled_ccd()["molecules"].get(code)
    if rec is None:
        rec = ccd_record_from_biotite(code)
    coords = np.asarray(rec["coord"], dtype=np.float64).reshape(-1, 3)
    numbers = np.array(
        [atomic_number(e, source=CCD_SOURCE, field=code) for e in rec["element"]], dtype=np.int64
    )
    canonical = {"atom_name": rec["atom_name"], "element": rec["element"], "coord": coords.tolist()}
    digest = sha256_text(json.dumps(canonical, sort_keys=True, separators=(",", ":")))
    prov = Provenance(source=CCD_SOURCE, identifier=f"ccd:{code}", sha256=digest)
    return Structure(coords, numbers, None, site_labels=tuple(rec["atom_name"]), provenance=prov)


def builtin_prototypes() -> list[Structure]:
    """The 20 prototypes of :data:`PROTOTYPES`, in that order."""
    return [_prototype(label) for label, _, _ in PROTOTYPES]


def builtin_molecules() -> list[Structure]:
    """ATP, ibuprofen and cholesterol from biotite's CCD (3D, hydrogens kept)."""
    return [_molecule(code) for code, _ in MOLECULES]


def builtin_sample() -> list[Structure]:
    """One prototype per crystal system (:data:`SAMPLE_PROTOTYPES`) then ATP and ibuprofen."""
    return [_prototype(label) for label in SAMPLE_PROTOTYPES] + [_molecule(c) for c in SAMPLE_MOLECULES]


BUILTIN_SETS = ("prototypes", "molecules", "sample")


def builtin(name: str) -> list[Structure]:
    """Resolve ``builtin:prototypes|molecules|sample`` or one item ``builtin:aflow:<label>`` /
    ``builtin:ccd:<code>`` (the ``builtin:`` prefix is optional)."""
    key = name[len("builtin:") :] if name.startswith("builtin:") else name
    if key == "prototypes":
        return builtin_prototypes()
    if key == "molecules":
        return builtin_molecules()
    if key == "sample":
        return builtin_sample()
    if key.startswith("aflow:"):
        return [_prototype(key[len("aflow:") :])]
    if key.startswith("ccd:"):
        return [_molecule(key[len("ccd:") :].upper())]
    raise InputError(
        f"unknown built-in {name!r}; use builtin:prototypes, builtin:molecules, builtin:sample, "
        "builtin:aflow:<label> or builtin:ccd:<code>",
        field="name",
    )
