"""Errors raised on misuse or bad input. Expected failures (an item the oracle cannot certify) are values,
not exceptions: see ``oracle.triangulate.Reconstruction.status`` and ``certify.certificate``."""

from __future__ import annotations

import difflib

__all__ = ["EXTRAS", "CameraError", "InputError", "ObservationError", "ParseError", "ViewcertError", "did_you_mean",
           "install_hint"]

#: a module an optional extra installs → (the extra, its distribution in pyproject.toml's optional dependencies);
#: ``install_hint`` names the command (a test holds the table to pyproject.toml)
EXTRAS = {"hydride": ("interactions", "hydride"), "prolif": ("interactions", "prolif"),
          "rdkit": ("molecules", "rdkit"), "biotite": ("molecules", "biotite"),
          "plip": ("plip", "plip"), "openbabel": ("plip", "openbabel"),
          "torch": ("learn", "torch"), "sklearn": ("learn", "scikit-learn"),
          "lmms_eval": ("harness", "lmms-eval")}


class ViewcertError(Exception):
    """Base class of every error viewcert raises on purpose."""


class InputError(ViewcertError, ValueError):
    """A structure, file or argument is malformed; the message names the file, field or parameter."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None):
        self.source = source
        self.field = field
        self.message = message  # without the place (a reader re-raising it names its own file)
        where = ", ".join(p for p in (source and f"file {source}", field and f"field {field}") if p)
        super().__init__(f"{where}: {message}" if where else message)


def did_you_mean(name: object, known) -> str:
    """``" (did you mean X?)"`` naming the known name closest to ``name`` (``difflib``, case and ``-``/``_``
    ignored), or ``""`` when none is close: the tail of every "unknown name" error.

    Parameters
    ----------
    name : object
        The unknown name as given (compared as ``str``).
    known : iterable
        The accepted names (compared as ``str``).

    Returns
    -------
    str
        ``" (did you mean X?)"`` with X the closest accepted name as spelled in ``known``, or ``""``.
    """
    def key(s: object) -> str:
        return str(s).strip().lower().replace("_", "-")

    by_key = {key(k): str(k) for k in known}
    best = difflib.get_close_matches(key(name), list(by_key), n=1, cutoff=0.6)
    return f" (did you mean {by_key[best[0]]}?)" if best else ""


def install_hint(module: str | None) -> str | None:
    """``"it comes with the X extra: pip install 'viewcert[X]'"`` for a module an optional extra installs
    (``EXTRAS``, by its top-level name), else None.

    Parameters
    ----------
    module : str or None
        The missing module's name (``ModuleNotFoundError.name``, e.g. ``"rdkit.Chem"``).

    Returns
    -------
    str or None
        The clause naming the extra and its install command, or None for a module no extra installs.
    """
    extra = EXTRAS.get(str(module or "").split(".")[0])
    return None if extra is None else f"it comes with the {extra[0]} extra: pip install 'viewcert[{extra[0]}]'"


class CameraError(ViewcertError, ValueError):
    """A camera or protocol is degenerate: not a rotation, zero-size image, repeated view direction."""


class ObservationError(ViewcertError, ValueError):
    """Observations do not fit their cameras (shapes, labels, NaNs)."""


class ParseError(InputError):
    """A model answer or a harness file could not be read; the message says where and why."""
