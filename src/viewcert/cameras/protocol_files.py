"""Protocol files: your own views as TOML or JSON, read into a ``Protocol`` and written back exactly.

Schema (docs/protocols.md): a ``[protocol]`` table (``name``, ``description``, ``kind`` = "orthographic" |
"perspective", ``fov_deg`` for perspective, ``width``/``height`` in px) and one ``[[views]]`` table per view
with a ``name`` and exactly one camera form:

- ``rotation``: the 3×3 world→camera rotation R (rows = camera x right, y up, z toward the viewer);
- ``direction`` (+ optional ``up``): view direction into the scene, world; ``up`` projected to screen up;
- ``ase``: an ASE rotation string such as "-60x,-30y,-15z" (R = rotate(s)ᵀ);
- ``chimerax``: ``view matrix camera`` with 12 numbers (string or list; row-major 3×4 camera→scene, the last
  column is the camera position in Å);
- ``pymol``: the 18 numbers of PyMOL's ``get_view()`` (0–8 the column-major 3×3 model→camera rotation,
  9–11 the origin of rotation in camera space, 12–14 the origin of rotation in model space, 15/16 the front
  and rear clipping distances, 17 the orthoscopic flag / field of view: > 0 orthoscopic, < 0 perspective
  with field of view −v[17] degrees).

An informational ``ase_string`` may accompany any form; it must give the same matrix. Camera positions
(ChimeraX, PyMOL) are kept in the record; cameras are still letterbox-framed per structure
(docs/conventions.md). Writing always emits ``rotation`` with every float in shortest round-trip form, so
write → read gives bit-identical matrices.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from viewcert.cameras.camera import check_rotation
from viewcert.cameras.pose import from_ase_string, from_chimerax, look_at
from viewcert.cameras.protocols import Protocol, View
from viewcert.errors import CameraError, InputError
from viewcert.io.atomic import write_text_atomic
from viewcert.io.received import loads_json_strict, loads_toml, read_received_bytes, refuse_unknown_keys

FORMAT = "viewcert-protocol/1"
CAMERA_FORMS = ("rotation", "direction", "ase", "chimerax", "pymol")
KINDS = ("orthographic", "perspective")
#: the keys a protocol file may hold (anything else is refused, naming the nearest valid key)
TOP_KEYS = ("protocol", "views")
HEAD_KEYS = ("format", "name", "description", "kind", "fov_deg", "width", "height")
VIEW_KEYS = ("name", *CAMERA_FORMS, "up", "position", "ase_string")
ROTATION_ATOL_FILE = 1e-6  # rotations typed by hand or printed with 6-8 digits are re-orthonormalised


@dataclass(frozen=True, eq=False)
class ProtocolSpec:
    """A protocol with its camera settings: kind, field of view (deg, perspective), image size (px), the
    camera positions a form carried (Å, world; None when the form has none) and the source file's SHA-256."""

    protocol: Protocol
    kind: str = "orthographic"
    fov_deg: float = 30.0
    width: int = 768
    height: int = 768
    positions: tuple = field(default=())
    source: str | None = None
    sha256: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InputError(f"kind must be one of {KINDS}, got {self.kind!r}", field="protocol.kind")
        if not (math.isfinite(self.fov_deg) and 0 < self.fov_deg < 180):
            raise InputError(f"fov_deg must be in (0, 180), got {self.fov_deg}", field="protocol.fov_deg")
        for k in ("width", "height"):
            v = getattr(self, k)
            if isinstance(v, bool) or int(v) != v or v <= 0:
                raise InputError(f"{k} must be a positive integer of px, got {v!r}", field=f"protocol.{k}")
            object.__setattr__(self, k, int(v))
        pos = tuple(self.positions) or (None,) * len(self.protocol)
        if len(pos) != len(self.protocol):
            raise InputError("one position (or None) per view", field="positions")
        object.__setattr__(self, "positions", pos)

    def to_dict(self) -> dict:
        """The file's content as a dict (``rotation`` form for every view)."""
        head = {"format": FORMAT, "name": self.protocol.name, "description": self.protocol.description,
                "kind": self.kind, "width": self.width, "height": self.height}
        if self.kind == "perspective":
            head["fov_deg"] = float(self.fov_deg)
        views = []
        for v, p in zip(self.protocol.views, self.positions, strict=True):
            d = {"name": v.name, "rotation": [[float(x) for x in row] for row in v.rotation.tolist()]}
            if v.ase_string is not None:
                d["ase_string"] = v.ase_string
            if p is not None:
                d["position"] = [float(x) for x in p]
            views.append(d)
        return {"protocol": head, "views": views}

    def digest(self) -> str:
        """SHA-256 of the canonical JSON of ``to_dict()`` (independent of the file's formatting)."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()


# ----------------------------------------------------------------------------- camera forms
def _numbers(value, n: int, where: str) -> np.ndarray:
    if isinstance(value, str):
        parts = [p for p in value.replace(",", " ").replace("[", " ").replace("]", " ").split() if p]
    else:
        parts = list(np.ravel(np.asarray(value, dtype=object)))
    if len(parts) != n:
        raise InputError(f"needs {n} numbers, got {len(parts)}", field=where)
    try:
        arr = np.array([float(p) for p in parts], dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"has a non-number among {parts}", field=where) from None
    if not np.isfinite(arr).all():
        raise InputError("has a non-finite number", field=where)
    return arr


def _orthonormalise(r: np.ndarray, where: str) -> np.ndarray:
    """Nearest rotation (polar decomposition) when r is a rotation within ROTATION_ATOL_FILE; r itself when
    exact (so written files read back bit-identical)."""
    try:
        check_rotation(r, name=where)
        return np.ascontiguousarray(r)
    except CameraError:
        pass
    try:
        check_rotation(r, name=where, atol=ROTATION_ATOL_FILE)
    except CameraError as exc:
        raise InputError(str(exc), field=where) from None
    u, _, vt = np.linalg.svd(r)
    return np.ascontiguousarray(u @ vt)


def pymol_view(values, where: str = "pymol") -> tuple[np.ndarray, np.ndarray, str, float | None]:
    """PyMOL ``get_view()`` (18 numbers) → (R world→camera, camera position Å, kind, fov_deg or None)."""
    v = _numbers(values, 18, where)
    r = _orthonormalise(v[:9].reshape(3, 3).T, f"{where}[0:9] (column-major rotation)")
    origin_cam, origin_model = v[9:12], v[12:15]
    position = origin_model - r.T @ origin_cam  # camera at cam-frame 0: model = origin + Rᵀ(0 − origin_cam)
    flag = float(v[17])
    kind = "orthographic" if flag > 0 else "perspective"
    fov = abs(flag) if abs(flag) > 1 and abs(flag) < 180 else None
    return r, position, kind, fov


def to_pymol_view(rotation, position=(0.0, 0.0, 50.0), origin=(0.0, 0.0, 0.0), *, orthographic=True,
                  fov_deg: float = 20.0, clip=(40.0, 100.0)) -> list[float]:
    """The 18 numbers PyMOL's ``set_view`` takes for R (world→camera), a camera position and the origin
    of rotation (Å, world)."""
    r = np.asarray(rotation, dtype=np.float64)
    check_rotation(r)
    origin_cam = r @ (np.asarray(origin, float) - np.asarray(position, float))
    flag = fov_deg if orthographic else -fov_deg
    return [*r.T.ravel().tolist(), *origin_cam.tolist(), *map(float, origin), float(clip[0]), float(clip[1]),
            float(flag)]


def _view_rotation(d: dict, where: str) -> tuple[np.ndarray, np.ndarray | None]:
    forms = [k for k in CAMERA_FORMS if k in d]
    if len(forms) != 1:
        raise InputError(f"needs exactly one camera form of {CAMERA_FORMS}, got {forms or 'none'}", field=where)
    form = forms[0]
    fw = f"{where}.{form}"
    try:
        if form == "rotation":
            return _orthonormalise(_numbers(d["rotation"], 9, fw).reshape(3, 3), fw), None
        if form == "direction":
            up = _numbers(d["up"], 3, f"{where}.up") if "up" in d else (0.0, 0.0, 1.0)
            return look_at(_numbers(d["direction"], 3, fw), up=up), None
        if form == "ase":
            if not isinstance(d["ase"], str):
                raise InputError("must be a string such as '-60x,-30y,-15z'", field=fw)
            return from_ase_string(d["ase"]), None
        if form == "chimerax":
            text = d["chimerax"]
            if not isinstance(text, str):
                text = ",".join(repr(float(x)) for x in _numbers(text, 12, fw))
            return from_chimerax(text)
        r, pos, _, _ = pymol_view(d["pymol"], fw)
        return r, pos
    except CameraError as exc:
        raise InputError(str(exc), field=fw) from None


def _view(d, i: int) -> tuple[View, np.ndarray | None]:
    if not isinstance(d, dict):
        raise InputError(f"view {i} must be a table, got {type(d).__name__}", field=f"views[{i}]")
    name = d.get("name", f"view{i}")
    if not isinstance(name, str) or not name:
        raise InputError(f"view {i}: name must be a non-empty string", field=f"views[{i}].name")
    where = f"views[{name}]"
    refuse_unknown_keys(d, VIEW_KEYS, where=where)
    r, pos = _view_rotation(d, where)
    if "position" in d:
        pos = _numbers(d["position"], 3, f"{where}.position")
    ase = d.get("ase", d.get("ase_string"))
    if "ase_string" in d and "ase" not in d:
        if not isinstance(ase, str):
            raise InputError("must be a string", field=f"{where}.ase_string")
        try:
            other = from_ase_string(ase)
        except CameraError as exc:
            raise InputError(str(exc), field=f"{where}.ase_string") from None
        if np.abs(other - r).max() > ROTATION_ATOL_FILE:
            raise InputError(f"gives a different rotation than the view's camera (max diff "
                             f"{np.abs(other - r).max():.3g})", field=f"{where}.ase_string")
    try:
        return View(name, r, ase_string=ase), pos
    except CameraError as exc:
        raise InputError(str(exc), field=where) from None


def spec_from_dict(d: dict, *, source: str | None = None, sha256: str | None = None) -> ProtocolSpec:
    """Build a ProtocolSpec from the file's content (see the module docstring). A key outside TOP_KEYS,
    HEAD_KEYS or VIEW_KEYS is refused naming it and the nearest valid key (a misspelt ``upp`` is never
    ignored)."""
    if not isinstance(d, dict):
        raise InputError("a protocol file holds a table/object at the top level", source=source)
    try:
        refuse_unknown_keys(d, TOP_KEYS)
        head = d.get("protocol", {})
        if not isinstance(head, dict):
            raise InputError("must be a table", field="protocol")
        refuse_unknown_keys(head, HEAD_KEYS, where="protocol")
        if head.get("format", FORMAT) != FORMAT:
            raise InputError(f"unsupported format {head['format']!r}; expected {FORMAT!r}", field="protocol.format")
        name = head.get("name") or (Path(source).stem if source else "custom")
        views_in = d.get("views")
        if not isinstance(views_in, list) or not views_in:
            raise InputError("needs a non-empty list of views ([[views]] tables)", field="views")
        pairs = [_view(v, i) for i, v in enumerate(views_in)]
        try:
            proto = Protocol(str(name), tuple(v for v, _ in pairs), str(head.get("description", "")))
        except CameraError as exc:
            raise InputError(str(exc), field="views") from None
        kind = head.get("kind", "orthographic")
        return ProtocolSpec(proto, kind=kind, fov_deg=float(head.get("fov_deg", 30.0)),
                            width=head.get("width", 768), height=head.get("height", 768),
                            positions=tuple(p for _, p in pairs), source=source, sha256=sha256)
    except InputError as exc:
        if source is not None and exc.source is None:  # "file F, field X: ...", the house form
            text, head = str(exc), f"field {exc.field}: "
            raise InputError(text[len(head):] if exc.field and text.startswith(head) else text, source=source,
                             field=exc.field) from None
        raise


def read_protocol_file(path) -> ProtocolSpec:
    """Read a ``.toml`` or ``.json`` protocol file (``viewcert.io.received``: a regular file, its size
    checked before reading); InputError naming the file, view and field."""
    p = Path(path)
    return _parse_protocol(str(p), p.suffix.lower(), read_protocol_bytes(p))


def read_protocol_bytes(path) -> bytes:
    """The bytes of a protocol file, read as a received file (``viewcert.io.received``): a regular file
    within ``max_json_bytes``; a FIFO, a device or a directory is one InputError, nothing read."""
    return read_received_bytes(path, what="protocol file")


@lru_cache(maxsize=32)
def _parse_protocol(source: str, suffix: str, raw: bytes) -> ProtocolSpec:
    """The spec of a protocol file's bytes. Cached on (path, suffix, the bytes themselves): a run resolves a
    file once (``viewcert.cameras.resolve``), and parsing it costs ≈ 0.7 ms; an edited file is new
    bytes, so it is parsed again. Failures are not cached. The spec is immutable (read-only rotations).
    Duplicate keys are refused: by ``loads_json_strict`` in JSON, by ``tomllib`` itself in TOML (the error
    quotes the line)."""
    try:
        if suffix == ".toml":
            d = loads_toml(raw.decode("utf-8"), source=source)  # tomllib refuses a duplicate key
        elif suffix == ".json":
            d = loads_json_strict(raw.decode("utf-8"), source=source)  # a duplicate key is refused
        else:
            raise InputError("protocol files end in .toml or .json", source=source)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid {suffix[1:].upper()}: {exc}", source=source) from None
    return spec_from_dict(d, source=source, sha256=hashlib.sha256(raw).hexdigest())


# ----------------------------------------------------------------------------- writing
def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InputError(f"cannot write a non-finite number {v}", field="protocol")
        return repr(v)  # shortest round-trip form; TOML floats accept it (e.g. 1e-17, -0.0)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise InputError(f"cannot write a {type(v).__name__} to TOML", field="protocol")


def to_toml(spec: ProtocolSpec) -> str:
    """The TOML text of ``spec`` (a small writer: tables of scalars and numeric arrays only)."""
    d = spec.to_dict()
    lines = ["[protocol]"] + [f"{k} = {_toml_value(v)}" for k, v in d["protocol"].items()]
    for v in d["views"]:
        lines += ["", "[[views]]"] + [f"{k} = {_toml_value(x)}" for k, x in v.items()]
    return "\n".join(lines) + "\n"


def to_json(spec: ProtocolSpec) -> str:
    return json.dumps(spec.to_dict(), indent=2) + "\n"


def write_protocol_file(spec: ProtocolSpec | Protocol, path) -> Path:
    """Write ``spec`` as TOML or JSON (by suffix); reading it back gives identical matrices."""
    spec = spec if isinstance(spec, ProtocolSpec) else ProtocolSpec(spec)
    p = Path(path)
    fmt = p.suffix.lower()
    if fmt not in (".toml", ".json"):
        raise InputError("protocol files end in .toml or .json", source=str(p))
    write_text_atomic(p, to_toml(spec) if fmt == ".toml" else to_json(spec))  # no symlink followed in a run's folder
    return p


# ----------------------------------------------------------------------------- naming (resolving: viewcert.cameras.resolve)
def is_protocol_file(value) -> bool:
    """True when ``value`` names a protocol file (a Path, or a string ending in .toml/.json)."""
    return isinstance(value, Path) or (isinstance(value, str) and value.lower().endswith((".toml", ".json")))
