"""The deficit account (issue 27): R1 − R4 = format + shortcut + perception + reasoning, exactly, per model.

- a constrained export (``build-benchmark --constraints format,structure``) answered by stub models of a known
  mix (correct+compliant, correct+non-compliant, wrong+compliant, wrong+non-compliant, a letter inside the
  requested JSON, bytes that are not UTF-8, an empty answer), K = 3 samples per item, read by ``viewcert
  ladder``: every term derived by hand below, every interval endpoint by a twin of the bootstrap written from
  its definition (numpy draws, means, linear-interpolation percentiles), Fisher's p on items = the K = 1 table;
- the HTML report in headless Chromium: no console error, its first table's cells are the CSV's numbers;
- the study's data: every decomposed model's terms sum exactly to R1 − R4, format not measurable, the
  perception figures and the median share 0.2901 unchanged.
"""

from __future__ import annotations

import csv
import json
import math
import statistics
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.support.export_fixtures import export_cli

STUDY = Path(__file__).resolve().parents[2].parent / "shared/data/render-ceiling"
SEED, N_BOOT, ALPHA = 20260601, 200, 0.05
# q5 and q6 have no answer (2 of 8): the arms stay scored under an unscored threshold of 30 %

# the export's first 8 prototypes (builtin:prototypes, --limit 8): targets and their option letters
TARGETS = ["triclinic", "trigonal", "hexagonal", "monoclinic", "hexagonal", "trigonal", "monoclinic", "tetragonal"]
LETTERS = {"triclinic": "A", "monoclinic": "B", "tetragonal": "D", "trigonal": "E", "hexagonal": "F"}
WHY = "I compared the cell edges and angles."


def _json(label: str) -> str:
    return f'{WHY}\nAnswer: {{"answer": "{label}"}}'


# R4: one response per item, repeated K = 3 times (bytes: written raw into the file)
R4 = [
    _json("triclinic"),                              # q0 correct + compliant
    "trigonal",                                      # q1 correct + non-compliant (bare label)
    _json("cubic"),                                  # q2 wrong + compliant
    "cubic",                                         # q3 wrong + non-compliant
    _json(LETTERS["hexagonal"]),                     # q4 the option letter inside the requested JSON: correct
    _json("trigonal").encode() + b"\xff",            # q5 bytes that are not UTF-8: one failed response
    "",                                              # q6 empty
    _json("tetragonal"),                             # q7 correct + compliant
]
# R3: right on every item but q5 and q6 (compliant); no-image: bare labels (parse, break the format)
R3 = [_json(t) if i not in (5, 6) else "" for i, t in enumerate(TARGETS)]
NO_IMAGE = [t if i < 3 else "cubic" for i, t in enumerate(TARGETS)]

# by hand, per item (q0..q7):
LENIENT4 = [1, 1, 0, 0, 1, 0, 0, 1]   # R4's vote right: q0, q1, q4 (letter F = hexagonal), q7 → R4 = 4/8
STRICT4 = [1, 0, 0, 0, 1, 0, 0, 1]    # the vote of compliant responses only: q1's bare label does not count
COMPLIANT4 = [1, 0, 1, 0, 1, 0, 0, 1]  # format and structure met (q5 not UTF-8, q6 empty: both failed)
R3_RIGHT = [1, 1, 1, 1, 1, 0, 0, 1]   # R3 = 6/8
FREE = [1, 1, 1, 0, 0, 0, 0, 0]       # no-image right on q0..q2: 3/8
# one identical prompt for all 8 items: the text-only reader answers its largest class; hexagonal, monoclinic
# and trigonal have 2 items each, the tie goes to the alphabetically first, hexagonal (q2, q4): ceiling 2/8
TEXT = [0, 0, 1, 0, 1, 0, 0, 0]
# format f_i = lenient − strict; shortcut s_i = R4_i (free_i − text_i); perception p_i = R3_i − R4_i;
# reasoning r_i = R1_i − R4_i − f_i − s_i − p_i with R1 = 1 on every item
F_I = [a - b for a, b in zip(LENIENT4, STRICT4, strict=True)]                 # [0,1,0,0,0,0,0,0] → 1/8
S_I = [a * (b - c) for a, b, c in zip(LENIENT4, FREE, TEXT, strict=True)]     # [1,1,0,0,-1,0,0,0] → 1/8
P_I = [a - b for a, b in zip(R3_RIGHT, LENIENT4, strict=True)]                # [0,0,1,1,0,0,0,0] → 2/8
R_I = [1 - a - f - s - p for a, f, s, p in zip(LENIENT4, F_I, S_I, P_I, strict=True)]  # sums to 0
HAND = {"R4": Fraction(1, 2), "format": Fraction(1, 8), "shortcut": Fraction(1, 8), "perception": Fraction(1, 4),
        "reasoning": Fraction(0), "deficit": Fraction(1, 2)}


def _twin_interval(per_item: list[int], constant: float = 0.0) -> tuple[float, float]:
    """The paired item bootstrap from its definition: numpy's default_rng(seed) draws N_BOOT resamples of the
    8 items (integers in [0, 8)), the mean of the per-item values in each, and the linear-interpolation
    percentiles at α/2 and 1 − α/2."""
    idx = np.random.default_rng(SEED).integers(0, 8, size=(N_BOOT, 8))
    means = np.asarray(per_item, dtype=float)[idx].mean(axis=1) + constant
    lo, hi = np.quantile(means, [ALPHA / 2, 1 - ALPHA / 2])
    return float(lo), float(hi)


def _write(path: Path, ids: list[str], responses: list, k: int) -> None:
    lines = []
    for iid, target, raw in zip(ids, TARGETS, responses, strict=True):
        for s in range(k):
            if isinstance(raw, bytes):  # the bad bytes go into the file raw, inside the JSON string
                head = json.dumps({"item_id": iid, "target": target, "sample_k": s})[:-1]
                lines.append(head.encode() + b', "raw_output": "' + raw.replace(b'"', b'\\"').replace(b"\n", b"\\n")
                             + b'"}')
            else:
                lines.append(json.dumps({"item_id": iid, "target": target, "sample_k": s,
                                         "raw_output": raw}).encode())
    path.write_bytes(b"\n".join(lines) + b"\n")


@pytest.fixture(scope="module")
def stub(tmp_path_factory):
    root = tmp_path_factory.mktemp("account")
    res = CliRunner().invoke(export_cli(), ["build-benchmark", "builtin:prototypes", "--task", "crystal-system",
                                            "--constraints", "format,structure", "--size", "48", "--limit", "8",
                                            "--no-certify", "--out", str(root / "bench")])
    assert res.exit_code == 0, res.output
    recs = [json.loads(x) for x in (root / "bench" / "benchmark.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["answer"] for r in recs] == TARGETS  # the design above is for these targets
    assert all(LETTERS[r["answer"]] == r["answer_letter"] for r in recs)
    assert len({r["question"] for r in recs}) == 1
    ids = [r["id"] for r in recs]
    for k in (3, 1):
        d = root / f"k{k}"
        d.mkdir()
        entries = []
        for rung, answers in (("R4", R4), ("R3", R3), ("no-image", NO_IMAGE)):
            _write(d / f"{rung}.jsonl", ids, answers, k)
            entries.append(f'[[input]]\npath = "{rung}.jsonl"\nmodel = "stub"\nrung = "{rung}"\nharness = "native"\n')
        (d / "m.toml").write_text(f'[study]\nbenchmark = "{(root / "bench").as_posix()}"\nr1 = "1"\n\n'
                                  + "\n".join(entries), encoding="utf-8")
    from viewcert.cli.main import app

    out = root / "out"
    res = CliRunner().invoke(app, ["ladder", "--manifest", str(root / "k3" / "m.toml"), "--out", str(out),
                                   "--n-boot", str(N_BOOT), "--seed", str(SEED), "--threshold", "0.3"])
    assert res.exit_code == 0, res.output
    return root, out, ids


def _account(out: Path) -> pd.Series:
    acc = pd.read_csv(out / "deficit_decomposition.csv")
    assert len(acc) == 1
    return acc.iloc[0]


def test_every_term_and_interval_equals_the_hand_derivation(stub):
    _, out, _ = stub
    r = _account(out)
    assert r["status"] == "ok" and r["model"] == "stub" and r["n"] == 8
    assert Fraction(r["R4_exact"]) == HAND["R4"] and Fraction(r["deficit_exact"]) == HAND["deficit"]
    for term, per_item in (("format", F_I), ("shortcut", S_I), ("perception", P_I), ("reasoning", R_I)):
        assert Fraction(r[f"{term}_exact"]) == HAND[term] == Fraction(sum(per_item), 8), term
        assert r[term] == float(HAND[term])
        lo, hi = _twin_interval(per_item)
        assert (r[f"{term}_lo"], r[f"{term}_hi"]) == pytest.approx((lo, hi), abs=1e-12), term
        assert r[f"{term}_status"].startswith("measured")
    assert (r["deficit_lo"], r["deficit_hi"]) == pytest.approx(_twin_interval([-x for x in LENIENT4], 1.0))
    assert (r["R4_lo"], r["R4_hi"]) == pytest.approx(_twin_interval(LENIENT4))
    assert sum(Fraction(r[f"{t}_exact"]) for t in ("format", "shortcut", "perception", "reasoning")) \
        == Fraction(r["R1_exact"]) - Fraction(r["R4_exact"])
    assert r["shortcut_arm"] == "no-image"
    # points of the item scale: the unit is said in the row, the sentence names every term
    assert r["unit"].startswith("points of accuracy") and "0.1250 to the required format" in r["sentence"]


def test_the_item_is_the_unit_of_the_association_test(stub):
    root, out, _ = stub
    adh = pd.read_csv(out / "adherence.csv").set_index("rung")
    a = adh.loc["R4"]
    # items: correct (vote) × compliant (more than half of its 3 responses): q0 q4 q7 | q1 | q2 | q3 q5 q6
    assert (a["CF"], a["C_notF"], a["notC_F"], a["notC_notF"]) == (3, 1, 1, 3)
    # [[3, 1], [1, 3]]: φ = (9 − 1)/4² = 1/2; two-sided Fisher p = (1 + 16 + 16 + 1)/70 (tests/attribution/test_adherence.py)
    assert a["phi"] == pytest.approx(0.5) and a["fisher_p"] == pytest.approx(34 / 70)
    assert a["responses"] == 24 and a["strict_correct"] == sum(STRICT4) and a["lenient_correct"] == sum(LENIENT4)
    assert a["association_unit"].startswith("item")
    # the same stubs with K = 1: the same table and the same p
    from viewcert.attribution.pipeline import ladder_diagnostics, run_ladder
    from viewcert.stats import BootstrapSettings

    boot = BootstrapSettings(n_boot=N_BOOT)
    lad, table, m = run_ladder(manifest=root / "k1" / "m.toml", bootstrap=boot, threshold=0.3)
    one = ladder_diagnostics(lad, table, m, bootstrap=boot).adherence.set_index("rung").loc["R4"]
    assert (one["CF"], one["C_notF"], one["notC_F"], one["notC_notF"]) == (3, 1, 1, 3)
    assert one["fisher_p"] == a["fisher_p"]


# K = 3 samples per item that disagree, so the majority vote and the "more than half comply" rule decide the
# item's cell: (answer, compliant) per sample, every target cubic; a compliant sample is the requested JSON, a
# non-compliant one the bare label, None an empty output (unparseable, not compliant)
MIXED = [
    [("cubic", 1), ("cubic", 1), ("hexagonal", 0)],      # i0 vote cubic, right; 2 of 3 comply: correct & compliant
    [("cubic", 1), ("hexagonal", 1), ("cubic", 0)],      # i1 cubic 2 of 3, right; 2 of 3 comply: CF
    [(None, 0), ("cubic", 1), ("cubic", 1)],             # i2 right; 2 of 3: CF
    [("cubic", 1), ("hexagonal", 1), ("trigonal", 1)],   # i3 three-way tie, the first (cubic) wins: right; 3/3: CF
    [("cubic", 0), ("cubic", 0), ("hexagonal", 1)],      # i4 right; 1 of 3 complies: correct, not compliant
    [("hexagonal", 1), ("hexagonal", 1), ("cubic", 0)],  # i5 wrong; 2 of 3: wrong, compliant
    [("hexagonal", 0), ("hexagonal", 0), ("cubic", 1)],  # i6 wrong; 1 of 3: neither
    [(None, 0), (None, 0), (None, 0)],                   # i7 no answer: wrong; 0 of 3: neither
    [("trigonal", 0), ("cubic", 1), ("trigonal", 0)],    # i8 wrong; 1 of 3: neither
    [("hexagonal", 0), ("cubic", 0), ("hexagonal", 1)],  # i9 wrong; 1 of 3: neither
]


def test_mixed_samples_are_voted_and_complied_per_item():
    """Item-level 2x2 by hand: CF = i0..i3, C-notF = i4, notC-F = i5, notC-notF = i6..i9: [[4, 1], [1, 4]].
    phi = (16 - 1)/sqrt(5*5*5*5) = 3/5. Fisher (margins 5, 5 | 5, 5 of 10): P(X = x) = C(5, x) C(5, 5 - x)/252
    = 1, 25, 100, 100, 25, 1 over 252 for x = 0..5; observed x = 4 (25/252); two-sided p = (1 + 25 + 25 + 1)/252
    = 13/63. Counting the 30 samples instead would give [[8, 5], [7, 10]] (by hand, sample by sample)."""
    from viewcert.attribution.adherence import adherence_for_table
    from viewcert.attribution.parsing import crystal_system_parser
    from viewcert.attribution.table import make_frame
    from viewcert.constraints import AnswerSpec, plan

    parser = crystal_system_parser()
    ids = [f"i{j}" for j in range(len(MIXED))]
    rows = []
    for iid, samples in zip(ids, MIXED, strict=True):
        for k, (a, c) in enumerate(samples):
            raw = "" if a is None else (json.dumps({"answer": a}) if c else a)
            pa = parser.parse(raw)
            rows.append({"run": "x", "model": "m", "rung": "R4", "item_id": iid, "sample_k": k, "raw_output": raw,
                         "parsed_answer": pa.answer, "target": "cubic", "score": 0.0, "parse_status": pa.status,
                         "category": "cubic", "source_file": "x", "harness": "native", "parse_reason": pa.reason})
    cons = plan(["format"], AnswerSpec("choice", parser.labels)).applied
    resp, adh = adherence_for_table(make_frame(rows), ids, dict.fromkeys(ids, cons))
    assert resp["compliant"].tolist() == [bool(c) for s in MIXED for _, c in s]  # the stubs comply as designed
    a = adh.iloc[0]
    assert (a["CF"], a["C_notF"], a["notC_F"], a["notC_notF"]) == (4, 1, 1, 4)
    assert a["phi"] == pytest.approx(3 / 5, rel=1e-12) and a["fisher_p"] == pytest.approx(13 / 63, rel=1e-12)
    sample_cells = [(bool(a == "cubic"), bool(c)) for s in MIXED for a, c in s]
    assert [sample_cells.count(x) for x in ((True, True), (True, False), (False, True), (False, False))] == \
        [8, 5, 7, 10]
    # lenient vote right on i0..i4 (5); the vote of the compliant samples only right on i0, i1 (cubic beats
    # hexagonal on the tie), i2, i3 (tie, cubic first), i6, i8 (6); format-limited (lenient right, strict
    # wrong): i4 alone
    assert (a["lenient_correct"], a["strict_correct"], a["format_limited"]) == (5, 6, 1)
    assert a["responses"] == 30 and a["items_adherent"] == 9  # i7 has no compliant sample


def test_scoring_fixes_reach_the_outputs(stub):
    _, out, ids = stub
    checks = pd.read_csv(out / "adherence_responses.csv", keep_default_na=False)
    assert list(checks.columns) == ["model", "rung", "item", "sample", "constraint", "met", "reason"]
    r4 = checks[checks["rung"] == "R4"]
    assert len(r4) == 8 * 3 * 2  # 8 items, 3 samples, 2 constraints
    bad = r4[r4["item"] == ids[5]]
    assert (bad["met"] == False).all()  # noqa: E712  (read back from CSV: booleans)
    assert bad["reason"].str.startswith("response is not UTF-8 text: byte 0xff").all()
    letter = r4[r4["item"] == ids[4]]
    assert letter["met"].all()
    assert r4[r4["item"] == ids[6]]["reason"].eq("empty output").all()
    # the no-image arm's answers parse but break the format: it is tested on them, 3 of 8 against the text
    # ceiling 2/8: P(X ≥ 3) for X ~ Bin(8, 1/4)
    free = pd.read_csv(out / "image_free_vs_text_ceiling.csv").iloc[0]
    p = 1 - sum(math.comb(8, j) * 0.25 ** j * 0.75 ** (8 - j) for j in range(3))
    assert free["correct"] == 3 and free["status"] == "tested" and free["p_above_ceiling"] == pytest.approx(p)
    # numbers are numbers in every CSV: no cell is a quoted number ('-0.0016 …)
    assert not (out / "per_model_split.csv").exists()  # one account: the old mixed split is not written
    for name in ("deficit_decomposition", "shares", "adherence", "shortcuts"):
        with open(out / f"{name}.csv", encoding="utf-8", newline="") as fh:
            cells = [c for row in csv.reader(fh) for c in row]
        assert not [c for c in cells if c.startswith("'") and c[1:2] in "-+0123456789."], name


def _expected_first_table(out: Path) -> list[list[str]]:
    """The first table as the report promises it, from the CSV's numbers: 4 decimals, ``x [lo, hi]``."""
    rows = []
    with open(out / "deficit_decomposition.csv", encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh):
            def cell(t, r=r):
                return f"{float(r[t]):.4f} [{float(r[t + '_lo']):.4f}, {float(r[t + '_hi']):.4f}]"
            rows.append([r["model"], f"{float(r['R4']):.4f}", cell("format"), cell("shortcut"), cell("perception"),
                         cell("reasoning"), f"{float(r['R1']):.4f}", cell("deficit"), ""])
    return rows


def test_html_report_in_chromium_first_table_is_the_csv(stub, browser_page):
    _, out, _ = stub
    html = (out / "report.html").read_text(encoding="utf-8")
    assert ">None<" not in html
    browser_page.goto((out / "report.html").as_uri())
    header = browser_page.eval_on_selector("table", "t => [...t.tHead.rows[0].cells].map(c => c.textContent)")
    body = browser_page.eval_on_selector("table", "t => [...t.tBodies[0].rows].map(r => [...r.cells]"
                                                  ".map(c => c.textContent))")
    assert header == ["model", "R4 (points)", "format (points)", "shortcut (points)", "perception R3 − R4 (points)",
                      "reasoning (points)", "R1 (points)", "R1 − R4 (points)", "note"]
    assert body == _expected_first_table(out)
    assert browser_page.viewcert_errors == []
    assert (out / "deficit_decomposition.png").is_file()


def test_the_bars_are_the_terms_on_one_scale(stub):
    """The stacked bar of the stub (hand terms): segments from R4 = 1/2, widths 1/8, 1/8, 1/4, 0 in the term
    order, each interval drawn at [start + lo, start + hi]; a second model with a negative shortcut runs that
    segment left (narrow) and the next one starts from there; both rows on the one x-axis."""
    from viewcert.attribution import plots

    _, out, _ = stub
    acc = pd.read_csv(out / "deficit_decomposition.csv")
    neg = acc.iloc[0].copy()
    neg["model"], neg["shortcut"], neg["shortcut_lo"], neg["shortcut_hi"] = "stub-neg", -0.125, -0.25, 0.0
    neg["reasoning"], neg["reasoning_lo"], neg["reasoning_hi"] = 0.25, 0.125, 0.375  # the sum stays 1/2
    acc2 = pd.concat([acc, neg.to_frame().T], ignore_index=True)
    ax = plots.account_figure(acc2, acc.iloc[0]["r1"]).axes[0]
    assert ax.get_xlim() == plots.ACCOUNT_XLIM == (-0.05, 1.05)
    # (term, row, start, width, height): the height (drawing only) is y1 − y0 in floats, so rounded
    bars = [(p.get_gid(), round(p.get_y() + p.get_height() / 2), p.get_x(), p.get_width(), round(p.get_height(), 9))
            for p in ax.patches]
    assert bars == [("format", 0, 0.5, 0.125, 0.6), ("shortcut", 0, 0.625, 0.125, 0.6),
                    ("perception", 0, 0.75, 0.25, 0.6), ("reasoning", 0, 1.0, 0.0, 0.6),
                    ("format", 1, 0.5, 0.125, 0.6), ("shortcut", 1, 0.625, -0.125, 0.25),
                    ("perception", 1, 0.5, 0.25, 0.6), ("reasoning", 1, 0.75, 0.25, 0.6)]
    assert [p.get_facecolor()[:3] for p in ax.patches[:4]] == \
        [tuple(int(c[k:k + 2], 16) / 255 for k in (1, 3, 5)) for c in plots.TERM_COLORS.values()]
    r = acc.iloc[0]
    starts = [0.5, 0.625, 0.75, 1.0]
    want = [[[start + r[f"{t}_lo"], 0.0], [start + r[f"{t}_hi"], 0.0]]
            for start, t in zip(starts, ("format", "shortcut", "perception", "reasoning"), strict=True)]
    got = [c.get_segments()[0] for c in ax.collections[:4]]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    # the second row's shortcut: [start + lo, start + hi] = [0.625 − 0.25, 0.625 + 0] at y = 1
    np.testing.assert_allclose(ax.collections[5].get_segments()[0], [[0.375, 1.0], [0.625, 1.0]], rtol=0, atol=1e-12)


#: raw column names the report must never show a reader
RAW_NAMES = ("p_above_ceiling", "p_holm", "shortcut_share_lo", "significant_items", "R4_right_R3_wrong",
             "items_without_answer", "value_exact", "ci_lo", "unscored_reason", "format_limited_share", "C_notF")


def _check_readable(md: str, html: str) -> None:
    """No Python repr or raw column name in the Markdown; in the HTML every table states its unit in its caption
    and no header is a machine name (an underscore)."""
    import re
    from html import unescape

    assert "None" not in md and "{'" not in md and "| nan |" not in md
    assert ">None<" not in html and "{'" not in html and ">nan<" not in html
    assert not [x for x in RAW_NAMES if x in md]
    lines = md.splitlines()
    tables = [i for i, ln in enumerate(lines) if ln.startswith("|---")]
    assert tables and all(lines[i - 3].startswith("Unit: ") for i in tables)
    found = re.findall(r"<table.*?</table>", html, re.S)
    assert found and all(re.search(r"<caption>Unit: [^<]+</caption>", t) for t in found)
    headers = [unescape(h) for t in found for h in re.findall(r"<th>(.*?)</th>", t)]
    assert headers and not [h for h in headers if "_" in h or not h.strip()]


def test_the_report_names_every_column_and_unit(stub):
    _, out, _ = stub
    _check_readable((out / "summary.md").read_text(encoding="utf-8"), (out / "report.html").read_text("utf-8"))
    r = _account(out)
    assert r["sentence"] == ("stub loses 0.1250 to the required format, 0.1250 to what the text alone gives away, "
                             "0.2500 to perception and 0.0000 to reasoning, out of R1 − R4 = 0.5000 (R1 = 1, "
                             "R4 = 0.5000, points of accuracy (fraction of the items, 0–1))")


# ---------------------------------------------------------------------- the study's data
# docs/reference.md, "The ladder on the same 210 items": (R4, R3) of the decomposed models
STUDY_COUNTS = {
    "google/gemini-3.6-flash": (154, 179), "x-ai/grok-4.5": (129, 179), "anthropic/claude-opus-4.8": (122, 140),
    "qwen/qwen3-vl-235b-a22b-instruct": (70, 114), "meta-llama/llama-4-maverick": (93, 104),
    "mistralai/mistral-medium-3.1": (48, 95), "mistralai/mistral-small-2603": (31, 95),
    "qwen/qwen3-vl-8b-instruct": (79, 95), "openai/gpt-4.1-mini": (77, 87),
}


NEEDS_STUDY = pytest.mark.skipif(not (STUDY / "release" / "predictions").is_dir(),
                                 reason=f"study data not found at {STUDY} (../shared/data/render-ceiling)")


@pytest.fixture(scope="module")
def study():
    from viewcert.attribution.pipeline import run_ladder, study_diagnostics
    from viewcert.stats import BootstrapSettings

    boot = BootstrapSettings(n_boot=N_BOOT)
    ladder, table, _ = run_ladder(study_dir=STUDY, bootstrap=boot)
    return ladder, table, study_diagnostics(STUDY, ladder, table, bootstrap=boot)


@pytest.mark.shared_data
@NEEDS_STUDY
def test_study_terms_add_up_and_perception_is_unchanged(study):
    acc = study[2].account
    for label, r1 in (("R1 = 1", Fraction(1)), ("R1 = 200/210 = 0.9524", Fraction(200, 210))):
        a = acc[acc["r1"] == label].set_index("model")
        ok = a[a["status"] == "ok"]
        assert set(ok.index) == set(STUDY_COUNTS)  # qwen2.5-vl-72b (R3 unscored), gemini-2.5-flash (no R3) not
        assert a.loc["qwen/qwen2.5-vl-72b-instruct", "status"].startswith("not computed: R3 unscored")
        shares = []
        for model, (c4, c3) in STUDY_COUNTS.items():
            r = ok.loc[model]
            assert pd.isna(r["format_exact"]) and r["format_status"].startswith("not measurable")
            terms = [Fraction(r[f"{t}_exact"]) for t in ("shortcut", "perception", "reasoning")
                     if not pd.isna(r[f"{t}_exact"])]
            assert sum(terms) == r1 - Fraction(c4, 210) == Fraction(r["deficit_exact"]), model
            assert Fraction(r["perception_exact"]) == Fraction(c3 - c4, 210)
            share = Fraction(c3 - c4, 210) / (r1 - Fraction(c4, 210))
            assert Fraction(r["perception_share_exact"]) == share
            shares.append(share)
        if r1 == 1:
            assert round(float(statistics.median(shares)), 4) == 0.2901  # docs/reference.md
            # gpt-4.1-mini's no-image arm has no parseable answer: shortcut not measured, in reasoning
            assert ok.loc["openai/gpt-4.1-mini", "shortcut_status"].startswith("not measured")


@pytest.mark.shared_data
@NEEDS_STUDY
def test_study_report_reads_as_sentences_and_named_columns(study, tmp_path):
    """The study's report: no repr, every column named and every unit stated; gemini-2.5-flash's missing R3 says
    why; gpt-4.1-mini's sentence from its counts (R4 77, R3 87 of 210; docs/reference.md): perception 10/210,
    reasoning 123/210, R1 − R4 133/210; claude-opus-4.8's negative shortcut s read as points gained back."""
    from viewcert.attribution.report import NO_RESULTS, write_report

    ladder, table, diag = study
    rep = write_report(tmp_path, ladder=ladder, table=table, diagnostics=diag)
    md = rep.markdown.read_text(encoding="utf-8")
    _check_readable(md, rep.html.read_text(encoding="utf-8"))
    (row,) = [ln for ln in md.splitlines() if ln.startswith("| google/gemini-2.5-flash | unscored (24)")]
    assert row.endswith(f"| 90 | {NO_RESULTS} |")  # columns no-image, R4, R3
    acc = diag.account[diag.account["r1"] == "R1 = 1"].set_index("model")
    unit = "points of accuracy (fraction of the items, 0–1)"
    assert acc.loc["openai/gpt-4.1-mini", "sentence"] == (
        "openai/gpt-4.1-mini loses 0.0476 to perception and 0.5857 to reasoning, out of R1 − R4 = 0.6333 (R1 = 1, "
        f"R4 = 0.3667, {unit}); format not measurable and shortcut not measured, so counted in reasoning")
    c = acc.loc["anthropic/claude-opus-4.8"]
    s = Fraction(c["shortcut_exact"])
    # R4 122, R3 140: perception 18/210 = 0.0857, R1 − R4 = 88/210 = 0.4190, reasoning = R1 − R3 − s = 70/210 − s
    assert s < 0 and Fraction(c["reasoning_exact"]) == Fraction(70, 210) - s
    assert c["sentence"] == (
        f"anthropic/claude-opus-4.8 loses 0.0857 to perception and {float(Fraction(70, 210) - s):.4f} to "
        f"reasoning and gains back {float(-s):.4f} on the shortcut term (negative, −{float(-s):.4f}: without the "
        f"image it earns less of R4's credit than the text alone gives away), out of R1 − R4 = 0.4190 (R1 = 1, "
        f"R4 = 0.5810, {unit}); format not measurable, so counted in reasoning")
    assert not [x for x in acc["sentence"].dropna() if " -0." in x or "loses -" in x]


# ---------------------------------------------------------------------- the scoring fixes, unit by unit
@pytest.mark.parametrize(("text", "answer"), [
    (f'{WHY}\nAnswer: {{"answer": "E"}}', "trigonal"),        # the option letter inside the requested JSON
    (f'{WHY}\nAnswer: {{"answer": "hexagonal"}}', "hexagonal"),
    (f'{WHY}\n{{"answer": "B"}}', "monoclinic"),              # the JSON object as the last line
    (f'{WHY}\nAnswer: {{"answer": "Z"}}', None),              # Z is not an option
    (f'{WHY}\nAnswer: {{"answer": "E"}}\nAnswer: {{"answer": "A"}}', "triclinic"),  # the last marker wins
])
def test_letter_or_label_inside_the_requested_json_is_read(text, answer):
    from viewcert.attribution.parsing import crystal_system_parser

    letters = dict(zip("ABCDEFG", ("triclinic", "monoclinic", "orthorhombic", "tetragonal", "trigonal",
                                   "hexagonal", "cubic"), strict=True))
    assert crystal_system_parser(letters).parse(text).answer == answer


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_bytes_that_are_not_utf8_are_one_failed_response(tmp_path, suffix):
    from viewcert.attribution.readers.native import read_native

    path = tmp_path / f"r{suffix}"
    if suffix == ".jsonl":
        path.write_bytes(b'{"item_id": "a", "target": "cubic", "raw_output": "cubic \xff"}\n'
                         b'{"item_id": "b", "target": "cubic", "raw_output": "cubic \\ud800"}\n'
                         b'{"item_id": "c", "target": "cubic", "raw_output": "cubic"}\n')
    else:
        path.write_bytes(b"item_id,target,raw_output\na,cubic,cubic \xff\nc,cubic,cubic\n")
    f = read_native(path, model="m", rung="R4").frame.set_index("item_id")
    assert f.loc["a", "parse_status"] == "unparseable" and f.loc["a", "score"] == 0.0
    assert f.loc["a", "parse_reason"] == "response is not UTF-8 text: byte 0xff at character 6"
    assert f.loc["a", "raw_output"] == "cubic \\udcff"  # kept, visibly escaped
    if suffix == ".jsonl":  # a lone surrogate escape in valid JSON is no text either
        assert f.loc["b", "parse_reason"] == "response is not UTF-8 text: a lone surrogate U+D800 at character 6"
    assert (f.loc["c", "parse_status"], f.loc["c", "parsed_answer"]) == ("ok", "cubic")  # the rest is read


# ---------------------------------------------------------------------- a twin from the definitions
LABELS = ("cubic", "hexagonal", "trigonal")


def _vote(answers: list[str | None]) -> str | None:
    """Majority vote from its definition: most frequent non-None answer, ties to the first seen."""
    seen = [a for a in answers if a is not None]
    if not seen:
        return None
    best = max(seen.count(a) for a in seen)
    return next(a for a in seen if seen.count(a) == best)


def _twin(targets, arms, text):
    """(terms as Fractions, per-item term vectors) written from docs/adherence.md's table; ``arms`` maps a
    rung to per-item lists of (answer, compliant) samples."""
    n = len(targets)

    def right(rung, strict=False):
        return [int(_vote([a for a, c in s if c or not strict]) == t) for s, t in zip(arms[rung], targets,
                                                                                     strict=True)]
    r4, st4, r3, free = right("R4"), right("R4", strict=True), right("R3"), right("no-image")
    f = [a - b for a, b in zip(r4, st4, strict=True)]
    s = [a * (b - c) for a, b, c in zip(r4, free, text, strict=True)]
    p = [a - b for a, b in zip(r3, r4, strict=True)]
    r = [1 - a - x - y - z for a, x, y, z in zip(r4, f, s, p, strict=True)]
    return {"format": f, "shortcut": s, "perception": p, "reasoning": r}, Fraction(sum(r4), n)


def _property_case(data):
    from hypothesis import strategies as hs

    n = data.draw(hs.integers(2, 9))
    k = data.draw(hs.integers(1, 3))
    targets = data.draw(hs.lists(hs.sampled_from(LABELS), min_size=n, max_size=n))
    text = data.draw(hs.lists(hs.integers(0, 1), min_size=n, max_size=n))
    sample = hs.tuples(hs.one_of(hs.none(), hs.sampled_from(LABELS)), hs.booleans())
    arms = {r: data.draw(hs.lists(hs.lists(sample, min_size=k, max_size=k), min_size=n, max_size=n))
            for r in ("R4", "R3", "no-image")}
    return targets, text, arms


def _hypothesis_test(fn):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as hs

    return settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])(
        given(hs.data())(fn))


@_hypothesis_test
def test_account_equals_its_twin_from_the_definitions(data):
    from viewcert.attribution.account import deficit_account
    from viewcert.attribution.adherence import response_frame
    from viewcert.attribution.ladder import build_ladder, ceiling_from_number
    from viewcert.attribution.parsing import crystal_system_parser
    from viewcert.attribution.table import ResultTable, check_consistency, make_frame
    from viewcert.constraints import AnswerSpec, plan
    from viewcert.stats import BootstrapSettings

    targets, text, arms = _property_case(data)
    ids = [f"i{j}" for j in range(len(targets))]
    parser = crystal_system_parser()
    rows = []
    for rung, per_item in arms.items():
        for iid, t, samples in zip(ids, targets, per_item, strict=True):
            for k, (a, c) in enumerate(samples):
                raw = "" if a is None else (json.dumps({"answer": a}) if c else a)
                pa = parser.parse(raw)
                rows.append({"run": "p", "model": "m", "rung": rung, "item_id": iid, "sample_k": k,
                             "raw_output": raw, "parsed_answer": pa.answer, "target": t, "score": 0.0,
                             "parse_status": pa.status, "category": t, "source_file": "p", "harness": "native",
                             "parse_reason": pa.reason})
    table = ResultTable(make_frame(rows))
    cov = check_consistency(table, dict(zip(ids, targets, strict=True)))
    boot = BootstrapSettings(n_boot=50)
    lad = build_ladder(table, cov, [ceiling_from_number("1", ids)], threshold=0.99, bootstrap=boot)
    cons = plan(["format"], AnswerSpec("choice", parser.labels)).applied
    # an unparseable sample (a None answer) is written as an empty output: not compliant, as the twin needs
    arms = {r: [[(a, c and a is not None) for a, c in s] for s in v] for r, v in arms.items()}
    resp = response_frame(table.frame, dict.fromkeys(ids, cons))
    acc = deficit_account(lad, resp, dict(zip(ids, targets, strict=True)),
                          text_items=np.array(text, dtype=bool)).iloc[0]
    per_item, r4 = _twin(targets, arms, text)
    if acc["status"] != "ok":  # an arm without a single answer is unscored (above the 99 % threshold)
        assert acc["status"].startswith("not computed: R") and "unscored" in acc["status"]
        return
    free_answered = any(a is not None for s in arms["no-image"] for a, _ in s)
    n = len(ids)
    assert Fraction(acc["R4_exact"]) == r4
    idx = np.random.default_rng(boot.seed).integers(0, n, size=(boot.n_boot, n))
    for term, vec in per_item.items():
        if term == "shortcut" and not free_answered:
            assert pd.isna(acc["shortcut_exact"])
            continue
        if term == "reasoning" and not free_answered:  # the unmeasured shortcut is in reasoning
            vec = [x + y for x, y in zip(vec, per_item["shortcut"], strict=True)]
        assert Fraction(acc[f"{term}_exact"]) == Fraction(sum(vec), n), term
        lo, hi = np.quantile(np.asarray(vec, dtype=float)[idx].mean(axis=1), [0.025, 0.975])
        assert (acc[f"{term}_lo"], acc[f"{term}_hi"]) == pytest.approx((lo, hi), abs=1e-12), term


def test_an_interaction_list_export_is_accounted_in_misi_points(tmp_path):
    """The hand-made residue-ligand export of tests/attribution/test_report_task_sections.py: the account is on MiSI's list
    score against the certified per-item list ceiling, not on exact answers."""
    from tests.support.task_report import ANSWERS as LIST_ANSWERS
    from tests.support.task_report import CEILINGS, STUB, _export
    from viewcert.attribution.pipeline import ladder_diagnostics, run_ladder
    from viewcert.stats import BootstrapSettings

    folder = _export(tmp_path / "rl")
    for rung, outputs in (("R4", STUB), ("R3", LIST_ANSWERS)):
        (tmp_path / f"{rung}.jsonl").write_text("".join(
            json.dumps({"model": "m", "item_id": k, "target": a, "raw_output": o}) + "\n"
            for k, (a, o) in enumerate(zip(LIST_ANSWERS, outputs, strict=True))))
    (tmp_path / "m.toml").write_text(f'[study]\nbenchmark = "{folder.as_posix()}"\n' + "".join(
        f'[[input]]\npath = "{rung}.jsonl"\nrung = "{rung}"\n' for rung in ("R4", "R3")))
    boot = BootstrapSettings(n_boot=N_BOOT)
    lad, table, m = run_ladder(manifest=tmp_path / "m.toml", bootstrap=boot, threshold=0.5)
    diag = ladder_diagnostics(lad, table, m, bootstrap=boot)
    r = diag.account.iloc[0]
    from viewcert.attribution.report import write_report

    md = write_report(tmp_path / "out", ladder=lad, table=table, diagnostics=diag).markdown.read_text("utf-8")
    assert "## Deficit R1 − R4 by kind against R1 = certified MiSI list ceiling as rendered" in md
    # the first table's row (Markdown escapes the interval's "[")
    assert "| m | 0.5000 | not measurable (in reasoning) | not measured (in reasoning) | 0.5000 \\[" in md
    # by hand (MiSI list scores, tests/attribution/test_report_task_sections.py): R4 per item (1/2, 1, 1/2, 0) = 2/4; R3 the
    # true lists, 1 each; R1 the rendered ceilings (1, 1, 1/2, 1) = 7/8. perception (1/2, 0, 1/2, 1) = 1/2;
    # reasoning (0, 0, −1/2, 0) = −1/8 (R3 beats the rendered ceiling on item 2); R1 − R4 = 3/8
    r4, p_i, r_i = [0.5, 1, 0.5, 0], [0.5, 0, 0.5, 1], [0, 0, -0.5, 0]
    assert r["unit"].startswith("points of MiSI list score") and r["r1"].startswith("R1 = certified MiSI list")
    assert (Fraction(r["R4_exact"]), Fraction(r["R1_exact"])) == (Fraction(1, 2), Fraction(7, 8))
    assert Fraction(r["perception_exact"]) == Fraction(1, 2) and Fraction(r["reasoning_exact"]) == Fraction(-1, 8)
    assert Fraction(r["deficit_exact"]) == Fraction(3, 8) and sum(CEILINGS) / 4 == 7 / 8
    assert r["format_status"].startswith("not measurable") and r["shortcut_status"].startswith("not measured")
    # the negative reasoning is said as points gained back, so 0.5000 − 0.1250 = 0.3750 reads off the sentence
    assert r["sentence"] == (
        "m loses 0.5000 to perception and gains back 0.1250 on the reasoning term (negative, −0.1250: the other "
        f"terms add up to more than R1 − R4), out of R1 − R4 = 0.3750 ({r['r1']}, R4 = 0.5000, {r['unit']}); "
        "format not measurable and shortcut not measured, so counted in reasoning")
    idx = np.random.default_rng(SEED).integers(0, 4, size=(N_BOOT, 4))
    for term, vec in (("perception", p_i), ("reasoning", r_i), ("R4", r4)):
        lo, hi = np.quantile(np.asarray(vec, dtype=float)[idx].mean(axis=1), [ALPHA / 2, 1 - ALPHA / 2])
        assert (r[f"{term}_lo"], r[f"{term}_hi"]) == pytest.approx((lo, hi), abs=1e-12), term


def test_a_command_export_is_accounted_in_misi_partial_credit(tmp_path):
    """A two-question rotation export (the certificate's normaliser 90°, partial ceilings 1 and 1): MiSI credit
    max(0, 1 − |d̂ − d|/90) behind the axis gate, by hand."""
    from viewcert.attribution.pipeline import ladder_diagnostics, run_ladder
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
    from viewcert.stats import BootstrapSettings

    build_task_benchmark("builtin:molecules", tmp_path / "rot",
                         TaskExportSettings.from_options(task="rotation", width=64, height=48, supersample=1), limit=2)
    recs = [json.loads(x) for x in (tmp_path / "rot" / "benchmark.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["answer"] for r in recs] == ["roll z 15", "roll y 75"]
    # R4: roll z 30 (1 − 15/90 = 5/6), roll x 75 (wrong axis: 0); R3: roll z 15 (1), roll y 60 (5/6)
    for rung, outputs in (("R4", ["roll z 30", "roll x 75"]), ("R3", ["roll z 15", "roll y 60"])):
        (tmp_path / f"{rung}.jsonl").write_text("".join(
            json.dumps({"model": "m", "item_id": r["id"], "target": r["answer"], "raw_output": o}) + "\n"
            for r, o in zip(recs, outputs, strict=True)))
    (tmp_path / "m.toml").write_text(f'[study]\nbenchmark = "{(tmp_path / "rot").as_posix()}"\n' + "".join(
        f'[[input]]\npath = "{rung}.jsonl"\nrung = "{rung}"\n' for rung in ("R4", "R3")))
    boot = BootstrapSettings(n_boot=N_BOOT)
    lad, table, m = run_ladder(manifest=tmp_path / "m.toml", bootstrap=boot)
    r = ladder_diagnostics(lad, table, m, bootstrap=boot).account.iloc[0]
    assert r["unit"].startswith("points of MiSI partial credit")
    # R4 = (5/6 + 0)/2 = 5/12, R3 = (1 + 5/6)/2 = 11/12, R1 = 1: perception 1/2, reasoning 1/12
    assert (r["R4"], r["perception"], r["reasoning"], r["R1"]) == pytest.approx((5 / 12, 1 / 2, 1 / 12, 1.0))
    # exact on the binary fractions the credits are: the terms add up to R1 − R4 with no rounding at all
    assert Fraction(r["perception_exact"]) + Fraction(r["reasoning_exact"]) == \
        Fraction(r["R1_exact"]) - Fraction(r["R4_exact"]) == Fraction(r["deficit_exact"])
