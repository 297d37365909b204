"""Certificate formats, read by version (the ``format`` field), so that every certificate written before a
format change still verifies.

- ``viewcert-certificate/1``: no framing policy recorded. Its cameras were framed on the atom centres
  (margin 16 px, crystals per view, molecules at ``molecule_scale``): ``read_config`` reads it as
  ``frame_on = "centres"``, the one policy /1 had.
- ``viewcert-certificate/2``: the policy in ``config.frame_on`` and ``protocol.camera.policy``.

``in_format`` writes a recomputed certificate in an older certificate's format (the /2 records dropped, the
digest recomputed), so ``verify`` compares like with like; it never changes what was computed.
"""

from __future__ import annotations

import copy

from viewcert.certify.certificate import FORMAT, FORMATS, compute_digest
from viewcert.errors import InputError

V1 = "viewcert-certificate/1"


def _check(fmt) -> None:
    if fmt not in FORMATS:
        raise InputError(f"unknown certificate format {fmt!r}; known: {FORMATS}", field="format")


def read_config(cert: dict) -> dict:
    """The certificate's settings as ``CertifyConfig.from_dict`` takes them, the framing policy included."""
    _check(cert.get("format"))
    config = dict(cert["config"])
    if cert["format"] == V1:
        if "frame_on" in config:
            raise InputError("a /1 certificate records no framing policy, this one has config.frame_on",
                             field="config.frame_on")
        config["frame_on"] = "centres"
    elif "frame_on" not in config:
        raise InputError(f"a {cert['format']} certificate records its framing policy; config.frame_on is missing",
                         field="config.frame_on")
    return config


def in_format(cert: dict, fmt: str) -> dict:
    """``cert`` (a certificate of the current format) written in format ``fmt`` (module docstring)."""
    _check(fmt)
    if fmt == FORMAT:
        return cert
    out = copy.deepcopy(cert)
    out["format"] = fmt
    out["config"].pop("frame_on", None)
    out["protocol"]["camera"].pop("policy", None)
    out["digest"]["value"] = compute_digest(out)
    return out
