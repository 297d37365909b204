"""Run in a subprocess by tests/contracts/test_determinism_cpu.py under one CPU variation (environment variables set by
the parent): certify the built-in prototypes and, when given, the study's e3 split; build one export of each kind
from inputs written here with relative paths; print {name: sha256} of every certificate and exported file as JSON.

    python determinism_child.py WORKDIR [E3_DIR]
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE.parent))  # the repository root: ``tests.support`` imports


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _without_location(p: Path) -> bytes:
    """The file's bytes; a certificate without ``location`` (where this run's input sat: outside the digest)
    and a manifest without the hash of the certificate's file (which holds that location)."""
    if p.name == "certificate.json":
        d = json.loads(p.read_text(encoding="utf-8"))
        d.pop("location", None)
        return json.dumps(d, sort_keys=True).encode()
    if p.name == "manifest.json":
        d = json.loads(p.read_text(encoding="utf-8"))
        d.get("files", {}).pop("certificate.json", None)
        return json.dumps(d, sort_keys=True).encode()
    return p.read_bytes()


def main(work: Path, e3: str | None) -> dict:
    from tests.support.export_fixtures import CHFCLBR_XYZ, SMALL, WATER_XYZ
    from viewcert.benchmark.export import ExportSettings, build_benchmark
    from viewcert.benchmark.molecule_export import MoleculeExportSettings, build_molecule_benchmark
    from viewcert.benchmark.tasks_export import TaskExportSettings, build_task_benchmark
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import run_certification
    from viewcert.io.atomic import json_dumps

    os.chdir(work)
    out: dict[str, str] = {}
    specs = {"prototypes": "builtin:prototypes", **({"e3": e3} if e3 else {})}
    for name, spec in specs.items():
        typed, _ = run_certification(load_input(spec), CertifyConfig(delta=0.01, tau=0.01), n_workers=1,
                                     progress=False)
        cert = typed.to_dict()  # the JSON object written
        cert.pop("location", None)  # where the input sat (outside the digest)
        out[f"digest:{name}"] = cert["digest"]["value"]
        out[f"certificate:{name}"] = _sha(json_dumps(cert).encode())
    Path("in").mkdir()
    Path("in/water.xyz").write_text(WATER_XYZ)
    Path("in/chfclbr.xyz").write_text(CHFCLBR_XYZ)
    build_benchmark("builtin:sample", "crystal", settings=ExportSettings.from_options(size=64, supersample=1), limit=1)
    build_molecule_benchmark("in/water.xyz", "molecule", MoleculeExportSettings.from_options(task="point-group", size=64,
                                                                                 supersample=1))
    build_task_benchmark("in/chfclbr.xyz", "task", TaskExportSettings.from_options(task="translation", **SMALL))
    kinds = ["crystal", "molecule", "task"]
    try:
        import hydride  # noqa: F401

        from viewcert.benchmark.interaction_export import (
            InteractionExportSettings,
            build_interaction_benchmark,
        )

        Path("in/eoh_asp.pdb").write_bytes((HERE / "data" / "uncertain" / "eoh_asp.pdb").read_bytes())
        build_interaction_benchmark([(Path("in/eoh_asp.pdb"), "EOH")], "interaction",
                                    InteractionExportSettings.from_options(n_boot=50, width=160, height=120))
        kinds.append("interaction")
    except ImportError:
        pass
    for kind in kinds:
        for p in sorted(Path(kind).rglob("*")):
            if p.is_file():
                out[f"{kind}/{p.relative_to(kind).as_posix()}"] = _sha(_without_location(p))
    return out


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else None), sort_keys=True))
