"""A streamed certificate's item table received from someone else (``certify.stream``, ``formats.table``):
its folder (``items_table.folder``) is received as ``verify_table.receive_table`` receives shards, and each shard
is opened once, a symlink not followed and a FIFO never waited on, so nothing can be swapped in between a check
and the read. Each refusal is one ``InputError`` naming the file and the field.

The table here is made by hand from the format's definition (two shards of error items; a shard's SHA-256 over
its items' canonical lines, the chain over those), so no certification runs."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from viewcert.certify import stream as T
from viewcert.errors import InputError
from viewcert.formats.reader import receive
from viewcert.formats.records import TABLE_CERTIFICATE_FORMAT, digest_record
from viewcert.io.atomic import json_dumps

SHARDS = ([{"id": "a", "outcome": "error", "correct": False, "error": "unreadable"}],
          [{"id": "b", "outcome": "error", "correct": False, "error": "unreadable"},
           {"id": "c", "outcome": "error", "correct": False, "error": "unreadable"}])


@pytest.fixture()
def out(tmp_path) -> Path:
    """OUT/certificate.json beside OUT/items/part-00000{0,1}.parquet, consistent (digest, chain, shapes)."""
    out = tmp_path / "out"
    (out / "items").mkdir(parents=True)
    shards = []
    for k, items in enumerate(SHARDS):
        name = f"part-{k:06d}.parquet"
        (out / "items" / name).write_bytes(T.shard_bytes(items, "fingerprint"))
        shards.append({"name": name, "n": len(items), "sha256": T.shard_sha256(items)})
    body = {"format": TABLE_CERTIFICATE_FORMAT, "inputs": {"spec": "hand-made", "files": {}}, "config": {},
            "summary": {}, "items_table": {"format": T.TABLE_FORMAT, "folder": "items", "shard_items": 2,
                                           "shards": shards, "chain": T.chain(s["sha256"] for s in shards)}}
    (out / "certificate.json").write_text(json_dumps({**body, "digest": digest_record(body)}))
    return out


def _cert(out: Path, folder: str | None = None) -> dict:
    import json

    cert = json.loads((out / "certificate.json").read_text())
    if folder is not None:
        cert["items_table"]["folder"] = folder
    return cert


def test_the_hand_made_table_reads(out):
    assert [it.id for it in T.read_table(out, _cert(out))] == ["a", "b", "c"]
    assert [r["id"] for r in receive(out / "certificate.json", streamed=True).certificate.r1_rows()] == ["a", "b", "c"]


def _folder_cases(out: Path, tmp_path: Path) -> dict[str, str]:
    """Hostile ``items_table.folder`` values, each pointing at a real copy of the table, so only the rule refuses."""
    shutil.copytree(out / "items", tmp_path / "elsewhere")
    (out / "real").mkdir()
    shutil.copytree(out / "items", out / "real" / "items")
    (out / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (out / "inner").symlink_to(out / "real", target_is_directory=True)  # a link inside out: still a link
    return {"dotdot": "../elsewhere", "absolute": str(tmp_path / "elsewhere"), "through": "items/../../elsewhere",
            "link-out": "link", "link-component": "inner/items", "empty": "", "nul": "it\x00ems",
            "file": "items/part-000000.parquet"}


@pytest.mark.parametrize("case", ["dotdot", "absolute", "through", "link-out", "link-component", "empty", "nul",
                                  "file"])
def test_a_hostile_items_folder_is_refused_before_any_read(out, tmp_path, case):
    folder = _folder_cases(out, tmp_path)[case]
    with pytest.raises(InputError) as err:
        list(T.read_table(out, _cert(out, folder)))
    text = str(err.value)
    # the table record is received as verify receives it: the folder is exactly "items" (formats.table)
    assert text == f"file {out / 'certificate.json'}, field items_table.folder: must be 'items'"
    assert [it.id for it in T.read_table(out, _cert(out))] == ["a", "b", "c"]  # the certificate's own items/


def _within(fn, fifo: Path, seconds: float = 20.0):
    """(value, error) of ``fn()`` run in a thread; a call still blocked after ``seconds`` fails the test (a writer
    is opened on ``fifo`` first, so the thread ends)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            box["error"] = exc
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("a shard reader waited on a FIFO")
    return box.get("value"), box.get("error")


def _plant(out: Path, tmp_path: Path, what: str) -> Path:
    """Shard 1 replaced by a symlink to a copy of it outside, or by a FIFO; its path."""
    shard = out / "items" / "part-000001.parquet"
    if what == "symlink":
        shutil.move(shard, tmp_path / "copy.parquet")
        shard.symlink_to(tmp_path / "copy.parquet")
    else:
        shard.unlink()
        os.mkfifo(shard)
    return shard


@pytest.mark.parametrize("what", ["symlink", "fifo"])
def test_a_shard_swapped_after_the_check_is_refused_without_waiting(out, tmp_path, what):
    """The certificate is received (``formats.reader.receive``: every shard a regular file inside items/), then shard 1 is
    swapped for a symlink or a FIFO: every reader refuses it in one line, at once, from its one open."""
    tc = receive(out / "certificate.json", streamed=True).certificate  # the check passes on the real shards
    shard = _plant(out, tmp_path, what)
    said = "is a symbolic link; it is not followed" if what == "symlink" else "is a FIFO (named pipe)"
    readers = {"read_table": lambda: list(T.read_table(out, _cert(out))), "read_shard": lambda: T.read_shard(shard),
               "explore": lambda: list(tc.items()), "ladder": lambda: list(tc.r1_rows())}
    # read_table receives the table record first (formats.table.shards_inside), so it refuses the swapped shard there
    record_check = f"file {shard}, field items_table.shards: shard is not a regular file inside the certificate's items/"
    for name, fn in readers.items():
        value, error = _within(fn, shard)
        assert isinstance(error, InputError), (name, value, error)
        if name == "read_table":
            assert str(error).startswith(record_check), str(error)
        else:
            assert str(error).startswith(f"file {shard}: ") and said in str(error), (name, str(error))
