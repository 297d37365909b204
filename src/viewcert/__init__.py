"""viewcert: what do rendered views of a known structure determine?

Map of the package (imports flow one way: cameras -> render -> oracle -> certify; attribution reads files):

- ``structures``   Structure, the frozen value object (Cartesian Å, Z, lattice rows, provenance)
- ``standardize``  conventional standard cell in pymatgen's or spglib's orientation
- ``io``           readers and writers: CIF, POSCAR, XYZ, PDB/mmCIF, SDF; pymatgen/ASE adapters; atomic writes
- ``cameras``      Orthographic/Perspective cameras, poses, named view protocols, framing, conditioning κ
- ``render``       projection to per-view observations; numba ray-caster with atom-ID and depth buffers
- ``oracle``       numba correspondence-free triangulation, merge, phantom set Φ_δ, noise studies
- ``certify``      spglib/moyopy symmetry, render ceiling R1, certificates, design sweeps
- ``attribution``  canonical result table, harness readers, ladder, statistics, fabrication audit, reports
- ``parallel``     map over items: local processes or a Dask cluster, checkpointed shards, resume
- ``cli``          the ``viewcert`` command
"""

__version__ = "0.1.0"
