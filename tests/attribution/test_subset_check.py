"""Issue 56, item 4: the subset checked out of sample. Fold errors against a hand-worked case (least-squares line,
average ranks), the pool respected (no item the status table drops can enter), random subsets of the same size
scored in the same run, and a subset size outside the pool refused."""

from __future__ import annotations

import numpy as np
import pytest

from viewcert.attribution.quality import fit_2pl, propose_subset
from viewcert.attribution.subset_check import check_subset, fold_errors, most_informative
from viewcert.errors import InputError
from viewcert.stats import BootstrapSettings


def test_fold_errors_hand_worked():
    """Models m0..m3 on 4 items, the subset items 0 and 1 for every fold. Full accuracies 1, 0.5, 0.5, 0.25; on
    the subset 1, 1, 0.5, 0. Holding m1 out: the others' (subset, full) points (1, 1), (0.5, 0.5), (0, 0.25) give
    the least-squares line slope Σdxdy/Σdx² = (0.5·5/12 + 0.5·1/3)/0.5 = 0.75, intercept 7/12 − 0.375 = 5/24, so
    m1 is reconstructed at 0.75 + 5/24 = 23/24 (error 11/24); its rank (1 = best, ties averaged) is 2.5 on all
    items and 1.5 on the subset: rank error 1; accuracy error 1 − 0.5 = 0.5."""
    mat = np.array([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 1, 0], [0, 0, 0, 1]], float)
    f = fold_errors(mat, [np.array([0, 1])] * 4)
    r = f.iloc[1]
    assert r["reconstructed"] == pytest.approx(23 / 24, abs=1e-12)
    assert r["reconstruction_error"] == pytest.approx(11 / 24, abs=1e-12)
    assert (r["rank_full"], r["rank_subset"], r["rank_error"]) == (2.5, 1.5, 1.0)
    assert r["accuracy_error"] == pytest.approx(0.5)
    assert f["rank_full"].tolist() == [1.0, 2.5, 2.5, 4.0]


def _models(seed=5, n_models=6, n_items=60):
    rng = np.random.default_rng(seed)
    ability = np.linspace(-1.5, 1.5, n_models)
    difficulty = rng.normal(0, 1, n_items)
    p = 1 / (1 + np.exp(-(ability[:, None] - difficulty[None, :])))
    return {f"m{i}": rng.random(n_items) < p[i] for i in range(n_models)}


def test_subset_draws_only_from_the_pool_and_is_checked_beside_random_subsets():
    correct = _models()
    pool = [i for i in range(60) if i % 3]  # items 0, 3, 6, ... dropped by the status table
    y = np.vstack([correct[m] for m in sorted(correct)]).astype(float)
    keep, rec = propose_subset(correct, 12, fit_2pl(y, sorted(correct)), seed=1, candidates=pool)
    assert set(keep) <= set(pool) and len(keep) == 12 and rec["pool"] == 40
    check = check_subset(correct, 12, pool, bootstrap=BootstrapSettings(n_boot=200, seed=2), n_random=30,
                         max_swaps=300)
    assert len(check.folds) == 6 and len(check.random) == 30
    for k in ("mean_abs_rank_error", "mean_abs_accuracy_error", "reconstruction_rmse"):
        r = check.record[k]
        assert r["chosen_lo"] <= r["chosen"] <= r["chosen_hi"] and r["random_lo"] <= r["random_median"] <= r["random_hi"]
        assert 0 <= r["random_at_least_as_good"] <= 1
    # the chosen subsets' summaries are the folds' own: mean |rank error| recomputed from the table
    assert check.record["mean_abs_rank_error"]["chosen"] == pytest.approx(check.folds["rank_error"].mean())
    info = check.record["information"]
    assert set(info) == {"mean_abs_rank_error", "mean_abs_accuracy_error", "reconstruction_rmse"}
    # the same seed gives the same check
    again = check_subset(correct, 12, pool, bootstrap=BootstrapSettings(n_boot=200, seed=2), n_random=30,
                         max_swaps=300)
    assert again.record == check.record


def test_most_informative_by_hand():
    """Two abilities 0 and 0, items with (a, b) = (1, 0), (2, 0), (2, 3), (1, 5): information a² P(1 − P) per
    ability at P = σ(a(θ − b)): 0.25, 1.0, 4 σ(−6)(1 − σ(−6)) = 0.0099, σ(−5)(1 − σ(−5)) = 0.0066; twice each.
    The two most informative of the pool {0, 2, 3} are items 0 and 2, in that order."""
    from types import SimpleNamespace

    fit = SimpleNamespace(theta=np.zeros(2), difficulty=np.array([0.0, 0.0, 3.0, 5.0]),
                          discrimination=np.array([1.0, 2.0, 2.0, 1.0]))
    assert most_informative(fit, np.array([0, 2, 3]), 2).tolist() == [0, 2]
    assert most_informative(fit, np.arange(4), 1).tolist() == [1]


def test_subset_size_outside_the_pool_and_too_few_models_are_refused():
    correct = _models()
    with pytest.raises(InputError, match="items the status table keeps"):
        check_subset(correct, 40, list(range(40)))
    with pytest.raises(InputError, match="at least 4 models"):
        check_subset({k: correct[k] for k in ("m0", "m1", "m2")}, 5, list(range(60)))
