"""Explorer benchmark: the time to write the site of a 1,820-item certificate and the time its index takes to load
in headless Chromium (issue 30's goals: under a minute, under 2 seconds; no test asserts a time).

Input: the study's e3 structures (all 1,820) certified as the study's released oracle does (δ = 0.15 Å, first
view pair, greedy Cartesian merge, τ = 0.01 Å; render-ceiling-5), the certificate the acceptance names. Then
``viewcert.explore.write_site`` on that certify output: a certify output holds no images, so every item page
draws its views as a schematic, the item re-read and standardised from the inputs and its cameras reframed
(``explore.overlays``); the index has no thumbnails. Timed: wall time of the write by ``--workers`` forked
processes (``write_site(workers=)``, default one per CPU) and by one process (``--serial``, this process's CPU
time too), per page (wall / items), and that both sites have the same bytes; then, in Debian's Chromium (``tests/support/browser.py``'s flags), the load of ``index.html`` from file:// until the
first page of rows is drawn (wall clock from ``goto`` to ``#shown[data-count]``), median of 5, plus one click
on the "phantoms" filter, whose rows are checked against the certificate's phantom items.

Usage: ``python benchmarks/bench_explore.py [--limit N] [--workers K] [--no-serial]`` →
``benchmarks/results/explore.json`` (the machine's load average before and after: the CPU is shared).
Skips (exit 0, with the reason) when the e3 data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
E3 = REPO.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
RESULTS = REPO / "benchmarks" / "results"
sys.path.insert(0, str(REPO))  # tests.support: the browser flags and the explorer fixtures


def _load_times(index: Path, repeat: int) -> tuple[list[float], dict]:
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

    times, check = [], {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for k in range(repeat):
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m, e=errors: e.append(m.text) if m.type == "error" else None)
            t0 = time.perf_counter()
            page.goto(index.as_uri())
            page.wait_for_selector("#shown[data-count]")
            times.append(time.perf_counter() - t0)
            if k == 0:
                page.click('#filters button[data-filter="phantoms"]')
                check = {"phantom_rows": page.locator("#items tbody a.item-link").all_text_contents(),
                         "console_errors": errors}
            page.close()
        browser.close()
    return times, check


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-serial", action="store_true", help="skip the one-process write (and its byte check)")
    args = ap.parse_args()
    if not (E3 / "structures.json").exists():
        print(f"skip: the e3 data is absent ({E3})")
        return 0
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import certify
    from viewcert.explore import write_site

    cfg = CertifyConfig(delta=0.15, tau=0.01, pairs="first", merge="greedy", periodic_merge=False)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cert"
        ds = load_input(str(E3), subset="all")
        if args.limit:
            ds = ds.select([it.id for it in ds.items[: args.limit]])
        t0 = time.perf_counter()
        cert = certify(ds, cfg, out=out, n_workers=args.workers, progress=False)
        certify_s = time.perf_counter() - t0
        load_before = os.getloadavg()
        t0 = time.perf_counter()
        index = write_site(out, Path(tmp) / "site", workers=args.workers)
        write_s = time.perf_counter() - t0
        serial_s = serial_cpu = same = None
        if not args.no_serial:
            t0, c0 = time.perf_counter(), time.process_time()
            write_site(out, Path(tmp) / "serial", workers=1)
            serial_s, serial_cpu = time.perf_counter() - t0, time.process_time() - c0
            same = _files(Path(tmp) / "site") == _files(Path(tmp) / "serial")
        site_bytes = sum(p.stat().st_size for p in (Path(tmp) / "site").rglob("*") if p.is_file())
        index_bytes = index.stat().st_size
        print(f"certify {certify_s:.1f} s, write_site {write_s:.1f} s wall ({args.workers} workers), one process "
              f"{serial_s} s wall ({serial_cpu} s CPU), same bytes {same}", flush=True)
        loads, check = _load_times(index, args.repeat)
    want = [it["id"] for it in cert["items"] if (it.get("oracle") or {}).get("n_phantoms")]
    res = {
        "n_items": len(cert["items"]), "config": "delta 0.15 A, first pair, greedy merge, tau 0.01 A, render-ceiling-5",
        "certify_wall_s": round(certify_s, 2), "workers": args.workers,
        "write_site_wall_s": round(write_s, 2), "write_site_ms_per_page": round(1000 * write_s / len(cert["items"]), 1),
        "write_site_serial_wall_s": None if serial_s is None else round(serial_s, 2),
        "write_site_serial_cpu_s": None if serial_cpu is None else round(serial_cpu, 2),
        "write_site_serial_ms_per_page": None if serial_s is None else round(1000 * serial_s / len(cert["items"]), 1),
        "parallel_and_serial_sites_same_bytes": same,
        "site_bytes": site_bytes, "index_bytes": index_bytes,
        "index_load_s": [round(x, 3) for x in loads], "index_load_median_s": round(statistics.median(loads), 3),
        "phantom_items_certificate": len(want),
        "phantom_census": cert["summary"]["phantom_census"]["items_with_phantoms"],
        "phantom_filter_rows_equal_certificate": check.get("phantom_rows") == want,
        "console_errors": check.get("console_errors"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_avg_1min_before_write": round(load_before[0], 2),
                    "load_avg_1min_after": round(os.getloadavg()[0], 2)},
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "explore.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    print(json.dumps(res, indent=1, sort_keys=True))
    return 0 if res["phantom_filter_rows_equal_certificate"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
