"""The ``viewcert`` command: one module per command group, no science here.

- ``main``         the Typer app, ``version``, ``observe``, ``run`` (the main job); mounts the groups below
- ``vocabulary``   a command's options built from ``viewcert.api.vocabulary`` (the one table of every option)
- ``certify``      ``certify``, ``verify``, ``sweep``
- ``render``       ``render``, ``build-benchmark``, ``gallery``
- ``attribution``  ``ladder``, ``audit-extraction``
- ``design``, ``explore``, ``learn``, ``warmup``: their commands
- ``settings``     ``--settings FILE`` (the rarely changed options, hidden from ``--help``), ``settings show``

Imports inside command functions are deliberate: they keep ``viewcert --help`` fast (start-up time), not
to dodge a cycle.
"""

from viewcert.cli.main import app

__all__ = ["app"]
