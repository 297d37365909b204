"""The one reader of every certificate file (``viewcert.formats.reader``, issue 41 item 1), on the committed
fixtures: every kind typed with the exact round trip ``from_dict(d).to_dict() == d``, the file's SHA-256 computed
from its bytes here, a kind asked for refused by name, and a stale digest refused unless allowed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from viewcert.errors import InputError
from viewcert.formats import (
    CeilingCertificate,
    Certificate,
    InteractionCertificate,
    StaleCertificate,
    TaskCertificate,
    read,
    receive,
)

DATA = Path(__file__).resolve().parents[1] / "data"
FIXTURES = sorted([*(DATA / "certificates" / "v1").glob("*.json"), *(DATA / "exports" / "v1").glob("*/certificate.json")])
KIND = {"crystal": CeilingCertificate, "molecule": CeilingCertificate, "task": TaskCertificate,
        "interaction": InteractionCertificate}


def test_there_are_fixtures_of_every_kind():
    assert len(FIXTURES) == 12 and {p.parent.name for p in FIXTURES} >= set(KIND)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_certificate_reads_typed_and_round_trips_exactly(path):
    raw = path.read_bytes()
    got = receive(path)
    assert got.sha256 == hashlib.sha256(raw).hexdigest() and got.digest_ok and got.data == json.loads(raw)
    want = KIND.get(path.parent.name, CeilingCertificate)
    assert type(got.certificate) is want and isinstance(got.certificate, Certificate)
    assert got.certificate.to_dict() == json.loads(raw)
    assert read(path) == got.certificate


def test_a_kind_asked_for_refuses_another_naming_the_file():
    task = DATA / "exports" / "v1" / "task" / "certificate.json"
    with pytest.raises(InputError, match="not a crystal/molecule certificate") as exc:
        read(task, kind=CeilingCertificate)
    assert exc.value.source == str(task) and exc.value.field == "format"
    assert isinstance(read(task, kind=TaskCertificate), TaskCertificate)


def test_a_stale_digest_is_refused_unless_allowed(tmp_path):
    d = json.loads((DATA / "certificates" / "v1" / "crystals.json").read_text())
    d["summary"]["correct"] += 1  # edited after it was written: the stored digest no longer holds
    p = tmp_path / "stale.json"
    p.write_text(json.dumps(d))
    with pytest.raises(StaleCertificate, match="stale certificate") as exc:
        read(p)
    assert exc.value.field == "digest"
    got = receive(p, allow_stale=True)
    assert got.digest_ok is False and got.certificate.summary.correct == d["summary"]["correct"]


def test_a_streamed_certificate_is_read_only_where_asked(tmp_path):
    p = tmp_path / "certificate.json"
    p.write_text(json.dumps({"format": "viewcert-certificate-table/1"}))
    with pytest.raises(InputError, match="streamed certificate") as exc:
        read(p)
    assert exc.value.field == "format"
    with pytest.raises(InputError) as exc:  # asked for: read as one, its shape checked before any item
        read(p, streamed=True, allow_stale=True)
    assert exc.value.field == "inputs"
