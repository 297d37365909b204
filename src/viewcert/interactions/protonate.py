"""The prepared complex as a biotite AtomArray with bonds, charges and hydrogens added by hydride.

``protonated_complex(path, ligand=, pocket=)`` prepares the complex exactly as ``complex:`` does
(``viewcert.io.complex.prepare_complex``: the pocket's residues and the ligand, one conformer), then
builds the whole entry in biotite — bonds from the Chemical Component Dictionary (``connect_via_residue_names``,
inter-residue links from the file's CONECT records), the ligand from its SDF (bonds and charges) where the
entry is in PoseBusters layout — with the prepared atoms' positions, so both see the same conformer. Every
hydrogen is removed and hydride adds them again on the prepared complex and its environment (whole residues within
``ENVIRONMENT`` Å; protein charges estimated at pH on the whole entry, the ligand's from the CCD or its
SDF), then relaxes them. Positions in Å, the file's frame.
"""

from __future__ import annotations

import gzip
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from viewcert.errors import InputError
from viewcert.io.complex import DEFAULT_POCKET, PreparedComplex, prepare_complex

LIGAND_CHAIN = "L"  # chain given to a ligand read from an SDF (it has none)
ENVIRONMENT = 6.0  # Å: residues this close to the prepared complex are protonated and relaxed with it
PH = 7.0  # pH of hydride's amino-acid charge estimate


@dataclass(frozen=True, eq=False)
class Protonated:
    """``atoms``: biotite AtomArray of the whole entry with hydrogens; ``index``: (n_prepared,) index in
    ``atoms`` of each atom of ``prepared.structure``; ``ligand``/``pocket``: boolean masks over ``atoms``
    (hydrogens included, by residue); ``n_hydrogens_added``; ``warnings``: hydride's, counted by text."""

    prepared: PreparedComplex
    atoms: object
    index: np.ndarray
    ligand: np.ndarray
    pocket: np.ndarray
    n_hydrogens_added: int
    warnings: dict


def _label(a, i: int) -> str:
    return f"{a.chain_id[i]}/{a.res_name[i]}{a.res_id[i]}{a.ins_code[i].strip()}/{a.atom_name[i]}"


def _read_entry(path: Path):
    """Heavy atoms of the first model (waters dropped), CCD bonds merged with the file's CONECT links."""
    import biotite.structure as struc  # lazy: biotite costs ~1 s to import and is the interactions extra
    import biotite.structure.io.pdb as pdb  # lazy: as above

    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rt") as fh:
            f = pdb.PDBFile.read(io.StringIO(fh.read()))
        a = pdb.get_structure(f, model=1, altloc="first", include_bonds=True)
    except (ValueError, OSError, KeyError) as exc:
        raise InputError(f"biotite cannot read the entry: {exc}", source=str(path)) from None
    keep = ~np.isin(np.char.upper(a.element.astype(str)), ["H", "D"]) & ~struc.filter_solvent(a)
    a = a[keep]
    conect = a.bonds
    ccd = struc.connect_via_residue_names(a)
    a.bonds = conect.merge(ccd)  # CCD bond orders take precedence; CONECT adds covalent links
    a.set_annotation("charge", np.zeros(len(a), dtype=int))
    return a


def _read_sdf_ligand(path: Path, names: list[str]):
    import biotite.structure.io.mol as mol  # lazy: see _read_entry

    try:
        lig = mol.get_structure(mol.MOLFile.read(str(path)))
    except (ValueError, OSError, KeyError, IndexError) as exc:
        raise InputError(f"biotite cannot read the ligand: {exc}", source=str(path)) from None
    lig = lig[lig.element != "H"]
    if len(lig) != len(names):
        raise InputError(f"the ligand has {len(lig)} heavy atoms in biotite, {len(names)} prepared",
                         source=str(path), field="ligand")
    lig.atom_name[:] = [n.split("/", 1)[1] for n in names]
    lig.res_name[:] = "LIG"
    lig.chain_id[:] = LIGAND_CHAIN
    lig.res_id[:] = 1
    lig.hetero[:] = True
    return lig


def _charges(a, ph: float, keep: np.ndarray) -> np.ndarray:
    """Formal charges: amino acids by hydride at ``ph``, other residues from the CCD by atom name; where
    ``keep`` (an SDF ligand's atoms) the charges already read stay."""
    import biotite.structure as struc  # lazy: see _read_entry
    import biotite.structure.info as info  # lazy: see _read_entry
    import hydride  # lazy: the interactions extra

    est = np.where(struc.filter_amino_acids(a), hydride.estimate_amino_acid_charges(a, ph=ph), _ccd_charges(a, info))
    return np.where(keep, a.charge, est).astype(int)


def _ccd_charges(a, info) -> np.ndarray:
    import biotite.structure as struc  # lazy: see _read_entry

    out = np.zeros(len(a), dtype=int)
    aa = struc.filter_amino_acids(a)
    starts = struc.get_residue_starts(a, add_exclusive_stop=True)
    for s, e in zip(starts[:-1], starts[1:], strict=True):
        if aa[s] or a.res_name[s] == "LIG":
            continue
        try:
            ref = info.residue(str(a.res_name[s]))
        except KeyError:
            continue
        by_name = dict(zip(ref.atom_name.tolist(), ref.charge.tolist(), strict=True))
        out[s:e] = [by_name.get(n, 0) for n in a.atom_name[s:e]]
    return out


def _sdf_of(p: Path, ligand: str | None) -> Path | None:
    return p / "ligand.sdf" if ligand is None and p.is_dir() and (p / "ligand.sdf").is_file() else None


def protonated_complex(path: str | Path, *, ligand: str | None = None, pocket: float = DEFAULT_POCKET,
                       ph: float = PH) -> Protonated:
    """The complex ``complex:`` prepares, with hydride's hydrogens (module docstring)."""
    import hydride  # lazy: the interactions extra

    p = Path(path)
    prepared = prepare_complex(p, ligand=ligand, pocket=pocket)
    source = prepared.structure.provenance.source
    if prepared.ligand_instances > 1 and (ligand is None or len(ligand.split("/")) < 3):
        raise InputError(f"ligand {prepared.ligand!r} occurs {prepared.ligand_instances} times; name one as "
                         "RES/CHAIN/SEQ", source=source, field="ligand")
    entry = _read_entry(Path(source))
    sdf = _sdf_of(p, ligand)
    labels, lig_atoms = prepared.structure.site_labels, list(prepared.ligand_atoms)
    keep = np.zeros(len(entry), dtype=bool)
    if sdf is not None:
        entry = entry + _read_sdf_ligand(sdf, list(labels[: len(lig_atoms)]))
        keep = np.arange(len(entry)) >= len(entry) - len(lig_atoms)
    index = _match(entry, labels, sdf is not None, len(lig_atoms), source)
    entry.coord[index] = prepared.structure.positions
    entry.charge = _charges(entry, ph, keep)
    entry, index = _crop(entry, index)
    caught: dict = {}
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        h, original = hydride.add_hydrogen(entry)
        h.coord = hydride.relax_hydrogen(h)
    for w in rec:
        key = str(w.message).split("\n", 1)[0][:120]
        caught[key] = caught.get(key, 0) + 1
    new_index = np.flatnonzero(original)[index]
    lig = _residue_mask(h, new_index[lig_atoms])
    pocket_mask = _residue_mask(h, np.delete(new_index, lig_atoms)) & ~lig
    return Protonated(prepared, h, new_index, lig, pocket_mask, int(len(h) - len(entry)), dict(sorted(caught.items())))


def _crop(entry, index: np.ndarray):
    """The residues with a heavy atom within ENVIRONMENT Å of a prepared atom (so every residue bonded to
    the pocket stays, and the hydrogens relax among their real neighbours); the index remapped."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    d, _ = cKDTree(entry.coord[index]).query(entry.coord, distance_upper_bound=ENVIRONMENT)
    near = _residue_mask(entry, np.flatnonzero(np.isfinite(d)))
    return entry[near], (np.cumsum(near) - 1)[index]


def _residue_mask(a, idx) -> np.ndarray:
    """Atoms of ``a`` in the residues (chain, res_id, ins_code, res_name) of the atoms ``idx``."""
    keys = {(a.chain_id[i], a.res_id[i], a.ins_code[i], a.res_name[i]) for i in np.asarray(idx).tolist()}
    return np.array([(c, r, k, n) in keys for c, r, k, n in zip(a.chain_id, a.res_id, a.ins_code, a.res_name,
                                                              strict=True)], dtype=bool)


def _match(entry, labels, sdf: bool, n_lig: int, source: str) -> np.ndarray:
    """Index in ``entry`` of each prepared atom, by its ``chain/RESseq/atom`` label."""
    where = {}
    for i in range(len(entry) - (n_lig if sdf else 0)):
        where.setdefault(_label(entry, i), i)
    out = np.empty(len(labels), dtype=np.int64)
    for k, lab in enumerate(labels):
        if sdf and k < n_lig:
            out[k] = len(entry) - n_lig + k
        elif lab in where:
            out[k] = where[lab]
        else:
            raise InputError(f"atom {lab} of the prepared complex is not in biotite's reading of the entry",
                             source=source, field="atom")
    return out
