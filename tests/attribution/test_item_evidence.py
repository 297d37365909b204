"""Item-level evidence on hand-built cases: statuses and their precedence, the repeated-sample figures against
their definitions, the item bootstrap's variance against its closed form, model pairs against scipy's
exact binomial and an independent Benjamini–Hochberg, Connor's sample size by hand, the 2PL fit, the subset,
id files, and hostile result files through ``viewcert ladder``."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from viewcert import stats as st
from viewcert.attribution import items as it
from viewcert.attribution.pairs import connor_items, pair_matrix, pair_tests
from viewcert.attribution.parsing import majority_vote
from viewcert.attribution.quality import IrtFit, _objective, fit_2pl, propose_subset
from viewcert.attribution.samples import (
    arm_samples,
    item_bootstrap,
    item_figures,
    per_item_figures,
    repeated_samples,
    vote_right,
)
from viewcert.attribution.table import make_frame
from viewcert.errors import InputError
from viewcert.io.idlist import read_ids, write_ids
from viewcert.stats import BootstrapSettings, bootstrap_indices


def _row(item, k, answer, target="a", model="m", rung="R4", status="ok", src="m.csv"):
    return {"run": "r", "model": model, "rung": rung, "item_id": item, "sample_k": k, "raw_output": answer,
            "parsed_answer": answer if status == "ok" else None, "target": target,
            "score": 1.0 if (status == "ok" and answer == target) else 0.0, "parse_status": status,
            "category": target, "source_file": src, "harness": "native"}


# ---------------------------------------------------------------------- statuses
def test_status_precedence_hand_built():
    """Six items, each built to hit one status; item 'both' is undetermined *and* its prompt names the answer:
    the earlier status wins and ``applies`` lists both; being wrong for every model does not make it hard, since
    hard needs the views to determine it."""
    universe = ["lab", "und", "txt", "cho", "hard", "ok", "both"]
    targets = dict.fromkeys(universe, "x")
    determined = np.array([False, False, True, True, True, True, False])
    reasons = ("label_mismatch", "phantoms, missing_atoms", "", "", "", "", "phantoms")
    r4 = {"A": np.array([1, 1, 1, 1, 0, 1, 0], bool), "B": np.array([0, 0, 0, 1, 0, 0, 0], bool)}
    out = it.item_status(universe, targets, determined, reasons, r4, {"txt": "prompt audit: answer named",
                                                                       "both": "prompt audit: space group"},
                         {"cho": "m choices-only: 3/3"}).set_index("item_id")
    assert out["status"].to_dict() == {"lab": it.LABEL, "und": it.UNDETERMINED, "txt": it.TEXT, "cho": it.CHOICES,
                                       "hard": it.HARD, "ok": it.CLEAN, "both": it.UNDETERMINED}
    assert out.loc["und", "reason"] == "certificate: phantoms, missing_atoms"
    assert out.loc["both", "applies"] == f"{it.UNDETERMINED}; {it.TEXT}"
    assert out.loc["lab", "applies"] == f"{it.LABEL}; {it.UNDETERMINED}"
    counts = it.status_counts(out.reset_index()).set_index("status")["items"]
    assert counts.sum() == 7 and counts[it.UNDETERMINED] == 2 and counts[it.CLEAN] == 1


def test_status_without_per_item_outcomes_says_not_assessed():
    out = it.item_status(["a", "b"], {"a": "x", "b": "x"}, None, None,
                         {"A": np.array([False, True]), "B": np.array([False, True])}, {}, {})
    assert list(out["status"]) == [it.HARD, it.CLEAN]
    assert it.NOT_ASSESSED in out.loc[0, "reason"] and out.loc[1, "reason"] == it.NOT_ASSESSED


def test_shortcut_evidence_reads_audit_and_tests():
    give = pd.DataFrame([{"item_id": "a", "flagged": True, "flags": "space group"},
                         {"item_id": "b", "flagged": False, "flags": ""}])
    tests = pd.DataFrame([{"model": "m", "rung": "no-image", "item_id": "b", "k": 3, "N": 3, "prior": 0.1,
                           "p_bh": 0.01, "significant": True},
                          {"model": "m", "rung": "choices-only", "item_id": "c", "k": 3, "N": 3, "prior": 0.2,
                           "p_bh": 0.02, "significant": True},
                          {"model": "m", "rung": "no-image", "item_id": "d", "k": 1, "N": 3, "prior": 0.2,
                           "p_bh": 0.9, "significant": False}])
    text, choices = it.shortcut_evidence(give, tests)
    assert set(text) == {"a", "b"} and set(choices) == {"c"}
    assert text["a"] == "prompt audit: space group" and "3/3 right against its prior 0.100" in text["b"]


class _Arm:
    def __init__(self, v, scored=True):
        self.correct_vector, self.scored = np.asarray(v, bool), scored


def test_clean_accuracy_beside_all():
    status = pd.DataFrame({"status": [it.CLEAN, it.CLEAN, it.HARD, it.UNDETERMINED]})
    out = it.clean_accuracy(status, {("m", "R4"): _Arm([1, 0, 0, 1])}).iloc[0]
    assert (out["correct"], out["n"], out["clean_correct"], out["clean_n"]) == (2, 4, 1, 2)
    assert out["accuracy"] == 0.5 and out["clean_accuracy"] == 0.5


# ---------------------------------------------------------------------- repeated samples
@pytest.mark.parametrize("rule", ["first", "alphabetical", "none"])
def test_vote_matches_majority_vote_on_every_pattern(rule):
    """Every answer pattern of K = 3 over {no answer, a, b, c} (target a): the vectorised vote equals the
    ladder's ``majority_vote`` (its own code) with the same tie rule."""
    labels = [None, "a", "b", "c"]
    pats = np.array(np.meshgrid(*[range(4)] * 3, indexing="ij")).reshape(3, -1).T
    answers = pats - 1  # −1 no answer, 0 a, 1 b, 2 c
    correct = answers == 0
    got = vote_right(answers, correct, rule)
    want = [majority_vote([labels[x] for x in p], rule).answer == "a" for p in pats]
    assert got.tolist() == want


def test_pass_at_k_and_pass_hat_k_by_hand():
    """K = 3; items with c = 0, 1, 2, 3 right. pass@2 per item: 1 − C(3 − c, 2)/3 = 0, 2/3, 1, 1;
    pass^2: C(c, 2)/3 = 0, 0, 1/3, 1; pass@3 = any right; pass^3 = all right; expected c/3."""
    correct = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], bool)
    answers = np.where(correct, 0, 1)
    f = item_figures(answers, correct, "first")
    assert f[("expected accuracy", 1)] == pytest.approx((0 + 1 / 3 + 2 / 3 + 1) / 4, abs=1e-15)
    assert f[("pass@k", 2)] == pytest.approx((0 + 2 / 3 + 1 + 1) / 4, abs=1e-15)
    assert f[("pass^k", 2)] == pytest.approx((0 + 0 + 1 / 3 + 1) / 4, abs=1e-15)
    assert f[("pass@k", 3)] == pytest.approx(3 / 4, abs=1e-15)
    assert f[("pass^k", 3)] == pytest.approx(1 / 4, abs=1e-15)
    assert f[("majority-vote accuracy", 3)] == pytest.approx(2 / 4, abs=1e-15)
    assert f[("consistency", 3)] == pytest.approx(2 / 4, abs=1e-15)  # all-wrong (all 'b') and all-right agree


def test_item_bootstrap_variance_closed_form():
    """Expected accuracy under the item (cluster) bootstrap: draw n items with replacement, each keeping its own K
    samples; the resampled mean has variance (1/n) · mean((p_i − p̄)²) (the plug-in variance over n). Here p = 1,
    1/3, 0, 2/3 (K = 3, n = 4): deviations ±1/2, ±1/6, so (1/4 + 1/36 + 1/4 + 1/36)/4/4 = 5/144. With 40 000
    resamples the variance estimate's relative standard error is about √(2/B) < 1 %, so a 3 % tolerance is four
    standard errors. No second level: the samples within an item are not resampled again (issue 56)."""
    correct = np.array([[1, 1, 1], [1, 0, 0], [0, 0, 0], [1, 1, 0]], bool)
    per = per_item_figures(np.where(correct, 0, 1), correct, "first")[("expected accuracy", 1)]
    idx = bootstrap_indices(4, n_boot=40_000, seed=7)
    boots = per[idx].mean(axis=1)
    assert boots.var() == pytest.approx(5 / 144, rel=0.03)
    assert abs(boots.mean() - 0.5) < 4 * math.sqrt(5 / 144 / 40_000)
    assert item_bootstrap(per, idx, 0.05) == st.percentile_interval(boots, alpha=0.05)


def test_repeated_samples_rows_and_k1_keeps_the_accuracy():
    rows = [_row("i1", 0, "a"), _row("i2", 0, "b"), _row("i3", 0, "a")]
    out = repeated_samples(make_frame(rows, source="m.csv"), ["i1", "i2", "i3"],
                           bootstrap=BootstrapSettings(n_boot=200))
    assert set(out["metric"]) == {"expected accuracy", "majority-vote accuracy"}  # K = 1: no pass@k, no consistency
    assert (out["point"] == 2 / 3).all() and (out["K"] == 1).all()


def test_k_varying_per_item_is_a_stated_result_naming_the_file():
    rows = [_row("i1", 0, "a"), _row("i1", 1, "a"), _row("i1", 2, "b"), _row("i2", 0, "a"), _row("i2", 1, "b")]
    got = arm_samples(make_frame(rows, source="m.csv"), ["i1", "i2"])
    assert isinstance(got, str) and "K varies per item in m.csv" in got and "'i2' has 2 samples" in got
    out = repeated_samples(make_frame(rows, source="m.csv"), ["i1", "i2"], bootstrap=BootstrapSettings(n_boot=50))
    assert len(out) == 1 and out.iloc[0]["status"] == got and pd.isna(out.iloc[0]["point"])


def test_missing_item_counts_as_k_unanswered_samples():
    rows = [_row("i1", k, "a") for k in range(3)]
    s = arm_samples(make_frame(rows, source="m.csv"), ["i1", "i2"])
    assert s.missing == 1 and s.answers[1].tolist() == [-1, -1, -1] and not s.correct[1].any()
    assert item_figures(s.answers, s.correct, "first")[("expected accuracy", 1)] == 0.5


# ---------------------------------------------------------------------- pairs
def _bh(p):
    """Benjamini–Hochberg step-up, written from the definition: q_(i) = min_{j ≥ i} p_(j) m / j, capped at 1."""
    p = np.asarray(p, float)
    m = len(p)
    order = np.argsort(p)
    q = np.empty(m)
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, p[i] * m / rank)
        q[i] = running
    return q


def test_pairs_against_binomtest_and_bh():
    rng = np.random.default_rng(3)
    vecs = {name: rng.random(60) < acc for name, acc in (("A", 0.8), ("B", 0.5), ("C", 0.45), ("D", 0.2))}
    out = pair_tests({"R4": vecs})
    assert len(out) == 6
    for _, r in out.iterrows():
        a, b = vecs[r["model_a"]], vecs[r["model_b"]]
        n10, n01 = int((a & ~b).sum()), int((~a & b).sum())
        assert (r["a_only"], r["b_only"]) == (n10, n01)
        want = 1.0 if n10 + n01 == 0 else sps.binomtest(n10, n10 + n01, 0.5, alternative="two-sided").pvalue
        assert r["p_value"] == pytest.approx(want, rel=1e-12)
    assert out["p_bh"].to_numpy() == pytest.approx(_bh(out["p_value"]), rel=1e-12)
    m = pair_matrix(out, "R4").set_index("model")
    r = out[(out["model_a"] == "A") & (out["model_b"] == "B")].iloc[0]
    assert m.loc["A", "B"].startswith(f"{r['a_only']}:{r['b_only']} ") and m.loc["B", "A"].startswith(
        f"{r['b_only']}:{r['a_only']} ")


def test_connor_items_by_hand():
    """a_only 20, b_only 10 of 100: p10 .2, p01 .1, ψ .3, δ .1;
    (1.959964 √.3 + 0.841621 √.29)² / .01 = (1.073516 + 0.453229)² / .01 = 233.09 → 234."""
    assert connor_items(20, 10, 100) == 234
    assert connor_items(10, 10, 100) is None


def test_perception_term_pairs_use_the_sign_test():
    """Per-item terms in {−1, 0, 1}: the discordant items are those where A's term is above B's and the reverse."""
    a = np.array([1, 1, 0, -1, 0, 1])
    b = np.array([0, 1, -1, -1, 1, -1])
    r = pair_tests({"term": {"A": a, "B": b}}).iloc[0]
    assert (r["a_only"], r["b_only"]) == (3, 1)
    assert r["p_value"] == pytest.approx(sps.binomtest(3, 4, 0.5).pvalue, rel=1e-12)


# ---------------------------------------------------------------------- quality
def test_2pl_gradient_and_recovery():
    """The analytic gradient equals a finite difference; on responses simulated from known difficulties the
    fit converges and orders the items' difficulties as simulated (Spearman ρ > 0.9 over 40 items, 300
    respondents)."""
    rng = np.random.default_rng(11)
    theta, b = rng.normal(size=300), np.linspace(-2, 2, 40)
    y = (rng.random((300, 40)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))).astype(float)
    x0 = rng.normal(size=300 + 80) * 0.3
    err = optimize_check(x0, y)
    assert err < 1e-4
    fit = fit_2pl(y, [f"r{i}" for i in range(300)])
    assert fit.record["converged"] and fit.record["max_abs_gradient"] < 1e-3
    assert sps.spearmanr(fit.difficulty, b).statistic > 0.9


def optimize_check(x0, y):
    from scipy.optimize import check_grad

    return check_grad(lambda x: _objective(x, y)[0], lambda x: _objective(x, y)[1], x0) / np.sqrt(x0.size)


def test_subset_keeps_a_ranking_and_refuses_bad_sizes():
    rng = np.random.default_rng(5)
    acc = {f"m{i}": a for i, a in enumerate((0.2, 0.35, 0.5, 0.65, 0.8))}
    vecs = {m: rng.random(120) < a for m, a in acc.items()}
    y = np.vstack([vecs[m] for m in sorted(vecs)]).astype(float)
    fit = fit_2pl(y, sorted(vecs))
    keep, rec = propose_subset(vecs, 40, fit, seed=1, max_swaps=1500)
    assert keep.size == 40 and len(set(keep.tolist())) == 40
    sub = [vecs[m][keep].mean() for m in sorted(vecs)]
    full = [vecs[m].mean() for m in sorted(vecs)]
    assert rec["spearman_rho"] == pytest.approx(sps.spearmanr(sub, full).statistic, abs=1e-12)
    assert rec["kendall_tau"] == pytest.approx(sps.kendalltau(sub, full).statistic, abs=1e-12)
    assert rec["spearman_rho"] == pytest.approx(1.0, abs=1e-12) and rec["met"]  # a perfect ranking exists here
    with pytest.raises(InputError, match="between 1 and 119"):
        propose_subset(vecs, 120, fit, seed=1)


def _subset_by_definition(correct, n_keep, fit, seed, max_swaps):
    """The swap search of ``quality``'s docstring as a plain loop, one proposal at a time: draw (in, out), keep the
    swap when (Spearman ρ, −mean squared difference) does not drop. ρ from scipy's average ranks, its sums in Python
    (half-integers: exact)."""
    models = sorted(correct)
    mat = np.vstack([np.asarray(correct[m], float) for m in models])
    full = mat.mean(1)
    f = sps.rankdata(full) - (len(models) + 1) / 2

    def score(sub):
        r = sps.rankdata(sub) - (len(models) + 1) / 2
        den = math.sqrt(sum(r * r) * sum(f * f))
        return (sum(r * f) / den if den > 0 else -1.0), -float(np.mean((sub - full) ** 2))

    order = np.argsort(fit.difficulty, kind="stable")
    keep = np.array([b[np.argmax(fit.discrimination[b])] for b in np.array_split(order, n_keep)])
    out = np.setdiff1d(np.arange(mat.shape[1]), keep)
    best = score(mat[:, keep].sum(1) / n_keep)
    rng = np.random.default_rng(seed)
    for _ in range(max_swaps):
        i, o = rng.integers(n_keep), rng.integers(out.size)
        trial = mat[:, keep].sum(1) - mat[:, keep[i]] + mat[:, out[o]]
        got = score(trial / n_keep)
        if got >= best:
            keep[i], out[o] = out[o], keep[i]
            best = got
    return np.sort(keep)


def test_subset_search_equals_the_plain_loop():
    """``propose_subset`` scores its proposals in blocks from the current subset (faster): the same items as the
    one-at-a-time loop, on ladders whose models often tie (few items, 0/1 answers)."""
    rng = np.random.default_rng(12)
    for case in range(6):
        m, n = int(rng.integers(3, 12)), int(rng.integers(15, 90))
        p = np.clip(rng.random(n)[None, :] * rng.random(m)[:, None] * 2, 0, 1)
        vecs = {f"m{i}": rng.random(n) < p[i] for i in range(m)}
        fit = IrtFit(tuple(sorted(vecs)), np.zeros(m), rng.normal(0, 1, n), rng.uniform(0.5, 2, n), {})  # the start
        n_keep = int(rng.integers(2, n // 2))
        keep, rec = propose_subset(vecs, n_keep, fit, seed=case, max_swaps=400)
        assert np.array_equal(keep, _subset_by_definition(vecs, n_keep, fit, case, 400)), case
        assert rec["swaps_accepted"] > 0


# ---------------------------------------------------------------------- id files
def test_id_file_round_trip_and_refusals(tmp_path):
    p = write_ids(tmp_path / "ids.txt", ["mp-1", "mp-2"], comment="subset of 2")
    assert p.read_text() == "# subset of 2\nmp-1\nmp-2\n"
    assert read_ids(p) == ("mp-1", "mp-2")
    (tmp_path / "dup.txt").write_text("a\n\nb\na\n")
    with pytest.raises(InputError, match="line 4: id 'a' repeats line 1") as e:
        read_ids(tmp_path / "dup.txt")
    assert "dup.txt" in str(e.value)
    with pytest.raises(InputError, match="cannot be written"):
        write_ids(tmp_path / "x.txt", ["a\nb"])
    # every separator read_ids splits lines at (str.splitlines) is refused too: none could read back as itself
    for sep in ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e"]:
        with pytest.raises(InputError, match="cannot be written"):
            write_ids(tmp_path / "x.txt", [f"a{sep}b"])
    p = write_ids(tmp_path / "ok.txt", ["a\tb", "é-1"])  # a tab and non-ASCII stay on one line
    assert read_ids(p) == ("a\tb", "é-1")


# ---------------------------------------------------------------------- hostile files through the CLI
SYSTEMS = ["triclinic", "monoclinic", "orthorhombic", "tetragonal", "trigonal", "hexagonal", "cubic"]


def _manifest(tmp_path: Path, files: dict[str, list[dict]]) -> Path:
    lines = ["[study]", "r1 = '1'"]
    for name, rows in files.items():
        pd.DataFrame(rows).to_csv(tmp_path / name, index=False)
        lines += ["[[input]]", f"path = '{name}'", f"rung = '{rows[0]['rung']}'", f"model = '{rows[0]['model']}'"]
    (tmp_path / "m.toml").write_text("\n".join(lines) + "\n")
    return tmp_path / "m.toml"


def _arm(model, n=12, k=3, right=6, drop_sample=None, only=None):
    rows = []
    for i in range(n):
        if only is not None and i not in only:
            continue
        t = SYSTEMS[i % 7]
        for s in range(k):
            if (i, s) == drop_sample:
                continue
            a = t if i < right else ("cubic" if t != "cubic" else "triclinic")
            rows.append({"model": model, "rung": "R4", "item_id": f"item{i:02d}", "sample_k": s, "target": t,
                         "raw_output": a})
    return rows


def _run(tmp_path, files, *extra):
    from viewcert.cli import app

    m = _manifest(tmp_path, files)
    return CliRunner().invoke(app, ["ladder", "--manifest", str(m), "--out", str(tmp_path / "out"), "--n-boot", "100",
                                    *extra])


def test_cli_duplicated_sample_is_one_line_exit_2(tmp_path):
    rows = _arm("A")
    rows.append(dict(rows[0]))
    res = _run(tmp_path, {"a.csv": rows, "b.csv": _arm("B")})
    assert res.exit_code == 2
    err = res.stderr.strip().splitlines() if res.stderr else res.output.strip().splitlines()
    assert len(err) == 1 and "a.csv" in err[0] and "duplicate item id 'item00'" in err[0]


def test_cli_k_varying_and_one_model_items_are_documented_results(tmp_path):
    """K varies in a.csv (item03 has 2 samples): its repeated-sample row says so, naming the file. item12 is
    answered by model D only, and B answers items 0–5 only: a model's missing items count as wrong (ladder) and
    as K unanswered samples (repeated samples), and the coverage lists them; B's arm is unscored (more than half
    its items missing) while A and C, 1 of 13 missing, are scored under --threshold 0.1, so the ranking the subset
    keeps is A's, C's and D's."""
    res = _run(tmp_path, {"a.csv": _arm("A", drop_sample=(3, 1)), "b.csv": _arm("B", only=range(6)),
                          "c.csv": _arm("C", right=3), "d.csv": _arm("D", n=13, right=9)}, "--subset-size", "6",
               "--threshold", "0.1")
    assert res.exit_code == 0, res.output
    out = tmp_path / "out"
    samples = pd.read_csv(out / "repeated_samples.csv")
    a = samples[samples["model"] == "A"]
    assert len(a) == 1 and "K varies per item in" in a.iloc[0]["status"] and "a.csv" in a.iloc[0]["status"]
    b = samples[samples["model"] == "B"]  # unscored: one row saying why, no figure (issue 56)
    assert len(b) == 1 and b.iloc[0]["status"].startswith("unscored: 7/13 items without an answer")
    assert pd.isna(b.iloc[0]["point"])
    c = samples[samples["model"] == "C"].set_index("metric")
    assert c.loc["expected accuracy", "point"] == pytest.approx(3 / 13, abs=1e-12)
    assert "1 missing item(s)" in c.loc["expected accuracy", "status"]
    cov = pd.read_csv(out / "coverage.csv").set_index("model")
    assert (cov.loc["A", "missing"], cov.loc["B", "missing"], cov.loc["C", "missing"], cov.loc["D", "missing"]) \
        == (1, 7, 1, 0)
    status = pd.read_csv(out / "item_status.csv")
    assert len(status) == 13 and status["status"].isin(it.STATUSES).all()
    ids = read_ids(out / "subset_ids.txt")
    assert len(ids) == 6 and "subset of 6 items" in res.output
    res2 = CliRunner().invoke(__import__("viewcert.cli", fromlist=["app"]).app,
                              ["ladder", "--manifest", str(tmp_path / "m.toml"), "--out", str(tmp_path / "o2"),
                               "--n-boot", "100", "--threshold", "0.1", "--ids", str(out / "subset_ids.txt")])
    assert res2.exit_code == 0, res2.output
    assert sorted(pd.read_csv(tmp_path / "o2" / "item_status.csv")["item_id"]) == sorted(ids)


def test_cli_ids_unknown_is_one_line_exit_2(tmp_path):
    (tmp_path / "ids.txt").write_text("item00\nnot-an-item\n")
    res = _run(tmp_path, {"a.csv": _arm("A"), "b.csv": _arm("B")}, "--ids", str(tmp_path / "ids.txt"))
    assert res.exit_code == 2
    assert "ids.txt" in res.output + (res.stderr or "") and "'not-an-item'" in res.output + (res.stderr or "")


def test_build_benchmark_ids_refusals_before_any_work(tmp_path):
    """A bad id file, or --ids on a task without it: one line naming the file or the option, exit 2."""
    from viewcert.cli import app

    (tmp_path / "dup.txt").write_text("mp-1\nmp-1\n")
    res = CliRunner().invoke(app, ["build-benchmark", "builtin:rocksalt", "--out", str(tmp_path / "b"),
                                   "--ids", str(tmp_path / "dup.txt")])
    text = res.output + (res.stderr or "")
    assert res.exit_code == 2 and "dup.txt" in text and "repeats line 1" in text
    res = CliRunner().invoke(app, ["build-benchmark", "builtin:rocksalt", "--task", "point-group", "--out",
                                   str(tmp_path / "c"), "--ids", str(tmp_path / "dup.txt")])
    text = res.output + (res.stderr or "")
    assert res.exit_code == 2 and "--ids applies to the crystal tasks" in text


def test_certificate_reasons_reach_the_status(tmp_path):
    """A hand-written certificate's ``reasons`` and a viewcert certificate's ``items[].reasons`` (read here with a
    stale digest, since the test edits one item) are carried per item into the ceiling and the status."""
    import json as _json

    from viewcert.attribution.ladder import ceiling_from_certificate

    hand = tmp_path / "hand.json"
    hand.write_text(_json.dumps({"items": [{"id": "a", "correct": True}, {"id": "b", "correct": False,
                                                                          "reasons": ["phantoms", "missing_atoms"]},
                                           {"id": "c", "correct": False, "reason": "label_mismatch"}]}))
    c = ceiling_from_certificate(hand, ["a", "b", "c"])
    assert c.reasons == ("", "phantoms, missing_atoms", "label_mismatch")
    out = it.item_status(["a", "b", "c"], dict.fromkeys("abc", "x"), c.per_item, c.reasons,
                         {"A": np.array([True, True, True])}, {}, {})
    assert list(out["status"]) == [it.CLEAN, it.UNDETERMINED, it.LABEL]
    assert out.loc[1, "reason"] == "certificate: phantoms, missing_atoms"
    real = _json.loads((Path(__file__).parents[1] / "data" / "certificates" / "v1" / "crystals.json").read_text())
    real["items"][1]["correct"], real["items"][1]["reasons"] = False, ["symmetry_changed"]
    real["summary"]["correct"] -= 1
    p = tmp_path / "edited.json"
    p.write_text(_json.dumps(real))
    ids = [i["id"] for i in real["items"]]
    c = ceiling_from_certificate(p, ids, allow_stale=True)
    assert c.reasons[1] == "symmetry_changed" and not c.per_item[1] and all(r == "" for i, r in enumerate(c.reasons)
                                                                            if i != 1)


class _FreeArm:
    def __init__(self, v, answers, scored=True):
        self.correct_vector, self.answers, self.scored = np.asarray(v, bool), tuple(answers), scored


def test_shortcut_term_pairs_by_hand():
    """Shortcut term R4_i (free_i − text_i), text reader right on item 0 only. A: R4 1101, no-image 1011 →
    0, 0, 0, 1. B: R4 1011, no-image without a single answer, so its choices-only arm 0011 → −1, 0, 1, 1.
    A above B on item 0, B above A on item 2: 1:1."""
    from viewcert.attribution.pairs import SHORTCUT, ladder_vectors, shortcut_vectors

    arms = {("A", "R4"): _FreeArm([1, 1, 0, 1], "xxxx"), ("A", "no-image"): _FreeArm([1, 0, 1, 1], "xxxx"),
            ("B", "R4"): _FreeArm([1, 0, 1, 1], "xxxx"), ("B", "no-image"): _FreeArm([0, 0, 0, 0], [None] * 4),
            ("B", "choices-only"): _FreeArm([0, 0, 1, 1], "xxxx")}
    text = np.array([True, False, False, False])
    v = shortcut_vectors(arms, text)
    assert v["A"].tolist() == [0, 0, 0, 1] and v["B"].tolist() == [-1, 0, 1, 1]
    fam = ladder_vectors(arms, ("R4",), text)
    assert set(fam) == {"R4", SHORTCUT}
    r = pair_tests(fam).set_index("family").loc[SHORTCUT]
    assert (r["a_only"], r["b_only"], r["p_value"]) == (1, 1, 1.0)


def test_cli_subset_out_of_range_is_one_line_exit_2(tmp_path):
    res = _run(tmp_path, {"a.csv": _arm("A"), "b.csv": _arm("B", right=3), "c.csv": _arm("C", right=9)},
               "--subset-size", "12")
    text = (res.stderr or "") + res.output
    assert res.exit_code == 2 and "--subset must be between 1 and 11 (the items), got 12" in text
    assert not (tmp_path / "out" / "subset_ids.txt").exists()
