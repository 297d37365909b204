"""Notebook 03's molecular certificate (``ccd:IBP,BNZ,HOH,EDO,CLR,FC6`` through ``axes-3``: five CCD molecules
and one unreadable) keeps its bytes: its digest is a regression pin (viewcert's own output, not an independent
figure), written by the code before CertifyConfig became its parts and the item producer typed, and compared
byte for byte with the code after (issue 26: certificates unchanged by the refactor)."""

from __future__ import annotations

import pytest

from viewcert.certify import CertifyConfig
from viewcert.certify.run import certify
from viewcert.formats.records import CeilingCertificate, compute_digest

#: regression pin: the digest of notebook 03's first certificate (2026-12-03, the locked library versions),
#: format /3 (every float at its stated resolution; the /2 digest c98c9dbf… held one CPU's rounding noise)
NOTEBOOK_03_DIGEST = "c5c7e3a00af2375878270261167ea49fd6905486517706668243155ea0e873fa"


def test_notebook_03_certificate_keeps_its_bytes():
    pytest.importorskip("biotite")
    typed = certify("ccd:IBP,BNZ,HOH,EDO,CLR,FC6", CertifyConfig(protocol="axes-3"), n_workers=1, progress=False)
    cert = typed.to_dict()  # the JSON object the digest is computed over
    assert isinstance(typed, CeilingCertificate) and CeilingCertificate.from_dict(cert).to_dict() == cert
    assert typed.digest_value == compute_digest(cert) == NOTEBOOK_03_DIGEST
    # what the digest covers, stated independently: five molecules certified, FC6 an item error (no ideal
    # coordinates), not counted in R1
    assert [it.id for it in typed.items] == ["ccd:IBP", "ccd:BNZ", "ccd:HOH", "ccd:EDO", "ccd:CLR", "ccd:FC6"]
    assert [it.outcome == "error" for it in typed.items] == [False] * 5 + [True]
    assert typed.summary.kinds.to_dict() == {"crystals": 0, "molecules": 5}
