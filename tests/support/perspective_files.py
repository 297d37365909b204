"""Perspective protocol files for the tests: the NaCl CIF, the axes-3 rotations and a TOML protocol file of
pinholes (positions in Å, world frame)."""

from __future__ import annotations

import json

import numpy as np

A_NACL = 5.64  # Å, rock salt, conventional cubic cell
NACL_CIF = f"""data_NaCl
_cell_length_a {A_NACL}
_cell_length_b {A_NACL}
_cell_length_c {A_NACL}
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
_symmetry_space_group_name_H-M 'P 1'
loop_
_atom_site_label
_atom_site_type_symbol
_atom_site_fract_x
_atom_site_fract_y
_atom_site_fract_z
Na1 Na 0 0 0
Na2 Na 0.5 0.5 0
Na3 Na 0.5 0 0.5
Na4 Na 0 0.5 0.5
Cl1 Cl 0.5 0 0
Cl2 Cl 0 0.5 0
Cl3 Cl 0 0 0.5
Cl4 Cl 0.5 0.5 0.5
"""


# axes-3 rotations (rows = camera x, y, z in world; docs/conventions.md): front from +z, top from +y, left from −x
FRONT = np.eye(3)


TOP = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])


LEFT = np.array([[0, 0, 1.0], [0, 1.0, 0], [-1.0, 0, 0]])


def _toml(views: list[tuple[str, np.ndarray, tuple | None]], *, fov="30.0", extra="") -> str:
    head = f'[protocol]\nname = "p"\nkind = "perspective"\nfov_deg = {fov}\nwidth = 768\nheight = 768\n{extra}'
    body = ""
    for name, r, pos in views:
        body += f'\n[[views]]\nname = "{name}"\nrotation = {json.dumps(np.asarray(r).tolist())}\n'
        if pos is not None:
            body += f"position = {json.dumps([float(x) for x in pos])}\n"
    return head + body


def _axes3_file(tmp_path, centre=(0.0, 0.0, 0.0), distance=20.0, name="p.toml", **kw):
    """axes-3 pinholes at ``distance`` Å from ``centre`` along each camera's +z (toward the viewer)."""
    c = np.asarray(centre, dtype=float)
    views = [(n, r, tuple(c + distance * r[2])) for n, r in (("front", FRONT), ("top", TOP), ("left", LEFT))]
    p = tmp_path / name
    p.write_text(_toml(views, **kw))
    return p
