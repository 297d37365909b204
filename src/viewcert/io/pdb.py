"""PDB and mmCIF (macromolecular) via gemmi.

- Default: a **molecule** (no lattice), Cartesian coordinates exactly as in the file, atoms in file order
  from one model (``model``, default the first). Hydrogens, waters and ligands are kept.
- ``periodic=True``: the CRYST1 / ``_cell`` lattice (rows a, b, c in the file's own Cartesian frame:
  gemmi's orthogonalisation, a along x, b in the xy plane, which is the frame of the coordinates) and, with
  ``expand_symmetry=True`` (default), the space-group operations applied to the atoms, wrapped into the
  cell, symmetry copies that land on an atom's own position (special positions, fractional tolerance 1e-4)
  dropped. A file without a real cell (CRYST1 1 1 1, cryo-EM/NMR) cannot be periodic.
- Alternate locations (:mod:`viewcert.io.altloc`): ``altloc_policy="occupancy"`` (default) keeps, per
  residue, the altloc id with the highest summed occupancy (ties: alphabetically first; biotite's rule);
  ``"first"`` the first id per residue; ``"majority"`` the highest occupancy per atom; ``"refuse"`` raises
  naming the atom and the altloc field. What was kept (ids, residues, atoms dropped) goes into
  ``Provenance.choices``.
"""

from __future__ import annotations

import os
from pathlib import Path

import gemmi
import numpy as np

from viewcert.errors import InputError
from viewcert.io._common import read_source
from viewcert.io.altloc import AltlocPolicy, AltlocRow, check_policy, choose_altlocs
from viewcert.io.cell import cell_parameters
from viewcert.structures import Provenance, Structure, sha256_text

_SITE_TOL = 1e-4


def _is_mmcif(text: str, source: str) -> bool:
    suffix = Path(source).suffix.lower()
    if suffix in (".pdb", ".ent", ".pdb1"):
        return False
    if suffix in (".cif", ".mmcif", ".mcif"):
        return True
    head = text.lstrip()[:5].lower()
    return head.startswith("data_")


def read_pdb(
    path: str | os.PathLike,
    *,
    periodic: bool = False,
    expand_symmetry: bool = True,
    altloc_policy: AltlocPolicy = "occupancy",
    model: int = 0,
    identifier: str | None = None,
) -> Structure:
    """Read a PDB or mmCIF file (format from the extension, else from the content)."""
    src, text, digest = read_source(path)
    return read_pdb_text(
        text,
        source=src,
        periodic=periodic,
        expand_symmetry=expand_symmetry,
        altloc_policy=altloc_policy,
        model=model,
        identifier=identifier,
        sha256=digest,
    )


def _parse(text: str, source: str, is_cif: bool):
    """gemmi.Structure of PDB or mmCIF text; a parse error is an InputError naming the syntax."""
    try:
        if is_cif:
            doc = gemmi.cif.read_string(text)
            return gemmi.make_structure_from_block(doc.sole_block())
        return gemmi.read_pdb_string(text)
    except (RuntimeError, ValueError) as exc:
        raise InputError(
            f"cannot parse {'mmCIF' if is_cif else 'PDB'}: {exc}", source=source, field="syntax"
        ) from None


def _atom_rows(mdl) -> list[tuple]:
    """(chain, resname, seqid, atom name, altloc, occupancy, Z, position) of every atom of a model."""
    rows = []
    for ch in mdl:
        for res in ch:
            for at in res:
                rows.append((ch.name, res.name, str(res.seqid), at.name, at.altloc, at.occ,
                             at.element.atomic_number, at.pos))
    return rows


def _resolve_altlocs(rows: list[tuple], altloc_policy: str, source: str, alt_field: str):
    """(rows kept, the choice record or None) under the altloc policy (viewcert.io.altloc)."""
    alt_rows = [AltlocRow((r[0], r[2]), r[3], r[4], r[5], f"residue {r[1]} {r[2]} (chain {r[0]})") for r in rows]
    keep, record = choose_altlocs(alt_rows, altloc_policy, source=source, field=alt_field)
    return [r for r, k in zip(rows, keep, strict=True) if k], record


def _periodic(st, positions, numbers, labels, prov, expand_symmetry: bool, source: str, cell_field: str):
    """The crystal Structure of a file's cell (symmetry-expanded when asked)."""
    cell = st.cell
    if not cell.is_crystal():
        raise InputError(
            f"periodic=True needs a crystal cell; this file has {cell.a:g} {cell.b:g} {cell.c:g} "
            f"{cell.alpha:g} {cell.beta:g} {cell.gamma:g}",
            source=source,
            field=cell_field,
        )
    lattice = np.array(cell.orth.mat.tolist(), dtype=np.float64).T  # columns a, b, c -> rows
    if expand_symmetry:
        sg = st.find_spacegroup()
        if sg is None:
            raise InputError(f"unknown space group {st.spacegroup_hm!r}", source=source, field=cell_field)
        positions, numbers, labels = _expand(positions, numbers, labels, lattice, sg)
    return Structure(positions, numbers, lattice, site_labels=labels, provenance=prov)


def read_pdb_text(
    text: str,
    *,
    source: str = "<string>",
    mmcif: bool | None = None,
    periodic: bool = False,
    expand_symmetry: bool = True,
    altloc_policy: AltlocPolicy = "occupancy",
    model: int = 0,
    identifier: str | None = None,
    sha256: str | None = None,
) -> Structure:
    """Read PDB or mmCIF text (``mmcif=None``: decide from ``source``'s extension, else the content)."""
    check_policy(altloc_policy)
    is_cif = _is_mmcif(text, source) if mmcif is None else mmcif
    alt_field = "_atom_site.label_alt_id" if is_cif else "altLoc"
    atom_field = "_atom_site" if is_cif else "ATOM/HETATM"
    cell_field = "_cell.length_a" if is_cif else "CRYST1"
    st = _parse(text, source, is_cif)
    if len(st) == 0 or st[0].count_atom_sites() == 0:
        raise InputError("no atoms (no ATOM/HETATM records)", source=source, field=atom_field)
    if not 0 <= model < len(st):
        raise InputError(f"model {model} requested, the file has {len(st)}", source=source, field="model")
    rows = _atom_rows(st[model])
    if not rows:
        raise InputError("no atoms in the selected model", source=source, field=atom_field)
    rows, altlocs = _resolve_altlocs(rows, altloc_policy, source, alt_field)
    numbers = np.array([r[6] for r in rows], dtype=np.int64)
    bad = np.flatnonzero(numbers < 1)
    if bad.size:
        r = rows[int(bad[0])]
        raise InputError(
            f"atom {r[3]} of residue {r[1]} {r[2]} (chain {r[0]}) has an unknown element",
            source=source,
            field="element",
        )
    positions = np.array([[p.x, p.y, p.z] for p in (r[7] for r in rows)], dtype=np.float64)
    labels = tuple(f"{r[0]}:{r[1]}{r[2]}:{r[3]}" for r in rows)
    ident = identifier if identifier is not None else (st.name or Path(source).stem)
    prov = Provenance(source=source, identifier=ident, sha256=sha256 or sha256_text(text),
                      choices=altlocs.choices() if altlocs else ())
    if not periodic:
        return Structure(positions, numbers, None, site_labels=labels, provenance=prov)
    return _periodic(st, positions, numbers, labels, prov, expand_symmetry, source, cell_field)

def _expand(
    pos: np.ndarray, numbers: np.ndarray, labels: tuple[str, ...], lattice: np.ndarray, sg: gemmi.SpaceGroup
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """All space-group images of the atoms, wrapped to [0, 1); an image equal (mod 1) to an earlier image
    of the same atom is dropped. Order: operation-major (all atoms under op 0, then op 1, ...)."""
    ops = list(sg.operations())
    rots = np.array([op.rot for op in ops], dtype=np.float64) / gemmi.Op.DEN
    trans = np.array([op.tran for op in ops], dtype=np.float64) / gemmi.Op.DEN
    frac = np.linalg.solve(lattice.T, pos.T).T
    img = np.einsum("mij,nj->mni", rots, frac) + trans[:, None, :]
    img -= np.floor(img)
    m = len(ops)
    keep = np.ones((m, len(pos)), dtype=bool)
    for k in range(1, m):
        for j in range(k):
            d = img[k] - img[j]
            d -= np.round(d)
            keep[k] &= ~(np.abs(d) < _SITE_TOL).all(axis=1)
    sel = np.nonzero(keep)
    out_f = img[sel]
    return out_f @ lattice, numbers[sel[1]], tuple(labels[i] for i in sel[1].tolist())


def pdb_text(s: Structure) -> str:
    """PDB text of ``s`` via gemmi (HETATM records, one residue per atom named ``UNL``). A periodic
    structure gets CRYST1 (space group P 1) and its coordinates are rotated into the PDB orthogonalisation
    frame (a along x, b in the xy plane), so that reading back with ``periodic=True`` is consistent."""
    return _gemmi_structure(s).make_pdb_string()


def _gemmi_structure(s: Structure) -> gemmi.Structure:
    st = gemmi.Structure()
    mdl = gemmi.Model(1)
    ch = gemmi.Chain("A")
    positions = s.positions
    cell = None
    if s.lattice is not None:
        cell = gemmi.UnitCell(*cell_parameters(s.lattice))
        pdb_lattice = np.array(cell.orth.mat.tolist(), dtype=np.float64).T
        positions = s.frac_coords @ pdb_lattice  # same crystal, PDB orthogonalisation frame
    for i, (z, p) in enumerate(zip(s.numbers.tolist(), positions, strict=True)):
        res = gemmi.Residue()
        res.name = "UNL"
        res.seqid = gemmi.SeqId(i + 1, " ")
        res.het_flag = "H"
        at = gemmi.Atom()
        el = gemmi.Element(int(z))
        at.element = el
        at.name = (el.name.upper() + str(i + 1))[:4]
        at.pos = gemmi.Position(*map(float, p))
        at.occ = 1.0
        res.add_atom(at)
        ch.add_residue(res)
    mdl.add_chain(ch)
    st.add_model(mdl)
    if cell is not None:
        st.cell = cell
        st.spacegroup_hm = "P 1"
    st.setup_entities()
    return st
