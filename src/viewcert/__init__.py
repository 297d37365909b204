"""viewcert: what do rendered views of a known structure determine?

Map of the package, bottom layer first; a unit imports only units of lower layers, listed above it
(checked by ``tests/contracts/test_layers.py``, whose layer table docs/architecture.md shows):

- ``errors``, ``numeric``  the error types; read-only arrays and fixed float formatting
- ``sanitize``     received text made safe for the console, CSV, Markdown, HTML and plots
- ``defaults``     the settings ``certify``, ``render`` and ``build-benchmark`` share (δ, τ, tiling, observation)
- ``kernels``      where the numba kernels are, their cache state, each kernel package's warm-up workloads
- ``elements``     symbols, atomic numbers, covalent radii
- ``limits``       resource limits checked before the work (atoms, tiling, views, pixels, archive sizes)
- ``resolution``   the resolution every float of a certificate is written at (the same bytes on any CPU)
- ``structures``   Structure, the frozen value object (Cartesian Å, Z, lattice rows, provenance)
- ``constraints``  script-verifiable response constraints: typed inventory, prompt text, strict verifiers
- ``symmetry``     spglib/moyopy adapters (their only importers), cell labels, standardisation, point groups
- ``stats``        the one Clopper–Pearson bound, bootstrap, McNemar, sign test, Holm
- ``io``           readers and writers: CIF, POSCAR, XYZ, PDB/mmCIF, SDF; pymatgen/ASE adapters; atomic writes
- ``cameras``      Orthographic/Perspective cameras, poses, named view protocols, framing, conditioning κ
- ``parallel``     map over items: local processes or a Dask cluster, checkpointed shards, resume
- ``harness``      replay models that answer an export's questions inside the harnesses (offline dry runs)
- ``formats``      every file viewcert writes and reads back, typed: certificates (one reader), digests, versions,
                   the item table, export and ladder manifests
- ``observe``      Observations (the oracle's input contract): projection, noise, analytic occlusion
- ``recover``      a published picture's camera from the structure and the detected atoms, no correspondences
- ``render``       numba ray-caster with atom-ID and depth buffers; observations from the ID buffer
- ``oracle``       numba correspondence-free triangulation, merge, phantom set Φ_δ, noise studies
- ``detect``       a classical detector of the atoms drawn in another tool's image, matched to a resolved camera
- ``certify``      render ceiling R1, certificates, verification, design sweeps
- ``tasks``        which answers of a transformation question (MiSI-style) the views determine
- ``interactions`` ligand–pocket hydrogen bonds of a prepared complex (hydride + biotite, ProLIF cross-check)
- ``design``       uniqueness margins, occlusion reports, the view designer
- ``benchmark``    export (images, JSONL, VLMEvalKit TSV, id table, Inspect/lmms-eval tasks, prompts,
                   certificate) and the gallery
- ``attribution``  canonical result table, harness readers, an export read back (ids, choices), ladder,
                   MiSI task scores, fabrication audit, reports
- ``learn``        learned readers (cell forest, pixel CNN): predictions as a rung
- ``explore``      the static site of a certificate
- ``api``          the jobs as Python functions (certify, design, build_benchmark, read_results, ladder, explore),
                   each returning a Report
- ``cli``          the ``viewcert`` command, a shell over ``api``: one module per command group

A package's ``__init__`` is its face: its public names, each loaded from its module at first use
(``lazy_face``), so that a command imports only the modules it runs.
"""

__version__ = "0.1.0"

import importlib
import sys
import types


class _Face(types.ModuleType):
    """A package whose public names load from their submodules at first use (PEP 562), so that importing one
    submodule, or the package for one name, does not import every module the package re-exports: a ``viewcert``
    command (a subprocess) pays only for the modules it runs (issue 37)."""

    def __getattr__(self, name: str):  # called only for a name not yet bound
        module = self.__dict__["_face"].get(name)
        if module is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{self.__name__}.{module}"), name)
        setattr(self, name, value)
        return value

    def __setattr__(self, name: str, value) -> None:
        # importing a submodule binds it to the package's attribute of its name; where the face exports a
        # function of that name (``certify.evaluate``, ``cameras.resolve``) the function keeps the name, as the
        # eager ``from .evaluate import evaluate`` of a face left it
        if isinstance(value, types.ModuleType) and self.__dict__["_face"].get(name) == name:
            value = getattr(value, name)
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__["_face"]))


def lazy_face(package: str, face: dict[str, str]) -> None:
    """Make ``package`` (a package's ``__name__``, called from its ``__init__``) load each public name of
    ``face`` (name -> submodule of the package defining it) at its first use."""
    module = sys.modules[package]
    module.__dict__["_face"] = face
    module.__class__ = _Face
