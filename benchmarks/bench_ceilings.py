"""What certify's as-rendered ceiling costs (issue 57 item 2): whole ``viewcert.api.certify`` processes with and
without it, and (``--before SRC``) another checkout's certify, CPU time, same run.

Variants, each a whole process (imports, reading, workers, writing; CPU of its process tree, ``RUSAGE_CHILDREN``):

* ``geometric``: ``api.certify`` with the as-rendered pass switched off (``api.certification.renders`` patched to
  False in that process): what certify costs without it;
* ``both``: ``api.certify`` as shipped: the geometric certificate and, in the same pass, the as-rendered ceiling
  (``certify.ceilings``) in the summary;
* ``before`` (with ``--before SRC``): ``api.certify`` of the source tree SRC (e.g. a main checkout's ``src``).

Order ABCCBA (ABBA without ``--before``) so every variant meets the same machine; niced runs are the caller's
(``nice -n 10``). Checks, the run failing on any difference: the geometric certificate.json bytes are the same in
every variant; with ``--before``, summary.txt too (the ceiling lines: counts, items that differ and reasons), and
(``--check``) the as-rendered certificate of the same pass (``certify.run.run_with_as_rendered``) equals, digest
included, the certificate.json a separate ``certify --observe visible`` run of SRC writes.

Usage: ``python benchmarks/bench_ceilings.py SPEC [--subset eval|all] [--workers N] [--config study|default]
[--before SRC] [--check] [--rounds 1] [--tag NAME]``; writes ``benchmarks/results/ceilings.json`` (each run under
its tag). A path SPEC that is absent skips (exit 0).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "ceilings.json"
CONFIGS = {  # bench_e3_process.py's (the study's oracle settings), or CertifyConfig()'s
    "study": "CertifyConfig(delta=0.15, tau=0.01, pairs='first', merge='greedy', periodic_merge=False)",
    "default": "CertifyConfig()",
}

CERTIFY = """
import sys
from viewcert.api import certify
from viewcert.certify import CertifyConfig
if sys.argv[5] == "geometric":
    import viewcert.api.certification as c
    c.renders = lambda cfg: False
cfg = {config}
workers = None if sys.argv[4] == "default" else int(sys.argv[4])
certify(sys.argv[1], cfg, out=sys.argv[2], subset=sys.argv[3], workers=workers, plots=False, resume=False)
"""

AS_RENDERED = """
import json, sys
from dataclasses import replace
from viewcert.certify import CertifyConfig
from viewcert.certify.run import prepared, run_with_as_rendered
cfg = {config}
workers = None if sys.argv[4] == "default" else int(sys.argv[4])
_, rendered, _ = run_with_as_rendered(prepared(sys.argv[1], cfg, subset=sys.argv[3]), cfg, n_workers=workers,
                                      progress=False)
open(sys.argv[2], "w").write(json.dumps(rendered.to_dict(), sort_keys=True))
"""

VISIBLE = """
import sys
from dataclasses import replace
from viewcert.api import certify
from viewcert.certify import CertifyConfig
cfg = {config}
cfg = cfg.with_(observation=replace(cfg.observation, observe="visible"))
workers = None if sys.argv[4] == "default" else int(sys.argv[4])
certify(sys.argv[1], cfg, out=sys.argv[2], subset=sys.argv[3], workers=workers, plots=False, resume=False)
"""


def _timed(argv: list[str], env: dict) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    t = time.perf_counter()
    r = subprocess.run(argv, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{argv[:3]} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return {"cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 2),
            "wall_s": round(wall, 2), "load_1min": [round(load0, 2), round(os.getloadavg()[0], 2)]}


def _env(src: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(src)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", help="INPUT (a folder, the study layout, builtin:prototypes, ...)")
    ap.add_argument("--subset", default="eval", choices=("eval", "all"))
    ap.add_argument("--workers", default="1", help="worker processes, or 'default' (every core)")
    ap.add_argument("--config", default="study", choices=sorted(CONFIGS))
    ap.add_argument("--before", type=Path, default=None, help="another checkout's src to time beside this one")
    ap.add_argument("--check", action="store_true", help="also compare the as-rendered certificate with a "
                                                          "separate --observe visible run of --before's src")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tag", default="current")
    a = ap.parse_args()
    if ":" not in a.spec and not Path(a.spec).exists():
        print(f"skip: {a.spec} is absent")
        return
    here = ROOT / "src"
    sides = {"geometric": (here, "geometric"), "both": (here, "both")}
    if a.before is not None:
        sides["before"] = (a.before.resolve(), "both")
    order = list(sides) + list(reversed(sides))
    code = CERTIFY.format(config=CONFIGS[a.config])
    runs: dict = {k: [] for k in sides}
    with tempfile.TemporaryDirectory(prefix="bench-ceilings-") as tmp:
        tmp = Path(tmp)
        for src in {s for s, _ in sides.values()}:  # numba's cache and the OS file cache, untimed
            subprocess.run([sys.executable, "-c", code, a.spec, str(tmp / "warm"), a.subset, a.workers, "both"],
                           check=True, capture_output=True, env=_env(src))
        outs: dict = {}
        k = 0
        for _ in range(a.rounds):
            for side in order:
                k += 1
                src, mode = sides[side]
                dest = tmp / f"{side}-{k}"
                row = _timed([sys.executable, "-c", code, a.spec, str(dest), a.subset, a.workers, mode], _env(src))
                runs[side].append(row)
                outs.setdefault(side, dest)
                print(side, row, flush=True)
        cert = {s: (d / "certificate.json").read_bytes() for s, d in outs.items()}
        if len(set(cert.values())) != 1:
            raise SystemExit(f"the geometric certificates differ: {sorted(cert)}")
        summary = {s: (d / "summary.txt").read_text() for s, d in outs.items()}
        same_summary = None
        if "before" in summary:
            same_summary = summary["before"] == summary["both"]
            if not same_summary:
                raise SystemExit("summary.txt differs from --before's (the ceiling lines)")
        checked = None
        if a.check and a.before is not None:
            subprocess.run([sys.executable, "-c", VISIBLE.format(config=CONFIGS[a.config]), a.spec,
                            str(tmp / "visible"), a.subset, a.workers], check=True, capture_output=True,
                           env=_env(a.before.resolve()))
            subprocess.run([sys.executable, "-c", AS_RENDERED.format(config=CONFIGS[a.config]), a.spec,
                            str(tmp / "rendered.json"), a.subset, a.workers], check=True, capture_output=True,
                           env=_env(here))
            theirs = json.loads((tmp / "visible" / "certificate.json").read_text())
            ours = json.loads((tmp / "rendered.json").read_text())
            if ours != theirs:
                bad = [x["id"] for x, y in zip(ours["items"], theirs["items"], strict=False) if x != y]
                raise SystemExit(f"the as-rendered certificate differs from --observe visible's on {bad[:10]}")
            checked = len(ours["items"])
    cpu = {s: round(sum(r["cpu_s"] for r in v) / len(v), 2) for s, v in runs.items()}
    n = sum(1 for _ in json.loads(cert["both"])["items"])
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    row = {"commit": head, "spec": a.spec, "subset": a.subset, "workers": a.workers, "config": CONFIGS[a.config],
           "n": n, "runs": runs, "cpu_s_per_run": cpu,
           "as_rendered_share": round(cpu["both"] / cpu["geometric"] - 1, 3),
           **({"before": str(a.before), "before_over_both": round(cpu["before"] / cpu["both"], 2),
               "summary_identical_to_before": same_summary} if "before" in cpu else {}),
           **({"as_rendered_certificate_identical_items": checked} if checked is not None else {}),
           "geometric_certificates_identical": True, "cpus": os.cpu_count(), "platform": platform.platform(),
           "note": "whole processes, CPU of each process tree, order ABCCBA/ABBA; as_rendered_share = both / "
                   "geometric - 1"}
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    data[a.tag] = row
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
