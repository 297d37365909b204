"""CCD reading (viewcert.io.ccd): every component streamed, bad entries as per-item reasons."""

from __future__ import annotations

import pytest

pytest.importorskip("biotite")

from viewcert.errors import InputError  # noqa: E402
from viewcert.io.builtin import builtin  # noqa: E402
from viewcert.io.ccd import ccd_codes, ccd_codes_for, ccd_record, iter_ccd, read_code_list  # noqa: E402


def test_dictionary_size_and_order():
    codes = ccd_codes()
    assert len(codes) == 49196  # components in the dictionary biotite 1.6 bundles (issue 12)
    assert codes[:2] == ("000", "001")


def test_atp_record_matches_the_bundled_builtin_copy():
    r = ccd_record("ATP")
    assert r.reason == "" and r.structure.n_atoms == 47  # C10H16N5O13P3: 10+16+5+13+3
    assert r.structure.formula == "C10H16N5O13P3"
    assert r.structure.provenance.sha256 == builtin("builtin:ccd:ATP")[0].provenance.sha256
    assert len(r.bonds) == 49 and all(isinstance(b[2], int) for b in r.bonds)


@pytest.mark.parametrize(
    "code, reason",
    [
        (
            "FC6",
            "ideal coordinates missing for 13 of 13 atoms",
        ),  # the dictionary flags FC6's ideal coords missing
        ("XXXXX", "no component 'XXXXX' in the CCD"),
    ],
)
def test_bad_components_are_records_with_a_reason(code, reason):
    r = ccd_record(code)
    assert r.structure is None
    assert r.reason == reason


def test_iter_ccd_is_lazy_and_keeps_order():
    it = iter_ccd(["IBP", "bnz", "NOPE1"])
    first = next(it)
    assert first.code == "IBP" and first.structure.n_atoms == 33
    rest = list(it)
    assert [r.code for r in rest] == ["BNZ", "NOPE1"]
    assert rest[1].structure is None


def test_code_specs(tmp_path):
    assert ccd_codes_for("builtin:ccd") is None
    assert ccd_codes_for("ccd:ATP") == ("ATP",)
    assert ccd_codes_for("ccd:atp, ibp") == ("ATP", "IBP")
    f = tmp_path / "codes.txt"
    f.write_text("# ligands\nATP\nIBP, CLR  # two more\n\n")
    assert ccd_codes_for(f"ccd:@{f}") == ("ATP", "IBP", "CLR")
    assert read_code_list(f) == ("ATP", "IBP", "CLR")
    with pytest.raises(InputError, match="empty.txt"):
        (tmp_path / "empty.txt").write_text("# nothing\n")
        read_code_list(tmp_path / "empty.txt")
    with pytest.raises(InputError, match="ccd:"):
        ccd_codes_for("ccd:")
