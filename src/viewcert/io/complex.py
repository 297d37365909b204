"""MiSI-style protein–ligand complex preparation: the ligand and the pocket around it, as one molecule.

MiSI-Bench renders PDBbind complexes as the ligand plus the protein residues near it, with waters and
hydrogens hidden. :func:`prepare_complex` does the same from the layouts users have (``locate``):

- a PDBbind folder: ``XXXX_protein.pdb`` (else ``XXXX_pocket.pdb``) and ``XXXX_ligand.sdf`` (else, or when
  RDKit cannot read the SDF, ``XXXX_ligand.mol2``);
- a folder with ``protein.pdb[.gz]`` (or ``.cif``) and ``ligand.sdf`` (PoseBusters layout);
- separate files, ``ComplexFiles(protein, ligand, water)`` (``complex:protein=P,ligand=L[,water=W]``): the
  ligand as mol2, SDF/MOL or PDB/mmCIF (HETATM or ATOM records: every non-water atom of that file, or the
  residue ``ligand=RES`` names in it); the water file is read and its atoms counted as dropped;
- a folder with ``complex.pdb[.gz]`` or a PDB/mmCIF file (a whole entry): the ligand is the first residue
  named ``ligand`` (e.g. ``"HEM"``; ``"HEM/A/201"`` picks chain A, sequence number 201), ATOM or HETATM; how
  many residues carry that name is recorded.

Kept: the ligand's heavy atoms and every protein residue (standard or not, waters excepted) with a heavy
atom within ``pocket`` Å (at most ``MAX_POCKET``) of a ligand heavy atom — whole residues, like PDBbind's
pocket files. Dropped: waters (HOH, WAT, DOD, H2O), hydrogens and deuterium, and the alternate locations
the rule of :mod:`viewcert.io.altloc` does not keep (per residue the altloc id with the highest summed
occupancy, ties alphabetically; the ids kept and the atoms dropped are in ``dropped`` and
``Provenance.choices``). Each atom keeps its chain, residue name, sequence number and atom name as its site
label ``chain/RESseq/atom`` (a ligand from an SDF: ``LIG/<element><index>``; from a mol2: ``LIG/<atom
name>``). Positions in Å, the files' frame.

A bad input (missing file, truncated gzip, unreadable structure, absent ligand name, no atoms left, a pocket
over ``MAX_POCKET``) raises :class:`InputError` naming the file and field, before any other work; a
certification over many complexes turns it into that item's reason.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import gemmi
import numpy as np

from viewcert.elements import atomic_number
from viewcert.errors import InputError, did_you_mean
from viewcert.io.altloc import AltlocRow, choose_altlocs
from viewcert.io.sdf import read_sdf_text
from viewcert.structures import Provenance, Structure, sha256_text

WATERS = frozenset({"HOH", "WAT", "DOD", "H2O"})
DEFAULT_POCKET = 8.0  # Å
MAX_POCKET = 50.0  # Å: MiSI's pockets are 8-10 Å; beyond this the "pocket" is the whole protein
STRUCTURE_SUFFIXES = (".pdb.gz", ".pdb", ".ent.gz", ".ent", ".cif.gz", ".cif", ".mmcif")
MOLECULE_SUFFIXES = (".sdf", ".mol", ".mol2")


def _kdtree(points):
    """``scipy.spatial.cKDTree(points)``, imported at the first call."""
    from scipy.spatial import cKDTree  # lazy: start-up time (scipy.spatial costs 0.3-0.9 s to import)

    return cKDTree(points)


def check_pocket(pocket: float, source: str | None = None) -> float:
    """``pocket`` (Å) if finite and in [0, MAX_POCKET], else InputError (said before any file is read)."""
    if not (np.isfinite(pocket) and 0 <= pocket <= MAX_POCKET):
        raise InputError(f"pocket must be a distance in [0, {MAX_POCKET:g}] Å (MiSI's are 8-10 Å), got {pocket:g}",
                         source=source, field="pocket")
    return float(pocket)


def read_bytes(path: Path) -> bytes:
    """The file's bytes, a ``.gz`` decompressed in full first (a truncated or corrupt gzip is an InputError
    naming the file, never a half-read structure)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", source=str(path), field="path") from None
    if path.name.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(f"the gzip file is truncated or corrupt ({' '.join(str(exc).split())})",
                             source=str(path), field="gzip") from None
    return data


def read_text(path: Path) -> str:
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _kind(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".mol2"):
        return "mol2"
    if name.endswith((".sdf", ".mol")):
        return "sdf"
    if name.endswith((".cif", ".cif.gz", ".mmcif")):
        return "cif"
    if name.endswith((".pdb", ".pdb.gz", ".ent", ".ent.gz")):
        return "pdb"
    raise InputError("not a structure file: expected .pdb/.ent/.cif[.gz], or .sdf/.mol/.mol2 for a ligand",
                     source=str(path), field="INPUT")


@dataclass(frozen=True)
class ComplexFiles:
    """The files of one complex: ``protein`` (PDB/mmCIF, possibly the whole entry), ``ligand`` (a mol2, SDF or
    PDB/mmCIF file, None when the ligand is a residue of ``protein``), ``water`` (optional, dropped), the
    complex's ``name`` and ``layout`` ("pdbbind", "posebusters", "files" or "entry")."""

    protein: Path
    ligand: Path | None = None
    water: Path | None = None
    name: str = ""
    layout: str = "files"

    def paths(self) -> tuple[Path, ...]:
        return tuple(p for p in (self.protein, self.ligand, self.water) if p is not None)

    def to_dict(self) -> dict:
        """Names only (no location: the same files read from another folder give the same record)."""
        return {"layout": self.layout, "protein": self.protein.name,
                "ligand": self.ligand.name if self.ligand else None, "water": self.water.name if self.water else None}


def _find(folder: Path, stem: str, suffixes=STRUCTURE_SUFFIXES) -> Path | None:
    for suffix in suffixes:
        p = folder / f"{stem}{suffix}"
        if p.is_file():
            return p
    return None


def _pdbbind(folder: Path) -> ComplexFiles | None:
    """``XXXX_protein.pdb`` / ``XXXX_pocket.pdb`` + ``XXXX_ligand.sdf`` / ``.mol2`` (the SDF first)."""
    stems = sorted({q.name.split("_", 1)[0] for q in folder.iterdir() if q.is_file() and "_" in q.name
                    and q.name.split("_", 1)[1].startswith(("protein.", "pocket.", "ligand."))})
    for stem in stems:
        protein = _find(folder, f"{stem}_protein") or _find(folder, f"{stem}_pocket")
        ligand = _find(folder, f"{stem}_ligand", (".sdf", ".mol2"))
        if protein is not None and ligand is not None:
            return ComplexFiles(protein, ligand, None, folder.name, "pdbbind")
    return None


def locate(path) -> ComplexFiles:
    """The files of the complex at ``path`` (module docstring; a ComplexFiles is returned as is)."""
    if isinstance(path, ComplexFiles):
        return path
    p = Path(path)
    if p.is_dir():
        protein = _find(p, "protein")
        if protein is not None and (p / "ligand.sdf").is_file():
            return ComplexFiles(protein, p / "ligand.sdf", None, p.name, "posebusters")
        found = _pdbbind(p)
        if found is not None:
            return found
        entry = _find(p, "complex") or protein
        if entry is None:
            raise InputError("no protein.pdb[.gz] + ligand.sdf, XXXX_protein.pdb + XXXX_ligand.sdf/.mol2 or "
                             "complex.pdb[.gz] here", source=str(p), field="INPUT")
        return ComplexFiles(entry, None, None, p.name, "entry")
    if not p.is_file():
        raise InputError("no such file or folder", source=str(p), field="INPUT")
    return ComplexFiles(p, None, None, p.name, "entry")


def complex_name(path) -> str:
    """A complex's name as exports record it: its folder's or file's name."""
    return path.name if isinstance(path, ComplexFiles) else Path(path).name


@dataclass(frozen=True)
class PreparedComplex:
    """Ligand + pocket as one molecule. ``ligand_atoms``: indices of the ligand's atoms in ``structure``;
    ``residues``: the pocket residues kept (``chain/RESseq``); ``dropped``: counts of what was removed;
    ``files``: what was read; ``ligand_block``: the ligand as a MOL block when it came from an SDF or mol2
    (bond orders and charges for the protonation), else None."""

    structure: Structure
    ligand: str
    ligand_atoms: tuple[int, ...]
    residues: tuple[str, ...]
    pocket: float
    dropped: dict
    ligand_instances: int = 1
    files: ComplexFiles | None = None
    ligand_block: str | None = None

    def to_dict(self) -> dict:
        d = {"ligand": self.ligand, "n_atoms": self.structure.n_atoms, "n_ligand_atoms": len(self.ligand_atoms),
             "n_residues": len(self.residues), "pocket_A": self.pocket, "dropped": dict(self.dropped),
             "ligand_instances": self.ligand_instances, "source": self.structure.provenance.source}
        if self.files is not None and self.files.layout not in ("entry", "posebusters"):
            d["files"] = self.files.to_dict()  # the two older layouts keep their records' bytes
        return d


def read_structure(path: Path):
    """gemmi's reading of a PDB or mmCIF file (gzip checked in full first); InputError naming the file."""
    text = read_text(path)
    try:
        if _kind(path) == "cif":
            st = gemmi.make_structure_from_block(gemmi.cif.read_string(text).sole_block())
        else:
            st = gemmi.read_pdb_string(text)
    except (RuntimeError, ValueError, OSError, IndexError) as exc:
        raise InputError(f"cannot read the structure: {' '.join(str(exc).split())[:200]}", source=str(path)) from None
    return st


def _atoms(path: Path):
    """((chain, resname, seq, atom name, element, xyz, is_het) of the first model, one altloc per residue by
    viewcert.io.altloc's "occupancy" rule; the choice record or None)."""
    st = read_structure(path)
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


def _neutral_nh_retry(mol):
    """(molecule, kekulized) for a mol2 RDKit could not sanitize: RDKit's mol2 reader charges every aromatic
    N (Tripos ``N.ar``) with three neighbours +1, which is wrong for a pyrrole-type N–H such as uracil's, typed
    ``ar`` by Open Babel (the ring then cannot be kekulized). With the hydrogens explicit, retry with those
    N–H atoms neutral; the retry is kept only when RDKit can then sanitize (a valid Kekulé structure: a real
    pyridinium N–H, neutral, cannot be kekulized and keeps its charge), else the molecule is returned as read,
    unkekulized."""
    from rdkit import Chem

    retry = Chem.RWMol(mol)
    changed = False
    for a in retry.GetAtoms():
        typ = a.GetProp("_TriposAtomType") if a.HasProp("_TriposAtomType") else ""
        if typ == "N.ar" and a.GetFormalCharge() == 1 and a.GetDegree() == 3 \
                and any(n.GetAtomicNum() == 1 for n in a.GetNeighbors()):
            a.SetFormalCharge(0)
            changed = True
    if changed and not Chem.SanitizeMol(retry, catchErrors=True):
        return retry.GetMol(), True
    return mol, False


def ligand_molblock(path: Path) -> tuple[str, list[str] | None]:
    """(MOL block, atom names or None) of an SDF/MOL (record 0, as written) or a mol2 (via RDKit, kekulized;
    the Tripos atom names when they are unique)."""
    text = read_text(path)
    if _kind(path) == "sdf":
        return (text.split("$$$$")[0] if "$$$$" in text else text), None
    try:
        from rdkit import Chem, RDLogger  # lazy: RDKit is the molecules/interactions extra
    except ImportError:
        raise InputError("reading a mol2 ligand needs RDKit: pip install 'viewcert[molecules]'", source=str(path),
                         field="rdkit") from None
    RDLogger.DisableLog("rdApp.*")
    try:
        mol = Chem.MolFromMol2Block(text, sanitize=True, removeHs=False)
        kek = mol is not None
        if mol is None:
            mol = Chem.MolFromMol2Block(text, sanitize=False, removeHs=False)
            if mol is not None:
                mol, kek = _neutral_nh_retry(mol)
    finally:
        RDLogger.EnableLog("rdApp.*")
    if mol is None or mol.GetNumAtoms() == 0:
        raise InputError("RDKit cannot read the mol2 ligand", source=str(path), field="ligand")
    names = [a.GetProp("_TriposAtomName") if a.HasProp("_TriposAtomName") else "" for a in mol.GetAtoms()]
    if not any(a.GetAtomicNum() == 1 for a in mol.GetAtoms()):
        # without explicit hydrogens RDKit's mol2 reader guesses formal charges (an NH2 becomes N−2): keep only
        # what the Tripos types state (N.4: +1) and let the valences fill in
        mol = Chem.RWMol(mol)
        for a in mol.GetAtoms():
            typ = a.GetProp("_TriposAtomType") if a.HasProp("_TriposAtomType") else ""
            a.SetFormalCharge(1 if typ == "N.4" else 0)
            a.SetNoImplicit(False)
            a.SetNumExplicitHs(0)
        mol.UpdatePropertyCache(strict=False)
        kek = not Chem.SanitizeMol(mol, catchErrors=True)
    block = Chem.MolToMolBlock(mol, kekulize=kek)
    return block, (names if all(names) and len(set(names)) == len(names) else None)


def _ligand_from_molecule(path: Path) -> tuple[np.ndarray, list[int], list[str], str]:
    """Heavy atoms of an SDF/MOL/mol2 ligand: positions, Z, site labels ``LIG/<name>``, the MOL block."""
    block, names = ligand_molblock(path)
    s = read_sdf_text(block, source=str(path), sanitize=_kind(path) == "sdf")
    heavy = s.numbers > 1
    labels = names or list(s.site_labels or [str(k) for k in range(s.n_atoms)])
    out = [f"LIG/{lab}" for lab, h in zip(labels, heavy, strict=True) if h]
    return s.positions[heavy], [int(z) for z in s.numbers[heavy]], out, block


def _hetero(rows: list[tuple]) -> list[str]:
    """The residue names of a file's hetero (HETATM) rows, sorted."""
    return sorted({r[1] for r in rows if r[6]})


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
        present = _hetero(rows)
        raise InputError(f"ligand {ligand!r} is not in the file{did_you_mean(name, present)} (hetero residues: "
                         f"{', '.join(present) or 'none'}); "
                         "a ligand in its own file: complex:protein=P,ligand=L", source=source, field="ligand")
    first = keys[0]
    return [i for i, r in enumerate(rows) if r[1] == name and (r[0], r[2]) == first], len(keys)


def _row_label(r: tuple) -> str:
    return f"{r[0]}/{r[1]}{r[2]}/{r[3]}"


def _ligand_atoms_file(lig_file: Path, ligand: str | None, dropped: dict) -> tuple[list, int]:
    """Heavy-atom rows of a ligand given as a PDB/mmCIF file (ATOM or HETATM records; the residue ``ligand``
    names, else every non-water atom) and its instance count; altloc and hydrogen drops counted in ``dropped``."""
    lrows, lalt = _atoms(lig_file)
    if lalt is not None:
        dropped["altloc_atoms"] = dropped.get("altloc_atoms", 0) + lalt.dropped_atoms
    lrows = _heavy(lrows, dropped)
    instances = 1
    if ligand is not None:
        idx, instances = _select_ligand(lrows, ligand, str(lig_file))
        lrows = [lrows[i] for i in idx]
    return lrows, instances


def _pocket_rows(rest: list, lig_pos: np.ndarray, pocket: float) -> list:
    """The rows of every residue with an atom within ``pocket`` Å of a ligand atom (whole residues kept)."""
    pos = np.array([r[5] for r in rest]).reshape(-1, 3)
    near = set()
    if len(pos):
        for i in np.flatnonzero(np.isfinite(_kdtree(lig_pos).query(pos, distance_upper_bound=pocket)[0])):
            near.add((rest[i][0], rest[i][1], rest[i][2]))
    return [r for r in rest if (r[0], r[1], r[2]) in near]


def prepare_complex(
    path, *, ligand: str | None = None, ligand_sdf: str | Path | None = None, pocket: float = DEFAULT_POCKET,
) -> PreparedComplex:
    """Ligand + the residues within ``pocket`` Å of it, heavy atoms only (module docstring). ``path``: a folder,
    a file or a :class:`ComplexFiles`; ``ligand_sdf``: a ligand file replacing the folder's."""
    check_pocket(pocket, None if isinstance(path, ComplexFiles) else str(path))
    files = locate(path)
    if ligand_sdf:
        files = ComplexFiles(files.protein, Path(ligand_sdf), files.water, files.name, "files")
    elif ligand is not None and files.layout == "posebusters":  # a named ligand is read from protein.pdb
        files = ComplexFiles(files.protein, None, None, files.name, "posebusters")
    protein, lig_file = files.protein, files.ligand
    dropped: dict = {}
    rows, altlocs = _atoms(protein)
    if altlocs is not None:
        dropped["altloc_atoms"] = altlocs.dropped_atoms
    rows = _heavy(rows, dropped)
    if files.water is not None:
        dropped["water_atoms"] = dropped.get("water_atoms", 0) + len(_atoms(files.water)[0])
    instances, block, rest = 1, None, rows
    if lig_file is None:
        if ligand is None:
            raise InputError("a whole entry needs the ligand's residue name: complex:PATH#ligand=RES (hetero "
                             f"residues: {', '.join(_hetero(rows)) or 'none'})", source=str(protein), field="ligand")
        idx, instances = _select_ligand(rows, ligand, str(protein))
        lig_rows = [rows[i] for i in idx]
        rest = [r for i, r in enumerate(rows) if i not in set(idx)]
        label = ligand
    elif _kind(lig_file) in ("sdf", "mol2"):
        try:
            lig_pos, lig_z, lig_names, block = _ligand_from_molecule(lig_file)
        except InputError:
            alt = lig_file.with_suffix(".mol2")
            if files.layout != "pdbbind" or _kind(lig_file) != "sdf" or not alt.is_file():
                raise
            files = ComplexFiles(files.protein, alt, files.water, files.name, files.layout)  # PDBbind's other file
            lig_file = alt
            lig_pos, lig_z, lig_names, block = _ligand_from_molecule(lig_file)
        lig_rows, label = None, lig_file.name
    else:
        lig_rows, instances = _ligand_atoms_file(lig_file, ligand, dropped)
        label = lig_file.name if ligand is None else ligand
    if lig_rows is not None:
        lig_pos = np.array([r[5] for r in lig_rows]).reshape(-1, 3)
        lig_z = [atomic_number(r[4], source=str(lig_file or protein)) for r in lig_rows]
        lig_names = [_row_label(r) for r in lig_rows]
    if len(lig_pos) == 0:
        raise InputError("the ligand has no heavy atoms", source=str(lig_file or protein), field="ligand")
    pocket_rows = _pocket_rows(rest, lig_pos, pocket)
    residues = tuple(dict.fromkeys(f"{r[0]}/{r[1]}{r[2]}" for r in pocket_rows))
    positions = np.vstack([lig_pos, np.array([r[5] for r in pocket_rows]).reshape(-1, 3)])
    numbers = lig_z + [atomic_number(r[4], source=str(protein)) for r in pocket_rows]
    names = lig_names + [_row_label(r) for r in pocket_rows]
    extra = b"".join(q.read_bytes() for q in (lig_file, files.water) if q is not None)
    digest = sha256_text(protein.read_bytes() + extra + f"|{ligand}|{pocket}".encode())
    prov = Provenance(source=str(protein), identifier=f"{files.name}:{label}:pocket{pocket:g}", sha256=digest,
                      choices=altlocs.choices() if altlocs else ())
    s = Structure(positions, np.array(numbers), None, site_labels=tuple(names), provenance=prov)
    return PreparedComplex(s, label, tuple(range(len(lig_z))), residues, float(pocket), dropped, instances, files,
                           block)


def parse_files(body: str, source: str) -> ComplexFiles:
    """``protein=P,ligand=L[,water=W]`` → ComplexFiles (paths as given; ``~`` expanded)."""
    got: dict[str, Path] = {}
    for part in filter(None, (x.strip() for x in body.split(","))):
        key, eq, value = part.partition("=")
        if not eq or key not in ("protein", "ligand", "water") or not value or key in got:
            raise InputError(f"complex files must be protein=P,ligand=L[,water=W], got {part!r}", source=source,
                             field="INPUT")
        got[key] = Path(value).expanduser()
    if "protein" not in got:
        raise InputError("complex files need protein=P (and ligand=L unless the ligand is a residue of P)",
                         source=source, field="INPUT")
    for key, q in got.items():
        if not q.is_file():
            raise InputError(f"the {key} file does not exist", source=str(q), field="INPUT")
        _kind(q)
    if "ligand" in got and _kind(got["ligand"]) not in ("sdf", "mol2", "pdb", "cif"):
        raise InputError("the ligand must be mol2, SDF/MOL or PDB/mmCIF", source=str(got["ligand"]), field="INPUT")
    name = got["protein"].name.split(".", 1)[0]
    return ComplexFiles(got["protein"], got.get("ligand"), got.get("water"), name, "files")


def complexes_in(path, ligand: str | None) -> list[tuple[object, str | None]]:
    """(complex, ligand name) pairs of an input: one complex (a file, a complex folder or ComplexFiles), or a
    folder of complex folders (each with its own ligand file uses it; ``ligand`` names the others')."""
    if isinstance(path, ComplexFiles):
        return [(path, ligand)]
    p = Path(path)
    subs = sorted(q for q in p.iterdir() if q.is_dir() and not q.name.startswith(".")) if p.is_dir() else []
    own = [q for q in p.iterdir() if q.is_file() and q.name.lower().endswith(STRUCTURE_SUFFIXES)] if p.is_dir() else []
    if not subs or own:
        return [(p, ligand)]
    out = []
    for q in subs:
        try:
            has_ligand = locate(q).ligand is not None
        except InputError:
            has_ligand = False  # reported when the complex is prepared
        out.append((q, None if has_ligand else ligand))
    return out
