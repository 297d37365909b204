"""``--criterion plip`` against PLIP itself (issue 28 acceptance): on each of the six X-ray complexes of
../shared/data/complexes, PLIP 3.0.1 runs on the very atoms and hydrogens the criterion sees (the protonated
complex written as PDB, PLIP's ``NOHYDRO`` so it keeps them), and its hydrogen bonds — before its refinement
(``all_hbonds_ldon/pdon``: typing and thresholds) and after (``hbonds_ldon/pdon``: salt bridges dropped, one
bond per donor) — are the donor–acceptor pairs viewcert finds. Skipped when PLIP (the ``plip`` extra) or the
data are absent. docs/interactions.md ("Criteria against PLIP, ProLIF and MDAnalysis") explains the
differences PLIP shows with its own (Open Babel's) hydrogens."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("hydride", reason="the interactions extra (hydride) is not installed")
pytest.importorskip("rdkit.Chem", reason="the interactions extra (RDKit) is not installed")  # before Open Babel:
# importing openbabel first and RDKit second crashes the interpreter (their bundled libraries clash)
pytest.importorskip("plip", reason="PLIP is not installed (pip install 'viewcert[plip]')")

from tests.support.complex_data import COMPLEXES  # noqa: E402
from tests.support.complex_data import needs_complexes as needs_data  # noqa: E402
from viewcert.interactions.criteria import Chemistry, PLIPCriterion  # noqa: E402
from viewcert.interactions.hbonds import find_hbonds  # noqa: E402
from viewcert.interactions.protonate import protonated_complex  # noqa: E402

CASES = {"1ia1": None, "1of6": None, "1s3v": None, "1uou": None, "1pwc": "PNM", "19hc": "HEM/A/301"}


def plip_opinion(prot, folder: Path) -> tuple[set, set]:
    """(refined, raw) (donor, acceptor) pairs, as indices into ``prot.atoms``, of PLIP's hydrogen bonds of
    the ligand's binding site, PLIP reading the protonated complex with its hydrogens kept."""
    import biotite.structure.io.pdb as pdb
    from plip.basic import config
    from plip.structure.preparation import PDBComplex

    a = prot.atoms.copy()
    a.hetero[prot.ligand] = True  # PLIP finds ligands among HETATM residues
    f = pdb.PDBFile()
    f.set_structure(a)  # serials 1..n in order: PLIP's orig_idx − 1 is the index in prot.atoms
    with tempfile.NamedTemporaryFile("w", suffix=".pdb", dir=folder, delete=False) as t:
        f.write(t)
    saved = config.NOHYDRO
    config.NOHYDRO = True
    try:
        c = PDBComplex()
        c.load_pdb(t.name)
        c.analyze()
    finally:
        config.NOHYDRO = saved
    i = int(np.flatnonzero(prot.ligand)[0])
    s = c.interaction_sets[f"{a.res_name[i]}:{a.chain_id[i]}:{a.res_id[i]}"]
    pairs = lambda hbs: {(hb.d_orig_idx - 1, hb.a_orig_idx - 1) for hb in hbs}  # noqa: E731
    return pairs(s.hbonds_ldon + s.hbonds_pdon), pairs(s.all_hbonds_ldon + s.all_hbonds_pdon)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plip")
    out = {}
    for key, lig in CASES.items():
        prot = protonated_complex(COMPLEXES / key / "complex.pdb.gz" if lig else COMPLEXES / key, ligand=lig)
        crit = PLIPCriterion()
        chem = Chemistry(prot.atoms)
        raw = {(x.donor, x.acceptor) for x in crit.decisions(prot, chem) if x.holds()}
        index = prot.index
        ours = {(int(index[b.donor.index]), int(index[b.acceptor.index])) for b in find_hbonds(prot, crit)}
        out[key] = (ours, raw, *plip_opinion(prot, folder))
    return out


@needs_data
@pytest.mark.parametrize("key", list(CASES))
def test_plip_criterion_finds_plips_hydrogen_bonds(results, key):
    ours, raw, theirs, theirs_raw = results[key]
    assert raw == theirs_raw  # typing and the two thresholds, before PLIP's refinement
    assert ours == theirs  # after it: salt-bridge groups dropped, one bond per donor (largest angle)
    assert ours  # every complex has a bond under PLIP's criterion (19hc included: Ser 58 N and Cys 59 N)
