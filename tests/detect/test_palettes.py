"""viewcert.detect.palettes: named palettes read from the tools' own data, tables from a manifest."""

from __future__ import annotations

import pytest

from viewcert.detect.palettes import named_palette, palette_from_table
from viewcert.errors import InputError


def test_jmol_is_ases_table():
    from ase.data import atomic_numbers
    from ase.data.colors import jmol_colors

    p = named_palette("jmol")
    assert p.colours["O"] == (255, 13, 13)  # Jmol's oxygen, #FF0D0D
    assert p.colours["C"] == (144, 144, 144)  # Jmol's carbon, #909090
    for el in ("H", "Na", "Cl", "Fe", "Ba"):
        assert p.colours[el] == tuple(round(255 * c) for c in jmol_colors[atomic_numbers[el]])
    assert named_palette("cpk") is p and named_palette("ase") is p and p.radii["O"] == pytest.approx(0.66)


def test_vesta_is_pymatgens_table():
    p = named_palette("vesta")
    assert p.colours["O"] == (254, 3, 0) and p.colours["Na"] == (249, 220, 60)  # VESTA's elements.ini via pymatgen


def test_table_over_a_named_palette():
    p = palette_from_table({"name": "jmol", "C": [180, 180, 180], "Ag": "silver", "Au": "#ffd700"})
    assert p.colours["C"] == (180, 180, 180) and p.colours["Ag"] == (192, 192, 192)
    assert p.colours["Au"] == (255, 215, 0) and p.colours["O"] == (255, 13, 13) and p.name == "jmol+table"


@pytest.mark.parametrize(("table", "field", "message"), [
    ({"Xx": "red"}, "palette.Xx", "unknown element symbol"),
    ({"O": "no-such-colour"}, "palette.O", "unknown colour"),
    ({"O": [1, 2]}, "palette.O", "three numbers"),
    ({"O": [0, 0, 300]}, "palette.O", "three numbers"),
    ({"radii": {"O": -1}}, "palette.radii.O", "positive number"),
    ({}, "palette", "at least one element"),
])
def test_bad_tables_name_their_field(table, field, message):
    with pytest.raises(InputError, match=message) as e:
        palette_from_table(table, source="images.toml")
    assert e.value.field == field and e.value.source == "images.toml"


def test_unknown_name_and_missing_element():
    with pytest.raises(InputError, match="unknown palette 'jmoll' \\(did you mean jmol\\?\\)"):
        named_palette("jmoll")
    with pytest.raises(InputError, match="no colour for element\\(s\\) Fe") as e:
        palette_from_table({"O": "red"}).check_covers(["O", "Fe"], source="images.toml")
    assert e.value.field == "palette"
