"""Answer parsing (with reasons) and majority voting (with the stated tie rules)."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as hst

from viewcert.attribution.parsing import (
    CRYSTAL_SYSTEMS,
    ChoiceParser,
    ParsedAnswer,
    crystal_system_parser,
    get_parser,
    letters_from_options,
    majority_vote,
)
from viewcert.errors import InputError

P = crystal_system_parser()


@pytest.mark.parametrize(
    "text, answer",
    [
        ("cubic", "cubic"),
        ("Cubic.", "cubic"),
        ("  TRIGONAL ", "trigonal"),
        ("rhombohedral", "trigonal"),
        ("isometric", "cubic"),
        ("The crystal system is likely **hexagonal**.", "hexagonal"),
        ("Could be triclinic or monoclinic... Final answer: monoclinic", "monoclinic"),
        ("Answer: tetragonal\nWait, reconsider. Answer: orthorhombic", "orthorhombic"),  # last marker wins
        ("\\boxed{Trigonal}", "trigonal"),
        ('{"crystal_system": "orthorhombic"}', "orthorhombic"),
        ("I cannot be sure, but it looks cubic", "cubic"),
        ("All angles differ from 90 degrees, so the crystal system is triclinic.", "triclinic"),
    ],
)
def test_parses_answers(text, answer):
    got = P.parse(text)
    assert got == ParsedAnswer(answer, "ok")


@pytest.mark.parametrize(
    "text, status, reason_part",
    [
        ("", "unparseable", "empty output"),
        ("   \n ", "unparseable", "empty output"),
        (None, "unparseable", "no output recorded"),
        ("It could be cubic or tetragonal", "unparseable", "ambiguous: names cubic, tetragonal"),
        ("blah blah", "unparseable", "no crystal-system label named"),
        ("I cannot determine this from the images.", "refused", "refusal phrase"),
        ("I'm unable to answer.", "refused", "refusal phrase"),
    ],
)
def test_unparseable_outputs_say_why(text, status, reason_part):
    got = P.parse(text)
    assert got.answer is None and got.status == status
    assert reason_part in got.reason


def test_option_letters():
    q = P.with_letters({"A": "triclinic", "B": "monoclinic", "C": "cubic"})
    assert q.parse("C").answer == "cubic"
    assert q.parse("(B)").answer == "monoclinic"
    assert q.parse("Answer: A").answer == "triclinic"
    assert q.parse("The answer is (C).").answer == "cubic"
    bad = q.parse("D")
    assert bad.status == "unparseable" and "'D'" in bad.reason
    assert q.canonical("b") == "monoclinic"
    letters = letters_from_options(list(CRYSTAL_SYSTEMS), P)
    assert letters["G"] == "cubic" and len(letters) == 7
    with pytest.raises(InputError, match="option B"):
        letters_from_options(["cubic", "banana"], P)


def test_pluggable_parser_for_another_task():
    yn = ChoiceParser(("yes", "no"), {"y": "yes", "n": "no"}, name="yes/no")
    assert yn.parse("Answer: no").answer == "no"
    assert yn.parse("Y").answer == "yes"
    assert "yes/no" in yn.parse("maybe").reason
    assert get_parser(yn) is yn
    assert get_parser("crystal_system").labels == CRYSTAL_SYSTEMS
    with pytest.raises(InputError, match="unknown task"):
        get_parser("sudoku")
    with pytest.raises(InputError, match="not a label"):
        ChoiceParser(("a", "b"), {"x": "c"})
    with pytest.raises(InputError, match="repeat"):
        ChoiceParser(("a", "A"))


def test_parsed_answer_invariant():
    with pytest.raises(InputError):
        ParsedAnswer(None, "ok")
    with pytest.raises(InputError):
        ParsedAnswer("cubic", "unparseable")
    with pytest.raises(InputError):
        ParsedAnswer(None, "weird")


def test_vote_tie_rules():
    # the study's rule: the tied answer seen first wins (Counter.most_common)
    assert majority_vote(["monoclinic", "triclinic"]).answer == "monoclinic"
    assert majority_vote(["b", "a", "a"]).answer == "a"
    v = majority_vote(["b", "a"], "alphabetical")
    assert v.answer == "a" and v.tied
    assert majority_vote(["b", "a"], "none").answer is None
    v = majority_vote([None, None, None])
    assert v.answer is None and v.n_ok == 0 and not v.tied
    assert majority_vote([None, "cubic", None]).answer == "cubic"
    with pytest.raises(InputError, match="tie rule"):
        majority_vote(["a"], "random")


@given(hst.lists(hst.sampled_from(["a", "b", "c", None]), min_size=1, max_size=9))
def test_vote_first_rule_equals_counter_most_common(answers):
    ok = [a for a in answers if a is not None]
    v = majority_vote(answers, "first")
    if not ok:
        assert v.answer is None
    else:
        assert v.answer == Counter(ok).most_common(1)[0][0]
        assert v.votes == dict(Counter(ok))


@given(hst.lists(hst.sampled_from(["a", "b", "c"]), min_size=1, max_size=9), hst.randoms())
def test_vote_without_tie_is_order_free(answers, rnd):
    v = majority_vote(answers)
    shuffled = list(answers)
    rnd.shuffle(shuffled)
    w = majority_vote(shuffled)
    if not v.tied:
        assert w.answer == v.answer
    assert majority_vote(answers, "alphabetical").answer == majority_vote(shuffled, "alphabetical").answer
