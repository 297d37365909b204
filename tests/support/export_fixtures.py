"""Shared by the export tests: small molecules, a small image size, a folder's files, and a CLI app with the
export and certify commands."""

from __future__ import annotations

from pathlib import Path

#: small images keep the export tests fast
SMALL = {"width": 240, "height": 180, "supersample": 1}

#: a chiral 5-atom molecule (C with H, F, Cl, Br on a distorted tetrahedron), XYZ in Å
CHFCLBR_XYZ = "5\nchfclbr\nC 0 0 0\nH 0.9 0.7 0.6\nF -1.0 -0.8 0.7\nCl -0.9 1.1 -0.8\nBr 1.0 -0.9 -1.1\n"


#: water (C2v, achiral): HOH 104.5°, O–H 0.9572 Å, XYZ in Å
WATER_XYZ = "3\nwater\nO 0.000000 0.000000 0.000000\nH 0.756950 0.585882 0.000000\nH -0.756950 0.585882 0.000000\n"


def export_cli():
    """A Typer app holding only the ``render`` and ``certify`` command groups (build-benchmark, certify, verify),
    without the root command's options."""
    import typer

    from viewcert.cli.certify import register as register_certify
    from viewcert.cli.render import register as register_render

    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """test root"""

    register_render(app)
    register_certify(app)
    return app


def chiral_xyz(tmp: Path) -> Path:
    """CHFClBr written to ``tmp/chfclbr.xyz``."""
    p = tmp / "chfclbr.xyz"
    p.write_text(CHFCLBR_XYZ)
    return p


def folder_files(d: Path) -> dict[str, bytes]:
    """Every file below ``d`` by relative POSIX path (for byte-identity checks)."""
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}
