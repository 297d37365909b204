"""render.bonds (unique bonds, half-bonds over a tiling) and render.palette (tables from ASE, styles)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from tests.support.strategies import crystals
from viewcert.errors import InputError
from viewcert.render.bonds import canonical_bonds, find_bonds, half_bonds
from viewcert.render.palette import STYLE_NAMES, covalent_radii, get_style, hex_colour, jmol_colours
from viewcert.structures import Structure


def test_palette_takes_ase_tables():
    from ase.data import covalent_radii as ase_r
    from ase.data.colors import jmol_colors

    np.testing.assert_array_equal(jmol_colours([1, 8, 26]), jmol_colors[[1, 8, 26]])
    np.testing.assert_array_equal(covalent_radii([1, 8, 26]), ase_r[[1, 8, 26]])
    assert hex_colour(jmol_colours([8])[0]) == "#ff0d0d"
    assert jmol_colours([118]).shape == (1, 3)  # beyond Jmol's table: neutral grey


def test_styles():
    assert set(STYLE_NAMES) == {"study", "ball-and-stick", "spacefill"}
    study = get_style("study")
    assert study.radius_scale == 0.5 and study.shading == "flat" and not study.bonds and study.outline_px > 0
    assert get_style("ball-and-stick").bonds
    np.testing.assert_allclose(get_style("study").atom_radii([8]), 0.5 * covalent_radii([8]))
    np.testing.assert_allclose(get_style("study", radius=0.7).atom_radii([1, 92]), [0.7, 0.7])
    with pytest.raises(InputError, match="style"):
        get_style("cartoon")


def test_canonical_bonds_fold_reverse_and_repeated_listings():
    i = [0, 1, 0, 0, 2, 2]
    j = [1, 0, 1, 0, 2, 2]
    s = [[0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 1, 0], [0, -1, 0]]
    ii, jj, ss = canonical_bonds(np.array(i), np.array(j), np.array(s))
    # (0,1,0) listed twice → once; (0,1,+a) distinct image kept; self with S=0 dropped; (2,2,±b) → one
    assert list(zip(ii.tolist(), jj.tolist(), map(tuple, ss.tolist()), strict=True)) == [
        (0, 1, (0, 0, 0)), (0, 1, (1, 0, 0)), (2, 2, (0, 1, 0))]


def test_small_cell_bonds_are_unique():
    # bcc Fe conventional cell: 2 atoms, each with 8 nearest neighbours → 8 unique bonds per cell
    a = 2.87
    s = Structure(np.array([[0, 0, 0], [a / 2] * 3]), [26, 26], np.eye(3) * a)
    b = find_bonds(s, factor=1.05, metal_metal=True)  # cutoff 2.77 Å: first shell (2.49 Å) only
    assert len(b) == 8
    np.testing.assert_allclose(b.length, np.sqrt(3) * a / 2)
    # cutoff 3.04 Å adds the 6 second neighbours (2.87 Å) per atom
    assert len(find_bonds(s, factor=1.15, metal_metal=True)) == 14
    assert len(find_bonds(s)) == 0  # metal–metal contacts are not drawn by default
    # a one-atom simple cubic cell lists its 6 image bonds as 3
    sc = Structure(np.zeros((1, 3)), [29], np.eye(3) * 2.5)
    assert len(find_bonds(sc, metal_metal=True)) == 3
    # rock salt: only Na–Cl, 6 per formula unit
    nacl = Structure(np.array([[0, 0, 0], [2.82, 0, 0]]), [11, 17], np.array([[0, 2.82, 2.82], [2.82, 0, 2.82],
                                                                               [2.82, 2.82, 0]]))
    b = find_bonds(nacl)
    assert len(b) == 6 and set(zip(b.i.tolist(), b.j.tolist(), strict=True)) == {(0, 1)}


@settings(max_examples=25)
@given(crystals())
def test_half_bonds_pair_up_over_the_tiling(cell):
    tiling = (2, 1, 2)
    hb = half_bonds(cell, tiling, factor=1.3)
    inner = hb.partner >= 0
    pairs = {(int(a), int(b)) for a, b in zip(hb.owner[inner], hb.partner[inner], strict=True)}
    # every drawn bond appears as exactly two halves, one per end, meeting at the midpoint
    assert all((b, a) in pairs for a, b in pairs)
    assert len(pairs) == inner.sum()
    n_unique = len(find_bonds(cell, factor=1.3))
    # each unique bond has 4 translates (tiles); each gives two halves or one or two stubs (issue 11: the old
    # lower bound, a sum of counts ≥ 0, could not fail)
    assert 4 * n_unique <= len(hb) <= 2 * 4 * n_unique
    assert inner.sum() % 2 == 0  # paired halves come in twos


def test_molecule_bonds():
    s = Structure(np.array([[0, 0, 0], [0.96, 0, 0], [-0.24, 0.93, 0]]), [8, 1, 1])  # water
    b = find_bonds(s)
    assert sorted(zip(b.i.tolist(), b.j.tolist(), strict=True)) == [(0, 1), (0, 2)]
    hb = half_bonds(s)
    assert len(hb) == 4
