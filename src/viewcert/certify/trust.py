"""The trust boundary of ``verify``: every path a received certificate names is resolved inside one trusted
folder before anything is opened (the trust model: docs/reliability.md, "The trust model of verify").

A path is resolved with ``os.path.realpath`` (symlinks followed, ``..`` collapsed; a relative name against
the trusted folder) and used only when the result lies inside the trusted folder. Resolution reads no file
(``realpath`` and ``stat`` inspect names, they open nothing). A folder input's entries are checked the same
way: a symlink anywhere inside it must resolve inside the trusted folder. What the certificate says about
itself (``inputs.kind``) never decides what is trusted: built-in and CCD inputs are recognised from the
spec's text alone, and only as names.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from viewcert.cameras.protocol_files import is_protocol_file
from viewcert.certify.inputs import database_format
from viewcert.errors import InputError
from viewcert.formats.records import CeilingCertificate
from viewcert.io.confine import check_tree, inside, trusted_root

#: built-in inputs are names only (``builtin:prototypes``, ``builtin:aflow:A_cF4_225_a``, ``builtin:ccd:ATP``)
BUILTIN_NAME = re.compile(r"builtin:[A-Za-z0-9_.+-]+(:[A-Za-z0-9_.+-]+)*")
#: CCD codes from biotite's bundled dictionary (no file): ``ccd:ATP`` or ``ccd:ATP,IBP``
CCD_CODES = re.compile(r"ccd:[A-Za-z0-9_]+( *, *[A-Za-z0-9_]+)*")
__all__ = ["check_tree", "find_inside", "inside", "named_input", "recorded_protocol", "trusted_input", "trusted_root"]
_HINT = "pass --inputs DIR to trust the folder that holds it (or --input PATH to vouch for the input)"


def named_input(spec: str) -> bool:
    """True for an input that is a name, not a path: ``builtin:NAME`` or ``ccd:CODE[,CODE]`` (opens no file)."""
    return isinstance(spec, str) and bool(BUILTIN_NAME.fullmatch(spec) or CCD_CODES.fullmatch(spec))


def _kind_ok(real: str, want_dir: bool, source: str, field: str) -> bool:
    """True for a regular file (or, with ``want_dir``, a folder); raises for a FIFO, device or socket."""
    st = os.stat(real)
    if stat.S_ISREG(st.st_mode) or (want_dir and stat.S_ISDIR(st.st_mode)):
        return True
    raise InputError(f"{real!r} is not a regular file{' or folder' if want_dir else ''}; only those are read",
                     source=source, field=field)


def find_inside(candidates: list[tuple[str, str]], root: str, *, what: str, label: str, source: str,
                want_dir: bool = True) -> str:
    """The real path of the first (name, field) candidate that lies inside ``root`` and exists, each place
    looked at once. Candidates outside ``root`` are never looked at; when no candidate inside exists and one
    lay outside, the refusal names it (InputError, nothing read)."""
    outside: list[tuple[str, str]] = []
    looked: dict[str, str] = {}
    for name, field in candidates:
        real = inside(name, root)
        if real is None:
            outside.append((name, field))
        elif real not in looked:
            looked[real] = field
            if os.path.exists(real) and _kind_ok(real, want_dir, source, field):
                return real
    if outside:
        name, field = outside[0]
        try:
            real = os.path.realpath(os.path.join(root, name))
        except (TypeError, ValueError):
            real = name
        via = f" (resolves to {real!r})" if real != name else ""
        raise InputError(f"the certificate names {what} path {name!r}{via}, outside the trusted folder {root!r} "
                         f"(nothing read): {_HINT}", source=source, field=field)
    places = ", ".join(repr(r) for r in looked)
    raise InputError(f"{what} {label!r} not found (looked at {places}); {_HINT}", source=source,
                     field=candidates[-1][1])


def trusted_input(cert: CeilingCertificate, inputs_root: str | Path, source: str = "certificate") -> str:
    """The input spec to load for a certificate: a built-in or CCD name as is; otherwise the real path of
    ``location.input`` or ``inputs.spec`` (relative: to the trusted folder), inside the trusted folder, with
    a ``complex:`` prefix and ``#`` options kept. InputError (nothing read) for a path outside it, a symlink
    inside a folder input that points out of it, or a built-in/CCD spec that is not a name."""
    spec = cert.inputs.spec
    if spec.startswith("builtin:"):
        if not BUILTIN_NAME.fullmatch(spec):
            raise InputError(f"inputs.spec {spec!r} is not a built-in name (builtin:NAME, no paths)",
                             source=source, field="inputs.spec")
        return spec
    if spec.startswith("ccd:") and not spec.startswith("ccd:@"):
        if not CCD_CODES.fullmatch(spec):
            raise InputError(f"inputs.spec {spec!r} is not a list of CCD codes (ccd:CODE[,CODE])",
                             source=source, field="inputs.spec")
        return spec
    root = trusted_root(inputs_root)
    if spec.startswith("ccd:@"):  # a file of codes: a path like any other
        real = find_inside([(spec[len("ccd:@"):], "inputs.spec")], root, what="input", label=spec,
                           source=source, want_dir=False)
        return f"ccd:@{real}"
    loc = (cert.location.input if cert.location else "") or ""
    fmt = database_format(spec)  # a database (optimade:, gnome:, ase:, *.parquet, *.db) keeps its options too
    prefix = "complex:" if spec.startswith("complex:") else f"{fmt}:" if fmt and spec.startswith(f"{fmt}:") else ""
    options = ""
    if prefix or fmt:  # complex:PATH#options — the path is checked like any other, the prefix and options are kept
        spec, _, options = spec[len(prefix):].partition("#")
        loc = loc[len(prefix):].partition("#")[0] if loc.startswith(prefix) else loc
    candidates = ([(loc, "location.input")] if loc else []) + [(spec, "inputs.spec")]
    real = find_inside(candidates, root, what="input", label=spec, source=source)
    if os.path.isdir(real):
        check_tree(real, root, source=source)
    return f"{prefix}{real}" + (f"#{options}" if options else "")


def recorded_protocol(cert: CeilingCertificate, inputs_root: str | Path, cert_path: str | Path,
                      source: str = "certificate") -> str:
    """The real path of the protocol file a certificate was made with, found by its recorded name inside the
    trusted folder: at ``location.protocol`` (when it has that name), by name in the folder, or beside the
    certificate. ``config.protocol`` must be a bare .toml/.json name; a place outside the folder is never
    opened (refused when nothing inside matches)."""
    name = cert.config.protocol if cert.config else None
    if not isinstance(name, str) or Path(name).name != name or not is_protocol_file(name):
        raise InputError(f"config.protocol must be a protocol file's name (.toml or .json), got {name!r}",
                         source=source, field="config.protocol")
    root = trusted_root(inputs_root)
    loc = (cert.location.protocol if cert.location else "") or ""
    candidates = [(loc, "location.protocol")] if loc and Path(loc).name == name else []
    candidates += [(name, "config.protocol"), (os.path.join(os.path.abspath(cert_path), os.pardir, name),
                                               "config.protocol")]
    candidates = [(os.path.normpath(os.path.join(root, c)), f) for c, f in candidates]
    return find_inside(candidates, root, what="protocol file", label=name, source=source, want_dir=False)
