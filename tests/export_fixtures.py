"""Shared by the export tests: a small chiral molecule on disk, a small image size, and a folder's files."""

from __future__ import annotations

from pathlib import Path

#: small images keep the export tests fast
SMALL = {"width": 240, "height": 180, "supersample": 1}

#: a chiral 5-atom molecule (C with H, F, Cl, Br on a distorted tetrahedron), XYZ in Å
CHFCLBR_XYZ = "5\nchfclbr\nC 0 0 0\nH 0.9 0.7 0.6\nF -1.0 -0.8 0.7\nCl -0.9 1.1 -0.8\nBr 1.0 -0.9 -1.1\n"


def chiral_xyz(tmp: Path) -> Path:
    """CHFClBr written to ``tmp/chfclbr.xyz``."""
    p = tmp / "chfclbr.xyz"
    p.write_text(CHFCLBR_XYZ)
    return p


def folder_files(d: Path) -> dict[str, bytes]:
    """Every file below ``d`` by relative POSIX path (for byte-identity checks)."""
    return {p.relative_to(d).as_posix(): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}
