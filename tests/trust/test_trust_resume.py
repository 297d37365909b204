"""Shards carry a digest checked on reuse (issue 23): a shard edited to different valid JSON between runs is
not copied into the certificate on resume; it is recomputed, a warning line names it, and the "resumed"
line counts it. The certificate equals the clean run's byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.hostile.corpus import GOOD_CIF, GOOD_CIF_2
from viewcert.cli import app
from viewcert.errors import InputError
from viewcert.parallel import MANIFEST, map_items, shard_digest


def _square(x):
    return {"x": x, "y": x * x}


def _certify(folder: Path, out: Path):
    res = CliRunner().invoke(app, ["certify", str(folder), "--workers", "1", "--no-plots", "--truth", "rendered",
                                   "--out", str(out)])
    return res, res.output


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    d = tmp_path_factory.mktemp("resume")
    (d / "in").mkdir()
    (d / "in" / "nacl.cif").write_text(GOOD_CIF)
    (d / "in" / "cscl.cif").write_text(GOOD_CIF_2)
    res, out = _certify(d / "in", d / "out")
    assert res.exit_code == 0, out
    return d, (d / "out" / "certificate.json").read_bytes()


def _shards(out: Path) -> list[Path]:
    return sorted(p for p in (out / ".shards").rglob("shard-*.json"))


def test_edited_shard_is_recomputed_with_a_warning(clean):
    d, cert_bytes = clean
    shards = _shards(d / "out")
    assert len(shards) == 2  # two items, one per chunk
    victim = shards[0]
    data = json.loads(victim.read_text())
    item = data["results"][0]["geometric"]  # certify's one pass keeps each item's geometric and as-rendered records
    # a plausible forgery: the item flips to a wrong, uncertified answer; the stored digest is left as it was
    item["correct"] = not item["correct"]
    item["outcome"] = "forged"
    victim.write_text(json.dumps(data))
    res, out = _certify(d / "in", d / "out")
    assert res.exit_code == 0, out
    warnings = [line for line in out.splitlines() if line.startswith("viewcert: warning: shard")]
    assert len(warnings) == 1 and victim.name in warnings[0] and str(victim.parent) in warnings[0], out
    assert "digest" in warnings[0]
    assert "resumed 1 of 2 items" in out and "(1 shard recomputed" in out, out
    assert (d / "out" / "certificate.json").read_bytes() == cert_bytes
    # the recomputed shard is written again with a matching digest: the next resume reuses both, silently
    res, out = _certify(d / "in", d / "out")
    assert "resumed 2 of 2 items" in out and "warning" not in out, out
    assert (d / "out" / "certificate.json").read_bytes() == cert_bytes


def test_shard_without_digest_is_not_reused(clean):
    d, cert_bytes = clean
    victim = _shards(d / "out")[1]
    data = json.loads(victim.read_text())
    del data["sha256"]
    victim.write_text(json.dumps(data))
    res, out = _certify(d / "in", d / "out")
    assert res.exit_code == 0, out
    assert f"shard {victim}" in out and "resumed 1 of 2 items" in out, out
    assert (d / "out" / "certificate.json").read_bytes() == cert_bytes


def test_digest_is_of_the_canonical_payload():
    """Hand-worked: the digest is SHA-256 of the one-line, key-sorted JSON of keys and results."""
    import hashlib

    text = '{"keys":["a"],"results":[{"x":1,"y":1}]}\n'
    assert shard_digest(["a"], [{"y": 1, "x": 1}]) == hashlib.sha256(text.encode()).hexdigest()


def test_map_items_lists_what_it_recomputed(tmp_path):
    wd = tmp_path / "w"
    first = map_items(_square, list(range(6)), workdir=wd, chunk_size=2, n_workers=1)
    assert json.loads((wd / MANIFEST).read_text())["n_items"] == 6
    shard = wd / "shard-000002.json"
    data = json.loads(shard.read_text())
    data["results"][1]["y"] = 26  # 5 * 5 = 25
    shard.write_text(json.dumps(data))
    (wd / "shard-000000.json").unlink()  # simply missing: recomputed, nothing to warn about
    again = map_items(_square, list(range(6)), workdir=wd, chunk_size=2, n_workers=1)
    assert again.results == first.results and again.results[5] == {"x": 5, "y": 25}
    assert list(again.shards_recomputed) == ["shard-000002.json"]
    assert "digest" in again.shards_recomputed["shard-000002.json"]
    assert (again.n_resumed, again.n_computed) == (2, 4)


def test_shard_text_is_the_deterministic_json_of_the_shard():
    from viewcert.io.atomic import json_dumps
    from viewcert.parallel import shard_text

    keys, results = ["a", "b"], [{"x": 1.5, "n": float("nan")}, {"s": "\u202e"}]
    full = {"keys": keys, "results": results, "sha256": shard_digest(keys, results)}
    assert shard_text(keys, results) == json_dumps(full, indent=None, allow_nan=True)


def test_reformatted_but_unchanged_shard_is_reused(tmp_path):
    """Only the values count: the same shard re-serialised (indented, other key order) is still reused."""
    wd = tmp_path / "w"
    map_items(_square, list(range(4)), workdir=wd, chunk_size=2, n_workers=1)
    shard = wd / "shard-000001.json"
    data = json.loads(shard.read_text())
    shard.write_text(json.dumps({"sha256": data["sha256"], "results": data["results"], "keys": data["keys"]},
                                indent=4))
    again = map_items(_square, list(range(4)), workdir=wd, chunk_size=2, n_workers=1)
    assert (again.n_resumed, again.shards_recomputed) == (4, {})


def test_sweep_warns_about_an_edited_shard_like_certify(tmp_path):
    """``viewcert sweep`` resumes from OUT/.shards too: an edited shard is recomputed with the same warning
    line as certify's and counted in the "resumed" line; the tables equal the clean run's byte for byte."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "nacl.cif").write_text(GOOD_CIF)
    (tmp_path / "in" / "cscl.cif").write_text(GOOD_CIF_2)
    argv = ["sweep", str(tmp_path / "in"), "--deltas", "0.01,0.02", "--workers", "1", "--out", str(tmp_path / "o")]
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0 and "resumed" not in res.output and "warning" not in res.output, res.output
    tables = {p.name: p.read_bytes() for p in (tmp_path / "o").glob("*.csv")}
    shards = _shards(tmp_path / "o")
    assert len(shards) == 2
    victim = shards[1]
    data = json.loads(victim.read_text())
    data["results"][0][0]["correct"] = not data["results"][0][0]["correct"]  # item 0 of the chunk, config 0
    victim.write_text(json.dumps(data))
    res = CliRunner().invoke(app, argv)
    assert res.exit_code == 0, res.output
    warnings = [line for line in res.output.splitlines() if line.startswith("viewcert: warning: shard")]
    assert len(warnings) == 1 and str(victim) in warnings[0] and "digest" in warnings[0], res.output
    assert "recomputed" in warnings[0]
    assert f"resumed 1 of 2 items from {tmp_path / 'o' / '.shards'} (1 shard recomputed" in res.output, res.output
    assert {p.name: p.read_bytes() for p in (tmp_path / "o").glob("*.csv")} == tables
    res = CliRunner().invoke(app, argv)  # rewritten with its digest: reused silently
    assert "resumed 2 of 2 items" in res.output and "warning" not in res.output, res.output


def test_a_folder_in_a_shard_place_is_one_line_before_any_work(tmp_path):
    """A shard replaced by a folder cannot be recomputed (no file can be renamed over a folder): the resume
    refuses it in one line naming it, before any item is computed, instead of computing and then failing."""
    calls = []

    def square(x):
        calls.append(x)
        return _square(x)

    map_items(square, [1, 2, 3], keys=["a", "b", "c"], n_workers=1, chunk_size=1, workdir=tmp_path)
    victim = sorted(tmp_path.rglob("shard-*.json"))[1]
    victim.unlink()
    victim.mkdir()
    calls.clear()
    with pytest.raises(InputError, match="a folder stands where a shard is kept") as err:
        map_items(square, [1, 2, 3], keys=["a", "b", "c"], n_workers=1, chunk_size=1, workdir=tmp_path)
    assert victim.name in str(err.value) and calls == []
