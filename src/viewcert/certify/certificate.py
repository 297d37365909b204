"""Certificates: a deterministic JSON record of a render-ceiling certification that anyone can recompute.

Contents: ``format``; ``inputs`` (spec, kind, SHA-256 of every input file; per item the SHA-256 of its
structure text); ``config`` (every setting); ``protocol`` (views with full 3×3 world→camera rotations,
ASE strings, κ per view pair, framing; per item a SHA-256 of the framed cameras); ``observation_model``;
``tolerances`` (δ, τ, angle tolerance, standardization tolerances); ``libraries`` (versions); ``items``
(per-item outcome, reasons, labels, counts, phantoms, hashes); ``summary`` (R1 with its exact bound,
census, failures); ``digest``.

Determinism: no timestamps or host names (run metadata goes to a separate ``run.json``); keys sorted;
floats rounded to fixed significant digits before writing and written in shortest round-trip form; items
in input order. The digest is the SHA-256 of the canonical compact JSON of everything except ``digest``
itself, so it does not depend on whitespace. The same inputs and settings give byte-identical files.

``verify_certificate`` re-reads the inputs (checking their hashes), recomputes every item with the recorded
settings, and reports every difference item by item.
"""

from __future__ import annotations

import hashlib
import json
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.certify.ceiling import CertifyConfig, _r, get_protocol_views, standardizer, summarize
from viewcert.certify.inputs import Dataset, load_input
from viewcert.errors import InputError
from viewcert.io.atomic import json_dumps, write_text_atomic

FORMAT = "viewcert-certificate/1"
DIGEST_SCOPE = "sha256 of the compact canonical JSON (sorted keys) of every top-level key except 'digest'"


def library_versions() -> dict[str, str]:
    import gemmi
    import numba
    import numpy
    import scipy

    from viewcert import __version__
    from viewcert.certify import _moyo, _spglib

    try:
        import pymatgen.core

        pmg = pymatgen.core.__version__
    except Exception:  # noqa: BLE001  # pragma: no cover
        pmg = "absent"
    return {
        "viewcert": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "spglib": _spglib.VERSION,
        "moyopy": _moyo.VERSION,
        "pymatgen": pmg,
        "gemmi": gemmi.__version__,
        "standardizer": standardizer(),
    }


def protocol_record(cfg: CertifyConfig) -> dict:
    from viewcert.cameras.conditioning import protocol_kappa
    from viewcert.cameras.framing import DEFAULT_MARGIN_PX

    p = get_protocol_views(cfg.protocol, cfg.views)
    views = []
    for v in p.views:
        d = {"name": v.name, "rotation": [[_r(x, 15) for x in row] for row in v.rotation.tolist()],
             "direction": [_r(x, 15) for x in v.direction.tolist()]}
        if v.ase_string is not None:
            d["ase_string"] = v.ase_string
        views.append(d)
    return {
        "name": p.name,
        "description": p.description,
        "views": views,
        "kappa": {k: _r(x, 6) for k, x in protocol_kappa(p).items()},
        "camera": {"kind": "orthographic", "width": cfg.image_size, "height": cfg.image_size,
                   "margin_px": DEFAULT_MARGIN_PX, "framing": "letterbox fit of the drawn atoms and cell box",
                   "convention": "rotation maps world to camera; rows = camera x (right), y (up), z (toward viewer)"},
    }


def build_certificate(dataset: Dataset, cfg: CertifyConfig, outcomes: list[dict]) -> dict:
    """The certificate dict (with its digest) for ``outcomes`` computed from ``dataset`` under ``cfg``."""
    if len(outcomes) != len(dataset.items):
        raise InputError(f"{len(outcomes)} outcomes for {len(dataset.items)} items", field="outcomes")
    model = cfg.observation_model().to_dict()
    model["observe"] = cfg.observe  # ideal | visible | pixel-centroid (render.visibility)
    model["min_pixels"] = cfg.min_pixels
    model["visibility"] = cfg.visibility
    cert = {
        "format": FORMAT,
        "inputs": dataset.to_dict(),
        "config": cfg.to_dict(),
        "protocol": protocol_record(cfg),
        "observation_model": model,
        "tolerances": {"delta": cfg.delta, "delta_unit": "angstrom", "tau": cfg.tau, "tau_unit": "angstrom",
                       "angle_tolerance": cfg.angle_tolerance, "angle_unit": "degree",
                       "cross_check": ("moyopy at tau with the same angle tolerance" if cfg.cross_check_angle
                                       else "moyopy at tau with its default angle handling")
                       if cfg.cross_check else "off",
                       "standardization": {"symprec": cfg.std_symprec, "angle_tolerance": cfg.std_angle_tolerance,
                                           "orientation": cfg.orientation, "enabled": cfg.standardize}},
        "oracle": {"pairs": cfg.pairs, "merge": cfg.merge, "visibility": cfg.visibility,
                   "merge_frame": "minimum image in the cell" if cfg.periodic_merge else "cartesian",
                   "module": "viewcert.oracle.triangulate.reconstruct"},
        "scoring": {"level": cfg.score, "truth": cfg.truth,
                    "rule": "correct = label of the reconstruction (spglib at tau) equals the reference label at "
                            "the scored level; reference = dataset label where present (truth='dataset'), else "
                            "the rendered cell's label",
                    "bound": f"exact Clopper-Pearson, one-sided lower and two-sided, confidence {cfg.confidence}"},
        "libraries": library_versions(),
        "items": outcomes,
        "summary": summarize(outcomes, cfg),
    }
    cert["digest"] = {"algorithm": "sha256", "scope": DIGEST_SCOPE, "value": compute_digest(cert)}
    return cert


def canonical_bytes(cert: dict) -> bytes:
    body = {k: v for k, v in cert.items() if k != "digest"}
    return json_dumps(body, indent=None, allow_nan=False).encode()


def compute_digest(cert: dict) -> str:
    return hashlib.sha256(canonical_bytes(cert)).hexdigest()


def certificate_text(cert: dict) -> str:
    """Deterministic text: top-level keys sorted, one item per line, everything else indented."""
    parts = []
    for key in sorted(cert):
        val = cert[key]
        if key == "items":
            lines = [" " + json_dumps(it, indent=None).rstrip("\n") for it in val]
            body = "[\n" + ",\n".join(lines) + "\n ]" if lines else "[]"
        else:
            body = json_dumps(val, indent=1).rstrip("\n").replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {body}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_certificate(path: str | Path, cert: dict) -> Path:
    return write_text_atomic(path, certificate_text(cert))


def read_certificate(path: str | Path) -> dict:
    p = Path(path)
    try:
        cert = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read certificate: {exc}", source=str(p)) from None
    if cert.get("format") != FORMAT:
        raise InputError(f"not a viewcert certificate (format {cert.get('format')!r}, expected {FORMAT!r})",
                         source=str(p), field="format")
    return cert


def digest_ok(cert: dict) -> bool:
    return (cert.get("digest") or {}).get("value") == compute_digest(cert)


# ----------------------------------------------------------------------------- verification
def _diff(a: Any, b: Any, path: str, out: list[tuple[str, Any, Any]]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _diff(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{path}.{k}" if path else k, out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _diff(x, y, f"{path}[{i}]", out)
    elif a != b or type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float)):
        out.append((path, a, b))


@dataclass
class VerifyReport:
    """What ``verify`` found. ``ok``: the stored digest matches the content, the inputs hash as recorded,
    and every recomputed item and the summary equal the stored ones."""

    digest_ok: bool
    stored_digest: str
    recomputed_digest: str | None = None
    input_changes: list[str] = field(default_factory=list)
    section_diffs: list[tuple[str, Any, Any]] = field(default_factory=list)
    item_diffs: dict[str, list[tuple[str, Any, Any]]] = field(default_factory=dict)
    missing_items: list[str] = field(default_factory=list)
    extra_items: list[str] = field(default_factory=list)
    library_changes: list[tuple[str, Any, Any]] = field(default_factory=list)
    n_items: int = 0

    @property
    def ok(self) -> bool:
        return (self.digest_ok and not self.input_changes and not self.section_diffs and not self.item_diffs
                and not self.missing_items and not self.extra_items)

    @property
    def byte_identical(self) -> bool:
        return self.ok and self.recomputed_digest == self.stored_digest

    def lines(self, limit: int = 50) -> list[str]:
        out = [f"digest: {'ok' if self.digest_ok else 'MISMATCH (the file was edited after it was written)'}"]
        out += [f"input changed: {c}" for c in self.input_changes]
        out += [f"library version: {k}: certificate {a} vs now {b}" for k, a, b in self.library_changes]
        out += [f"{k}: certificate {a!r} vs recomputed {b!r}" for k, a, b in self.section_diffs[:limit]]
        out += [f"item missing from recomputation: {i}" for i in self.missing_items[:limit]]
        out += [f"item not in certificate: {i}" for i in self.extra_items[:limit]]
        shown = 0
        for iid, diffs in self.item_diffs.items():
            for k, a, b in diffs:
                if shown >= limit:
                    break
                out.append(f"item {iid}: {k}: certificate {a!r} vs recomputed {b!r}")
                shown += 1
        if self.item_diffs:
            out.append(f"{len(self.item_diffs)} of {self.n_items} items differ")
        if self.ok:
            same = "byte-identical" if self.byte_identical else "identical results"
            out.append(f"verified: {self.n_items} items recomputed, {same}")
        return out


def verify_certificate(path: str | Path, *, input_spec: str | None = None, n_workers: int | None = None,
                       scheduler: Any = None, workdir: str | Path | None = None,
                       progress: bool | None = None) -> VerifyReport:
    """Recompute a certificate from its recorded inputs and settings and compare item by item."""
    from viewcert.certify.run import run_certification

    cert = read_certificate(path)
    rep = VerifyReport(digest_ok=digest_ok(cert), stored_digest=(cert.get("digest") or {}).get("value", ""))
    inputs = cert["inputs"]
    spec = input_spec or inputs["spec"]
    try:
        dataset = load_input(spec, subset=inputs.get("subset") or "eval")
    except InputError as exc:
        rep.input_changes.append(f"cannot load {spec}: {exc}")
        return rep
    for name in sorted(set(inputs["files"]) | set(dataset.files)):
        a, b = inputs["files"].get(name), dataset.files.get(name)
        if a != b:
            rep.input_changes.append(f"{name}: sha256 {a} (certificate) vs {b} (now)")
    cfg = CertifyConfig.from_dict(cert["config"])
    new, _ = run_certification(dataset, cfg, n_workers=n_workers, scheduler=scheduler, workdir=workdir,
                               progress=progress)
    if input_spec is not None:  # the location is not part of what is verified
        new["inputs"]["spec"] = inputs["spec"]
        new["digest"]["value"] = compute_digest(new)
    rep.recomputed_digest = new["digest"]["value"]
    rep.n_items = len(cert.get("items", []))
    for k in sorted(set(cert["libraries"]) | set(new["libraries"])):
        if cert["libraries"].get(k) != new["libraries"].get(k):
            rep.library_changes.append((k, cert["libraries"].get(k), new["libraries"].get(k)))
    for section in sorted(set(cert) | set(new)):
        if section in ("items", "digest", "libraries"):
            continue
        _diff(cert.get(section), new.get(section), section, rep.section_diffs)
    old_items = {it["id"]: it for it in cert.get("items", [])}
    new_items = {it["id"]: it for it in new["items"]}
    rep.missing_items = [i for i in old_items if i not in new_items]
    rep.extra_items = [i for i in new_items if i not in old_items]
    for iid, it in old_items.items():
        if iid in new_items:
            d: list = []
            _diff(it, new_items[iid], "", d)
            if d:
                rep.item_diffs[iid] = d
    return rep
