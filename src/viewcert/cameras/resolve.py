"""The one protocol resolver: a registry name, a protocol file, a ``Protocol`` or a ``ProtocolSpec`` becomes
one immutable ``ResolvedProtocol`` when a settings object is made; every later use reads that value.

A file is opened once, in ``resolve``: its bytes and their SHA-256 travel with the value (the certificate's
digest and the items' cameras come from the same bytes), and the parse is cached on those bytes. A name is
looked up once, lazily for ``fibonacci-N`` (so the view limit can refuse ``fibonacci-100000`` from the name
before any view is built). The value pickles (items are mapped over processes and Dask workers).

Units and frames as ``ProtocolSpec``: rotations world→camera, positions world Å, image size px, fov degrees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import Path, PurePath

from viewcert.cameras.protocol_files import (
    ProtocolSpec,
    _parse_protocol,
    is_protocol_file,
    read_protocol_bytes,
    spec_from_dict,
    to_json,
    to_toml,
)
from viewcert.cameras.protocols import PROTOCOL_NAMES, Protocol, StudySettings, get_protocol, study_settings
from viewcert.errors import InputError

#: where a resolved protocol came from
ORIGINS = ("name", "file", "protocol", "spec")
_LAZY_NAME = re.compile(r"fibonacci-\d+")


@dataclass(frozen=True, eq=False)
class ResolvedProtocol:
    """A protocol resolved once. ``origin``: name | file | protocol | spec; ``label``: the registry name, the
    file's path as given, or the protocol's name; ``raw``: a file's bytes (else None); ``views``: the
    selected views (None = all, in protocol order). ``full`` is the whole protocol, ``spec`` the selection
    (positions follow their views). Two values are equal when their views, rotations, kind, fov, image size
    and positions are (not where they came from)."""

    origin: str
    label: str
    given: ProtocolSpec | None = None  # None only for a fibonacci-N name not yet built
    raw: bytes | None = None
    views: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.origin not in ORIGINS:
            raise InputError(f"origin must be one of {ORIGINS}, got {self.origin!r}", field="protocol")
        if self.views is not None:
            object.__setattr__(self, "views", tuple(str(v) for v in self.views))

    @cached_property
    def full(self) -> ProtocolSpec:
        """The whole protocol with its camera settings."""
        return self.given if self.given is not None else ProtocolSpec(get_protocol(self.label))

    @cached_property
    def spec(self) -> ProtocolSpec:
        """The selected views (``views``), positions following them."""
        full = self.full
        if self.views is None:
            return full
        sub = full.protocol.subset(list(self.views))
        at = {v.name: p for v, p in zip(full.protocol.views, full.positions, strict=True)}
        return replace(full, protocol=sub, positions=tuple(at[v.name] for v in sub.views))

    @property
    def protocol(self) -> Protocol:
        return self.spec.protocol

    @property
    def study(self) -> StudySettings | None:
        """The settings of the study a protocol named by its registry name comes from (None otherwise: a file, a
        Protocol value, or a name no study stands behind)."""
        return study_settings(self.label) if self.origin == "name" else None

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def fov_deg(self) -> float:
        return self.spec.fov_deg

    @property
    def width(self) -> int:
        return self.spec.width

    @property
    def height(self) -> int:
        return self.spec.height

    @property
    def positions(self) -> tuple:
        return self.spec.positions

    @property
    def view_names(self) -> tuple[str, ...]:
        return self.spec.protocol.view_names

    @property
    def rotations(self) -> tuple:
        return tuple(v.rotation for v in self.spec.protocol.views)

    @property
    def is_file(self) -> bool:
        return self.origin == "file"

    @property
    def sha256(self) -> str | None:
        """SHA-256 of the file's bytes (None when not from a file): the digest ``_parse_protocol`` took of
        ``raw`` when it parsed them (hashed once, with the parse)."""
        return None if self.raw is None else self.full.sha256

    @property
    def file_name(self) -> str | None:
        """The file's name without its folder (what location-free records hold)."""
        return PurePath(self.label).name if self.is_file else None

    def select(self, views) -> ResolvedProtocol:
        """The same protocol with another view selection (no file is read again)."""
        views = None if views is None else tuple(str(v) for v in views)
        if views == self.views:
            return self
        out = ResolvedProtocol(self.origin, self.label, self.given, self.raw, views)
        if self.given is None and "full" in self.__dict__:
            out.__dict__["full"] = self.__dict__["full"]  # a built fibonacci-N is not built again
        return out

    def content(self) -> tuple:
        """What equality compares: name, description, kind, fov (perspective), size, views and positions."""
        s = self.spec
        p = s.protocol
        return (p.name, p.description, s.kind, s.fov_deg if s.kind == "perspective" else None, s.width, s.height,
                tuple((v.name, v.rotation.tobytes()) for v in p.views),
                tuple(None if x is None else tuple(float(c) for c in x) for x in s.positions))

    def __eq__(self, other) -> bool:
        return isinstance(other, ResolvedProtocol) and self.content() == other.content()

    def __hash__(self) -> int:
        return hash(self.content())


def resolve(value, views=None) -> ResolvedProtocol:
    """The one resolver: a ``ResolvedProtocol`` from a registry name, a ``.toml``/``.json`` path (str or
    Path: read here, once), a ``Protocol``, a ``ProtocolSpec``, a dict (a protocol file's content) or a
    ``ResolvedProtocol``, restricted to ``views`` when given. InputError (field ``protocol``) otherwise.

    Parameters
    ----------
    value : str, path-like, Protocol, ProtocolSpec, dict or ResolvedProtocol
        The protocol: a registry name or ``fibonacci-N``, a protocol file, or a protocol object.
    views : iterable of str, optional
        Names of the views kept; None: every view.

    Returns
    -------
    ResolvedProtocol
        The protocol, with its origin and view selection.

    Raises
    ------
    InputError
        ``value`` is of none of these types (field ``protocol``), or a protocol file is missing or it or a
        dict is malformed.
    CameraError
        A registry name is unknown (the message suggests the closest).
    """
    if isinstance(value, ResolvedProtocol):
        return value if views is None else value.select(views)
    if isinstance(value, ProtocolSpec):
        rp = ResolvedProtocol("spec", value.protocol.name, value)
    elif isinstance(value, Protocol):
        rp = ResolvedProtocol("protocol", value.name, ProtocolSpec(value))
    elif isinstance(value, dict):
        spec = spec_from_dict(value)
        rp = ResolvedProtocol("spec", spec.protocol.name, spec)
    elif is_protocol_file(value) or isinstance(value, PurePath):
        rp = _read_file(value)
    elif isinstance(value, str):
        rp = _named(value.strip())
    else:
        raise InputError(f"a protocol is a name ({', '.join(PROTOCOL_NAMES)}, fibonacci-N), a .toml/.json "
                         f"file or a Protocol; got {type(value).__name__}", field="protocol")
    return rp if views is None else rp.select(views)


@lru_cache(maxsize=64)
def _named(name: str) -> ResolvedProtocol:
    """A registry name, looked up once per process (fibonacci-N built at first use)."""
    return ResolvedProtocol("name", name, None if _LAZY_NAME.fullmatch(name) else ProtocolSpec(get_protocol(name)))


def read_protocol_checked(path, sha256: str | None = None, *, source: str | None = None) -> ResolvedProtocol:
    """The one read of a protocol file: its bytes, checked against ``sha256`` (hex) when given before anything
    parses them (InputError naming ``source``, field ``config.protocol``), then parsed."""
    import hashlib

    p = Path(path)
    raw = read_protocol_bytes(p)
    got = hashlib.sha256(raw).hexdigest()
    if sha256 is not None and got != str(sha256).lower():
        raise InputError(f"{str(p)!r} has SHA-256 {got}, not the recorded {sha256} (not read)", source=source,
                         field="config.protocol")
    return ResolvedProtocol("file", str(path), _parse_protocol(str(p), p.suffix.lower(), raw), raw)


def _read_file(path) -> ResolvedProtocol:
    """The one read of a protocol file: its bytes, parsed (cached on the bytes)."""
    p = Path(path)
    raw = read_protocol_bytes(p)  # a regular file within max_json_bytes: a FIFO or /dev/zero is one line
    return ResolvedProtocol("file", str(path), _parse_protocol(str(p), p.suffix.lower(), raw), raw)


def format_protocol(value, fmt: str = "toml") -> str:
    """Text of a built-in (or any resolvable) protocol as a protocol file, ``fmt`` = toml | json."""
    if fmt not in ("toml", "json"):
        raise InputError(f"format must be 'toml' or 'json', got {fmt!r}", field="format")
    spec = resolve(value).spec
    return to_toml(spec) if fmt == "toml" else to_json(spec)
