"""`make check-latest`: would the newest releases of the dependencies change a certificate's bytes, and why?

Run by hand now and then (it downloads): installs the package with the newest releases pyproject.toml admits
into a scratch venv (uv; pip when uv is absent), certifies the same inputs there and in the locked venv
(``.venv``), and reports, per certificate, whether the bytes are equal, which library versions changed, and the
first differing fields of the items. Inputs: the built-in prototypes (20 crystals), the built-in molecules and,
when ../shared/data is present, the study's 210-item e3 split. Writes benchmarks/results/check_latest.json.

    python benchmarks/check_latest.py [--keep]   # --keep: leave the scratch venv in .venv-latest
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = ROOT / ".venv-latest"
E3 = ROOT.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
CERTIFY = """
import json, sys
from viewcert.certify import CertifyConfig
from viewcert.certify.inputs import load_input
from viewcert.certify.run import run_certification
cert, _ = run_certification(load_input(sys.argv[1]), CertifyConfig(), n_workers=1, progress=False)
print(json.dumps(cert.to_dict(), sort_keys=True))
"""


def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    py = path / "bin" / "python"
    uv = shutil.which("uv")
    if uv:
        subprocess.run([uv, "pip", "install", "--quiet", "--python", str(py), "--upgrade", "-e", str(ROOT)],
                       check=True)
    else:
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--upgrade", "-e", str(ROOT)], check=True)
    return py


def _certify(py: Path, spec: str) -> dict:
    out = subprocess.run([str(py), "-c", CERTIFY, spec], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def _first_diffs(a, b, path: str = "", out: list | None = None, limit: int = 10) -> list:
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            _first_diffs(a.get(k), b.get(k), f"{path}.{k}" if path else k, out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _first_diffs(x, y, f"{path}[{i}]", out, limit)
    elif a != b:
        out.append({"field": path, "locked": a, "latest": b})
    return out


def main(keep: bool = False) -> dict:
    locked = ROOT / ".venv" / "bin" / "python"
    if not locked.exists():
        sys.exit("check-latest: no locked venv (.venv); run `make run` first")
    specs = ["builtin:prototypes", "builtin:molecules"] + ([str(E3)] if E3.is_dir() else [])
    with tempfile.TemporaryDirectory() as tmp:
        py = _venv(SCRATCH if keep else Path(tmp) / "venv")
        report = []
        for spec in specs:
            a, b = _certify(locked, spec), _certify(py, spec)
            lib = {k: {"locked": a["libraries"].get(k), "latest": b["libraries"].get(k)}
                   for k in sorted(set(a["libraries"]) | set(b["libraries"]))
                   if a["libraries"].get(k) != b["libraries"].get(k)}
            a_items, b_items = {"items": a["items"], "summary": a["summary"]}, {"items": b["items"], "summary": b["summary"]}
            row = {"input": spec if spec.startswith("builtin:") else "e3 (study, 210)",
                   "same_digest": a["digest"]["value"] == b["digest"]["value"],
                   "library_changes": lib, "result_diffs": _first_diffs(a_items, b_items)}
            row["why"] = ("the bytes are equal" if row["same_digest"] else
                          "only the recorded library versions changed" if not row["result_diffs"] else
                          "results changed: see result_diffs")
            report.append(row)
            print(f"{row['input']}: {row['why']}; library changes: {', '.join(lib) or 'none'}")
    out = ROOT / "benchmarks" / "results" / "check_latest.json"
    out.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")
    return {"rows": report}


if __name__ == "__main__":
    main(keep="--keep" in sys.argv[1:])
