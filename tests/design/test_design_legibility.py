"""design --objective legibility (viewcert.design.legibility): the greedy coverage on hand-made tables whose
choice is derived by hand, determinism, and on the complexes of ../shared/data (skipped without them): the
protocol file round-trips and certifies through the interaction ceiling."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.support.complex_data import COMPLEXES, needs_complexes
from viewcert.cameras.protocol_files import read_protocol_file
from viewcert.design.legibility import (
    Coverage,
    LegibilityConfig,
    candidate_views,
    coverage_summary,
    greedy_cover,
    legibility_table,
)
from viewcert.errors import InputError
from viewcert.interactions.ceiling import CeilingSettings
from viewcert.render import frame_cameras
from viewcert.render.labels import Label
from viewcert.structures import Structure


def _cov(table, needs, weights=None) -> Coverage:
    t = np.array(table, dtype=bool)
    w = np.zeros(t.shape[1])
    for cols in needs:
        for j in cols:
            w[j] += 1.0
    w = w if weights is None else np.asarray(weights, dtype=float)
    return Coverage(t, w, tuple(tuple(c) for c in needs), tuple(("c", f"e{i}") for i in range(len(needs))))


def test_three_labels_each_legible_from_one_direction():
    # one entry needing labels 0, 1, 2 (ligand atom, residue atom, residue); view i shows label i only,
    # view 3 none: every view gains weight 1 except view 3, so greedy takes 0, 1, 2 in index order, and the
    # entry is complete only once all three are in.
    cov = _cov([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]], [(0, 1, 2)])
    assert greedy_cover(cov, 3) == [0, 1, 2]
    assert coverage_summary(cov, [0, 1])["entries_complete"] == 0
    s = coverage_summary(cov, [0, 1, 2])
    assert (s["entries_complete"], s["needed_covered"], s["weighted_coverage"]) == (1, 3, 3.0)


def _caged(centre, open_axis: int, d: float = 4.0) -> list:
    """An O atom with a Cs atom d Å away along every world axis but +open_axis (caesium: the largest drawn
    disc, 0.854 Å in ball-and-stick, so the one between the O and a camera covers the O's label)."""
    pts = [np.asarray(centre, dtype=float)]
    for ax, sg in itertools.product(range(3), (1, -1)):
        if (ax, sg) != (open_axis, 1):
            pts.append(pts[0] + sg * d * np.eye(3)[ax])
    return pts


def test_rendered_cages_each_label_legible_from_its_open_side_only():
    # three caged O atoms, open towards +z, +x and +y; axes-6 directions (into the scene): front -z, top -y,
    # left +x, back +z, right -x, bottom +y. A label is legible only from a camera on its atom's open side:
    # O1 from front, O2 from right, O3 from top; every other view has a Cs disc in front of it. One entry
    # needing all three: greedy takes front (0), top (1) by index (gain 1 each, nothing complete), then
    # right (4), the only view still gaining, which completes the entry.
    pos, num, labels = [], [], []
    for i, (c, ax) in enumerate((((0, 0, 0), 2), ((12, -12, 0), 0), ((-12, 12, 0), 1))):
        labels.append(Label(f"O{i + 1}", len(pos)))
        cage = _caged(c, ax)
        pos += cage
        num += [8] + [55] * (len(cage) - 1)
    s = Structure(np.array(pos), np.array(num), None)
    st = CeilingSettings()
    table = legibility_table(s, labels, frame_cameras(s, "axes-6", style=st.style, width=600, height=450), st)
    expected = np.zeros((6, 3), dtype=bool)
    expected[0, 0] = expected[4, 1] = expected[1, 2] = True
    assert table.tolist() == expected.tolist()
    cov = Coverage(table, np.ones(3), ((0, 1, 2),), (("cages", "O1 O2 O3"),))
    assert greedy_cover(cov, 3) == [0, 1, 4]
    assert coverage_summary(cov, [0, 1])["entries_complete"] == 0
    assert coverage_summary(cov, [0, 1, 4])["entries_complete"] == 1


def test_largest_gain_first_then_ties_by_completion_then_index():
    # two entries: A needs labels (0, 1, 2), B needs (3, 4, 2); label 2 (a shared residue) weighs 2.
    # view 0: {0, 1}   gain 2            view 1: {2}      gain 2, completes nothing
    # view 2: {3, 4}   gain 2            view 3: {0, 1, 2} gain 4 (best first pick)
    # after view 3 (A complete): view 2 gains 2 and completes B, view 0/1 gain 0 -> view 2.
    cov = _cov([[1, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 1], [1, 1, 1, 0, 0]], [(0, 1, 2), (3, 4, 2)])
    assert cov.weights.tolist() == [1, 1, 2, 1, 1]
    assert greedy_cover(cov, 2) == [3, 2]
    # equal weight gain, one completes an entry: it wins over a lower index that completes none
    cov2 = _cov([[0, 0, 0, 1, 0], [1, 1, 0, 0, 0], [0, 0, 1, 0, 0]], [(0, 1, 2)], weights=[1, 1, 1, 1, 0])
    assert greedy_cover(cov2, 2) == [1, 2]  # view 1 gains 2; then views 0 and 2 both gain 1, view 2 completes
    # all gains equal: the lower index
    cov3 = _cov([[1, 0], [0, 1]], [(0, 1, 0)], weights=[1, 1])
    assert greedy_cover(cov3, 1) == [0]


def test_kept_rows_first_and_limits():
    cov = _cov([[0, 0, 0], [1, 1, 1], [1, 0, 0]], [(0, 1, 2)])
    assert greedy_cover(cov, 2, forced=1) == [0, 1]
    with pytest.raises(InputError):
        greedy_cover(cov, 4)
    with pytest.raises(InputError):
        LegibilityConfig(views=0)
    with pytest.raises(InputError):
        LegibilityConfig(weight="most")


def test_greedy_reaches_the_coverage_guarantee_on_random_tables():
    # (1 - 1/e) of the best K-set's weighted coverage, the best found by brute force
    rng = np.random.default_rng(3)
    for _ in range(30):
        t = rng.random((8, 7)) < 0.3
        needs = [tuple(rng.choice(7, 3, replace=False).tolist()) for _ in range(3)]
        cov = _cov(t, needs)
        got = coverage_summary(cov, greedy_cover(cov, 3))["weighted_coverage"]
        best = max(coverage_summary(cov, s)["weighted_coverage"] for s in itertools.combinations(range(8), 3))
        assert got >= (1 - 1 / np.e) * best - 1e-12


def test_candidates_are_the_spiral_and_its_antipodes():
    views = candidate_views(LegibilityConfig(views=6, candidates=5))
    assert [v.name for v in views[:3]] == ["fib00", "fib00-back", "fib01"]
    assert len(views) == 10
    np.testing.assert_allclose(views[1].direction, -views[0].direction, atol=1e-12)
    assert len(candidate_views(LegibilityConfig(views=3, candidates=5, antipodes=False))) == 5


@needs_complexes
def test_designed_file_round_trips_and_certifies(tmp_path):
    from viewcert.cli import app
    from viewcert.design.legibility import certified_ceilings, complex_truths

    runner = CliRunner()
    spec = f"complex:{COMPLEXES / '1of6'}"
    outs = []
    for k in (1, 2):
        r = runner.invoke(app, ["design", spec, "--objective", "legibility", "--views", "6", "--candidates",
                                "fibonacci-27", "--out", str(tmp_path / f"d{k}")])
        assert r.exit_code == 0, r.output
        outs.append(((tmp_path / f"d{k}" / "protocol.toml").read_bytes(),
                     (tmp_path / f"d{k}" / "design.json").read_text()))
    assert outs[0][0] == outs[1][0]  # deterministic: same protocol bytes
    d = json.loads(outs[0][1])
    spec_file = read_protocol_file(tmp_path / "d1" / "protocol.toml")
    names = [v["name"] for v in d["protocol"]["views"]]
    assert [v.name for v in spec_file.protocol.views] == names and len(names) == 6
    by_name = {v.name: v for v in candidate_views(LegibilityConfig(views=6, candidates=27))}
    rots = np.array([v.rotation for v in spec_file.protocol.views])
    np.testing.assert_array_equal(rots, np.array([by_name[n].rotation for n in names]))  # bit-identical
    # the file certifies through the interaction ceiling exactly as the design recorded it
    truths = complex_truths(spec)
    again = certified_ceilings(truths, tmp_path / "d1" / "protocol.toml", LegibilityConfig())
    assert again == d["certified_from_file"]
    # 1of6 has 5 entries (docs/interactions.md); axes-6 hides labels of two (label_hidden 2, ceiling 3/5),
    # the designed six views hide one: a measured outcome of this complex (regression pin, re-pinned with the
    # glyph-pixel legibility rule of issue 28; under the box rule the designed six hid none)
    base = certified_ceilings(truths, "axes-6", LegibilityConfig())["1of6"]["rendered"]
    assert base["losses"]["label_hidden"] >= 1 and base["ceiling"] < 1.0
    assert d["checked"]["per_complex"]["1of6"] == {"entries": 5, "complete": 4, "hidden": ["ASP 22 OD1 B, N1"]}
    assert again["1of6"]["rendered"]["losses"]["label_hidden"] == 1
    assert again["1of6"]["rendered"]["ceiling"] == 0.8
    # and viewcert certify takes the written file: the complex is unique through the designed views
    r = runner.invoke(app, ["certify", spec, "--protocol", str(tmp_path / "d1" / "protocol.toml"), "--out",
                            str(tmp_path / "cert")])
    assert r.exit_code == 0, r.output
    assert "unique (Φ = ∅, all atoms recovered): 1/1" in r.output


def test_hostile_inputs_are_one_line(tmp_path):
    from viewcert.cli import app

    runner = CliRunner()
    for args in (["builtin:molecules"], [f"complex:{tmp_path / 'absent'}"]):
        r = runner.invoke(app, ["design", *args, "--objective", "legibility", "--out", str(tmp_path / "o")])
        assert r.exit_code == 2, r.output
        assert "Traceback" not in r.output and r.output.count("\n") <= 2
        assert "viewcert: error:" in r.output
