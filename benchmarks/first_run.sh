#!/bin/bash
# A new user's first `make run`, before and after, one after the other in one session: a fresh clone of
# BEFORE (default: main) and of AFTER (default: this checkout's HEAD) under /tmp, `make run` in each, wall
# and CPU time, the 1-min load at start and end, and the venv's size. Not run by `make bench` (it installs
# from the package index into two new venvs: minutes, and over a GiB each). Usage:
#   benchmarks/first_run.sh [BEFORE_REF] [AFTER_REF]   (refs of this repository)
set -u
repo=$(git rev-parse --show-toplevel)
before=${1:-main}
after=${2:-HEAD}
for which in after before; do
  ref=$([ $which = after ] && echo "$after" || echo "$before")
  d=/tmp/viewcert-first-run-$which
  rm -rf "$d" && git clone -q "$repo" "$d" && git -C "$d" checkout -q "$(git -C "$repo" rev-parse "$ref")"
  echo "$which $(git -C "$d" rev-parse --short HEAD) start $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  (cd "$d" && /usr/bin/time -f "$which make run: %e s wall, %U s user, %S s sys" make run > "$d.log" 2>&1)
  tail -1 "$d.log"
  echo "$which end $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg) venv $(du -sm "$d/.venv" | cut -f1) MB"
done
