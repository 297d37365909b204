"""``verify`` of the export certificates: a transformation-task certificate (``benchmark.tasks_export``) and an
interaction certificate (``benchmark.interaction_export``) are recomputed by running the export again, from
the recorded settings, into a scratch folder, and compared section by section and item by item (answer sets,
consistent-answer ceilings, hydrogen-bond truth, label legibility, MiSI credit ceilings: everything the
certificate records).

The trust boundary is ``certify.trust``'s: every path the certificate names (the task's ``input``, a protocol
file, the complexes by name) must resolve inside the trusted folder (``--inputs``, default the current
folder) unless ``--input`` vouches for it; one outside is refused before anything is read.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import fields
from pathlib import Path

from viewcert.benchmark.interaction_export import InteractionExportSettings, build_interaction_benchmark
from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
from viewcert.cameras.protocol_files import is_protocol_file
from viewcert.certify.trust import named_input
from viewcert.certify.verify import VerifyReport, compare
from viewcert.errors import InputError
from viewcert.formats.reader import Received
from viewcert.formats.records import (
    INTERACTION_FORMAT_V1,
    TASK_DIGEST_SCOPE,
    CertificateVisitor,
    InteractionCertificate,
    compute_digest,
    digest_value,
)
from viewcert.formats.settings_sections import (
    CeilingRecord,
    ExportSettingsRecord,
    ProtocolFile,
    TaskProtocol,
)
from viewcert.formats.versions import interaction_in_format
from viewcert.interactions.ceiling import CeilingSettings
from viewcert.io.atomic import json_dumps
from viewcert.io.confine import confined, inside
from viewcert.limits import LimitError, active_limits
from viewcert.render.labels import LabelStyle


def named_protocol(name: str, source: str, field: str = "settings.protocol") -> str:
    """A protocol recorded by name: a registry name as it is; a file's name (.toml/.json) with no SHA-256
    recorded beside it is refused (a received certificate never names a file to open unchecked)."""
    if is_protocol_file(name):
        raise InputError(f"{field} names the file {name!r} without its SHA-256 (nothing read); a protocol file is "
                         "recorded as {file: {name, sha256}}", source=source, field=field)
    if any(c in name for c in "/\\\x00") or ".." in name or os.path.isabs(name):
        raise InputError(f"{field} names the path {name[:80]!r}, not a protocol name (nothing read)", source=source,
                         field=field)
    return name


def _protocol(given: str | TaskProtocol | None, root: str, cert_dir: Path, source: str) -> str:
    """The protocol to recompute with (``settings.protocol``): a name as it is; a file found by its recorded
    name (:func:`_file_protocol`); a built-in protocol's record by its name."""
    if isinstance(given, str):
        return named_protocol(given, source)
    file = given.file if isinstance(given, TaskProtocol) else None
    if not isinstance(file, ProtocolFile):
        if isinstance(given, TaskProtocol) and given.source == "builtin" and isinstance(given.name, str):
            return given.name
        raise InputError("the certificate's protocol was a Protocol object (no name, no file): it cannot be "
                         "recomputed", source=source, field="settings.protocol")
    return _file_protocol(file.name, file.sha256, root, cert_dir, source)


def _file_protocol(name, sha, root: str, cert_dir: Path, source: str) -> str:
    """A protocol file found by its recorded bare ``name`` (inside the trusted folder or beside the certificate
    there), its SHA-256 ``sha`` checked before it is read (``io.confine``)."""
    if not isinstance(name, str) or Path(name).name != name or not isinstance(sha, str):
        raise InputError(f"settings.protocol.file must hold a file's bare name and its sha256, got {str(name)[:80]!r} "
                         "(nothing read)", source=source, field="settings.protocol")
    for base in (str(cert_dir), root):
        real = inside(os.path.join(base, name), root)
        if real and Path(real).is_file():
            return confined(real, root, source=source, field="settings.protocol", sha256=sha,
                            what="protocol file")
    raise InputError(f"protocol file {name!r} not found inside the trusted folder {root!r}", source=source,
                     field="settings.protocol")


def recompute_task(got: Received, path: Path, *, input_spec: str | None, root: str) -> dict:
    """The task certificate recomputed: the export run again from the recorded settings, seed and limit."""
    c, src = got.certificate, str(path)
    recorded = c.settings or ExportSettingsRecord()
    kw = recorded.options(TaskExportSettings.OPTIONS)
    kw["protocol"] = _protocol(recorded.protocol, root, path.parent.resolve(), src)
    kw["constraints"] = tuple(kw.get("constraints") or ())
    try:
        settings = TaskExportSettings.from_options(**kw)
    except TypeError as exc:
        raise InputError(f"settings: {str(exc)[:200]}", source=src, field="settings") from None
    if input_spec is None and not isinstance(c.input, str):
        raise InputError("the certificate names no input (pass --input PATH)", source=src, field="input")
    spec = input_spec or c.input
    if input_spec is None and not named_input(spec):
        spec = confined(spec, root, source=src, field="input", what="input")
    im, limits = settings.image, active_limits()
    limits.check_pixels(im.width * im.supersample, im.height * im.supersample, source=src, field="settings.width")
    limits.check_questions(settings.per_structure, source=src, field="settings.per_structure")
    with tempfile.TemporaryDirectory(prefix="viewcert-verify-") as tmp:
        new = build_task_benchmark(spec, tmp, settings,
                                   limit=c.limit).certificate.to_dict()
    new["input"] = c.input  # where the input sits is not what is verified
    if c.version == 1:  # written before the resolution (version 2): compared at it (certify.verify.compare)
        new.pop("resolution", None)
        new["version"] = 1
    new["digest"] = {"algorithm": "sha256", "scope": TASK_DIGEST_SCOPE, "value": compute_digest(new)}
    return new


def _complexes(c: InteractionCertificate, src: str) -> list[tuple[str, str | None]]:
    """(name, ligand or None) of every complex in input order: /2 records them; /1 only as ground_truth keys
    (sorted, as the CLI's folder listing orders them)."""
    if isinstance(c.complexes, list):
        return [(str(x["name"]), x.get("ligand")) for x in c.complexes if isinstance(x, dict) and "name" in x]
    truths = c.ground_truth
    if not isinstance(truths, dict) or not truths:
        raise InputError("the certificate names no complex (no complexes, no ground_truth)", source=src,
                         field="ground_truth")
    out = []
    for key in sorted(truths):
        name, _, lig = key.rpartition(":")
        out.append((name, lig or None))
    return out


def recompute_interaction(got: Received, path: Path, *, input_spec: str | None, root: str) -> dict:
    """The interaction certificate recomputed: the export run again on the complexes it names, found by name
    inside the trusted folder (or inside ``input_spec``, a folder of complexes or one complex)."""
    typed, src = got.certificate, str(path)
    recorded = typed.settings or ExportSettingsRecord()
    try:
        c = recorded.ceiling or CeilingRecord()
        lab = c.labels or {}
        labels = LabelStyle(**{k: (tuple(v) if k == "colour" else v) for k, v in lab.items()
                               if k in {f.name for f in fields(LabelStyle)}})
        ceiling = CeilingSettings(**{k: v for k, v in c.to_dict().items() if k in ("delta", "reach", "style")},
                                  labels=labels)
        proto = "axes-6" if recorded.protocol is None else recorded.protocol
        if isinstance(proto, str) and not recorded.protocol_sha256:
            proto = named_protocol(proto, src)
        if recorded.protocol_sha256:
            proto = _file_protocol(proto, recorded.protocol_sha256, root, path.parent.resolve(), src)
        names = set(InteractionExportSettings.OPTIONS) - {"ceiling", "protocol", "constraints"}
        settings = InteractionExportSettings.from_options(**recorded.options(names), protocol=proto,
                                                          ceiling=ceiling,
                                                          constraints=tuple(recorded.constraints or ()))
    except TypeError as exc:
        raise InputError(f"settings: {str(exc)[:200]}", source=src, field="settings") from None
    limits = active_limits()
    limits.check_pixels(settings.image.width, settings.image.height, source=src, field="settings.width")
    limits.check_bootstrap(settings.n_boot, source=src, field="settings.n_boot")  # at least one item each: before any work
    base = os.path.realpath(input_spec) if input_spec else root
    complexes = []
    for name, ligand in _complexes(typed, src):
        if input_spec and Path(base).name == name:
            complexes.append((Path(base), ligand))
        else:
            complexes.append((Path(confined(name, base, source=src, field="complexes", what="complex")), ligand))
    with tempfile.TemporaryDirectory(prefix="viewcert-verify-") as tmp:
        new = build_interaction_benchmark(complexes, tmp, settings).certificate.to_dict()
    return interaction_in_format(new, typed.format)


class _Recompute(CertificateVisitor):
    """Each export kind's recomputation."""

    def task(self, cert):
        return recompute_task

    def interaction(self, cert):
        return recompute_interaction


def verify_export(got: Received, path: Path, *, input_spec: str | None, root: str, recompute=None):
    """A ``certify.verify.VerifyReport`` of a task or interaction certificate (module docstring); ``recompute``:
    its kind's (``recompute_task``, ``recompute_interaction``; default: the certificate's own kind's)."""
    rep = VerifyReport(digest_ok=got.digest_ok, stored_digest=digest_value(got.data) or "")
    if recompute is None:
        recompute = got.certificate.visit(_Recompute())
    try:
        new = recompute(got, Path(path), input_spec=input_spec, root=root)
    except InputError as exc:
        if isinstance(exc, LimitError) or any(w in exc.message for w in ("trusted folder", "Protocol object",
                                                                          "nothing read", "duplicate item id")):
            raise
        rep.input_changes.append(f"cannot recompute: {exc}")
        return rep
    compare(got.data, json.loads(json_dumps(new)), rep)  # as written: tuples are JSON lists
    if got.certificate.format == INTERACTION_FORMAT_V1:
        rep.recomputed_digest = new["digest"]
    return rep
