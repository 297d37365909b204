"""PDB lines written by hand for the interaction tests, and two small ligands (benzene: no donor or acceptor;
ethanol: one hydroxyl), coordinates in Å."""

from __future__ import annotations

import math


def pdb_line(serial, name, res, chain, seq, xyz, element, icode=" ", altloc=" ", het=True):
    rec = "HETATM" if het else "ATOM  "
    return (f"{rec}{serial:5d} {name:<4s}{altloc}{res:>3s} {chain}{seq:4d}{icode}   "
            f"{xyz[0]:8.3f}{xyz[1]:8.3f}{xyz[2]:8.3f}  1.00 20.00          {element:>2s}\n")


BENZENE = [(f"C{k + 1}", (1.39 * math.cos(k * math.pi / 3), 1.39 * math.sin(k * math.pi / 3), 0.0)) for k in range(6)]
ETHANOL = [("C1", (0.0, 0.0, 4.0)), ("C2", (1.5, 0.0, 4.0)), ("O", (2.0, 1.4, 4.0))]
