"""The model-free text ceiling and the MicroVQA audits (issue 21): hand-worked cases and the study's
crystal-system prompt (all 210 prompts identical: the largest class share, derived here from the labels)."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from viewcert.attribution.text_ceiling import (
    distractor_audit,
    elements_key,
    exact_ceiling,
    formula_key,
    giveaway_audit,
    loo_lookup,
    text_ceilings,
)
from viewcert.errors import InputError

STUDY = Path(__file__).resolve().parents[3] / "shared" / "data" / "render-ceiling"
SYSTEMS = ("triclinic", "monoclinic", "orthorhombic", "tetragonal", "trigonal", "hexagonal", "cubic")


def test_identical_texts_give_the_largest_class_share():
    c = exact_ceiling(["Q"] * 5, ["a", "a", "b", "c", "a"])
    assert (c.correct, c.n, c.value) == (3, 5, Fraction(3, 5))
    assert c.informative and "same text" in c.method


def test_distinct_texts_sum_each_texts_best_class():
    # text x: a, a, b (best 2); text y: b, b (best 2); text z: c (1) -> 5/6
    c = exact_ceiling(["x", "x ", "x", "y", "y", "z"], ["a", "a", "b", "b", "b", "c"])
    assert c.value == Fraction(5, 6)
    every = exact_ceiling(["p", "q", "r"], ["a", "b", "a"])
    assert every.value == 1 and not every.informative  # every text distinct: a lookup table, says nothing


def test_leave_one_out_lookup_hand_worked():
    # keys k1: a, a, b; k2: b; prior a:2, b:2 (ties broken by the prior order, then alphabetical: a)
    # item 0 (k1, a): others a, b -> tie -> a: right; item 1 the same: right; item 2 (k1, b): others a, a -> a: wrong
    # item 3 (k2, b): no other k2 -> prior without it a:2, b:1 -> a: wrong  => 2/4
    c = loo_lookup(["k1", "k1", "k1", "k2"], ["a", "a", "b", "b"], name="elements")
    assert (c.correct, c.n) == (2, 4)
    assert "leave-one-out" in c.method and "3 of 4" in c.method


def test_keys_read_what_the_text_carries():
    assert elements_key("Ba 0.0 0.5 0.25\n  Ti 0.5 0.5 0.5\n O 0 0 0.5 In the cell") == "Ba In O Ti"
    assert formula_key("the compound BaTiO3 and NaCl, not Xy2") == "BaTiO3 NaCl"


def test_text_ceilings_table():
    df = text_ceilings(["Q one", "Q two", "Q one"], ["a", "b", "a"])
    assert df["key"].tolist() == ["text", "elements", "formula"]
    assert df.iloc[0]["value_exact"] == "1"
    with pytest.raises(InputError, match="2 texts for 3 targets"):
        exact_ceiling(["a", "b"], ["x", "y", "z"])


def test_giveaway_audit_flags():
    q = "Identify the crystal system (one of: " + ", ".join(SYSTEMS) + ")."
    texts = [q, q + " Hint: it is cubic.", q + " Space group Fm-3m.", "Cell parameters: a=4.1 b=4.1 c=4.1 Angstrom",
             q + " The bond Na1-Cl2."]
    df = giveaway_audit(["i0", "i1", "i2", "i3", "i4"], texts, ["cubic"] * 5, SYSTEMS, {"i4": ["Na1", "Cl2"]})
    assert df["flagged"].tolist() == [False, True, True, True, True]
    assert df.loc[1, "flags"] == "answer named"  # named twice, every other label once
    assert df.loc[2, "space_group"] == "Space group"
    hm = giveaway_audit(["a", "b", "c"], ["in Fm-3m", "P2_1/c here", "C 0.5 0.5 0.5 and In 0 0 0"], ["cubic"] * 3,
                        SYSTEMS)
    assert hm["space_group"].tolist()[:2] == ["Fm-3m", "P2_1/c"] and hm["flagged"].tolist() == [True, True, False]
    assert bool(df.loc[3, "lattice_parameters"])
    assert df.loc[4, "determining_names"] == "Na1 Cl2"


def test_distractor_audit_hand_worked():
    # answers "abcd" (4) and "ab" (2): mean 3; distractors "a", "abc" and "abcdef", "a": mean (1+3+6+1)/4 = 11/4
    d = distractor_audit([["a", "abcd", "abc"], ["abcdef", "ab", "a"]], ["abcd", "ab"])
    assert d["length_ratio"] == pytest.approx(3 / (11 / 4))
    assert d["longest_option_is_answer"] == Fraction(1, 2)
    assert d["shortest_option_is_answer"] == 0
    assert d["chance"] == Fraction(1, 3)
    with pytest.raises(InputError, match="not among its options"):
        distractor_audit([["a", "b"]], ["c"])


@pytest.mark.skipif(not STUDY.is_dir(), reason="render-ceiling study data not available at ../shared/data")
def test_study_crystal_system_prompt_text_ceiling_is_one_seventh():
    rows = [json.loads(x) for x in (STUDY / "data" / "e3" / "eval.jsonl").read_text().splitlines() if x.strip()]
    labels = [r["crystal_system"] for r in rows]
    expected = Fraction(max(Counter(labels).values()), len(labels))  # from the data's own labels
    assert expected == Fraction(30, 210) == Fraction(1, 7)
    c = exact_ceiling([r["question"] for r in rows], labels)
    assert (c.correct, c.n, c.value) == (30, 210, expected)
    assert "same text" in c.method
    audit = giveaway_audit([r["material_id"] for r in rows], [r["question"] for r in rows], labels, SYSTEMS)
    assert not audit["flagged"].any()  # the image prompt names every option once and nothing else


@pytest.mark.skipif(not STUDY.is_dir(), reason="render-ceiling study data not available at ../shared/data")
def test_study_r3_prompts_carry_lattice_parameters():
    rows = [json.loads(x) for x in (STUDY / "data" / "e3" / "eval_r3_coords.jsonl").read_text().splitlines()
            if x.strip()]
    labels = [r["crystal_system"] for r in rows]
    audit = giveaway_audit([r["material_id"] for r in rows], [r["question"] for r in rows], labels, SYSTEMS)
    assert audit["lattice_parameters"].all()  # the geometry-as-text rung gives the cell by design
    df = text_ceilings([r["question"] for r in rows], labels)
    assert not bool(df.iloc[0]["informative"])  # every R3 prompt differs
    assert set(df["key"]) == {"text", "elements", "formula"}
