"""Readers of the streamed certificate (``certify.stream``): ``viewcert verify`` recomputes it shard by shard
(``certify.verify_table``); ``explore`` and ``ladder`` read it lazily (``tests/certify/test_table_readers.py``).

The forged certificates here are made by hand from the format's definition (a shard's SHA-256 over its items'
canonical lines, the chain, the certificate digest), so only the recomputation can tell them from the real one."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.certificate_checks import assert_certificate_consistent
from viewcert.certify import CertifyConfig
from viewcert.certify import stream as T
from viewcert.certify.inputs import load_input
from viewcert.certify.run import certify_streamed
from viewcert.cli import app
from viewcert.formats.records import compute_digest

MANIFEST = Path(__file__).resolve().parents[1] / "data" / "harness" / "manifest_example.toml"
N_PROTOTYPES = 20  # builtin:prototypes: 20 structures, every one certified (tests/certify/test_certify_stream.py)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A streamed certify output of builtin:prototypes in shards of 7 items (7, 7, 6)."""
    out = tmp_path_factory.mktemp("table") / "out"
    certify_streamed(load_input("builtin:prototypes"), CertifyConfig(), out, n_workers=1, progress=False,
                     shard_items=7)
    return out


@pytest.fixture()
def out(made, tmp_path) -> Path:
    dst = tmp_path / "out"
    shutil.copytree(made, dst)
    return dst


def _cli(*argv: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(argv))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception  # never a traceback
    return res.exit_code, res.output


def _verify(target: Path) -> tuple[int, str]:
    return _cli("verify", str(target), "--workers", "1")


def _redigest(cert: dict) -> dict:
    """The certificate's chain and digest recomputed from its recorded shards, by their definition."""
    c = hashlib.sha256(b"viewcert-item-table/1").hexdigest()
    for s in cert["items_table"]["shards"]:
        c = hashlib.sha256(f"{c}:{s['sha256']}".encode()).hexdigest()
    cert["items_table"]["chain"] = c
    cert["digest"]["value"] = compute_digest(cert)
    return cert


def _rewrite(out: Path, cert: dict) -> None:
    (out / "certificate.json").write_text(json.dumps(_redigest(cert), indent=1))


def _cert(out: Path) -> dict:
    cert = json.loads((out / "certificate.json").read_text())
    assert_certificate_consistent(cert)
    return cert


def test_verify_recomputes_a_streamed_certificate(out):
    code, text = _verify(out / "certificate.json")
    assert code == 0, text
    assert text.splitlines() == ["digest: ok", f"verified: {N_PROTOTYPES} items recomputed, byte-identical"]
    code, text = _verify(out)  # the certify output folder: its certificate.json
    assert code == 0 and text.endswith("byte-identical\n"), text


def test_verify_finds_a_forged_item_with_a_consistent_chain(out):
    """Shard 1's first item says ``correct: false``; shard, chain and digest are re-made consistently, so only
    the recomputation can find it: one item differs, exit 1."""
    cert, shard = _cert(out), out / "items" / "part-000001.parquet"
    meta, items = T.read_shard(shard)
    forged_id = items[0]["id"]
    assert items[0]["correct"] is True
    items[0]["correct"] = False
    line_bytes = b"".join((json.dumps(it, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode()
                          for it in items)
    assert T.shard_sha256(items) == hashlib.sha256(line_bytes).hexdigest()  # the definition, by hand
    shard.write_bytes(T.shard_bytes(items, meta["fingerprint"]))
    cert["items_table"]["shards"][1]["sha256"] = hashlib.sha256(line_bytes).hexdigest()
    cert["summary"]["correct"] -= 1  # the forger's summary agrees with the forged table
    _rewrite(out, cert)
    code, text = _verify(out)
    assert code == 1, text
    assert f"item {forged_id}: correct: certificate False vs recomputed True" in text
    assert f"1 of {N_PROTOTYPES} items differ" in text
    assert "summary.correct: certificate 19 vs recomputed 20" in text


def test_verify_refuses_an_edited_certificate_and_a_tampered_shard_in_one_line(out):
    cert = _cert(out)
    cert["summary"]["correct"] = 3
    (out / "certificate.json").write_text(json.dumps(cert, indent=1))  # digest not re-made: stale
    code, text = _verify(out)
    assert code == 2 and len(text.strip().splitlines()) == 1 and "stale certificate" in text, text
    _rewrite(out, cert)
    shutil.copy(out / "items" / "part-000000.parquet", out / "items" / "part-000001.parquet")  # another shard
    code, text = _verify(out)
    assert code == 2 and len(text.strip().splitlines()) == 1 and "part-000001.parquet" in text, text


@pytest.mark.parametrize("edit, where", [
    (lambda c: c["items_table"]["shards"][0].update(name="../../x.parquet"), "items_table.shards"),
    (lambda c: c["items_table"].update(folder="/etc"), "items_table.folder"),
    (lambda c: c["items_table"].update(shards="part-000000.parquet"), "items_table.shards"),
    (lambda c: c["items_table"].update(shard_items=0), "items_table.shard_items"),
    (lambda c: c["items_table"].update(chain="0" * 64), "items_table.chain"),
])
def test_verify_hostile_table_certificates_exit_2_before_any_work(out, edit, where):
    cert = _cert(out)
    edit(cert)
    if where in ("items_table.folder", "items_table.shard_items"):
        _redigest(cert)
    cert["digest"]["value"] = compute_digest(cert)  # only the shape (or the chain) is wrong
    (out / "certificate.json").write_text(json.dumps(cert, indent=1))
    code, text = _verify(out)
    assert code == 2 and len(text.strip().splitlines()) == 1 and f"field {where}" in text, text


def test_verify_missing_shard_is_one_line(out):
    (out / "items" / "part-000002.parquet").unlink()
    code, text = _verify(out)
    assert code == 2 and len(text.strip().splitlines()) == 1 and "part-000002.parquet" in text, text
    assert "missing" in text


@pytest.mark.parametrize("name", ["../x.parquet", "../../items/part-000000.parquet", "/tmp/part-000000.parquet",
                                  "items/part-000000.parquet", "part-000000.parquet/../part-000000.parquet"])
def test_verify_refuses_a_shard_name_reaching_outside_the_folder(out, tmp_path, name):
    """A shard name that is not the bare ``part-000000.parquet`` (a relative path out, an absolute path, a
    folder in front) is refused from the certificate alone, even when a file lies where the name points."""
    outside = tmp_path / "x.parquet"
    shutil.copy(out / "items" / "part-000000.parquet", outside)
    cert = _cert(out)
    cert["items_table"]["shards"][0]["name"] = name
    _rewrite(out, cert)  # chain and digest consistent: only the name is wrong
    code, text = _verify(out)
    assert code == 2 and len(text.strip().splitlines()) == 1, text
    assert "field items_table.shards" in text and "shard 0 must be" in text, text


def _link_out(out: Path, tmp_path: Path, what: str) -> Path:
    """Shard 1 (or the whole items/ folder) moved out of the certificate's folder and a symlink left in its
    place, pointing at the same bytes; the path the refusal names."""
    items = out / "items"
    if what == "shard":
        shard = items / "part-000001.parquet"
        shutil.move(shard, tmp_path / "elsewhere.parquet")
        shard.symlink_to(tmp_path / "elsewhere.parquet")
        return shard
    if what == "shard-inside":  # a link to a copy inside the certificate's folder: still not the shard itself
        shard = items / "part-000001.parquet"
        shutil.move(shard, out / "copy.parquet")
        shard.symlink_to(out / "copy.parquet")
        return shard
    shutil.move(items, tmp_path / "items-elsewhere")
    items.symlink_to(tmp_path / "items-elsewhere", target_is_directory=True)
    return items / "part-000000.parquet"


@pytest.mark.parametrize("what", ["shard", "shard-inside", "folder"])
def test_verify_refuses_a_shard_symlink_in_one_line(out, tmp_path, what):
    """A shard (or the items/ folder) that is a symlink is refused before any recomputation, one line naming the
    shard, exit 2; explore and ladder refuse the same link (tests/certify/test_table_readers.py)."""
    named = _link_out(out, tmp_path, what)
    code, text = _verify(out)
    assert code == 2 and len(text.strip().splitlines()) == 1, text
    assert str(named) in text and "inside the certificate's items/ folder" in text, text
    assert "field items_table.shards" in text, text
