"""Resource limits, checked before the work they guard; every limit has a CLI option to raise it.

A limit protects the machine from an input (a file, a certificate someone sends, a protocol name) that would
take minutes or gigabytes: a 200,000-atom CIF in spglib, ``fibonacci-100000``, ``render --size 60000``, an
Inspect ``.eval`` with a 3 GiB member compressed to 3 MB. Exceeding one raises ``LimitError`` (an
``InputError``) whose one-line message names the quantity, the value, the limit and the option that raises it.

Limits travel one way: the limits in force are a context (:func:`active_limits`), entered with
:func:`using_limits`. A public function of ``viewcert.api`` takes ``limits=`` and enters it for the call; the
command line enters its ``--max-*`` options for the command; nothing below those takes a ``limits`` parameter, it
reads :func:`active_limits`. Work shipped to worker processes or a Dask cluster runs under the limits in force
where it was submitted (``parallel.map_items`` carries them). ``Limits`` methods (``check_atoms`` ...) are the
checks themselves.

Defaults (measured on the 2-core development machine, see tests/trust/test_hostile.py): ``max_atoms`` = 2,000 atoms
per structure after standardisation keeps one certification under a minute.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
from dataclasses import asdict, dataclass, replace

from viewcert.errors import InputError

__all__ = ["DEFAULT_LIMITS", "LimitError", "Limits", "MiB", "active_limits", "using_limits"]

MiB = 1 << 20


class LimitError(InputError):
    """An input asks for more work or memory than a limit allows; the message names the limit's option."""


@dataclass(frozen=True)
class Limits:
    """Upper bounds (all inclusive). Units: atoms, repetitions, views, pixels (width × height), points,
    bytes, and a dimensionless compression ratio."""

    max_atoms: int = 2000
    max_tiling: int = 125
    max_views: int = 500
    max_pixels: int = 16_777_216  # 4096 × 4096
    max_observations: int = 5_000_000  # atoms × tiling × views, the projected points of one structure
    max_zip_member_bytes: int = 512 * MiB
    max_zip_ratio: float = 200.0
    max_json_bytes: int = 256 * MiB
    max_symmetry_operations: int = 384  # a CIF's listed operations: 192 (Fm-3m's conventional cell) twice over
    max_symmetry_images: int = 200_000  # a CIF's asymmetric rows x operations, the images before deduplication
    max_questions: int = 100_000  # questions of one transformation export (per structure x structures)
    max_bootstrap_draws: int = 50_000_000  # bootstrap resamples x items (int64 indices: 400 MB at the limit)
    max_nesting: int = 64  # arrays/tables/objects nested in a received TOML or JSON file (a protocol file: 3)
    max_value_bytes: int = 1 * MiB  # one text/binary value of a Parquet file (an id, a label, a species)
    max_decoded_bytes: int = 256 * MiB  # text/binary of one Parquet row group (or column chunk) once decoded

    def __post_init__(self) -> None:
        for k, v in asdict(self).items():
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                raise InputError(f"limit {k} must be a positive number, got {v!r}", field=k)

    def with_overrides(self, **kw) -> Limits:
        """A copy with the given limits changed; ``None`` values are ignored (CLI options left unset)."""
        return replace(self, **{k: v for k, v in kw.items() if v is not None})

    def to_dict(self) -> dict:
        return asdict(self)

    # -- checks ------------------------------------------------------------------------------------------
    def check_atoms(self, n_atoms: int, *, source: str | None = None) -> None:
        _check(n_atoms, self.max_atoms, "atoms in one structure", "max_atoms", source)

    def check_tiling(self, tiling, *, what: str = "tiling", source: str | None = None) -> None:
        prod = 1
        for t in tiling:
            prod *= int(t)
        _check(prod, self.max_tiling, f"{what} product {'x'.join(str(int(t)) for t in tiling)}", "max_tiling",
               source)

    def check_views(self, n_views: int, *, source: str | None = None) -> None:
        _check(n_views, self.max_views, "views in the protocol", "max_views", source)

    def check_protocol_name(self, name: str, *, source: str | None = None) -> None:
        """``fibonacci-N`` is checked from its name, before any camera is built."""
        m = re.fullmatch(r"fibonacci-(\d+)", str(name).strip())
        if m:
            self.check_views(int(m.group(1)), source=source)

    def check_pixels(self, width: int, height: int, *, source: str | None = None, field: str | None = None) -> None:
        if width < 1 or height < 1:
            raise LimitError(f"image size must be positive, got {width}x{height}", source=source,
                             field=field or "size")
        _check(int(width) * int(height), self.max_pixels, f"image pixels ({width}x{height})", "max_pixels",
               source, field)

    def check_observations(self, n_points: int, *, source: str | None = None) -> None:
        _check(n_points, self.max_observations, "observed points (atoms x tiling x views)", "max_observations",
               source)

    def check_symmetry(self, n_operations: int, n_rows: int = 0, *, source: str | None = None,
                       field: str | None = None) -> None:
        """A CIF's symmetry operations, and the images they would generate (asymmetric rows × operations),
        before they are parsed or applied."""
        _check(n_operations, self.max_symmetry_operations, "symmetry operations", "max_symmetry_operations",
               source, field)
        _check(n_operations * n_rows, self.max_symmetry_images,
               f"symmetry images ({n_rows:,} atom rows x {n_operations:,} operations)", "max_symmetry_images",
               source, field)

    def check_questions(self, n_questions: int, *, source: str | None = None, field: str | None = None) -> None:
        """Questions an export would draw (``per_structure`` x structures), before any is drawn."""
        _check(int(n_questions), self.max_questions, "questions of the export", "max_questions", source, field)

    def check_bootstrap(self, n_boot: int, n_items: int = 1, *, source: str | None = None,
                        field: str | None = None) -> None:
        """Bootstrap draws (resamples x items), before the index matrix is allocated."""
        _check(int(n_boot) * max(int(n_items), 1), self.max_bootstrap_draws,
               f"bootstrap draws ({int(n_boot):,} resamples x {int(n_items):,} items)", "max_bootstrap_draws", source,
               field)

    def check_json_bytes(self, n_bytes: int, *, source: str | None = None) -> None:
        _check(n_bytes, self.max_json_bytes, "bytes of JSON/JSONL", "max_json_bytes", source)

    def check_nesting(self, depth: int, *, source: str | None = None, field: str | None = None) -> None:
        """How deep arrays, tables or objects nest in a received TOML or JSON file, before it is parsed (the
        parsers recurse: 5,000 levels were a RecursionError)."""
        _check(int(depth), self.max_nesting, "nesting depth (arrays, tables, objects)", "max_nesting", source, field)

    def check_decoded(self, n_bytes: int, *, what: str = "decoded text/binary bytes", source: str | None = None,
                      field: str | None = None) -> None:
        """Text/binary bytes a Parquet row group (or batch, or column chunk) decodes to, before they are made
        into values."""
        _check(int(n_bytes), self.max_decoded_bytes, what, "max_decoded_bytes", source, field)

    def check_value_bytes(self, n_bytes: int, *, source: str | None = None, field: str | None = None) -> None:
        """The longest text/binary value of a Parquet column, before it is made into a value."""
        _check(int(n_bytes), self.max_value_bytes, "bytes of one text/binary value", "max_value_bytes", source,
               field)

    def check_received_bytes(self, n_bytes: int, *, what: str = "file", source: str | None = None) -> None:
        """A received file's size (certificate, protocol file, manifest, harness log) against max_json_bytes."""
        _check(n_bytes, self.max_json_bytes, f"bytes of the {what}", "max_json_bytes", source)

    def check_zip_member(self, name: str, file_size: int, compress_size: int, *, source: str | None = None) -> None:
        """A zip member's uncompressed size and compression ratio, from its header, before extracting it."""
        _check(file_size, self.max_zip_member_bytes, f"uncompressed bytes of zip member {name!r}",
               "max_zip_member_bytes", source)
        ratio = file_size / max(int(compress_size), 1)
        if file_size > MiB and ratio > self.max_zip_ratio:
            raise LimitError(f"zip member {name!r} expands {ratio:.0f}-fold (limit max_zip_ratio = "
                             f"{self.max_zip_ratio:g}; raise with --max-zip-ratio)", source=source, field=name)


    def check_zip(self, path, *, source: str | None = None) -> None:
        """Every member of the zip archive at ``path`` (an Inspect ``.eval`` log, an xlsx workbook; or an open
        binary file object of one, named by ``source``), from the central directory, before anything is
        decompressed; a file that is not a zip passes (its reader decides)."""
        import zipfile  # lazy: start-up time (zipfile pulls in bz2/lzma/shutil; only harness readers need it)

        src = source or str(path)
        try:
            with zipfile.ZipFile(path) as zf:
                infos = zf.infolist()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError):
            return
        total = 0
        for info in infos:
            self.check_zip_member(info.filename, info.file_size, info.compress_size, source=src)
            total += info.file_size
        self.check_zip_total(total, source=src)

    def check_zip_total(self, total: int, *, source: str | None = None) -> None:
        """The uncompressed bytes of a whole zip archive (its members' stated sizes summed): 4 x max_zip_member_bytes."""
        _check(total, self.max_zip_member_bytes * 4, "uncompressed bytes of the whole archive",
               "max_zip_member_bytes", source)


def _check(value: int, limit, what: str, key: str, source: str | None, field: str | None = None) -> None:
    if value > limit:
        opt = "--" + key.replace("_", "-")
        raise LimitError(f"{what} = {value:,} exceeds the limit {key} = {limit:,} (raise it with {opt})",
                         source=source, field=field or key)


DEFAULT_LIMITS = Limits()
_ACTIVE: contextvars.ContextVar[Limits] = contextvars.ContextVar("viewcert_limits", default=DEFAULT_LIMITS)


def active_limits() -> Limits:
    """The limits in force in this context (entered by a public function's ``limits=``, the command line's
    ``--max-*`` options, or ``parallel.map_items`` in a worker), else the defaults.

    Returns
    -------
    Limits
        The limits entered by :func:`using_limits` in this context, else ``DEFAULT_LIMITS``.
    """
    return _ACTIVE.get()


@contextlib.contextmanager
def using_limits(limits: Limits | None):
    """``active_limits()`` is ``limits`` inside the block; ``None`` keeps the limits already in force (a public
    function called without ``limits=``).

    Parameters
    ----------
    limits : Limits or None
        The limits in force inside the block; None: those in force already.

    Yields
    ------
    Limits
        The limits in force inside the block; the previous limits are restored when the block exits, also on an
        exception.
    """
    if limits is None:
        yield _ACTIVE.get()
        return
    if not isinstance(limits, Limits):
        raise TypeError(f"limits must be a Limits, got {type(limits).__name__}")
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)
