"""Issue 41's acceptance line, checked: the CLI's outputs for the main job, an export and a ladder are
byte-identical before and after the refactor, or each difference is listed with its explanation.

Two source trees (``--before DIR --after DIR``, each a checkout's root; default before = a detached
``git worktree`` of 9d57ee9 under /tmp, made here when missing; after = this tree) run the same CLI commands,
each tree's code first on the path (``PYTHONPATH=<tree>/src``, the venv's Python, ``viewcert.cli:app``: the
``[project.scripts]`` entry point), each tree in its own fresh empty output folder. Then the two folders are
compared file by file, byte by byte; stdout, stderr and the exit code of every command too (the output folder's
and the tree's absolute paths replaced by ``<OUT>`` and ``<TREE>``, nothing else normalised).

Commands (all offline: the Hugging Face hub offline, every HTTP(S) request sent to a closed port):

1. the main job, ``viewcert run --out run`` (what ``make run`` runs: the Makefile's ``run`` target);
2. exports: the README walkthrough's first four commands on three CIFs written here (NaCl, CsCl, Mg:
   tests/support/walkthrough.py), ``certify --margin``, ``design --views 3``, ``certify`` through the designed
   views and ``build-benchmark`` through them (crystal-system, multiple choice), then a free-text export, the
   MiSI rotation task on the built-in molecules (``--task rotation --protocol axes-3``, answers like ``roll y
   15``); manifests and certificates included;
3. a ladder: ``viewcert ladder .`` inside an export holding the README's Inspect dry run (the replay model
   ``viewcert-replay/dry_run_answers.jsonl``, no real model, no harness venv). The ladder's input is made once,
   with the BEFORE tree's code (its walkthrough export plus Inspect's logs), and copied into each tree's
   folder, so the two ladders read the same bytes (Inspect's logs carry time stamps and random ids).

Differences that legitimately differ are never dropped: each is listed in the JSON with its explanation
(``EXPLAINED`` below, matched by file and key path); one without an explanation is reported UNEXPLAINED.

Numba's cache lives beside each tree's modules, so ``viewcert warmup`` runs first in each tree (not compared: a
fresh checkout's first command compiles and says so on stderr, which is cache state, not code).

Writes ``benchmarks/results/cli_same_bytes.json`` and prints a summary. Slow, not part of the test suite: about 4
minutes with both trees' kernels cached (2 cores shared, niced), plus about 4-5 minutes per tree whose kernels
were never compiled. ``--compare-only`` compares an earlier run's folders again (after editing EXPLAINED).

    .venv/bin/python benchmarks/check_cli_same_bytes.py [--before DIR] [--after DIR] [--work DIR]
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
AFTER_DEFAULT = HERE.parent
BEFORE_COMMIT = "9d57ee9"
BEFORE_DEFAULT = Path(f"/tmp/viewcert-before-{BEFORE_COMMIT}")
#: the venv's Python (the repository's .venv unless VIEWCERT_SAME_BYTES_PYTHON names another)
PYTHON = os.environ.get("VIEWCERT_SAME_BYTES_PYTHON", str(AFTER_DEFAULT / ".venv" / "bin" / "python"))
RESULT = HERE / "results" / "cli_same_bytes.json"
#: the [project.scripts] entry point (viewcert = "viewcert.cli:app"), its program name as the script's
VIEWCERT = ["-c", "import sys; sys.argv[0] = 'viewcert'; from viewcert.cli import app; app()"]
CLOSED = "http://127.0.0.1:9"  # the discard port: nothing listens, any download fails at once

#: (step, folder relative to the tree's output folder, argv); "viewcert" = the tree's CLI, "inspect" = the venv's
#: Inspect with the tree's viewcert (its replay model) on the path.
COMMANDS: list[tuple[str, str, list[str]]] = [
    ("main job", "run-job", ["viewcert", "run", "--out", "out"]),
    ("export", "walkthrough", ["viewcert", "certify", "mycifs", "--margin", "--out", "mycert"]),
    ("export", "walkthrough", ["viewcert", "design", "mycifs", "--views", "3", "--out", "mydesign"]),
    ("export", "walkthrough", ["viewcert", "certify", "mycifs", "--protocol", "mydesign/protocol.toml", "--margin",
                               "--out", "mycert3"]),
    ("export", "walkthrough", ["viewcert", "build-benchmark", "mycifs", "--protocol", "mydesign/protocol.toml",
                               "--out", "mybench"]),
    ("export", "rotation", ["viewcert", "build-benchmark", "builtin:molecules", "--task", "rotation", "--protocol",
                            "axes-3", "--seed", "7", "--out", "rotation"]),
    ("ladder", "ladder/mybench", ["viewcert", "ladder", "."]),
]
#: the ladder's input, made once with the before tree: the walkthrough's export and the README's Inspect dry run
DRY_RUN = ["inspect", "eval", "inspect_task.py", "--model", "viewcert-replay/dry_run_answers.jsonl",
           "--log-dir", "logs/dry-run"]

#: every difference that legitimately differs, with why: (file glob, key path glob or "*", reason). Filled from
#: the runs' own differences, each traced to its commit (git log 9d57ee9..HEAD -- path); a difference no entry
#: matches is UNEXPLAINED.
#: why, by tag (the tag is what the summary prints)
REASONS = {"source digest": ("certify's shard folder is named by the run's fingerprint (certify.run.fingerprint: settings, "
                 "inputs, library versions and viewcert.certify.run.source_digest(), a hash of viewcert's source "
                 "files), which any source edit changes by design so a resumed run never reuses shards computed by "
                 "other code; legitimate, not user-visible beyond the hidden folder's name (the shards' records are "
                 "compared byte by byte)"),
    "timing": "the run's measured wall time and throughput (run.json); legitimate, differs between any two runs",
    "issue 40 explorer map": ("issue 40 item 7, not issue 41: 14b6bbe 'explore: the site writer keeps nothing per item' (merged in "
               "9ab5884, s48-40, inside 9d57ee9..f249146): the map's points move from one SVG circle per item to a "
               "JSON block drawn by explore.js on a canvas under the SVG frame (map.html gains the canvas, the "
               "script tag, a noscript note and the map-data block; explore.css/explore.js the map's styles and "
               "drawing code). A deliberate, user-visible change of the explorer's map page, made by another issue"),
}
REASONS["issue 55 task sidecars"] = (
    "issue 55 step 2: a transformation-task export records the geometry its pages draw, so the explorer never "
    "re-runs the exporter's seeded sampling: beside each question's after view a sidecar "
    "(sidecars/qNNNN_vK.json, benchmark.tasks_export.after_sidecar: the after camera and, per consistent answer, "
    "the pose's atoms it observes projected). New files; the manifest hashes them (files). Certificate, images "
    "and harness files unchanged")
EXPLAINED: list[tuple[str, str, str]] = [
    ("rotation/rotation/sidecars/*.json", "(file)", "issue 55 task sidecars"),
    ("rotation/rotation/manifest.json", "files.sidecars/*", "issue 55 task sidecars"),
    ("*/.shards/<fingerprint>/*", "(folder name)", "source digest"),
    ("*/.shards/<fingerprint>/manifest.json", "fingerprint", "source digest"),
    ("*/run.json", "wall_seconds", "timing"),
    ("*/run.json", "items_per_second", "timing"),
    ("run-job/out/explore/map.html", "text", "issue 40 explorer map"),
    ("run-job/out/explore/assets/explore.css", "text", "issue 40 explorer map"),
    ("run-job/out/explore/assets/explore.js", "text", "issue 40 explorer map"),
]


def env_for(tree: Path) -> dict:
    """The environment of one command: the tree's viewcert first, offline, a fixed width and hash seed."""
    keep = {k: v for k, v in os.environ.items() if k in ("HOME", "LANG", "LC_ALL", "TMPDIR", "USER")}
    return {**keep, "PATH": os.pathsep.join([str(Path(PYTHON).parent), "/usr/bin", "/bin"]),
            "PYTHONPATH": str(tree / "src"), "PYTHONHASHSEED": "0", "COLUMNS": "120", "TERM": "dumb",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
            "HTTP_PROXY": CLOSED, "HTTPS_PROXY": CLOSED, "http_proxy": CLOSED, "https_proxy": CLOSED,
            "NO_PROXY": "", "no_proxy": ""}


def argv_for(argv: list[str]) -> list[str]:
    if argv[0] == "viewcert":
        return ["nice", "-n", "10", PYTHON, *VIEWCERT, *argv[1:]]
    if argv[0] == "inspect":
        return ["nice", "-n", "10", str(Path(PYTHON).parent / "inspect"), *argv[1:]]
    raise ValueError(argv[0])


def run(tree: Path, argv: list[str], cwd: Path, out: Path) -> dict:
    t0 = time.perf_counter()
    r = subprocess.run(argv_for(argv), cwd=cwd, env=env_for(tree), capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - t0

    def norm(s: str) -> str:
        return s.replace(str(out.resolve()), "<OUT>").replace(str(tree.resolve()), "<TREE>")

    return {"exit": r.returncode, "stdout": norm(r.stdout), "stderr": norm(r.stderr), "seconds": round(seconds, 1)}


def write_cifs(folder: Path) -> None:
    """The README walkthrough's three CIFs (tests/support/walkthrough.py: NaCl, CsCl, Mg, P1, every atom)."""
    from pymatgen.core import Lattice, Structure
    from pymatgen.io.cif import CifWriter

    folder.mkdir(parents=True)
    made = {
        "NaCl": Structure.from_spacegroup("Fm-3m", Lattice.cubic(5.64), ["Na", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]]),
        "CsCl": Structure.from_spacegroup("Pm-3m", Lattice.cubic(4.12), ["Cs", "Cl"], [[0, 0, 0], [0.5, 0.5, 0.5]]),
        "Mg": Structure.from_spacegroup("P6_3/mmc", Lattice.hexagonal(3.21, 5.21), ["Mg"], [[1 / 3, 2 / 3, 0.25]]),
    }
    for name, s in made.items():
        CifWriter(s).write_file(folder / f"{name}.cif")


def ensure_before(tree: Path) -> None:
    if (tree / "src" / "viewcert").is_dir():
        return
    subprocess.run(["git", "-C", str(AFTER_DEFAULT), "worktree", "add", "--detach", str(tree), BEFORE_COMMIT],
                   check=True)


def _shown(path: Path) -> str:
    """``path`` as the results record it: relative to this repository when inside it, else as given."""
    try:
        return os.path.relpath(path, AFTER_DEFAULT) if Path(os.path.abspath(path)).is_relative_to(AFTER_DEFAULT) else str(path)
    except ValueError:
        return str(path)


def commit_of(tree: Path) -> dict:
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(tree), *a], capture_output=True, text=True).stdout.strip()

    return {"path": _shown(tree), "commit": git("rev-parse", "HEAD"), "subject": git("log", "-1", "--format=%s"),
            "dirty": bool(git("status", "--porcelain", "--", "src"))}


# --- comparison -----------------------------------------------------------------------------------------------

def json_diff(a, b, path: str = "", out: list | None = None, limit: int = 40) -> list[str]:
    """The key paths at which two JSON values differ (lists index by position)."""
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            p = f"{path}.{k}" if path else str(k)
            if k not in a:
                out.append(f"{p} (only after)")
            elif k not in b:
                out.append(f"{p} (only before)")
            else:
                json_diff(a[k], b[k], p, out, limit)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path} (length {len(a)} -> {len(b)})")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            json_diff(x, y, f"{path}[{i}]", out, limit)
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {short(a)} -> {short(b)}")
    return out


def short(x, n: int = 100) -> str:
    s = json.dumps(x) if not isinstance(x, str) else repr(x)
    return s if len(s) <= n else s[:n] + "..."


def first_line_diff(a: str, b: str) -> dict:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False)):
        if x != y:
            return {"line": i + 1, "before": x[:300], "after": y[:300],
                    "differing_lines": sum(1 for u, v in zip(la, lb, strict=False) if u != v) + abs(len(la) - len(lb))}
    return {"line": min(len(la), len(lb)) + 1, "before_lines": len(la), "after_lines": len(lb),
            "note": "one is a prefix of the other (or they differ only in line endings)"}


def png_diff(a: Path, b: Path) -> dict:
    import numpy as np
    from PIL import Image

    with Image.open(a) as ia, Image.open(b) as ib:
        pa, pb = np.asarray(ia.convert("RGBA")), np.asarray(ib.convert("RGBA"))
        info = {"size": [list(ia.size), list(ib.size)], "mode": [ia.mode, ib.mode]}
        ta = {k: str(v)[:200] for k, v in ia.info.items()}
        tb = {k: str(v)[:200] for k, v in ib.info.items()}
    info["pixels_equal"] = bool(pa.shape == pb.shape and np.array_equal(pa, pb))
    if pa.shape == pb.shape and not info["pixels_equal"]:
        d = np.any(pa != pb, axis=-1)
        info["pixels_differing"] = int(d.sum())
        info["max_channel_difference"] = int(np.abs(pa.astype(int) - pb.astype(int)).max())
    info["metadata_differs"] = {k: [ta.get(k), tb.get(k)] for k in sorted(set(ta) | set(tb)) if ta.get(k) != tb.get(k)}
    return info


def explain_file(rel: str, a: Path, b: Path) -> dict:
    """A short aid to explain why two files differ."""
    ba, bb = a.read_bytes(), b.read_bytes()
    aid: dict = {"bytes": [len(ba), len(bb)]}
    suffix = a.suffix.lower()
    if suffix == ".png":
        aid["png"] = png_diff(a, b)
        aid["keys"] = ["pixels"] if not aid["png"]["pixels_equal"] else ["png metadata"]
        return aid
    try:
        ta, tb = ba.decode(), bb.decode()
    except UnicodeDecodeError:
        k = next((i for i, (x, y) in enumerate(zip(ba, bb, strict=False)) if x != y), min(len(ba), len(bb)))
        aid["first_differing_byte"] = k
        aid["keys"] = ["bytes"]
        return aid
    if suffix == ".json":
        try:
            aid["key_paths"] = json_diff(json.loads(ta), json.loads(tb))
            aid["keys"] = [p.split(" ")[0].split(":")[0] for p in aid["key_paths"]]
            return aid
        except json.JSONDecodeError:
            pass
    if suffix == ".jsonl":
        la, lb = ta.splitlines(), tb.splitlines()
        paths: list[str] = []
        for i, (x, y) in enumerate(zip(la, lb, strict=False)):
            if x != y:
                try:
                    paths += [f"line {i + 1}: {p}" for p in json_diff(json.loads(x), json.loads(y))]
                except json.JSONDecodeError:
                    paths.append(f"line {i + 1}: not JSON")
            if len(paths) >= 40:
                break
        if len(la) != len(lb):
            paths.append(f"lines {len(la)} -> {len(lb)}")
        aid["key_paths"] = paths
        aid["keys"] = sorted({p.split(": ", 1)[1].split(" ")[0].split(":")[0] for p in paths if ": " in p})
        return aid
    aid["first_difference"] = first_line_diff(ta, tb)
    aid["diff"] = list(difflib.unified_diff(ta.splitlines(), tb.splitlines(), "before", "after", n=0,
                                            lineterm=""))[:30]
    aid["keys"] = ["text"]
    return aid


def explanations(rel: str, keys: list[str]) -> tuple[list[dict], list[str]]:
    """The EXPLAINED entries matching a file's differing keys, and the keys no entry explains."""
    found, left = [], []
    for k in keys or ["*"]:
        hit = [e for e in EXPLAINED if fnmatch.fnmatch(rel, e[0]) and fnmatch.fnmatch(k, e[1])]
        if hit:
            for e in hit:
                entry = {"file": e[0], "key": e[1], "tag": e[2], "reason": REASONS[e[2]]}
                if entry not in found:
                    found.append(entry)
        else:
            left.append(k)
    return found, left


def listing(root: Path) -> dict[str, Path]:
    """Every file under ``root`` by its path, a shard folder's name (``.shards/<fingerprint>/``, 16 hex digits of
    the run's fingerprint, which hashes viewcert's source) written ``<fingerprint>`` so the two runs' shards pair;
    the real name is reported beside each file."""
    out = {}
    for p in root.rglob("*"):
        if p.is_file():
            parts = list(p.relative_to(root).parts)
            for i in range(len(parts) - 1):
                if parts[i] == ".shards" and re.fullmatch(r"[0-9a-f]{16}", parts[i + 1]):
                    parts[i + 1] = "<fingerprint>"
            out["/".join(parts)] = p
    return out


def compare_folders(a: Path, b: Path) -> dict:
    fa, fb = listing(a), listing(b)
    files: dict[str, dict] = {}
    for rel in sorted(set(fa) | set(fb)):
        if rel not in fb:
            files[rel] = {"status": "only before"}
        elif rel not in fa:
            files[rel] = {"status": "only after"}
        elif fa[rel].read_bytes() == fb[rel].read_bytes():
            files[rel] = {"status": "identical"}
        else:
            aid = explain_file(rel, fa[rel], fb[rel])
            found, left = explanations(rel, aid.pop("keys"))
            files[rel] = {"status": "differs", "aid": aid, "explained_by": found,
                          "unexplained": left}
        if "<fingerprint>" in rel:
            names = [str(x[rel].relative_to(r)) if rel in x else None for x, r in ((fa, a), (fb, b))]
            files[rel]["paths"] = names
            if names[0] and names[1] and names[0] != names[1]:
                found, left = explanations(rel, ["(folder name)"])
                files[rel]["renamed_by"] = found
                files[rel].setdefault("explained_by", [])
                files[rel]["unexplained"] = files[rel].get("unexplained", []) + left
    for rel, f in files.items():
        if f["status"].startswith("only"):
            found, left = explanations(rel, ["(file)"])
            f["explained_by"], f["unexplained"] = found, left
    return files


def compare_streams(rb: dict, ra: dict, label: str) -> dict:
    out: dict = {"exit": [rb["exit"], ra["exit"]], "seconds": [rb["seconds"], ra["seconds"]]}
    for s in ("stdout", "stderr"):
        if rb[s] == ra[s]:
            out[s] = "identical"
        else:
            rel = f"<{s} of {label}>"
            changed = [x for x in difflib.unified_diff(rb[s].splitlines(), ra[s].splitlines(), n=0, lineterm="")
                       if x[:1] in "+-" and x[:3] not in ("+++", "---")]
            found, left = explanations(rel, changed)
            out[s] = {"status": "differs", "first_difference": first_line_diff(rb[s], ra[s]),
                      "diff": list(difflib.unified_diff(rb[s].splitlines(), ra[s].splitlines(), "before", "after",
                                                        n=0, lineterm=""))[:40],
                      "explained_by": found, "unexplained": left}
    out["status"] = ("identical" if out["exit"][0] == out["exit"][1] and out["stdout"] == out["stderr"] == "identical"
                     else "differs")
    return out


# --- the runs -------------------------------------------------------------------------------------------------

def warm(tree: Path, out: Path) -> dict:
    """``viewcert warmup`` (not compared): numba's cache lives beside each tree's modules, so a fresh checkout's
    first command compiles and says so on stderr; warming both trees first compares code, not cache state."""
    out.mkdir(parents=True)
    r = run(tree, ["viewcert", "warmup"], out, out)
    print(f"  {tree.name}: viewcert warmup: exit {r['exit']}, {r['seconds']} s", flush=True)
    if r["exit"]:
        raise SystemExit(f"viewcert warmup failed in {tree}:\n{r['stderr'][-3000:]}")
    shutil.rmtree(out)
    return {"command": "viewcert warmup", "exit": r["exit"], "seconds": r["seconds"]}


def prepare(work: Path, before: Path) -> Path:
    """The shared inputs: the three CIFs, and the ladder's export with Inspect's dry run made by BEFORE's code
    (in the folder every tree runs in, WORK/run, so its recorded paths are the trees' own)."""
    inputs = work / "inputs"
    write_cifs(inputs / "mycifs")
    cur = work / "run"
    lad = cur / "walkthrough"
    lad.mkdir(parents=True)
    shutil.copytree(inputs / "mycifs", lad / "mycifs")
    made = []
    for _, folder, argv in COMMANDS:
        if folder == "walkthrough" and argv[1] in ("design", "build-benchmark"):
            made.append(run(before, argv, lad, cur))
            if made[-1]["exit"]:
                raise SystemExit(f"ladder input: {' '.join(argv)} failed:\n{made[-1]['stderr'][-3000:]}")
    r = run(before, DRY_RUN, lad / "mybench", cur)
    if r["exit"]:
        raise SystemExit(f"ladder input: Inspect's dry run failed:\n{r['stderr'][-3000:]}")
    cur.rename(work / "ladder-input")
    return work / "ladder-input" / "walkthrough" / "mybench"


def run_tree(tree: Path, work: Path, label: str, ladder_export: Path) -> list[dict]:
    """Every command with ``tree``'s code in WORK/run (one absolute path for both trees: a certificate records its
    input's location), then the folder renamed WORK/<label>."""
    out = work / "run"
    out.mkdir()
    (out / "run-job").mkdir()
    (out / "rotation").mkdir()
    shutil.copytree(work / "inputs" / "mycifs", out / "walkthrough" / "mycifs")
    shutil.copytree(ladder_export, out / "ladder" / "mybench")
    runs = []
    for step, folder, argv in COMMANDS:
        r = run(tree, argv, out / folder, out)
        runs.append({"step": step, "cwd": folder, "command": " ".join(argv), **r})
        print(f"  {tree.name}: {' '.join(argv)} (in {folder}): exit {r['exit']}, {r['seconds']} s", flush=True)
    out.rename(work / label)
    return runs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, default=BEFORE_DEFAULT)
    ap.add_argument("--after", type=Path, default=AFTER_DEFAULT)
    ap.add_argument("--work", type=Path, default=Path("/tmp/viewcert-same-bytes"))
    ap.add_argument("--result", type=Path, default=RESULT)
    ap.add_argument("--compare-only", action="store_true",
                    help="compare the folders and the saved runs (WORK/runs.json) of an earlier run again")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    before, after = args.before.resolve(), args.after.resolve()
    saved = args.work / "runs.json"
    if args.compare_only:
        runs = json.loads(saved.read_text())
    else:
        if args.before == BEFORE_DEFAULT:
            ensure_before(before)
        if args.work.exists():
            shutil.rmtree(args.work)
        args.work.mkdir(parents=True)
        runs = {"warmup": {}}
        for label, tree in (("before", before), ("after", after)):
            runs["warmup"][label] = warm(tree, args.work / "warmup")
        print(f"ladder input (walkthrough export + Inspect dry run) with {before}", flush=True)
        ladder_export = prepare(args.work, before)
        for label, tree in (("before", before), ("after", after)):
            print(f"{label}: {tree}", flush=True)
            runs[label] = run_tree(tree, args.work, label, ladder_export)
        runs["seconds_runs"] = round(time.perf_counter() - t0, 1)
        saved.write_text(json.dumps(runs, indent=1))
    files = compare_folders(args.work / "before", args.work / "after")
    streams = [{"step": b["step"], "cwd": b["cwd"], "command": b["command"],
                **compare_streams(b, a, b["command"])} for b, a in zip(runs["before"], runs["after"], strict=True)]
    differing = {k: v for k, v in files.items()
                 if v["status"] != "identical" or v.get("paths", [0, 0])[0] != v.get("paths", [0, 0])[1]}
    unexplained = sorted([k for k, v in differing.items() if v["unexplained"]]
                         + [f"<{s} of {x['command']}>" for x in streams for s in ("stdout", "stderr")
                            if isinstance(x[s], dict) and x[s]["unexplained"]]
                         + [f"<exit of {x['command']}>" for x in streams if x["exit"][0] != x["exit"][1]])
    counts = {s: sum(v["status"] == s for v in files.values())
              for s in ("identical", "differs", "only before", "only after")}
    report = {
        "what": "issue 41 acceptance: the CLI's outputs before and after the refactor, byte by byte "
                "(benchmarks/check_cli_same_bytes.py)",
        "trees": {"before": commit_of(before), "after": commit_of(after)},
        "python": _shown(Path(PYTHON)), "environment": "offline (HF offline, HTTP(S) proxies to a closed port), PYTHONHASHSEED=0, "
                                         "COLUMNS=120, TERM=dumb; each tree's src first on PYTHONPATH",
        "normalised": "nothing in the files (both trees run in the one folder WORK/run, renamed after); "
                      "stdout/stderr: the run folder's absolute path -> <OUT>, the tree's -> <TREE>",
        "warmup": runs["warmup"],
        "ladder_input": "the walkthrough's design + build-benchmark and Inspect's dry run (README), made once with "
                        "the before tree, copied into each tree's ladder/mybench before `viewcert ladder .`",
        "explained": [{"file": f, "key": k, "tag": t} for f, k, t in EXPLAINED],
        "reasons": REASONS,
        "commands": [{"step": s, "cwd": f, "command": " ".join(a)} for s, f, a in COMMANDS],
        "file_counts": counts,
        "streams": streams,
        "files_differing": differing,
        "files_identical": sorted(k for k, v in files.items() if v["status"] == "identical"),
        "unexplained": unexplained,
        "seconds_runs": runs["seconds_runs"],
        "seconds_compare": round(time.perf_counter() - t0, 1) if args.compare_only else None,
        "seconds_total": runs["seconds_runs"] if args.compare_only else round(time.perf_counter() - t0, 1),
    }
    args.result.parent.mkdir(parents=True, exist_ok=True)
    args.result.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    renamed = sum(v["status"] == "identical" and k in differing for k, v in files.items())
    print(f"\n{counts['identical']} files identical ({renamed} of them in a renamed shard folder), "
          f"{counts['differs']} differ, {counts['only before']} only "
          f"before, {counts['only after']} only after; streams differing: "
          f"{sum(x['status'] != 'identical' for x in streams)} of {len(streams)} commands")
    for rel, v in differing.items():
        tags = list(dict.fromkeys(e["tag"] for e in v["explained_by"] + v.get("renamed_by", [])))
        what = v["status"] + (", folder renamed" if v.get("renamed_by") is not None else "")
        left = f" UNEXPLAINED: {', '.join(v['unexplained'])}" if v["unexplained"] else ""
        print(f"  {rel} ({what}): {', '.join(tags)}{left}")
    for tag, why in REASONS.items():
        print(f"  [{tag}] {why}")
    for x in streams:
        if x["status"] != "identical":
            print(f"  streams     {x['command']}: exit {x['exit']}, stdout "
                  f"{'identical' if x['stdout'] == 'identical' else 'differs'}, stderr "
                  f"{'identical' if x['stderr'] == 'identical' else 'differs'}")
    print(f"unexplained: {len(unexplained)}; {report['seconds_total']} s; {args.result}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
