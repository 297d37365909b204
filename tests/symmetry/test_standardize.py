"""standardize: conventional standard cells equal pymatgen's (all 1,820 e3 structures and one hand-built
case per lattice type), pymatgen's arithmetic pinned piece by piece, spglib orientation, errors."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymatgen.core import Element, Lattice
from pymatgen.core import Structure as PmgStructure
from pymatgen.symmetry.analyzer import SpacegroupAnalyzer

from tests.support.strategies import lattices, rotations
from viewcert.errors import InputError
from viewcert.structures import Provenance, Structure
from viewcert.symmetry import _moyo, _spglib
from viewcert.symmetry import standardize as sd

SYMPREC, ANGLE_TOL = 0.01, 5.0


# ----------------------------------------------------------------------------- case builders
def from_pymatgen(p: PmgStructure, identifier: str = "") -> Structure:
    return Structure(p.cart_coords, [sp.Z for sp in p.species], p.lattice.matrix,
                     provenance=Provenance("pymatgen", identifier, ""))


def to_pymatgen(s: Structure) -> PmgStructure:
    return PmgStructure(Lattice(s.lattice), [int(z) for z in s.numbers], s.positions, coords_are_cartesian=True)


def pymatgen_conventional(s: Structure) -> tuple[PmgStructure, SpacegroupAnalyzer]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sga = SpacegroupAnalyzer(to_pymatgen(s), symprec=SYMPREC, angle_tolerance=ANGLE_TOL)
        return sga.get_conventional_standard_structure(), sga


def mismatch(ours: Structure, ref: PmgStructure, atol: float = 1e-6) -> str | None:
    """None when lattice (Å), species order and positions (Å, same order) agree; else what differs."""
    d_lat = np.abs(ours.lattice - ref.lattice.matrix).max()
    if d_lat > atol:
        return f"lattice differs by {d_lat:.3g} Å"
    z_ref = np.array([sp.Z for sp in ref.species])
    if len(z_ref) != ours.n_atoms or not np.array_equal(z_ref, ours.numbers):
        return f"species differ ({ours.n_atoms} vs {len(z_ref)} sites)"
    # same site up to a lattice translation: a fractional coordinate within rounding error of 0 or 1 wraps to
    # either side depending on the CPU's last bit (mp-989467 on an AMD EPYC: one site one b vector apart)
    d_frac = np.linalg.solve(ref.lattice.matrix.T, (ours.positions - ref.cart_coords).T).T
    d_frac -= np.round(d_frac)
    d_pos = np.abs(d_frac @ ref.lattice.matrix).max()
    if d_pos > atol:
        return f"positions differ by {d_pos:.3g} Å"
    return None


# (space group, lattice, species, coords, expected pymatgen lattice type, expected symbol prefix)
CASES = {
    "cubic-NaCl": ("Fm-3m", Lattice.cubic(5.64), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]], "cubic", "F"),
    "cubic-CsCl": ("Pm-3m", Lattice.cubic(4.12), ["Cs", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]], "cubic", "P"),
    "tetragonal-rutile": ("P4_2/mnm", Lattice.tetragonal(4.594, 2.959), ["Ti", "O"],
                          [[0, 0, 0], [0.3048, 0.3048, 0]], "tetragonal", "P"),
    "tetragonal-I-ThCr2Si2": ("I4/mmm", Lattice.tetragonal(4.04, 10.5), ["Th", "Cr", "Si"],
                              [[0, 0, 0], [0, 0.5, 0.25], [0, 0, 0.375]], "tetragonal", "I"),
    "orthorhombic-P-Pnma": ("Pnma", Lattice.orthorhombic(5.5, 7.7, 5.4), ["Ca", "Ti", "O", "O"],
                            [[0.03, 0.25, 0.99], [0, 0, 0.5], [0.48, 0.25, 0.08], [0.29, 0.04, 0.71]],
                            "orthorhombic", "P"),
    "orthorhombic-C-Cmcm": ("Cmcm", Lattice.orthorhombic(2.854, 5.869, 4.955), ["U"], [[0, 0.1025, 0.25]],
                            "orthorhombic", "C"),
    "orthorhombic-C-Cmce-mixed": ("Cmce", Lattice.orthorhombic(6.9, 4.2, 7.6), ["Ga", "N"],
                                  [[0, 0.16, 0.41], [0.25, 0.3, 0.25]], "orthorhombic", "C"),
    "orthorhombic-A-Amm2": ("Amm2", Lattice.orthorhombic(3.9, 4.3, 5.1), ["Ba", "Ti", "O"],
                            [[0, 0, 0], [0.5, 0, 0.47], [0, 0.27, 0.3]], "orthorhombic", "A"),
    "orthorhombic-F-Fddd": ("Fddd", Lattice.orthorhombic(10.4, 12.8, 24.4), ["S"], [[0.144, 0.048, 0.951]],
                            "orthorhombic", "F"),
    "hexagonal-wurtzite": ("P6_3mc", Lattice.hexagonal(3.25, 5.21), ["Zn", "O"],
                           [[1 / 3, 2 / 3, 0], [1 / 3, 2 / 3, 0.382]], "hexagonal", "P"),
    "hexagonal-short-c": ("P6/mmm", Lattice.hexagonal(5.0, 3.0), ["Mg", "B"],
                          [[0, 0, 0], [1 / 3, 2 / 3, 0.5]], "hexagonal", "P"),
    "rhombohedral-Bi": ("R-3m", Lattice.hexagonal(4.546, 11.862), ["Bi"], [[0, 0, 0.2341]], "rhombohedral", "R"),
    "rhombohedral-corundum": ("R-3c", Lattice.hexagonal(4.759, 12.991), ["Al", "O"],
                              [[0, 0, 0.3522], [0.3064, 0, 0.25]], "rhombohedral", "R"),
    "monoclinic-C-C2m": ("C2/m", Lattice.monoclinic(7.0, 3.1, 5.2, 103.0), ["Na", "Cl"],
                         [[0.1, 0, 0.3], [0.35, 0, 0.8]], "monoclinic", "C"),
    "monoclinic-C-Cc": ("Cc", Lattice.monoclinic(6.1, 9.8, 5.3, 112.0), ["Si", "O", "O"],
                        [[0.1, 0.2, 0.3], [0.3, 0.1, 0.05], [0.41, 0.33, 0.7]], "monoclinic", "C"),
    "monoclinic-P-P21c": ("P2_1/c", Lattice.monoclinic(5.1, 6.2, 7.3, 110.0), ["Fe", "S"],
                          [[0.1, 0.2, 0.3], [0.7, 0.4, 0.15]], "monoclinic", "P"),
    "monoclinic-P-P2m-long-a": ("P2/m", Lattice.monoclinic(9.0, 3.5, 4.5, 97.0), ["Mo", "O"],
                                [[0.2, 0.5, 0.3], [0.4, 0, 0.8]], "monoclinic", "P"),
    "triclinic-P-1": ("P-1", Lattice.from_parameters(5.1, 6.3, 7.2, 80, 95, 105), ["K", "Br"],
                      [[0.1, 0.2, 0.3], [0.6, 0.25, 0.8]], "triclinic", "P"),
    "triclinic-P1-skewed": ("P1", Lattice.from_parameters(4.2, 9.5, 5.1, 62, 118, 71), ["C", "N", "O"],
                            [[0, 0, 0], [0.31, 0.5, 0.12], [0.77, 0.18, 0.61]], "triclinic", "P"),
    # elements without a Pauling electronegativity (He, Ne, Ar): pymatgen's NaN comparison order
    "noble-NaAr": ("Fm-3m", Lattice.cubic(6.0), ["Na", "Ar"], [[0, 0, 0], [0.5, 0.5, 0.5]], "cubic", "F"),
    "noble-HeNeAr": ("P4/mmm", Lattice.tetragonal(4.0, 6.0), ["He", "Ne", "Ar", "H"],
                     [[0, 0, 0], [0.5, 0.5, 0.5], [0.5, 0.5, 0], [0, 0, 0.5]], "tetragonal", "P"),
}

# an arbitrary but fixed rotation so the inputs are not in any library's preferred orientation
_R0 = np.array([[0.36, 0.48, -0.8], [-0.8, 0.6, 0.0], [0.48, 0.64, 0.6]])


def build_case(name: str, *, primitive: bool = True, rotate: bool = True) -> Structure:
    sg, lat, species, coords, _, _ = CASES[name]
    p = PmgStructure.from_spacegroup(sg, lat, species, coords)
    if primitive:
        p = p.get_primitive_structure()
    s = from_pymatgen(p, name)
    if rotate:
        s = Structure(s.positions @ _R0.T, s.numbers, s.lattice @ _R0.T, provenance=s.provenance)
    return s


# ----------------------------------------------------------------------------- the whole e3 set
def _pymatgen_differences(cifs: dict[str, str]) -> dict[str, str]:
    failures = {}
    for mid, cif in cifs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = PmgStructure.from_str(cif, fmt="cif")
            ref = SpacegroupAnalyzer(p, symprec=SYMPREC, angle_tolerance=ANGLE_TOL).get_conventional_standard_structure()
        try:
            ours = sd.conventional_standard_cell(from_pymatgen(p, mid), symprec=SYMPREC, angle_tolerance=ANGLE_TOL)
        except InputError as exc:
            failures[mid] = f"raised {exc}"
            continue
        why = mismatch(ours, ref)
        if why:
            failures[mid] = why
    return failures


@pytest.mark.shared_data
def test_one_e3_structure_per_space_group_matches_pymatgen(e3_one_per_space_group: dict[str, str]):
    """The in-suite cover of the whole-set check below (`make bench`): every space group e3 holds, once."""
    failures = _pymatgen_differences(e3_one_per_space_group)
    n = len(e3_one_per_space_group)
    assert not failures, f"{len(failures)} of {n} differ from pymatgen: {json.dumps(failures)[:2000]}"


@pytest.mark.shared_data
@pytest.mark.bench
def test_all_e3_structures_match_pymatgen(e3_cifs: dict[str, str]):
    assert len(e3_cifs) == 1820
    failures = _pymatgen_differences(e3_cifs)
    assert not failures, f"{len(failures)} of 1820 differ from pymatgen: {json.dumps(failures)[:2000]}"


# ----------------------------------------------------------------------------- hand-built cases
@pytest.mark.parametrize("primitive", [True, False], ids=["primitive-input", "conventional-input"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_hand_built_case_matches_pymatgen(name: str, primitive: bool):
    s = build_case(name, primitive=primitive)
    ref, sga = pymatgen_conventional(s)
    # the case exercises the branch it is named after
    assert sga.get_lattice_type() == CASES[name][4]
    assert sga.get_space_group_symbol().startswith(CASES[name][5])
    ours = sd.conventional_standard_cell(s)
    assert mismatch(ours, ref) is None, mismatch(ours, ref)
    assert ours.provenance == s.provenance


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_dataset_call_equals_refine_cell(name: str):
    s = build_case(name)
    std = _spglib.standardized_cell(s.lattice, s.frac_coords, s.numbers, symprec=SYMPREC, angle_tolerance=ANGLE_TOL)
    lat, pos, typ = _spglib.refine_cell(s.lattice, s.frac_coords, s.numbers, symprec=SYMPREC,
                                        angle_tolerance=ANGLE_TOL)
    assert np.array_equal(std["lattice"], lat)
    assert np.array_equal(std["frac"], pos)
    assert np.array_equal(std["types"], typ)


@pytest.mark.parametrize("name", ["cubic-NaCl", "monoclinic-C-C2m", "rhombohedral-corundum", "triclinic-P-1"])
def test_spglib_orientation_is_spglibs_standardized_cell(name: str):
    s = build_case(name)
    ours = sd.conventional_standard_cell(s, orientation="spglib")
    species, types = sd._first_appearance_types(s.numbers)  # pymatgen's numbering, also used here
    lat, pos, typ = _spglib.refine_cell(s.lattice, s.frac_coords, types, symprec=SYMPREC, angle_tolerance=ANGLE_TOL)
    assert np.array_equal(ours.lattice, lat)
    assert np.allclose(ours.positions, pos @ lat, rtol=0, atol=1e-12)
    assert np.array_equal(ours.numbers, species[typ - 1])


# ----------------------------------------------------------------------------- invariance (hypothesis)
@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(sorted(CASES)), rot=rotations(), seed=st.integers(0, 2**32 - 1),
       primitive=st.booleans())
def test_rigid_rotation_and_permutation_give_the_same_cell(name, rot, seed, primitive):
    """pymatgen's conventional lattice is built from lengths and angles, so it is fixed in Cartesian space:
    rotating and re-ordering an exactly symmetric input gives the same lattice and the same crystal. The
    order of atoms within one element, and which of several equivalent origins and axis choices spglib
    picks, follow the input order and even last-bit rounding of a rotation (spglib's choice among
    equivalent settings, e.g. cubic a↔b); so sites are compared as a set, up to one translation."""
    base = build_case(name, primitive=primitive, rotate=False)
    perm = np.random.default_rng(seed).permutation(base.n_atoms)
    moved = Structure(base.positions[perm] @ rot.T, base.numbers[perm], base.lattice @ rot.T)
    c0 = sd.conventional_standard_cell(base)
    c1 = sd.conventional_standard_cell(moved)
    assert np.allclose(c0.lattice, c1.lattice, rtol=0, atol=1e-6)
    assert np.array_equal(c0.numbers, c1.numbers)  # sorted by electronegativity: same species sequence
    assert same_sites_up_to_translation(c0, c1, atol=1e-6)


def same_sites_up_to_translation(a: Structure, b: Structure, atol: float) -> bool:
    fa, fb = a.frac_coords, b.frac_coords
    for j in np.flatnonzero(b.numbers == a.numbers[0]):
        shift = fa[0] - fb[j]
        d = fb[None, :, :] + shift - fa[:, None, :]
        d -= np.round(d)
        close = (np.linalg.norm(d @ a.lattice, axis=2) < atol) & (a.numbers[:, None] == b.numbers[None, :])
        if close.any(axis=1).all() and close.any(axis=0).all():
            return True
    return False


# ----------------------------------------------------------------------------- pymatgen arithmetic pinned
@settings(max_examples=80, deadline=None)
@given(lat=lattices(), rot=rotations())
def test_lattice_helpers_are_bit_identical_to_pymatgen(lat, rot):
    m = lat @ rot.T
    pl = Lattice(m)
    assert sd._lengths(m) == pl.lengths
    assert sd._angles(m) == pl.angles
    red, mapping = sd._lll(pl.matrix)
    ref_red, ref_map = pl._calculate_lll()
    assert np.array_equal(red, ref_red) and np.array_equal(mapping, ref_map)
    a, b, c, al, be, ga = pl.parameters
    assert np.array_equal(sd._from_parameters(a, b, c, al, be, ga), Lattice.from_parameters(a, b, c, al, be, ga).matrix)
    assert np.array_equal(sd._from_parameters(a, b, c, 90, 90, 90), Lattice.orthorhombic(a, b, c).matrix)
    assert np.array_equal(sd._from_parameters(a, a, c, 90, 90, 90), Lattice.tetragonal(a, c).matrix)


def test_lll_reduced_structure_coordinates_like_pymatgen():
    """get_reduced_structure("LLL") maps coordinates through Cartesian per site, then np.mod: sites on a
    cell face land on 0 or on 1.0 by the sign of a last-bit residue; the port reproduces it exactly."""
    m = Lattice.from_parameters(3.0, 7.5, 11.0, 83, 101, 118).matrix
    m = np.array([m[0], m[1] + 2 * m[0], m[2] - m[1] + 3 * m[0]])  # a deliberately bad basis
    frac = np.array([[0, 0, 0], [0.5, 0.5, 0], [0, 0.5, 0.5], [1 / 3, 2 / 3, 0.25], [0.1, 0.9, 0.99]])
    p = PmgStructure(Lattice(m), ["Si"] * len(frac), frac)
    ref = p.get_reduced_structure("LLL")
    red, _ = sd._lll(m)
    assert np.array_equal(red, ref.lattice.matrix)
    ours = np.mod(sd._to_new_lattice(frac, m, red), 1)
    assert np.array_equal(ours, ref.frac_coords)


def test_rhombohedral_supercell_like_pymatgen_make_supercell():
    """pymatgen's rhombohedral→hexagonal supercell branch (reachable when the refined cell is
    rhombohedral; spglib's refined R cells are hexagonal, so it is pinned directly)."""
    m = Lattice.rhombohedral(5.1, 56.0).matrix
    frac = np.array([[0, 0, 0], [0.5, 0.5, 0.5], [0.25, 0.25, 0.25], [0.1, 0.2, 0.95], [1 / 3, 0, 2 / 3]])
    z = np.array([8, 8, 26, 26, 14])
    p = PmgStructure(Lattice(m), z.tolist(), frac)
    p.make_supercell(((1, -1, 0), (0, 1, -1), (1, 1, 1)))
    new, f, zz, origin = sd._rhombohedral_supercell(m, frac, z, np.arange(5))
    assert np.array_equal(new, p.lattice.matrix)
    assert np.array_equal(f, p.frac_coords)
    assert zz.tolist() == [sp.Z for sp in p.species]
    assert origin.tolist() == [i for i in range(5) for _ in range(3)]


@settings(max_examples=80, deadline=None)
@given(zs=st.lists(st.sampled_from([1, 2, 8, 10, 11, 18, 26, 55, 79, 104, 118]), min_size=1, max_size=14))
def test_site_order_is_pymatgens_get_sorted_structure(zs):
    n = len(zs)
    frac = (np.arange(n)[:, None] * np.array([1.0, 3.0, 7.0]) / (7 * n + 1)) % 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = PmgStructure(Lattice.cubic(30.0), zs, frac).get_sorted_structure()
    order = [int(round(f[0] * (7 * n + 1))) for f in p.frac_coords]
    assert sd._sorted_order(np.array(zs)).tolist() == order


def test_electronegativity_table_is_pymatgens():
    from viewcert.symmetry.site_order import electronegativity

    x, _ = electronegativity()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.array([Element.from_Z(z).X for z in range(1, 119)])
    assert np.array_equal(x[1:], ref, equal_nan=True)


def test_first_appearance_numbering_like_spacegroupanalyzer():
    species, types = sd._first_appearance_types(np.array([26, 8, 8, 26, 3, 8]))
    assert species.tolist() == [26, 8, 3]
    assert types.tolist() == [1, 2, 2, 1, 3, 2]


# ----------------------------------------------------------------------------- labels, provenance, errors
def test_site_labels_mapped_when_unambiguous_else_dropped():
    s = build_case("cubic-NaCl")
    name = {11: "Na1", 17: "Cl1"}
    labelled = Structure(s.positions, s.numbers, s.lattice, site_labels=[name[z] for z in s.numbers.tolist()],
                         provenance=s.provenance)
    out = sd.conventional_standard_cell(labelled)
    assert out.n_atoms == 8 and out.site_labels == tuple(name[z] for z in out.numbers.tolist())
    # a 2x1x1 supercell whose two Na carry different labels: no unambiguous map, labels dropped
    sup = labelled.supercell((2, 1, 1))
    relabel = list(sup.site_labels)
    relabel[relabel.index("Na1", 1 + relabel.index("Na1"))] = "Na2"
    sup = Structure(sup.positions, sup.numbers, sup.lattice, site_labels=relabel)
    assert sd.conventional_standard_cell(sup).site_labels is None


def test_molecule_is_refused_naming_lattice():
    with pytest.raises(InputError) as err:
        sd.conventional_standard_cell(Structure([[0, 0, 0], [1.2, 0, 0]], [6, 8]))
    assert err.value.field == "lattice"


def test_spglib_failure_names_symprec():
    s = Structure([[0, 0, 0], [0.6, 0, 0]], [6, 6], np.diag([4.0, 4.0, 4.0]))
    with pytest.raises(InputError, match="symprec") as err:
        sd.conventional_standard_cell(s, symprec=1.0)
    assert err.value.field == "symprec"


@pytest.mark.parametrize(
    "kwargs, field",
    [(dict(symprec=0.0), "symprec"), (dict(symprec=float("nan")), "symprec"),
     (dict(angle_tolerance=float("inf")), "angle_tolerance"), (dict(orientation="ase"), "orientation"),
     (dict(backend="ase"), "backend")],
)
def test_bad_arguments_name_the_parameter(kwargs, field):
    with pytest.raises(InputError) as err:
        sd.conventional_standard_cell(build_case("cubic-CsCl"), **kwargs)
    assert err.value.field == field


# ----------------------------------------------------------------------------- backends
@pytest.mark.parametrize("name", sorted(CASES))
def test_spglib_backend_is_the_default_reference(name: str):
    s = build_case(name)
    ref, _ = pymatgen_conventional(s)
    out = sd.conventional_standard_cell(s, backend="spglib")
    assert mismatch(out, ref) is None
    assert out.equals(sd.conventional_standard_cell(s))


@pytest.mark.parametrize("name", sorted(CASES))
def test_moyopy_backend_gives_the_same_crystal_in_an_equivalent_setting(name: str):
    """Not identical to the spglib backend (another of the equivalent origins/axes and site orders; see
    the module docstring for the e3 counts), but the same conventional cell: volume, composition, lattice
    lengths, and the same space group of the result."""
    s = build_case(name)
    ref = sd.conventional_standard_cell(s)
    out = sd.conventional_standard_cell(s, backend="moyopy")
    assert out.provenance == s.provenance
    assert out.volume == pytest.approx(ref.volume, rel=1e-9)
    assert sorted(out.numbers.tolist()) == sorted(ref.numbers.tolist())
    assert np.allclose(sorted(np.linalg.norm(out.lattice, axis=1)), sorted(np.linalg.norm(ref.lattice, axis=1)),
                       rtol=0, atol=1e-6)
    n_ref = _spglib.symmetry_dataset(ref.lattice, ref.frac_coords, ref.numbers, symprec=SYMPREC).number
    n_out = _spglib.symmetry_dataset(out.lattice, out.frac_coords, out.numbers, symprec=SYMPREC).number
    assert n_out == n_ref


def test_moyopy_backend_never_passes_an_angle_tolerance(monkeypatch):
    """moyopy 0.21 hangs on some cells (e3 mp-1096817, mp-1228266) when given an angle tolerance."""
    real = _moyo.moyopy.MoyoDataset
    seen = []

    def spy(*args, **kwargs):
        seen.append(kwargs.get("angle_tolerance"))
        return real(*args, **kwargs)

    monkeypatch.setattr(_moyo.moyopy, "MoyoDataset", spy)
    sd.conventional_standard_cell(build_case("rhombohedral-corundum"), angle_tolerance=5.0, backend="moyopy")
    assert seen == [None]


@pytest.mark.parametrize("failure", ["raises", "changes-symprec"])
def test_moyopy_backend_falls_back_to_spglib(monkeypatch, failure: str):
    real = _moyo.moyopy.MoyoDataset

    def broken(cell, *, symprec, **kwargs):
        if failure == "raises":
            raise RuntimeError("no symmetry")
        return real(cell, symprec=symprec * 0.95, **kwargs)  # what moyopy's iterative search reports

    monkeypatch.setattr(_moyo.moyopy, "MoyoDataset", broken)
    s = build_case("monoclinic-P-P21c")
    assert sd.conventional_standard_cell(s, backend="moyopy").equals(sd.conventional_standard_cell(s))


def test_moyopy_backend_maps_site_labels():
    s = build_case("cubic-NaCl")
    name = {11: "Na1", 17: "Cl1"}
    labelled = Structure(s.positions, s.numbers, s.lattice, site_labels=[name[z] for z in s.numbers.tolist()])
    out = sd.conventional_standard_cell(labelled, backend="moyopy")
    assert out.n_atoms == 8 and out.site_labels == tuple(name[z] for z in out.numbers.tolist())


def test_moyopy_std_cell_dict_matches_spglib_shape():
    s = build_case("orthorhombic-C-Cmcm")
    _, types = sd._first_appearance_types(s.numbers)
    m = _moyo.standardized_cell(s.lattice, s.frac_coords, types, symprec=SYMPREC)
    g = _spglib.standardized_cell(s.lattice, s.frac_coords, types, symprec=SYMPREC, angle_tolerance=ANGLE_TOL)
    assert m is not None
    assert (m["number"], m["international"]) == (g["number"], g["international"])
    assert set(g) <= set(m)
    assert len(m["types"]) == len(g["types"]) and (m["std_mapping_to_primitive"] >= 0).all()


# A P2_1/c cell (pyxtal group 14, seed 23141, rows cycled) whose angles are all 90° at the stated tolerance:
# pymatgen's monoclinic branch finds no non-right angle and falls back to ordering the axes by length, an odd
# permutation here, so its conventional cell is left-handed (det = -167.39 Å³, checked against pymatgen below).
LEFT_HANDED_FALLBACK = {
    "lattice": [[0.0, 5.180510603248507, 3.172147864108604e-16], [0.0, 0.0, 3.780386932353082],
                [8.541658447721023, 5.044528988133735e-16, 0.3089011514724572]],
    "frac": [[0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.43150791281486894, 0.35262025880776715, 0.8133020332925371],
             [0.5684920871851311, 0.8526202588077674, 0.6866979667074631],
             [0.43150791281486894, 0.14737974119223285, 0.313302033292537],
             [0.5684920871851311, 0.647379741192233, 0.18669796670746316]],
    "numbers": [8, 8, 14, 14, 14, 14],
}


def test_a_left_handed_pymatgen_fallback_becomes_the_same_cell_inverted():
    d = LEFT_HANDED_FALLBACK
    lat = np.array(d["lattice"])
    cell = Structure(np.array(d["frac"]) @ lat, np.array(d["numbers"]), lat)
    ref = SpacegroupAnalyzer(PmgStructure(Lattice(lat), d["numbers"], d["frac"]), symprec=0.01,
                             angle_tolerance=5).get_conventional_standard_structure(international_monoclinic=True)
    assert np.linalg.det(ref.lattice.matrix) < 0  # the case: pymatgen's own cell is left-handed
    conv = sd.conventional_standard_cell(cell, symprec=0.01, angle_tolerance=5.0)
    assert np.linalg.det(conv.lattice) > 0
    np.testing.assert_allclose(conv.lattice, -ref.lattice.matrix, atol=1e-9)  # pymatgen's rows, negated
    # the same atoms: every Cartesian position of ours is one of pymatgen's modulo the lattice
    frac_in_ref = np.linalg.solve(ref.lattice.matrix.T, conv.positions.T).T
    ref_frac = np.mod(ref.frac_coords, 1.0)
    for f, zz in zip(frac_in_ref, conv.numbers, strict=True):
        gap = np.abs((np.mod(f, 1.0)[None, :] - ref_frac + 0.5) % 1.0 - 0.5).max(axis=1)
        k = int(np.argmin(gap))
        assert gap[k] < 1e-8 and ref.atomic_numbers[k] == zz
