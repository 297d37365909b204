"""``images:FOLDER/images.toml``: the images a benchmark published, read and checked before any work.

The file (docs/images-toml.md) lists one ``[[image]]`` table per published image: ``file`` (the PNG or JPEG, a
name relative to the file's folder), ``item`` (the question it belongs to: the images of one item are its views;
default the file's stem), ``structure`` (the structure as shipped: a CIF, POSCAR, (extended) XYZ ... relative to
the folder; its atoms in Cartesian Å; a crystal drawn as ``tiling`` repetitions of its cell), ``camera`` (the
tool's own terms: ``viewcert.cameras.resolve_tool_camera``, docs/tool-cameras.md), and optionally ``palette`` (a
name of ``detect.palettes.PALETTE_NAMES`` or a table of element colours), ``answer`` (the question's answer:
``crystal_system``, ``point_group``, ``space_group``), ``cell_frame`` (how a CIF's cell sits in the tool's
Cartesian frame) and ``shading``. A top-level ``palette`` and ``shading`` apply to every image that gives none.
``camera = { tool = "unknown" }`` (a benchmark that published no camera) is read as such and left to camera
recovery; this command refuses it.

Everything read is hostile. A path is a relative name that resolves (symbolic links followed) inside the folder;
an image is a regular PNG or JPEG file whose header is read and checked (``io.pictures``: format, colour model,
``max_pixels``) and whose size must be the camera's; a camera is resolved here (a NaN, a singular rotation, an
unknown tool is one line naming ``camera.<field>``); a palette must colour every element of its structure; the
tiling and the atoms drawn are checked against the limits. Each failure is one ``InputError`` naming the file and
the field (``images.toml``, ``image[3].camera.view``), before any pixel is decoded or any atom detected.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

import numpy as np

from viewcert.cameras.pixel_projection import PixelProjection
from viewcert.cameras.tool_cameras import resolve_tool_camera
from viewcert.detect.colour import SHADINGS
from viewcert.detect.palettes import Palette, named_palette, palette_from_table
from viewcert.elements import SYMBOLS
from viewcert.errors import InputError
from viewcert.io.pictures import picture_header
from viewcert.io.read import read_structure
from viewcert.io.received import loads_toml, read_received_bytes, refuse_unknown_keys
from viewcert.limits import active_limits
from viewcert.structures import Structure

__all__ = ["CELL_FRAMES", "IMAGES_FORMAT", "ImageEntry", "ImageItem", "ImagesSpec", "UNKNOWN_TOOL", "load_images"]

IMAGES_FORMAT = "viewcert-images/1"
TOP_KEYS = ("format", "palette", "shading", "image")
IMAGE_KEYS = ("file", "item", "name", "structure", "tiling", "cell_frame", "camera", "palette", "answer", "shading")
ANSWER_KEYS = ("crystal_system", "point_group", "space_group")
#: how a CIF's cell is placed in the tool's Cartesian frame: a along x and b in the xy plane (ASE, PyMOL,
#: OVITO, VESTA, Jmol: the crystallographic convention), or pymatgen's (c along z, viewcert's CIF reader)
CELL_FRAMES = ("a-along-x", "pymatgen")
#: the camera tool of a benchmark that published no camera (camera recovery, issue 54)
UNKNOWN_TOOL = "unknown"
_CIF_SUFFIXES = (".cif", ".mcif")


@dataclass(frozen=True)
class ImageEntry:
    """One published image as the file names it: its place in the file (``index``), its name relative to the
    folder (``file``) and where it lies (``path``), the view's ``name``, its ``item``, the camera table as given, its
    tool and the camera resolved (``projection``; None for ``tool = "unknown"``), the palette, the detector's shading model, and the
    image's header (format, width, height, colour)."""

    index: int
    file: str
    path: Path
    name: str
    item: str
    camera: Mapping
    tool: str
    projection: PixelProjection | None
    palette: Palette
    shading: str
    header: tuple

    @property
    def where(self) -> str:
        return f"image[{self.index}]"


@dataclass(frozen=True)
class ImageItem:
    """One question: its id, the structure as shipped (name relative to the folder, where it lies, its SHA-256, the
    cell frame of a CIF, the tiling drawn), the answer the file gives (or None) and its images (the views), in file order."""

    id: str
    structure: str
    structure_path: Path
    structure_sha256: str
    cell_frame: str
    tiling: tuple[int, int, int]
    answer: dict | None
    images: tuple[ImageEntry, ...]


@dataclass(frozen=True)
class ImagesSpec:
    """An ``images.toml`` read and checked: the spec as recorded (``images:<file name>``, location-free), the
    file's path and folder, its items in file order and the SHA-256 of every file it names (by name relative to
    the folder, ``images.toml`` itself included)."""

    spec: str
    path: Path
    folder: Path
    items: tuple[ImageItem, ...]
    files: dict[str, str] = field(default_factory=dict)

    @property
    def images(self) -> tuple[ImageEntry, ...]:
        return tuple(im for it in self.items for im in it.images)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _inside(folder: Path, name, where: str, source: str) -> tuple[str, Path]:
    """(the name as written, posix, and the path it resolves to), refused unless a relative name resolving inside
    ``folder`` (links followed)."""
    if not isinstance(name, str) or not name.strip() or "\x00" in name:
        raise InputError("must be a file name relative to the folder of images.toml", source=source, field=where)
    rel = PurePosixPath(name.replace("\\", "/"))
    if rel.is_absolute() or Path(name).is_absolute() or (rel.parts and rel.parts[0].endswith(":")):
        raise InputError(f"{name[:80]!r} is an absolute path: images and structures are read only inside the "
                         "folder of images.toml", source=source, field=where)
    path = (folder / Path(*rel.parts)).resolve()
    if not path.is_relative_to(folder):
        raise InputError(f"{name[:80]!r} resolves outside the folder of images.toml; only files inside it are "
                         "read", source=source, field=where)
    return rel.as_posix(), path


def _tiling(value, where: str, source: str) -> tuple[int, int, int]:
    ok = isinstance(value, list) and len(value) == 3 and all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value)
    if not ok:
        raise InputError(f"tiling must be three positive integers, got {str(value)[:60]}", source=source, field=where)
    t = (int(value[0]), int(value[1]), int(value[2]))
    active_limits().check_tiling(t, source=source)
    return t


def _answer(value, where: str, source: str) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputError("answer must be a table (crystal_system, point_group, space_group)", source=source,
                         field=where)
    refuse_unknown_keys(value, ANSWER_KEYS, source=source, where=where)
    out: dict = {}
    if "crystal_system" in value:
        from viewcert.symmetry.labels import CRYSTAL_SYSTEMS  # lazy: spglib loads with symmetry

        cs = str(value["crystal_system"]).strip().lower()
        if cs not in CRYSTAL_SYSTEMS:
            raise InputError(f"unknown crystal system {cs[:40]!r}; one of {', '.join(CRYSTAL_SYSTEMS)}",
                             source=source, field=f"{where}.crystal_system")
        out["crystal_system"] = cs
    if "point_group" in value:
        if not isinstance(value["point_group"], str) or not value["point_group"].strip():
            raise InputError("point_group must be text (Hermann–Mauguin, e.g. 'm-3m')", source=source,
                             field=f"{where}.point_group")
        out["point_group"] = value["point_group"].strip()
    if "space_group" in value:
        sg = value["space_group"]
        if isinstance(sg, bool) or not isinstance(sg, int) or not 1 <= sg <= 230:
            raise InputError(f"space_group must be a number 1–230, got {str(sg)[:40]}", source=source,
                             field=f"{where}.space_group")
        out["space_group"] = int(sg)
    return out or None


def _palette(value, where: str, source: str) -> Palette:
    if isinstance(value, str):
        try:
            return named_palette(value, source=source)
        except InputError as exc:
            raise InputError(exc.message, source=source, field=where) from None
    if isinstance(value, Mapping):
        return palette_from_table(value, source=source, field_name=where)
    raise InputError("palette must be a palette's name or a table of element colours", source=source, field=where)


def read_shipped_structure(path: Path, name: str, cell_frame: str) -> Structure:
    """The structure as shipped (``name``: as the file names it), a CIF's cell placed in ``cell_frame``."""
    try:
        s = read_structure(path)
    except InputError as exc:
        raise InputError(exc.message.replace(str(path), name), source=name, field=exc.field or "structure") from None
    if s.is_periodic and path.suffix.lower() in _CIF_SUFFIXES and cell_frame == "a-along-x":
        from ase.geometry import cell_to_cellpar, cellpar_to_cell

        lattice = cellpar_to_cell(cell_to_cellpar(np.asarray(s.lattice)))
        s = replace(s, positions=np.asarray(s.frac_coords) @ lattice, lattice=lattice)
    return s


@dataclass
class _Reading:
    """What the reading of one images.toml carries from step to step: its name, folder, defaults and the SHA-256
    of every file read so far."""

    source: str
    folder: Path
    palette: Palette
    shading: str
    files: dict
    seen: set = field(default_factory=set)


def _group(doc: Mapping, r: _Reading) -> dict[str, list]:
    """The ``[[image]]`` tables grouped by item, in file order: item -> [(index, table, file, path, name)]."""
    entries = doc.get("image")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, Mapping) for e in entries):
        raise InputError("lists its images as [[image]] tables", source=r.source, field="image")
    active_limits().check_views(len(entries), source=r.source)
    grouped: dict[str, list] = {}
    for k, e in enumerate(entries):
        where = f"image[{k}]"
        refuse_unknown_keys(e, IMAGE_KEYS, source=r.source, where=where)
        file, path = _inside(r.folder, e.get("file"), f"{where}.file", r.source)
        item = e.get("item", PurePosixPath(file).stem)
        name = e.get("name", PurePosixPath(file).stem)
        for key, val in (("item", item), ("name", name)):
            if not isinstance(val, str) or not val.strip() or len(val) > 200:
                raise InputError(f"{key} must be non-empty text (at most 200 characters)", source=r.source,
                                 field=f"{where}.{key}")
        grouped.setdefault(item, []).append((k, e, file, path, name))
    return grouped


def _image(k: int, e: Mapping, file: str, path: Path, name: str, item_id: str, symbols, r: _Reading) -> ImageEntry:
    """One image checked: listed once, its header (format, colour, size vs max_pixels), its palette covering the
    structure, its shading, its camera resolved at the image's own size."""
    w = f"image[{k}]"
    if file in r.seen:
        raise InputError(f"{file[:80]!r} is listed twice", source=r.source, field=f"{w}.file")
    r.seen.add(file)
    head = read_received_bytes(path, what="image")
    fmt, width, height, colour, depth = picture_header(head, source=file)
    active_limits().check_pixels(width, height, source=file, field="image")
    r.files[file] = _sha(head)
    palette = _palette(e["palette"], f"{w}.palette", r.source) if "palette" in e else r.palette
    try:
        palette.check_covers(symbols)
    except InputError as exc:
        raise InputError(exc.message, source=r.source, field=f"{w}.palette") from None
    shading = e.get("shading", r.shading)
    if shading not in SHADINGS:
        raise InputError(f"shading must be one of {SHADINGS}", source=r.source, field=f"{w}.shading")
    camera = e.get("camera")
    if not isinstance(camera, Mapping):
        raise InputError("needs the camera in the tool's own terms (a table with tool = ...)", source=r.source,
                         field=f"{w}.camera")
    tool = str(camera.get("tool", "")).strip().lower()
    projection = None if tool == UNKNOWN_TOOL else resolve_tool_camera(
        camera, where=f"{r.source}, {w}", image_size=(width, height), name=name)
    return ImageEntry(k, file, path, name, item_id, dict(camera), tool, projection, palette, shading,
                      (fmt, width, height, colour, depth))


def _item(item_id: str, rows: list, r: _Reading) -> ImageItem:
    """One item checked: its images agree on structure, tiling, cell frame and answer; the structure read (inside
    the folder) and its drawn atoms against the limits; then each image (:func:`_image`)."""
    first_k, first = rows[0][0], rows[0][1]
    for key in ("structure", "tiling", "cell_frame", "answer"):
        for k, e, *_ in rows[1:]:
            if e.get(key) != first.get(key):
                raise InputError(f"the images of item {item_id[:60]!r} disagree on {key} (image[{first_k}] and "
                                 f"image[{k}]): one question shows one structure", source=r.source,
                                 field=f"image[{k}].{key}")
    where = f"image[{first_k}]"
    if "structure" not in first:
        raise InputError("names the structure as shipped (a structure file relative to the folder)",
                         source=r.source, field=f"{where}.structure")
    s_name, s_path = _inside(r.folder, first["structure"], f"{where}.structure", r.source)
    cell_frame = first.get("cell_frame", CELL_FRAMES[0])
    if cell_frame not in CELL_FRAMES:
        raise InputError(f"cell_frame must be one of {CELL_FRAMES}", source=r.source, field=f"{where}.cell_frame")
    structure = read_shipped_structure(s_path, s_name, cell_frame)
    r.files[s_name] = _sha(read_received_bytes(s_path, what="structure file"))
    tiling = _tiling(first.get("tiling", [1, 1, 1]), f"{where}.tiling", r.source)
    if not structure.is_periodic and tiling != (1, 1, 1):
        raise InputError("a molecule (no cell) cannot be tiled", source=r.source, field=f"{where}.tiling")
    n_drawn = structure.n_atoms * math.prod(tiling)
    active_limits().check_atoms(n_drawn, source=r.source)
    active_limits().check_observations(n_drawn * len(rows), source=r.source)
    answer = _answer(first.get("answer"), f"{where}.answer", r.source)
    symbols = sorted({SYMBOLS[int(z)] for z in structure.numbers})
    images = tuple(_image(k, e, file, path, name, item_id, symbols, r) for k, e, file, path, name in rows)
    names = [im.name for im in images]
    if len(set(names)) != len(names):
        raise InputError(f"two views of item {item_id[:60]!r} share a name", source=r.source, field=f"{where}.name")
    return ImageItem(item_id, s_name, s_path, r.files[s_name], cell_frame, tiling, answer, images)


def load_images(spec: str | Path) -> ImagesSpec:
    """Read and check ``images:FOLDER/images.toml`` (module docstring) before any work.

    Parameters
    ----------
    spec : str or Path
        ``images:PATH`` (or a path to the ``.toml`` file).

    Returns
    -------
    ImagesSpec
        Its items (images grouped by ``item``, in file order), cameras resolved, every file's SHA-256.

    Raises
    ------
    InputError
        One line naming the file and field: a path outside the folder, an image that is not a PNG/JPEG of the
        camera's size, a palette or 16-bit PNG, too many pixels, a bad camera, an unknown tool, a palette without an
        element of the structure, a structure that cannot be read, items whose images disagree on their
        structure.
    """
    text = str(spec)
    raw = text[len("images:"):] if text.startswith("images:") else text
    if not raw:
        raise InputError("images: needs the path of an images.toml (images:FOLDER/images.toml)", field="INPUT")
    toml_path = Path(raw).expanduser()
    source = toml_path.name
    data = read_received_bytes(toml_path, what="images.toml")
    try:
        doc = loads_toml(data.decode("utf-8"), source=source)
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", source=source, field="encoding") from None
    refuse_unknown_keys(doc, TOP_KEYS, source=source)
    fmt = doc.get("format", IMAGES_FORMAT)
    if fmt != IMAGES_FORMAT:
        raise InputError(f"format must be {IMAGES_FORMAT!r}, got {str(fmt)[:40]!r}", source=source, field="format")
    shading = doc.get("shading", "auto")
    if shading not in SHADINGS:
        raise InputError(f"shading must be one of {SHADINGS}", source=source, field="shading")
    r = _Reading(source, toml_path.resolve().parent, _palette(doc.get("palette", "jmol"), "palette", source),
                 shading, {source: _sha(data)})
    items = tuple(_item(item_id, rows, r) for item_id, rows in _group(doc, r).items())
    return ImagesSpec(f"images:{source}", toml_path, r.folder, items, dict(sorted(r.files.items())))
