"""Verify a certificate: re-read its inputs (checking their hashes), recompute every item with the recorded
settings, and report every difference item by item."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.cameras.protocol_files import is_protocol_file
from viewcert.certify.certificate import compute_digest, digest_ok, read_certificate
from viewcert.certify.config import CertifyConfig
from viewcert.certify.inputs import load_input
from viewcert.certify.run import run_certification
from viewcert.errors import InputError
from viewcert.limits import DEFAULT_LIMITS, Limits


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


def trusted_input(cert: dict, inputs_root: str | Path, source: str = "certificate") -> str:
    """Where a certificate says its inputs are (``location.input``, else ``inputs.spec`` relative to
    ``inputs_root``), refused with InputError naming the path when it lies outside ``inputs_root``."""
    spec = cert["inputs"]["spec"]
    if cert["inputs"].get("kind") == "builtin" or spec.startswith("builtin:"):
        return spec
    if cert["inputs"].get("kind") == "ccd" and "@" not in spec:  # ccd:CODE[,CODE]: biotite's bundled CCD
        return spec
    root = Path(inputs_root).resolve()
    loc = (cert.get("location") or {}).get("input") or ""
    # complex:PATH#options — the path is checked like any other, the prefix and options are kept
    prefix = "complex:" if spec.startswith("complex:") else ""
    options = ""
    if prefix:
        spec, _, options = spec[len(prefix):].partition("#")
        loc = loc[len(prefix):].partition("#")[0] if loc.startswith(prefix) else loc
    candidates = [Path(loc)] if loc else []
    candidates.append(root / spec)
    for cand in candidates:
        if cand.exists():
            real = cand.resolve()
            if not real.is_relative_to(root):
                raise InputError(f"the certificate names input path {str(cand)!r}, outside the trusted folder "
                                 f"{str(root)!r}: pass --inputs DIR (or --input PATH) to trust it",
                                 source=source, field="location.input" if loc and cand == Path(loc) else
                                 "inputs.spec")
            return f"{prefix}{real}" + (f"#{options}" if options else "")
    raise InputError(f"inputs {spec!r} not found (looked at {', '.join(repr(str(c)) for c in candidates)}); "
                     "pass --input PATH or --inputs DIR", source=source, field="inputs.spec")


def recorded_protocol(cert: dict, inputs_root: str | Path, cert_path: str | Path, source: str = "certificate") -> str:
    """The protocol file a certificate was made with, found by its recorded name (the digest holds the name
    and SHA-256, not the path): ``location.protocol``, else the name inside ``inputs_root``, else beside the
    certificate. Only a .toml/.json protocol file is read; verify then compares its bytes (``protocol_sha256``)
    and reports an edited file."""
    name = cert["config"]["protocol"]
    if not isinstance(name, str) or Path(name).name != name or not is_protocol_file(name):
        raise InputError(f"config.protocol must be a protocol file's name (.toml or .json), got {name!r}",
                         source=source, field="config.protocol")
    loc = (cert.get("location") or {}).get("protocol") or ""
    candidates = ([Path(loc)] if loc and Path(loc).name == name else [])
    candidates += [Path(inputs_root) / name, Path(cert_path).parent / name]
    candidates = list(dict.fromkeys(c.resolve() for c in candidates))  # each place once
    for cand in candidates:
        if cand.is_file():
            return str(cand.resolve())
    raise InputError(f"protocol file {name!r} not found (looked at {', '.join(repr(str(c)) for c in candidates)})",
                     source=source, field="config.protocol")


def verify_certificate(path: str | Path, *, input_spec: str | None = None, n_workers: int | None = None,
                       scheduler: Any = None, workdir: str | Path | None = None,
                       progress: bool | None = None, inputs_root: str | Path | None = None,
                       limits: Limits = DEFAULT_LIMITS) -> VerifyReport:
    """Recompute a certificate from its recorded inputs and settings and compare item by item.

    ``input_spec``: where the inputs are now (trusted, the caller vouches for it). Otherwise the path the
    certificate names must lie inside ``inputs_root`` (default: the current folder). ``limits`` apply to what
    the certificate asks to recompute (views, tiling, image size, atoms), checked before any work."""
    cert = read_certificate(path, limits=limits)
    rep = VerifyReport(digest_ok=digest_ok(cert), stored_digest=(cert.get("digest") or {}).get("value", ""))
    inputs = cert["inputs"]
    config = dict(cert["config"])
    if config.get("protocol_sha256"):  # made from a protocol file, recorded by name: find it
        config["protocol"] = recorded_protocol(cert, Path.cwd() if inputs_root is None else inputs_root, path,
                                              str(path))
    cfg = CertifyConfig.from_dict(config)
    cfg.check_limits(limits)
    spec = input_spec or trusted_input(cert, Path.cwd() if inputs_root is None else inputs_root, str(path))
    try:
        dataset = load_input(spec, subset=inputs.get("subset") or "eval").with_limits(limits,
                                                                                      cfg.points_per_atom())
    except InputError as exc:
        rep.input_changes.append(f"cannot load {spec}: {exc}")
        return rep
    for name in sorted(set(inputs["files"]) | set(dataset.files)):
        a, b = inputs["files"].get(name), dataset.files.get(name)
        if a != b:
            rep.input_changes.append(f"{name}: sha256 {a} (certificate) vs {b} (now)")
    new, _ = run_certification(dataset, cfg, n_workers=n_workers, scheduler=scheduler, workdir=workdir,
                               progress=progress)
    if new["inputs"]["spec"] != inputs["spec"]:  # the location is not part of what is verified
        new["inputs"]["spec"] = inputs["spec"]
        new["digest"]["value"] = compute_digest(new)
    rep.recomputed_digest = new["digest"]["value"]
    rep.n_items = len(cert.get("items", []))
    for k in sorted(set(cert["libraries"]) | set(new["libraries"])):
        if cert["libraries"].get(k) != new["libraries"].get(k):
            rep.library_changes.append((k, cert["libraries"].get(k), new["libraries"].get(k)))
    for section in sorted(set(cert) | set(new)):
        if section in ("items", "digest", "libraries", "location"):
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
