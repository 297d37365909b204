"""Verify a certificate: re-read its inputs (checking their hashes), recompute every item with the recorded
settings, and report every difference item by item: a crystal/molecule certificate here; an export's
(transformation task, interaction) through ``benchmark.verify_export`` (``viewcert verify`` takes every kind). A certificate that covers a part of its input
(``inputs.selection``: an export's questions, some shown mirrored) is recomputed on exactly that part."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from viewcert.cameras.protocol_files import is_protocol_file
from viewcert.certify.config import CertifyConfig
from viewcert.certify.inputs import Selection, load_input
from viewcert.certify.run import run_certification
from viewcert.certify.trust import recorded_protocol, trusted_input, trusted_root
from viewcert.errors import InputError
from viewcert.formats.reader import Received, receive
from viewcert.formats.records import CeilingCertificate, compute_digest, digest_value
from viewcert.formats.settings_sections import Inputs
from viewcert.formats.versions import in_format, read_config
from viewcert.resolution import quantize_tree, resolution_of

# Fields whose recomputed value is rounding error of the machine (BLAS kernels and SIMD widths differ between
# CPUs): a difference below the floor is float noise, not a different result. Path within an item -> floor.
# Since /3 every float is written at a stated resolution (viewcert.resolution), which writes such noise as 0.
FLOAT_NOISE_FLOORS: dict[str, float] = {
    "oracle.max_position_error": 1e-12,  # Å; an exact reconstruction's error is ~1e-15 Å, a real one >= 1e-6 Å
}


def _path_keys(path: str) -> tuple[str, ...]:
    """The dict keys of a diff path ("oracle.phantoms[0][1]" -> ("oracle", "phantoms"))."""
    return tuple(k.split("[", 1)[0] for k in path.split(".") if k.split("[", 1)[0])


def _is_float_noise(path: str, a: Any, b: Any) -> bool:
    """Rounding noise of the machine: both values below the field's noise floor, or two floats one resolution
    step apart (a value within noise of a rounding boundary, rounded to neighbouring steps; viewcert.resolution)."""
    if not (isinstance(a, int | float) and isinstance(b, int | float)) or isinstance(a, bool) or isinstance(b, bool):
        return False
    floor = FLOAT_NOISE_FLOORS.get(path)
    if floor is not None and abs(a) <= floor and abs(b) <= floor:
        return True
    step = resolution_of(_path_keys(path))
    return step is not None and (isinstance(a, float) or isinstance(b, float)) and abs(a - b) <= step * (1 + 1e-6)


def _set_path(item: dict, path: str, value: Any) -> None:
    *head, last = path.split(".")
    for k in head:
        item = item[k]
    item[last] = value


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
    noise_diffs: dict[str, list[tuple[str, Any, Any]]] = field(default_factory=dict)
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
        if self.noise_diffs:
            n = sum(len(v) for v in self.noise_diffs.values())
            fields = ", ".join(f"{k} <= {v:g}" for k, v in FLOAT_NOISE_FLOORS.items())
            out.append(f"float noise: {n} value(s) in {len(self.noise_diffs)} item(s) differ only below the floor "
                       f"({fields} Å) or by one step of their resolution (a value at a rounding boundary); "
                       "compared with the certificate's values kept")
        if self.ok:
            same = "byte-identical" if self.byte_identical else "identical results"
            out.append(f"verified: {self.n_items} items recomputed, {same}")
        return out


def _protocol_file(cert, config: dict, root: str, path) -> str | None:
    """Find the protocol file a certificate records by name inside the trusted folder (``config["protocol"]``
    becomes its real path); its bytes are checked against ``protocol_sha256`` before anything parses them: the
    input change to report when they differ, else None."""
    from viewcert.cameras.resolve import read_protocol_checked  # lazy: start-up

    # the one read of the file: its bytes hashed before anything parses them, and those same bytes parsed
    real = recorded_protocol(cert, root, path, str(path))
    want = config.get("protocol_sha256")
    try:
        config["protocol"] = read_protocol_checked(real, want if isinstance(want, str) else None, source=str(path))
    except InputError as exc:
        if "SHA-256" not in exc.message:
            raise
        config["protocol"] = real
        return f"protocol file: {exc.message}"
    return None


def verify_certificate(path: str | Path, *, input_spec: str | None = None, n_workers: int | None = None,
                       scheduler: Any = None, workdir: str | Path | None = None,
                       progress: bool | None = None, inputs_root: str | Path | None = None,
                       allow_stale: bool = False,
                       received: Received | None = None) -> VerifyReport:
    """Recompute a crystal/molecule certificate from its recorded inputs and settings and compare item by item
    (a transformation-task or interaction certificate: ``benchmark.verify_export``, a layer above; ``viewcert
    verify`` takes every kind). A digest that does not match the content is refused in one line
    (``records.StaleCertificate``) unless ``allow_stale`` (then reported as a MISMATCH and recomputed).
    ``received``: the certificate as the caller read it already (``formats.reader.receive``).

    ``input_spec``: where the inputs are now (trusted, the caller vouches for it). Otherwise every path the
    certificate names (inputs, protocol file) must resolve (realpath) inside ``inputs_root`` (default: the
    current folder); one outside is refused before anything is read (``certify.trust``). The limits in force apply to
    what the certificate asks to recompute (views, tiling, image size, atoms), checked before any work.

    Parameters
    ----------
    path : str or Path
        The certificate.json.
    input_spec : str, optional
        Where the inputs are now (trusted); default: the paths the certificate records.
    n_workers : int, optional
        Worker processes (None: every core).
    scheduler : optional
        A Dask scheduler (address or client); None: local processes.
    workdir : str or Path, optional
        Folder of checkpointed shards; None: none.
    progress : bool, optional
        Show a progress bar (None: when the console is a terminal).
    inputs_root : str or Path, optional
        Trusted folder every recorded path must resolve inside (default: the current folder).
    allow_stale : bool
        Recompute a certificate whose digest does not match (reported as a MISMATCH).
    received : Received, optional
        The certificate as already read.

    Returns
    -------
    VerifyReport
        The digest check, input changes and every difference by section and item (``ok``: none).
    """
    got = received or receive(path, allow_stale=allow_stale, kind=CeilingCertificate)  # a stale digest: refused
    cert = got.certificate
    rep = VerifyReport(digest_ok=got.digest_ok, stored_digest=cert.digest_value or "")
    inputs = cert.inputs
    config = read_config(got.data)  # by format: a /1 certificate's framing policy is the one /1 had
    # the trust boundary (certify.trust): every path the certificate names is resolved inside the trusted
    # folder before anything but the certificate is opened. A protocol file: both paths first, then the
    # file is read; a named protocol opens nothing, so the settings and limits are checked first.
    root = trusted_root(Path.cwd() if inputs_root is None else inputs_root)
    from_file = bool(config.get("protocol_sha256")) or is_protocol_file(config.get("protocol"))
    changed = _protocol_file(cert, config, root, path) if from_file else None  # made from a protocol file
    if changed:
        rep.input_changes.append(changed)
        return rep
    spec = input_spec or (trusted_input(cert, root, str(path)) if from_file else None)
    cfg = CertifyConfig.from_dict(config)
    cfg.check_limits()
    spec = spec or trusted_input(cert, root, str(path))
    dataset = reload_inputs(spec, inputs, cfg, path, rep)
    if dataset is None:
        return rep
    new, _ = run_certification(dataset, cfg, n_workers=n_workers, scheduler=scheduler, workdir=workdir,
                               progress=progress)
    new = in_format(new.to_dict(), cert.format)  # compared in the certificate's own format (its JSON object)
    if new["inputs"]["spec"] != inputs.spec:  # the location is not part of what is verified
        new["inputs"]["spec"] = inputs.spec
        new["digest"]["value"] = compute_digest(new)
    compare(got.data, new, rep)
    return rep


def reload_inputs(spec: str, inputs: Inputs, cfg: CertifyConfig, path: Path, rep):
    """The certificate's input read again (``inputs``: its inputs section) at the limits in force, narrowed to the part it
    covers (an export's questions, as shown), each file's SHA-256 compared into ``rep.input_changes``; None (the
    reason in ``rep``) when it cannot be loaded. Checked before any work."""
    sel = Selection.from_dict(inputs.selection, source=str(path)) if inputs.selection is not None else None
    try:
        dataset = load_input(spec, subset=inputs.subset or "eval").with_points_per_atom(cfg.points_per_atom())
        dataset = dataset if sel is None else dataset.with_selection(sel)
    except InputError as exc:
        rep.input_changes.append(f"cannot load {spec}: {exc}")
        return None
    files = inputs.files or {}
    for name in sorted(set(files) | set(dataset.files)):
        a, b = files.get(name), dataset.files.get(name)
        if a != b:
            rep.input_changes.append(f"{name}: sha256 {a} (certificate) vs {b} (now)")
    return dataset


def compare(stored_cert: dict, recomputed: dict, rep: VerifyReport) -> None:
    """Fill ``rep`` with every difference between the stored certificate and the recomputed one (any kind),
    both as their JSON (this is a diff of what is written, key by key): library versions, each section, and
    item by item. A certificate older than its kind's ``resolution`` (9 significant digits, noise included) is
    compared at the resolution the recomputation states: its values are rounded to it first."""
    rep.recomputed_digest = digest_value(recomputed)
    if "resolution" not in stored_cert:  # written before /3: both compared at the resolution /3 states
        stored_cert, recomputed = quantize_tree(stored_cert), quantize_tree(recomputed)
    rep.n_items = len(stored_cert.get("items", []))
    old_lib, new_lib = stored_cert.get("libraries") or {}, recomputed.get("libraries") or {}
    for k in sorted(set(old_lib) | set(new_lib)):
        if old_lib.get(k) != new_lib.get(k):
            rep.library_changes.append((k, old_lib.get(k), new_lib.get(k)))
    for section in sorted(set(stored_cert) | set(recomputed)):
        if section in ("items", "digest", "libraries", "location"):
            continue
        _diff(stored_cert.get(section), recomputed.get(section), section, rep.section_diffs)
    if compare_items(stored_cert.get("items", []), recomputed.get("items", []), rep):
        # the digest of the recomputation with the noise-only values taken from the certificate
        rep.recomputed_digest = compute_digest(recomputed)


def compare_items(stored: list[dict], recomputed: list[dict], rep: VerifyReport) -> bool:
    """Add to ``rep`` the differences between stored and recomputed item records (missing, extra, field by field);
    a noise-only value of the recomputation is replaced by the stored one in place. True when any was."""
    old_items = {it["id"]: it for it in stored}
    new_items = {it["id"]: it for it in recomputed}
    rep.missing_items += [i for i in old_items if i not in new_items]
    rep.extra_items += [i for i in new_items if i not in old_items]
    noisy = False
    for iid, it in old_items.items():
        if iid in new_items:
            d: list = []
            _diff(it, new_items[iid], "", d)
            noise = [x for x in d if _is_float_noise(*x)]
            for k, a, _b in noise:  # rounding error of this machine: keep the certificate's value
                _set_path(new_items[iid], k, a)
                noisy = True
            if noise:
                rep.noise_diffs[iid] = noise
            d = [x for x in d if not _is_float_noise(*x)]
            if d:
                rep.item_diffs[iid] = d
    return noisy
