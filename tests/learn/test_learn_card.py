"""What a learned reader writes, read back: ``predictions.csv`` follows the one table-cell rule (issue 32:
ids starting with ``= + - @`` are written with a leading ``'`` and read back as they were by the native
reader), and the reader's ``report.md`` shows accuracy, the learning curve and the confusion matrix."""

from __future__ import annotations

import csv
import io

import pytest

from viewcert.learn.card import write_reader
from viewcert.learn.data import LearnData, Split

HOSTILE = ("=HYPERLINK(\"http://x\")", "+1-2", "-mp-5", "@SUM(A1)", "'quoted", "mp-1|x")


class _It:
    def __init__(self, i):
        self.id, self.sha256 = i, "0" * 64


def _data(ids, labels, source="bench|mark"):
    ev = Split(tuple(ids), tuple(labels), tuple(_It(i) for i in ids))
    tr = Split(("t1",), ("cubic",), (_It("t1"),))
    return LearnData(tr, ev, source, "train", {})


def test_hostile_ids_round_trip_through_the_native_reader(tmp_path):
    from viewcert.attribution.readers import read_file

    labels = ["cubic", "hexagonal", "cubic", "trigonal", "cubic", "monoclinic"]
    folder = write_reader(tmp_path, "cell-forest", _data(HOSTILE, labels), labels, {"seed": 23})
    text = (folder / "predictions.csv").read_text()
    raw = list(csv.DictReader(io.StringIO(text)))
    # OWASP's rule: a cell starting with = + - @ (or ') gets a leading ' in the file
    assert [r["item_id"] for r in raw] == ["'" + i for i in HOSTILE[:5]] + ["mp-1|x"]
    t = read_file(folder / "predictions.csv").frame
    assert list(t["item_id"]) == list(HOSTILE)
    assert int((t["parsed_answer"] == t["target"]).sum()) == 6


def test_report_shows_curve_and_confusion(tmp_path):
    ids = [f"x{k}" for k in range(4)]
    truth = ["cubic", "cubic", "hexagonal", "trigonal"]
    pred = ["cubic", "hexagonal", "hexagonal", "hexagonal"]
    curve = [{"n_train": 200, "correct": 1, "n": 4}, {"n_train": 400, "correct": 2, "n": 4}]
    folder = write_reader(tmp_path, "pixel-cnn", _data(ids, truth), pred,
                          {"seed": 0, "training_curve": curve, "protocol": "axes-3", "image_size": 32})
    md = (folder / "report.md").read_text()
    lines = md.splitlines()
    assert lines[0] == "# pixel-cnn: learned reader: pixels"
    assert "- eval input: bench\\|mark" in lines  # the received name is escaped: no table cell forms
    assert "- seed: 0; protocol: axes-3; image size: 32 px" in lines
    # 2 of 4: Clopper-Pearson [0.068, 0.932] (Beta(2, 3) and Beta(3, 2) quantiles, symmetric about 1/2)
    assert any(line.startswith("- **2/4 = 0.500**, exact 95 % interval [0.068, 0.932]") for line in lines)
    # 1 of 4: lower bound 1 - 0.975^(1/4) = 0.0063, upper solves P(X <= 1 | 4, p) = 0.025: 0.806
    assert "| 200 | 1/4 | 0.250 | [0.006, 0.806] |" in lines
    assert "| 400 | 2/4 | 0.500 | [0.068, 0.932] |" in lines
    head = "| truth | triclinic | monoclinic | orthorhombic | tetragonal | trigonal | hexagonal | cubic | n |"
    assert head in lines
    assert "| cubic | 0 | 0 | 0 | 0 | 0 | 1 | 1 | 2 |" in lines
    assert "| hexagonal | 0 | 0 | 0 | 0 | 0 | 1 | 0 | 1 |" in lines
    assert "| trigonal | 0 | 0 | 0 | 0 | 0 | 1 | 0 | 1 |" in lines


def test_clopper_pearson_values_used_above():
    """The two hand-derived intervals of the report test, from SciPy's beta quantiles."""
    from scipy.stats import beta

    assert round(beta.ppf(0.025, 2, 3), 3) == 0.068 and round(beta.ppf(0.975, 3, 2), 3) == 0.932
    assert round(1 - 0.975 ** 0.25, 3) == 0.006 and round(beta.ppf(0.975, 2, 3), 3) == 0.806
    assert beta.ppf(0.025, 1, 4) == pytest.approx(1 - 0.975 ** 0.25, abs=1e-12)
