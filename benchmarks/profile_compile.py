"""Where numba's compile time goes: run one warm-up workload (``viewcert.kernels.register``, by label) in this
process on the numba cache you point it at (an empty ``NUMBA_CACHE_DIR`` for a first run), with numba's
event API recording every compilation (``numba:compile``), and print the CPU seconds of each kernel
specialisation, inclusive and exclusive of the kernels it compiled while being typed (process CPU, so the
figures hold on a loaded machine), the CPU inside LLVM (``numba:llvm_lock``) and the costliest compiler passes.
Usage: NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/profile_compile.py "certify main" [out.json]
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict

import numba.core.event as ev


class _Compiles(ev.Listener):
    """Per compilation: kernel, argument types, CPU inclusive/exclusive, depth and parent."""

    def __init__(self) -> None:
        self.stack: list[list] = []
        self.rows: list[dict] = []

    def on_start(self, event) -> None:
        d = event.data["dispatcher"]
        self.stack.append([time.process_time(), 0.0, f"{d.py_func.__module__}.{d.py_func.__name__}"])

    def on_end(self, event) -> None:
        c0, child, name = self.stack.pop()
        dt = time.process_time() - c0
        if self.stack:
            self.stack[-1][1] += dt
        self.rows.append({"fn": name, "sig": str(event.data["args"]), "incl_cpu_s": dt, "excl_cpu_s": dt - child,
                          "depth": len(self.stack), "parent": self.stack[-1][2] if self.stack else ""})


class _Timer(ev.Listener):
    """CPU seconds per event name (``numba:run_pass``) or in total (``numba:llvm_lock``)."""

    def __init__(self) -> None:
        self.stack: list[float] = []
        self.by_name: dict[str, float] = defaultdict(float)

    def on_start(self, event) -> None:
        self.stack.append(time.process_time())

    def on_end(self, event) -> None:
        name = event.data.get("name", "") if isinstance(event.data, dict) else ""
        self.by_name[name] += time.process_time() - self.stack.pop()


def main(label: str, out: str | None) -> None:
    compiles, passes, llvm = _Compiles(), _Timer(), _Timer()
    ev.register("numba:compile", compiles)
    ev.register("numba:run_pass", passes)
    ev.register("numba:llvm_lock", llvm)
    import viewcert.api.numba_cache as w

    t0, c0 = time.perf_counter(), time.process_time()
    {x.label: x.run for x in w.workloads()}[label]()
    rows = compiles.rows
    print(f"{label}: {time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s CPU; {len(rows)} "
          f"compilations; in LLVM {sum(llvm.by_name.values()):.1f} s CPU")
    for name, s in sorted(passes.by_name.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  pass {name}: {s:.1f} s")
    print(" excl   incl  (s CPU)")
    for r in sorted(rows, key=lambda r: -r["excl_cpu_s"])[:40]:
        print(f"{r['excl_cpu_s']:6.2f} {r['incl_cpu_s']:6.2f} d{r['depth']} {r['fn']} {r['sig'][:100]}")
    if out:
        with open(out, "w") as fh:
            json.dump(rows, fh, indent=0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
