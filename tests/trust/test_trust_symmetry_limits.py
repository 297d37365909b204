"""Limits before the work: a CIF's symmetry operations (issue 23, item 5).

A CIF listing 100,000 operations used to reach ``std::bad_alloc`` at 2.3 GB before any limit applied. The
reader now counts the operations (and the images they would generate, atom rows × operations) against
``Limits.max_symmetry_operations`` / ``max_symmetry_images`` before parsing or applying any of them: one
``LimitError`` naming the limit, its option and the CIF tag. Memory is measured with tracemalloc (Python and
numpy allocations), never time.
"""

from __future__ import annotations

import tracemalloc

import gemmi
import pytest
from typer.testing import CliRunner

from viewcert.cli.main import app as main_app
from viewcert.io.cif import read_cif_text
from viewcert.limits import DEFAULT_LIMITS, LimitError, Limits, using_limits

HEAD = ("data_many\n_cell_length_a 4\n_cell_length_b 4\n_cell_length_c 4\n_cell_angle_alpha 90\n"
        "_cell_angle_beta 90\n_cell_angle_gamma 90\n")


def _cif(ops: list[str], rows: int = 2, duplicate_tag: bool = False) -> str:
    atoms = "\n".join(f"Cu{k} Cu {0.1 * k:.3f} 0.25 0.25" for k in range(rows))
    dup = "_cell_length_a 4\n" if duplicate_tag else ""  # gemmi refuses a duplicated tag: pymatgen fallback
    return (HEAD + dup + "loop_\n_symmetry_equiv_pos_as_xyz\n" + "\n".join(f"'{o}'" for o in ops)
            + "\nloop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n"
              f"_atom_site_fract_z\n{atoms}\n")


def _many(n: int) -> list[str]:
    return [f"x+{k}/{n},y,z" for k in range(n)]


def test_defaults_allow_fm3m_twice_over():
    assert DEFAULT_LIMITS.max_symmetry_operations == 384 == 2 * 192
    assert DEFAULT_LIMITS.max_symmetry_images == 200_000


def test_100000_operations_one_limit_error_low_memory():
    text = _cif(_many(100_000))
    tracemalloc.start()
    try:
        with pytest.raises(LimitError) as exc:
            read_cif_text(text, source="many.cif")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    msg = str(exc.value)
    assert "symmetry operations = 100,000 exceeds the limit max_symmetry_operations = 384" in msg
    assert "--max-symmetry-operations" in msg and "\n" not in msg
    assert exc.value.source == "many.cif" and exc.value.field == "_symmetry_equiv_pos_as_xyz"
    assert peak < 64 * 2**20  # the 2.6 MB text itself and gemmi's column, not 100,000 parsed operations


def test_images_limit_counts_rows_times_operations():
    with using_limits(Limits(max_symmetry_operations=200_000)):
        with pytest.raises(LimitError) as exc:
            read_cif_text(_cif(_many(100_000), rows=3), source="many.cif")
    assert "symmetry images (3 atom rows x 100,000 operations) = 300,000" in str(exc.value)
    assert "max_symmetry_images" in str(exc.value)


def test_fallback_reader_counts_operation_lines_first():
    text = _cif(_many(100_000), duplicate_tag=True)
    with pytest.raises(RuntimeError):
        gemmi.cif.read_string(text)  # the fallback path is the one taken
    with pytest.raises(LimitError) as exc:
        read_cif_text(text, source="dup.cif")
    assert "max_symmetry_operations" in str(exc.value)


def test_legitimate_192_operations_read():
    """Fm-3m's 192 operations listed in full on Cu at the origin: the four atoms of the fcc cell."""
    ops = [op.triplet() for op in gemmi.find_spacegroup_by_number(225).operations()]
    assert len(ops) == 192
    text = (HEAD + "loop_\n_symmetry_equiv_pos_as_xyz\n" + "\n".join(f"'{o}'" for o in ops)
            + "\nloop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n"
              "_atom_site_fract_z\nCu1 Cu 0 0 0\n")
    assert read_cif_text(text).n_atoms == 4


def test_cli_refuses_in_one_line_and_the_option_raises_the_limit(tmp_path):
    path = tmp_path / "many.cif"
    path.write_text(_cif(_many(1000)))
    r = CliRunner()
    args = ["certify", str(path), "--fail-fast", "--workers", "1", "--no-plots", "--out", str(tmp_path / "out")]
    res = r.invoke(main_app, args)
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("viewcert: error:") and "max_symmetry_operations" in lines[0]
    res = r.invoke(main_app, ["--max-symmetry-operations", "1000", *args])
    # the operations are read now (the file's rows then overlap their images: another, later one-line error)
    assert "max_symmetry_operations" not in res.output and "Traceback" not in res.output


def test_limit_fields_are_positive():
    with pytest.raises(Exception, match="max_symmetry_operations"):
        Limits(max_symmetry_operations=0)
