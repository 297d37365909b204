"""Certificate formats, read by version (the ``format`` field), so that every certificate written before a
format change still verifies.

- ``viewcert-certificate/1``: no framing policy recorded. Its cameras were framed on the atom centres
  (margin 16 px, crystals per view, molecules at ``molecule_scale``): ``read_config`` reads it as
  ``frame_on = "centres"``, the one policy /1 had. Its truth rule: the rendered (standardised) cell's label.
- ``viewcert-certificate/2``: the framing policy in ``config.frame_on`` and ``protocol.camera.policy``; the
  truth rule of issue 23 (the input cell's label at the stated tolerances, items flagged where the
  standardisation raised the symmetry) and the records that state it.

- ``viewcert-certificate/3``: every float at the resolution the certificate states in ``resolution``
  (:mod:`viewcert.resolution`, issue 37). A /2 or /1 certificate wrote floats to 9 significant digits, rounding
  noise included: ``in_format`` drops ``resolution`` and ``verify`` compares the older certificate's values at
  the resolution /3 states (``certify.verify.compare``), never byte for byte.

One /2 for both: the truth rule landed before the framing policy's format bump, so every /2 certificate
has its fields. ``items[].reading`` came later, but an item that records it (a file with alternate locations)
was refused before, so no /2 certificate lacks it where it applies.

``in_format`` writes a recomputed certificate in an older certificate's format, so ``verify`` compares like
with like: every field added since that format (:data:`SINCE_V1`, one row per field) is dropped or restated
as the older format wrote it, and the digest is recomputed; it never changes what was computed. What /1 could
not hold and that changes an item's score is kept (:data:`KEPT_IN_V1`), so ``verify`` reports it as a
difference naming the item and the reason: a /1 certificate whose item the current truth rule scores
otherwise does not verify, and says why.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from viewcert.errors import InputError
from viewcert.formats.records import (
    CEILING_FORMAT,
    CEILING_FORMAT_V1,
    CEILING_FORMAT_V2,
    INTERACTION_FORMAT,
    INTERACTION_FORMAT_V1,
    INTERACTION_FORMAT_V2,
    CeilingCertificate,
    compute_digest,
    cross_check_disagreements,
)

V1 = CEILING_FORMAT_V1
V2 = CEILING_FORMAT_V2
FORMAT = CEILING_FORMAT

#: the crystal/molecule formats ``read_config`` and ``in_format`` take
FORMATS = CeilingCertificate.FORMATS

#: ``scoring.rule`` as /1 wrote it (the rendered cell's label was the reference where no dataset label was)
V1_SCORING_RULE = ("correct = label of the reconstruction (spglib at tau) equals the reference label at the "
                   "scored level; reference = dataset label where present (truth='dataset'), else the rendered "
                   "cell's label")


@dataclass(frozen=True)
class Change:
    """One field a format gained: where it sits (``items[]``: in every item), how an older reading restates it
    (``drop`` or ``restate``) and why it came."""

    path: str
    action: str
    why: str


#: every field added since /1 (all in /2), and how a /1 reading restates it
SINCE_V1 = (
    Change("config.frame_on", "drop", "the framing policy; /1 framed the atom centres (read_config)"),
    Change("protocol.camera.policy", "drop", "the framing policy's record and rule"),
    Change("tolerances.input_cell", "drop", "the truth rule: the input cell's label at tau (issue 23)"),
    Change("tolerances.angle_tolerance_negative", "drop", "a negative angle tolerance is spglib's own rule"),
    Change("scoring.rule", "restate", "the rule's text names the input cell's label (V1_SCORING_RULE)"),
    Change("summary.n_symmetry_raised", "drop", "the count of items flagged symmetry_raised"),
    Change("summary.symmetry_raised", "drop", "the list of items flagged symmetry_raised"),
    Change("items[].cross_check.input", "drop", "moyopy's cross-check of the cell as read (an empty "
                                                "cross_check is null, as /1 wrote it)"),
    Change("summary.cross_check_disagreements", "restate", "listed from the restated items' cross_check"),
    Change("items[].reading", "drop", "the reader's choices (alternate locations kept; /1 refused them)"),
    Change("config.constraints", "drop", "the response constraints of an export's prompts (written only when "
                                         "some were asked; /1 exports asked none)"),
    Change("inputs.selection", "drop", "the part of the input an export certified (its questions' ids, the rule, "
                                       "which are shown mirrored); written only by exports, absent from /1"),
)

#: the field every kind gained in its format after /2 (view, interaction) or version 1 (task): dropped when a
#: recomputation is written in an older format (its floats stay at the resolution; verify compares at it)
SINCE_V2 = (Change("resolution", "drop", "every float at a stated resolution, noise written as 0 (issue 37)"),)

#: fields /1 did not have that are kept in a /1 reading: they change the item's score, so verify reports them
KEPT_IN_V1 = (
    Change("items[].symmetry_raised", "keep", "the standardisation raised the symmetry: the item is scored "
                                              "against the input cell's label (reasons, reference_source, "
                                              "correct and the summary differ with it)"),
)


def _check(fmt: object) -> None:
    if fmt not in FORMATS:
        raise InputError(f"unknown certificate format {fmt!r}; known: {FORMATS}", field="format")


def read_config(cert: dict[str, Any]) -> dict[str, Any]:
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


def _drop(node: dict[str, Any], keys: list[str]) -> None:
    for k in keys[:-1]:
        inner = node.get(k)
        if not isinstance(inner, dict):
            return
        node = inner
    node.pop(keys[-1], None)


def _as_v1(cert: dict[str, Any]) -> None:
    """Restate ``cert`` (in place) as /1 wrote it, row by row of :data:`SINCE_V1`."""
    for ch in SINCE_V1:
        if ch.action == "drop" and ch.path.startswith("items[]."):
            for it in cert["items"]:
                _drop(it, ch.path[len("items[]."):].split("."))
        elif ch.action == "drop":
            _drop(cert, ch.path.split("."))
    for it in cert["items"]:
        if "cross_check" in it and not it["cross_check"]:
            it["cross_check"] = None
    cert["scoring"]["rule"] = V1_SCORING_RULE
    cert["summary"]["cross_check_disagreements"] = cross_check_disagreements(
        [it for it in cert["items"] if it.get("outcome") != "error"])


#: every field an interaction certificate gained since /1 (issue 26), and how a /1 reading restates it
INTERACTION_SINCE_V1 = (
    Change("complexes", "drop", "the complexes in input order by name, ligand and SHA-256, so that verify finds "
                                "them (/1 named them only as ground_truth keys)"),
    Change("digest", "restate", "one digest shape: /1 wrote the bare hex value (HEX_DIGEST_FORMATS)"),
)


def interaction_in_format(cert: dict[str, Any], fmt: str) -> dict[str, Any]:
    """A recomputed interaction certificate (the current format) written in format ``fmt``."""
    if fmt == INTERACTION_FORMAT:
        return cert
    if fmt == INTERACTION_FORMAT_V2:
        out = {k: v for k, v in cert.items() if k != "resolution"}
        out["format"] = fmt
        out["digest"] = dict(out["digest"], value=compute_digest(out))
        return out
    if fmt != INTERACTION_FORMAT_V1:
        raise InputError(f"unknown interaction certificate format {fmt!r}", field="format")
    out = {k: v for k, v in cert.items() if k not in ("complexes", "digest", "resolution")}
    out["format"] = fmt
    out["digest"] = compute_digest(out)
    return out


def in_format(cert: dict[str, Any], fmt: str) -> dict[str, Any]:
    """``cert`` (a certificate of the current format) written in format ``fmt`` (module docstring)."""
    _check(fmt)
    if fmt == FORMAT:
        return cert
    out = copy.deepcopy(cert)
    out["format"] = fmt
    for ch in SINCE_V2:
        _drop(out, ch.path.split("."))
    if fmt == V1:
        _as_v1(out)
    out["digest"]["value"] = compute_digest(out)
    return out
