"""Atomic file writers: a reader never sees a partial file.

Every writer serialises fully first (where the format allows), writes a temporary file in the target's
directory, ``fsync``s it, ``os.replace``s it over the target and ``fsync``s the directory. If anything
fails, the temporary file is removed and the target is left as it was (absent or the previous version).
Inside a run's output folder (``io.confine.writing_into``) the target's folders are reached without following
any symlink and the temporary file is created ``O_EXCL|O_NOFOLLOW`` (``io.confine.write_inside``).

JSON is deterministic: keys sorted, ``", "``/``": "`` separators with ``indent=1``, floats in Python's
shortest round-trip form (exact and platform independent), ``-0.0`` written as ``0.0``, numpy scalars and
arrays converted, tuples as lists, ``Path`` as ``str``. NaN and ±inf are refused (they are not JSON) unless
``allow_nan=True``, in which case they are written as the tokens ``NaN``/``Infinity``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from viewcert.errors import InputError
from viewcert.io.confine import write_inside
from viewcert.sanitize import json_text


def _atomic(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> Path:
    """Call ``write(fh)`` on a temporary file beside ``path``, fsync it and rename it over ``path`` (``io.confine.
    write_inside``: inside a run's output folder no symlink is followed on the way); clean up on any failure."""
    return write_inside(path, write, sync=True)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns the path.

    Parameters
    ----------
    path : str or path-like
        The target file; its folder is created if missing.
    data : bytes, bytearray or memoryview
        The file's whole content.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        ``data`` is not bytes-like (field ``data``), or a folder stands at ``path``.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise InputError(f"data must be bytes, got {type(data).__name__}", field="data")

    return _atomic(path, lambda fh: fh.write(data))


def write_text_atomic(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically (no newline translation); returns the path.

    Parameters
    ----------
    path : str or path-like
        The target file; its folder is created if missing.
    text : str
        The file's whole content.
    encoding : str, default "utf-8"
        The text's encoding.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        ``text`` is not a ``str`` (field ``text``), or a folder stands at ``path``.
    """
    if not isinstance(text, str):
        raise InputError(f"text must be str, got {type(text).__name__}", field="text")
    return write_bytes_atomic(path, text.encode(encoding))


def write_chunks_atomic(path: str | os.PathLike, chunks: Iterable[str], *, encoding: str = "utf-8") -> Path:
    """Write the texts ``chunks`` one after another to ``path`` atomically (a file too big to hold as one text:
    each chunk is written as it comes); returns the path."""

    def write(fh: BinaryIO) -> None:
        for chunk in chunks:
            fh.write(chunk.encode(encoding))
    return _atomic(path, write)


class _General(Exception):
    """Raised by :func:`_plain` where the general walk must decide (an error to name, a key to convert)."""


_INF = (math.inf, -math.inf)


def _plain(obj: Any, allow_nan: bool) -> Any:
    """:func:`_normalise` of a tree of plain JSON values (``dict`` with ``str`` keys, ``list``, ``tuple``, ``str``,
    ``int``, ``float``, ``bool``, None), dispatched on the exact type and without building the JSON path of every
    node (most of the general walk's time on a certificate); any other value is handed to :func:`_normalise`.
    Raises :class:`_General` where that walk would raise or convert a key, so that it runs instead and names the
    path: the value returned is the general walk's, bit for bit."""
    t = type(obj)
    if t is str or t is bool or t is int or obj is None:
        return obj
    if t is float:
        if obj != obj or obj in _INF:  # NaN or ±inf
            if not allow_nan:
                raise _General
            return obj
        return 0.0 if obj == 0.0 else obj
    if t is dict:
        out = {}
        for k, v in obj.items():
            if type(k) is not str:
                raise _General
            out[k] = _plain(v, allow_nan)
        return out
    if t is list or t is tuple:
        return [_plain(v, allow_nan) for v in obj]
    try:
        return _normalise(obj, allow_nan)
    except InputError:
        raise _General from None


def _normalise(obj: Any, allow_nan: bool, where: str = "$") -> Any:
    if obj is None or isinstance(obj, bool | str):
        return obj
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        x = float(obj)
        if not math.isfinite(x) and not allow_nan:
            raise InputError(
                f"non-finite number {x} at {where} (pass allow_nan=True to write it)", field=where
            )
        return 0.0 if x == 0.0 else x
    if isinstance(obj, np.ndarray):
        return [_normalise(v, allow_nan, f"{where}[{i}]") for i, v in enumerate(obj.tolist())]
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                if isinstance(k, int | float | bool | np.integer) or k is None:
                    k = json.dumps(_normalise(k, True))
                else:
                    raise InputError(
                        f"JSON object keys must be strings, got {type(k).__name__} at {where}", field=where
                    )
            out[k] = _normalise(v, allow_nan, f"{where}.{k}")
        return out
    if isinstance(obj, list | tuple):
        return [_normalise(v, allow_nan, f"{where}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _normalise(dataclasses.asdict(obj), allow_nan, where)
    if hasattr(obj, "to_dict"):
        return _normalise(obj.to_dict(), allow_nan, where)
    raise InputError(f"cannot write {type(obj).__name__} as JSON at {where}", field=where)


def json_dumps(obj: Any, *, indent: int | None = 1, allow_nan: bool = False) -> str:
    """The deterministic JSON text ``write_json_atomic`` writes (ending in a newline). Non-ASCII text is
    written as UTF-8, except the characters a terminal or editor would act on (DEL, C1 controls, bidi
    controls, lone surrogates), written as ``\\uXXXX`` escapes (``sanitize.json_text``: the same value).

    Parameters
    ----------
    obj : object
        JSON-like data: dicts (str, int, float, bool or None keys), lists, tuples, scalars, numpy scalars and
        arrays, paths, dataclasses and objects with ``to_dict()``, nested.
    indent : int or None, default 1
        Indentation per level; None: one line with ``,``/``:`` separators.
    allow_nan : bool, default False
        Write NaN and ±inf as ``NaN``/``Infinity`` instead of refusing them.

    Returns
    -------
    str
        The JSON text, keys sorted, ending in a newline.

    Raises
    ------
    InputError
        A non-finite float without ``allow_nan``, a key of another type, or a value that cannot be written
        (field: its JSON path, e.g. ``$.a[2]``).
    """
    try:
        data = _plain(obj, allow_nan)
    except _General:  # the general walk decides, naming the JSON path of what it refuses
        data = _normalise(obj, allow_nan)
    sep = (",", ": ") if indent is not None else (",", ":")
    return json_text(
        json.dumps(
            data, sort_keys=True, indent=indent, separators=sep, allow_nan=allow_nan, ensure_ascii=False
        )
        + "\n"
    )


def write_json_atomic(
    path: str | os.PathLike, obj: Any, *, indent: int | None = 1, allow_nan: bool = False
) -> Path:
    """Serialise ``obj`` deterministically (see the module docstring) and write it atomically.

    Serialisation happens before any file is created, so a failure leaves no trace.

    Parameters
    ----------
    path : str or path-like
        The target file; its folder is created if missing.
    obj : object
        JSON-like data, as :func:`json_dumps` takes it.
    indent : int or None, default 1
        Indentation per level; None: one line.
    allow_nan : bool, default False
        Write NaN and ±inf instead of refusing them.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        As :func:`json_dumps`, or a folder stands at ``path``.
    """
    text = json_dumps(obj, indent=indent, allow_nan=allow_nan)
    return write_text_atomic(path, text)


def write_parquet_atomic(path: str | os.PathLike, df: Any, *, index: bool = False, **kwargs: Any) -> Path:
    """Write a pandas DataFrame as Parquet (pyarrow) atomically; ``kwargs`` go to ``DataFrame.to_parquet``.

    Parameters
    ----------
    path : str or path-like
        The target file; its folder is created if missing.
    df : pandas.DataFrame
        The table.
    index : bool, default False
        Write the DataFrame's index as a column.
    **kwargs
        Passed to ``DataFrame.to_parquet``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        ``df`` is not a DataFrame (field ``df``), or a folder stands at ``path``.
    """
    import pandas as pd

    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}", field="df")

    def write(fh: BinaryIO) -> None:
        df.to_parquet(fh, index=index, **kwargs)

    return _atomic(path, write)


def write_png_atomic(path: str | os.PathLike, image: Any) -> Path:
    """Write an image (uint8 array (H, W), (H, W, 3) or (H, W, 4), or a PIL image) as PNG atomically.

    Parameters
    ----------
    path : str or path-like
        The target file; its folder is created if missing.
    image : numpy.ndarray or PIL.Image.Image
        uint8 pixels, shape (H, W) grey, (H, W, 3) RGB or (H, W, 4) RGBA, row 0 at the top; or a PIL image.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    InputError
        An array of another dtype or shape (field ``image``), or a folder stands at ``path``.
    """
    import io

    from PIL import Image

    if isinstance(image, np.ndarray):
        if (
            image.dtype != np.uint8
            or image.ndim not in (2, 3)
            or (image.ndim == 3 and image.shape[2] not in (3, 4))
        ):
            raise InputError(
                f"image must be uint8 with shape (H, W), (H, W, 3) or (H, W, 4), got {image.dtype} {image.shape}",
                field="image",
            )
        image = Image.fromarray(image)
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return write_bytes_atomic(path, buf.getvalue())
