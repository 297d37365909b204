"""MiSI scorer: hand-worked cases from issue 13 and the parse statuses."""

from __future__ import annotations

import pytest

from viewcert.attribution.misi import exact_match, parse_answer, score_interactions, score_transformation
from viewcert.errors import InputError
from viewcert.tasks.credit import default_normalisers
from viewcert.tasks.model import task_grid


def test_sign_error_in_one_of_two_components_scores_half():
    # move: |−2 − 2| = 4 = the 4 Å normaliser → 0; roll exact → 1; mean 0.5
    assert score_transformation("move x -2, roll y 30", "move x 2, roll y 30").value == 0.5


def test_axis_gate():
    # wrong axis on the move → 0 whatever the magnitude; roll exact → 1; mean 0.5
    assert score_transformation("move y 2, roll y 30", "move x 2, roll y 30").value == 0.5
    assert score_transformation("roll x 30", "roll y 30").value == 0.0
    assert score_transformation("move x 30", "roll x 30").value == 0.0  # operation gate too


def test_magnitude_credit_and_normaliser_parameter():
    assert score_transformation("roll y 45", "roll y 15").value == pytest.approx(1 - 30 / 90)
    assert score_transformation("turn y 15", "roll y 15").value == 1.0  # turn ≡ roll
    assert score_transformation("move x 1", "move x 4", normalisers={"translate": 8.0}).value == pytest.approx(
        1 - 3 / 8)
    assert score_transformation("roll z -90", "roll z 90").value == 0.0  # clipped at 0 (1 − 180/90 < 0)


def test_default_normalisers_are_half_ranges():
    assert default_normalisers(task_grid("translation").ranges) == {"translate": 4.0}
    assert default_normalisers(task_grid("rotation").ranges) == {"rotate": 90.0}
    assert default_normalisers(task_grid("zoom").ranges) == {"translate": 10.0}
    assert default_normalisers(task_grid("trans-rot").ranges) == {"translate": 4.0, "rotate": 90.0}


def test_docking_sign_rule():
    # the move counts only on its sign: −3 vs −14 → 1; roll 60 vs 75 → 1 − 15/90
    s = score_transformation("roll x 60, move x -3", "roll x 75, move x -14", docking=True).value
    assert s == pytest.approx((1 - 15 / 90 + 1) / 2)
    assert score_transformation("roll x 75, move x 3", "roll x 75, move x -14", docking=True).value == 0.5


def test_missing_component_scores_zero_for_it():
    assert score_transformation("move x 2", "move x 2, roll y 30").value == 0.5


def test_interaction_lists():
    true = ["A", "B", "C", "D"]
    assert score_interactions(true + ["E"], true).value == 0.5  # every true entry plus one fabricated
    assert score_interactions([f"X{i}" for i in range(6)] + true, true).value == 0.0  # ten entries for four true
    assert score_interactions(["a", "b"], true).value == 0.5  # case-folded, 2/4 correct
    assert score_interactions(["A", "Z"], true).value == 0.25  # 1/4, below the cap
    assert score_interactions(true * 2, true).value == 1.0  # 8 listed = 2×4 is allowed; duplicates count once
    with pytest.raises(InputError, match="true"):
        score_interactions(["A"], [])


def test_an_uncertain_entry_is_neither_rewarded_nor_punished():
    # hand-worked on 1pwc's shape: five certain bonds, two uncertain ones (criterion margin, docs/interactions.md)
    true = ["SER 62 OG A, O7", "ASN 161 ND2 A, O7", "THR 299 OG1 A, O11", "ARG 285 NH2 A, O12", "LYS 65 NZ A, O10"]
    unsure = ["ARG 285 NE A, O12", "TYR 159 OH A, N4"]
    three = true[:3]
    assert score_interactions(three, true, unsure).value == 0.6  # 3/5: the answer without the uncertain entries
    assert score_interactions(three + unsure, true, unsure).value == 0.6  # naming both changes nothing
    assert score_interactions(three + [" arg 285  ne a, o12"], true, unsure).value == 0.6  # folded as any entry
    assert score_interactions(three + unsure, true).value == 0.5  # without the list, they are fabrications
    # twice the true count is 10: 5 true + 2 uncertain + 4 fabricated = 11 listed, 9 once the neutral two leave
    fab = ["GLY 1 O A, O1", "GLY 2 O A, O1", "GLY 3 O A, O1", "GLY 4 O A, O1"]
    assert score_interactions(true + unsure + fab, true).value == 0.0
    assert score_interactions(true + unsure + fab, true, unsure).value == 0.5  # 5/5, capped by the fabrications
    # an entry both true and listed as uncertain is true (the true list wins)
    assert score_interactions(true, true, [true[0]]).value == 1.0
    # only uncertain bonds: nothing to find; naming the uncertain ones is neutral, anything else scores 0
    assert score_interactions([], [], unsure).value == 1.0
    assert score_interactions(unsure, [], unsure).value == 1.0
    assert score_interactions(unsure + fab[:1], [], unsure).value == 0.0
    with pytest.raises(InputError, match="uncertain"):
        score_interactions([], [], [])


def test_unparseable_is_a_status_not_an_exception():
    for text, status in [("", "empty"), (None, "empty"), ("I think it rotated a bit", "unparseable")]:
        s = score_transformation(text, "roll y 30")
        assert (s.value, s.status) == (0.0, status)
    p = parse_answer("Answer: Roll Y −30°, then move x 2 Å")
    assert p.status == "ok" and p.transformation.format() == "roll y -30, move x 2"


def test_exact_match_for_zoom():
    assert exact_match("move z 45", "move z 45").value == 1.0
    assert exact_match("move z 46", "move z 45").value == 0.0
    assert exact_match("zoom in", "move z 45").status == "unparseable"
