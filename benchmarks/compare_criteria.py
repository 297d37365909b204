"""Each ``--criterion`` against PLIP, ProLIF and MDAnalysis on the six complexes (issue 28 item 7), every
disagreement with the geometry that explains it → ``results/criteria.json`` and the tables of
docs/interactions.md ("Criteria against PLIP, ProLIF and MDAnalysis"), printed as Markdown.

Inputs: ../shared/data/complexes prepared as ``complex:`` prepares them (pocket 8 Å; PNM in 1pwc, HEM/A/301
in 19hc), protonated by hydride (``interactions.protonate``). Opinions, each on the same atoms:

- PLIP 3.0.1, same H: PLIP reads the protonated complex with its hydrogens (``NOHYDRO``);
- PLIP 3.0.1, own H: PLIP reads the prepared complex without hydrogens and adds Open Babel's, as a user runs
  it on an X-ray entry;
- ProLIF (``HBDonor``/``HBAcceptor`` defaults: D···A ≤ 3.5 Å, D–H···A 130–180°, SMARTS typing), same H
  (``interactions.crosscheck``);
- MDAnalysis ``HydrogenBondAnalysis`` at its defaults (D···A ≤ 3.0 Å, D–H···A ≥ 150°, D–H ≤ 1.2 Å), same H;
  without partial charges it types nothing itself, so hydrogens are selected by element and acceptors are
  the N/O/S atoms.

A pair found by one side only is explained from its geometry through the donor's hydrogen nearest the
acceptor: the other side's threshold it falls outside, else its typing or selection rule (PLIP: salt bridge,
one bond per donor; ChimeraX: no Mills–Dean type). Usage: ``python benchmarks/compare_criteria.py``
(about a minute; needs the interactions and plip extras). Import order: RDKit before Open Babel.
"""

from __future__ import annotations

import json
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import rdkit.Chem  # noqa: F401  # before Open Babel (plip): the other order crashes the interpreter

from viewcert.interactions.criteria import CRITERIA, Chemistry, criterion_named
from viewcert.interactions.criterion import geometry
from viewcert.interactions.hbonds import find_hbonds
from viewcert.interactions.protonate import protonated_complex

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "complexes"
CASES = {"1ia1": None, "1of6": None, "1s3v": None, "1uou": None, "1pwc": "PNM", "19hc": "HEM/A/301"}
REFERENCES = ("PLIP (same H)", "PLIP (own H)", "ProLIF", "MDAnalysis")


def plip(prot, folder: Path, own_h: bool) -> dict:
    """PLIP's refined pairs and raw pairs (indices into prot.atoms), PLIP reading hydride's hydrogens or
    adding its own to the heavy atoms."""
    import biotite.structure.io.pdb as pdb
    from plip.basic import config
    from plip.structure.preparation import PDBComplex

    keep = np.flatnonzero(prot.atoms.element != "H") if own_h else np.arange(len(prot.atoms))
    a = prot.atoms[keep]
    a.hetero[prot.ligand[keep]] = True
    f = pdb.PDBFile()
    f.set_structure(a)
    path = folder / f"plip_{'own' if own_h else 'same'}.pdb"
    f.write(str(path))
    config.NOHYDRO = not own_h
    c = PDBComplex()
    c.load_pdb(str(path))
    c.analyze()
    i = int(np.flatnonzero(prot.ligand)[0])
    p = prot.atoms
    s = c.interaction_sets[f"{p.res_name[i]}:{p.chain_id[i]}:{p.res_id[i]}"]
    pairs = lambda hbs: {(int(keep[h.d_orig_idx - 1]), int(keep[h.a_orig_idx - 1])) for h in hbs}  # noqa: E731
    return {"refined": pairs(s.hbonds_ldon + s.hbonds_pdon), "raw": pairs(s.all_hbonds_ldon + s.all_hbonds_pdon),
            "mol": c.protcomplex.OBMol, "keep": keep}


def ob_geometry(own: dict, prot, d: int, a: int):
    """D–H···A through the hydrogen Open Babel put on donor d that makes the largest angle (None: no H);
    Open Babel keeps the heavy atoms' order and appends the hydrogens it adds."""
    from openbabel import openbabel as ob

    k = int(np.searchsorted(own["keep"], d)) + 1
    hs = [n for n in ob.OBAtomAtomIter(own["mol"].GetAtom(k)) if n.GetAtomicNum() == 1]
    if not hs:
        return None
    pos = lambda x: np.array([x.GetX(), x.GetY(), x.GetZ()])  # noqa: E731
    return max((geometry(prot.atoms.coord[d], pos(h), prot.atoms.coord[a]) for h in hs), key=lambda g: g.angle)


def mdanalysis(prot, folder: Path) -> set:
    import biotite.structure.io.pdb as pdb
    import MDAnalysis as mda
    from MDAnalysis.analysis.hydrogenbonds import HydrogenBondAnalysis

    a = prot.atoms.copy()
    a.bonds = None  # no CONECT: MDAnalysis pairs each hydrogen with a selected donor by distance (≤ 1.2 Å)
    f = pdb.PDBFile()
    f.set_structure(a)
    path = folder / "mda.pdb"
    f.write(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        u = mda.Universe(str(path))
        lig = " or ".join(f"index {i}" for i in np.flatnonzero(prot.ligand))
        poc = "not (" + lig + ")"
        h = HydrogenBondAnalysis(u, donors_sel="element N O S", hydrogens_sel="element H", acceptors_sel="element N O S",
                                 between=[lig, poc])
        h.run()
    return {(int(r[1]), int(r[3])) for r in h.results.hbonds}


def prolif(prot) -> set:
    from viewcert.interactions.crosscheck import prolif_pairs

    return {(int(prot.index[d]), int(prot.index[a])) for d, a in prolif_pairs(prot)}


def near_h_geometry(prot, chem, d: int, a: int):
    if not chem.hs(d):
        return None
    return geometry(prot.atoms.coord[d], prot.atoms.coord[chem.nearest_h(d, a)], prot.atoms.coord[a])


def label(prot, i: int) -> str:
    a = prot.atoms
    return f"{a.res_name[i]} {a.res_id[i]} {a.atom_name[i]}"


def why_not(tool: str, prot, chem, d: int, a: int, ctx: dict) -> str:
    """Why ``tool`` does not find the pair (d, a) that the other side finds."""
    g = near_h_geometry(prot, chem, d, a)
    if g is None:
        return f"hydride puts no hydrogen on {label(prot, d)}"
    geo = f"D···A {g.d_da:.2f} Å, H···A {g.d_ha:.2f} Å, D–H···A {g.angle:.1f}°"
    if tool == "baker-hubbard":
        bad = [s for s, ok in ((f"H···A {g.d_ha:.2f} > 2.5 Å", g.d_ha <= 2.5),
                               (f"angle {g.angle:.1f}° < 120°", g.angle >= 120)) if not ok]
        return "; ".join(bad) if bad else f"{geo}: another hydrogen of the donor ({geo} through the nearest)"
    if tool in ("plip", "PLIP (same H)", "PLIP (own H)"):
        own = tool == "PLIP (own H)"
        raw = ctx["plip_own"]["raw"] if own else ctx["plip_same"]["raw"]
        if (d, a) in raw:
            rival = [x for x in (ctx["plip_own"] if own else ctx["plip_same"])["refined"] if x[0] == d]
            if rival:
                return f"one bond per donor: PLIP keeps {label(prot, rival[0][1])} (larger angle)"
            return "inside a salt bridge (PLIP drops its hydrogen bonds)"
        if own:
            g = ob_geometry(ctx["plip_own"], prot, d, a)
            if g is None:
                return f"Open Babel puts no hydrogen on {label(prot, d)} (hydride does)"
        bad = [s for s, ok in ((f"D···A {g.d_da:.2f} ≥ 4.1 Å", g.d_da < 4.1), (f"angle {g.angle:.1f}° ≤ 100°",
                                                                             g.angle > 100)) if not ok]
        if bad:
            return ("with Open Babel's hydrogen: " if own else "") + "; ".join(bad)
        if own and not ctx["plip_own"]["mol"].GetAtom(int(np.searchsorted(ctx["plip_own"]["keep"], a)) + 1) \
                .IsHbondAcceptor():
            return f"Open Babel types {label(prot, a)}, with the hydrogens it adds, as no acceptor"
        plip_crit = criterion_named("plip")
        if not plip_crit.acceptor(chem, a):
            return f"PLIP's (Open Babel's) typing: {label(prot, a)} is no acceptor ({len(chem.nb[a])} neighbours " \
                   f"with hydrogens{', conjugated' if chem.conjugated(a) else ''})"
        return f"PLIP's typing with Open Babel's hydrogens ({geo} with hydride's)"
    if tool == "chimerax":
        crit, dec = ctx["chimerax_crit"], [x for x in ctx["chimerax_dec"] if (x.donor, x.acceptor) == (d, a)]
        if not dec:
            dt, at = crit.donor_type(chem, d), crit.acceptor_type(chem, a)
            return f"no Mills–Dean type: donor {dt or 'none'}, acceptor {at or 'none'} ({geo})"
        fails = [c for c in dec[0].checks if not c.passes()]
        return "; ".join(f"{c.what} {c.value:.2f} {'>' if c.upper else '<'} {c.bound:.2f}" for c in fails)
    if tool == "ProLIF":
        bad = [s for s, ok in ((f"D···A {g.d_da:.2f} > 3.5 Å", g.d_da <= 3.5),
                               (f"angle {g.angle:.1f}° < 130°", g.angle >= 130)) if not ok]
        return "; ".join(bad) if bad else f"ProLIF's SMARTS typing ({geo})"
    if tool == "MDAnalysis":
        bad = [s for s, ok in ((f"D···A {g.d_da:.2f} > 3.0 Å", g.d_da <= 3.0),
                               (f"angle {g.angle:.1f}° < 150°", g.angle >= 150)) if not ok]
        return "; ".join(bad) if bad else f"({geo})"
    raise ValueError(tool)


def main() -> None:
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for key, lig in CASES.items():
            prot = protonated_complex(DATA / key / "complex.pdb.gz" if lig else DATA / key, ligand=lig)
            chem = Chemistry(prot.atoms)
            same, own = plip(prot, folder, own_h=False), plip(prot, folder, own_h=True)
            refs = {"PLIP (same H)": same["refined"], "PLIP (own H)": own["refined"], "ProLIF": prolif(prot),
                    "MDAnalysis": mdanalysis(prot, folder)}
            ctx = {"plip_same": same, "plip_own": own, "chimerax_crit": criterion_named("chimerax"),
                   "chimerax_dec": criterion_named("chimerax").decisions(prot, chem)}
            for name in CRITERIA:
                ours = {(int(prot.index[b.donor.index]), int(prot.index[b.acceptor.index]))
                        for b in find_hbonds(prot, criterion_named(name))}
                row = {"n": len(ours), "references": {}}
                for ref, theirs in refs.items():
                    diffs = [{"pair": f"{label(prot, d)} → {label(prot, a)}", "found_by": name,
                              "reason": why_not(ref, prot, chem, d, a, ctx)} for d, a in sorted(ours - theirs)]
                    diffs += [{"pair": f"{label(prot, d)} → {label(prot, a)}", "found_by": ref,
                               "reason": why_not(name, prot, chem, d, a, ctx)} for d, a in sorted(theirs - ours)]
                    row["references"][ref] = {"n": len(theirs), "both": len(ours & theirs), "differences": diffs}
                rows.setdefault(name, {})[key] = row
            print(key, "done", file=sys.stderr)
    out = ROOT / "benchmarks" / "results" / "criteria.json"
    out.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n")
    for name in CRITERIA:
        print(f"\n#### `--criterion {name}`\n\n| complex | bonds | " + " | ".join(REFERENCES) + " |")
        print("|---|---|" + "---|" * len(REFERENCES))
        n_diff = 0
        for key, row in rows[name].items():
            refs = row["references"]
            print(f"| {key} | {row['n']} | " + " | ".join(f"{refs[r]['n']} ({refs[r]['both']})" for r in REFERENCES)
                  + " |")
            n_diff += sum(len(refs[r]["differences"]) for r in REFERENCES)
        print(f'\n??? note "The {n_diff} disagreements of {name}, each explained"\n')
        for key, row in rows[name].items():
            for r in REFERENCES:
                for x in row["references"][r]["differences"]:
                    print(f"    - {key}, {r}: `{x['pair']}` ({x['found_by']} only): {x['reason']}")

if __name__ == "__main__":
    main()
