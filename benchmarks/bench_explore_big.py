"""Big explorer sites (issue 40, item 7): the time and peak memory to write the site of a 10,000- and a
100,000-item certificate, and the time the index takes to load in headless Chromium.

Input: a certify output of two e3 items (the study's released oracle's settings, five views, δ*; the explorer
tests' fixture, ``tests/support/explore_fixtures.py``) whose items are repeated under new ids (``<id>-NNNNNN``) to N items
and the certificate resealed: a crystal certificate of N real records. The site is written without ``--inputs``
(the inputs are not read, so the item pages hold the record in words and no views: the per-item cost measured
is the page and the index row, not the renderer, which ``bench_explore.py`` times). Each N is written in a fresh
child process with one worker (``write_site(workers=1)``); its peak RSS is the child's ``ru_maxrss``, and the
certificate's own share is measured apart (the same child reading the certificate only:
``explore.source.read_folder``); its CPU time (user + system, s) beside the wall time (the machine is shared: the
CPU time is the figure to compare). In Chromium (``tests/support/browser.py``'s flags): the index's load from file:// until
its first page of rows is drawn (``#shown[data-count]``), median of 3, a filter click's time, the map's load until
its canvas holds every point (``#map-points[data-drawn]``), median of 3, and the item a click on its last point
opens.

``--table``: the same N items as a streamed certificate (``certify.stream``: Parquet shards of ``SHARD_ITEMS`` items
beside a small certificate.json, the summary from mergeable counts, resealed), which the explorer reads one shard at a
time; its figures go under ``streamed`` in the results file (the JSON certificate's figures kept beside them), labelled
with the date, the commit and the load average, with the ratio of the largest size's peak RSS to the smallest's
(the writer's memory is bounded: issue 40, item 7).

Usage: ``python benchmarks/bench_explore_big.py [--sizes 10000,100000] [--table]`` →
``benchmarks/results/explore_big.json`` (with the machine's load average: the CPU is shared). Skips (exit 0) when
the e3 data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
E3 = REPO.parent / "shared" / "data" / "render-ceiling" / "data" / "e3"
RESULTS = REPO / "benchmarks" / "results"
sys.path.insert(0, str(REPO))  # tests.support: the browser flags and the explorer fixtures


def _template(tmp: Path) -> dict:
    """The certificate of two e3 items with phantoms (the explorer tests' certify output)."""
    from viewcert.certify import CertifyConfig
    from viewcert.certify.inputs import load_input
    from viewcert.certify.run import certify

    ds = load_input(str(E3), subset="all").select(["mp-560151", "mp-8110"])
    cfg = CertifyConfig(delta=0.15, tau=0.01, pairs="first", merge="greedy", periodic_merge=False, frame_on="drawn",
                        margin=True)
    certify(ds, cfg, out=tmp / "template", n_workers=1, progress=False)
    return json.loads((tmp / "template" / "certificate.json").read_text())


def _big(template: dict, n: int, out: Path) -> Path:
    """A certify output of ``n`` items: the template's items repeated under new ids, resealed."""
    from viewcert.formats.records import sealed

    items = template["items"]
    doc = dict(template)
    doc["items"] = [dict(items[k % len(items)], id=f"{items[k % len(items)]['id']}-{k:06d}") for k in range(n)]
    out.mkdir(parents=True, exist_ok=True)
    (out / "certificate.json").write_text(json.dumps(sealed(doc)))
    return out


def _big_table(template: dict, n: int, out: Path) -> Path:
    """A streamed certify output of ``n`` items: the template's items repeated under new ids (as ``_big``), written
    ``SHARD_ITEMS`` at a time with the summary from mergeable counts, its chain and digest made as ``certify.stream``
    does (``tests/support/explore_fixtures.write_table_folder``)."""
    from tests.support.explore_fixtures import write_table_folder
    from viewcert.certify import stream as T

    items = template["items"]
    repeated = (dict(items[k % len(items)], id=f"{items[k % len(items)]['id']}-{k:06d}") for k in range(n))
    return write_table_folder(template, repeated, out, T.SHARD_ITEMS)


def _child(mode: str, cert: str, site: str) -> None:
    from viewcert.explore import write_site
    from viewcert.explore.source import read_folder

    t0 = time.perf_counter()
    if mode == "read":
        read_folder(cert)
    else:
        write_site(cert, site, workers=1)
    wall = time.perf_counter() - t0
    use = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall_s": round(wall, 2), "peak_rss_mib": round(use.ru_maxrss / 1024, 1),
                      "cpu_s": round(use.ru_utime + use.ru_stime, 1)}))


def _run_child(mode: str, cert: Path, site: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(cert), str(site)], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _load(index: Path, repeat: int = 3) -> dict:
    from playwright.sync_api import sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

    loads, clicks, maps, errors = [], [], [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for _ in range(repeat):
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            t0 = time.perf_counter()
            page.goto(index.as_uri())
            page.wait_for_selector("#shown[data-count]")
            loads.append(time.perf_counter() - t0)
            rows = page.locator("#items tbody tr").count()
            t0 = time.perf_counter()
            page.click('#filters button[data-filter="phantoms"]')
            page.wait_for_function("() => true")
            clicks.append(time.perf_counter() - t0)
            shown = int(page.locator("#shown").get_attribute("data-count"))
            t0 = time.perf_counter()
            page.goto(index.with_name("map.html").as_uri())
            page.wait_for_selector("#map-points[data-drawn]")
            maps.append(time.perf_counter() - t0)
            drawn = int(page.locator("#map-points").get_attribute("data-drawn"))
            page.close()
        opened = _click_a_point(browser, index.with_name("map.html"))
        browser.close()
    return {"index_load_s": [round(x, 3) for x in loads], "index_load_median_s": round(statistics.median(loads), 3),
            "filter_click_median_s": round(statistics.median(clicks), 3), "rows_in_dom": rows,
            "phantom_filter_count": shown, "map_load_s": [round(x, 3) for x in maps],
            "map_load_median_s": round(statistics.median(maps), 3), "map_points_drawn": drawn,
            "map_click_opens": opened, "console_errors": errors}


def _click_a_point(browser, map_page: Path) -> str:
    """The item page a click on the map's last point opens (its centre, by the page's own data and the stated
    scales, ``explore.chart``)."""
    import re

    html = map_page.read_text()
    data = json.loads(re.search(r'id="map-data">(.*?)</script>', html, re.S).group(1))
    last = data["points"][-1]
    w, hgt = data["width"] - 2 * data["pad"], data["height"] - 2 * data["pad"]
    u, v = data["pad"] + last[1] / data["x_top"] * w, data["height"] - data["pad"] - last[2] / data["y_top"] * hgt
    page = browser.new_page()
    page.goto(map_page.as_uri())
    page.wait_for_selector("#map-points[data-drawn]")
    box = page.locator("#map-points").bounding_box()
    page.mouse.click(box["x"] + u * box["width"] / data["width"], box["y"] + v * box["height"] / data["height"])
    page.wait_for_url("**/items/*.html")
    got = page.url.rsplit("/", 2)[-2:]
    page.close()
    return "/".join(got)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--child", nargs=3, metavar=("MODE", "CERT", "SITE"))
    ap.add_argument("--table", action="store_true", help="streamed certificates (certify.stream)")
    args = ap.parse_args()
    if args.child:
        _child(*args.child)
        return 0
    if not (E3 / "structures.json").exists():
        print(f"skip: the e3 data is absent ({E3})")
        return 0
    res: dict = {"sizes": {}, "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                          "load_avg_1min_before": round(os.getloadavg()[0], 2)}}
    if args.table:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        res["label"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
                        "certificate": "streamed (viewcert-certificate-table/1)", "nice": os.nice(0)}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        template = _template(tmp)
        for n in (int(x) for x in args.sizes.split(",")):
            cert = (_big_table if args.table else _big)(template, n, tmp / f"cert{n}")
            read = _run_child("read", cert, tmp / f"site{n}")
            write = _run_child("write", cert, tmp / f"site{n}")
            index = tmp / f"site{n}" / "index.html"
            site_bytes = sum(p.stat().st_size for p in (tmp / f"site{n}").rglob("*") if p.is_file())
            row = {"certificate_bytes": sum(p.stat().st_size for p in cert.rglob("*") if p.is_file()),
                   "read_certificate": read, "write_site": write,
                   "write_ms_per_item": round(1000 * write["wall_s"] / n, 2),
                   "write_cpu_ms_per_item": round(1000 * write["cpu_s"] / n, 2),
                   "site_bytes": site_bytes, "index_bytes": index.stat().st_size,
                   "phantom_items": n, **_load(index)}
            res["sizes"][str(n)] = row
            print(n, json.dumps(row), flush=True)
            import shutil

            shutil.rmtree(tmp / f"site{n}")
            shutil.rmtree(cert)
    res["machine"]["load_avg_1min_after"] = round(os.getloadavg()[0], 2)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "explore_big.json"
    peaks = [res["sizes"][k]["write_site"]["peak_rss_mib"] for k in sorted(res["sizes"], key=int)]
    if len(peaks) > 1:
        res["peak_rss_ratio_largest_over_smallest"] = round(peaks[-1] / peaks[0], 3)
    if args.table:  # beside the JSON certificate's figures
        res = {**(json.loads(path.read_text()) if path.is_file() else {}), "streamed": res}
    path.write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    print(json.dumps(res, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
