"""The prepared complex as a biotite AtomArray with bonds, charges and hydrogens added by hydride.

``protonated_complex(path, ligand=, pocket=)`` prepares the complex exactly as ``complex:`` does
(``viewcert.io.complex.prepare_complex``: the pocket's residues and the ligand, one conformer), then
builds the whole entry in biotite (PDB or mmCIF) — bonds from the Chemical Component Dictionary
(``connect_via_residue_names``), inter-residue links from the file's CONECT records and metal coordination by
distance (``METAL_LINK``), bonds by distance for a residue the CCD lacks; the ligand from its SDF or mol2 (bonds
and charges) or its PDB file where it comes in its own file — with the prepared atoms' positions, so both see
the same conformer. Every
hydrogen is removed and hydride adds them again on the prepared complex and its environment (whole residues within
``ENVIRONMENT`` Å; protein charges estimated at pH on the whole entry, the ligand's from the CCD or its
SDF), then relaxes them. Positions in Å, the file's frame.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from viewcert.errors import InputError
from viewcert.io.complex import DEFAULT_POCKET, PreparedComplex, prepare_complex, read_text

LIGAND_CHAIN = "L"  # chain given to a ligand read from an SDF (it has none)
ENVIRONMENT = 6.0  # Å: residues this close to the prepared complex are protonated and relaxed with it
PH = 7.0  # pH of hydride's amino-acid charge estimate
METALS = ("FE", "ZN", "MG", "MN", "CU", "CO", "NI", "CA", "CD", "HG")
METAL_LINK = 2.6  # Å: a metal this close to an N/O/S of another residue coordinates it


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


def prepared_of(prot: Protonated) -> dict[int, int]:
    """{index in ``prot.atoms``: index in ``prot.prepared.structure``} of the prepared atoms (``index``
    inverted)."""
    return {int(i): k for k, i in enumerate(prot.index.tolist())}


def _label(a, i: int) -> str:
    return f"{a.chain_id[i]}/{a.res_name[i]}{a.res_id[i]}{a.ins_code[i].strip()}/{a.atom_name[i]}"


def _read_entry(path: Path):
    """Heavy atoms of the first model (waters dropped), CCD bonds merged with the file's CONECT links (PDB) or
    the file's struct_conn links (mmCIF); residues the CCD does not know are bonded by distance."""
    import biotite.structure as struc  # lazy: biotite costs ~1 s to import and is the interactions extra
    import biotite.structure.io.pdb as pdb  # lazy: as above
    import biotite.structure.io.pdbx as pdbx  # lazy: as above
    from biotite import InvalidFileError  # lazy: as above

    text = read_text(path)  # a truncated gzip is refused here, naming the file
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # biotite's notes on fallback mmCIF columns (label_* for auth_*)
            if path.name.lower().endswith((".cif", ".cif.gz", ".mmcif")):
                a = pdbx.get_structure(pdbx.CIFFile.read(io.StringIO(text)), model=1, altloc="first",
                                       include_bonds=True)
            else:
                a = pdb.get_structure(pdb.PDBFile.read(io.StringIO(text)), model=1, altloc="first",
                                      include_bonds=True)
    except (ValueError, OSError, KeyError, IndexError, InvalidFileError) as exc:
        raise InputError(f"biotite cannot read the entry: {' '.join(str(exc).split())[:200]}",
                         source=str(path)) from None
    keep = ~np.isin(np.char.upper(a.element.astype(str)), ["H", "D"]) & ~struc.filter_solvent(a)
    a = a[keep]
    conect = a.bonds
    ccd = struc.connect_via_residue_names(a)
    a.bonds = conect.merge(ccd)  # CCD bond orders take precedence; CONECT adds covalent links
    known = _ccd_known(a)
    if not known.all():  # a residue outside the CCD (a ligand written under a made-up name): bonds by distance
        own = struc.connect_via_distances(a[~known], inter_residue=False)
        idx = np.flatnonzero(~known)
        pairs = own.as_array()
        if len(pairs):
            a.bonds = a.bonds.merge(struc.BondList(len(a), np.column_stack([idx[pairs[:, 0]], idx[pairs[:, 1]],
                                                                            pairs[:, 2]])))
    a.set_annotation("charge", np.zeros(len(a), dtype=int))
    return a


def _metal_links(a):
    """Coordination bonds between residues: a metal atom and an N/O/S of another residue within METAL_LINK Å
    (a split complex loses the CONECT records that state them; a whole entry states them already)."""
    import biotite.structure as struc  # lazy: see _read_entry
    from scipy.spatial import cKDTree  # lazy: start-up time

    metal = np.flatnonzero(np.isin(np.char.upper(a.element.astype(str)), METALS))
    polar = np.flatnonzero(np.isin(np.char.upper(a.element.astype(str)), ["N", "O", "S"]))
    pairs = []
    if len(metal) and len(polar):
        tree = cKDTree(a.coord[polar])
        for m in metal.tolist():
            for j in tree.query_ball_point(a.coord[m], METAL_LINK):
                p = int(polar[j])
                if (a.chain_id[p], a.res_id[p], a.res_name[p]) != (a.chain_id[m], a.res_id[m], a.res_name[m]):
                    pairs.append((m, p, int(struc.BondType.SINGLE)))
    return struc.BondList(len(a), np.array(pairs, dtype=np.int64).reshape(-1, 3))


def _ccd_known(a) -> np.ndarray:
    import biotite.structure.info as info  # lazy: see _read_entry

    names = {str(n) for n in np.unique(a.res_name)}
    ok = set()
    for n in names:
        try:
            info.residue(n)
            ok.add(n)
        except KeyError:
            continue
    return np.isin(a.res_name, sorted(ok))


def _read_molecule_ligand(block: str, names: list[str], source: str):
    import biotite.structure.io.mol as mol  # lazy: see _read_entry

    try:
        lig = mol.get_structure(mol.MOLFile.read(io.StringIO(block)))
    except (ValueError, OSError, KeyError, IndexError) as exc:
        raise InputError(f"biotite cannot read the ligand: {exc}", source=source) from None
    lig = lig[lig.element != "H"]
    if len(lig) != len(names):
        raise InputError(f"the ligand has {len(lig)} heavy atoms in biotite, {len(names)} prepared",
                         source=source, field="ligand")
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


def protonated_complex(path, *, ligand: str | None = None, pocket: float = DEFAULT_POCKET,
                       ph: float = PH) -> Protonated:
    """The complex ``complex:`` prepares, with hydride's hydrogens (module docstring).

    Parameters
    ----------
    path : str, Path or ComplexFiles
        The complex: a folder (PDBbind or PoseBusters layout), a file or located files.
    ligand : str, optional
        The ligand (residue name, or ``RES/CHAIN/SEQ`` when it occurs more than once); default: the one
        ``complex:`` picks.
    pocket : float
        Pocket radius around the ligand (Å).
    ph : float
        pH of the charges hydride's hydrogens are placed for.

    Returns
    -------
    Protonated
        The prepared complex, its biotite AtomArray with bonds, charges and hydrogens, the index of each
        prepared atom in it and the ligand and pocket masks.
    """
    import hydride  # lazy: the interactions extra

    prepared = prepare_complex(path, ligand=ligand, pocket=pocket)
    source = prepared.structure.provenance.source
    if prepared.ligand_instances > 1 and (ligand is None or len(ligand.split("/")) < 3):
        raise InputError(f"ligand {prepared.ligand!r} occurs {prepared.ligand_instances} times; name one as "
                         "RES/CHAIN/SEQ", source=source, field="ligand")
    files = prepared.files
    entry = _read_entry(Path(source))
    lig_file = files.ligand if files is not None else None
    molecule = prepared.ligand_block is not None
    if lig_file is not None and not molecule:  # a PDB/mmCIF ligand file: its residues join the entry
        entry = entry + _read_entry(lig_file)
    labels, lig_atoms = prepared.structure.site_labels, list(prepared.ligand_atoms)
    keep = np.zeros(len(entry), dtype=bool)
    if molecule:
        entry = entry + _read_molecule_ligand(prepared.ligand_block, list(labels[: len(lig_atoms)]), str(lig_file))
        keep = np.arange(len(entry)) >= len(entry) - len(lig_atoms)
    entry.bonds = entry.bonds.merge(_metal_links(entry))
    index = _match(entry, labels, molecule, len(lig_atoms), source)
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
