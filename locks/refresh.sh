#!/usr/bin/env bash
# Refresh the lock files from pyproject.toml (docs/install.md): `make lock`. One folder per platform; `dev.txt`
# is every extra `make test`, `make bench` and the docs use, `base.txt` the package alone at the same versions,
# `harness.txt` the `make harness` venv. Each file starts with the SHA-256 of pyproject.toml's dependency tables,
# which tests/contracts/test_lock.py compares with pyproject.toml. torch is the CPU build (a local file on these machines,
# /opt/wheels; elsewhere the PyTorch CPU index).
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-uv}
SUM=$(python3 locks/pyproject_sum.py)
EXTRAS="--extra test --extra molecules --extra docs --extra learn --extra interactions --extra plip --extra foreign --extra images"
FIND="--find-links /opt/wheels"
[ -d /opt/wheels ] || FIND="--extra-index-url https://download.pytorch.org/whl/cpu --index-strategy unsafe-best-match"
# x86_64: every extra (dev.txt) and the package alone at the same versions (base.txt). aarch64: the package
# alone, at the x86_64 versions (what a certificate records is the same on both); its dev lock waits for a
# reachable CPU build of torch for aarch64 (PyPI's 2.13.0 there is a CUDA build).
x86=locks/linux-x86_64-py311
arm=locks/linux-aarch64-py311
mkdir -p "$x86" "$arm"
common=(--python-version 3.11 --no-header --quiet)
# each lock's previous pins seed its new output file: uv prefers the versions already in the file it writes, so a
# refresh adds what pyproject.toml newly asks for and moves nothing else (remove a lock to re-resolve it afresh)
for f in "$x86/dev" "$x86/base" "$arm/base" "$x86/harness"; do
  if [ -f "$f.txt" ]; then cp "$f.txt" "$f.txt.new"; fi
done
# dev.txt for glibc 2.35+ (these machines: Debian 12, glibc 2.36): pymol-open-source ships manylinux_2_35 wheels only
$UV pip compile pyproject.toml $EXTRAS $FIND "${common[@]}" --python-platform x86_64-manylinux_2_35 -o "$x86/dev.txt.new"
$UV pip compile pyproject.toml -c "$x86/dev.txt.new" $FIND "${common[@]}" --python-platform x86_64-manylinux_2_28 \
  -o "$x86/base.txt.new"
$UV pip compile pyproject.toml -c "$x86/dev.txt.new" "${common[@]}" --python-platform aarch64-manylinux_2_28 \
  -o "$arm/base.txt.new"
# the harness venv (`make harness`): the harness extra and locks/harness.in at the base lock's versions, without
# torchvision (PyPI's is a CUDA build that cannot import beside torch's CPU build; lmms-eval runs without it),
# plus ms-vlmeval, whose own requirement list is never installed (everything is installed with --no-deps)
$UV pip compile pyproject.toml --extra harness locks/harness.in -c "$x86/base.txt.new" $FIND "${common[@]}" \
  --python-platform x86_64-manylinux_2_28 --no-emit-package torchvision -o "$x86/harness.txt.new"
echo "ms-vlmeval==0.0.20" >> "$x86/harness.txt.new"
for f in "$x86/dev" "$x86/base" "$arm/base" "$x86/harness"; do
  { echo "# viewcert lock ($(basename "$f"), $(basename "$(dirname "$f")")): exact versions, installed with --no-deps."
    echo "# pyproject-dependencies-sha256: $SUM"
    echo "# refresh: make lock (locks/refresh.sh)"
    sed -e 's#\(-c locks/.*\.txt\)\.new$#\1#' "$f.txt.new"; } > "$f.txt"
  rm "$f.txt.new"
done
