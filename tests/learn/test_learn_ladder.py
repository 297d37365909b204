"""``viewcert ladder`` on the study's e3 data with the learned readers' output folder, built as
``benchmarks/bench_learn.py`` builds it (``viewcert learn`` into one folder, its ``ladder.toml``): the rung
"learned reader: cell metrics" always, "learned reader: pixels" when torch is installed, beside the study's
R4 and R3 arms and R1. Kept fast: the forest as specified, the pixel reader tiny (70 training structures,
16 px, one epoch, no learning curve); its accuracy is not the point here (bench_learn measures it), only that
it is a rung."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.shared_data


def _row(lines: list[str], rung: str) -> list[str]:
    return [line for line in lines if line.startswith("|") and f"| {rung} |" in line]


def test_ladder_shows_learned_rungs_beside_r4_r3_r1(shared_data, tmp_path):
    pytest.importorskip("sklearn")
    from typer.testing import CliRunner

    from viewcert.cli import app
    from viewcert.learn.run import run_learn

    e3, out = shared_data / "data" / "e3", tmp_path / "learn"
    forest = run_learn(str(e3), "cell-forest", out)
    assert 183 <= forest.correct <= 188 and forest.n == 210  # the study's twelve readings of its forest
    torch = importlib.util.find_spec("torch") is not None
    if torch:  # trained on 10 structures of each system (renders 280 items, not 1,820): a rung, not a figure
        from dataclasses import replace

        from viewcert.learn.data import Split, load_learn_data
        from viewcert.learn.pixel import run_cnn

        d = load_learn_data(e3)
        keep = [k for cs in sorted(set(d.train.labels))
                for k in [i for i, lab in enumerate(d.train.labels) if lab == cs][:10]]
        small = Split(*(tuple(getattr(d.train, f)[k] for k in keep) for f in ("ids", "labels", "items")))
        pixels = run_cnn(replace(d, train=small), out, image_size=16, epochs=1, curve_sizes_=())
        assert pixels.n == 210
    r = CliRunner().invoke(app, ["ladder", "--manifest", str(out / "ladder.toml"), "--r1", "210/210@0.01",
                                 "--n-boot", "200", "--out", str(tmp_path / "ladder")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "ladder" / "summary.md").read_text()
    lines = md.splitlines()
    for rung in ("R4", "R3", "learned reader: cell metrics"):
        assert _row(lines, rung), f"no {rung} row in summary.md"
    assert any(f"{forest.correct}/210" in line for line in _row(lines, "learned reader: cell metrics"))
    assert bool(_row(lines, "learned reader: pixels")) == torch
    assert "R1" in md and "210/210" in md
    assert "vision model" not in md.replace("vision-language model", "")  # the forest is never called one
