"""MiSI-style protein–ligand complex preparation: the ligand and the pocket around it, as one molecule.

MiSI-Bench renders PDBbind complexes as the ligand plus the protein residues near it, with waters and
hydrogens hidden. :func:`prepare_complex` does the same from the inputs of ``../shared/data/complexes``:

- a folder with ``protein.pdb[.gz]`` and ``ligand.sdf`` (PoseBusters layout): the ligand is the SDF;
- a folder with ``complex.pdb[.gz]`` or a PDB/mmCIF file (a whole entry): the ligand is the first residue
  named ``ligand`` (e.g. ``"HEM"``; ``"HEM/A/201"`` picks chain A, sequence number 201); how many residues
  carry that name is recorded.

Kept: the ligand's heavy atoms and every protein residue (standard or not, waters excepted) with a heavy
atom within ``pocket`` Å of a ligand heavy atom — whole residues, like PDBbind's pocket files. Dropped:
waters (HOH, WAT, DOD, H2O), hydrogens and deuterium, and the alternate locations the rule of
:mod:`viewcert.io.altloc` does not keep (per residue the altloc id with the highest summed occupancy, ties
alphabetically; the ids kept and the atoms dropped are in ``dropped`` and ``Provenance.choices``). Each atom
keeps its chain, residue name, sequence number and atom name as its site label ``chain/RESseq/atom`` (the
ligand's atoms from an SDF: ``LIG/<name or index>``). Positions in Å, the PDB's frame.

A bad input (missing file, absent ligand name, no atoms left) raises :class:`InputError` naming the file
and field; a certification over many complexes turns it into that item's reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gemmi
import numpy as np

from viewcert.elements import atomic_number
from viewcert.errors import InputError
from viewcert.io.altloc import AltlocRow, choose_altlocs
from viewcert.io.sdf import read_sdf
from viewcert.structures import Provenance, Structure, sha256_text

WATERS = frozenset({"HOH", "WAT", "DOD", "H2O"})
DEFAULT_POCKET = 8.0  # Å


def _kdtree(points):
    """``scipy.spatial.cKDTree(points)``, imported at the first call."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    return cKDTree(points)


@dataclass(frozen=True)
class PreparedComplex:
    """Ligand + pocket as one molecule. ``ligand_atoms``: indices of the ligand's atoms in ``structure``;
    ``residues``: the pocket residues kept (``chain/RESseq``); ``dropped``: counts of what was removed."""

    structure: Structure
    ligand: str
    ligand_atoms: tuple[int, ...]
    residues: tuple[str, ...]
    pocket: float
    dropped: dict
    ligand_instances: int = 1

    def to_dict(self) -> dict:
        return {"ligand": self.ligand, "n_atoms": self.structure.n_atoms, "n_ligand_atoms": len(self.ligand_atoms),
                "n_residues": len(self.residues), "pocket_A": self.pocket, "dropped": dict(self.dropped),
                "ligand_instances": self.ligand_instances, "source": self.structure.provenance.source}


def _find(folder: Path, stem: str) -> Path | None:
    for suffix in (".pdb.gz", ".pdb", ".cif.gz", ".cif", ".ent.gz", ".ent"):
        p = folder / f"{stem}{suffix}"
        if p.is_file():
            return p
    return None


def _atoms(path: Path):
    """((chain, resname, seq, atom name, element, xyz, is_het) of the first model, one altloc per residue by
    viewcert.io.altloc's "occupancy" rule; the choice record or None)."""
    try:
        st = gemmi.read_structure(str(path))
    except (RuntimeError, ValueError, OSError) as exc:
        raise InputError(f"cannot read the structure: {exc}", source=str(path)) from None
    if len(st) == 0:
        raise InputError("no model in the file", source=str(path), field="model")
    out, alts = [], []
    for ch in st[0]:
        for res in ch:
            seq = f"{res.seqid.num}{res.seqid.icode.strip()}"
            for at in res:
                out.append((ch.name, res.name, seq, at.name, at.element.name, (at.pos.x, at.pos.y, at.pos.z),
                            res.het_flag == "H"))
                alts.append(AltlocRow((ch.name, seq), at.name, at.altloc, at.occ, f"{ch.name}/{res.name}{seq}"))
    keep, record = choose_altlocs(alts, "occupancy", source=str(path))
    return [r for r, k in zip(out, keep, strict=True) if k], record


def _heavy(rows: list[tuple], dropped: dict) -> list[tuple]:
    keep = []
    for r in rows:
        if r[1] in WATERS:
            dropped["water_atoms"] = dropped.get("water_atoms", 0) + 1
        elif r[4].upper() in ("H", "D"):
            dropped["hydrogens"] = dropped.get("hydrogens", 0) + 1
        else:
            keep.append(r)
    return keep


def _ligand_from_sdf(path: Path) -> tuple[np.ndarray, list[int], list[str]]:
    s = read_sdf(str(path))
    heavy = s.numbers > 1
    names = [f"LIG/{lab or k}" for k, lab in enumerate(s.site_labels or [""] * s.n_atoms)]
    return s.positions[heavy], [int(z) for z in s.numbers[heavy]], [n for n, h in zip(names, heavy, strict=True) if h]


def _select_ligand(rows: list[tuple], ligand: str, source: str) -> tuple[list[int], int]:
    parts = ligand.split("/")
    name = parts[0].upper()
    chain = parts[1] if len(parts) > 1 else None
    seq = parts[2] if len(parts) > 2 else None
    keys = []
    for r in rows:
        if r[1] == name and (chain is None or r[0] == chain) and (seq is None or r[2] == seq):
            if (r[0], r[2]) not in keys:
                keys.append((r[0], r[2]))
    if not keys:
        present = sorted({r[1] for r in rows if r[6]})
        raise InputError(f"ligand {ligand!r} is not in the file (hetero residues: {', '.join(present) or 'none'})",
                         source=source, field="ligand")
    first = keys[0]
    return [i for i, r in enumerate(rows) if r[1] == name and (r[0], r[2]) == first], len(keys)


def prepare_complex(
    path: str | Path, *, ligand: str | None = None, ligand_sdf: str | Path | None = None,
    pocket: float = DEFAULT_POCKET,
) -> PreparedComplex:
    """Ligand + the residues within ``pocket`` Å of it, heavy atoms only (module docstring)."""
    p = Path(path)
    if not (pocket >= 0 and np.isfinite(pocket)):
        raise InputError(f"pocket must be a finite distance ≥ 0 Å, got {pocket}", field="pocket")
    protein = (_find(p, "protein") or _find(p, "complex")) if p.is_dir() else p
    if protein is None or not protein.is_file():
        raise InputError("no protein.pdb[.gz] / complex.pdb[.gz] here", source=str(p), field="INPUT")
    sdf = Path(ligand_sdf) if ligand_sdf else (p / "ligand.sdf" if p.is_dir() and (p / "ligand.sdf").is_file()
                                                else None)
    dropped: dict = {}
    rows, altlocs = _atoms(protein)
    if altlocs is not None:
        dropped["altloc_atoms"] = altlocs.dropped_atoms
    rows = _heavy(rows, dropped)
    instances = 1
    if ligand is not None or sdf is None:
        if ligand is None:
            raise InputError("a whole entry needs the ligand's residue name (--ligand RES)", source=str(protein),
                             field="ligand")
        idx, instances = _select_ligand(rows, ligand, str(protein))
        lig_pos = np.array([rows[i][5] for i in idx])
        lig_z = [atomic_number(rows[i][4], source=str(protein)) for i in idx]
        lig_names = [f"{rows[i][0]}/{rows[i][1]}{rows[i][2]}/{rows[i][3]}" for i in idx]
        rest = [r for i, r in enumerate(rows) if i not in set(idx)]
        label = ligand
    else:
        lig_pos, lig_z, lig_names = _ligand_from_sdf(sdf)
        rest, label = rows, sdf.name
    if len(lig_pos) == 0:
        raise InputError("the ligand has no heavy atoms", source=str(sdf or protein), field="ligand")
    pos = np.array([r[5] for r in rest]).reshape(-1, 3)
    near = set()
    if len(pos):
        for i in np.flatnonzero(np.isfinite(_kdtree(lig_pos).query(pos, distance_upper_bound=pocket)[0])):
            near.add((rest[i][0], rest[i][1], rest[i][2]))
    pocket_rows = [r for r in rest if (r[0], r[1], r[2]) in near]
    residues = tuple(dict.fromkeys(f"{r[0]}/{r[1]}{r[2]}" for r in pocket_rows))
    positions = np.vstack([lig_pos, np.array([r[5] for r in pocket_rows]).reshape(-1, 3)])
    numbers = lig_z + [atomic_number(r[4], source=str(protein)) for r in pocket_rows]
    names = lig_names + [f"{r[0]}/{r[1]}{r[2]}/{r[3]}" for r in pocket_rows]
    digest = sha256_text(protein.read_bytes() + (sdf.read_bytes() if sdf is not None and ligand is None else b"")
                         + f"|{ligand}|{pocket}".encode())
    prov = Provenance(source=str(protein), identifier=f"{p.name}:{label}:pocket{pocket:g}", sha256=digest,
                      choices=altlocs.choices() if altlocs else ())
    s = Structure(positions, np.array(numbers), None, site_labels=tuple(names), provenance=prov)
    return PreparedComplex(s, label, tuple(range(len(lig_z))), residues, float(pocket), dropped, instances)
