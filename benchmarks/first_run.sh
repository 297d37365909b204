#!/bin/bash
# A new user's first `make run`, with every package cache empty: a fresh clone of REF (default HEAD) under /tmp,
# pip's and uv's caches pointed at new empty folders (numba's cache lives in the clone's __pycache__, so it is
# empty too), then `make install-run` (venv, uv, the base lock, the package), `make run` (the main job, cold:
# its kernels compile at their first call) and the job again warm. Wall and CPU of each, the 1-min load at start
# and end; compilation = cold job - warm job. Writes a JSON line to stdout; not run by `make bench` (it
# downloads). Usage: benchmarks/first_run.sh [REF] [LABEL]
set -u
repo=$(git rev-parse --show-toplevel)
ref=${1:-HEAD}
label=${2:-$ref}
d=/tmp/viewcert-first-run-$$
caches=$(mktemp -d)
rm -rf "$d" && git clone -q "$repo" "$d" && git -C "$d" checkout -q "$(git -C "$repo" rev-parse "$ref")"
ln -sfn "$repo/../shared" "$(dirname "$d")/shared" 2>/dev/null || true
export PIP_CACHE_DIR=$caches/pip UV_CACHE_DIR=$caches/uv
load0=$(cut -d' ' -f1 /proc/loadavg)
t() { /usr/bin/time -f "%e %U %S" -o "$caches/t" "$@" > "$caches/log" 2>&1; rc=$?; cat "$caches/t" | tail -1; return $rc; }
cd "$d"
if grep -q '^install-run:' Makefile; then
  inst=$(t make install-run) || { tail -20 "$caches/log"; exit 1; }
  cold=$(t make run) || { tail -20 "$caches/log"; exit 1; }
else  # a ref before the split: make run does both
  inst="0 0 0"
  cold=$(t make run) || { tail -20 "$caches/log"; exit 1; }
fi
warm=$(t .venv/bin/viewcert run --out out-warm)
load1=$(cut -d' ' -f1 /proc/loadavg)
python3 - "$label" "$(git rev-parse --short HEAD)" "$inst" "$cold" "$warm" "$load0" "$load1" "$(du -sm .venv | cut -f1)" <<'PY'
import json, sys
label, commit, inst, cold, warm, l0, l1, mb = sys.argv[1:]
f = lambda s: [float(x) for x in s.split()]
i, c, w = f(inst), f(cold), f(warm)
print(json.dumps({"label": label, "commit": commit, "wall_s": round(i[0] + c[0], 1),
                  "install": {"wall_s": i[0], "user_s": i[1], "sys_s": i[2]},
                  "main_job_cold": {"wall_s": c[0], "user_s": c[1], "sys_s": c[2]},
                  "main_job_warm": {"wall_s": w[0], "user_s": w[1], "sys_s": w[2]},
                  "compilation_wall_s": round(c[0] - w[0], 1), "load_start": float(l0), "load_end": float(l1),
                  "venv_mb": int(mb)}))
PY
rm -rf "$d" "$caches"
